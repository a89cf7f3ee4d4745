package eval_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/eval"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// assertGolden compares got with testdata/golden/name, or rewrites the file
// with -update.
func assertGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./eval -update to create it")
	assert.Equal(t, string(want), string(got))
}

// testResults are fixed results: contexts with two stages, sentences with one.
func testResults() []*eval.Result {
	m := func(r10, r100, ndcg, mrr float64) eval.Metrics {
		out := eval.Metrics{}
		for _, k := range eval.MetricKeys() {
			out[k] = 0
		}
		out["recall@10"], out["recall@100"], out["ndcg@10"], out["mrr@10"] = r10, r100, ndcg, mrr
		out["recall@20"], out["recall@50"] = r100, r100
		return out
	}
	bm25 := &eval.Result{
		Bench: "acm-cr", Set: "contexts", Stage: "bm25", Queries: 3, Failed: 1,
		Metrics:    m(1.0/3, 0.5, 0.40876479517697226, 2.0/3),
		LatencyP50: 1500 * time.Microsecond, LatencyP99: 12345678 * time.Nanosecond,
		Missing: 1, Relevant: 5, Answerable: 3,
		PerQuery: []eval.QueryResult{
			{ID: "340982510", Hits: []corpus.Hit{{ID: "10.1145/a.1", Score: 12.5}, {ID: "h:3f2a9c01b2de", Score: 7.25}, {ID: "10.1145/a.1", Score: 7}, {ID: "arxiv:1706.03762", Score: 1e-7}}},
			{ID: "340982510#2", Err: "boom"},
			{ID: "q3", Hits: []corpus.Hit{{ID: "p-b", Score: 3}}},
		},
	}
	rerank := &eval.Result{
		Bench: "acm-cr", Set: "contexts", Stage: "rerank", Queries: 3, Failed: 1,
		Metrics:    m(0.5, 0.5, 0.5, 0.75),
		LatencyP50: 20 * time.Millisecond, LatencyP99: 40 * time.Millisecond, Missing: 1, Relevant: 5, Answerable: 3,
	}
	sentences := &eval.Result{
		Bench: "acm-cr", Set: "sentences", Stage: "bm25", Queries: 552,
		Metrics:    m(0.390, 0.7, 0.3156, 0.35),
		LatencyP50: 900 * time.Microsecond, LatencyP99: 3 * time.Millisecond, Missing: 2, Relevant: 978, Answerable: 551,
		MatchedBy: map[string]int{"id": 976},
	}
	return []*eval.Result{bm25, rerank, sentences}
}

func TestWriteRun(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, eval.WriteRun(&b, testResults()[0], "citefind-bm25"))
	// the repeated 10.1145/a.1 is written once; the failed query has no line
	assertGolden(t, "run.txt", b.Bytes())

	for _, tag := range []string{"", "two words"} {
		require.Error(t, eval.WriteRun(&b, testResults()[0], tag), "tag %q", tag)
	}
	bad := &eval.Result{PerQuery: []eval.QueryResult{{ID: "q", Hits: []corpus.Hit{{ID: "a b"}}}}}
	require.Error(t, eval.WriteRun(&b, bad, "t"))
}

func TestWriteJSON(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, eval.WriteJSON(&b, testResults()))
	assertGolden(t, "report.json", b.Bytes())

	dup := testResults()
	dup[1].Stage = "bm25"
	require.Error(t, eval.WriteJSON(&b, dup), "same stage twice")
}

func TestWriteMarkdown(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, eval.WriteMarkdown(&b, testResults()))
	assertGolden(t, "report.md", b.Bytes())
}
