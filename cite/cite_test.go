package cite_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/cite"
	"github.com/citefind/citefind/cite/csl"
	"github.com/citefind/citefind/corpus"
)

// fakeStore is a Lookup over a map that counts its calls.
type fakeStore struct {
	papers map[string]corpus.Paper
	calls  int
}

func (f *fakeStore) GetMany(_ context.Context, ids []string) (map[string]corpus.Paper, error) {
	f.calls++
	out := map[string]corpus.Paper{}
	for _, id := range ids {
		if p, ok := f.papers[id]; ok {
			out[id] = p
		}
	}
	return out, nil
}

func testStore() *fakeStore {
	ps := map[string]corpus.Paper{
		"smith2020": {ID: "10.1/smith", Type: "article-journal", Title: "Fusion of rankings", Abstract: "We show that reciprocal rank fusion beats score fusion on ten collections.",
			Authors: []corpus.Author{{Family: "Smith", Given: "Anna"}}, Year: 2020, Venue: "Journal of Tests", Volume: "3", Pages: "1-9"},
		"doe2022": {ID: "10.1/doe", Type: "book", Title: "Retrieval", Authors: []corpus.Author{{Family: "Doe", Given: "Jane"}}, Year: 2022, Publisher: "Press"},
		"lee2019": {ID: "arxiv:1901.00001", Type: "article", Title: "Dense things", Authors: []corpus.Author{{Family: "Lee", Given: "Kim"}, {Family: "Park", Given: "Ji"}, {Family: "Cho", Given: "Su"}}, Year: 2019, Venue: "arXiv", URL: "https://arxiv.org/abs/1901.00001"},
		"anon":    {ID: "h:anon", Type: "webpage", Title: "Untitled Notes", URL: "https://example.org"},
		"hofA":    {ID: "h:a", Type: "article-journal", Title: "Alpha", Authors: []corpus.Author{{Family: "Hof", Given: "K"}}, Year: 2020, Venue: "J"},
		"hofB":    {ID: "h:b", Type: "article-journal", Title: "Beta", Authors: []corpus.Author{{Family: "Hof", Given: "K"}}, Year: 2020, Venue: "J"},
	}
	ps["10.1/smith"] = ps["smith2020"]
	ps["10.1/doe"] = ps["doe2022"]
	ps["arxiv:1901.00001"] = ps["lee2019"]
	return &fakeStore{papers: ps}
}

func TestParseGrammar(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want [][]cite.Item // per citation: ID, Secondary, Quote only
	}{
		{"simple", "A [[cite:x1]] b", [][]cite.Item{{{ID: "x1"}}}},
		{"brackets", "A ⟦cite:x1⟧ b", [][]cite.Item{{{ID: "x1"}}}},
		{"several", "[[cite: a , b,c ]]", [][]cite.Item{{{ID: "a"}, {ID: "b"}, {ID: "c"}}}},
		{"secondary", "[[cite:p|s]]", [][]cite.Item{{{ID: "p", Secondary: "s"}}}},
		{"quote", `[[cite:a "rank fusion, works"]]`, [][]cite.Item{{{ID: "a", Quote: "rank fusion, works"}}}},
		{"quote with brackets", `[[cite:a "x ]] y"]]`, [][]cite.Item{{{ID: "a", Quote: "x ]] y"}}}},
		{"doi", "[[cite:10.1145/1571941.1572114]]", [][]cite.Item{{{ID: "10.1145/1571941.1572114"}}}},
		{"case", "[[CITE:a]]", [][]cite.Item{{{ID: "a"}}}},
		{"code span skipped", "`[[cite:a]]` and [[cite:b]]", [][]cite.Item{{{ID: "b"}}}},
		{"double backtick span", "``x [[cite:a]] ` y`` [[cite:b]]", [][]cite.Item{{{ID: "b"}}}},
		{"fenced block skipped", "```\n[[cite:a]]\n```\n[[cite:b]]\n~~~go\n[[cite:c\n~~~\n", [][]cite.Item{{{ID: "b"}}}},
		{"none", "plain [1] text", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := cite.Parse(tc.in)
			require.NoError(t, err)
			var got [][]cite.Item
			for _, c := range d.Citations {
				var items []cite.Item
				for _, it := range c.Items {
					items = append(items, cite.Item{ID: it.ID, Secondary: it.Secondary, Quote: it.Quote})
				}
				got = append(got, items)
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		line, col int
		msg       string
	}{
		{"unclosed", "ab\ncd [[cite:x y", 2, 4, "unclosed"},
		{"unclosed at eol", "[[cite:x\n]]", 1, 1, "unclosed"},
		{"empty", "é [[cite:]]", 1, 10, "empty ID"},
		{"empty brackets", "⟦cite: ⟧", 1, 8, "empty ID"},
		{"stray comma", "[[cite:a,,b]]", 1, 10, "stray separator"},
		{"trailing comma", "[[cite:a,]]", 1, 9, "stray \",\""},
		{"leading bar", "[[cite:|b]]", 1, 8, "stray separator"},
		{"double bar", "[[cite:a|b|c]]", 1, 11, "stray \"|\""},
		{"empty secondary", "[[cite:a|]]", 1, 10, "secondary"},
		{"unclosed quote", `[[cite:a "abc]]`, 1, 1, "quote"},
		{"missing comma", "[[cite:a b]]", 1, 10, "separate IDs"},
		{"empty quote", `[[cite:a ""]]`, 1, 10, "empty quote"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := cite.Parse(tc.in)
			require.Error(t, err)
			require.ErrorIs(t, err, cite.ErrSyntax)
			var se *cite.SyntaxError
			require.True(t, errors.As(err, &se))
			assert.Equal(t, [2]int{tc.line, tc.col}, [2]int{se.Line, se.Col}, se.Error())
			assert.Contains(t, se.Msg, tc.msg)
		})
	}
}

