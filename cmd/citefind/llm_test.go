package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/internal/ollamatest"
)

// schemaIDs returns the candidate IDs a request's JSON schema allows.
func schemaIDs(t *testing.T, format json.RawMessage) (ids []string, ranking bool) {
	var s struct {
		Properties map[string]struct {
			Enum  []string `json:"enum"`
			Items struct {
				Enum []string `json:"enum"`
			} `json:"items"`
		} `json:"properties"`
	}
	require.NoError(t, json.Unmarshal(format, &s))
	if r, ok := s.Properties["ranking"]; ok {
		return r.Items.Enum, true
	}
	for _, p := range s.Properties {
		if len(p.Enum) > 0 {
			return p.Enum, false
		}
	}
	t.Fatalf("no candidate IDs in schema %s", format)
	return nil, false
}

type llmResult struct {
	Hits []struct {
		ID   string `json:"id"`
		Rank int    `json:"rank"`
	} `json:"hits"`
	Picked *struct {
		ID                string `json:"id"`
		Fallback          bool   `json:"fallback"`
		Reason            string `json:"reason"`
		MatchedBy         string `json:"matched_by"`
		NamedNonCandidate bool   `json:"named_non_candidate"`
	} `json:"picked"`
	Warnings []string `json:"warnings"`
}

// TestQueryLLMRerankAndPick runs query --rerank llm --pick through a fake
// Ollama server: the model reverses the candidates and picks the second
// one shown; a second server answers the pick with a made-up paper, which
// the guard replaces by the top rank.
func TestQueryLLMRerankAndPick(t *testing.T) {
	db := t.TempDir()
	_, _, err := cli(t, "", "index", "--db", db, "--quiet", samplePath(t))
	require.NoError(t, err)
	const q = "Dense passage retrieval [12] for open-domain question answering."
	var plain llmResult
	out, _, err := cli(t, "", "query", "--db", db, "--json", "-k", "5", q)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal([]byte(out), &plain))
	require.Len(t, plain.Hits, 5)
	assert.Nil(t, plain.Picked)

	honest := ollamatest.New(t, func(req ollamatest.Request) ollamatest.Reply {
		ids, ranking := schemaIDs(t, req.Format)
		if ranking {
			rev := slices.Clone(ids)
			slices.Reverse(rev)
			b, _ := json.Marshal(map[string]any{"ranking": rev})
			return ollamatest.Reply{Content: "Here is the ranking:\n```json\n" + string(b) + "\n```"}
		}
		return ollamatest.Reply{Content: `{"reasoning": "the second fits", "id": "` + ids[1] + `"}`}
	})
	t.Setenv("OLLAMA_HOST", honest.URL)
	var res llmResult
	out, _, err = cli(t, "", "query", "--db", db, "--json", "-k", "5", "--rerank", "llm", "--llm", "fake-model", "--pick", q)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	require.Len(t, res.Hits, 5)
	// The reranker reorders the top 30 of 100 fused candidates; the
	// sample corpus has 30 papers, so the reversed list starts with the
	// fused list's last candidate, and the fused top is not in the top 5.
	var got []string
	for i, h := range res.Hits {
		assert.Equal(t, i+1, h.Rank)
		got = append(got, h.ID)
	}
	assert.NotContains(t, got, plain.Hits[0].ID)
	require.NotNil(t, res.Picked)
	assert.Equal(t, res.Hits[1].ID, res.Picked.ID)
	assert.False(t, res.Picked.Fallback)
	assert.Equal(t, "id", res.Picked.MatchedBy)
	reqs := honest.Requests()
	require.Len(t, reqs, 2)
	for _, r := range reqs {
		assert.Equal(t, "fake-model", r.Model)
		require.NotNil(t, r.Stream)
		assert.False(t, *r.Stream)
		assert.EqualValues(t, 0, r.Options["temperature"])
	}

	liar := ollamatest.New(t, func(req ollamatest.Request) ollamatest.Reply {
		return ollamatest.Reply{Content: `{"reasoning": "obviously", "id": "QQQQ", "title": "A Paper That Does Not Exist", "year": 2031}`}
	})
	t.Setenv("OLLAMA_HOST", liar.URL)
	t.Setenv("CITEFIND_LLM", "fake-model")
	res = llmResult{}
	out, _, err = cli(t, "", "query", "--db", db, "--json", "-k", "5", "--pick", q)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	require.NotNil(t, res.Picked)
	assert.Equal(t, plain.Hits[0].ID, res.Picked.ID, "fallback: the top rank")
	assert.True(t, res.Picked.Fallback)
	assert.True(t, res.Picked.NamedNonCandidate)
	assert.NotEmpty(t, res.Picked.Reason)
	assert.True(t, slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "top-ranked") }))

	// The server down: the fused order comes back with a warning.
	honest.Close()
	t.Setenv("OLLAMA_HOST", honest.URL)
	res = llmResult{}
	out, _, err = cli(t, "", "query", "--db", db, "--json", "-k", "5", "--rerank", "llm", q)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	require.Len(t, res.Hits, 5)
	for i := range res.Hits {
		assert.Equal(t, plain.Hits[i].ID, res.Hits[i].ID)
	}
	assert.NotEmpty(t, res.Warnings)
}

