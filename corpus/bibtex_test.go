package corpus_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/internal/datadir"
)

// readBib reads BibTeX text with ReadBibTeX.
func readBib(t testing.TB, src string) readResult {
	t.Helper()
	var res readResult
	err := corpus.ReadBibTeX(context.Background(), strings.NewReader(src), "in.bib", func(r corpus.Record) error {
		res.recs = append(res.recs, r)
		return nil
	}, func(pe *corpus.ParseError) { res.errs = append(res.errs, pe) })
	require.NoError(t, err)
	return res
}

func TestReadBibTeXACM(t *testing.T) {
	res := readFixture(t, "acm.bib")
	require.Empty(t, res.errs)

	hinton := res.byKey(t, "10.1145/3397271.3402425")
	// The item is the entry in CSL-JSON, as pandoc converts it (title and
	// booktitle in sentence case, ACM's location as event-place).
	assert.JSONEq(t, `{"id":"10.1145/3397271.3402425","type":"paper-conference",
		"title":"The next generation of neural networks",
		"container-title":"Proceedings of the 43rd international ACM SIGIR conference on research and development in information retrieval",
		"collection-title":"SIGIR ’20","author":[{"family":"Hinton","given":"Geoffrey"}],"issued":{"date-parts":[[2020]]},
		"page":"1","publisher":"Association for Computing Machinery","publisher-place":"New York, NY, USA",
		"event-place":"Virtual Event, China","URL":"https://doi.org/10.1145/3397271.3402425","DOI":"10.1145/3397271.3402425",
		"ISBN":"9781450380164","abstract":"The most important unsolved problem with artificial neural networks is how to do unsupervised learning as effectively as the brain.",
		"keyword":"unsupervised learning, neural networks, deep learning"}`, string(hinton.Item))
	hinton.Item = nil
	assert.Equal(t, corpus.Record{
		Paper: corpus.Paper{
			ID:        "10.1145/3397271.3402425",
			Type:      "paper-conference",
			Title:     "The next generation of neural networks",
			Authors:   []corpus.Author{{Family: "Hinton", Given: "Geoffrey"}},
			Year:      2020,
			Venue:     "Proceedings of the 43rd international ACM SIGIR conference on research and development in information retrieval",
			DOI:       "10.1145/3397271.3402425",
			URL:       "https://doi.org/10.1145/3397271.3402425",
			Abstract:  "The most important unsolved problem with artificial neural networks is how to do unsupervised learning as effectively as the brain.",
			Keywords:  []string{"unsupervised learning", "neural networks", "deep learning"},
			Publisher: "Association for Computing Machinery",
			Pages:     "1",
		},
		Key:  "10.1145/3397271.3402425",
		File: fixture("acm.bib"),
		Line: 1,
		Kind: "inproceedings",
		Ref:  "10.1145/3397271.3402425", // set by ReadFile
	}, hinton)

	// No doi field: the DOI comes from the URL; HTML is decoded and stripped.
	prob := res.byKey(t, "10.1145/3130348.3130351")
	assert.Equal(t, "10.1016/S0306-4573(00)00015-7", prob.Paper.DOI, "as written")
	assert.Equal(t, "10.1016/s0306-4573(00)00015-7", prob.Paper.ID, "normalised")
	assert.Equal(t, "A probabilistic model of information retrieval: Development and comparative experiments: Part 1 & part 2", prob.Paper.Title)
	assert.Equal(t, []string{"probabilistic model", "term weighting & relevance feedback"}, prob.Paper.Keywords)
	assert.Equal(t, []corpus.Author{
		{Family: "Jones", Given: "Karen Spärck"}, {Family: "Walker", Given: "S."}, {Family: "Robertson", Given: "S. E."},
	}, prob.Paper.Authors)
	assert.Equal(t, "Inf. Process. Manage.", prob.Paper.Venue)
	assert.Equal(t, "article-journal", prob.Paper.Type)
	assert.Equal(t, "article", prob.Kind)
	assert.Equal(t, "36", prob.Paper.Volume)
	assert.Equal(t, "6", prob.Paper.Issue)
	assert.Equal(t, "779-808", prob.Paper.Pages, "CSL page ranges use a hyphen; the style sets the dash")

	sess := res.byKey(t, "10.5555/1234567.1234568")
	assert.Equal(t, []corpus.Author{
		{Family: "Fernández", Given: "María"}, {Family: "González", Given: "José"}, {Family: "Müller", Given: "Jörg"},
	}, sess.Paper.Authors)
	assert.Equal(t, "We show that ε-greedy exploration with k<n beats <baselines> by 5% on average; see the site. Second paragraph.", sess.Paper.Abstract)
	assert.Equal(t, "12-19", sess.Paper.Pages)
	assert.True(t, strings.HasPrefix(sess.Paper.ID, "h:"), sess.Paper.ID)
}