func TestResolveNumberingAndIdempotence(t *testing.T) {
	st := testStore()
	doc := "Intro [[cite:lee2019]].\n\nThen [[cite:smith2020,doe2022,smith2020]] and ⟦cite:lee2019⟧ again [[cite:10.1/smith]].\n\n```\n[[cite:nothere]]\n```\n"
	res, err := cite.Resolve(t.Context(), doc, st, cite.Options{Engine: engine, Style: cite.IEEE})
	require.NoError(t, err)
	assert.Equal(t, 1, st.calls, "one batch lookup")
	assert.Equal(t, []string{"arxiv:1901.00001", "10.1/smith", "10.1/doe"}, res.Cited)
	assert.Contains(t, res.Text, "<!--cite:lee2019-->[1]<!--/cite-->")
	assert.Contains(t, res.Text, "<!--cite:smith2020,doe2022,smith2020-->[2], [3]<!--/cite-->")
	assert.Contains(t, res.Text, "[[cite:nothere]]", "code block untouched")
	assert.Contains(t, res.Text, "[1] K. Lee, J. Park, and S. Cho, “Dense things,” *arXiv*. 2019.")
	assert.Contains(t, res.Text, "[1]: cite:arxiv:1901.00001\n[2]: cite:10.1/smith\n[3]: cite:10.1/doe\n")

	// Idempotent.
	again, err := cite.Resolve(t.Context(), res.Text, st, cite.Options{Engine: engine, Style: cite.IEEE})
	require.NoError(t, err)
	assert.Equal(t, res.Text, again.Text)

	// Regenerate the first paragraph with a new citation: everything renumbers.
	edited := strings.Replace(res.Text, "Intro <!--cite:lee2019-->[1]<!--/cite-->.", "Intro [[cite:doe2022]] and [2].", 1)
	re, err := cite.Resolve(t.Context(), edited, st, cite.Options{Engine: engine, Style: cite.IEEE})
	require.NoError(t, err)
	assert.Equal(t, []string{"10.1/doe", "10.1/smith", "arxiv:1901.00001"}, re.Cited)
	assert.Contains(t, re.Text, "Intro <!--cite:doe2022-->[1]<!--/cite--> and <!--cite:10.1/smith-->[2]<!--/cite-->.")
	assert.Contains(t, re.Text, "<!--cite:smith2020,doe2022,smith2020-->[1], [2]<!--/cite-->")
	assert.Equal(t, 1, strings.Count(re.Text, "## References"))

	// No citations: unchanged.
	plain, err := cite.Resolve(t.Context(), "nothing [1] here\n", st, cite.Options{Engine: engine})
	require.NoError(t, err)
	assert.Equal(t, "nothing [1] here\n", plain.Text)
}

// citationCase is a document and the text it resolves to in a style,
// before the bibliography.
type citationCase struct {
	style cite.Style
	doc   string
	want  string
}

// checkCitationText resolves each case's document as text and compares
// what comes before the bibliography.
func checkCitationText(t *testing.T, st *fakeStore, tests []citationCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(string(tc.style)+" "+tc.doc, func(t *testing.T) {
			res, err := cite.Resolve(t.Context(), tc.doc, st, cite.Options{Engine: engine, Style: tc.style, Format: cite.Text})
			require.NoError(t, err)
			body, _, _ := strings.Cut(res.Text, "\n\n")
			assert.Equal(t, tc.want, body)
		})
	}
}

