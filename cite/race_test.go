//go:build race

package cite_test

// raceEnabled: the race detector slows goja down about tenfold, so the
// heaviest tests run smaller samples.
const raceEnabled = true
