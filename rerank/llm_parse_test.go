package rerank_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/rerank"
)

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
