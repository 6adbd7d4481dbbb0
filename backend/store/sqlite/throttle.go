package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/health-data-connect/hdc/backend/store"
)

// TakeThrottle implements store.Store with store.Take.
func (s *Store) TakeThrottle(ctx context.Context, key string, rate store.Rate, now time.Time) (time.Duration, bool, error) {
	return store.Take(ctx, throttler{s}, key, rate, now)
}

// throttler is the SQLite side of store.Take.
type throttler struct{ s *Store }

// AdvanceThrottle implements store.ThrottleEngine with one upsert.
func (t throttler) AdvanceThrottle(ctx context.Context, key string, now time.Time, interval, capacity time.Duration) (bool, error) {
	var full int64
	err := t.s.db.QueryRowContext(ctx, `
		INSERT INTO throttle (key, tat) VALUES (?1, ?2 + ?3)
		ON CONFLICT (key) DO UPDATE SET tat = max(tat, ?2) + ?3
		WHERE max(tat, ?2) + ?3 <= ?2 + ?4
		RETURNING tat`,
		key, micros(now), interval.Microseconds(), capacity.Microseconds()).Scan(&full)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// ThrottleFull implements store.ThrottleEngine.
func (t throttler) ThrottleFull(ctx context.Context, key string) (time.Time, bool, error) {
	var full int64
	err := t.s.db.QueryRowContext(ctx, `SELECT tat FROM throttle WHERE key = ?`, key).Scan(&full)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, false, nil
	}
	return time.UnixMicro(full), err == nil, err
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
