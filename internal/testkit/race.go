package testkit

// NoExitSleep is the environment entry that spares a test binary run as a
// program of its own (a test re-running itself as the command under test)
// the race detector's sleep of a second before it exits (GORACE's
// atexit_sleep_ms): under -race, cmd/hdc's tests spent two of their
// minutes in it. What such a run is tested for is what it prints and its
// exit status; the test binary itself keeps the sleep.
const NoExitSleep = "GORACE=atexit_sleep_ms=0"
