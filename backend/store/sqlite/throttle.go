package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/health-data-connect/hdc/backend/store"
)

// TakeThrottle implements store.Store: the upsert advances the key's full
// time by one interval unless that would take it more than the bucket's
// capacity ahead of now.
func (s *Store) TakeThrottle(ctx context.Context, key string, rate store.Rate, now time.Time) (time.Duration, bool, error) {
	interval := rate.Interval()
	if interval <= 0 {
		return 0, false, fmt.Errorf("sqlite: throttle rate %+v has no attempts", rate)
	}
	capacity := interval * time.Duration(rate.Burst)
	var (
		wait time.Duration
		ok   bool
	)
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var tat int64
		err := tx.QueryRowContext(ctx, `
			INSERT INTO throttle (key, tat) VALUES (?1, ?2 + ?3)
			ON CONFLICT (key) DO UPDATE SET tat = max(tat, ?2) + ?3
			WHERE max(tat, ?2) + ?3 <= ?2 + ?4
			RETURNING tat`,
			key, micros(now), interval.Microseconds(), capacity.Microseconds()).Scan(&tat)
		if !errors.Is(err, sql.ErrNoRows) {
			ok = err == nil
			return err
		}
		if err := tx.QueryRowContext(ctx, `SELECT tat FROM throttle WHERE key = ?`, key).Scan(&tat); err != nil {
			return err
		}
		wait = time.UnixMicro(tat).Add(interval).Sub(now) - capacity
		return nil
	})
	if err != nil {
		return 0, false, err
	}
	return wait, ok, nil
}

// ReturnThrottle implements store.Store.
func (s *Store) ReturnThrottle(ctx context.Context, key string, rate store.Rate, now time.Time) error {
	_, err := s.db.ExecContext(ctx, `UPDATE throttle SET tat = max(tat - ?, ?) WHERE key = ?`,
		rate.Interval().Microseconds(), micros(now), key)
	return err
}

// PruneThrottle implements store.Store.
func (s *Store) PruneThrottle(ctx context.Context, now time.Time) (int64, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM throttle WHERE tat <= ?`, micros(now))
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
