package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/engine"
	"github.com/citefind/citefind/rerank/learned"
	"github.com/citefind/citefind/retrieve/dense"
)

// TestTrainAndEvalLearned trains a model on a small jsonl benchmark over
// the sample corpus, checks the model file, and evaluates it as the
// "reranked" stage.
func TestTrainAndEvalLearned(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "db")
	queries := filepath.Join(dir, "queries.jsonl")
	require.NoError(t, os.WriteFile(queries, []byte(
		`{"id":"q1","text":"Dense passage retrieval [12] for open-domain question answering.","relevant":["arxiv:2004.04906"]}
{"id":"q2","text":"We merge rankings with reciprocal rank fusion [CITATION].","relevant":["10.1145/1571941.1572114"]}
{"id":"q3","text":"BM25 and probabilistic relevance [3] remain strong baselines.","relevant":["10.1561/1500000019"]}
`), 0o644))
	bench := []string{"--bench", "jsonl", "--corpus", samplePath(t), "--queries", queries, "--db", db, "--quiet"}
	model := filepath.Join(dir, "model.json")
	_, stderr, err := cli(t, "", append([]string{"train", "--retrievers", "bm25", "--out", model,
		"--trees", "5", "--min-leaf", "1"}, bench...)...)
	require.NoError(t, err, stderr)
	assert.Contains(t, stderr, "wrote "+model)
	m, err := learned.LoadModel(model)
	require.NoError(t, err)
	assert.Equal(t, []string{"bm25"}, m.Retrievers)
	assert.Equal(t, 3, m.Training.Queries)
	assert.Equal(t, "jsonl", m.Training.Bench)

	// The candidates were cached: a second run does not retrieve again.
	_, stderr, err = cli(t, "", append([]string{"train", "--retrievers", "bm25", "--out", model,
		"--trees", "5", "--min-leaf", "1"}, bench...)...)
	require.NoError(t, err, stderr)
	assert.Contains(t, stderr, "candidate dataset: 3 queries from")

	// The database's pipeline fuses bm25, rm3 and citing; the model was
	// trained on bm25's candidates alone: refused, naming both.
	_, _, err = cli(t, "", append([]string{"eval", "--rerank", "learned", "--rerank-model", model}, bench...)...)
	require.ErrorIs(t, err, learned.ErrRetrievers)
	assert.Contains(t, err.Error(), "trained on candidates of bm25, and this search fuses bm25,rm3,citing")

	out, stderr, err := cli(t, "", append([]string{"eval", "--json", "--retrievers", "bm25", "--rerank", "learned", "--rerank-model", model}, bench...)...)
	require.NoError(t, err, stderr)
	var rep []map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	require.Len(t, rep, 1, out)
	stages, ok := rep[0]["stages"].(map[string]any)
	require.True(t, ok, out)
	for _, name := range []string{"bm25", "reranked"} {
		st, ok := stages[name].(map[string]any)
		require.True(t, ok, "stage %s in %s", name, out)
		assert.EqualValues(t, 0, st["failed"], name)
	}

	// jsonl queries have no citing paper to fold by.
	_, _, err = cli(t, "", append([]string{"eval", "--rerank", "learned", "--folds", "2"}, bench...)...)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no group")
}

func TestLearnedFlagErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"folds without learned", []string{"eval", "--bench", "acm-cr", "--folds", "5"}, "--rerank learned"},
		{"model without learned", []string{"eval", "--bench", "acm-cr", "--rerank-model", "m.json"}, "--rerank learned"},
		{"folds and model", []string{"eval", "--bench", "acm-cr", "--rerank", "learned", "--folds", "5", "--rerank-model", "m.json"}, "drop --rerank-model"},
		{"one fold", []string{"eval", "--bench", "acm-cr", "--rerank", "learned", "--folds", "1"}, "at least 2"},
		{"unknown reranker", []string{"eval", "--bench", "acm-cr", "--rerank", "magic"}, "unknown reranker"},
		{"train without bench", []string{"train"}, "--bench"},
		{"train bad kind", []string{"train", "--bench", "acm-cr", "--kind", "svm"}, "--kind"},
		{"train bad retriever", []string{"train", "--bench", "acm-cr", "--retrievers", "splade"}, "unknown retriever"},
		{"train k too large", []string{"train", "--bench", "acm-cr", "-k", "5000"}, "-k 5000: a model reranks 2 to 1000"},
		{"train k too small", []string{"train", "--bench", "acm-cr", "-k", "1"}, "-k 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := cli(t, "", tc.args...)
			require.Error(t, err)
			assert.True(t, strings.Contains(err.Error(), tc.want), err.Error())
			var xe *exitError
			require.ErrorAs(t, err, &xe)
			assert.Equal(t, 2, xe.code)
		})
	}
}

