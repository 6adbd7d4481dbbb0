package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/health-data-connect/hdc/backend/store"
)

// SeePerson implements store.Store.
func (s *Store) SeePerson(ctx context.Context, p store.Person, stale time.Time) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO people (serial, name, role, first_seen, last_seen) VALUES (?1, ?2, ?3, ?4, ?4)
		ON CONFLICT (serial) DO UPDATE SET name = excluded.name, role = excluded.role, last_seen = excluded.last_seen
		WHERE people.last_seen < ?5 AND people.last_seen < excluded.last_seen`, p.Serial, p.Name, p.Role, micros(p.LastSeen), micros(stale))
	return err
}

// People implements store.Store.
func (s *Store) People(ctx context.Context) ([]store.Person, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT serial, name, role, first_seen, last_seen FROM people ORDER BY name, serial`)
	return collect(rows, err, func(rows *sql.Rows) (store.Person, error) {
		var p store.Person
		var first, last int64
		err := rows.Scan(&p.Serial, &p.Name, &p.Role, &first, &last)
		p.FirstSeen, p.LastSeen = time.UnixMicro(first).UTC(), time.UnixMicro(last).UTC()
		return p, err
	})
}
