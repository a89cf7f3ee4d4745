package eval_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/eval"
	"github.com/citefind/citefind/fuse"
	"github.com/citefind/citefind/rerank"
	"github.com/citefind/citefind/rerank/learned"
)

var topics = []string{"neural ranking models", "query expansion relevance feedback", "click models user behaviour",
	"learning to rank gradient boosting", "dense passage retrieval", "citation recommendation context"}

// collection returns a synthetic candidate dataset named bench: for each
// query, n candidates fused from bm25 and rm3, where the relevant one has
// the query's topic in its title but is ranked low, so that a reranker
// that reads titles beats the fused order.
func collection(bench string, nq, n int, seed uint64) *learned.Dataset {
	rng := rand.New(rand.NewPCG(seed, 11))
	d := &learned.Dataset{Version: learned.DatasetVersion, Bench: bench, Depth: n, Retrievers: []string{"bm25", "rm3"}}
	for qi := range nq {
		topic := topics[qi%len(topics)]
		q := learned.Query{Set: "test", ID: fmt.Sprint(qi), Group: fmt.Sprintf("g%d", qi%7),
			Text: "Earlier work on " + topic + " [CIT] is related."}
		var cands []rerank.Candidate
		for j := range n {
			id := fmt.Sprintf("%s-q%d-c%d", bench, qi, j)
			title := "A study of " + topics[rng.IntN(len(topics))] + " elsewhere"
			if j == n/2+qi%3 {
				title = "Advances in " + topic
				q.Relevant = append(q.Relevant, id)
			}
			cands = append(cands, rerank.Candidate{ID: id, Title: title, Abstract: "We study " + title + ".", Rank: j + 1,
				Score: float64(n - j), Sources: map[string]fuse.Source{"bm25": {Rank: j + 1, Score: 3 * float64(n-j)},
					"rm3": {Rank: j + 1, Score: float64(n-j) / 10}}})
		}
		if qi%5 == 4 {
			q.Missing = 1 // a judged paper not in the collection
		}
		d.Add(q, cands)
	}
	return d
}

func smallParams() learned.Params {
	p := learned.DefaultParams()
	p.Trees, p.MinLeaf, p.LearningRate = 20, 5, 0.2
	return p
}

func TestScoreOrders(t *testing.T) {
	d := collection("x", 10, 12, 1)
	fused := eval.ScoreOrders(d, nil)
	require.Len(t, fused, 1)
	s := fused[0]
	assert.Equal(t, 10, s.Queries)
	assert.Equal(t, s.Fused, s.Reranked, "no orders: the fused order")
	assert.InDelta(t, 0, s.Gain(eval.NDCG10), 1e-12)
	// The relevant candidate first: recall@1 is 1 except for the queries
	// with a judged paper missing from the collection (1/2).
	orders := make([][]int, len(d.Queries))
	for i, q := range d.Queries {
		for j, c := range q.Cands {
			if c.ID == q.Relevant[0] {
				orders[i] = append([]int{j}, orders[i]...)
			} else {
				orders[i] = append(orders[i], j)
			}
		}
	}
	best := eval.ScoreOrders(d, orders)[0]
	assert.InDelta(t, (8*1+2*0.5)/10.0, best.Reranked[eval.Recall1], 1e-12)
	assert.Greater(t, best.Gain(eval.NDCG10), 0.0)
	assert.LessOrEqual(t, best.NDCGLo, best.Gain(eval.NDCG10))
	assert.GreaterOrEqual(t, best.NDCGHi, best.Gain(eval.NDCG10))
	assert.Len(t, best.NDCGDelta, 10)
}

// threeCollections: a (30 queries) and b (20) scored on their training
// queries, c (25) on a test set of its own (10 queries).
func threeCollections() []eval.Collection {
	a, b, c := collection("a", 30, 12, 1), collection("b", 20, 12, 2), collection("c", 25, 12, 3)
	cTest := collection("c", 10, 12, 4)
	return []eval.Collection{{Name: "a", Train: []*learned.Dataset{a}, Test: []*learned.Dataset{a}},
		{Name: "b", Train: []*learned.Dataset{b}, Test: []*learned.Dataset{b}},
		{Name: "c", Train: []*learned.Dataset{c}, Test: []*learned.Dataset{cTest}}}
}

