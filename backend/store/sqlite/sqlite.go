// Package sqlite implements store.Store on SQLite with the pure-Go
// modernc.org/sqlite driver: one file, write-ahead logging, a busy timeout so
// that several processes (the server and the hdc CLI) can share it, and
// versioned migrations embedded in the binary.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/XSAM/otelsql"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/telemetry"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Store is the SQLite store. It is safe for concurrent use.
type Store struct {
	db *sql.DB
	// chain links the audit records appended (store.Audit.KeyAudit).
	chain atomic.Pointer[audit.Chain]
}

// busyTimeout is how long a connection waits for another writer (another
// goroutine or process) before giving up with SQLITE_BUSY.
const busyTimeout = 10 * time.Second

// Open opens (creating if needed) the database file at path and brings its
// schema up to date. The file is created readable by its owner only: it holds
// secret hashes and signing keys.
func Open(ctx context.Context, path string) (*Store, error) {
	// The driver reads its parameters after a '?' in the name.
	if strings.ContainsRune(path, '?') {
		return nil, fmt.Errorf("sqlite: database path %q contains '?'", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	q := url.Values{}
	q.Set("_busy_timeout", strconv.FormatInt(busyTimeout.Milliseconds(), 10))
	q.Set("_journal_mode", "WAL")
	q.Set("_synchronous", "NORMAL")
	q.Set("_foreign_keys", "1")
	// Every transaction writes, so take the write lock at BEGIN: a deferred
	// transaction upgrading its lock late fails with SQLITE_BUSY at once
	// instead of waiting for the busy timeout.
	q.Set("_txlock", "immediate")
	// A secret replaced or deleted is overwritten with zeros where it was,
	// not left in a free page (package sealed seals the values of an
	// earlier version in place).
	q.Add("_pragma", "secure_delete(1)")
	// A span per statement of a traced request (OpenTelemetry's global
	// tracer provider: no-op unless tracing is on), with the SQL, never its
	// arguments.
	db, err := otelsql.Open("sqlite", path+"?"+q.Encode(), otelsql.WithAttributes(semconv.DBSystemNameSQLite),
		otelsql.WithTracerProvider(telemetry.InTraces(otel.GetTracerProvider())),
		otelsql.WithSpanOptions(otelsql.SpanOptions{OmitConnResetSession: true, OmitRows: true, OmitConnectorConnect: true}))
	if err != nil {
		return nil, err
	}
	s := &Store{db: db}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// Ping implements store.Store.
func (s *Store) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }

// Close implements store.Store.
func (s *Store) Close() error { return s.db.Close() }

// migrate brings the schema up to date with the embedded migrations
// (store.Migrate).
func (s *Store) migrate(ctx context.Context) error {
	if err := store.Migrate(ctx, migrator{s}, migrations, "migrations/*.sql"); err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	return nil
}

// migrator is store.Migrator on the database.
type migrator struct{ s *Store }

func (m migrator) CreateTable(ctx context.Context) error {
	_, err := m.s.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    BIGINT PRIMARY KEY,
		applied_at BIGINT NOT NULL
	)`)
	return err
}

func (m migrator) Apply(ctx context.Context, mg store.Migration) error {
	return m.s.tx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations WHERE version = ?`, mg.Version).Scan(&n); err != nil || n > 0 {
			return err
		}
		if _, err := tx.ExecContext(ctx, mg.Script); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)`,
			mg.Version, time.Now().UnixMicro())
		return err
	})
}

func (m migrator) Newest(ctx context.Context) (int64, error) {
	var v int64
	err := m.s.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v)
	return v, err
}

// tx runs fn in a transaction, committing when it returns nil.
func (s *Store) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// translate maps driver errors to the store's: unique and primary key
// violations are conflicts, foreign key violations are missing parents.
func translate(err error) error {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return err
	}
	switch se.Code() {
	case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
		return fmt.Errorf("%w: %v", store.ErrConflict, err)
	case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
		return fmt.Errorf("%w: %v", store.ErrNotFound, err)
	}
	return err
}

// notFound maps sql.ErrNoRows to store.ErrNotFound.
func notFound(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return store.ErrNotFound
	}
	return err
}

// micros encodes a time for a BIGINT column.
func micros(t time.Time) int64 { return t.UnixMicro() }

// nullMicros encodes a time for a nullable column: the zero time is NULL.
func nullMicros(t time.Time) sql.NullInt64 {
	if t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixMicro(), Valid: true}
}

// fromMicros decodes a BIGINT column; NULL becomes the zero time.
func fromMicros(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return time.UnixMicro(v.Int64).UTC()
}

// hexBytes decodes a hex column written by this package.
func hexBytes(s string) ([]byte, error) {
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("sqlite: corrupt hex column: %w", err)
	}
	return b, nil
}

// nullString encodes a string for a nullable column: empty is NULL.
func nullString(s string) sql.NullString {
	return sql.NullString{String: s, Valid: s != ""}
}

var _ store.Store = (*Store)(nil)

// collect scans every row of a query with scan, as the PostgreSQL engine's
// collect does with pgx.CollectRows (database/sql has no such helper).
func collect[T any](rows *sql.Rows, err error, scan func(*sql.Rows) (T, error)) ([]T, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
