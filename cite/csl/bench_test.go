package csl_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/cite/csl"
)

// BenchmarkNewProcessor builds a citeproc-js engine for each built-in
// style (the cost of a style's first use: citeproc-js compiled once
// before, not counted).
func BenchmarkNewProcessor(b *testing.B) {
	var p csl.Program
	_, _, err := p.NewRuntime()
	require.NoError(b, err)
	for _, name := range []string{"apa", "chicago", "mla", "harvard", "ieee", "vancouver"} {
		st, err := builtin.Style(name)
		require.NoError(b, err)
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				_, err := csl.NewProcessor(b.Context(), &p, st, builtin.Locale, "")
				require.NoError(b, err)
			}
		})
	}
}
