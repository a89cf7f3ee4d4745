package llm_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ollama/ollama/api"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/internal/llm"
	"github.com/citefind/citefind/internal/ollamatest"
)

func TestRandomIDs(t *testing.T) {
	ids := llm.RandomIDs(500, 7)
	require.Len(t, ids, 500)
	seen := map[string]bool{}
	for _, id := range ids {
		require.Len(t, id, llm.IDLen)
		assert.Equal(t, strings.Trim(id, "BCDFGHJKLMNPQRSTVWXZ"), "", "consonants only: %s", id)
		assert.False(t, seen[id], "duplicate %s", id)
		seen[id] = true
	}
	assert.Equal(t, ids[:30], llm.RandomIDs(30, 7)[:30], "a seed fixes the IDs")
	assert.NotEqual(t, llm.RandomIDs(30, 7), llm.RandomIDs(30, 8))
	assert.NotEqual(t, llm.RandomIDs(30, 0), llm.RandomIDs(30, 0), "seed 0: new IDs each call")
	assert.Empty(t, llm.RandomIDs(0, 1))
}

func TestNormalizeID(t *testing.T) {
	for in, want := range map[string]string{
		"KDTQ": "KDTQ", "kdtq": "KDTQ", "[KDTQ]": "KDTQ", ` "KDTQ" `: "KDTQ", "#KDTQ": "KDTQ",
		"ID: KDTQ": "KDTQ", "id KDTQ": "KDTQ", "**KDTQ**": "KDTQ", "KDTQ.": "KDTQ", "ID": "ID", "": "",
	} {
		assert.Equal(t, want, llm.NormalizeID(in), "NormalizeID(%q)", in)
	}
}

func TestTruncateText(t *testing.T) {
	assert.Equal(t, "a b c", llm.TruncateText("  a\n\tb   c ", 10))
	assert.Equal(t, "", llm.TruncateText("abc", 0))
	assert.Equal(t, "a b", llm.TruncateText("a"+strings.Repeat(" \n", 1000)+"b", 3), "whitespace runs count once")
	assert.Equal(t, "abc", llm.TruncateText("abc", 3))
	assert.Equal(t, "ab…", llm.TruncateText("abcd", 3))
	got := llm.TruncateText("the quick brown fox jumps over the lazy dog", 20)
	assert.Equal(t, "the quick brown fox…", got)
	assert.LessOrEqual(t, utf8.RuneCountInString(got), 20)
	got = llm.TruncateText(strings.Repeat("é", 50), 10)
	assert.Equal(t, strings.Repeat("é", 9)+"…", got, "counts runes, not bytes")
}

func TestExtractJSON(t *testing.T) {
	tests := []struct {
		name, in, want string
		ok             bool
	}{
		{"bare", `{"a":1}`, `{"a":1}`, true},
		{"fenced", "Sure!\n```json\n{\"a\": [1, 2]}\n```\nDone.", `{"a": [1, 2]}`, true},
		{"fence without info", "```\n[1,2]\n```", `[1,2]`, true},
		{"prose", `Here is my ranking: {"a": "b"} I hope it helps.`, `{"a": "b"}`, true},
		{"object before bracket in prose", `As noted in [1], the answer is {"a": 2}`, `{"a": 2}`, true},
		{"unclosed fence", "```json\n{\"a\":3}", `{"a":3}`, true},
		{"truncated", `{"a": [1, 2`, ``, false},
		{"none", `I cannot help with that.`, ``, false},
		{"empty", "  \n ", ``, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := llm.ExtractJSON(tc.in, nil)
			require.Equal(t, tc.ok, ok)
			if ok {
				assert.JSONEq(t, tc.want, string(got))
			}
		})
	}
	t.Run("accept skips values", func(t *testing.T) {
		got, ok := llm.ExtractJSON(`{"x":1} then {"ranking":["A"]}`, func(raw json.RawMessage) bool {
			return strings.Contains(string(raw), "ranking")
		})
		require.True(t, ok)
		assert.JSONEq(t, `{"ranking":["A"]}`, string(got))
	})
}

func TestLLMModel(t *testing.T) {
	t.Setenv(llm.EnvModel, "")
	assert.Equal(t, llm.DefaultModel, llm.Model(""))
	t.Setenv(llm.EnvModel, "llama3.2:3b")
	assert.Equal(t, "llama3.2:3b", llm.Model(""))
	assert.Equal(t, "phi4-mini", llm.Model("phi4-mini"))
}

func TestChatStreamed(t *testing.T) {
	srv := ollamatest.New(t, ollamatest.Fixed(ollamatest.Reply{Content: `{"ranking":["KDTQ","BXMR"]}`, Chunk: 3}))
	// Stream left nil: Ollama streams; Chat joins the chunks.
	got, err := llm.Chat(t.Context(), srv.Client(), &api.ChatRequest{Model: "m"}, 0)
	require.NoError(t, err)
	assert.Equal(t, `{"ranking":["KDTQ","BXMR"]}`, got)
	assert.True(t, srv.Requests()[0].Streaming())
}
