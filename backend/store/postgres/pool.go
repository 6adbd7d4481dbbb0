package postgres

import "github.com/health-data-connect/hdc/backend/store"

// PoolStats implements store.Store with pgxpool's figures: a wait is an
// acquire that found the pool empty.
func (s *Store) PoolStats() store.PoolStats {
	st := s.pool.Stat()
	return store.PoolStats{Max: int(st.MaxConns()), InUse: int(st.AcquiredConns()), Idle: int(st.IdleConns()),
		Waits: st.EmptyAcquireCount(), WaitTime: st.EmptyAcquireWaitTime()}
}