func TestLeaveOneCollectionOut(t *testing.T) {
	cols := threeCollections()
	held, err := eval.LeaveOneCollectionOut(t.Context(), cols, eval.TransferOptions{Params: smallParams()})
	require.NoError(t, err)
	require.Len(t, held, 3)
	trained := map[string]int{"a": 20 + 25, "b": 30 + 25, "c": 30 + 20}
	for _, h := range held {
		assert.Equal(t, trained[h.Collection], h.Model.Training.Queries, "without %s: trained on the others only", h.Collection)
		assert.NotContains(t, h.Model.Training.Bench, h.Collection)
		require.Len(t, h.Scores, 1)
		assert.Greater(t, h.Scores[0].Gain(eval.NDCG10), 0.0, "the title signal transfers to %s", h.Collection)
	}
	assert.Equal(t, 10, held[2].Scores[0].Queries, "c is scored on its test dataset")

	var out strings.Builder
	require.NoError(t, eval.WriteTransferTable(&out, []eval.TransferRow{{Label: "without c", Scores: held[2].Scores}}))
	assert.Contains(t, out.String(), "| without c | c:test | 10 |")

	// Balanced weights give another model; one collection is too few.
	bal, err := eval.LeaveOneCollectionOut(t.Context(), cols, eval.TransferOptions{Params: smallParams(), Balance: true})
	require.NoError(t, err)
	assert.NotEqual(t, held[0].Model.Trees, bal[0].Model.Trees)
	_, err = eval.LeaveOneCollectionOut(t.Context(), cols[:1], eval.TransferOptions{Params: smallParams()})
	require.ErrorIs(t, err, eval.ErrBenchUsage)

	// Candidates of other retrievers cannot be trained on together.
	other := collection("d", 5, 12, 5)
	other.Retrievers = []string{"rm3", "bm25"}
	_, err = eval.TrainCollections(t.Context(), []eval.Collection{cols[0], {Name: "d", Train: []*learned.Dataset{other}}},
		eval.TransferOptions{Params: smallParams()}, learned.Provenance{})
	require.ErrorIs(t, err, eval.ErrBenchUsage)
}

func TestExcludeSplit(t *testing.T) {
	b, err := eval.LoadBench("beir:test", eval.BenchOptions{Data: "testdata/beir/tiny"})
	require.NoError(t, err)
	before := len(b.Sets[0].Queries)
	n, err := eval.ExcludeSplit(b, "testdata/beir/tiny", "train")
	require.NoError(t, err)
	assert.Equal(t, 0, n, "no test query is judged in train")
	assert.Len(t, b.Sets[0].Queries, before)

	b, err = eval.LoadBench("beir:test", eval.BenchOptions{Data: "testdata/beir/tiny"})
	require.NoError(t, err)
	n, err = eval.ExcludeSplit(b, "testdata/beir/tiny", "test")
	require.NoError(t, err)
	assert.Equal(t, before, n)
	assert.Empty(t, b.Sets[0].Queries)
	assert.Equal(t, "test-test", b.Sets[0].Name, "the set is named after what it excludes")

	_, err = eval.ExcludeSplit(b, "testdata/beir/tiny", "nosuch")
	require.Error(t, err)
	j, err := eval.LoadBench("jsonl", eval.BenchOptions{Queries: "testdata/jsonl/ok.jsonl"})
	require.NoError(t, err)
	_, err = eval.ExcludeSplit(j, "testdata/beir/tiny", "test")
	require.ErrorIs(t, err, eval.ErrBenchUsage)
}

// library returns n papers for self-training, on the topics above.
func library(n int) []learned.PseudoPaper {
	var out []learned.PseudoPaper
	for i := range n {
		topic := topics[i%len(topics)]
		out = append(out, learned.PseudoPaper{ID: fmt.Sprintf("p%03d", i), Paper: learned.Paper{
			Title: fmt.Sprintf("On %s, part %d", topic, i),
			Abstract: fmt.Sprintf("This paper is about %s in the setting number %d. "+
				"We propose a method for %s and evaluate it on several benchmark collections. "+
				"Results improve over the baselines by a wide margin in every setting.", topic, i, topic),
		}})
	}
	return out
}

// fakeSearch returns the papers of lib sharing words of four letters or
// more with the text, most shared first, as fused candidates.
func fakeSearch(lib []learned.PseudoPaper) func(ctx context.Context, text string) ([]rerank.Candidate, error) {
	return func(ctx context.Context, text string) ([]rerank.Candidate, error) {
		type scored struct {
			p *learned.PseudoPaper
			n int
		}
		var hits []scored
		for i := range lib {
			body := strings.ToLower(lib[i].Title + " " + lib[i].Abstract)
			n := 0
			for _, w := range strings.Fields(strings.ToLower(text)) {
				if w = strings.Trim(w, ",.:"); len(w) >= 4 && strings.Contains(body, w) {
					n++
				}
			}
			if n > 0 {
				hits = append(hits, scored{&lib[i], n})
			}
		}
		slices.SortStableFunc(hits, func(a, b scored) int { return b.n - a.n })
		var out []rerank.Candidate
		for i, h := range hits[:min(len(hits), 100)] {
			out = append(out, rerank.Candidate{ID: h.p.ID, Title: h.p.Title, Abstract: h.p.Abstract, Rank: i + 1,
				Score: float64(h.n), Sources: map[string]fuse.Source{"bm25": {Rank: i + 1, Score: float64(h.n)}}})
		}
		return out, nil
	}
}

