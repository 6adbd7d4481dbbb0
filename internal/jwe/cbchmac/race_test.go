//go:build race

package cbchmac

// raceEnabled: the race detector drops a quarter of what sync.Pool is
// given, so counts of allocations do not hold under it.
const raceEnabled = true
