package eval_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/eval"
	"github.com/citefind/citefind/retrieve"
)

// fakeRetriever is a function-field fake.
type fakeRetriever struct {
	RetrieveFunc func(ctx context.Context, query string, k int) ([]corpus.Hit, error)
}

func (f *fakeRetriever) Retrieve(ctx context.Context, query string, k int) ([]corpus.Hit, error) {
	return f.RetrieveFunc(ctx, query, k)
}

var _ retrieve.Retriever = (*fakeRetriever)(nil)
var _ retrieve.Retriever = retrieve.RetrieverFunc(nil)

func hits(ids ...string) []corpus.Hit {
	out := make([]corpus.Hit, len(ids))
	for i, id := range ids {
		out[i] = corpus.Hit{ID: id, Score: float64(len(ids) - i)}
	}
	return out
}

var testSet = eval.TopicSet{Name: "contexts", Queries: []eval.Query{
	{ID: "q1", Text: "alpha", Relevant: []string{"10.1145/A.1", "alias-b"}},
	{ID: "q2", Text: "beta", Relevant: []string{"alias-b"}},
	{ID: "q3", Text: "gamma", Relevant: []string{"gone", "alias-b"}},
}}

func TestRun(t *testing.T) {
	var gotK []int
	r := &fakeRetriever{RetrieveFunc: func(ctx context.Context, query string, k int) ([]corpus.Hit, error) {
		gotK = append(gotK, k)
		switch query {
		case "alpha":
			return hits("10.1145/a.1", "x", "y"), nil
		case "beta":
			return nil, errors.New("boom")
		case "gamma":
			return hits("p-b"), nil
		}
		t.Errorf("unexpected query %q", query)
		return nil, nil
	}}
	var resolved []string
	var progress [][2]int
	res, err := eval.Run(t.Context(), testSet, r, eval.Options{
		K:     2,
		Bench: "acm-cr", Stage: "bm25",
		Resolve: func(ids []string) (map[string]string, error) {
			resolved = ids
			return map[string]string{"10.1145/A.1": "10.1145/a.1", "alias-b": "p-b"}, nil // "gone" is not in the collection
		},
		Progress: func(done, total int) { progress = append(progress, [2]int{done, total}) },
	})
	require.NoError(t, err)

	assert.Equal(t, []int{2, 2, 2}, gotK)
	assert.Equal(t, []string{"10.1145/A.1", "alias-b", "gone"}, resolved, "every judged id once, sorted")
	assert.Equal(t, [][2]int{{1, 3}, {2, 3}, {3, 3}}, progress)
	assert.Equal(t, "acm-cr", res.Bench)
	assert.Equal(t, "contexts", res.Set)
	assert.Equal(t, "bm25", res.Stage)
	assert.Equal(t, 3, res.Queries)
	assert.Equal(t, 1, res.Failed)
	assert.Equal(t, 1, res.Missing)
	require.Len(t, res.PerQuery, 3)

	q1, q2, q3 := res.PerQuery[0], res.PerQuery[1], res.PerQuery[2]
	assert.Equal(t, hits("10.1145/a.1", "x", "y")[:2], q1.Hits, "truncated to K")
	assert.Equal(t, 2, q1.Relevant)
	assert.Equal(t, 0, q1.RelevantMissing)
	assert.Empty(t, q1.Err)
	// q1: relevant {10.1145/a.1, p-b}, a.1 at rank 1 → recall@10 = 1/2,
	// nDCG@10 = 1 / (1 + 1/log2(3)) = 0.6131471927654584, MRR = 1
	assert.InDelta(t, 0.5, q1.Metrics["recall@10"], 1e-12)
	assert.InDelta(t, 0.6131471927654584, q1.Metrics["ndcg@10"], 1e-12)
	assert.InDelta(t, 1, q1.Metrics["mrr@10"], 1e-12)

	assert.Equal(t, "boom", q2.Err)
	assert.Nil(t, q2.Hits)
	assert.Equal(t, 1, q2.Relevant)
	for k, v := range q2.Metrics {
		assert.Zero(t, v, k)
	}

	// q3: relevant {gone (missing), p-b}, p-b at rank 1 → recall@10 = 1/2
	assert.Equal(t, 2, q3.Relevant)
	assert.Equal(t, 1, q3.RelevantMissing)
	assert.InDelta(t, 0.5, q3.Metrics["recall@10"], 1e-12)

	// means over 3 queries, the failed one included:
	// recall@10 = (0.5 + 0 + 0.5) / 3 = 1/3; MRR@10 = (1 + 0 + 1) / 3 = 2/3
	assert.InDelta(t, 1.0/3, res.Metrics["recall@10"], 1e-12)
	assert.InDelta(t, 2.0/3, res.Metrics["mrr@10"], 1e-12)
	assert.InDelta(t, 2*0.6131471927654584/3, res.Metrics["ndcg@10"], 1e-12)
}

