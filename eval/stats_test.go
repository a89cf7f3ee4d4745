package eval_test

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/eval"
	"github.com/citefind/citefind/retrieve"
)

// Known examples, counted by hand over all 2^n sign assignments.
func TestExactRandomizationTest(t *testing.T) {
	tests := []struct {
		name string
		d    []float64
		want float64
	}{
		// ±1 ±2 ±3: sums 6, 4, 2, 0, 0, −2, −4, −6; |sum| ≥ 6 twice → 2/8
		{"1 2 3", []float64{1, 2, 3}, 0.25},
		// sum 0.8; only flipping −0.05 keeps |sum| ≥ 0.8 (0.9), and the
		// mirror images: 4 of 32
		{"five", []float64{0.2, 0.1, -0.05, 0.3, 0.25}, 0.125},
		// all equal and positive: only all-plus and all-minus reach n·x → 2/2^n
		{"ten equal", []float64{0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5}, 2.0 / 1024},
		{"no difference", []float64{0, 0, 0}, 1},
		// a zero difference doubles every assignment: same p as without it
		{"with a zero", []float64{1, 2, 3, 0}, 0.25},
		{"no pair", nil, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := eval.ExactRandomizationTest(tc.d)
			require.NoError(t, err)
			assert.InDelta(t, tc.want, p, 1e-12)
		})
	}
	_, err := eval.ExactRandomizationTest(make([]float64, eval.MaxExact+1))
	require.Error(t, err)
}

// The Monte-Carlo test agrees with exact enumeration: with 10,000 sign
// flips the standard error of p is at most 0.005, so 0.02 is 4 SE.
func TestRandomizationTestMatchesExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	cases := [][]float64{
		{1, 2, 3},
		{0.2, 0.1, -0.05, 0.3, 0.25},
	}
	for range 6 { // 12 pairs of per-query metric differences in [-1, 1]
		d := make([]float64, 12)
		for i := range d {
			d[i] = math.Round((rng.Float64()*1.6-0.5)*100) / 100
		}
		cases = append(cases, d)
	}
	for _, d := range cases {
		exact, err := eval.ExactRandomizationTest(d)
		require.NoError(t, err)
		mc := eval.RandomizationTest(d, 10000, eval.DefaultSeed)
		assert.InDelta(t, exact, mc, 0.02, "d=%v", d)
		assert.Equal(t, mc, eval.RandomizationTest(d, 10000, eval.DefaultSeed), "deterministic for a seed")
	}
	assert.Equal(t, 1.0, eval.RandomizationTest([]float64{0, 0}, 100, 1))
	// never 0: (hits + 1) / (n + 1)
	p := eval.RandomizationTest([]float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 1000, 1)
	assert.InDelta(t, 1.0/1001, p, 1e-12)
}

func TestBootstrapCI(t *testing.T) {
	lo, hi := eval.BootstrapCI([]float64{0.25, 0.25, 0.25}, 1000, 0.95, 1)
	assert.Equal(t, 0.25, lo)
	assert.Equal(t, 0.25, hi)

	// 0/1 differences with mean 0.5 over 100 queries: the interval of the
	// mean is about 0.5 ± 1.96·0.05 = [0.40, 0.60].
	d := make([]float64, 100)
	for i := range 50 {
		d[i] = 1
	}
	lo, hi = eval.BootstrapCI(d, 10000, 0.95, 1)
	assert.InDelta(t, 0.40, lo, 0.02)
	assert.InDelta(t, 0.60, hi, 0.02)
	lo2, hi2 := eval.BootstrapCI(d, 10000, 0.95, 1)
	assert.Equal(t, [2]float64{lo, hi}, [2]float64{lo2, hi2}, "deterministic for a seed")
	lo3, hi3 := eval.BootstrapCI(d, 10000, 0.5, 1)
	assert.Greater(t, lo3, lo)
	assert.Less(t, hi3, hi)

	lo, hi = eval.BootstrapCI(nil, 10, 0.95, 1)
	assert.Zero(t, lo)
	assert.Zero(t, hi)
}

