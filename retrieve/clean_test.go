package retrieve_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/internal/datadir"
	"github.com/citefind/citefind/retrieve"
)

func TestClean(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		// numeric bracket markers
		{"single", "BM25 is strong [12].", "BM25 is strong."},
		{"list", "as shown before [12, 14–16], BM25 wins", "as shown before, BM25 wins"},
		{"hyphen range", "neural rankers [3-5] are slow", "neural rankers are slow"},
		{"no spaces", "several works [1,2,3] exist", "several works exist"},
		{"em dash", "see [3—5] for more", "see for more"},
		{"minus sign range", "prior work [4−6] did", "prior work did"},
		{"space after dash", "models [1, 2– 3, 9] were", "models were"},
		{"semicolons", "models [1; 2] were", "models were"},
		{"chained", "earlier [1], [2]–[4] studies", "earlier studies"},
		{"adjacent", "earlier [1][2] studies", "earlier studies"},
		{"glued to word", "LETOR[23] data", "LETOR data"},
		{"start of text", "[1] showed that X", "showed that X"},
		{"start with comma", "[1], [2] showed that X", "showed that X"},
		{"CITATION", "as shown by [CITATION], we", "as shown by, we"},
		{"CITATIONS", "language models [CITATIONS].", "language models."},
		{"CIT", "tagged using TnT [CIT] trained on the Brown Corpus [CIT][CIT].", "tagged using TnT trained on the Brown Corpus."},
		{"question mark", "as in [?] and [??].", "as in and."},
		{"in parentheses", "(see [3]) transformers", "transformers"},
		{"in parentheses with eg", "rankers (e.g., [3, 4]) are", "rankers are"},
		{"ie marker", "a survey (i.e. [36]) of", "a survey of"},
		{"text kept in group", "(see a recent survey [46])", "(see a recent survey)"},
		{"after et al", "Smith et al. [12] showed", "Smith showed"},

		// author-year parentheticals
		{"et al comma", "dense retrieval (Smith et al., 2020) works", "dense retrieval works"},
		{"two groups", "works (Smith and Jones, 2019; Doe, 2020a).", "works."},
		{"eg", "rankers (e.g., Smith 2020) help", "rankers help"},
		{"see", "rankers (see Smith et al. 2020) help", "rankers help"},
		{"see also", "rankers (see also Smith & Jones, 2019) help", "rankers help"},
		{"three authors", "(Smith, Jones, and Doe, 2018) said", "said"},
		{"particles", "as argued (van der Berg, 2015; de Silva, 2016)", "as argued"},
		{"two-word name", "as argued (Van Rijsbergen, 1979).", "as argued."},
		{"apostrophe", "as argued (O'Brien 2011).", "as argued."},
		{"years list", "as argued (Smith, 2019, 2020b).", "as argued."},
		{"locator", "as argued (Smith, 2019, p. 12).", "as argued."},
		{"among others", "as argued (Smith, 2019, among others).", "as argued."},
		{"n.d.", "as argued (Smith, n.d.).", "as argued."},
		{"brackets", "as argued [Smith et al., 2020].", "as argued."},
		{"mixed group", "the model (BM25; Robertson et al., 2009) is", "the model (BM25) is"},
		{"mixed group citation first", "the model (Robertson et al., 2009; BM25) is", "the model (BM25) is"},

		// inline author-year
		{"inline et al", "Smith et al. (2020) proposed X", "Smith proposed X"},
		{"inline two", "Smith and Jones (2019) proposed X", "Smith and Jones proposed X"},
		{"inline letter year", "Smith (2020a) proposed X", "Smith proposed X"},
		{"possessive", "echoes MacFarlane et al.'s findings", "echoes MacFarlane's findings"},
		{"et al sentence end", "as shown by Smith et al. We then", "as shown by Smith. We then"},
		{"et al text end", "as shown by Smith et al.", "as shown by Smith."},
		{"et al comma", "Smith et al., in turn, show", "Smith, in turn, show"},

		// LaTeX
		{"cite", `as in~\cite{vaswani2017} we`, "as in we"},
		{"citep", `transformers \citep{a,b}.`, "transformers."},
		{"citet opt", `\citet[p.~3][]{x} showed`, "showed"},
		{"parencite star", `models \parencite*{y}, which`, "models, which"},

		// URLs
		{"url", "code at https://github.com/x/y.", "code at."},
		{"url in parens", "code (https://example.org/a?b=1) is", "code is"},
		{"www", "see www.example.com for data", "see for data"},

		// kept as is
		{"acronym", "Okapi (BM25) is a model", "Okapi (BM25) is a model"},
		{"see section", "as discussed (see Section 3) before", "as discussed (see Section 3) before"},
		{"prose year", "in 2020 we built it", "in 2020 we built it"},
		{"interval", "scores in [0, 1] and [−1, 1]", "scores in [0, 1] and [−1, 1]"},
		{"enumeration", "(1) first, (ii) second", "(1) first, (ii) second"},
		{"month", "released (March 2020) as", "released (March 2020) as"},
		{"acronym year", "the track (TREC 2019) had", "the track (TREC 2019) had"},
		{"decimal", "a score of 3.5, then", "a score of 3.5, then"},
		{"ellipsis quote", "[... my son sat still ...]", "[... my son sat still ...]"},
		{"math brackets", "f(x) = g[x]", "f(x) = g[x]"},

		// whitespace and punctuation
		{"whitespace", "  a \t b\n\nc\u00a0d  ", "a b c d"},
		{"empty", "", ""},
		{"only marker", "[1]", ""},
		{"empty group", "a () b [ ] c", "a b c"},
		{"invalid utf8", "a \xff b [1]", "a b"},
		{"nested", "x " + strings.Repeat("(", 40) + "see [1]" + strings.Repeat(")", 40) + " y", "x y"},
		{"nested citations", "x ((Smith, 2020); [2]) y", "x y"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := retrieve.Clean(tc.in)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, got, retrieve.Clean(got), "not idempotent")
		})
	}
}