func TestRunDefaults(t *testing.T) {
	var gotK int
	r := retrieve.RetrieverFunc(func(ctx context.Context, query string, k int) ([]corpus.Hit, error) {
		gotK = k
		return hits("10.1145/a.1"), nil
	})
	set := eval.TopicSet{Name: "s", Queries: []eval.Query{{ID: "q1", Text: "alpha", Relevant: []string{"https://doi.org/10.1145/A.1", "alias-b"}}}}
	res, err := eval.Run(t.Context(), set, r, eval.Options{})
	require.NoError(t, err)
	assert.Equal(t, eval.DefaultK, gotK)
	// nil Resolve: DOIs normalised (resolver prefix dropped, lower case),
	// other ids kept, nothing missing
	assert.Equal(t, 0, res.Missing)
	assert.InDelta(t, 0.5, res.Metrics["recall@10"], 1e-12)
	assert.Equal(t, res.PerQuery[0].Latency, res.LatencyP50)
	assert.Equal(t, res.PerQuery[0].Latency, res.LatencyP99)
}

func TestRunErrors(t *testing.T) {
	ok := retrieve.RetrieverFunc(func(ctx context.Context, query string, k int) ([]corpus.Hit, error) {
		return nil, nil
	})
	t.Run("ContextCanceled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err := eval.Run(ctx, testSet, ok, eval.Options{})
		require.ErrorIs(t, err, context.Canceled)
	})
	t.Run("ContextCanceledDuringQuery", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		n := 0
		r := retrieve.RetrieverFunc(func(ctx context.Context, query string, k int) ([]corpus.Hit, error) {
			n++
			cancel()
			return nil, ctx.Err()
		})
		_, err := eval.Run(ctx, testSet, r, eval.Options{})
		require.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, 1, n)
	})
	t.Run("Empty", func(t *testing.T) {
		_, err := eval.Run(t.Context(), eval.TopicSet{Name: "none"}, ok, eval.Options{})
		require.ErrorIs(t, err, eval.ErrEmptyBenchmark)
	})
	t.Run("Resolve", func(t *testing.T) {
		errDB := errors.New("db closed")
		_, err := eval.Run(t.Context(), testSet, ok, eval.Options{Resolve: func([]string) (map[string]string, error) { return nil, errDB }})
		require.ErrorIs(t, err, errDB)
	})
}

func TestPercentile(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	tests := []struct {
		name string
		in   []time.Duration
		p    float64
		want time.Duration
	}{
		// nearest rank: sorted[ceil(p/100·n) - 1]
		{"p50 of 10", ms(10, 9, 8, 7, 6, 5, 4, 3, 2, 1), 50, 5 * time.Millisecond},  // ceil(5) = 5th
		{"p99 of 10", ms(10, 9, 8, 7, 6, 5, 4, 3, 2, 1), 99, 10 * time.Millisecond}, // ceil(9.9) = 10th
		{"p50 of 4", ms(4, 1, 3, 2), 50, 2 * time.Millisecond},                      // ceil(2) = 2nd
		{"p50 of 5", ms(5, 1, 4, 2, 3), 50, 3 * time.Millisecond},                   // ceil(2.5) = 3rd
		{"p99 of 100", ms(make([]int, 100)...), 99, 0},                              // all zero
		{"one", ms(7), 99, 7 * time.Millisecond},                                    // ceil(0.99) = 1st
		{"none", nil, 50, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, eval.Percentile(tc.in, tc.p))
		})
	}
	// p99 of 1..100 ms is the 99th value: ceil(99·100/100) = 99
	var v []int
	for i := 1; i <= 100; i++ {
		v = append(v, i)
	}
	assert.Equal(t, 99*time.Millisecond, eval.Percentile(ms(v...), 99))
}