// fakeStage ranks a fixed list per query text.
func fakeStage(ranked map[string][]string) retrieve.Retriever {
	return retrieve.RetrieverFunc(func(ctx context.Context, q string, k int) ([]corpus.Hit, error) {
		return hits(ranked[q]...), nil
	})
}

// TestCompareStages runs two fake stages over one topic set and compares
// them; the numbers are checked by hand.
func TestCompareStages(t *testing.T) {
	set := eval.TopicSet{Name: "s", Queries: []eval.Query{
		{ID: "q1", Text: "a", Relevant: []string{"p1"}},
		{ID: "q2", Text: "b", Relevant: []string{"p2"}},
		{ID: "q3", Text: "c", Relevant: []string{"p3"}},
		{ID: "q4", Text: "d", Relevant: []string{"p4"}},
	}}
	// base: relevant at ranks 2, 1, none, 1; better: 1, 1, 1, 2.
	base := fakeStage(map[string][]string{"a": {"x", "p1"}, "b": {"p2"}, "c": {"x"}, "d": {"p4"}})
	better := fakeStage(map[string][]string{"a": {"p1"}, "b": {"p2"}, "c": {"p3"}, "d": {"x", "p4"}})
	res, err := eval.RunStages(t.Context(), set, []eval.Stage{{Name: "base", Retriever: base}, {Name: "better", Retriever: better}}, eval.Options{Bench: "t"})
	require.NoError(t, err)
	require.Len(t, res, 2)
	assert.Equal(t, "base", res[0].Stage)
	assert.Equal(t, "better", res[1].Stage)

	cs, err := eval.CompareResults(res[0], res[1], "base", "better", []string{eval.MRR10, eval.Acc1}, eval.StatOptions{})
	require.NoError(t, err)
	require.Len(t, cs, 2)
	mrr := cs[0]
	// MRR: base (0.5 + 1 + 0 + 1)/4 = 0.625, better (1 + 1 + 1 + 0.5)/4 = 0.875
	assert.InDelta(t, 0.625, mrr.MeanA, 1e-12)
	assert.InDelta(t, 0.875, mrr.MeanB, 1e-12)
	assert.InDelta(t, 0.25, mrr.Diff, 1e-12)
	assert.Equal(t, [3]int{2, 1, 1}, [3]int{mrr.Wins, mrr.Ties, mrr.Losses})
	// differences 0.5, 0, 1, −0.5; sum 1. Exact: of the 8 sign patterns of
	// (0.5, 1, 0.5), |sum| ≥ 1 for ±(0.5+1−0.5), ±(0.5+1+0.5), ±(−0.5+1+0.5) → 6/8
	exact, err := eval.ExactRandomizationTest([]float64{0.5, 0, 1, -0.5})
	require.NoError(t, err)
	assert.InDelta(t, 0.75, exact, 1e-12)
	assert.InDelta(t, exact, mrr.P, 0.02)
	assert.LessOrEqual(t, mrr.CILow, mrr.Diff)
	assert.GreaterOrEqual(t, mrr.CIHigh, mrr.Diff)
	assert.Equal(t, 4, mrr.N)

	// A run of other queries shares nothing.
	other := &eval.Result{PerQuery: []eval.QueryResult{{ID: "z"}}}
	_, err = eval.CompareResults(res[0], other, "a", "b", nil, eval.StatOptions{})
	require.ErrorIs(t, err, eval.ErrNoPairs)

	// The report of one run with two stages compares them.
	var b bytes.Buffer
	require.NoError(t, eval.WriteReport(&b, []*eval.RunFile{{Label: "x", Results: res}}, eval.ReportOptions{}))
	out := b.String()
	assert.Contains(t, out, "**base** (A) against **better** (B), 4 paired queries")
	assert.Contains(t, out, "| mrr@10 | 0.6250 | 0.8750 | +0.2500 |")
	assert.Contains(t, out, "paired randomisation test")
	assert.Contains(t, out, "percentile bootstrap")
	assert.True(t, strings.Index(out, "## t:s") < strings.Index(out, "## Method"))
}
