package dense_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/retrieve/dense"
)

func TestQueryVector(t *testing.T) {
	emb := dense.HashEmbedder{Dims: 64}
	embed := func(text string) []float32 {
		v, err := emb.Embed(t.Context(), []string{text})
		require.NoError(t, err)
		return v[0]
	}
	tests := []struct {
		name  string
		raw   string
		parts []string // the texts whose unit embeddings are averaged
	}{
		{"no marker", "Dense retrieval uses dual encoders.", []string{"Dense retrieval uses dual encoders."}},
		{"one sentence", "Dense retrieval [CITATION] uses dual encoders.", []string{"Dense retrieval uses dual encoders."}},
		{"paragraph", "Sparse methods dominate. Dense retrieval [12] uses dual encoders. Both are fast.",
			[]string{"Sparse methods dominate. Dense retrieval uses dual encoders. Both are fast.", "Dense retrieval uses dual encoders."}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := dense.QueryVector(t.Context(), emb, tc.raw)
			require.NoError(t, err)
			want := make([]float32, 64)
			for _, p := range tc.parts {
				for k, x := range embed(p) {
					want[k] += x
				}
			}
			var ss float64
			for _, x := range want {
				ss += float64(x) * float64(x)
			}
			for k := range want {
				want[k] /= float32(math.Sqrt(ss))
			}
			assert.InDeltaSlice(t, want, got, 1e-6)
		})
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := dense.QueryVector(ctx, emb, strings.Repeat("word ", 10))
	require.ErrorIs(t, err, context.Canceled)
}