func TestSelfDataset(t *testing.T) {
	lib := library(240)
	lib = append(lib, learned.PseudoPaper{ID: "copy", Paper: lib[0].Paper}) // the same paper twice
	o := eval.SelfOptions{Pseudo: learned.PseudoOptions{N: 120}, Retrievers: []string{"bm25"}, Depth: 100,
		Settings: "test", Dir: t.TempDir()}
	ds, err := eval.SelfDataset(t.Context(), lib, fakeSearch(lib), o)
	require.NoError(t, err)
	require.Len(t, ds.Queries, 120)
	assert.GreaterOrEqual(t, eval.SelfFound(ds), eval.MinSelfQueries)
	for _, q := range ds.Queries {
		if len(q.Relevant) == 0 {
			assert.Equal(t, 1, q.Missing)
			continue
		}
		// The answer has an ID of its own (its features see the paper
		// without the query's sentence), and no copy of it is a negative.
		require.Len(t, q.Relevant, 1)
		assert.True(t, strings.HasPrefix(q.Relevant[0], "self:"+q.ID+":"))
		ans := ds.Papers[q.Relevant[0]]
		for _, c := range q.Cands {
			if c.ID != q.Relevant[0] {
				assert.NotEqual(t, ans.Title, ds.Papers[c.ID].Title, "query %s", q.ID)
			}
		}
		if q.Set == learned.PseudoSentence {
			orig := lib[0].Abstract
			for _, p := range lib {
				if strings.HasSuffix(q.Relevant[0], ":"+p.ID) {
					orig = p.Abstract
				}
			}
			assert.Less(t, len(ans.Abstract), len(orig))
		}
	}
	// A second run reads the cache.
	calls := 0
	again, err := eval.SelfDataset(t.Context(), lib, func(ctx context.Context, text string) ([]rerank.Candidate, error) {
		calls++
		return nil, nil
	}, o)
	require.NoError(t, err)
	assert.Zero(t, calls)
	assert.Equal(t, ds.Queries, again.Queries)

	t.Run("TooSmall", func(t *testing.T) {
		_, err := eval.SelfDataset(t.Context(), library(50), fakeSearch(lib), o)
		require.ErrorIs(t, err, eval.ErrTooSmall)
		assert.Contains(t, err.Error(), "50 papers")
	})
	t.Run("NothingFound", func(t *testing.T) {
		o := o
		o.Dir = t.TempDir()
		_, err := eval.SelfDataset(t.Context(), lib, func(ctx context.Context, text string) ([]rerank.Candidate, error) {
			return nil, nil
		}, o)
		require.ErrorIs(t, err, eval.ErrTooSmall)
		assert.Contains(t, err.Error(), "found their paper")
	})
	t.Run("SearchFails", func(t *testing.T) {
		o := o
		o.Dir = t.TempDir()
		boom := errors.New("boom")
		_, err := eval.SelfDataset(t.Context(), lib, func(ctx context.Context, text string) ([]rerank.Candidate, error) {
			return nil, boom
		}, o)
		require.ErrorIs(t, err, boom)
	})
}

func TestCrossValidateWithin(t *testing.T) {
	cols := threeCollections()
	var log strings.Builder
	o := eval.TransferOptions{Params: smallParams(), Log: &log}
	sc, err := eval.CrossValidateWithin(t.Context(), cols, 0, 5, 1, o)
	require.NoError(t, err)
	require.Len(t, sc, 1)
	assert.Equal(t, 30, sc[0].Queries, "every query of a is reranked once")
	assert.Greater(t, sc[0].Gain(eval.NDCG10), 0.0)

	// Each fold's model trained on b and c and on a's other folds: 5
	// models, each short of the fold it reranks, the folds adding up to a.
	var counts []int
	for line := range strings.Lines(log.String()) {
		var n int
		_, err := fmt.Sscanf(line[strings.Index(line, ": ")+2:], "%d queries", &n)
		require.NoError(t, err, line)
		counts = append(counts, n)
	}
	require.Len(t, counts, 5)
	heldOut := 0
	for _, n := range counts {
		assert.Less(t, n, 20+25+30, "a fold's own queries are not trained on")
		heldOut += 20 + 25 + 30 - n
	}
	assert.Equal(t, 30, heldOut, "each query of a is held out exactly once")

	// c is measured on a split of its own: nothing to cross-validate.
	sc, err = eval.CrossValidateWithin(t.Context(), cols, 2, 5, 1, o)
	require.NoError(t, err)
	assert.Empty(t, sc)

	for _, bad := range []struct {
		held  int
		folds int
	}{{3, 5}, {-1, 5}, {0, 1}, {0, 8}} { // 7 groups in a
		_, err := eval.CrossValidateWithin(t.Context(), cols, bad.held, bad.folds, 1, o)
		require.ErrorIs(t, err, eval.ErrBenchUsage, "%+v", bad)
	}
	// Queries without a citing paper are groups of their own.
	noGroup := collection("n", 10, 12, 6)
	for i := range noGroup.Queries {
		noGroup.Queries[i].Group = ""
	}
	sc, err = eval.CrossValidateWithin(t.Context(), []eval.Collection{{Name: "n", Train: []*learned.Dataset{noGroup}, Test: []*learned.Dataset{noGroup}}, cols[1]}, 0, 10, 1, o)
	require.NoError(t, err)
	require.Len(t, sc, 1)
	assert.Equal(t, 10, sc[0].Queries)
}
