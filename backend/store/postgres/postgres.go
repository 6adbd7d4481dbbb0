// Package postgres implements store.Store on PostgreSQL with pgx, for
// several backend replicas sharing one database. Replicas coordinate
// through the database only: delivery claims take row locks with FOR UPDATE
// SKIP LOCKED, refresh-token rotation locks the token's row, signing-key
// rotation relies on a unique generation, and the schema's embedded
// migrations run under an advisory lock so that replicas starting together
// do not race.
//
// The database URL is pgx's (postgres://user:password@host:port/db?…); its
// pool settings (pool_max_conns, …) are honoured.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/exaring/otelpgx"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.opentelemetry.io/otel"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/telemetry"
)

//go:embed migrations/*.sql
var migrations embed.FS

// migrationLock is the advisory lock key held while migrating: any number
// that other users of the database do not take ("hdc" in ASCII).
const migrationLock = 0x686463

// txAttempts is how often a transaction that PostgreSQL aborted for a
// deadlock or a serialization failure is tried in all.
const txAttempts = 3

// Store is the PostgreSQL store. It is safe for concurrent use, also by
// several processes.
type Store struct {
	pool *pgxpool.Pool
	// chain links the audit records appended (store.Audit.KeyAudit).
	chain atomic.Pointer[audit.Chain]
}

// Open connects to the database at url and brings its schema up to date.
func Open(ctx context.Context, url string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgx's message may quote the URL, password included.
		return nil, errors.New("postgres: the database URL cannot be parsed")
	}
	// A span per statement of a traced request (OpenTelemetry's global
	// tracer provider: no-op unless tracing is on), with the SQL, never its
	// arguments.
	cfg.ConnConfig.Tracer = otelpgx.NewTracer(otelpgx.WithTracerProvider(telemetry.InTraces(otel.GetTracerProvider())))
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	s := &Store{pool: pool}
	if err := s.migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return s, nil
}

// Describe returns what the database URL url names, as a log may say it:
// postgres://user@host:port/database, with every host pgx may try (the
// URL's, else the PG* environment's), and never the password, wherever
// the URL or the environment holds it.
func Describe(url string) string {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return "postgres (a database URL that does not parse)"
	}
	c := cfg.ConnConfig
	hosts := []string{net.JoinHostPort(c.Host, strconv.Itoa(int(c.Port)))}
	for _, f := range c.Fallbacks {
		// sslmode=prefer and allow try a host twice, with TLS and without.
		if h := net.JoinHostPort(f.Host, strconv.Itoa(int(f.Port))); !slices.Contains(hosts, h) {
			hosts = append(hosts, h)
		}
	}
	return "postgres://" + c.User + "@" + strings.Join(hosts, ",") + "/" + c.Database
}

// Ping implements store.Store.
func (s *Store) Ping(ctx context.Context) error { return s.pool.Ping(ctx) }

// Close implements store.Store.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

// migrate brings the schema up to date with the embedded migrations
// (store.Migrate), holding an advisory lock for the whole run: a replica
// starting meanwhile waits, then finds nothing to do.
func (s *Store) migrate(ctx context.Context) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, migrationLock); err != nil {
		return fmt.Errorf("postgres: migration lock: %w", err)
	}
	defer func() {
		// A lock left behind would only go with the connection.
		if _, err := conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, migrationLock); err != nil {
			conn.Conn().Close(context.WithoutCancel(ctx))
		}
	}()
	if err := store.Migrate(ctx, migrator{conn.Conn()}, migrations, "migrations/*.sql"); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	return nil
}

// migrator is store.Migrator on the connection holding the lock.
type migrator struct{ conn *pgx.Conn }

func (m migrator) CreateTable(ctx context.Context) error {
	_, err := m.conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    bigint      PRIMARY KEY,
		applied_at timestamptz NOT NULL
	)`)
	return err
}

func (m migrator) Apply(ctx context.Context, mg store.Migration) error {
	return pgx.BeginFunc(ctx, m.conn, func(tx pgx.Tx) error {
		var done bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM schema_migrations WHERE version = $1)`, mg.Version).Scan(&done); err != nil || done {
			return err
		}
		// Without arguments Exec uses the simple protocol, which runs a
		// script of several statements.
		if _, err := tx.Exec(ctx, mg.Script); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES ($1, now())`, mg.Version)
		return err
	})
}

func (m migrator) Newest(ctx context.Context) (int64, error) {
	var v int64
	err := m.conn.QueryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v)
	return v, err
}

// tx runs fn in a transaction, committing when it returns nil. A
// transaction PostgreSQL aborted for a deadlock or a serialization failure
// is run again: fn must not keep state from a failed run.
func (s *Store) tx(ctx context.Context, fn func(pgx.Tx) error) error {
	var err error
	for range txAttempts {
		err = pgx.BeginFunc(ctx, s.pool, fn)
		if !retryable(err) {
			return err
		}
	}
	return err
}

// retryable reports whether err aborted a transaction that may succeed
// when run again.
func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40P01" || pe.Code == "40001")
}

// translate maps driver errors to the store's: unique violations are
// conflicts, foreign key violations are missing parents.
func translate(err error) error {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return err
	}
	switch pe.Code {
	case "23505": // unique_violation
		return fmt.Errorf("%w: %v", store.ErrConflict, err)
	case "23503": // foreign_key_violation
		return fmt.Errorf("%w: %v", store.ErrNotFound, err)
	}
	return err
}

// notFound maps pgx.ErrNoRows to store.ErrNotFound.
func notFound(err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return store.ErrNotFound
	}
	return err
}

// ts encodes a time for a timestamptz column: PostgreSQL would round to
// the microsecond, the store truncates.
func ts(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// nullTS encodes a time for a nullable column: the zero time is NULL.
func nullTS(t time.Time) pgtype.Timestamptz {
	if t.IsZero() {
		return pgtype.Timestamptz{}
	}
	return pgtype.Timestamptz{Time: ts(t), Valid: true}
}

// fromTS decodes a nullable column; NULL becomes the zero time.
func fromTS(v pgtype.Timestamptz) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return v.Time.UTC()
}

// nullText encodes a string for a nullable column: empty is NULL.
func nullText(s string) pgtype.Text {
	return pgtype.Text{String: s, Valid: s != ""}
}

// oneRow turns a statement that matched no row into store.ErrNotFound.
func oneRow(tag pgconn.CommandTag, err error) error {
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return store.ErrNotFound
	}
	return nil
}

// collect reads every row of a query with scan and closes them; err is
// the query's.
func collect[T any](rows pgx.Rows, err error, scan func(pgx.Row) (T, error)) ([]T, error) {
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (T, error) { return scan(r) })
}

var _ store.Store = (*Store)(nil)
