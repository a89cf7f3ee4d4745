package cite_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/cite"
	"github.com/citefind/citefind/corpus"
)

// cslDir is where Debian's citation-style-language-styles puts the styles.
const cslDir = "/usr/share/citation-style-language/styles"

// minMatch is the share of bibliography entries per style that must equal
// pandoc's after normalisation.
const minMatch = 0.95

func loadFixture(t *testing.T) []corpus.Paper {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "styles", "items.json"))
	require.NoError(t, err)
	var ps []corpus.Paper
	require.NoError(t, json.Unmarshal(b, &ps))
	require.GreaterOrEqual(t, len(ps), 60)
	return ps
}

var (
	entryRe  = regexp.MustCompile(`(?s)::: \{#ref-(\S+) \.csl-entry\}\n(.*?)\n:::`)
	spanRe   = regexp.MustCompile(`(?s)^\[(.*?) ?\]\{\.csl-left-margin\}\[(.*)\]\{\.csl-right-inline\}$`)
	linkRe   = regexp.MustCompile(`\[([^\]]*)\]\(([^)]*)\)`)
	escapeRe = regexp.MustCompile(`\\([\[\]*_\\#<>` + "`" + `])`)
	spaceRe  = regexp.MustCompile(`\s+`)
)

// normalise makes pandoc's Markdown and ours comparable: csl spans and
// links unwrapped, backslash escapes removed, whitespace collapsed.
func normalise(s string) string {
	s = spanRe.ReplaceAllString(strings.TrimSpace(s), "$1 $2")
	s = linkRe.ReplaceAllString(s, "$1")
	s = escapeRe.ReplaceAllString(s, "$1")
	return strings.TrimSpace(spaceRe.ReplaceAllString(s, " "))
}

// pandocBibliography runs pandoc's citeproc over the papers with a CSL
// style and returns each entry by paper ID, in Markdown.
func pandocBibliography(t *testing.T, ps []corpus.Paper, csl string) map[string]string {
	t.Helper()
	dir := t.TempDir()
	items, err := json.Marshal(ps)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "items.json"), items, 0o644))
	// Cite every item once, in fixture order, so numeric styles number them
	// in that order.
	var doc strings.Builder
	for _, p := range ps {
		fmt.Fprintf(&doc, "[@%s]\n\n", p.ID)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "doc.md"), []byte(doc.String()), 0o644))
	cmd := exec.CommandContext(t.Context(), "pandoc", "--citeproc", "--csl", filepath.Join(cslDir, csl),
		"--bibliography", filepath.Join(dir, "items.json"), "-t", "markdown-smart-citations", "--wrap=none", filepath.Join(dir, "doc.md"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	outb, err := cmd.Output()
	require.NoError(t, err, stderr.String())
	got := map[string]string{}
	for _, m := range entryRe.FindAllStringSubmatch(string(outb), -1) {
		got[m[1]] = m[2]
	}
	return got
}

// TestStylesAgainstPandoc compares every bibliography entry of the fixture
// with pandoc's citeproc, per style. It needs pandoc and the CSL styles
// (scripts/install-test-deps.sh installs both) and skips without them.
func TestStylesAgainstPandoc(t *testing.T) {
	if _, err := exec.LookPath("pandoc"); err != nil {
		t.Skip("pandoc is not installed: run scripts/install-test-deps.sh (apt-get install pandoc citation-style-language-styles)")
	}
	if _, err := os.Stat(filepath.Join(cslDir, "apa.csl")); err != nil {
		t.Skip("CSL styles missing in " + cslDir + ": run scripts/install-test-deps.sh")
	}
	ps := loadFixture(t)
	var report strings.Builder
	for _, st := range cite.Styles {
		t.Run(string(st), func(t *testing.T) {
			want := pandocBibliography(t, ps, st.CSLFile())
			require.Len(t, want, len(ps))
			bib := cite.NewBibliography(st, cite.Markdown, ps)
			match := 0
			var diffs []string
			for i, p := range bib.Papers {
				got := normalise(bib.Entries[i])
				w := normalise(want[p.ID])
				if got == w {
					match++
				} else {
					diffs = append(diffs, fmt.Sprintf("  %s\n    pandoc: %s\n    citefind: %s", p.ID, w, got))
				}
			}
			rate := float64(match) / float64(len(ps))
			fmt.Fprintf(&report, "%s: %d/%d entries match (%.1f%%)\n", st, match, len(ps), 100*rate)
			for _, d := range diffs {
				fmt.Fprintln(&report, d)
			}
			t.Logf("%s: %d/%d match (%.1f%%)", st, match, len(ps), 100*rate)
			assert.GreaterOrEqual(t, rate, minMatch, "entries differing from pandoc:\n%s", strings.Join(diffs, "\n"))
		})
	}
	if *updateReport {
		require.NoError(t, os.WriteFile(filepath.Join("testdata", "styles", "pandoc-diff.txt"), []byte(report.String()), 0o644))
	}
}
