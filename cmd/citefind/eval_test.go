package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	dbpkg "github.com/citefind/citefind/db"
	"github.com/citefind/citefind/eval"

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
		"--corpus", nativeFixture(t, "litsearch_corpus.jsonl"), "--db", db, "--quiet", "--retrievers", "bm25"}
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
		{"sweep without retrievers to fuse", []string{"eval", "--bench", "acm-cr", "--save-weights"}, "need --sweep-weights"},
		{"empty sweep values", []string{"eval", "--bench", "jsonl", "--corpus", "x", "--queries", "y", "--sweep-weights", "--sweep-values", ","}, "holds no weight"},
		{"bad sweep value", []string{"eval", "--bench", "jsonl", "--corpus", "x", "--queries", "y", "--sweep-weights", "--sweep-values", "a"}, "--sweep-values"},
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

func TestEvalSweepWeights(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "db")
	queries := filepath.Join(dir, "queries.jsonl")
	require.NoError(t, os.WriteFile(queries, []byte(
		`{"id":"q1","text":"Dense passage retrieval [12] for open-domain question answering. Rankings are merged by reciprocal rank fusion [3].","relevant":["arxiv:2004.04906","10.1145/1571941.1572114"]}
{"id":"q2","text":"We merge rankings with reciprocal rank fusion [CITATION].","relevant":["10.1145/1571941.1572114"]}
{"id":"q3","text":"Transformers rely on attention alone [7].","relevant":["arxiv:1706.03762"]}
`), 0o644))
	args := []string{"eval", "--bench", "jsonl", "--corpus", samplePath(t), "--queries", queries, "--db", db, "--quiet",
		"--retrievers", "bm25,rm3,citing", "--weights", "bm25=1,rm3=1,citing=1", "--sweep-weights", "--sweep-values", "0,0.5,1"}
	out, _, err := cli(t, "", args...)
	require.NoError(t, err)
	assert.Contains(t, out, "Weight sweep: minmax fusion of bm25, rm3, citing, 9 weight vectors (bm25 fixed at 1)")
	// The swept row with the fused stage's weights (--weights) reproduces
	// the fused stage.
	fusedCells := tableRow(t, out, "| jsonl:queries | fused |")
	sweptCells := tableRow(t, out, "| bm25=1,rm3=1,citing=1 |")
	// cells: bench, stage, queries, r@1, r@5, r@10, r@20, r@50, r@100, ndcg@10; weights, r@10, r@100, ndcg@10
	assert.Equal(t, fusedCells[5], sweptCells[1], "recall@10")
	assert.Equal(t, fusedCells[8], sweptCells[2], "recall@100")
	assert.Equal(t, fusedCells[9], sweptCells[3], "ndcg@10")
	// With only the first retriever weighted, the sweep is bm25 alone.
	bm25Cells := tableRow(t, out, "| jsonl:queries | bm25 |")
	aloneCells := tableRow(t, out, "| bm25=1,rm3=0,citing=0 |")
	assert.Equal(t, bm25Cells[9], aloneCells[3])
	assert.Contains(t, out, "chosen: ")

	// --save-weights stores the choice as the database's default.
	_, errOut, err := cli(t, "", append(args, "--save-weights")...)
	require.NoError(t, err)
	assert.Contains(t, errOut, "stored the chosen fusion")
	cfg, err := dbpkg.ReadPipeline(db)
	require.NoError(t, err)
	require.NotNil(t, cfg)
	assert.Equal(t, "none", cfg.Embedder)
	assert.NotEmpty(t, cfg.Retrievers)
	assert.Equal(t, "bm25", cfg.Retrievers[0])
	res := queryJSON(t, "--db", db, "reciprocal rank fusion")
	require.NotEmpty(t, res.Hits)
	for _, h := range res.Hits {
		for name := range h.Sources {
			assert.Contains(t, cfg.Retrievers, name)
		}
	}

	_, _, err = cli(t, "", append(args, "--json")...)
	require.Error(t, err)
}

