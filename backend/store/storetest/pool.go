package storetest

import "testing"

// testPoolStats: once the database answered, the pool holds the connection
// that asked, within its bound, and counts no negative wait.
func testPoolStats(t *testing.T, s Store) {
	must(t, s.Ping(ctx(t)))
	st := s.PoolStats()
	open := st.InUse + st.Idle
	if open < 1 || st.InUse < 0 || st.Idle < 0 || st.Max != 0 && open > st.Max || st.Waits < 0 || st.WaitTime < 0 {
		t.Fatalf("after a ping, the pool's figures are %+v", st)
	}
}
