//go:build race

package csl_test

// raceEnabled: the race detector slows goja down about tenfold, so the
// heaviest tests run smaller samples.
const raceEnabled = true
