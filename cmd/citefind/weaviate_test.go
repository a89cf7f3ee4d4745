package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/internal/weaviatetest"
)

// TestWeaviateBackendCLI: a database whose search index is a real Weaviate
// node (index --backend) answers query, status, remove and eval through it,
// with the rankings of the local backend.
func TestWeaviateBackendCLI(t *testing.T) {
	node := weaviatetest.StartNode(t)
	remote, local := filepath.Join(t.TempDir(), "remote"), filepath.Join(t.TempDir(), "local")
	url := "weaviate://" + node.Addr() + "/CliPapers"
	out, _, err := cli(t, "", "index", "--db", remote, "--quiet", "--backend", url, samplePath(t))
	require.NoError(t, err)
	assert.Contains(t, out, "search index:      "+url+": 30 papers sent")
	_, _, err = cli(t, "", "index", "--db", local, "--quiet", samplePath(t))
	require.NoError(t, err)

	out, _, err = cli(t, "", "status", "--db", remote)
	require.NoError(t, err, out)
	assert.Contains(t, out, "backend: "+url)
	assert.Contains(t, out, "in agreement")

	for _, q := range []string{
		"We merge the BM25 and dense rankings with reciprocal rank fusion [CITATION].",
		"Dense passage retrieval [12] for open-domain question answering.",
		"BERT [3] pre-trains deep bidirectional transformers.",
	} {
		want := queryJSON(t, "--db", local, "-k", "10", q)
		got := queryJSON(t, "--db", remote, "-k", "10", q)
		require.Len(t, got.Hits, len(want.Hits), q)
		for i := range want.Hits {
			assert.Equal(t, want.Hits[i].ID, got.Hits[i].ID, "%q rank %d", q, i+1)
			assert.InDelta(t, want.Hits[i].Score, got.Hits[i].Score, 1e-9, "%q rank %d", q, i+1)
		}
		assert.Empty(t, got.Warnings)
	}

	// remove goes through to the backend.
	out, _, err = cli(t, "", "remove", "--db", remote, "--quiet", "cormack2009rrf")
	require.NoError(t, err, out)
	res := queryJSON(t, "--db", remote, "-k", "5", "reciprocal rank fusion")
	for _, h := range res.Hits {
		assert.NotEqual(t, "10.1145/1571941.1572114", h.ID)
	}
	out, _, err = cli(t, "", "status", "--db", remote, "--json")
	require.NoError(t, err, out)
	var st struct {
		Agree       bool `json:"agree"`
		StorePapers int  `json:"store_papers"`
		Indexes     []struct {
			Name string `json:"name"`
			Docs int    `json:"docs"`
		} `json:"indexes"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &st))
	assert.True(t, st.Agree)
	assert.Equal(t, 29, st.StorePapers)
	require.NotEmpty(t, st.Indexes)
	assert.Equal(t, 29, st.Indexes[0].Docs)

	// eval --db evaluates the remote database as it is.
	queries := filepath.Join(t.TempDir(), "q.jsonl")
	require.NoError(t, os.WriteFile(queries, []byte(`{"id":"q1","text":"Dense passage retrieval [12] for open-domain question answering.","relevant":["arxiv:2004.04906"]}`+"\n"), 0o644))
	out, _, err = cli(t, "", "eval", "--bench", "jsonl", "--queries", queries, "--db", remote, "--quiet")
	require.NoError(t, err, out)
	assert.Contains(t, out, "| jsonl:q | fused | 1 | 1.0000")

	// serve from the backend alone: no database folder at all.
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() {
		_ = run(ctx, []string{"serve", "--backend", url, "--db", filepath.Join(t.TempDir(), "none"), "--addr", addr, "--no-mcp"},
			env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard})
	}()
	base := "http://" + addr
	waitHealthy(t, base)
	resp, err := http.Post(base+"/v1/search", "application/json", strings.NewReader(`{"query": "dense passage retrieval for open-domain question answering", "k": 3}`))
	require.NoError(t, err)
	var sr struct {
		Hits []struct{ ID, Title string } `json:"hits"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&sr))
	resp.Body.Close()
	require.NotEmpty(t, sr.Hits)
	assert.Equal(t, "arxiv:2004.04906", sr.Hits[0].ID)
	resp, err = http.Get(base + "/v1/papers/arxiv:2004.04906")
	require.NoError(t, err)
	var p struct{ ID, Title string }
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&p))
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, sr.Hits[0].Title, p.Title)

	// serve follows the collection (its cached generation, not Stats): a
	// removal synced by another process is served within seconds.
	health := func() int64 {
		resp, err := http.Get(base + "/healthz")
		require.NoError(t, err)
		defer resp.Body.Close()
		var h struct{ Generation int64 }
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&h))
		return h.Generation
	}
	before := health()
	_, stderr, err := cli(t, "", "remove", "--db", remote, "--quiet", "arxiv:2004.04906")
	require.NoError(t, err, stderr)
	require.Eventually(t, func() bool { return health() > before }, 20*time.Second, 200*time.Millisecond, "serve did not follow the removal")
	resp, err = http.Post(base+"/v1/search", "application/json", strings.NewReader(`{"query": "dense passage retrieval for open-domain question answering", "k": 3}`))
	require.NoError(t, err)
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&sr))
	resp.Body.Close()
	for _, h := range sr.Hits {
		assert.NotEqual(t, "arxiv:2004.04906", h.ID, "a removed paper is not served")
	}
}