func TestResolveAuthorYear(t *testing.T) {
	st := testStore()
	tests := []citationCase{
		{cite.APA, "[[cite:smith2020|doe2022]]", "(Smith, 2020, as cited in Doe, 2022)"},
		{cite.APA, "[[cite:lee2019]]", "(Lee et al., 2019)"},
		{cite.APA, "[[cite:hofA,hofB]]", "(Hof, 2020a, 2020b)"},
		{cite.APA, "[[cite:anon]]", "(Untitled Notes, n.d.)"},
		{cite.Chicago, "[[cite:lee2019,smith2020]]", "(Lee, Park, and Cho 2019; Smith 2020)"},
		{cite.Harvard, "[[cite:anon]]", "(Untitled Notes, no date)"},
		{cite.MLA, "[[cite:hofA]] [[cite:hofB]]", "(Hof, “Alpha”) (Hof, “Beta”)"},
		{cite.Vancouver, "[[cite:smith2020,doe2022,lee2019]]", "(1–3)"},
		{cite.IEEE, "[[cite:smith2020,doe2022,lee2019]]", "[1]–[3]"},
	}
	checkCitationText(t, st, tests)
	res, err := cite.Resolve(t.Context(), "[[cite:anon]]", st, cite.Options{Engine: engine})
	require.NoError(t, err)
	require.Len(t, res.Warnings, 1)
	assert.Equal(t, "missing-metadata", res.Warnings[0].Kind)
	assert.Contains(t, res.Warnings[0].Msg, "Untitled Notes")
}

func TestResolveUnknownIDs(t *testing.T) {
	st := testStore()
	doc := "a [[cite:smith2020]]\nb [[cite:nope1, doe2022]] [[cite:smith2020|nope2]]\n"
	_, err := cite.Resolve(t.Context(), doc, st, cite.Options{Engine: engine})
	require.ErrorIs(t, err, cite.ErrUnknownID)
	var ue *cite.UnknownIDError
	require.True(t, errors.As(err, &ue))
	assert.Equal(t, []cite.UnknownID{{ID: "nope1", Line: 2, Col: 10}, {ID: "nope2", Line: 2, Col: 44}}, ue.IDs)

	res, err := cite.Resolve(t.Context(), doc, st, cite.Options{Engine: engine, Lenient: true})
	require.NoError(t, err)
	assert.Contains(t, res.Text, "⚠[[cite:nope1, doe2022]]")
	again, err := cite.Resolve(t.Context(), res.Text, st, cite.Options{Engine: engine, Lenient: true})
	require.NoError(t, err)
	assert.Equal(t, res.Text, again.Text)
}

func TestMergeDrafts(t *testing.T) {
	st := testStore()
	a := "Section A cites [1] and [2].\n\n[1]: cite:smith2020\n[2]: cite:lee2019\n"
	b := "Section B cites [1, 2] and [2].\n\n[1]: cite:doe2022\n[2]: cite:smith2020\n"
	merged, err := cite.Merge([]string{a, b})
	require.NoError(t, err)
	assert.Equal(t, "Section A cites [[cite:smith2020]] and [[cite:lee2019]].\n\nSection B cites [[cite:doe2022,smith2020]] and [[cite:smith2020]].\n", merged)
	res, err := cite.Resolve(t.Context(), merged, st, cite.Options{Engine: engine, Style: cite.IEEE, Format: cite.Text})
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(res.Text, "Section A cites [1] and [2].\n\nSection B cites [1], [3] and [1].\n\nReferences\n\n[1] A. Smith"), res.Text)

	_, err = cite.Merge([]string{"see [3]\n\n[1]: cite:a\n"})
	require.ErrorIs(t, err, cite.ErrSyntax)
}

func TestQuoteVerification(t *testing.T) {
	st := testStore()
	res, err := cite.Resolve(t.Context(), `[[cite:smith2020 "reciprocal rank fusion beats score fusion"]] [[cite:doe2022 "transformers are all you need"]]`, st, cite.Options{Engine: engine})
	require.NoError(t, err)
	var flagged []string
	for _, w := range res.Warnings {
		if w.Kind == "quote" {
			flagged = append(flagged, w.ID)
		}
	}
	assert.Equal(t, []string{"10.1/doe"}, flagged)
	assert.Greater(t, cite.QuoteSimilarity("reciprocal rank fusoin beats score fusion", st.papers["smith2020"]), 0.9)

	res, err = cite.Resolve(t.Context(), "[[cite:smith2020]] [[cite:doe2022]]", st, cite.Options{Engine: engine, Candidates: map[string]bool{"10.1/smith": true}})
	require.NoError(t, err)
	require.Len(t, res.Warnings, 1)
	assert.Equal(t, "not-retrieved", res.Warnings[0].Kind)
	assert.Equal(t, "10.1/doe", res.Warnings[0].ID)
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"[[cite:a]]", "⟦cite:a,b|c \"q\"⟧", "`[[cite:a]]`", "```\n[[cite:a\n```", "[[cite:a,,]]",
		"<!--cite:a-->[1]<!--/cite-->", "x [1]\n[1]: cite:a\n", "[[cite:a \"q", "<!-- citefind:bibliography -->x<!-- /citefind:bibliography -->"} {
		f.Add(s)
	}
	st := testStore()
	f.Fuzz(func(t *testing.T, s string) {
		d, err := cite.Parse(s)
		if err != nil {
			var el cite.ErrorList
			if !errors.As(err, &el) || len(el) == 0 {
				t.Fatalf("error is not a non-empty ErrorList: %v", err)
			}
			return
		}
		for _, c := range d.Citations {
			if c.Start < 0 || c.End > len(s) || c.Start >= c.End || len(c.Items) == 0 {
				t.Fatalf("bad citation %+v in %q", c, s)
			}
		}
		res, err := cite.Resolve(context.Background(), s, st, cite.Options{Engine: engine, Lenient: true})
		if err != nil {
			return
		}
		again, err := cite.Resolve(context.Background(), res.Text, st, cite.Options{Engine: engine, Lenient: true})
		if err != nil {
			t.Fatalf("resolved output does not parse: %v\n%q", err, res.Text)
		}
		if again.Text != res.Text {
			t.Fatalf("not idempotent:\n%q\n%q", res.Text, again.Text)
		}
	})
}