func TestReadBibTeXJasist(t *testing.T) {
	res := readFixture(t, "jasist.bib")
	require.Empty(t, res.errs)
	require.Len(t, res.recs, 1)
	r := res.recs[0]
	assert.Equal(t, "10.5555/1869347.1869357", r.Key)
	assert.Equal(t, 2, r.Line)
	assert.Equal(t, "article", r.Kind)
	assert.Equal(t, "Visualizing polysemy using LSA and the predication algorithm", r.Paper.Title)
	assert.Equal(t, []corpus.Author{
		{Family: "Jorge-Botana", Given: "Guillermo"}, {Family: "León", Given: "José A."},
		{Family: "Olmos", Given: "Ricardo"}, {Family: "Hassan-Montero", Given: "Yusef"},
	}, r.Paper.Authors)
	assert.Equal(t, "Context is a determining factor in language and plays a decisive role in polysemic words. "+
		"For four categories, the k = 2 and n = 2,000. For four categories, the predication algorithm (Kintsch, [2001]) is used.",
		r.Paper.Abstract)
	assert.Equal(t, []string{"information transfer", "knowledge acquisition", "semantic networds", "domain knowledge", "hypertext"}, r.Paper.Keywords)
	assert.Equal(t, "John Wiley & Sons, Inc.", r.Paper.Publisher)
	assert.Equal(t, "J. Am. Soc. Inf. Sci. Technol.", r.Paper.Venue)
	assert.Equal(t, "1673-1685", r.Paper.Pages)
	assert.Equal(t, 2010, r.Paper.Year)
}

func TestReadBibTeXScholarDBLP(t *testing.T) {
	res := readFixture(t, "scholar.bib")
	require.Empty(t, res.errs)

	bert := res.byKey(t, "devlin2019bert")
	assert.Equal(t, "BERT: Pre-training of deep bidirectional transformers for language understanding", bert.Paper.Title, "first title wins over the duplicate")
	assert.Equal(t, "Proceedings of the 2019 conference of the north American chapter of the association for computational linguistics", bert.Paper.Venue)
	assert.Equal(t, "Association for Computational Linguistics", bert.Paper.Publisher)
	assert.Equal(t, "4171-4186", bert.Paper.Pages)
	assert.Len(t, bert.Paper.Authors, 4)
	assert.Equal(t, corpus.Author{Family: "Chang", Given: "Ming-Wei"}, bert.Paper.Authors[1])

	att := res.byKey(t, "vaswani2017attention")
	assert.Equal(t, "1706.03762", att.Paper.ArXiv, "from the journal text")
	assert.Equal(t, "arxiv:1706.03762", att.Paper.ID)
	assert.Len(t, att.Paper.Authors, 3, "'others' is dropped")

	dpr := res.byKey(t, "DBLP:journals/corr/abs-2004-04906")
	assert.Equal(t, "Dense passage retrieval for Open-Domain question answering", dpr.Paper.Title, "{Open-Domain} keeps its case")
	assert.Equal(t, []corpus.Author{
		{Family: "Karpukhin", Given: "Vladimir"}, {Family: "Oğuz", Given: "Barlas"}, {Family: "Min", Given: "Sewon"},
	}, dpr.Paper.Authors)
	assert.Equal(t, 2020, dpr.Paper.Year)
	assert.Equal(t, "2004.04906", dpr.Paper.ArXiv)
	assert.Equal(t, "article", dpr.Paper.Type)
	assert.Equal(t, "misc", dpr.Kind)

	web := res.byKey(t, "ludwig:web")
	assert.Equal(t, []corpus.Author{
		{Family: "van Beethoven", Given: "Ludwig"},
		{Literal: "World Health Organization"},
		{Family: "King, Jr.", Given: "Martin Luther"},
	}, web.Paper.Authors)
	assert.Equal(t, "Deep notes on the web: “A study”", web.Paper.Title)
	assert.Equal(t, "https://example.org/~ludwig/notes_2021.html", web.Paper.URL)
	assert.Equal(t, 2021, web.Paper.Year)
	assert.Equal(t, "webpage", web.Paper.Type)
	assert.Equal(t, 40, web.Line)

	tr := res.byKey(t, "tr1")
	assert.Equal(t, "Nested braces to any depth survive", tr.Paper.Title)
	assert.Equal(t, []corpus.Author{{Family: "Zola", Given: "Émile"}}, tr.Paper.Authors)
	assert.Equal(t, 0, tr.Paper.Year, "year n.d. is unknown, the entry is kept")
	assert.Equal(t, "INRIA", tr.Paper.Publisher)
	assert.Equal(t, "42", tr.Paper.Issue)
	assert.Equal(t, "report", tr.Paper.Type)
}

