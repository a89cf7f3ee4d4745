package learned

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/fuse"
	"github.com/citefind/citefind/rerank"
)

// cacheCands returns n candidates whose IDs overlap from one query to the
// next (query q gets papers q*n/2 … q*n/2+n-1).
func cacheCands(q, n int) []rerank.Candidate {
	var out []rerank.Candidate
	for j := range n {
		k := q*n/2 + j
		out = append(out, rerank.Candidate{
			ID:       fmt.Sprintf("p%d", k),
			Title:    fmt.Sprintf("Neural ranking study %d of query expansion", k%7),
			Abstract: fmt.Sprintf("We study dense retrieval (DPR) and BM25 baselines in setting %d. Results improve.", k%5),
			Keywords: []string{"ranking", fmt.Sprint("kw", k%3)},
			Authors:  []string{"Ada Lovelace", fmt.Sprintf("Alan Turing%d", k%2)},
			Year:     2000 + k%20, Rank: j + 1, Score: float64(n - j),
			Sources: map[string]fuse.Source{"bm25": {Rank: j + 1, Score: float64(2*n - j)}},
		})
	}
	return out
}

// TestDocCacheSameFeatures: features computed with the cache (hits,
// misses, entries moved between generations, evictions) equal the ones
// computed without; a paper whose text changed is analysed again.
func TestDocCacheSameFeatures(t *testing.T) {
	rs := []string{"bm25"}
	queries := []string{"dense retrieval BM25 [3] baselines", "Lovelace et al. [1] neural ranking", "query expansion study"}
	for _, size := range []int{2, 10, 64, 1000} {
		x := &extractor{retrievers: rs, cache: newDocCache(size)}
		for round := range 2 {
			for q := range 6 {
				cands := cacheCands(q, 24) // above parallelDocs: the parallel path
				if q%2 == 1 {
					cands = cands[:9] // below it: the sequential path
				}
				query := queries[q%len(queries)]
				require.Equal(t, Features(query, cands, rs), x.features(query, cands), "size %d round %d query %d", size, round, q)
			}
		}
		assert.LessOrEqual(t, x.cache.len(), size, "the cache is bounded")
	}

	x := &extractor{retrievers: rs, cache: newDocCache(100)}
	cands := cacheCands(0, 20)
	x.features("dense retrieval", cands)
	cands[3].Abstract = "An abstract about something else: query expansion."
	cands[4].Authors = []string{"Grace Hopper"}
	cands[5].Keywords = nil
	assert.Equal(t, Features("dense retrieval Hopper", cands, rs), x.features("dense retrieval Hopper", cands))
}

// TestRerankerConcurrent: one Reranker (one cache, one memo of prepared
// queries) used by several goroutines at once, with Prepare called
// before, during or not at all, ranks as separate ones do (run with -race
// too).
func TestRerankerConcurrent(t *testing.T) {
	m := &Model{Retrievers: []string{"bm25"}, Features: FeatureNames([]string{"bm25"})}
	w := make([]float64, len(m.Features))
	w[len(perRetriever)+5] = 1  // title.cov
	w[len(perRetriever)+10] = 1 // abs.cov
	m.Linear = &Linear{Weights: w, Mean: make([]float64, len(w)), Scale: ones(len(w))}
	m.Params.Kind = KindLinear
	shared := New(m)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for q := range 8 {
				cands := cacheCands(q+g, 30)
				query := fmt.Sprintf("dense retrieval [%d] study %d", g%2, q)
				switch g {
				case 1:
					shared.Prepare(query)
				case 2:
					go shared.Prepare(query)
				}
				got, err := shared.Rerank(t.Context(), query, cands)
				assert.NoError(t, err)
				want, err := (&Reranker{model: m}).Rerank(t.Context(), query, cands)
				assert.NoError(t, err)
				assert.Equal(t, want.Scores, got.Scores)
			}
		})
	}
	wg.Wait()
	assert.Positive(t, shared.cache.len())
	for q := range 3 * maxPrepared {
		shared.Prepare(fmt.Sprint("query ", q))
	}
	assert.LessOrEqual(t, shared.queries.len(), maxPrepared, "the memo is bounded")
}

func ones(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = 1
	}
	return out
}

// TestForestSameScores: the flat forest scores exactly as Model.Score on
// both built-in models, for vectors whose values sit on, below and above
// the models' thresholds; a linear model has no forest.
func TestForestSameScores(t *testing.T) {
	for _, names := range [][]string{{"bm25", "citing", "dense"}, {"bm25", "rm3", "citing"}} {
		m, err := DefaultModelFor(names)
		require.NoError(t, err)
		f := flatten(m)
		require.NotNil(t, f, "%v", names)
		var thresholds []float64
		for _, tr := range m.Trees {
			for _, n := range tr.Nodes {
				if n.Feature >= 0 {
					thresholds = append(thresholds, n.Threshold)
				}
			}
		}
		rng := rand.New(rand.NewPCG(3, 4))
		for range 2000 {
			x := make([]float64, len(m.Features))
			for k := range x {
				th := thresholds[rng.IntN(len(thresholds))]
				x[k] = []float64{th, th - 1e-9, th + 1e-9, rng.NormFloat64()}[rng.IntN(4)]
			}
			require.Equal(t, m.Score(x), f.score(x))
		}
	}
	lin := &Model{Linear: &Linear{Weights: []float64{1}, Mean: []float64{0}, Scale: []float64{1}}}
	assert.Nil(t, flatten(lin))
	assert.Nil(t, flatten(&Model{Trees: []Tree{{Nodes: []Node{{Feature: 0, Left: 1, Right: 7}, {Feature: -1}}}}}), "a child out of range")
}

// BenchmarkScore scores 100 vectors with the built-in model, through
// Model.Score and through its flat forest.
func BenchmarkScore(b *testing.B) {
	m, err := DefaultModel()
	require.NoError(b, err)
	rng := rand.New(rand.NewPCG(1, 1))
	xs := make([][]float64, 100)
	for i := range xs {
		xs[i] = make([]float64, len(m.Features))
		for k := range xs[i] {
			xs[i][k] = rng.Float64()
		}
	}
	f := flatten(m)
	b.Run("Model.Score", func(b *testing.B) {
		for b.Loop() {
			for _, x := range xs {
				sinkScore += m.Score(x)
			}
		}
	})
	b.Run("forest", func(b *testing.B) {
		for b.Loop() {
			for _, x := range xs {
				sinkScore += f.score(x)
			}
		}
	})
}

var sinkScore float64
