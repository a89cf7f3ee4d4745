package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind"
	"github.com/citefind/citefind/build"
	"github.com/citefind/citefind/engine"
	"github.com/citefind/citefind/eval"
	"github.com/citefind/citefind/internal/datadir"
)

// acmcrLevels are the recall@10 / nDCG@10 levels measured on 2026-11-22
// (docs/benchmarks.md): BM25 alone with the shipped settings, and the
// default pipeline of a database without embedder (bm25 + rm3 + citing,
// min-max fusion, db.BuiltinPipeline). The regression test allows 0.01 below.
var acmcrLevels = map[string]map[string]struct{ recall10, ndcg10 float64 }{
	"bm25": {
		eval.SetContexts:  {recall10: 0.4176, ndcg10: 0.3585},
		eval.SetSentences: {recall10: 0.4232, ndcg10: 0.3365},
	},
	"default": {
		eval.SetContexts:  {recall10: 0.4332, ndcg10: 0.3698},
		eval.SetSentences: {recall10: 0.4248, ndcg10: 0.3381},
	},
}

// TestACMCRRegression builds the ACM-CR benchmark database from the raw
// files with the shipped defaults (build.Ensure, as eval does) and checks
// that recall@10 and nDCG@10 of BM25 alone and of the database's pipeline
// (what query and eval answer without flags) stay within 0.01 of the
// measured levels.
func TestACMCRRegression(t *testing.T) {
	dir := datadir.Bench("acm-cr")
	if _, err := os.Stat(filepath.Join(dir, "data", "acm-dl")); err != nil {
		t.Skipf("ACM-CR data not found at %s (set %s): %v", dir, datadir.Env, err)
	}
	if testing.Short() {
		t.Skip("builds a 108,857-paper index; skipped with -short")
	}
	ctx := t.Context()
	a, err := eval.LoadACMCR(dir)
	require.NoError(t, err)
	db := t.TempDir()
	rep, err := build.Ensure(ctx, db, build.EnsureOptions{Files: a.BibFiles, Keep: a.Keep, Collection: "acm-cr"})
	require.NoError(t, err)
	sum := rep.Ingest
	assert.Empty(t, sum.Errors, "the ACM-CR files read without errors")
	// 108,857 documents after the upstream rules; the store holds fewer
	// because it merges the records it recognises as one paper.
	t.Logf("ingest: %d records read, %d papers stored, %d merged, filtered %v, %s", sum.Read, rep.Papers, sum.Merged, sum.Filtered, sum.Duration)

	for _, pipeline := range []string{"bm25", "default"} {
		var opts engine.Options
		if pipeline == "bm25" {
			opts.Retrievers = []string{citefind.RetrieverBM25}
		}
		eng, err := engine.Open(ctx, db, opts)
		require.NoError(t, err)
		judge := eval.NewJudge(eng.Store())
		for _, set := range a.Sets {
			o, err := judge.Options(ctx, set, eval.Options{K: 100})
			require.NoError(t, err)
			stages := eval.PipelineStages(eng.Pipeline().Retrievers, false, false)
			rs, err := eval.RunPipeline(ctx, set, stages, func(ctx context.Context, text string, k int) (*citefind.Result, error) {
				return eng.Search(ctx, text, citefind.QueryOptions{K: k})
			}, nil, o)
			require.NoError(t, err)
			res := rs[len(rs)-1]
			want := acmcrLevels[pipeline][set.Name]
			t.Logf("%s %s: recall@10 %.4f ndcg@10 %.4f recall@100 %.4f mrr@10 %.4f p50 %s p99 %s", pipeline,
				set.Name, res.Metrics["recall@10"], res.Metrics["ndcg@10"], res.Metrics["recall@100"], res.Metrics["mrr@10"], res.LatencyP50, res.LatencyP99)
			assert.GreaterOrEqual(t, res.Metrics["recall@10"], want.recall10-0.01, pipeline+" "+set.Name+" recall@10")
			assert.GreaterOrEqual(t, res.Metrics["ndcg@10"], want.ndcg10-0.01, pipeline+" "+set.Name+" ndcg@10")
			assert.Zero(t, res.Failed)
		}
		require.NoError(t, eng.Close())
	}
}