func TestReadBibTeXAccents(t *testing.T) {
	res := readFixture(t, "accents.bib")
	require.Empty(t, res.errs)
	require.Len(t, res.recs, 1)
	p := res.recs[0].Paper
	// Sentence case: the first word is capitalised, other capitalised
	// words (Ø, Æ …) are lower-cased unless braced ({\'{O}}), as pandoc
	// does.
	assert.Equal(t, "Accents: É é é Ó ö ö à î ñ ō ż ğ š ő ç å ą ṣ ḇ í ß ø ø æ æ œ œ å å ł ł &%$#_{}", p.Title)
	var families []string
	for _, a := range p.Authors {
		families = append(families, a.Family)
	}
	assert.Equal(t, []string{
		"émile", "Édouard", "Étienne", "Óscar", "Müller", "Müller", "Grève", "Fête", "Peña", "Maāori",
		"Żak", "Doğan", "Hašek", "Erdős", "Gonçalves", "Ångström", "Was\u0328ik", "Martínez", "Straße",
		"Gauß", "Bjørn", "Østergaard", "Æsir", "Blåbær", "Łukasz", "Kiełbasa", "Naṣim", "Koënig",
	}, families)
}

func TestReadBibTeXIDs(t *testing.T) {
	res := readFixture(t, "ids.bib")
	require.Empty(t, res.errs)
	tests := []struct {
		key, id, doi, arxiv, typ string
	}{
		{"withdoi", "10.1145/abc.123", "10.1145/ABC.123", "1706.03762", "article-journal"},
		{"witharxiv", "arxiv:1706.03762", "", "1706.03762", "article"},
		{"witharxivurl", "arxiv:cs/0112017", "", "cs/0112017", "article"},
		{"withdoiurl", "10.5555/acm.42", "10.5555/ACM.42", "", "book"},
		{"hashonly", "", "", "", "webpage"},
	}
	for _, tc := range tests {
		t.Run(tc.key, func(t *testing.T) {
			r := res.byKey(t, tc.key)
			assert.Equal(t, tc.doi, r.Paper.DOI)
			assert.Equal(t, tc.arxiv, r.Paper.ArXiv)
			assert.Equal(t, tc.typ, r.Paper.Type)
			if tc.id == "" {
				assert.Equal(t, "h:"+corpus.Fingerprint(r.Paper), r.Paper.ID)
				assert.Regexp(t, `^h:[0-9a-f]{12}$`, r.Paper.ID)
			} else {
				assert.Equal(t, tc.id, r.Paper.ID)
			}
		})
	}
}

