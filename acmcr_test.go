package citefind_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind"
	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/eval"
	"github.com/citefind/citefind/internal/datadir"
)

// acmcrLevels are the recall@10 / nDCG@10 levels measured on 2026-11-22
// (docs/benchmarks.md): BM25 alone with the shipped settings, and the
// default pipeline of a database without embedder (bm25 + rm3 + citing,
// min-max fusion, BuiltinFusion). The regression test allows 0.01 below.
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
// files with the shipped defaults and checks that recall@10 and nDCG@10 stay
// within 0.01 of the measured levels.
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
	st, err := corpus.OpenStore(ctx, filepath.Join(db, citefind.StoreFile))
	require.NoError(t, err)
	sum, err := citefind.Ingest(ctx, st, a.BibFiles, citefind.IngestOptions{Keep: a.Keep})
	require.NoError(t, err)
	assert.Empty(t, sum.Errors, "the ACM-CR files read without errors")
	n, err := st.Count(ctx)
	require.NoError(t, err)
	// 108,857 documents after the upstream rules; the store holds fewer
	// because it merges the records it recognises as one paper.
	t.Logf("ingest: %d records read, %d papers stored, %d merged, filtered %v, %s", sum.Read, n, sum.Merged, sum.Filtered, sum.Duration)
	_, err = citefind.BuildIndexes(ctx, db, st, citefind.BuildOptions{})
	require.NoError(t, err)

	for _, pipeline := range []string{"bm25", "default"} {
		if pipeline == "default" {
			_, err := citefind.EnsureFusionDefaults(ctx, db, st)
			require.NoError(t, err)
		}
		eng, err := citefind.Open(ctx, db, citefind.EngineOptions{})
		require.NoError(t, err)
		for _, set := range a.Sets {
			res, err := eval.Run(ctx, set, eng, eval.Options{K: 100, Resolve: func(ids []string) (map[string]string, error) {
				return eng.Store().Resolve(ctx, ids)
			}})
			require.NoError(t, err)
			want := acmcrLevels[pipeline][set.Name]
			t.Logf("%s %s: recall@10 %.4f ndcg@10 %.4f recall@100 %.4f mrr@10 %.4f p50 %s p99 %s", pipeline,
				set.Name, res.Metrics["recall@10"], res.Metrics["ndcg@10"], res.Metrics["recall@100"], res.Metrics["mrr@10"], res.LatencyP50, res.LatencyP99)
			assert.GreaterOrEqual(t, res.Metrics["recall@10"], want.recall10-0.01, pipeline+" "+set.Name+" recall@10")
			assert.GreaterOrEqual(t, res.Metrics["ndcg@10"], want.ndcg10-0.01, pipeline+" "+set.Name+" ndcg@10")
			assert.Zero(t, res.Failed)
		}
		require.NoError(t, eng.Close())
	}
	require.NoError(t, st.Close())
}
