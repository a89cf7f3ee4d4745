package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/citefind/citefind/corpus"
	dbpkg "github.com/citefind/citefind/db"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/retrieve/dense"
	"github.com/citefind/citefind/retrieve/dense/contrast"
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
	assert.FileExists(t, filepath.Join(withDense, dbpkg.LSAModelFile))
	assert.FileExists(t, filepath.Join(withDense, dbpkg.EmbeddingCacheFile))

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
	require.NoError(t, os.WriteFile(filepath.Join(withDense, dbpkg.LSAModelFile), []byte("garbage"), 0o644))
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
	assert.NoDirExists(t, filepath.Join(withDense, dbpkg.DenseDir))
	cfg, err := dbpkg.ReadPipeline(withDense)
	require.NoError(t, err)
	assert.Equal(t, dbpkg.BuiltinPipeline(dbpkg.EmbedderNone), *cfg, "the fusion defaults follow the embedder")
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
	assert.Contains(t, res.Warnings[0], "--embedder contrast")
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

// TestDenseFoldIn checks that the builtin model is kept across small store
// changes (only the changed papers are embedded), and retrained when more
// than 10% of its papers changed, with --force, or when the model file is
// not the one the index was built with.
func TestDenseFoldIn(t *testing.T) {
	db, in := t.TempDir(), filepath.Join(t.TempDir(), "papers.bib")
	orig, err := os.ReadFile(samplePath(t))
	require.NoError(t, err)
	// changeKeywords returns the sample with the keywords of its first n
	// records that have keywords changed (their IDs stay: DOI, or title,
	// year and first author).
	changeKeywords := func(n int, word string) []byte {
		return []byte(strings.Replace(string(orig), "keywords  = {", "keywords  = {"+word+", ", n))
	}
	index := func(args ...string) string {
		t.Helper()
		out, _, err := cli(t, "", append([]string{"index", "--db", db, "--quiet"}, args...)...)
		require.NoError(t, err)
		return out
	}
	const q = "Dense passage retrieval [12] for open-domain question answering."
	hybrid := func() {
		t.Helper()
		res := queryJSON(t, "--db", db, "-k", "5", "--retrievers", "bm25,dense", q)
		assert.Empty(t, res.Warnings)
		require.NotEmpty(t, res.Hits)
		assert.Contains(t, res.Hits[0].Sources, "dense")
	}

	require.NoError(t, os.WriteFile(in, orig, 0o644))
	out := index("--embedder", "builtin", in)
	assert.Contains(t, out, "with builtin, 30 papers")
	assert.Contains(t, out, "(model trained: no model yet, in ")
	assert.Contains(t, out, "30 embedded, 0 cached")
	model, err := os.ReadFile(filepath.Join(db, dbpkg.LSAModelFile))
	require.NoError(t, err)

	// One changed record: the model is kept, one paper embedded.
	require.NoError(t, os.WriteFile(in, changeKeywords(1, "scoring"), 0o644))
	out = index(in)
	assert.Contains(t, out, "rebuilt (store changed since generation")
	assert.Contains(t, out, "(model kept: 1 of 30 papers changed since it was trained)")
	assert.Contains(t, out, "1 embedded, 29 cached")
	kept, err := os.ReadFile(filepath.Join(db, dbpkg.LSAModelFile))
	require.NoError(t, err)
	assert.Equal(t, model, kept, "model file untouched")
	hybrid()

	// Nothing changed: up to date.
	assert.Contains(t, index(in), "dense index:       up to date (builtin)\n")

	// An index without its sidecar (built before sidecars, or lost) still
	// answers, through the chromem-go import; index writes the sidecar
	// without rebuilding.
	h, err := dense.Stat(filepath.Join(db, dbpkg.DenseDir))
	require.NoError(t, err)
	side := filepath.Join(db, dbpkg.DenseDir, dense.SidecarName(h.Export))
	require.FileExists(t, side)
	require.NoError(t, os.Remove(side))
	hybrid()
	assert.Contains(t, index(in), "dense index:       up to date (builtin); fast-load sidecar written\n")
	require.FileExists(t, side)
	hybrid()
	assert.Contains(t, index(in), "dense index:       up to date (builtin)\n")

	// Four records changed since training (over 10% of 30): retrained.
	require.NoError(t, os.WriteFile(in, changeKeywords(4, "scoring"), 0o644))
	out = index(in)
	assert.Contains(t, out, "(model trained: 4 of 30 papers changed since it was trained (over 10%), in ")
	hybrid()

	// --force retrains (on an unchanged store: the same model, so every
	// vector comes from the cache).
	out = index("--force", in)
	assert.Contains(t, out, "(model trained: --force, in ")
	assert.Contains(t, out, "0 embedded, 30 cached")

	// A model file that is not the index's (a run killed between saving a
	// model and committing its index; here: garbage) is noticed.
	require.NoError(t, os.WriteFile(filepath.Join(db, dbpkg.LSAModelFile), []byte("garbage"), 0o644))
	out = index(in)
	assert.Contains(t, out, "rebuilt (the builtin embedder's model is not the one the index was built with)")
	assert.Contains(t, out, "model trained: model unreadable")
	hybrid()
}

