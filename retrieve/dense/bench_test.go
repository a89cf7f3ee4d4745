package dense_test

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/retrieve/dense"
)

var (
	sinkHits   []corpus.Hit
	sinkScored []scored
	sinkAny    any
)

type scored struct {
	row   int
	score float32
}

// flatScan is the baseline: a plain loop over a contiguous matrix of unit
// vectors, one multiply-add at a time, keeping the best k in a sorted
// slice.
func flatScan(m []float32, dim int, q []float32, k int) []scored {
	top := make([]scored, 0, k+1)
	n := len(m) / dim
	for i := 0; i < n; i++ {
		row := m[i*dim : (i+1)*dim]
		var s float32
		for j := range q {
			s += q[j] * row[j]
		}
		if len(top) == k && s <= top[k-1].score {
			continue
		}
		pos := len(top)
		for pos > 0 && top[pos-1].score < s {
			pos--
		}
		top = append(top, scored{})
		copy(top[pos+1:], top[pos:])
		top[pos] = scored{i, s}
		if len(top) > k {
			top = top[:k]
		}
	}
	return top
}

func unit(v []float32) []float32 {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) / math.Sqrt(ss))
	}
	return out
}

// BenchmarkDenseQuery compares, on n random unit vectors, the Retriever's
// search path (RetrieveVector: one goroutine), a plain flat float32 scan
// (one goroutine) and chromem-go's QueryEmbedding (one goroutine per CPU),
// for the top 10.
func BenchmarkDenseQuery(b *testing.B) {
	const k = 10
	for _, n := range []int{10_000, 100_000} {
		for _, dim := range []int{256, 768} {
			b.Run(fmt.Sprintf("n=%d/dim=%d", n, dim), func(b *testing.B) {
				dir, emb := buildVec(b, n, dim, false)
				r, err := openRetriever(dir, emb)
				require.NoError(b, err)
				col := importChromem(b, dir)
				flat := make([]float32, 0, n*dim)
				for _, v := range emb.vecs {
					flat = append(flat, unit(v)...)
				}
				rng := rand.New(rand.NewSource(42))
				queries := randomVecs(rng, 64, dim)
				for i := range queries {
					queries[i] = unit(queries[i])
				}
				ctx := context.Background()

				b.Run("dense", func(b *testing.B) {
					b.ReportAllocs()
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						hits, err := r.RetrieveVector(ctx, queries[i%len(queries)], k)
						if err != nil {
							b.Fatal(err)
						}
						sinkHits = hits
					}
				})
				b.Run("flat", func(b *testing.B) {
					b.ReportAllocs()
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						sinkScored = flatScan(flat, dim, queries[i%len(queries)], k)
					}
				})
				b.Run("chromem", func(b *testing.B) {
					b.ReportAllocs()
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						res, err := col.QueryEmbedding(ctx, queries[i%len(queries)], k, nil, nil)
						if err != nil {
							b.Fatal(err)
						}
						sinkAny = res
					}
				})
			})
		}
	}
}

// BenchmarkOpen compares opening an index of n random unit vectors from
// its sidecar (the default) with the fallback that imports the chromem-go
// export (the same folder without the sidecar).
func BenchmarkOpen(b *testing.B) {
	for _, tc := range []struct{ n, dim int }{{10_000, 256}, {100_000, 256}} {
		b.Run(fmt.Sprintf("n=%d/dim=%d", tc.n, tc.dim), func(b *testing.B) {
			dir, emb := buildVec(b, tc.n, tc.dim, false)
			h, err := dense.Stat(dir)
			require.NoError(b, err)
			noSide := b.TempDir()
			for _, name := range []string{dense.HeaderFile, h.Export} {
				require.NoError(b, os.Link(filepath.Join(dir, name), filepath.Join(noSide, name)))
			}
			for _, path := range []struct{ name, dir string }{{"sidecar", dir}, {"chromem", noSide}} {
				b.Run(path.name, func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						r, err := dense.Open(path.dir, emb)
						if err != nil {
							b.Fatal(err)
						}
						sinkAny = r
					}
				})
			}
		})
	}
}
