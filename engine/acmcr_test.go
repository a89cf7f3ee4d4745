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
	"github.com/citefind/citefind/rerank"
)

// acmcrLevels are the recall@10 / nDCG@10 levels, by pipeline and stage,
// the regression test holds to within 0.01: BM25 alone with the shipped
// settings (measured 2026-11-22, docs/benchmarks.md), and the pipeline a
// new database gets (the contrast embedder trained on its papers, so
// db.BuiltinPipeline of contrast: bm25, citing and dense fused by min-max,
// then the learned reranker), its fused and its final (reranked) stage:
// what query and eval answer without flags. Measured by this test on
// 2026-11-29; the contrast embedder gives the same model for the same
// papers on any number of cores (contrast.Options.Workers).
var acmcrLevels = map[string]map[string]map[string]struct{ recall10, ndcg10 float64 }{
	"bm25": {
		eval.SetContexts:  {citefind.RetrieverBM25: {recall10: 0.4176, ndcg10: 0.3585}},
		eval.SetSentences: {citefind.RetrieverBM25: {recall10: 0.4232, ndcg10: 0.3365}},
	},
	"default": {
		eval.SetContexts: {
			eval.StageFused:    {recall10: 0.4471, ndcg10: 0.3744},
			eval.StageReranked: {recall10: 0.4805, ndcg10: 0.4159},
		},
		eval.SetSentences: {
			eval.StageFused:    {recall10: 0.4469, ndcg10: 0.3557},
			eval.StageReranked: {recall10: 0.4707, ndcg10: 0.3808},
		},
	},
}

// TestACMCRRegression builds the ACM-CR benchmark database from the raw
// files with the shipped defaults (build.Ensure, as eval does) and checks
// that recall@10 and nDCG@10 of BM25 alone and of the database's pipeline
// (its fused and reranked stages) stay within 0.01 of the measured levels.
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
			opts.Retrievers, opts.Rerank = []string{citefind.RetrieverBM25}, rerank.NameNone
		}
		eng, err := engine.Open(ctx, db, opts)
		require.NoError(t, err)
		judge := eval.NewJudge(eng.Store())
		for _, set := range a.Sets {
			o, err := judge.Options(ctx, set, eval.Options{K: 100})
			require.NoError(t, err)
			p := eng.Pipeline()
			stages := eval.PipelineStages(p.Retrievers, p.Rerank != "" && p.Rerank != rerank.NameNone, false)
			rs, err := eval.RunPipeline(ctx, set, stages, func(ctx context.Context, text string, k int) (*citefind.Result, error) {
				return eng.Search(ctx, text, citefind.QueryOptions{K: k})
			}, nil, o)
			require.NoError(t, err)
			levels := acmcrLevels[pipeline][set.Name]
			checked := 0
			for _, res := range rs {
				t.Logf("%s %s %s: recall@10 %.4f ndcg@10 %.4f recall@100 %.4f mrr@10 %.4f p50 %s p99 %s", pipeline, set.Name, res.Stage,
					res.Metrics["recall@10"], res.Metrics["ndcg@10"], res.Metrics["recall@100"], res.Metrics["mrr@10"], res.LatencyP50, res.LatencyP99)
				want, ok := levels[res.Stage]
				if !ok {
					continue
				}
				checked++
				name := pipeline + " " + set.Name + " " + res.Stage
				assert.GreaterOrEqual(t, res.Metrics["recall@10"], want.recall10-0.01, name+" recall@10")
				assert.GreaterOrEqual(t, res.Metrics["ndcg@10"], want.ndcg10-0.01, name+" ndcg@10")
			}
			assert.Equal(t, len(levels), checked, "%s %s: stages %v, levels for %v", pipeline, set.Name, stages, levels)
			res := rs[len(rs)-1]
			assert.Zero(t, res.Failed)
		}
		require.NoError(t, eng.Close())
	}
}
