package cite_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/cite"
	"github.com/citefind/citefind/corpus"
)

// TestEveryStoredIDParses: every ID the store can hold (corpus.ValidID,
// made here from hostile random strings by corpus.EscapeID, as ingest
// makes them) survives a placeholder: alone, in a list, as a secondary
// source and with a quote, it parses back to itself.
func TestEveryStoredIDParses(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 13))
	alphabet := []rune(`abcXYZ019-._~:;()+=*'!@$&%/,|"[]⟦⟧<>{}\#?` + "`^ \t\néü字\u00a0\u200b")
	random := func() string {
		n := 1 + r.IntN(24)
		var b strings.Builder
		if r.IntN(2) == 0 {
			b.WriteString("10.")
			b.WriteString(string(rune('1' + r.IntN(9))))
			b.WriteString("234/")
		}
		for range n {
			b.WriteRune(alphabet[r.IntN(len(alphabet))])
		}
		return b.String()
	}
	for i := range 3000 {
		raw := random()
		id := corpus.EscapeID(raw)
		if id == "" {
			continue
		}
		require.True(t, corpus.ValidID(id), "EscapeID(%q) = %q is not a valid ID", raw, id)
		other := corpus.EscapeID(random())
		if other == "" {
			other = "x"
		}
		tests := []struct {
			doc  string
			want []cite.Item
		}{
			{"A [[cite:" + id + "]] b.", []cite.Item{{ID: id}}},
			{"A [[cite:" + other + ", " + id + "]].", []cite.Item{{ID: other}, {ID: id}}},
			{"A [[cite:" + id + "|" + other + "]].", []cite.Item{{ID: id, Secondary: other}}},
			{"A ⟦cite:" + id + ` "a quote"⟧.`, []cite.Item{{ID: id, Quote: "a quote"}}},
		}
		for _, tc := range tests {
			d, err := cite.Parse(tc.doc)
			require.NoError(t, err, "case %d: %q", i, tc.doc)
			require.Len(t, d.Citations, 1, tc.doc)
			got := d.Citations[0].Items
			require.Len(t, got, len(tc.want), tc.doc)
			for j := range got {
				assert.Equal(t, tc.want[j].ID, got[j].ID, tc.doc)
				assert.Equal(t, tc.want[j].Secondary, got[j].Secondary, tc.doc)
				assert.Equal(t, tc.want[j].Quote, got[j].Quote, tc.doc)
			}
		}
	}
}
