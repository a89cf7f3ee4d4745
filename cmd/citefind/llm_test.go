package main

import (
	"encoding/json"
	"slices"
	"strings"
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
