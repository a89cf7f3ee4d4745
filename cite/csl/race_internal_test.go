//go:build race

package csl

// raceEnabled: the race detector slows goja down about tenfold; tests
// that only drive citeproc-js on one goroutine skip under it and run in
// make test's second pass, without it.
const raceEnabled = true