func TestResolveSecondarySources(t *testing.T) {
	st := testStore()
	tests := []struct {
		style cite.Style
		want  string
	}{
		{cite.APA, "(Smith, 2020, as cited in Doe, 2022)"},
		{cite.IEEE, "[1], as cited in [2]"},
		{cite.Vancouver, "(1, as cited in 2)"},
		{cite.Chicago, "(Smith 2020, as cited in Doe 2022)"},
	}
	for _, tc := range tests {
		t.Run(string(tc.style), func(t *testing.T) {
			res, err := cite.Resolve(t.Context(), "[[cite:smith2020|doe2022]]", st, cite.Options{Engine: engine, Style: tc.style, Format: cite.Text})
			require.NoError(t, err)
			body, _, _ := strings.Cut(res.Text, "\n\n")
			assert.Equal(t, tc.want, body)
			assert.Equal(t, []string{"10.1/smith", "10.1/doe"}, res.Cited)
			require.Len(t, res.Bibliography.Entries, 2)
		})
	}
}

// TestHostileMetadata: titles and URLs from the store never become live
// markup in Markdown or HTML output.
func TestHostileMetadata(t *testing.T) {
	st := &fakeStore{papers: map[string]corpus.Paper{
		"evil": {ID: "h:evil", Type: "webpage", Title: `<img src=x onerror=alert(1)> [click](javascript:alert(1)) <script>alert(2)</script>`,
			Authors: []corpus.Author{{Family: "O'<b>Hara", Given: "*Eve*"}}, Year: 2021, URL: "javascript:alert(3)"},
		"good": {ID: "10.1/good", Type: "article-journal", Title: "Fine", Authors: []corpus.Author{{Family: "Lee", Given: "A"}}, Year: 2020,
			Venue: "J", DOI: "10.1/good"},
	}}
	for _, style := range []cite.Style{cite.APA, cite.IEEE, cite.MLA} {
		t.Run(string(style), func(t *testing.T) {
			md, err := cite.Resolve(t.Context(), "See [[cite:evil]] and [[cite:good]].", st, cite.Options{Engine: engine, Style: style})
			require.NoError(t, err)
			// Markdown: every < and the ] of a would-be link are escaped.
			for _, bad := range []string{`<img`, `<script`, `](javascript`, `<b>`, `<javascript`} {
				assert.NotRegexp(t, `(^|[^\\])`+regexp.QuoteMeta(bad), md.Text, "Markdown")
			}
			assert.Regexp(t, `(?i)\\<img src=x onerror=alert\(1\)\\>`, md.Text)
			h, err := cite.Resolve(t.Context(), "See [[cite:evil]] and [[cite:good]].", st, cite.Options{Engine: engine, Style: style, Format: cite.HTML})
			require.NoError(t, err)
			for _, bad := range []string{"<img", "<script", `href="javascript`, "<b>Hara"} {
				assert.NotContains(t, h.Text, bad, "HTML")
			}
			assert.Regexp(t, `(?i)&lt;img src=x onerror=alert\(1\)&gt;`, h.Text)
			if style == cite.APA {
				assert.Contains(t, md.Text, "<https://doi.org/10.1/good>")
				assert.Contains(t, h.Text, `<a href="https://doi.org/10.1/good">`)
			}
		})
	}
}

func TestResolveHTMLIsIdempotent(t *testing.T) {
	st := testStore()
	res, err := cite.Resolve(t.Context(), "A [[cite:lee2019]] b [[cite:smith2020,doe2022]].\n", st, cite.Options{Engine: engine, Style: cite.IEEE, Format: cite.HTML})
	require.NoError(t, err)
	assert.Contains(t, res.Text, "<!--cite:lee2019-->[1]<!--/cite-->")
	assert.Contains(t, res.Text, `<div class="csl-entry"><div class="csl-left-margin">[1]</div><div class="csl-right-inline">K. Lee, J. Park, and S. Cho, “Dense things,” <i>arXiv</i>. 2019. [Online]. Available: <a href="https://arxiv.org/abs/1901.00001">https://arxiv.org/abs/1901.00001</a></div></div>`)
	again, err := cite.Resolve(t.Context(), res.Text, st, cite.Options{Engine: engine, Style: cite.IEEE, Format: cite.HTML})
	require.NoError(t, err)
	assert.Equal(t, res.Text, again.Text)
}