// TestDenseOllamaCLI runs index --embedder ollama:MODEL and hybrid queries
// against a fake Ollama server (OLLAMA_HOST), which embeds with the
// HashEmbedder and can be made to fail: then the query answers from BM25
// with a warning, and --strict makes it an error.
func TestDenseOllamaCLI(t *testing.T) {
	var fail atomic.Bool
	var embedded atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/api/embed" {
			t.Errorf("request %s %s, want POST /api/embed", r.Method, r.URL.Path)
			http.NotFound(w, r)
			return
		}
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			t.Errorf("decode request: %v", err)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if req.Model != "fake-embed" {
			t.Errorf("model %q, want fake-embed", req.Model)
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		if fail.Load() {
			w.WriteHeader(http.StatusInternalServerError)
			json.NewEncoder(w).Encode(map[string]string{"error": "fake: model runner crashed"})
			return
		}
		vecs, err := dense.HashEmbedder{Dims: 64}.Embed(r.Context(), req.Input)
		if err != nil {
			t.Errorf("embed: %v", err)
		}
		embedded.Add(int64(len(req.Input)))
		json.NewEncoder(w).Encode(map[string]any{"model": req.Model, "embeddings": vecs})
	}))
	t.Cleanup(srv.Close)
	t.Setenv("OLLAMA_HOST", srv.URL)

	db := t.TempDir()
	out, _, err := cli(t, "", "index", "--db", db, "--quiet", "--embedder", "ollama:fake-embed", samplePath(t))
	require.NoError(t, err)
	assert.Contains(t, out, "dense index:       rebuilt (no index yet) with ollama:fake-embed, 30 papers × 64 dims")
	assert.Contains(t, out, "30 embedded, 0 cached")
	assert.EqualValues(t, 30, embedded.Load())
	assert.NoFileExists(t, filepath.Join(db, dbpkg.LSAModelFile))

	// A forced rebuild takes every vector from the cache.
	out, _, err = cli(t, "", "index", "--db", db, "--quiet", "--force", samplePath(t))
	require.NoError(t, err)
	assert.Contains(t, out, "with ollama:fake-embed, 30 papers × 64 dims")
	assert.Contains(t, out, "0 embedded, 30 cached")
	assert.EqualValues(t, 30, embedded.Load())

	const q = "Dense passage retrieval [12] for open-domain question answering."
	bm25 := queryJSON(t, "--db", db, "-k", "5", "--retrievers", "bm25", q)
	require.NotEmpty(t, bm25.Hits)
	res := queryJSON(t, "--db", db, "-k", "5", "--retrievers", "bm25,dense", q)
	assert.Empty(t, res.Warnings)
	require.NotEmpty(t, res.Hits)
	assert.Contains(t, res.Hits[0].Sources, "bm25")
	assert.Contains(t, res.Hits[0].Sources, "dense")
	assert.EqualValues(t, 31, embedded.Load(), "the query was embedded by the server")
	dres := queryJSON(t, "--db", db, "-k", "5", "--retrievers", "dense", q)
	require.NotEmpty(t, dres.Hits)
	assert.Contains(t, dres.Hits[0].Sources, "dense")

	// The server fails at query time: BM25's hits and a warning.
	fail.Store(true)
	res = queryJSON(t, "--db", db, "-k", "5", "--retrievers", "bm25,dense", q)
	require.Len(t, res.Warnings, 1)
	assert.Contains(t, res.Warnings[0], "dense")
	assert.Contains(t, res.Warnings[0], "500")
	require.Len(t, res.Hits, len(bm25.Hits))
	for i, h := range res.Hits {
		assert.Equal(t, bm25.Hits[i].ID, h.ID)
		assert.Len(t, h.Sources, 1)
		assert.Contains(t, h.Sources, "bm25")
	}
	_, _, err = cli(t, "", "query", "--db", db, "--json", "--strict", "--retrievers", "bm25,dense", q)
	require.Error(t, err)
	require.ErrorIs(t, err, dense.ErrEmbedder)
	var se *dense.StatusError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, http.StatusInternalServerError, se.Code)
}

