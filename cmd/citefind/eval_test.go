package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func nativeFixture(t *testing.T, name string) string {
	p, err := filepath.Abs(filepath.Join("..", "..", "eval", "testdata", "native", name))
	require.NoError(t, err)
	return p
}

type evalReport []struct {
	Bench    string             `json:"bench"`
	Queries  int                `json:"queries"`
	Metrics  map[string]float64 `json:"metrics"`
	Coverage struct {
		Relevant  int            `json:"relevant"`
		Found     int            `json:"found"`
		MatchedBy map[string]int `json:"matched_by"`
	} `json:"coverage"`
}

func TestEvalNativeBenchmarks(t *testing.T) {
	tests := []struct {
		name, bench, data, corpus string
		queries, relevant, found  int
		matchedBy                 map[string]int
	}{
		// ids 10 (second alternative title) and 12 (arXiv id) are in the
		// corpus, 185 and 13 are not
		{"citeme", "citeme", "citeme.tsv", "corpus.jsonl", 4, 4, 2, map[string]int{"arxiv": 1, "title": 1}},
		{"citeme test split", "citeme:test", "citeme.tsv", "corpus.jsonl", 3, 3, 2, map[string]int{"arxiv": 1, "title": 1}},
		{"scholargym", "scholargym", "scholargym.jsonl", "corpus.jsonl", 2, 2, 1, map[string]int{"arxiv": 1}},
		// the LitSearch corpus layout, converted on the fly: corpus ids are aliases
		{"litsearch corpus", "litsearch", "litsearch.jsonl", "litsearch_corpus.jsonl", 3, 4, 3, map[string]int{"id": 3}},
		{"litsearch generic corpus", "litsearch", "litsearch.jsonl", "corpus.jsonl", 3, 4, 2, map[string]int{"id": 1, "title": 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "db")
			out, _, err := cli(t, "", "eval", "--bench", tc.bench, "--data", nativeFixture(t, tc.data),
				"--corpus", nativeFixture(t, tc.corpus), "--db", db, "--quiet", "--json")
			require.NoError(t, err)
			var rep evalReport
			require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
			require.Len(t, rep, 1)
			assert.Equal(t, tc.queries, rep[0].Queries)
			assert.Equal(t, tc.relevant, rep[0].Coverage.Relevant)
			assert.Equal(t, tc.found, rep[0].Coverage.Found)
			assert.Equal(t, tc.matchedBy, rep[0].Coverage.MatchedBy)
			assert.Contains(t, rep[0].Metrics, "recall@100")

			// The same database again, now as an existing one (no --corpus).
			out, _, err = cli(t, "", "eval", "--bench", tc.bench, "--data", nativeFixture(t, tc.data), "--db", db, "--quiet", "--json")
			require.NoError(t, err)
			var again evalReport
			require.NoError(t, json.Unmarshal([]byte(out), &again), out)
			assert.Equal(t, rep[0].Coverage, again[0].Coverage)
		})
	}
}

func TestEvalSaveRunCompareReport(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "db")
	args := []string{"eval", "--bench", "litsearch", "--data", nativeFixture(t, "litsearch.jsonl"),
		"--corpus", nativeFixture(t, "litsearch_corpus.jsonl"), "--db", db, "--quiet"}
	runA, runB := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	_, _, err := cli(t, "", append(args, "--label", "textbook", "--bm25-k1", "1.2", "--bm25-k3", "0", "--field-weights", "text=1",
		"--save-run", runA, "--run-out", filepath.Join(dir, "a.run"))...)
	require.NoError(t, err)
	report := filepath.Join(dir, "rep", "eval.md")
	_, _, err = cli(t, "", append(args, "--label", "tuned", "--save-run", runB, "--run-out", filepath.Join(dir, "b.run"), "--report", report)...)
	require.NoError(t, err)
	assert.FileExists(t, filepath.Join(dir, "rep", "eval-litsearch-all-recall.png"))

	out, _, err := cli(t, "", "eval", "--compare", runA, runB, "--json")
	require.NoError(t, err)
	var cmp []struct {
		Bench   string `json:"bench"`
		A, B    string
		Queries int `json:"queries"`
		Metrics map[string]struct {
			MeanA float64    `json:"mean_a"`
			MeanB float64    `json:"mean_b"`
			Diff  float64    `json:"diff"`
			CI95  [2]float64 `json:"ci95"`
			P     float64    `json:"p"`
		} `json:"metrics"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &cmp), out)
	require.Len(t, cmp, 1)
	assert.Equal(t, "litsearch:all", cmp[0].Bench)
	assert.Equal(t, "textbook/bm25", cmp[0].A)
	assert.Equal(t, "tuned/bm25", cmp[0].B)
	assert.Equal(t, 3, cmp[0].Queries)
	m := cmp[0].Metrics["recall@100"]
	assert.InDelta(t, m.MeanB-m.MeanA, m.Diff, 1e-12)
	assert.Greater(t, m.P, 0.0)
	assert.LessOrEqual(t, m.P, 1.0)

	// Markdown with figures.
	cmpReport := filepath.Join(dir, "cmp", "cmp.md")
	out, _, err = cli(t, "", "eval", "--compare", runA, runB, "--report", cmpReport)
	require.NoError(t, err)
	assert.Contains(t, out, "**textbook/bm25** (A) against **tuned/bm25** (B), 3 paired queries")
	md, err := os.ReadFile(cmpReport)
	require.NoError(t, err)
	assert.Contains(t, string(md), "cmp-litsearch-all-winloss-tuned-bm25-vs-textbook-bm25.png")
	assert.FileExists(t, filepath.Join(dir, "cmp", "cmp-litsearch-all-winloss-tuned-bm25-vs-textbook-bm25.svg"))

	// TREC run files, judged against the benchmark: the same numbers as
	// the saved runs.
	out, _, err = cli(t, "", "eval", "--compare", filepath.Join(dir, "a.run"), filepath.Join(dir, "b.run"),
		"--bench", "litsearch", "--data", nativeFixture(t, "litsearch.jsonl"), "--db", db, "--json")
	require.NoError(t, err)
	var trec []struct {
		Metrics map[string]struct {
			MeanA float64 `json:"mean_a"`
			MeanB float64 `json:"mean_b"`
		} `json:"metrics"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &trec), out)
	require.Len(t, trec, 1)
	for k, v := range cmp[0].Metrics {
		assert.InDelta(t, v.MeanA, trec[0].Metrics[k].MeanA, 1e-12, k)
		assert.InDelta(t, v.MeanB, trec[0].Metrics[k].MeanB, 1e-12, k)
	}
}

func TestEvalUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"compare one file", []string{"eval", "--compare", "a.json"}, "two run files"},
		{"native without corpus or db", []string{"eval", "--bench", "citeme", "--data", "../../eval/testdata/native/citeme.tsv"}, "--corpus PATH"},
		{"empty retrievers", []string{"eval", "--bench", "acm-cr", "--retrievers", ""}, "--retrievers is empty"},
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
	// A TREC run without --bench.
	f := filepath.Join(t.TempDir(), "x.run")
	require.NoError(t, os.WriteFile(f, []byte("q Q0 d 1 1 t\n"), 0o644))
	_, _, err := cli(t, "", "eval", "--compare", f, f)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "give --bench NAME")
}
