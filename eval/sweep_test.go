package eval_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/eval"
)

func sweepResult(set string, vals map[string]float64) *eval.Result {
	r := &eval.Result{Set: set}
	var per []eval.Metrics
	for _, id := range []string{"a1", "a2", "b1", "b2"} {
		m := eval.Metrics{eval.Recall10: vals[id], eval.Recall100: vals[id] + 0.1, eval.NDCG10: vals[id]}
		r.PerQuery = append(r.PerQuery, eval.QueryResult{ID: id, Metrics: m})
		per = append(per, m)
	}
	r.Metrics = eval.Mean(per)
	return r
}

func TestWeightGridAndChoice(t *testing.T) {
	grid := eval.WeightGrid([]string{"bm25", "dense"}, []float64{0, 0.5})
	require.Equal(t, []map[string]float64{{"bm25": 1, "dense": 0}, {"bm25": 1, "dense": 0.5}}, grid)
	assert.Len(t, eval.WeightGrid([]string{"a", "b", "c"}, []float64{0, 1, 2}), 9)

	set := eval.TopicSet{Name: "s", Queries: []eval.Query{
		{ID: "a1", Group: "A"}, {ID: "a2", Group: "A"}, {ID: "b1", Group: "B"}, {ID: "b2", Group: "B"},
	}}
	base := sweepResult("s", map[string]float64{"a1": 0.5, "a2": 0.5, "b1": 0.5, "b2": 0.5})
	// grid[1] helps group A a lot and hurts group B a little: chosen on
	// all queries, but on B's fold (trained on A) and A's fold (trained
	// on B) the choices differ.
	better := sweepResult("s", map[string]float64{"a1": 0.9, "a2": 0.9, "b1": 0.45, "b2": 0.45})
	sweeps := map[string][]*eval.Result{"s": {base, better}}
	baseline := map[string]*eval.Result{"s": base}
	ch := eval.ChooseWeights(grid, sweeps, baseline, "bm25")
	assert.True(t, ch.OK)
	assert.Equal(t, grid[1], ch.Weights)
	assert.InDelta(t, 0.175, ch.Delta["s"][eval.Recall10], 1e-9)

	folds := eval.FoldOf([]eval.TopicSet{set}, 2)
	assert.Equal(t, map[string]int{"A": 0, "B": 1}, folds)
	cv, err := eval.CrossValidateChoice(grid, sweeps, baseline, "bm25", []eval.TopicSet{set}, 2)
	require.NoError(t, err)
	// Fold A held out: trained on B, where grid[1] loses -> bm25 alone,
	// so A's queries score 0.5. Fold B held out: trained on A -> grid[1],
	// so B's queries score 0.45.
	assert.Equal(t, []map[string]float64{{"bm25": 1, "dense": 0}, {"bm25": 1, "dense": 0.5}}, cv.Chosen)
	assert.InDelta(t, 0.475, cv.Metrics["s"][eval.Recall10], 1e-9)
	assert.InDelta(t, 0.5, cv.Baseline["s"][eval.Recall10], 1e-9)

	_, err = eval.CrossValidateChoice(grid, sweeps, baseline, "bm25", []eval.TopicSet{set}, 1)
	assert.Error(t, err)
	// Nothing qualifies: the baseline alone.
	worse := sweepResult("s", map[string]float64{"a1": 0.4, "a2": 0.4, "b1": 0.4, "b2": 0.4})
	ch = eval.ChooseWeights(grid, map[string][]*eval.Result{"s": {worse, worse}}, baseline, "bm25")
	assert.False(t, ch.OK)
	assert.Equal(t, map[string]float64{"bm25": 1, "dense": 0}, ch.Weights)
}
