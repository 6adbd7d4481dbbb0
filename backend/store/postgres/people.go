package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/health-data-connect/hdc/backend/store"
)

// SeePerson implements store.Store.
func (s *Store) SeePerson(ctx context.Context, p store.Person, stale time.Time) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO people (serial, name, role, first_seen, last_seen) VALUES ($1, $2, $3, $4, $4)
		ON CONFLICT (serial) DO UPDATE SET name = excluded.name, role = excluded.role, last_seen = excluded.last_seen
		WHERE people.last_seen < $5 AND people.last_seen < excluded.last_seen`, p.Serial, p.Name, p.Role, ts(p.LastSeen), ts(stale))
	return err
}

// People implements store.Store.
func (s *Store) People(ctx context.Context) ([]store.Person, error) {
	rows, err := s.pool.Query(ctx, `SELECT serial, name, role, first_seen, last_seen FROM people
		ORDER BY name COLLATE "C", serial COLLATE "C"`)
	return collect(rows, err, func(row pgx.Row) (store.Person, error) {
		var p store.Person
		err := row.Scan(&p.Serial, &p.Name, &p.Role, &p.FirstSeen, &p.LastSeen)
		p.FirstSeen, p.LastSeen = p.FirstSeen.UTC(), p.LastSeen.UTC()
		return p, err
	})
}
