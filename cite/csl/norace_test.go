//go:build !race

package csl_test

const raceEnabled = false
