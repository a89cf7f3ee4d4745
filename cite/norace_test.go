//go:build !race

package cite_test

const raceEnabled = false
