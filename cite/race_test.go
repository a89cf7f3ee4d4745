//go:build race

package cite_test

// raceEnabled: the race detector slows goja down about tenfold, so the
// heaviest tests run smaller samples, and those that only drive goja,
// pandoc or regular expressions on one goroutine skip and run in make
// test's second pass, without it.
const raceEnabled = true
