package dense

import (
	"context"
	"fmt"
	"math/rand"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDotsInt8(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for _, stride := range []int{32, 64, 512, 4096} {
		t.Run(fmt.Sprint(stride), func(t *testing.T) {
			limit := min(quantMaxQ, (1<<31-1)/(127*stride))
			const rows = 37
			q := make([]int16, stride)
			m := make([]int8, rows*stride)
			for j := range q {
				q[j] = int16(rng.Intn(2*limit+1) - limit)
			}
			for i := range m {
				m[i] = int8(rng.Intn(255) - 127)
			}
			// The worst case for overflow: every product at its largest.
			for j := range stride {
				q[j] = int16(limit)
				m[j] = 127
				m[stride+j] = -127
			}
			got, want := make([]int32, rows), make([]int32, rows)
			dotsInt8(q, m, stride, got)
			dotsInt8Generic(q, m, stride, want)
			assert.Equal(t, want, got)
			for r := range rows {
				var s int64
				for j := range stride {
					s += int64(q[j]) * int64(m[r*stride+j])
				}
				assert.Equal(t, s, int64(got[r]), "row %d", r)
			}
		})
	}
}

// clustered returns n unit vectors around a few centres, with exact
// duplicates, so that many scores are close or equal.
func clustered(rng *rand.Rand, n, dim int) []float32 {
	centres := make([][]float32, 8)
	for c := range centres {
		centres[c] = make([]float32, dim)
		for j := range dim {
			centres[c][j] = float32(rng.NormFloat64())
		}
	}
	vecs := make([]float32, n*dim)
	for i := range n {
		row := vecs[i*dim : (i+1)*dim]
		if i > 0 && i%50 == 0 {
			copy(row, vecs[(i-1)*dim:i*dim])
			continue
		}
		c := centres[rng.Intn(len(centres))]
		for j := range dim {
			row[j] = c[j] + 0.3*float32(rng.NormFloat64())
		}
		normalize(row)
	}
	return vecs
}

// TestScanQuantExact checks that the int8 scan with re-scoring returns
// exactly what the flat float32 scan returns: the same rows, scores and
// order, ties included.
func TestScanQuantExact(t *testing.T) {
	rng := rand.New(rand.NewSource(42))
	for _, tc := range []struct {
		name      string
		n, dim    int
		clustered bool
	}{
		{"random 3000x64", 3000, 64, false},
		{"random 5000x33", 5000, 33, false},
		{"clustered 6000x128", 6000, 128, true},
		{"clustered 3000x7", 3000, 7, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var vecs []float32
			if tc.clustered {
				vecs = clustered(rng, tc.n, tc.dim)
			} else {
				vecs = make([]float32, tc.n*tc.dim)
				for i := range tc.n {
					row := vecs[i*tc.dim : (i+1)*tc.dim]
					for j := range row {
						row[j] = float32(rng.NormFloat64())
					}
					normalize(row)
				}
			}
			r := &Retriever{dim: tc.dim, ids: make([]string, tc.n), vecs: vecs}
			r.quant = quantize(vecs, tc.n, tc.dim)
			for qi := range 20 {
				q := make([]float32, tc.dim)
				if qi%2 == 0 {
					// a stored vector: its duplicates tie at the top
					copy(q, vecs[(qi*97%tc.n)*tc.dim:])
				} else {
					for j := range q {
						q[j] = float32(rng.NormFloat64())
					}
				}
				require.True(t, normalize(q))
				for _, k := range []int{1, 10, 100, tc.n} {
					want, err := r.scan(t.Context(), q, k)
					require.NoError(t, err)
					got, rescored, err := r.scanQuant(t.Context(), q, k)
					require.NoError(t, err)
					require.Equal(t, want, got, "query %d, k %d", qi, k)
					assert.GreaterOrEqual(t, rescored, k)
				}
			}
		})
	}
}

func TestScanQuantCanceled(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	vecs := clustered(rng, 3000, 16)
	r := &Retriever{dim: 16, ids: make([]string, 3000), vecs: vecs, quant: quantize(vecs, 3000, 16)}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, _, err := r.scanQuant(ctx, vecs[:16], 10)
	require.ErrorIs(t, err, context.Canceled)
}

// TestScanQuantConcurrent queries one Retriever from several goroutines
// (pooled scratch memory) and checks every result against the flat scan.
func TestScanQuantConcurrent(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	const n, dim = 4000, 48
	vecs := clustered(rng, n, dim)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("p%05d", i)
	}
	r := &Retriever{dim: dim, ids: ids, vecs: vecs, quant: quantize(vecs, n, dim)}
	queries := make([][]float32, 16)
	want := make([][]cand, len(queries))
	for i := range queries {
		queries[i] = vecs[(i*211%n)*dim : (i*211%n+1)*dim]
		var err error
		want[i], err = r.scan(t.Context(), queries[i], 25)
		require.NoError(t, err)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range queries {
				j := (i + g) % len(queries)
				got, _, err := r.scanQuant(t.Context(), queries[j], 25)
				if assert.NoError(t, err) {
					assert.Equal(t, want[j], got, "query %d", j)
				}
			}
		})
	}
	wg.Wait()
}