func TestBadFusionDefaults(t *testing.T) {
	db := t.TempDir()
	_, _, err := cli(t, "", "index", "--db", db, "--quiet", samplePath(t))
	require.NoError(t, err)
	path := filepath.Join(db, dbpkg.PipelineFile)
	require.NoError(t, os.WriteFile(path, []byte(`{"format": 2, "retrievers": ["bm25", "splade"], "method": "minmax"}`), 0o644))
	_, _, err = cli(t, "", "query", "--db", db, "retrieval")
	require.Error(t, err)
	assert.Contains(t, err.Error(), path)
	assert.Contains(t, err.Error(), `unknown retriever "splade"`)
	// status still reports, and says why the defaults are not used.
	out, _, err := cli(t, "", "status", "--db", db)
	require.NoError(t, err)
	assert.Contains(t, out, "the pipeline is unreadable")
	// index replaces the file and says so.
	_, errOut, err := cli(t, "", "index", "--db", db, "--quiet")
	require.NoError(t, err)
	assert.Contains(t, errOut, "replaced by the built-in pipeline")
	cfg, err := dbpkg.ReadPipeline(db)
	require.NoError(t, err)
	assert.Equal(t, dbpkg.BuiltinPipeline(dbpkg.EmbedderNone), *cfg)
	_, _, err = cli(t, "", "query", "--db", db, "retrieval")
	require.NoError(t, err)
}

// syntheticPapers writes n CSL-JSON papers whose titles and abstracts are
// drawn from a few topics, enough for the contrast embedder to learn from.
func syntheticPapers(t *testing.T, n int) string {
	topics := [][]string{
		{"dense", "passage", "retrieval", "encoder", "question", "answering", "embedding"},
		{"citation", "recommendation", "context", "scholarly", "graph", "reference"},
		{"reciprocal", "rank", "fusion", "runs", "metasearch", "combination"},
		{"neural", "machine", "translation", "attention", "decoder", "alignment"},
	}
	var b strings.Builder
	for i := range n {
		w := topics[i%len(topics)]
		word := func(j int) string { return w[(i*7+j*3)%len(w)] }
		fmt.Fprintf(&b, `{"id":"p%d","type":"article-journal","title":"%s %s %s %d","abstract":"We study %s %s for %s. Our %s %s improves %s on paper %d.","issued":{"date-parts":[[2020]]}}`+"\n",
			i, word(0), word(1), word(2), i, word(3), word(4), word(5), word(6), word(0), word(2), i)
	}
	path := filepath.Join(t.TempDir(), "papers.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	return path
}

// TestDenseContrast builds the contrast embedder's index (trained on the
// database's own papers), answers hybrid queries with it, keeps the model
// across a small change, refuses a model trained for other options and a
// database too small to learn from.
func TestDenseContrast(t *testing.T) {
	dir := t.TempDir()
	in := syntheticPapers(t, 120)
	out, _, err := cli(t, "", "index", "--db", dir, "--quiet", "--embedder", "contrast", in)
	require.NoError(t, err)
	assert.Contains(t, out, "with contrast, 120 papers")
	assert.Contains(t, out, "(model trained: no model yet, in ")
	require.FileExists(t, filepath.Join(dir, dbpkg.ContrastModelFile))
	res := queryJSON(t, "--db", dir, "-k", "5", "--retrievers", "bm25,dense", "citation recommendation in scholarly graphs [3]")
	// the pipeline's learned reranker was made for bm25, citing and dense
	require.Len(t, res.Warnings, 1)
	assert.Contains(t, res.Warnings[0], "not reranked")
	res = queryJSON(t, "--db", dir, "-k", "5", "--retrievers", "bm25,dense", "--rerank", "none", "citation recommendation in scholarly graphs [3]")
	assert.Empty(t, res.Warnings)
	require.NotEmpty(t, res.Hits)
	sawDense := false
	for _, h := range res.Hits {
		_, ok := h.Sources["dense"]
		sawDense = sawDense || ok
	}
	assert.True(t, sawDense, "dense contributes hits")
	st, _, err := cli(t, "", "status", "--db", dir)
	require.NoError(t, err)
	assert.Contains(t, st, "embedder contrast (model contrast-768@")

	// The same papers again: up to date; one more paper: the model is kept.
	out, _, err = cli(t, "", "index", "--db", dir, "--quiet", in)
	require.NoError(t, err)
	assert.Contains(t, out, "dense index:       up to date (contrast)")
	more := syntheticPapers(t, 121)
	out, _, err = cli(t, "", "index", "--db", dir, "--quiet", more)
	require.NoError(t, err)
	assert.Contains(t, out, "(model kept: 1 of 120 papers changed since it was trained)")

	// A model trained for another feature set is refused, naming both.
	var papers []corpus.Paper
	for i := range 60 {
		papers = append(papers, corpus.Paper{ID: fmt.Sprint(i), Title: fmt.Sprintf("paper %d on topic %d", i, i%5),
			Abstract: fmt.Sprintf("First sentence about topic %d. Second sentence number %d.", i%5, i)})
	}
	other, err := contrast.Train(t.Context(), slices.Values(papers), contrast.Options{Dim: 16, Epochs: 1, MinSteps: -1}, nil)
	require.NoError(t, err)
	require.NoError(t, contrast.SaveFile(filepath.Join(dir, dbpkg.ContrastModelFile), other))
	// status sees that the index's vectors are not the saved model's.
	st, _, err = cli(t, "", "status", "--db", dir)
	require.Error(t, err)
	assert.Contains(t, st, "out of date: dense: vectors of model contrast-768@")
	assert.Contains(t, st, "the database's contrast model is contrast-16@")
	// … and that a damaged model file cannot embed queries.
	modelPath := filepath.Join(dir, dbpkg.ContrastModelFile)
	saved, err := os.ReadFile(modelPath)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(modelPath, []byte("not a model"), 0o644))
	st, _, err = cli(t, "", "status", "--db", dir)
	require.Error(t, err)
	assert.Contains(t, st, "out of date: dense: the contrast embedder's model: contrast model id:")
	require.NoError(t, os.WriteFile(modelPath, saved, 0o644))
	_, _, err = cli(t, "", "query", "--db", dir, "--strict", "--retrievers", "bm25,dense", "citation recommendation")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "uni+bi32768/16")
	assert.Contains(t, err.Error(), "uni+bi32768/768")
	// index notices and retrains.
	out, _, err = cli(t, "", "index", "--db", dir, "--quiet", more)
	require.NoError(t, err)
	assert.Contains(t, out, "contrast embedder's model is not the one the index was built with")

	// Too few papers to learn from: index says why and fails.
	small := t.TempDir()
	_, _, err = cli(t, "", "index", "--db", small, "--quiet", "--embedder", "contrast", samplePath(t))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "too few papers to learn from")
}

