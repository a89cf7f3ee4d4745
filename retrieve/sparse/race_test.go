//go:build race

package sparse

// raceEnabled: tests that only compare analysers on one goroutine, which
// the race detector slows about tenfold, skip under it and run in make
// test's second pass, without it.
const raceEnabled = true