// TestEvalRerankAndPick evaluates the reranked and picked stages through
// a fake Ollama server that reverses rankings and names a made-up paper
// for every second pick.
func TestEvalRerankAndPick(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "db")
	queries := filepath.Join(dir, "queries.jsonl")
	require.NoError(t, os.WriteFile(queries, []byte(
		`{"id":"q1","text":"Dense passage retrieval [12] for open-domain question answering.","relevant":["arxiv:2004.04906"]}
{"id":"q2","text":"We merge rankings with reciprocal rank fusion [CITATION].","relevant":["10.1145/1571941.1572114"]}
`), 0o644))
	var picks atomic.Int32
	srv := ollamatest.New(t, func(req ollamatest.Request) ollamatest.Reply {
		ids, ranking := schemaIDs(t, req.Format)
		if ranking {
			rev := slices.Clone(ids)
			slices.Reverse(rev)
			b, _ := json.Marshal(map[string]any{"ranking": rev})
			return ollamatest.Reply{Content: string(b)}
		}
		if picks.Add(1)%2 == 0 {
			return ollamatest.Reply{Content: `{"reasoning": "r", "id": "ZZZZ", "title": "Not A Candidate", "year": 1999}`}
		}
		return ollamatest.Reply{Content: `{"reasoning": "r", "id": "` + ids[0] + `"}`}
	})
	t.Setenv("OLLAMA_HOST", srv.URL)
	out, _, err := cli(t, "", "eval", "--bench", "jsonl", "--corpus", samplePath(t), "--queries", queries, "--db", db,
		"--quiet", "--rerank", "llm", "--pick", "--llm", "fake")
	require.NoError(t, err)
	bm25 := tableRow(t, out, "| jsonl:queries | bm25 |")
	reranked := tableRow(t, out, "| jsonl:queries | reranked |")
	picked := tableRow(t, out, "| jsonl:queries | picked |")
	// The reversed top 30 of a 30-paper corpus buries the relevant papers.
	assert.Equal(t, "1.0000", bm25[5], "recall@10")
	assert.Equal(t, "0.0000", reranked[3], "recall@1")
	assert.Equal(t, "0.0000", picked[3], "the picks are among the reranked top 10")
	assert.Equal(t, reranked[5], picked[5], "the picked stage holds the same candidates")
	assert.Contains(t, out, "picker on queries: 2 picks")
	assert.Contains(t, out, "outside the candidates 0 (0.0%, must be 0)")
	assert.Contains(t, out, "model answers naming a non-candidate 1 of 2 (50.0%")
}
