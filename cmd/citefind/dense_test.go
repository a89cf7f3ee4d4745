package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind"
)

type jsonResult struct {
	Hits []struct {
		ID      string  `json:"id"`
		Rank    int     `json:"rank"`
		Score   float64 `json:"score"`
		Sources map[string]struct {
			Rank  int     `json:"rank"`
			Score float64 `json:"score"`
		} `json:"sources"`
	} `json:"hits"`
	Warnings []string `json:"warnings"`
}

func queryJSON(t *testing.T, args ...string) jsonResult {
	t.Helper()
	out, _, err := cli(t, "", append([]string{"query", "--json"}, args...)...)
	require.NoError(t, err)
	var res jsonResult
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	return res
}

func TestDenseIndexAndFusionDefaults(t *testing.T) {
	const q = "Dense passage retrieval [12] for open-domain question answering."
	plain, withDense := t.TempDir(), t.TempDir()
	_, _, err := cli(t, "", "index", "--db", plain, "--quiet", samplePath(t))
	require.NoError(t, err)
	out, _, err := cli(t, "", "index", "--db", withDense, "--quiet", "--embedder", "builtin", samplePath(t))
	require.NoError(t, err)
	assert.Contains(t, out, "dense index:       rebuilt (no index yet) with builtin, 30 papers")
	assert.FileExists(t, filepath.Join(withDense, citefind.LSAModelFile))
	assert.FileExists(t, filepath.Join(withDense, citefind.EmbeddingCacheFile))

	// Without --embedder, the recorded embedder is kept and up to date.
	out, _, err = cli(t, "", "index", "--db", withDense, "--quiet")
	require.NoError(t, err)
	assert.Contains(t, out, "dense index:       up to date (builtin)")

	// Each database's default pipeline comes from its fusion defaults,
	// which index wrote for its embedder.
	for _, h := range queryJSON(t, "--db", plain, q).Hits {
		for name := range h.Sources {
			assert.Contains(t, []string{"bm25", "rm3", "citing"}, name)
		}
	}
	sawDense := false
	for _, h := range queryJSON(t, "--db", withDense, q).Hits {
		_, ok := h.Sources["dense"]
		sawDense = sawDense || ok
	}
	assert.True(t, sawDense, "the builtin database's default includes the dense retriever")
	a, _, err := cli(t, "", "query", "--db", plain, "--json", "-k", "5", q)
	require.NoError(t, err)
	b, _, err := cli(t, "", "query", "--db", withDense, "--json", "-k", "5", "--retrievers", "bm25,rm3,citing", q)
	require.NoError(t, err)
	assert.Equal(t, a, b, "same retrievers, same weights: same answer")

	// Hybrid: both sources, the fused score.
	res := queryJSON(t, "--db", withDense, "-k", "5", "--retrievers", "bm25,dense", q)
	require.NotEmpty(t, res.Hits)
	assert.Empty(t, res.Warnings)
	assert.Equal(t, "arxiv:2004.04906", res.Hits[0].ID)
	require.Contains(t, res.Hits[0].Sources, "bm25")
	require.Contains(t, res.Hits[0].Sources, "dense")
	assert.InDelta(t, 1.05, res.Hits[0].Score, 1e-9, "min-max fusion: top of both lists, weights 1 and the database's 0.05")
	dres := queryJSON(t, "--db", withDense, "-k", "5", "--retrievers", "dense", q)
	require.NotEmpty(t, dres.Hits)
	assert.Contains(t, dres.Hits[0].Sources, "dense")
	rres := queryJSON(t, "--db", withDense, "-k", "5", "--retrievers", "bm25,dense", "--fusion", "rrf", "--weights", "bm25=1,dense=1", q)
	assert.InDelta(t, 2.0/61, rres.Hits[0].Score, 1e-9)

	// status knows the dense index.
	out, _, err = cli(t, "", "status", "--db", withDense)
	require.NoError(t, err)
	assert.Contains(t, out, "dense:  30 papers")
	assert.Contains(t, out, "in agreement")

	// A dense side that cannot load: a warning, BM25 still answers;
	// --strict makes it an error.
	require.NoError(t, os.WriteFile(filepath.Join(withDense, citefind.LSAModelFile), []byte("garbage"), 0o644))
	res = queryJSON(t, "--db", withDense, "-k", "5", "--retrievers", "bm25,dense", q)
	require.NotEmpty(t, res.Hits)
	assert.Equal(t, "arxiv:2004.04906", res.Hits[0].ID)
	require.Len(t, res.Warnings, 1)
	assert.Contains(t, res.Warnings[0], "retriever dense")
	_, _, err = cli(t, "", "query", "--db", withDense, "--json", "--strict", "--retrievers", "bm25,dense", q)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "dense")
	// Without the dense retriever the answer is unchanged.
	out, _, err = cli(t, "", "query", "--db", withDense, "--json", "-k", "5", "--retrievers", "bm25,rm3,citing", q)
	require.NoError(t, err)
	assert.Equal(t, a, out)

	// --embedder none removes the dense side.
	out, _, err = cli(t, "", "index", "--db", withDense, "--quiet", "--embedder", "none")
	require.NoError(t, err)
	assert.Contains(t, out, "dense index:       removed")
	assert.NoDirExists(t, filepath.Join(withDense, citefind.DenseDir))
	cfg, err := citefind.ReadFusionConfig(withDense)
	require.NoError(t, err)
	assert.Equal(t, citefind.BuiltinFusion(citefind.EmbedderNone), *cfg, "the fusion defaults follow the embedder")
	_, _, err = cli(t, "", "status", "--db", withDense)
	require.NoError(t, err)
}