// A gold paper known under two papers of the collection (CiteME's
// alternative titles) is one relevant item: the first of its papers in the
// ranking counts, the second takes its rank but is not relevant.
func TestRunGoldAlternatives(t *testing.T) {
	set := eval.TopicSet{Name: "alt", Queries: []eval.Query{
		{ID: "q1", Text: "one", Relevant: []string{"g1"}},
		{ID: "q2", Text: "two", Relevant: []string{"g1", "g2", "gone"}},
	}}
	resolveGold := func(ids []string) (map[string]eval.Match, error) {
		return map[string]eval.Match{
			"g1": {Papers: []string{"alt-a", "alt-b"}, By: eval.ByTitle},
			"g2": {Papers: []string{"p2"}, By: eval.ByArXiv},
		}, nil
	}
	r := fakeStage(map[string][]string{
		// q1: alt-b at 2, alt-a at 3 → the item at rank 2
		"one": {"x", "alt-b", "alt-a"},
		// q2: alt-a at 1, alt-b at 2 (repeat, not relevant), p2 at 3, the same
		// hit twice (dropped, takes no rank)
		"two": {"alt-a", "alt-b", "alt-b", "p2"},
	})
	res, err := eval.Run(t.Context(), set, r, eval.Options{ResolveGold: resolveGold})
	require.NoError(t, err)
	q1, q2 := res.PerQuery[0], res.PerQuery[1]
	assert.Equal(t, 1, q1.Relevant)
	assert.Equal(t, []int{2}, q1.Ranks)
	assert.InDelta(t, 0, q1.Metrics[eval.Recall1], 1e-12)
	assert.InDelta(t, 1, q1.Metrics[eval.Recall5], 1e-12, "one item, found once: recall 1, not 2")
	assert.InDelta(t, 0.5, q1.Metrics[eval.MRR10], 1e-12)
	assert.InDelta(t, 1/math.Log2(3), q1.Metrics[eval.NDCG10], 1e-12) // ideal DCG of one item = 1

	assert.Equal(t, 3, q2.Relevant)
	assert.Equal(t, 1, q2.RelevantMissing)
	assert.Equal(t, []int{1, 3}, q2.Ranks)
	assert.InDelta(t, 1.0/3, q2.Metrics[eval.Recall1], 1e-12)
	assert.InDelta(t, 2.0/3, q2.Metrics[eval.Recall5], 1e-12)
	// DCG = 1 + 1/log2(4) = 1.5; ideal over 3 items = 1 + 1/log2(3) + 1/2
	assert.InDelta(t, 1.5/(1+1/math.Log2(3)+0.5), q2.Metrics[eval.NDCG10], 1e-12)
	assert.Equal(t, 1.0, q2.Metrics[eval.Acc1])

	assert.Equal(t, 4, res.Relevant)
	assert.Equal(t, 1, res.Missing)
	assert.Equal(t, 2, res.Answerable)
	assert.InDelta(t, 0.75, res.Coverage(), 1e-12)
	assert.Equal(t, map[string]int{"title": 2, "arxiv": 1}, res.MatchedBy)

	// The recall curve agrees with the recall metrics at every cut-off.
	curve := eval.RecallCurve(res, 100)
	for k, key := range map[int]string{1: eval.Recall1, 5: eval.Recall5, 10: eval.Recall10, 100: eval.Recall100} {
		assert.InDelta(t, res.Metrics[key], curve[k-1], 1e-12, key)
	}
	assert.InDelta(t, (0+1.0/3)/2, curve[0], 1e-12)
	assert.InDelta(t, (1+1.0/3)/2, curve[1], 1e-12)
	assert.InDelta(t, (1+2.0/3)/2, curve[2], 1e-12)
}

func TestScoreRun(t *testing.T) {
	res, err := eval.ScoreRun(t.Context(), testSet, map[string][]corpus.Hit{
		"q1": hits("10.1145/a.1"),
		"q3": hits("x", "p-b"),
	}, eval.Options{Resolve: func(ids []string) (map[string]string, error) {
		return map[string]string{"10.1145/A.1": "10.1145/a.1", "alias-b": "p-b"}, nil
	}})
	require.NoError(t, err)
	assert.Equal(t, 0, res.Failed, "q2 has no line: scored 0, not failed")
	assert.InDelta(t, 0.5, res.PerQuery[0].Metrics[eval.Recall1], 1e-12)
	assert.Zero(t, res.PerQuery[1].Metrics[eval.Recall100])
	assert.Equal(t, []int{2}, res.PerQuery[2].Ranks)
}