// TestReadBibTeXSnippets covers syntax variants, one small input each.
func TestReadBibTeXSnippets(t *testing.T) {
	type want struct {
		keys     []string
		titles   []string
		errLines []int
		errIs    error
	}
	tests := []struct {
		name string
		in   string
		want want
	}{
		{"paren entry", "@article(k1, title = {Paren form})", want{keys: []string{"k1"}, titles: []string{"Paren form"}}},
		{"paren key with parens", "@article(10.1016/S1071-5819(20)30022-7, title={T})",
			want{keys: []string{"10.1016/S1071-5819(20)30022-7"}, titles: []string{"T"}}},
		{"brace key with parens", "@article{10.1016/S1071-5819(20)30022-7, title={T}}",
			want{keys: []string{"10.1016/S1071-5819(20)30022-7"}, titles: []string{"T"}}},
		{"upper-case type and fields", "@ARTICLE{K, TITLE = {Upper}}", want{keys: []string{"K"}, titles: []string{"Upper"}}},
		{"tabs everywhere", "@Article\t{\t  k,\n\ttitle\t=\t{Tabs}\t,\n}", want{keys: []string{"k"}, titles: []string{"Tabs"}}},
		{"CRLF", "@article{k,\r\n  title = {Windows\r\n  lines}\r\n}\r\n", want{keys: []string{"k"}, titles: []string{"Windows lines"}}},
		{"quoted with braces", `@article{k, title = "A {"}quoted{"} G{\"o}del and G\"odel {with {braces}}"}`,
			want{keys: []string{"k"}, titles: []string{`A "quoted" gödel and gödel with braces`}}}, // sentence case: G{\"o}del is not protected
		{"concatenation", `@string{v = "Vol"} @article{k, title = v # " " # {and} # ' ' # 3}`,
			want{errLines: []int{1}, errIs: corpus.ErrSyntax}},
		{"concatenation ok", `@string{v = "Vol"} @article{k, title = v # " " # {and} # " " # 3}`,
			want{keys: []string{"k"}, titles: []string{"Vol and 3"}}},
		{"macro names any case", "@string{Foo = {Bar}}\n@article{k, title = fOO}", want{keys: []string{"k"}, titles: []string{"Bar"}}},
		{"month macros", "@article{k, title = {M}, month = dec # {~1}}", want{keys: []string{"k"}, titles: []string{"M"}}},
		{"trailing comma", "@article{k, title = {T},}", want{keys: []string{"k"}, titles: []string{"T"}}},
		{"BOM", "\uFEFF@article{k, title = {T}}", want{keys: []string{"k"}, titles: []string{"T"}}},
		{"Latin-1 file", "@article{k, title = {Caf\xe9 \xff \x93q\x94}}", want{keys: []string{"k"}, titles: []string{"Café ÿ “q”"}}},
		{"invalid UTF-8 in a UTF-8 file", "@article{k, title = {Café \xff}}", want{keys: []string{"k"}, titles: []string{"Café \uFFFD"}}},
		{"comment forms", "@comment{ignored @article{x, title={X}}}\n@comment @article{y, title={Y}}\n@article{k, title={T}}",
			want{keys: []string{"k"}, titles: []string{"T"}}},
		{"preamble", "@preamble{\"\\newcommand{\\x}{}\"}\n@article{k, title={T}}", want{keys: []string{"k"}, titles: []string{"T"}}},
		{"email in comment", "Contact me@example.org for details.\n@article{k, title={T}}", want{keys: []string{"k"}, titles: []string{"T"}}},
		{"entry without key", "@article{, title={T}}", want{errLines: []int{1}, errIs: corpus.ErrSyntax}},
		{"empty entry", "@article{}", want{errLines: []int{1}, errIs: corpus.ErrSyntax}},
		{"key without comma", "@article{k title={T}}", want{errLines: []int{1}, errIs: corpus.ErrSyntax}},
		{"type without brace", "@article k, title={T}\n@article{k2, title={T2}}",
			want{keys: []string{"k2"}, titles: []string{"T2"}, errLines: []int{1}, errIs: corpus.ErrSyntax}},
		{"empty title", "@article{k, title = { }}", want{errLines: []int{1}, errIs: corpus.ErrNoTitle}},
		{"no fields", "@article{k}", want{errLines: []int{1}, errIs: corpus.ErrNoTitle}},
		{"undefined macro", "\n\n@article{k, title = {T}, journal = nope}", want{errLines: []int{3}, errIs: corpus.ErrUndefinedMacro}},
		{"undefined macro in a field not read", "@article{k, title = {T}, acknowledgement = ack-bnb}",
			want{keys: []string{"k"}, titles: []string{"T"}}},
		{"crossref to an undefined entry keeps the entry", "@article{k, title = {T}, crossref = {nope}}",
			want{keys: []string{"k"}, titles: []string{"T"}}},
		{"crossref to itself keeps the entry", "@article{k, title = {T}, crossref = {K}}",
			want{keys: []string{"k"}, titles: []string{"T"}}},
		{"undefined macro in string", "@string{a = b}\n@article{k, title = a}",
			want{errLines: []int{1, 2}, errIs: corpus.ErrUndefinedMacro}},
		{"unterminated at EOF", "@article{k, title = {T},\n", want{errLines: []int{1}, errIs: corpus.ErrSyntax}},
		{"unterminated quote at EOF", "@article{k, title = \"T", want{errLines: []int{1}, errIs: corpus.ErrSyntax}},
		{"missing value", "@article{k, title = , year = 2000}", want{errLines: []int{1}, errIs: corpus.ErrSyntax}},
		{"unclosed entry before next", "@article{a, title = {A},\n\n@article{b, title = {B}}",
			want{keys: []string{"b"}, titles: []string{"B"}, errLines: []int{1}, errIs: corpus.ErrSyntax}},
		{"indented next entry", "@article{a, title = {A}\n  @article{b, title = {B}}",
			want{keys: []string{"b"}, titles: []string{"B"}, errLines: []int{1}, errIs: corpus.ErrSyntax}},
		{"non-numeric year kept", "@article{k, title = {T}, year = {forthcoming}}", want{keys: []string{"k"}, titles: []string{"T"}}},
		{"empty input", "", want{}},
		{"only comments", "% nothing here\n", want{}},
		{"lone at", "@", want{}},
		{"at brace", "@{", want{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := readBib(t, tc.in)
			var titles []string
			for _, r := range res.recs {
				titles = append(titles, r.Paper.Title)
			}
			assert.Equal(t, tc.want.keys, res.keys())
			assert.Equal(t, tc.want.titles, titles)
			assert.Equal(t, tc.want.errLines, res.errLines(), "errors: %v", res.errs)
			for _, e := range res.errs {
				assert.ErrorIs(t, e, tc.want.errIs)
				assert.Equal(t, "in.bib", e.File)
				assert.True(t, strings.HasPrefix(e.Error(), fmt.Sprintf("in.bib:%d: ", e.Line)), e.Error())
			}
		})
	}
}