// TestDefaultEmbedder: a new database gets the contrast embedder and its
// pipeline without asking; one too small to train it on gets no dense
// index, a line saying why, and a later run with more papers trains it.
func TestDefaultEmbedder(t *testing.T) {
	dir := t.TempDir()
	out, _, err := cli(t, "", "index", "--db", dir, "--quiet", syntheticPapers(t, 120))
	require.NoError(t, err)
	assert.Contains(t, out, "with contrast, 120 papers")
	p, err := dbpkg.ReadPipeline(dir)
	require.NoError(t, err)
	require.NotNil(t, p)
	assert.Equal(t, dbpkg.BuiltinPipeline(dbpkg.EmbedderContrast).Weights, p.Weights)
	assert.Contains(t, p.Retrievers, "dense")

	small := t.TempDir()
	out, _, err = cli(t, "", "index", "--db", small, "--quiet", samplePath(t))
	require.NoError(t, err)
	assert.Contains(t, out, "dense index:       none: the default embedder (contrast) was not trained")
	assert.Contains(t, out, "too few papers to learn from")
	res := queryJSON(t, "--db", small, "dense retrieval")
	assert.Empty(t, res.Warnings, "the small database answers with its no-dense pipeline")
	out, _, err = cli(t, "", "index", "--db", small, "--quiet", syntheticPapers(t, 120))
	require.NoError(t, err)
	assert.Contains(t, out, "with contrast, 150 papers")
	// --embedder none is recorded and keeps the default away.
	out, _, err = cli(t, "", "index", "--db", small, "--quiet", "--embedder", "none")
	require.NoError(t, err)
	assert.Contains(t, out, "removed (embedder none)")
	out, _, err = cli(t, "", "index", "--db", small, "--quiet", "--force")
	require.NoError(t, err)
	assert.NotContains(t, out, "with contrast")
	assert.Contains(t, out, "dense index:       none (embedder none: BM25 only; --embedder contrast adds")
}
