package postgres

import (
	"context"
	"time"

	"github.com/health-data-connect/hdc/backend/store"
)

// NoteRequest implements store.Store with one upsert: a pair recorded and
// expired is taken over, one not expired is left alone (no row affected).
// The primary key's index serializes concurrent notes of a pair on every
// replica.
func (s *Store) NoteRequest(ctx context.Context, kid, jti string, expires, now time.Time) error {
	tag, err := s.pool.Exec(ctx, `
		INSERT INTO request_ids AS r (kid, jti, expires_at) VALUES ($1, $2, $3)
		ON CONFLICT (kid, jti) DO UPDATE SET expires_at = EXCLUDED.expires_at WHERE r.expires_at <= $4`,
		kid, jti, ts(expires), ts(now))
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return store.ErrConflict
	}
	return nil
}

// PruneRequests implements store.Store.
func (s *Store) PruneRequests(ctx context.Context, now time.Time) (int64, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM request_ids WHERE expires_at <= $1`, ts(now))
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}
