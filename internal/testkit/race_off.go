//go:build !race

package testkit

// RaceEnabled reports whether the race detector is on: tests that only
// compute, in one goroutine, may then do less of the same work.
const RaceEnabled = false