func TestDenseUsageErrors(t *testing.T) {
	db := t.TempDir()
	_, _, err := cli(t, "", "index", "--db", db, "--quiet", samplePath(t))
	require.NoError(t, err)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"bad embedder", []string{"index", "--db", db, "--embedder", "word2vec"}, "unknown embedder"},
		{"bad fusion", []string{"query", "--db", db, "--fusion", "sum", "x"}, "--fusion"},
		{"bad weights", []string{"query", "--db", db, "--weights", "bm25=-1", "x"}, "--weights"},
		{"bad retriever", []string{"query", "--db", db, "--retrievers", "splade", "x"}, "unknown retriever"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := cli(t, "", tc.args...)
			require.Error(t, err)
			assert.True(t, strings.Contains(err.Error(), tc.want), err.Error())
		})
	}
	// No dense index: a warning, or an error with --strict.
	res := queryJSON(t, "--db", db, "--retrievers", "bm25,dense", "dense retrieval")
	require.Len(t, res.Warnings, 1)
	assert.Contains(t, res.Warnings[0], "--embedder builtin")
	_, _, err = cli(t, "", "query", "--db", db, "--strict", "--retrievers", "bm25,dense", "dense retrieval")
	require.Error(t, err)
}

func TestEvalDenseStages(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "db")
	queries := filepath.Join(dir, "queries.jsonl")
	require.NoError(t, os.WriteFile(queries, []byte(
		`{"id":"q1","text":"Dense passage retrieval [12] for open-domain question answering.","relevant":["arxiv:2004.04906"]}
{"id":"q2","text":"We merge rankings with reciprocal rank fusion [CITATION].","relevant":["10.1145/1571941.1572114"]}
`), 0o644))
	args := []string{"eval", "--bench", "jsonl", "--corpus", samplePath(t), "--queries", queries, "--db", db, "--quiet", "--json"}
	_, _, err := cli(t, "", args...)
	require.NoError(t, err)
	// No dense index yet: asking for it is an error.
	_, _, err = cli(t, "", append(args, "--retrievers", "bm25,dense")...)
	require.Error(t, err)
	_, _, err = cli(t, "", "index", "--db", db, "--quiet", "--embedder", "builtin")
	require.NoError(t, err)
	out, _, err := cli(t, "", "eval", "--bench", "jsonl", "--corpus", samplePath(t), "--queries", queries,
		"--db", db, "--quiet", "--json", "--retrievers", "bm25,dense")
	require.NoError(t, err)
	var rep []map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	require.Len(t, rep, 1, out)
	stages, ok := rep[0]["stages"].(map[string]any)
	require.True(t, ok, out)
	for _, name := range []string{"bm25", "dense", "fused"} {
		st, ok := stages[name].(map[string]any)
		require.True(t, ok, "stage %s in %s", name, out)
		assert.EqualValues(t, 0, st["failed"], name)
	}
}
