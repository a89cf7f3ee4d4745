//go:build !race

package csl

const raceEnabled = false