// tableRow returns the cells of the first Markdown table row of out that
// starts with prefix.
func tableRow(t *testing.T, out, prefix string) []string {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, prefix) {
			var cells []string
			for _, c := range strings.Split(strings.Trim(line, "|"), "|") {
				cells = append(cells, strings.TrimSpace(c))
			}
			return cells
		}
	}
	t.Fatalf("no row %q in:\n%s", prefix, out)
	return nil
}

// TestEvalMeasuresWhatQueryAnswers evaluates a database made by index, as
// it is (no --corpus), with no pipeline flags, and checks query by query
// that the ranking eval scores is the one query returns.
func TestEvalMeasuresWhatQueryAnswers(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "db")
	_, _, err := cli(t, "", "index", "--db", db, "--quiet", samplePath(t))
	require.NoError(t, err)
	texts := map[string]string{
		"q1": "Dense passage retrieval [12] for open-domain question answering. Rankings are merged by reciprocal rank fusion [3].",
		"q2": "We merge rankings with reciprocal rank fusion [CITATION].",
		"q3": "Transformers rely on attention alone [7].",
		"q4": "Which pre-trained language models help ranking?",
	}
	queries := filepath.Join(dir, "queries.jsonl")
	var lines []string
	for _, id := range []string{"q1", "q2", "q3", "q4"} {
		b, err := json.Marshal(map[string]any{"id": id, "text": texts[id], "relevant": []string{"10.1145/1571941.1572114"}})
		require.NoError(t, err)
		lines = append(lines, string(b))
	}
	require.NoError(t, os.WriteFile(queries, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	run := filepath.Join(dir, "run.json")
	out, _, err := cli(t, "", "eval", "--bench", "jsonl", "--queries", queries, "--db", db, "--quiet", "--save-run", run)
	require.NoError(t, err, "a database made by index is evaluated as it is")
	assert.Contains(t, out, "pipeline: minmax fusion of bm25=1, rm3=0.2, citing=0.5")
	rf, err := eval.ReadRunFile(run)
	require.NoError(t, err)
	last := rf.Results[len(rf.Results)-1]
	assert.Equal(t, eval.StageFused, last.Stage, "the pipeline's last stage")
	require.Len(t, last.PerQuery, len(texts))
	for _, q := range last.PerQuery {
		res := queryJSON(t, "--db", db, "-k", "100", texts[q.ID])
		require.Len(t, res.Hits, len(q.Hits), q.ID)
		for i, h := range res.Hits {
			assert.Equal(t, h.ID, q.Hits[i].ID, "%s rank %d", q.ID, i+1)
			assert.InDelta(t, h.Score, q.Hits[i].Score, 1e-9, "%s rank %d", q.ID, i+1)
		}
	}
}

// TestEvalSuite runs the suite on a data folder that holds only a small
// BEIR collection in SciFact's place: the missing collections are skipped
// with a line saying so, the present one is evaluated stage by stage
// against bm25.
func TestEvalSuite(t *testing.T) {
	data := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(data, "devsets"), 0o755))
	tiny, err := filepath.Abs(filepath.Join("..", "..", "eval", "testdata", "beir", "tiny"))
	require.NoError(t, err)
	require.NoError(t, os.Symlink(tiny, filepath.Join(data, "devsets", "scifact")))
	report := filepath.Join(t.TempDir(), "suite.md")
	_, errOut, err := cli(t, "", "eval", "--suite", "--data", data, "--db", filepath.Join(t.TempDir(), "suite"), "--quiet", "--report", report)
	require.NoError(t, err, errOut)
	assert.Contains(t, errOut, "suite: skipped acm-cr: no data at")
	assert.Contains(t, errOut, "suite: skipped scisummnet: no data at")
	b, err := os.ReadFile(report)
	require.NoError(t, err)
	md := string(b)
	assert.Contains(t, md, "| acm-cr | – | skipped: ")
	assert.Contains(t, md, "## scifact:test")
	for _, stage := range []string{"rm3", "citing", "fused"} {
		assert.Contains(t, md, "| "+stage+" |")
	}
	assert.Contains(t, md, "## Summary: ndcg@10, difference from bm25")

	_, _, err = cli(t, "", "eval", "--suite", "--bench", "acm-cr")
	require.Error(t, err)
}
