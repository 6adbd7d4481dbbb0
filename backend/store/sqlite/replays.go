package sqlite

import (
	"context"
	"time"

	"github.com/health-data-connect/hdc/backend/store"
)

// NoteRequest implements store.Store with one upsert: a pair recorded and
// expired is taken over, one not expired is left alone (no row affected).
func (s *Store) NoteRequest(ctx context.Context, kid, jti string, expires, now time.Time) error {
	res, err := s.db.ExecContext(ctx, `
		INSERT INTO request_ids (kid, jti, expires_at) VALUES (?1, ?2, ?3)
		ON CONFLICT (kid, jti) DO UPDATE SET expires_at = excluded.expires_at WHERE expires_at <= ?4`,
		kid, jti, micros(expires), micros(now))
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err == nil && n == 0 {
		err = store.ErrConflict
	}
	return err
}

// PruneRequests implements store.Store.
func (s *Store) PruneRequests(ctx context.Context, now time.Time) (int64, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM request_ids WHERE expires_at <= ?`, micros(now))
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
