package fuse_test

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/fuse"
)

// sinkHits keeps the compiler from optimising benchmark work away.
var sinkHits []fuse.Hit

// benchLists returns two best-first lists of n hits each drawn from a pool
// of 1.5·n papers, so about half of each list is in the other.
func benchLists(rng *rand.Rand, n int) map[string][]corpus.Hit {
	pool := n * 3 / 2
	mk := func(scale float64) []corpus.Hit {
		perm := rng.Perm(pool)[:n]
		hits := make([]corpus.Hit, n)
		for i, p := range perm {
			hits[i] = corpus.Hit{ID: fmt.Sprintf("10.%04d/%d", p%9973, p), Score: scale * float64(n-i) / float64(n)}
		}
		return hits
	}
	return map[string][]corpus.Hit{"bm25": mk(25), "dense": mk(0.9)}
}

// BenchmarkFuse fuses two lists of n hits each (Depth n) into the top 100,
// the usual hand-off to a reranker.
func BenchmarkFuse(b *testing.B) {
	for _, m := range []fuse.Method{fuse.RRF, fuse.MinMax} {
		for _, n := range []int{100, 1_000, 10_000} {
			b.Run(fmt.Sprintf("%s/%d", m, n), func(b *testing.B) {
				lists := benchLists(rand.New(rand.NewSource(42)), n)
				weights := map[string]float64{"dense": 0.3}
				opts := fuse.Options{Method: m, Depth: n, K: 100}
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					hits, err := fuse.Fuse(lists, weights, opts)
					if err != nil {
						b.Fatal(err)
					}
					sinkHits = hits
				}
			})
		}
	}
}
