package rerank_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/rerank"
)

func TestRandomIDs(t *testing.T) {
	ids := rerank.RandomIDs(500, 7)
	require.Len(t, ids, 500)
	seen := map[string]bool{}
	for _, id := range ids {
		require.Len(t, id, rerank.IDLen)
		assert.Equal(t, strings.Trim(id, "BCDFGHJKLMNPQRSTVWXZ"), "", "consonants only: %s", id)
		assert.False(t, seen[id], "duplicate %s", id)
		seen[id] = true
	}
	assert.Equal(t, ids[:30], rerank.RandomIDs(30, 7)[:30], "a seed fixes the IDs")
	assert.NotEqual(t, rerank.RandomIDs(30, 7), rerank.RandomIDs(30, 8))
	assert.NotEqual(t, rerank.RandomIDs(30, 0), rerank.RandomIDs(30, 0), "seed 0: new IDs each call")
	assert.Empty(t, rerank.RandomIDs(0, 1))
}

func TestNormalizeID(t *testing.T) {
	for in, want := range map[string]string{
		"KDTQ": "KDTQ", "kdtq": "KDTQ", "[KDTQ]": "KDTQ", ` "KDTQ" `: "KDTQ", "#KDTQ": "KDTQ",
		"ID: KDTQ": "KDTQ", "id KDTQ": "KDTQ", "**KDTQ**": "KDTQ", "KDTQ.": "KDTQ", "ID": "ID", "": "",
	} {
		assert.Equal(t, want, rerank.NormalizeID(in), "NormalizeID(%q)", in)
	}
}

func TestTruncateText(t *testing.T) {
	assert.Equal(t, "a b c", rerank.TruncateText("  a\n\tb   c ", 10))
	assert.Equal(t, "", rerank.TruncateText("abc", 0))
	assert.Equal(t, "a b", rerank.TruncateText("a"+strings.Repeat(" \n", 1000)+"b", 3), "whitespace runs count once")
	assert.Equal(t, "abc", rerank.TruncateText("abc", 3))
	assert.Equal(t, "ab…", rerank.TruncateText("abcd", 3))
	got := rerank.TruncateText("the quick brown fox jumps over the lazy dog", 20)
	assert.Equal(t, "the quick brown fox…", got)
	assert.LessOrEqual(t, utf8.RuneCountInString(got), 20)
	got = rerank.TruncateText(strings.Repeat("é", 50), 10)
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
			got, ok := rerank.ExtractJSON(tc.in, nil)
			require.Equal(t, tc.ok, ok)
			if ok {
				assert.JSONEq(t, tc.want, string(got))
			}
		})
	}
	t.Run("accept skips values", func(t *testing.T) {
		got, ok := rerank.ExtractJSON(`{"x":1} then {"ranking":["A"]}`, func(raw json.RawMessage) bool {
			return strings.Contains(string(raw), "ranking")
		})
		require.True(t, ok)
		assert.JSONEq(t, `{"ranking":["A"]}`, string(got))
	})
}

func TestParseRanking(t *testing.T) {
	ids := []string{"KDTQ", "BXMR", "PLNW", "ZZCH"}
	tests := []struct {
		name      string
		reply     string
		order     []int // nil: unusable
		ranked    int
		unknown   int
		numbers   int
		dups      int
		salvaged  bool
		failure   string // substring
		nWarnings int
	}{
		{name: "valid", reply: `{"ranking":["PLNW","KDTQ","ZZCH","BXMR"]}`, order: []int{2, 0, 3, 1}, ranked: 4},
		{name: "prose and fence", reply: "Sure, here you go:\n```json\n{\"ranking\": [\"BXMR\", \"KDTQ\", \"PLNW\", \"ZZCH\"]}\n```", order: []int{1, 0, 2, 3}, ranked: 4},
		{name: "bare array lower case", reply: `["zzch", "[PLNW]"]`, order: []int{3, 2, 0, 1}, ranked: 2},
		{name: "other key", reply: `{"order":["BXMR"]}`, order: []int{1, 0, 2, 3}, ranked: 1},
		{name: "object entries", reply: `{"ranking":[{"id":"PLNW","score":0.9},{"id":"KDTQ"}]}`, order: []int{2, 0, 1, 3}, ranked: 2},
		{name: "duplicates keep first place", reply: `{"ranking":["PLNW","KDTQ","PLNW","KDTQ","BXMR"]}`, order: []int{2, 0, 1, 3}, ranked: 3, dups: 2, nWarnings: 1},
		{name: "unknown IDs", reply: `{"ranking":["QQQQ","PLNW","ABCD","KDTQ"]}`, order: []int{2, 0, 1, 3}, ranked: 2, unknown: 2, nWarnings: 1},
		{name: "numbers in range are not mapped", reply: `{"ranking":["PLNW", 1, "2", 3.5]}`, order: []int{2, 0, 1, 3}, ranked: 1, unknown: 3, numbers: 3, nWarnings: 1},
		{name: "only numbers", reply: `{"ranking":[2,1,4,3]}`, unknown: 4, numbers: 4, failure: "numbers instead of candidate IDs"},
		{name: "out of range numbers", reply: `{"ranking":[31,99,-1]}`, unknown: 3, numbers: 3, failure: "numbers"},
		{name: "missing candidates", reply: `{"ranking":["ZZCH"]}`, order: []int{3, 0, 1, 2}, ranked: 1},
		{name: "empty", reply: "", failure: "empty"},
		{name: "whitespace", reply: " \n\t", failure: "empty"},
		{name: "empty list", reply: `{"ranking":[]}`, failure: "named no candidate"},
		{name: "all unknown", reply: `{"ranking":["AAAA","BBBB"]}`, unknown: 2, failure: "named no candidate"},
		{name: "truncated", reply: `{"ranking": ["BXMR", "ZZCH", "KD`, order: []int{1, 3, 0, 2}, ranked: 2, salvaged: true, nWarnings: 1},
		{name: "non-JSON prose with IDs", reply: `The best match is PLNW, then KDTQ. JSON is hard.`, order: []int{2, 0, 1, 3}, ranked: 2, salvaged: true, nWarnings: 1},
		{name: "non-JSON", reply: `I am sorry, but I cannot rank these papers.`, salvaged: true, failure: "not JSON"},
		{name: "JSON without a list", reply: `{"answer": "PLNW"}`, salvaged: true, order: []int{2, 0, 1, 3}, ranked: 1, nWarnings: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := rerank.ParseRanking(tc.reply, ids)
			assert.Equal(t, tc.order, r.Order, "order")
			assert.Equal(t, tc.ranked, r.Ranked, "ranked")
			assert.Equal(t, tc.unknown, r.Unknown, "unknown")
			assert.Equal(t, tc.numbers, r.Numbers, "numbers")
			assert.Equal(t, tc.dups, r.Duplicates, "duplicates")
			assert.Equal(t, tc.salvaged, r.Salvaged, "salvaged")
			if tc.failure != "" {
				assert.Contains(t, r.Failure, tc.failure)
			} else {
				assert.Empty(t, r.Failure)
			}
			assert.Len(t, r.Warnings, tc.nWarnings, "%q", r.Warnings)
			if r.Order != nil {
				assertPermutation(t, len(ids), r.Order)
			}
		})
	}
}

// assertPermutation checks that order is a permutation of 0..n-1.
func assertPermutation(t *testing.T, n int, order []int) {
	t.Helper()
	require.Len(t, order, n)
	seen := make([]bool, n)
	for _, i := range order {
		require.True(t, i >= 0 && i < n && !seen[i], "order %v", order)
		seen[i] = true
	}
}