func TestResolveStyles(t *testing.T) {
	st := testStore()
	dir := t.TempDir()
	tiny := `<style xmlns="http://purl.org/net/xbiblio/csl" class="in-text" version="1.0"><info><title>Tiny</title><id>tiny</id></info>
  <citation><layout prefix="&lt;" suffix="&gt;" delimiter="; "><names variable="author"><name form="short"/></names></layout></citation>
  <bibliography><layout><names variable="author"/><text prefix=": " variable="title"/></layout></bibliography></style>`
	path := filepath.Join(dir, "tiny.csl")
	require.NoError(t, os.WriteFile(path, []byte(tiny), 0o644))
	res, err := cite.Resolve(t.Context(), "[[cite:smith2020]]", st, cite.Options{Engine: engine, Style: cite.Style(path), Format: cite.Text})
	require.NoError(t, err)
	assert.Equal(t, "<Smith>\n\nReferences\n\nAnna Smith: Fusion of rankings\n", res.Text)

	_, err = cite.Resolve(t.Context(), "[[cite:smith2020]]", st, cite.Options{Engine: engine, Style: "vancover"})
	require.ErrorIs(t, err, cite.ErrUnknownStyle)
	require.ErrorIs(t, err, csl.ErrUnknownStyle)
	assert.True(t, cite.IsStyleError(err))
	assert.Contains(t, err.Error(), "did you mean vancouver")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "bad.csl"), []byte("<style><info>"), 0o644))
	_, err = cite.Resolve(t.Context(), "[[cite:smith2020]]", st, cite.Options{Engine: engine, Style: cite.Style(filepath.Join(dir, "bad.csl"))})
	require.ErrorIs(t, err, csl.ErrBadStyle)
	assert.Contains(t, err.Error(), "bad.csl:1")
}

// A paper the style prints nothing for is rendered as citeproc-js renders
// it (Zotero's "[CSL STYLE ERROR: …]" in a citation, no entry or an
// empty one in the bibliography) and gets a warning at its first
// citation; papers the style prints get none.
func TestResolveNoPrintedForm(t *testing.T) {
	st := testStore()
	st.papers["blank"] = corpus.Paper{ID: "h:blank", Type: "patent"}
	doc := "A [[cite:smith2020]] b [[cite:blank]] c [[cite:smith2020,blank]].\n"
	kinds := func(res *cite.Result) []string {
		var out []string
		for _, w := range res.Warnings {
			if w.Kind == "no-printed-form" {
				out = append(out, w.String())
			}
		}
		return out
	}

	res, err := cite.Resolve(t.Context(), doc, st, cite.Options{Engine: engine, Style: cite.MLA, Format: cite.Text})
	require.NoError(t, err)
	assert.Contains(t, res.Text, "b ("+csl.NoPrintedForm+") c")
	assert.NotContains(t, res.Text, "\n\n\n\n", "no empty entry")
	assert.Equal(t, []string{
		`1:31: h:blank: style modern-language-association prints nothing for this citation: citeproc-js wrote "` + csl.NoPrintedForm + `" (the record lacks every field the style cites it by)`,
		"1:31: h:blank: style modern-language-association prints no bibliography entry for it (the style leaves its type out, or the record lacks the fields the entry needs)",
	}, kinds(res))

	// A numbered style prints the number and nothing after it.
	res, err = cite.Resolve(t.Context(), doc, st, cite.Options{Engine: engine, Style: cite.IEEE, Format: cite.HTML})
	require.NoError(t, err)
	assert.Contains(t, res.Text, `<div class="csl-entry"><div class="csl-left-margin">[2]</div></div>`)
	assert.Equal(t, []string{"1:31: h:blank: style ieee prints no bibliography entry for it (the style leaves its type out, or the record lacks the fields the entry needs)"}, kinds(res))

	// Without the blank paper, no such warning.
	res, err = cite.Resolve(t.Context(), "A [[cite:smith2020]] b [[cite:doe2022]].\n", st, cite.Options{Engine: engine, Style: cite.MLA})
	require.NoError(t, err)
	assert.Empty(t, kinds(res))
}

func TestFragmentPrintsNothing(t *testing.T) {
	for f, want := range map[csl.Fragment]bool{
		``:                                       true,
		`<div class="csl-left-margin">[2]</div>`: true,
		`<div class="csl-left-margin">[2]</div><div class="csl-right-inline"> </div>`: true,
		`(` + csl.Fragment(csl.NoPrintedForm) + `)`:                                   true,
		`[NO_PRINTED_FORM]`: true,
		`<div class="csl-left-margin">[3]</div><div class="csl-right-inline">2001.</div>`: false,
		`2001.`:          false,
		`<i>Title</i>`:   false,
		"\u00a0<i> </i>": true,
	} {
		assert.Equal(t, want, f.PrintsNothing(), "%q", f)
	}
}

