package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/health-data-connect/hdc/backend/store"
)

// TakeThrottle implements store.Store with store.Take. The row lock the
// upsert takes serializes concurrent takes of one key, on every replica.
func (s *Store) TakeThrottle(ctx context.Context, key string, rate store.Rate, now time.Time) (time.Duration, bool, error) {
	return store.Take(ctx, throttler{s}, key, rate, now)
}

// throttler is the PostgreSQL side of store.Take.
type throttler struct{ s *Store }

// AdvanceThrottle implements store.ThrottleEngine with one upsert.
func (t throttler) AdvanceThrottle(ctx context.Context, key string, now time.Time, interval, capacity time.Duration) (bool, error) {
	var taken bool
	err := t.s.pool.QueryRow(ctx, `
		INSERT INTO throttle AS t (key, tat) VALUES ($1, $2::timestamptz + $3::bigint * interval '1 microsecond')
		ON CONFLICT (key) DO UPDATE SET tat = GREATEST(t.tat, $2) + $3 * interval '1 microsecond'
		WHERE GREATEST(t.tat, $2) + $3 * interval '1 microsecond' <= $2 + $4::bigint * interval '1 microsecond'
		RETURNING true`,
		key, ts(now), interval.Microseconds(), capacity.Microseconds()).Scan(&taken)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	return taken, err
}

// ThrottleFull implements store.ThrottleEngine.
func (t throttler) ThrottleFull(ctx context.Context, key string) (time.Time, bool, error) {
	var full time.Time
	err := t.s.pool.QueryRow(ctx, `SELECT tat FROM throttle WHERE key = $1`, key).Scan(&full)
	if errors.Is(err, pgx.ErrNoRows) {
		return time.Time{}, false, nil
	}
	return full, err == nil, err
}

// ReturnThrottle implements store.Store.
func (s *Store) ReturnThrottle(ctx context.Context, key string, rate store.Rate, now time.Time) error {
	_, err := s.pool.Exec(ctx,
		`UPDATE throttle SET tat = GREATEST(tat - $1::bigint * interval '1 microsecond', $2) WHERE key = $3`,
		rate.Interval().Microseconds(), ts(now), key)
	return err
}

// PruneThrottle implements store.Store.
func (s *Store) PruneThrottle(ctx context.Context, now time.Time) (int64, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM throttle WHERE tat <= $1`, ts(now))
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}
