package eval_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/eval"
	"github.com/citefind/citefind/internal/datadir"
	"github.com/citefind/citefind/retrieve"
)

const nativeDir = "testdata/native"

// sampleFile returns a file of the shared benchmark samples, or skips.
func sampleFile(t *testing.T, rel string) string {
	t.Helper()
	p := filepath.Join(datadir.Dir(), "formats", rel)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("benchmark sample %s not found (set %s): %v", p, datadir.Env, err)
	}
	return p
}

// fixtureCatalog reads testdata/native/corpus.jsonl with the corpus
// reader, as ingest would.
func fixtureCatalog(t *testing.T) (*eval.Catalog, map[string]string) {
	t.Helper()
	cat := eval.NewCatalog()
	aliases := map[string]string{}
	err := corpus.ReadFile(t.Context(), filepath.Join(nativeDir, "corpus.jsonl"), func(r corpus.Record) error {
		cat.Add(r.Paper)
		aliases[r.Key] = r.Paper.ID
		aliases[r.Paper.ID] = r.Paper.ID
		return nil
	}, func(pe *corpus.ParseError) { t.Errorf("fixture: %v", pe) })
	require.NoError(t, err)
	return cat, aliases
}

func resolveFrom(m map[string]string) func([]string) (map[string]string, error) {
	return func(ids []string) (map[string]string, error) {
		out := map[string]string{}
		for _, id := range ids {
			if p, ok := m[id]; ok {
				out[id] = p
			}
		}
		return out, nil
	}
}

func TestLoadCiteMEFixture(t *testing.T) {
	set, err := eval.LoadCiteME(filepath.Join(nativeDir, "citeme.tsv"), "")
	require.NoError(t, err)
	assert.Equal(t, eval.SetAll, set.Name)
	require.Len(t, set.Queries, 4)
	assert.Equal(t, []string{"10", "12", "185", "13"}, []string{set.Queries[0].ID, set.Queries[1].ID, set.Queries[2].ID, set.Queries[3].ID})
	assert.Contains(t, set.Queries[2].Text, "[CITATIONS]", "text kept as given")
	assert.False(t, strings.HasSuffix(set.Queries[3].Text, "\r"))

	// id 10: two alternative titles are one gold paper
	require.Equal(t, []string{"citeme:10"}, set.Queries[0].Relevant)
	g := set.Gold["citeme:10"]
	assert.Equal(t, []string{"Handwritten Digit Recognition with a Back-Propagation Network", "Backpropagation Applied to Handwritten Zip Code Recognition"}, g.Titles)
	assert.Empty(t, g.ArXiv, "NeurIPS URL")
	// id 12: arXiv id from the URL
	assert.Equal(t, "1210.5474", set.Gold["citeme:12"].ArXiv)

	test, err := eval.LoadCiteME(filepath.Join(nativeDir, "citeme.tsv"), "test")
	require.NoError(t, err)
	assert.Len(t, test.Queries, 3)
	train, err := eval.LoadCiteME(filepath.Join(nativeDir, "citeme.tsv"), "train")
	require.NoError(t, err)
	require.Len(t, train.Queries, 1)
	assert.Equal(t, "13", train.Queries[0].ID)
	_, err = eval.LoadCiteME(filepath.Join(nativeDir, "citeme.tsv"), "dev")
	require.ErrorIs(t, err, eval.ErrEmptyBenchmark)
}

func TestLoadCiteMEErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, body, want string
	}{
		{"missing column", "id\texcerpt\n1\tx\n", `no "target_paper_title" column`},
		{"short row", "id\texcerpt\ttarget_paper_title\ttarget_paper_url\tsplit\n1\tx\n", ":2: 2 fields, want 5"},
		{"duplicate id", "id\texcerpt\ttarget_paper_title\ttarget_paper_url\tsplit\n1\tx\tT\t\ttest\n1\ty\tT\t\ttest\n", `duplicate id "1"`},
		{"empty title", "id\texcerpt\ttarget_paper_title\ttarget_paper_url\tsplit\n1\tx\t[TITLE_SEPARATOR]\t\ttest\n", "empty target_paper_title"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".tsv")
			require.NoError(t, os.WriteFile(p, []byte(tc.body), 0o644))
			_, err := eval.LoadCiteME(p, "")
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestLoadCiteMESample(t *testing.T) {
	set, err := eval.LoadCiteME(sampleFile(t, "citeme/CiteME.tsv"), "")
	require.NoError(t, err)
	assert.Len(t, set.Queries, 130)
	alt := 0
	for _, g := range set.Gold {
		if len(g.Titles) > 1 {
			alt++
		}
	}
	assert.Equal(t, 2, alt, "ids 10 and 229 have alternative titles")
	assert.Len(t, set.Gold["citeme:229"].Titles, 2)
	test, err := eval.LoadCiteME(sampleFile(t, "citeme/CiteME.tsv"), "test")
	require.NoError(t, err)
	assert.Len(t, test.Queries, 119)
	// ids 128 and 215: same target, URL with and without .pdf
	assert.Equal(t, "2203.02053", set.Gold["citeme:128"].ArXiv)
	assert.Equal(t, "2203.02053", set.Gold["citeme:215"].ArXiv)
}

func TestLoadLitSearch(t *testing.T) {
	set, err := eval.LoadLitSearch(filepath.Join(nativeDir, "litsearch.jsonl"), "")
	require.NoError(t, err)
	require.Len(t, set.Queries, 3)
	assert.Equal(t, []string{"corpusid:202719327"}, set.Queries[0].Relevant)
	assert.Equal(t, eval.Gold{IDs: []string{"202719327"}, ArXiv: "1909.10351",
		Titles: []string{"TinyBERT: Distilling BERT for Natural Language Understanding"}, Year: 2019}, set.Gold["corpusid:202719327"])
	assert.Equal(t, eval.Gold{IDs: []string{"227231792"}}, set.Gold["corpusid:227231792"], "no gold_arxiv: corpus id only")
	assert.Equal(t, []string{"corpusid:226254579", "corpusid:204976362"}, set.Queries[2].Relevant)
	assert.Equal(t, "1910.12840", set.Gold["corpusid:204976362"].ArXiv, "paired by position")

	one, err := eval.LoadLitSearch(filepath.Join(nativeDir, "litsearch.jsonl"), "inline_acl")
	require.NoError(t, err)
	assert.Len(t, one.Queries, 3)
	_, err = eval.LoadLitSearch(filepath.Join(nativeDir, "litsearch.jsonl"), "manual_iclr")
	require.ErrorIs(t, err, eval.ErrEmptyBenchmark)
}

func TestLoadLitSearchSample(t *testing.T) {
	set, err := eval.LoadLitSearch(sampleFile(t, "litsearch/litsearch_queries_with_qrels.jsonl"), "")
	require.NoError(t, err)
	assert.Len(t, set.Queries, 597)
	n, withArxiv := 0, 0
	for _, q := range set.Queries {
		n += len(q.Relevant)
	}
	for _, g := range set.Gold {
		if g.ArXiv != "" {
			withArxiv++
		}
	}
	assert.Equal(t, 639, n, "639 gold corpus ids in total")
	assert.Len(t, set.Gold, 574, "574 distinct")
	assert.Positive(t, withArxiv)
	sub, err := eval.LoadLitSearch(sampleFile(t, "litsearch/litsearch_queries_with_qrels.jsonl"), "manual_iclr")
	require.NoError(t, err)
	assert.Len(t, sub.Queries, 91)
}

func TestLoadScholarGym(t *testing.T) {
	set, err := eval.LoadScholarGym(filepath.Join(nativeDir, "scholargym.jsonl"), "")
	require.NoError(t, err)
	require.Len(t, set.Queries, 2)
	assert.Equal(t, []string{"AutoScholarQuery_test_33"}, set.Unjudged, "empty cited_paper")
	assert.Equal(t, []string{"arxiv:2009.02040"}, set.Queries[0].Relevant)
	assert.Equal(t, eval.Gold{ArXiv: "2009.02040", Titles: []string{"Multivariate Time-series Anomaly Detection via Graph Attention Network"}, Year: 2020},
		set.Gold["arxiv:2009.02040"])
	_, err = eval.LoadScholarGym(filepath.Join(nativeDir, "scholargym.jsonl"), "LitSearch")
	require.ErrorIs(t, err, eval.ErrEmptyBenchmark)

	p := filepath.Join(t.TempDir(), "bad.jsonl")
	require.NoError(t, os.WriteFile(p, []byte("{\"qid\": \"a\", \"query\": \"x\", \"cited_paper\": [{}]}\nnot json\n"), 0o644))
	_, err = eval.LoadScholarGym(p, "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "bad.jsonl:1: cited_paper[0]: neither arxiv_id nor title")
	assert.Contains(t, err.Error(), "bad.jsonl:2: ")
}

func TestLoadScholarGymSample(t *testing.T) {
	set, err := eval.LoadScholarGym(sampleFile(t, "scholargym/scholargym_bench.first200.jsonl"), "")
	require.NoError(t, err)
	assert.Len(t, set.Queries, 195)
	assert.Len(t, set.Unjudged, 5)
	assert.Contains(t, set.Unjudged, "AutoScholarQuery_test_33")
}

// TestMatchGoldCoverage runs the fixture benchmarks against the fixture
// corpus: some gold papers are in it (by alias, arXiv id, title, an
// alternative title), the others count as missing.
func TestMatchGoldCoverage(t *testing.T) {
	cat, aliases := fixtureCatalog(t)
	resolve := resolveFrom(aliases)
	paper := func(key string) string { return aliases[key] }
	tests := []struct {
		name    string
		load    func() (*eval.TopicSet, error)
		want    map[string]eval.Match // judged id → match; absent = missing
		missing []string
	}{
		{"citeme", func() (*eval.TopicSet, error) { return eval.LoadCiteME(filepath.Join(nativeDir, "citeme.tsv"), "") },
			map[string]eval.Match{
				"citeme:10": {Papers: []string{paper("zip-code")}, By: eval.ByTitle}, // the second alternative title
				"citeme:12": {Papers: []string{paper("entangling")}, By: eval.ByArXiv},
			}, []string{"citeme:185", "citeme:13"}},
		{"litsearch", func() (*eval.TopicSet, error) {
			return eval.LoadLitSearch(filepath.Join(nativeDir, "litsearch.jsonl"), "")
		},
			map[string]eval.Match{
				"corpusid:202719327": {Papers: []string{paper("202719327")}, By: eval.ByID},
				"corpusid:204976362": {Papers: []string{paper("factcc")}, By: eval.ByTitle},
			}, []string{"corpusid:227231792", "corpusid:226254579"}},
		{"scholargym", func() (*eval.TopicSet, error) {
			return eval.LoadScholarGym(filepath.Join(nativeDir, "scholargym.jsonl"), "")
		},
			map[string]eval.Match{"arxiv:2009.02040": {Papers: []string{paper("gat-anomaly")}, By: eval.ByArXiv}},
			[]string{"arxiv:1901.00137"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			set, err := tc.load()
			require.NoError(t, err)
			var ids []string
			for k := range set.Gold {
				ids = append(ids, k)
			}
			got, err := eval.MatchGold(*set, cat, resolve)(ids)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			for _, m := range tc.missing {
				assert.NotContains(t, got, m)
			}

			// Run with a retriever that returns the whole corpus: the
			// covered gold papers are found, the missing ones stay in the
			// denominator.
			all := retrieve.RetrieverFunc(func(ctx context.Context, q string, k int) ([]corpus.Hit, error) {
				return hits(paper("zip-code"), paper("entangling"), paper("gat-anomaly"), paper("202719327"), paper("factcc")), nil
			})
			res, err := eval.Run(t.Context(), *set, all, eval.Options{ResolveGold: eval.MatchGold(*set, cat, resolve)})
			require.NoError(t, err)
			assert.Equal(t, len(tc.want)+len(tc.missing), res.Relevant)
			assert.Equal(t, len(tc.missing), res.Missing)
			assert.Less(t, res.Coverage(), 1.0)
			found := 0
			for _, q := range res.PerQuery {
				found += len(q.Ranks)
			}
			assert.Equal(t, len(tc.want), found, "every covered gold paper is retrieved once")
		})
	}
}

func TestCatalogTitleYear(t *testing.T) {
	cat := eval.NewCatalog()
	cat.Add(corpus.Paper{ID: "old", Title: "Attention Is All You Need", Year: 1990})
	cat.Add(corpus.Paper{ID: "new", Title: "Attention is all you need!", Year: 2017})
	cat.Add(corpus.Paper{ID: "undated", Title: "ATTENTION IS ALL YOU NEED"})
	ps, by := cat.Match(eval.Gold{Titles: []string{"Attention Is All You Need"}, Year: 2018})
	assert.Equal(t, []string{"new", "undated"}, ps, "1990 is too far from 2018")
	assert.Equal(t, eval.ByTitle, by)
	ps, _ = cat.Match(eval.Gold{Titles: []string{"attention is all you need"}})
	assert.Equal(t, []string{"new", "old", "undated"}, ps, "no gold year: title alone")
	ps, by = cat.Match(eval.Gold{Titles: []string{"Something else"}})
	assert.Empty(t, ps)
	assert.Empty(t, by)
	assert.Equal(t, 3, cat.Len())
}

func TestConvertLitSearchCorpus(t *testing.T) {
	in := filepath.Join(nativeDir, "litsearch_corpus.jsonl")
	ok, err := eval.IsLitSearchCorpus(in)
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = eval.IsLitSearchCorpus(filepath.Join(nativeDir, "corpus.jsonl"))
	require.NoError(t, err)
	assert.False(t, ok, "CSL items have an id")

	f, err := os.Open(in)
	require.NoError(t, err)
	defer f.Close()
	var out bytes.Buffer
	var bad []*corpus.ParseError
	n, err := eval.ConvertLitSearchCorpus(t.Context(), f, in, &out, func(pe *corpus.ParseError) { bad = append(bad, pe) })
	require.NoError(t, err)
	assert.Equal(t, 3, n)
	require.Len(t, bad, 1)
	assert.Equal(t, 3, bad[0].Line)
	assert.ErrorIs(t, bad[0], corpus.ErrBadField)

	// The output is the generic corpus format: the corpus reader takes it,
	// the corpus id becomes the record key (an alias).
	var recs []corpus.Record
	err = corpus.ReadJSONL(t.Context(), &out, "converted.jsonl", func(r corpus.Record) error {
		recs = append(recs, r)
		return nil
	}, func(pe *corpus.ParseError) { t.Error(pe) })
	require.NoError(t, err)
	require.Len(t, recs, 3)
	assert.Equal(t, "202719327", recs[0].Key)
	assert.Equal(t, "TinyBERT: Distilling BERT for Natural Language Understanding", recs[0].Paper.Title)
	assert.Equal(t, "arxiv:1910.12840", recs[2].Paper.ID, "arXiv id from externalids")
}