// Citations written next to each other are one citation: the style's
// form for several papers, collapsed ranges, and no superscripts running
// together into another number. Anything between them keeps them apart.
func TestResolveAdjacentCitations(t *testing.T) {
	st := testStore()
	tests := []citationCase{
		{cite.IEEE, "a [[cite:smith2020]][[cite:doe2022]].", "a [1], [2]."},
		{cite.IEEE, "a [[cite:smith2020]][[cite:doe2022]]⟦cite:lee2019⟧.", "a [1]–[3]."},
		{cite.IEEE, "a [[cite:smith2020]][[cite:smith2020]].", "a [1]."},
		{cite.APA, "a [[cite:smith2020]][[cite:doe2022]].", "a (Doe, 2022; Smith, 2020)."},
		{cite.IEEE, "a [[cite:smith2020]] [[cite:doe2022]].", "a [1] [2]."},
		{cite.IEEE, "a [[cite:smith2020]], [[cite:doe2022]].", "a [1], [2]."},
	}
	checkCitationText(t, st, tests)
	// Markdown: one anchor, which resolves again to itself; two adjacent
	// anchors of an earlier run become one.
	res, err := cite.Resolve(t.Context(), "a [[cite:smith2020]][[cite:doe2022]].\n", st, cite.Options{Engine: engine, Style: cite.IEEE})
	require.NoError(t, err)
	assert.Contains(t, res.Text, "a <!--cite:smith2020,doe2022-->[1], [2]<!--/cite-->.")
	again, err := cite.Resolve(t.Context(), res.Text, st, cite.Options{Engine: engine, Style: cite.IEEE})
	require.NoError(t, err)
	assert.Equal(t, res.Text, again.Text)
	old, err := cite.Resolve(t.Context(), "a <!--cite:smith2020-->[1]<!--/cite--><!--cite:doe2022-->[2]<!--/cite-->.\n", st, cite.Options{Engine: engine, Style: cite.IEEE})
	require.NoError(t, err)
	assert.Contains(t, old.Text, "a <!--cite:smith2020,doe2022-->[1], [2]<!--/cite-->.")
	// A placeholder whose list has a space, joined to an anchor: no space
	// taken or given.
	mixed, err := cite.Resolve(t.Context(), "a([[cite:   smith2020, doe2022]]<!--cite:lee2019-->[9]<!--/cite-->)\n", st, cite.Options{Engine: engine, Style: cite.IEEE})
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(mixed.Text, "a(<!--cite:smith2020,doe2022,lee2019-->[1]–[3]<!--/cite-->)\n"), mixed.Text)
	// An unknown ID keeps the whole joined citation in place (--lenient),
	// as it keeps a placeholder of several IDs.
	len1, err := cite.Resolve(t.Context(), "a [[cite:smith2020]][[cite:nope]].\n", st, cite.Options{Engine: engine, Style: cite.IEEE, Lenient: true})
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(len1.Text, "a ⚠[[cite:smith2020]][[cite:nope]].\n"), len1.Text)
}

// superscriptStyle is a numeric style whose citations are superscripts,
// as nature's and AMA's are.
const superscriptStyle = `<style xmlns="http://purl.org/net/xbiblio/csl" class="in-text" version="1.0"><info><title>Sup</title><id>sup</id></info>
  <citation collapse="citation-number"><sort><key variable="citation-number"/></sort><layout vertical-align="sup" delimiter=","><text variable="citation-number"/></layout></citation>
  <bibliography><layout><text variable="citation-number" suffix=". "/><text variable="title"/></layout></bibliography></style>`

// A superscript citation is written in superscript characters in plain
// text and follows its word without a space; the anchor remembers the
// space, so that another style, or Merge, gives it back.
func TestResolveSuperscriptCitations(t *testing.T) {
	st := testStore()
	sup := cite.Style(filepath.Join(t.TempDir(), "sup.csl"))
	require.NoError(t, os.WriteFile(string(sup), []byte(superscriptStyle), 0o644))
	doc := "Fusion works [[cite:smith2020]]. Both [[cite:doe2022]][[cite:smith2020]] and [[cite:lee2019]] [[cite:doe2022]].\n[[cite:smith2020,doe2022,lee2019]] opens a line.\n"
	res, err := cite.Resolve(t.Context(), doc, st, cite.Options{Engine: engine, Style: sup, Format: cite.Text})
	require.NoError(t, err)
	body, _, _ := strings.Cut(res.Text, "\n\n")
	assert.Equal(t, "Fusion works¹. Both¹,² and³ ².\n¹–³ opens a line.", body,
		"superscript digits; no space before a citation, except after another")

	md, err := cite.Resolve(t.Context(), doc, st, cite.Options{Engine: engine, Style: sup})
	require.NoError(t, err)
	assert.Contains(t, md.Text, "Fusion works<!--cite: smith2020--><sup>1</sup><!--/cite-->. Both<!--cite: doe2022,smith2020--><sup>1,2</sup><!--/cite--> and<!--cite: lee2019--><sup>3</sup><!--/cite--> <!--cite:doe2022--><sup>2</sup><!--/cite-->.")
	again, err := cite.Resolve(t.Context(), md.Text, st, cite.Options{Engine: engine, Style: sup})
	require.NoError(t, err)
	assert.Equal(t, md.Text, again.Text, "idempotent")

	// Another style gives the spaces back: the same as resolving the draft.
	ieee, err := cite.Resolve(t.Context(), md.Text, st, cite.Options{Engine: engine, Style: cite.IEEE})
	require.NoError(t, err)
	fresh, err := cite.Resolve(t.Context(), doc, st, cite.Options{Engine: engine, Style: cite.IEEE})
	require.NoError(t, err)
	assert.Equal(t, fresh.Text, ieee.Text)
	back, err := cite.Resolve(t.Context(), ieee.Text, st, cite.Options{Engine: engine, Style: sup})
	require.NoError(t, err)
	assert.Equal(t, md.Text, back.Text)

	norm, err := cite.Normalize(md.Text)
	require.NoError(t, err)
	assert.Equal(t, "Fusion works [[cite:smith2020]]. Both [[cite:doe2022,smith2020]] and [[cite:lee2019]] [[cite:doe2022]].\n[[cite:smith2020,doe2022,lee2019]] opens a line.", norm)
}