// citationMarker is a numeric bracket marker as ACM-CR's topics write them.
var citationMarker = regexp.MustCompile(`\[\s*[1-9]\d*(?:\s*[-–—−,;]\s*[1-9]\d*)*\s*\]`)

func TestCleanACMCRTopics(t *testing.T) {
	dir := filepath.Join(datadir.Bench("acm-cr"), "data", "topics+qrels")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("ACM-CR data not found at %s (set %s): %v", dir, datadir.Env, err)
	}
	for _, set := range []string{"contexts", "sentences"} {
		b, err := os.ReadFile(filepath.Join(dir, set+".topics"))
		require.NoError(t, err)
		lines := strings.Split(string(b), "\n")
		descs := 0
		for i, line := range lines {
			if !strings.HasPrefix(line, "<desc>") || i+1 >= len(lines) {
				continue
			}
			desc := lines[i+1] // the description is on the line after <desc>
			descs++
			got := retrieve.Clean(desc)
			if m := citationMarker.FindString(got); m != "" {
				t.Errorf("%s line %d: marker %q survives in %q", set, i+2, m, got)
			}
			assert.Equal(t, got, retrieve.Clean(got), "%s line %d: not idempotent", set, i+2)
			if descs <= 3 {
				t.Logf("%s before: %s", set, desc)
				t.Logf("%s after:  %s", set, got)
			}
		}
		require.Positive(t, descs, "no <desc> in %s", set)
	}
}

func FuzzClean(f *testing.F) {
	for _, s := range []string{
		"BM25 is strong [12, 14–16].",
		"works (Smith and Jones, 2019; Doe, 2020a).",
		"Smith et al. (2020) proposed (see [3]) X",
		`as in~\cite{vaswani2017} we`,
		"code at https://github.com/x/y.",
		"(see (Smith, 2020)) and [[1]]",
		"( , ; [ ] ) . , ;",
		"[CITATION][CITATIONS][?]",
		"a \xff b",
		"(e.g., [1], Smith et al. 2020; BM25)",
		"((((((((((see [1]))))))))))",
		"Smith et al. (2020a, 2021) and\tJones et al.'s (2019) work. Doe et al. We",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := retrieve.Clean(s)
		if len(got) > len(s)+4 {
			t.Fatalf("Clean(%q) = %q: longer than the input", s, got)
		}
		if !utf8.ValidString(got) {
			t.Fatalf("Clean(%q) = %q: invalid UTF-8", s, got)
		}
		if again := retrieve.Clean(got); again != got {
			t.Fatalf("not idempotent:\n in:    %q\n once:  %q\n twice: %q", s, got, again)
		}
	})
}