// writeLibrary writes n synthetic papers as CSL JSON Lines (titles and
// abstracts on a few topics) and returns the file.
func writeLibrary(t *testing.T, dir string, n int) string {
	t.Helper()
	topics := []string{"neural ranking models", "query expansion with relevance feedback", "click models of user behaviour",
		"learning to rank with gradient boosting", "dense passage retrieval", "citation recommendation from context",
		"reciprocal rank fusion", "probabilistic relevance frameworks"}
	var b strings.Builder
	for i := range n {
		topic := topics[i%len(topics)]
		item := map[string]any{"id": fmt.Sprintf("lib%03d", i), "type": "article-journal",
			"title": fmt.Sprintf("Studies of %s: variant %d", topic, i),
			"abstract": fmt.Sprintf("We investigate %s for collection %d. The method builds on %s and extends it with new components. "+
				"Experiments on %d benchmark collections show consistent gains over strong baselines.", topic, i, topics[(i+3)%len(topics)], 2+i%5),
			"issued": map[string]any{"date-parts": [][]int{{2000 + i%24}}}}
		line, err := json.Marshal(item)
		require.NoError(t, err)
		b.Write(line)
		b.WriteByte('\n')
	}
	path := filepath.Join(dir, "library.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	return path
}

// TestTrainSelf self-trains on a library, checks that --rerank learned
// on that database then uses its model, and that a library too small to
// learn from is refused.
func TestTrainSelf(t *testing.T) {
	if testing.Short() {
		t.Skip("indexes a 240-paper library and searches 120 pseudo-queries")
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "db")
	_, stderr, err := cli(t, "", "index", "--db", db, "--quiet", writeLibrary(t, dir, 240))
	require.NoError(t, err, stderr)

	// By default the built-in model is adapted: its trees, then those
	// fitted to the pseudo-queries; written where --rerank learned finds it.
	_, stderr, err = cli(t, "", "train", "--self", "--db", db, "--quiet", "--pseudo", "120", "--trees", "5", "--min-leaf", "5")
	require.NoError(t, err, stderr)
	own := filepath.Join(db, "learned-model.json")
	assert.Contains(t, stderr, "wrote "+own)
	assert.Contains(t, stderr, "pseudo-queries: 120")
	assert.Contains(t, stderr, "5 trees added to acm-cr+beir:scifact+beir:scisummnet")
	builtin, err := learned.DefaultModel()
	require.NoError(t, err)
	m, err := learned.LoadModel(own)
	require.NoError(t, err)
	assert.Len(t, m.Trees, len(builtin.Trees)+5)
	assert.Equal(t, builtin.Trees, m.Trees[:len(builtin.Trees)])
	assert.Equal(t, "self:"+db, m.Training.Bench)
	assert.NotEmpty(t, m.Training.Base)
	out, stderr, err := cli(t, "", "query", "--db", db, "--rerank", "learned", "--json", "dense passage retrieval [3]")
	require.NoError(t, err, stderr)
	assert.Contains(t, out, `"learned"`)

	// The built-in model reranks bm25, rm3 and citing: it cannot be
	// adapted to bm25 alone.
	_, _, err = cli(t, "", "train", "--self", "--db", db, "--quiet", "--retrievers", "bm25")
	require.ErrorIs(t, err, learned.ErrRetrievers)
	var xe *exitError
	require.ErrorAs(t, err, &xe)
	assert.Equal(t, 2, xe.code)

	// From scratch, for bm25 alone.
	_, stderr, err = cli(t, "", "train", "--self", "--from", "none", "--db", db, "--quiet", "--pseudo", "120", "--trees", "5",
		"--min-leaf", "5", "--retrievers", "bm25")
	require.NoError(t, err, stderr)
	assert.Contains(t, stderr, "trained from scratch")
	m, err = learned.LoadModel(own)
	require.NoError(t, err)
	assert.Equal(t, []string{"bm25"}, m.Retrievers)
	assert.Len(t, m.Trees, 5)

	// The database's pipeline (240 papers: the contrast embedder is
	// trained, so bm25, citing and dense) is not the model's: the model of
	// bm25 alone is refused, naming both; with bm25 alone it reranks.
	_, _, err = cli(t, "", "query", "--db", db, "--rerank", "learned", "dense passage retrieval [3]")
	require.ErrorIs(t, err, learned.ErrRetrievers)
	assert.Contains(t, err.Error(), "trained on candidates of bm25, and this search fuses bm25,citing,dense")
	out, stderr, err = cli(t, "", "query", "--db", db, "--rerank", "learned", "--retrievers", "bm25", "--json", "dense passage retrieval [3]")
	require.NoError(t, err, stderr)
	assert.Contains(t, out, `"learned"`)

	t.Run("TooSmall", func(t *testing.T) {
		small := filepath.Join(t.TempDir(), "db")
		_, stderr, err := cli(t, "", "index", "--db", small, "--quiet", samplePath(t))
		require.NoError(t, err, stderr)
		_, _, err = cli(t, "", "train", "--self", "--db", small, "--quiet")
		require.Error(t, err)
		var xe *exitError
		require.ErrorAs(t, err, &xe)
		assert.Equal(t, 1, xe.code)
		assert.Contains(t, err.Error(), "too small to learn from")
		assert.Contains(t, err.Error(), "30 papers")
		assert.NoFileExists(t, filepath.Join(small, "learned-model.json"))
	})
}

// TestTrainSeveralBenchmarks trains on two collections (each --bench with
// its own --corpus, --queries and --db), scores an --eval-bench, and runs
// leave-one-collection-out.
func TestTrainSeveralBenchmarks(t *testing.T) {
	if testing.Short() {
		t.Skip("indexes two collections")
	}
	dir := t.TempDir()
	lib := writeLibrary(t, dir, 40)
	queries := func(name string, ids ...int) string {
		var b strings.Builder
		for _, i := range ids {
			fmt.Fprintf(&b, `{"id":"%s%d","text":"Variant %d of this line of work [4] extends the idea.","relevant":["lib%03d"]}`+"\n", name, i, i, i)
		}
		p := filepath.Join(dir, name+".jsonl")
		require.NoError(t, os.WriteFile(p, []byte(b.String()), 0o644))
		return p
	}
	a, b, c := queries("a", 1, 2, 3, 4, 5, 6), queries("b", 7, 8, 9, 10, 11), queries("c", 12, 13, 14)
	model := filepath.Join(dir, "m.json")
	common := []string{"--retrievers", "bm25", "--trees", "5", "--min-leaf", "1", "--quiet"}
	args := append([]string{"train", "--out", model,
		"--bench", "jsonl", "--corpus", lib, "--queries", a, "--db", filepath.Join(dir, "db1"),
		"--bench", "jsonl", "--corpus", lib, "--queries", b, "--db", filepath.Join(dir, "db2"),
		"--eval-bench", "jsonl", "--corpus", lib, "--queries", c, "--db", filepath.Join(dir, "db2")}, common...)
	out, stderr, err := cli(t, "", args...)
	require.NoError(t, err, stderr)
	m, err := learned.LoadModel(model)
	require.NoError(t, err)
	assert.Equal(t, 11, m.Training.Queries, "both training benchmarks, not the --eval-bench")
	assert.Equal(t, "jsonl+jsonl", m.Training.Bench)
	assert.Contains(t, out, "| m.json | jsonl:c | 3 |")

	out, stderr, err = cli(t, "", append([]string{"train", "--loco", "--folds", "3", "--loco-out", filepath.Join(dir, "loco")}, args[3:]...)...)
	require.NoError(t, err, stderr)
	assert.Contains(t, out, "Leave-one-collection-out")
	assert.Contains(t, out, "| without jsonl | jsonl:a | 6 |")
	assert.Contains(t, out, "| without jsonl | jsonl:c | 3 |")
	assert.Contains(t, out, "rule (none below −.005, mean above 0)")
	assert.FileExists(t, filepath.Join(dir, "loco", "loco-without-jsonl.json"))
	// --folds: the collection measured on its own training queries (db1)
	// is cross-validated within; db2 has an --eval-bench of its own.
	assert.Contains(t, out, "cross-validated within each collection")
	assert.Contains(t, out, "| all, 3-fold CV within jsonl | jsonl:a | 6 |")
	assert.NotContains(t, out, "CV within jsonl | jsonl:c")
}

func TestTrainFlagErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"data twice for a bench", []string{"train", "--bench", "acm-cr", "--data", "x", "--data", "y"}, "given twice"},
		{"only eval benches", []string{"train", "--eval-bench", "acm-cr"}, "--bench is required"},
		{"self with bench", []string{"train", "--self", "--bench", "acm-cr"}, "without --bench"},
		{"loco-out without loco", []string{"train", "--bench", "acm-cr", "--loco-out", "d"}, "needs --loco"},
		{"folds without loco", []string{"train", "--bench", "acm-cr", "--folds", "5"}, "--folds needs --loco"},
		{"one fold", []string{"train", "--bench", "acm-cr", "--loco", "--folds", "1"}, "2 or more"},
		{"cache with two benches", []string{"train", "--bench", "acm-cr", "--bench", "acm-cr:contexts", "--cache", "f"}, "single --bench"},
		{"unknown feature", []string{"train", "--bench", "acm-cr", "--drop-features", "nosuch"}, "no feature name"},
		{"bad sample", []string{"train", "--bench", "beir", "--sample", "x"}, "not a number"},
		{"sample of acm-cr", []string{"train", "--bench", "acm-cr", "--sample", "5"}, "apply to a --bench beir"},
		{"bad pseudo", []string{"train", "--self", "--pseudo", "0"}, "--pseudo"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := cli(t, "", tc.args...)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			var xe *exitError
			require.ErrorAs(t, err, &xe)
			assert.Equal(t, 2, xe.code)
		})
	}
}

// TestDenseSettings checks that the settings a candidate dataset is cached
// under name the dense retriever's model and query form when the search
// has it, so that a retrained embedder (which `index --force` does without
// changing the store) gives another dataset.
func TestDenseSettings(t *testing.T) {
	db := t.TempDir()
	_, _, err := cli(t, "", "index", "--db", db, "--quiet", "--embedder", "contrast", syntheticPapers(t, 120))
	require.NoError(t, err)
	eng, err := engine.Open(t.Context(), db, engine.Options{})
	require.NoError(t, err)
	defer eng.Close()
	model, err := eng.DenseModel(t.Context())
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(model, "contrast-768@"), model)
	assert.Equal(t, " dense="+model+" dense_query="+dense.QueryForm, denseSettings(t.Context(), eng, []string{"bm25", "dense"}))
	assert.Empty(t, denseSettings(t.Context(), eng, []string{"bm25", "citing"}))
}