// noteStyle is a note style: each citation is a footnote ("Ibid." when
// the note before cites the same paper alone).
const noteStyle = `<style xmlns="http://purl.org/net/xbiblio/csl" class="note" version="1.0"><info><title>Notes</title><id>notes</id></info>
  <citation><layout suffix="." delimiter="; "><choose><if position="ibid"><text value="Ibid"/></if>
    <else><names variable="author"><name form="short"/></names><text variable="title" prefix=", " font-style="italic"/></else></choose></layout></citation>
  <bibliography><layout suffix="."><names variable="author"><name name-as-sort-order="all"/></names><text variable="title" prefix=". "/></layout></bibliography></style>`

// A note style's citations are footnotes: a mark in the text (a
// Markdown footnote reference, a superscript number, a linked
// superscript), the notes before the bibliography and in Result.Notes;
// a citation in a footnote of the document's own is that note's text.
func TestResolveNoteStyle(t *testing.T) {
	st := testStore()
	notes := cite.Style(filepath.Join(t.TempDir(), "notes.csl"))
	require.NoError(t, os.WriteFile(string(notes), []byte(noteStyle), 0o644))
	doc := "Fusion [[cite:smith2020]]. Again [[cite:smith2020]]; both [[cite:doe2022]][[cite:smith2020]].\n\nOwn.[^a]\n\n[^a]: As in [[cite:doe2022]]\n"
	// A citation on an indented line of the document's own footnote is
	// the note's text too; after the footnote, a note again.
	own, err := cite.Resolve(t.Context(), "Own.[^b]\n\n[^b]: First.\n\n    More in [[cite:doe2022]]\n\n[[cite:lee2019]] opens a paragraph.\n", st, cite.Options{Engine: engine, Style: notes, Format: cite.Text})
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(own.Text, "Own.[^b]\n\n[^b]: First.\n\n    More in Doe, Retrieval.\n\n¹ opens a paragraph.\n\nNotes\n\n1. Lee, Park, Cho, Dense things."), own.Text)

	md, err := cite.Resolve(t.Context(), doc, st, cite.Options{Engine: engine, Style: notes})
	require.NoError(t, err)
	assert.Equal(t, []string{"Smith, *Fusion of rankings*.", "Ibid.", "Doe, *Retrieval*; Smith, *Fusion of rankings*."}, md.Notes)
	assert.True(t, strings.HasPrefix(md.Text, "Fusion<!--cite: smith2020-->.[^cite-1]<!--/cite--> Again<!--cite: smith2020-->;[^cite-2]<!--/cite--> both<!--cite: doe2022,smith2020-->.[^cite-3]<!--/cite-->\n\nOwn.[^a]\n\n[^a]: As in <!--cite:doe2022-->Doe, *Retrieval*.<!--/cite-->\n"), md.Text)
	assert.Contains(t, md.Text, "<!-- citefind:bibliography -->\n[^cite-1]: Smith, *Fusion of rankings*.\n\n[^cite-2]: Ibid.\n\n[^cite-3]: Doe, *Retrieval*; Smith, *Fusion of rankings*.\n\n## Bibliography\n\nSmith, Anna. Fusion of rankings.\n\nDoe, Jane. Retrieval.\n")
	again, err := cite.Resolve(t.Context(), md.Text, st, cite.Options{Engine: engine, Style: notes})
	require.NoError(t, err)
	assert.Equal(t, md.Text, again.Text, "idempotent")
	ieee, err := cite.Resolve(t.Context(), md.Text, st, cite.Options{Engine: engine, Style: cite.IEEE})
	require.NoError(t, err)
	fresh, err := cite.Resolve(t.Context(), doc, st, cite.Options{Engine: engine, Style: cite.IEEE})
	require.NoError(t, err)
	assert.Equal(t, fresh.Text, ieee.Text, "another style: the spaces back, no notes")
	assert.Empty(t, ieee.Notes)
	norm, err := cite.Normalize(md.Text)
	require.NoError(t, err)
	assert.Equal(t, strings.TrimRight(strings.Replace(doc, "[[cite:doe2022]][[cite:smith2020]]", "[[cite:doe2022,smith2020]]", 1), "\n"), norm,
		"Normalize gives back the spaces and the punctuation")

	text, err := cite.Resolve(t.Context(), doc, st, cite.Options{Engine: engine, Style: notes, Format: cite.Text})
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(text.Text, "Fusion.¹ Again;² both.³\n\nOwn.[^a]\n\n[^a]: As in Doe, Retrieval.\n\nNotes\n\n1. Smith, Fusion of rankings.\n\n2. Ibid.\n\n3. Doe, Retrieval; Smith, Fusion of rankings.\n\nBibliography\n\n"), text.Text)

	// marks resolves src in the note style as text, whose start must be
	// wantText, and as Markdown, which it returns after checking that
	// resolving it again changes nothing and that Normalize gives src back.
	marks := func(src, wantText string) string {
		t.Helper()
		txt, err := cite.Resolve(t.Context(), src, st, cite.Options{Engine: engine, Style: notes, Format: cite.Text})
		require.NoError(t, err)
		assert.True(t, strings.HasPrefix(txt.Text, wantText), txt.Text)
		md, err := cite.Resolve(t.Context(), src, st, cite.Options{Engine: engine, Style: notes})
		require.NoError(t, err)
		again, err := cite.Resolve(t.Context(), md.Text, st, cite.Options{Engine: engine, Style: notes})
		require.NoError(t, err)
		assert.Equal(t, md.Text, again.Text, "idempotent")
		norm, err := cite.Normalize(md.Text)
		require.NoError(t, err)
		assert.Equal(t, strings.TrimRight(src, "\n"), norm, "Normalize")
		return md.Text
	}

	// A run of punctuation goes before the mark whole, and comes back out
	// whole.
	rm := marks("True [[cite:smith2020]]?! So [[cite:doe2022]]... Or [[cite:lee2019]]…\n", "True?!¹ So...² Or…³\n")
	assert.True(t, strings.HasPrefix(rm, "True<!--cite: smith2020-->?![^cite-1]<!--/cite--> So<!--cite: doe2022-->...[^cite-2]<!--/cite--> Or<!--cite: lee2019-->…[^cite-3]<!--/cite-->\n"), rm)
	ri, err := cite.Resolve(t.Context(), rm, st, cite.Options{Engine: engine, Style: cite.IEEE, Format: cite.Text})
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(ri.Text, "True [1]?! So [2]... Or [3]…\n"), ri.Text)

	// Two marks that only a space parts: the punctuation after the
	// second stays after it ("So¹ ², then", not "So¹ ,² then"); each
	// mark is a note of its own.
	marks("So [[cite:smith2020]] [[cite:doe2022]], then [[cite:lee2019]] [[cite:smith2020]].\n", "So¹ ², then³ ⁴.\n")

	// A footnote label of the draft's own that citefind's notes also use
	// is warned of, where it stands; citefind's own labels are not.
	for _, w := range append(md.Warnings, again.Warnings...) {
		assert.NotEqual(t, "footnote-label", w.Kind, w.String())
	}
	clash, err := cite.Resolve(t.Context(), "Fusion [[cite:smith2020]].\n\nMine.[^cite-1]\n\n[^cite-1]: My own note.\n\nAnd[^cite-2].\n\n[^cite-2]: Note 2: citefind has one.\n", st, cite.Options{Engine: engine, Style: notes})
	require.NoError(t, err)
	var labels []string
	for _, w := range clash.Warnings {
		if w.Kind == "footnote-label" {
			labels = append(labels, w.String())
		}
	}
	assert.Equal(t, []string{
		"3:6: [^cite-1]: the draft's own footnote label [^cite-1] is one citefind gives this note style's notes; Markdown renderers will mix the two: rename it",
		"5:1: [^cite-1]: the draft's own footnote label [^cite-1] is one citefind gives this note style's notes; Markdown renderers will mix the two: rename it",
	}, labels)
	ieeeClash, err := cite.Resolve(t.Context(), "Fusion [[cite:smith2020]].\n\nMine.[^cite-1]\n\n[^cite-1]: My own note.\n", st, cite.Options{Engine: engine, Style: cite.IEEE})
	require.NoError(t, err)
	assert.Empty(t, ieeeClash.Warnings, "no notes in IEEE: no clash")

	h, err := cite.Resolve(t.Context(), "Fusion [[cite:smith2020]].", st, cite.Options{Engine: engine, Style: notes, Format: cite.HTML})
	require.NoError(t, err)
	assert.Contains(t, h.Text, `Fusion<!--cite: smith2020-->.<sup><a href="#cite-fn-1" id="cite-fnref-1" role="doc-noteref">1</a></sup><!--/cite-->`)
	assert.Contains(t, h.Text, `<li id="cite-fn-1">Smith, <i>Fusion of rankings</i>. <a href="#cite-fnref-1" role="doc-backlink">↩︎</a></li>`)
}