func TestReadBibTeXYear(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"year = 2020", 2020},
		{"year = {2020}", 2020},
		{"year = {{2020}}", 2020},
		{"year = {2020a}", 2020},
		{`year = "2019"`, 2019},
		{"year = {in press}", 0},
		{"year = {20}", 0},
		{"date = {2018-05-01}", 2018},
		{"year = {2017}, date = {2018-05-01}", 2018}, // biblatex's date wins, as in pandoc
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			res := readBib(t, "@article{k, title={T}, "+tc.in+"}")
			require.Len(t, res.recs, 1, "errors: %v", res.errs)
			assert.Equal(t, tc.want, res.recs[0].Paper.Year)
		})
	}
}

func TestReadBibTeXTypes(t *testing.T) {
	tests := []struct {
		typ, extra, want string
	}{
		{"article", "", "article-journal"},
		{"inproceedings", "", "paper-conference"},
		{"conference", "", "paper-conference"},
		{"book", "", "book"},
		{"inbook", "", "chapter"},
		{"incollection", "", "chapter"},
		{"phdthesis", "", "thesis"},
		{"mastersthesis", "", "thesis"},
		{"techreport", "", "report"},
		{"misc", "eprint = {2101.00001}, archivePrefix = {arXiv}", "article"},
		{"misc", "url = {https://example.org}", "webpage"},
		{"online", "url = {https://example.org}", "webpage"},
		{"online", "url = {https://example.org/post}, journaltitle = {Example Blog}", "webpage"},
		{"online", "url = {https://example.org/post}, booktitle = {Example Blog}, doi = {10.1/x}", "webpage"},
		{"online", "", "webpage"},
		{"www", "url = {https://example.org}, organization = {W3C}, booktitle = {Site}", "webpage"},
		{"electronic", "url = {https://example.org}, booktitle = {Site}", "webpage"},
		{"online", "eprint = {2101.00001}, eprinttype = {arxiv}", "article"},
		{"misc", `howpublished = {\url{https://example.org/x_y}}`, "webpage"},
		{"misc", "howpublished = {https://example.org}", "webpage"},
		{"misc", "howpublished = {Blog post}", "article"},
		{"misc", `howpublished = {\url{https://example.org}}, booktitle = {Site}`, "article"},
		{"misc", "url = {https://example.org}, howpublished = {x}, journal = {J}", "article"},
		{"misc", "", "article"},
		{"unpublished", "", "manuscript"},
		{"unpublished", "eventtitle = {Talk}", "speech"},
	}
	for _, tc := range tests {
		t.Run(tc.typ+" "+tc.extra, func(t *testing.T) {
			res := readBib(t, "@"+strings.ToUpper(tc.typ[:1])+tc.typ[1:]+"{k, title={T}, "+tc.extra+"}")
			require.Len(t, res.recs, 1, "errors: %v", res.errs)
			assert.Equal(t, tc.want, res.recs[0].Paper.Type)
			assert.Equal(t, tc.typ, res.recs[0].Kind)
		})
	}
}

func TestReadBibTeXVenue(t *testing.T) {
	res := readBib(t, `@article{a, title={T}, journal={J}, booktitle={B}}
@inproceedings{b, title={T}, journal={J}, booktitle={B}}
@phdthesis{c, title={T}, school={MIT}}
@inproceedings{d, title={T}, booktitle={Proc. of the {ACM} \&\ Friends}, publisher={ACM \&amp; Co}}`)
	require.Empty(t, res.errs)
	require.Len(t, res.recs, 4)
	assert.Equal(t, "J", res.recs[0].Paper.Venue)
	assert.Equal(t, "B", res.recs[1].Paper.Venue)
	assert.Equal(t, "MIT", res.recs[2].Paper.Publisher)
	assert.Equal(t, "Proc. Of the ACM & friends", res.recs[3].Paper.Venue, "a booktitle is in sentence case, as pandoc makes it")
	assert.Equal(t, "ACM & Co", res.recs[3].Paper.Publisher)
}

