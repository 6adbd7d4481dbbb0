package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/health-data-connect/hdc/backend/store"
)

// TakeThrottle implements store.Store: the upsert advances the key's full
// time by one interval unless that would take it more than the bucket's
// capacity ahead of now. The row lock the upsert takes serializes
// concurrent takes of one key, on every replica.
func (s *Store) TakeThrottle(ctx context.Context, key string, rate store.Rate, now time.Time) (time.Duration, bool, error) {
	interval := rate.Interval()
	if interval <= 0 {
		return 0, false, fmt.Errorf("postgres: throttle rate %+v has no attempts", rate)
	}
	capacity := interval * time.Duration(rate.Burst)
	var taken bool
	err := s.pool.QueryRow(ctx, `
		INSERT INTO throttle AS t (key, tat) VALUES ($1, $2::timestamptz + $3::bigint * interval '1 microsecond')
		ON CONFLICT (key) DO UPDATE SET tat = GREATEST(t.tat, $2) + $3 * interval '1 microsecond'
		WHERE GREATEST(t.tat, $2) + $3 * interval '1 microsecond' <= $2 + $4::bigint * interval '1 microsecond'
		RETURNING true`,
		key, ts(now), interval.Microseconds(), capacity.Microseconds()).Scan(&taken)
	if !errors.Is(err, pgx.ErrNoRows) {
		return 0, taken, err
	}
	// Refused: say when the next attempt fits. Another take may change the
	// row meanwhile, which only makes the estimate a little early or late.
	var tat time.Time
	err = s.pool.QueryRow(ctx, `SELECT tat FROM throttle WHERE key = $1`, key).Scan(&tat)
	switch {
	case errors.Is(err, pgx.ErrNoRows): // pruned meanwhile: full again
		return interval, false, nil
	case err != nil:
		return 0, false, err
	}
	return max(tat.Add(interval).Sub(now)-capacity, time.Microsecond), false, nil
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
