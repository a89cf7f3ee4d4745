package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/rerank/learned"
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

	out, stderr, err := cli(t, "", append([]string{"eval", "--json", "--rerank", "learned", "--rerank-model", model}, bench...)...)
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