func TestReadBibTeXAuthors(t *testing.T) {
	tests := []struct {
		in   string
		want []corpus.Author
	}{
		{"Hinton, Geoffrey", []corpus.Author{{Family: "Hinton", Given: "Geoffrey"}}},
		{"Geoffrey E. Hinton", []corpus.Author{{Family: "Hinton", Given: "Geoffrey E."}}},
		{"Hinton", []corpus.Author{{Family: "Hinton"}}},
		{"Ludwig van Beethoven", []corpus.Author{{Family: "van Beethoven", Given: "Ludwig"}}},
		{"Jean de la Fontaine", []corpus.Author{{Family: "de la Fontaine", Given: "Jean"}}},
		{"van Beethoven, Ludwig", []corpus.Author{{Family: "van Beethoven", Given: "Ludwig"}}},
		{"Jeanne d'Arc", []corpus.Author{{Family: "d’Arc", Given: "Jeanne"}}},
		{"d'Aquin, Mathieu", []corpus.Author{{Family: "d’Aquin", Given: "Mathieu"}}},
		{"King, Jr., Martin Luther", []corpus.Author{{Family: "King, Jr.", Given: "Martin Luther"}}},
		{"{World Health Organization}", []corpus.Author{{Literal: "World Health Organization"}}},
		{"{Barnes and Noble} and Smith, J.", []corpus.Author{{Literal: "Barnes and Noble"}, {Family: "Smith", Given: "J."}}},
		{"A. Smith AND B. Jones\n\t\tand C. Brown", []corpus.Author{
			{Family: "Smith", Given: "A."}, {Family: "Jones", Given: "B."}, {Family: "Brown", Given: "C."},
		}},
		{"Smith, A. and others", []corpus.Author{{Family: "Smith", Given: "A."}}},
		{"Alexander Sandy", []corpus.Author{{Family: "Sandy", Given: "Alexander"}}},
		{"Ferdinand Anderson", []corpus.Author{{Family: "Anderson", Given: "Ferdinand"}}},
		{"{\\'E}mile Zola and \\'{E}douard Manet", []corpus.Author{{Family: "Zola", Given: "Émile"}, {Family: "Manet", Given: "Édouard"}}},
		{" and  and ", nil},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			res := readBib(t, "@article{k, title={T}, author={"+tc.in+"}}")
			require.Len(t, res.recs, 1, "errors: %v", res.errs)
			assert.Equal(t, tc.want, res.recs[0].Paper.Authors)
		})
	}
}

func TestReadBibTeXEmitError(t *testing.T) {
	stop := errors.New("stop")
	n := 0
	err := corpus.ReadFile(t.Context(), fixture("acm.bib"), func(corpus.Record) error {
		n++
		return stop
	}, nil)
	require.ErrorIs(t, err, stop)
	assert.Equal(t, 1, n)
}

func TestReadBibTeXNilCallbacks(t *testing.T) {
	require.NoError(t, corpus.ReadFile(t.Context(), fixture("errors.bib"), nil, nil))
}

