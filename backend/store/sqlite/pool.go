package sqlite

import "github.com/health-data-connect/hdc/backend/store"

// PoolStats implements store.Store with database/sql's figures.
func (s *Store) PoolStats() store.PoolStats {
	st := s.db.Stats()
	return store.PoolStats{Max: st.MaxOpenConnections, InUse: st.InUse, Idle: st.Idle,
		Waits: st.WaitCount, WaitTime: st.WaitDuration}
}
