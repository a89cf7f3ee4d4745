package cite_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAstralCharacters renders items whose titles, container titles and
// names hold characters outside the Basic Multilingual Plane — emoji
// (with a skin tone, a joined family), mathematical letters, a family
// name in CJK Extension B (𠮷田) — in the six built-in styles and in a
// minimal style for each text-case value, and requires every such
// character back, never U+FFFD, and, when node is installed, exactly
// what citeproc-js prints on Node.js. goja's case mapping turned the
// lone surrogate that citeproc-js's capitalising leaves into U+FFFD:
// MLA printed "Why �� Means" for an ACM-CR title "why 🍕 means"
// (cite/csl/jscase.go).
func TestAstralCharacters(t *testing.T) {
	if raceEnabled {
		t.Skip("one goroutine driving goja, which the race detector slows about tenfold: make test runs it without -race, in its second pass (LONG_TESTS)")
	}
	items := []json.RawMessage{
		json.RawMessage(`{"id":"emoji","type":"paper-conference","title":"Repurposing emoji for personalised communication: why 🍕 means ‘I love you’","author":[{"family":"Wiseman","given":"Sarah"},{"family":"Gould","given":"Sandy J. J."}],"container-title":"Proceedings of the 2018 CHI conference on human factors in computing systems","publisher":"ACM","page":"1-10","issued":{"date-parts":[[2018]]}}`),
		json.RawMessage(`{"id":"math","type":"article-journal","title":"𝒜-modules over 𝔽_q and the 𝕜-linear case: 𝒜 survey","author":[{"family":"Noether","given":"Emmy"}],"container-title":"journal of 𝔸lgebra","volume":"12","issue":"3","page":"45-67","issued":{"date-parts":[[2001,5]]}}`),
		json.RawMessage(`{"id":"tone","type":"book","title":"👍🏻 or 👎: emoji reactions, 👨‍👩‍👧 families and 🍕","author":[{"family":"𠮷田","given":"𠮷子"},{"family":"Doe","given":"𝒥ane"}],"publisher":"Example Press","publisher-place":"Berlin","issued":{"date-parts":[[2020]]}}`),
		json.RawMessage(`{"id":"end","type":"webpage","title":"ending with an emoji 🍕","container-title":"🍕 blog","URL":"https://example.com/🍕","issued":{"date-parts":[[2022,1,2]]}}`),
	}
	doc := citeEach(t, items)
	layout := func(tc string) string {
		return fmt.Sprintf(`<names variable="author"><name initialize-with=". "/></names><text variable="title" text-case=%q prefix=" "/><text variable="container-title" text-case=%q prefix=" "/>`, tc, tc)
	}
	eng, names, sts, nodeRes, nodeWhat := textCaseStyles(t, t.TempDir(), []string{"apa", "ieee", "mla", "chicago", "harvard", "vancouver"},
		[]string{"title", "capitalize-first", "capitalize-all", "sentence", "uppercase", "lowercase"}, layout, doc)
	// the characters of the titles, container titles and names
	astral := []string{"🍕", "𝒜", "𝔽", "𝕜", "𝔸", "👍", "🏻", "👎", "👨", "👩", "👧", "𠮷", "𝒥"}
	for i, st := range sts {
		t.Run(filepath.Base(names[i]), func(t *testing.T) {
			out, err := eng.Render(t.Context(), st, doc)
			require.NoError(t, err)
			var all strings.Builder
			for _, c := range out.Citations {
				all.WriteString(string(c))
			}
			for _, e := range out.Entries {
				all.WriteString(string(e.Text))
				assert.NotContains(t, string(e.Text), string(utf8.RuneError), "entry %s", e.ID)
			}
			assert.NotContains(t, all.String(), string(utf8.RuneError))
			if strings.Contains(names[i], "case-") {
				// the minimal styles print every name, title and
				// container title in full
				for _, a := range astral {
					assert.Contains(t, all.String(), a)
				}
			}
			if nodeRes != nil {
				_, _, _, _, diffs := compareNode(out, nodeRes[i])
				assert.Empty(t, diffs, "citefind's rendering differs from citeproc-js's on %s", nodeWhat)
			}
		})
	}
}