// TestReadACMCRCollection reads the whole ACM-CR collection (903 BibTeX
// files, 113,512 entries) when the benchmark data is present.
func TestReadACMCRCollection(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 167 MiB of BibTeX; skipped with -short")
	}
	root := filepath.Join(datadir.Bench("acm-cr"), "data", "acm-dl")
	if _, err := os.Stat(root); err != nil {
		t.Skipf("ACM-CR data not found (%v); set %s to the benchmark data folder", err, datadir.Env)
	}
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".bib") {
			files = append(files, path)
		}
		return nil
	})
	require.NoError(t, err)

	byKey := map[string]corpus.Record{}
	var errs []*corpus.ParseError
	records, withDOI := 0, 0
	start := time.Now()
	for _, f := range files {
		err := corpus.ReadFile(t.Context(), f, func(r corpus.Record) error {
			records++
			if r.Paper.DOI != "" {
				withDOI++
			}
			byKey[r.Key] = r
			return nil
		}, func(pe *corpus.ParseError) { errs = append(errs, pe) })
		require.NoError(t, err)
	}
	t.Logf("read %d files: %d records (%d with DOI), %d errors in %v",
		len(files), records, withDOI, len(errs), time.Since(start).Round(time.Millisecond))

	assert.Len(t, files, 903)
	assert.Equal(t, 113512, records+len(errs))
	for i, pe := range errs {
		if i == 10 {
			break
		}
		t.Errorf("parse error: %v", pe)
	}
	assert.Empty(t, errs)
	assert.GreaterOrEqual(t, withDOI, 100301)

	hinton, ok := byKey["10.1145/3397271.3402425"]
	require.True(t, ok)
	assert.Equal(t, "The next generation of neural networks", hinton.Paper.Title)
	assert.Equal(t, []corpus.Author{{Family: "Hinton", Given: "Geoffrey"}}, hinton.Paper.Authors)
	assert.Equal(t, 2020, hinton.Paper.Year)
	assert.Equal(t, "10.1145/3397271.3402425", hinton.Paper.ID)
	assert.Equal(t, "inproceedings", hinton.Kind)
	assert.Equal(t, []string{"unsupervised learning", "neural networks", "deep learning"}, hinton.Paper.Keywords)

	// jasist.bib: tab-aligned, hard-wrapped, \'{o} and \'{e} in names.
	lsa, ok := byKey["10.5555/1869347.1869357"]
	require.True(t, ok)
	assert.Equal(t, "Visualizing polysemy using LSA and the predication algorithm", lsa.Paper.Title)
	require.Len(t, lsa.Paper.Authors, 4)
	assert.Equal(t, corpus.Author{Family: "León", Given: "José A."}, lsa.Paper.Authors[1])
	assert.True(t, strings.HasPrefix(lsa.Paper.Abstract,
		"Context is a determining factor in language and plays a decisive role in polysemic words. Several psycholinguistically motivated algorithms"),
		lsa.Paper.Abstract)
	assert.NotContains(t, lsa.Paper.Abstract, "\n")
	assert.Equal(t, "John Wiley & Sons, Inc.", lsa.Paper.Publisher)
	assert.Equal(t, "article-journal", lsa.Paper.Type)
	assert.Equal(t, "article", lsa.Kind)

	// ACM titles: &amp; decoded, <i> stripped.
	ecir, ok := byKey["10.1145/1141753.1141867"]
	require.True(t, ok)
	assert.NotContains(t, ecir.Paper.Title, "&amp;")
	amp := 0
	for _, r := range byKey {
		if strings.Contains(r.Paper.Title, "&amp;") || strings.Contains(r.Paper.Abstract, "&amp;") {
			t.Errorf("%s:%d: undecoded &amp; in %q", r.File, r.Line, r.Paper.Title)
			break
		}
		if strings.Contains(r.Paper.Title, " & ") {
			amp++
		}
	}
	assert.Positive(t, amp, "titles with & decoded from &amp;")
}

// synthBib generates n ACM-style entries from a fixed seed.
func synthBib(n int) []byte {
	rng := rand.New(rand.NewSource(42))
	words := strings.Fields("neural retrieval ranking query document learning model search user evaluation " +
		"dense sparse citation recommendation context graph embedding transformer relevance feedback " +
		"Jos\\'{e} M\\\"{u}ller G\\'{o}mez &amp; $\\epsilon$ {BERT} <i>deep</i>")
	phrase := func(k int) string {
		ws := make([]string, k)
		for i := range ws {
			ws[i] = words[rng.Intn(len(words))]
		}
		return strings.Join(ws, " ")
	}
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, "@inproceedings{10.1145/%d.%d,\nauthor = {%s, %s and %s, %s},\ntitle = {%s},\nyear = {%d},\n",
			3000000+i, i, phrase(1), phrase(2), phrase(1), phrase(1), phrase(8), 1990+i%30)
		fmt.Fprintf(&b, "publisher = {Association for Computing Machinery},\naddress = {New York, NY, USA},\n")
		fmt.Fprintf(&b, "url = {https://doi.org/10.1145/%d.%d},\ndoi = {10.1145/%d.%d},\n", 3000000+i, i, 3000000+i, i)
		fmt.Fprintf(&b, "abstract = {%s},\nbooktitle = {Proceedings of %s},\npages = {%d–%d},\nnumpages = {8},\n",
			phrase(150), phrase(6), i%500, i%500+8)
		fmt.Fprintf(&b, "keywords = {%s, %s, %s},\nlocation = {Virtual Event},\nmonth = jul,\nseries = {SIGIR '20}\n}\n\n",
			phrase(2), phrase(2), phrase(1))
	}
	return b.Bytes()
}

func BenchmarkReadBibTeX(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		data := synthBib(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			b.ResetTimer()
			for range b.N {
				count := 0
				err := corpus.ReadBibTeX(context.Background(), bytes.NewReader(data), "synth.bib",
					func(corpus.Record) error { count++; return nil }, nil)
				if err != nil || count != n {
					b.Fatalf("read %d of %d records: %v", count, n, err)
				}
			}
		})
	}
}

