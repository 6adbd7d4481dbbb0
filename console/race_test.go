//go:build race

package console

// raceEnabled: the race detector slows every request several times, so
// timings do not hold under it.
const raceEnabled = true