// FuzzReadBibTeX checks that no input makes the reader panic, and that
// every record and error it gives is well-formed.
func FuzzReadBibTeX(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "readers", "*.bib"))
	for _, s := range seeds {
		if b, err := os.ReadFile(s); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("@string{a = b # {c}} @article(k, title = a # \"{\\\"o}\" # 1, author = {{x} and y, z, w, v})"))
	f.Add([]byte("@article{k, title = {$\\frac{\\'{\\i}}{\\enquote{x}$ \\\" \\^{} --- ``''}}"))
	f.Add([]byte("@xdata{x, xdata = {y}, year = 1}\n@xdata{y, xdata={x,k}, publisher = p}\n@book{k, title = {T}, xdata = {X, z}, crossref = {k2}, author = {xdata=x-author-1}}\n@book{k2, title={U}, xdata={x}}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		lines := bytes.Count(data, []byte{'\n'}) + 1
		err := corpus.ReadBibTeX(context.Background(), bytes.NewReader(data), "fuzz.bib", func(r corpus.Record) error {
			if r.Line < 1 || r.Line > lines {
				t.Errorf("record line %d outside 1..%d", r.Line, lines)
			}
			if r.Paper.Title == "" || r.Paper.ID == "" {
				t.Errorf("record without title or ID: %+v", r)
			}
			for _, w := range r.Warnings {
				if w.Line < 1 || w.Line > lines {
					t.Errorf("warning line %d outside 1..%d: %v", w.Line, lines, w)
				}
			}
			return nil
		}, func(pe *corpus.ParseError) {
			if pe.Line < 1 || pe.Line > lines {
				t.Errorf("error line %d outside 1..%d: %v", pe.Line, lines, pe)
			}
		})
		if err != nil {
			t.Errorf("ReadBibTeX: %v", err)
		}
	})
}

func TestReadBibTeXMacroBomb(t *testing.T) {
	src := "@string{a = {xxxxxxxx}}\n" + strings.Repeat("@string{a = a # a}\n", 40) + "@article{k, title = a}\n"
	res := readBib(t, src)
	require.NotEmpty(t, res.errs)
	assert.ErrorIs(t, res.errs[0], corpus.ErrSyntax)
	require.Len(t, res.recs, 1)
	assert.Less(t, len(res.recs[0].Paper.Title), 1<<20)
}

// TestReadBibTeXLatin1: a file that is not UTF-8 and has no UTF-8
// character is 8-bit text (jurabib's German examples are Latin-1): it is
// read as Windows-1252, each record warned for its lines with such a
// character; a UTF-8 file with a stray byte keeps its UTF-8 and gets
// U+FFFD there. The @string macros other files take from such a file are
// decoded the same way.
func TestReadBibTeXLatin1(t *testing.T) {
	res := readBib(t, "@book{a,\n  title = {Stra\xdfe},\n  year = 2000}\n@book{b, title = {Plain}}\n@book{c,\n title={M\xfcnchen \x96 {Z\xfcrich}}}\n")
	require.Empty(t, res.errs)
	require.Len(t, res.recs, 3)
	assert.Equal(t, "Straße", res.recs[0].Paper.Title)
	assert.Equal(t, "München – Zürich", res.recs[2].Paper.Title, "Windows-1252's en dash")
	require.Len(t, res.recs[0].Warnings, 1)
	assert.ErrorIs(t, res.recs[0].Warnings[0], corpus.ErrLatin1)
	assert.Equal(t, "in.bib:2: warning: not UTF-8: read as Latin-1 (Windows-1252); save the file as UTF-8 to be sure", res.recs[0].Warnings[0].Error())
	assert.Empty(t, res.recs[1].Warnings)
	require.Len(t, res.recs[2].Warnings, 1)
	assert.Equal(t, 6, res.recs[2].Warnings[0].Line)

	res = readBib(t, "@book{a, title = {Münch\xfcen}}\n")
	require.Len(t, res.recs, 1)
	assert.Equal(t, "Münch\uFFFDen", res.recs[0].Paper.Title, "a UTF-8 file stays UTF-8")
	require.Len(t, res.recs[0].Warnings, 1)
	assert.ErrorIs(t, res.recs[0].Warnings[0], corpus.ErrInvalidUTF8)

	dir := t.TempDir()
	abbrev, refs := filepath.Join(dir, "abbrev.bib"), filepath.Join(dir, "refs.bib")
	require.NoError(t, os.WriteFile(abbrev, []byte("@string{zfr = {Zeitschrift f\xfcr Recht}}\n"), 0o644))
	require.NoError(t, os.WriteFile(refs, []byte("@article{k, title = {T}, journal = zfr}\n"), 0o644))
	sh, err := corpus.SharedMacros(t.Context(), []string{abbrev, refs})
	require.NoError(t, err)
	var items []string
	require.NoError(t, corpus.ReadFileWith(t.Context(), refs, sh.For(refs), func(r corpus.Record) error {
		items = append(items, string(r.Item))
		return nil
	}, nil))
	require.Len(t, items, 1)
	assert.Contains(t, items[0], `"container-title":"Zeitschrift für Recht"`)
}
