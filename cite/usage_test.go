package cite_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/cite"
	"github.com/citefind/citefind/corpus"
)

func TestDraftUsageKeys(t *testing.T) {
	draft := "Fusion [[cite:smith2020]] and [[cite:doe2022]].\n"
	res, err := cite.Resolve(t.Context(), draft, testStore(), cite.Options{})
	require.NoError(t, err)

	fromStdin, err := cite.DraftUsage([]string{"-"}, draft, res.Cited, nil)
	require.NoError(t, err)
	again, err := cite.DraftUsage([]string{"-"}, res.Text, res.Cited, nil)
	require.NoError(t, err)
	assert.Equal(t, fromStdin.ID, again.ID, "a draft and its resolved output are the same draft")
	assert.Equal(t, "-", fromStdin.Name)
	assert.Equal(t, []string{"10.1/smith", "10.1/doe"}, fromStdin.Cited)

	edited, err := cite.DraftUsage([]string{"-"}, draft+"More [[cite:lee2019]].\n", res.Cited, nil)
	require.NoError(t, err)
	assert.NotEqual(t, fromStdin.ID, edited.ID, "other content from stdin is another draft")

	fromFile, err := cite.DraftUsage([]string{"drafts/a.md"}, draft, res.Cited, nil)
	require.NoError(t, err)
	editedFile, err := cite.DraftUsage([]string{"drafts/a.md"}, draft+"More.\n", res.Cited, nil)
	require.NoError(t, err)
	assert.Equal(t, fromFile.ID, editedFile.ID, "a file is keyed by its path")
	assert.NotEqual(t, fromFile.Content, editedFile.Content)
	abs, err := filepath.Abs("drafts/a.md")
	require.NoError(t, err)
	assert.Equal(t, abs, fromFile.Name)
	two, err := cite.DraftUsage([]string{"drafts/a.md", "drafts/b.md"}, draft, res.Cited, nil)
	require.NoError(t, err)
	assert.NotEqual(t, fromFile.ID, two.ID)

	_, err = cite.DraftUsage([]string{"-"}, "[[cite:a,]]", nil, nil)
	require.ErrorIs(t, err, cite.ErrSyntax)
}

func TestStats(t *testing.T) {
	sa := corpus.Search{ID: "sa", Query: "rank fusion", Hits: []string{"10.1/smith", "10.1/doe", "h:a", "h:b"}}
	sb := corpus.Search{ID: "sb", Query: "dense", Hits: []string{"arxiv:1901.00001", "h:a"}}
	sc := corpus.Search{ID: "sc", Query: "unused", Hits: nil}
	u := corpus.Usage{
		Searches: []corpus.Search{sa, sb, sc},
		Drafts: []corpus.DraftUsage{
			// d1 cites 2 of sa's hits, 1 of sb's, and h:anon (not retrieved).
			{ID: "d1", Name: "one.md", Cited: []string{"10.1/smith", "arxiv:1901.00001", "h:anon", "h:a"}, Searches: []corpus.Search{sa, sb}},
			// d2 cites smith, behind sb only: smith is not among sb's hits.
			{ID: "d2", Name: "two.md", Cited: []string{"10.1/smith"}, Searches: []corpus.Search{sb, sc}},
			// d3 has no searches: nothing counts as not retrieved.
			{ID: "d3", Name: "three.md", Cited: []string{"h:anon"}},
		},
	}
	lk := testStore()
	lk.papers["h:anon"] = lk.papers["anon"]
	lk.papers["h:a"] = lk.papers["hofA"]
	st, err := cite.Stats(t.Context(), u, lk)
	require.NoError(t, err)

	assert.Equal(t, cite.UsageTotals{
		Drafts: 3, Searches: 3, Hits: 6, CitedHits: 4, Rate: 4.0 / 6,
		Citations: 6, Retrieved: 3, PapersCited: 4, PapersRetrieved: 5,
	}, st.Totals)

	type row struct {
		id          string
		hits, cited int
		rate        float64
		drafts      int
	}
	var rows []row
	for _, s := range st.Searches {
		rows = append(rows, row{s.ID, s.Hits, s.Cited, s.Rate, s.Drafts})
	}
	assert.Equal(t, []row{{"sa", 4, 2, 0.5, 1}, {"sb", 2, 2, 1, 2}, {"sc", 0, 0, 0, 1}}, rows)

	type prow struct {
		id               string
		cited, retrieved int
		per              float64 // -1: nil
	}
	var prows []prow
	for _, p := range st.Papers {
		per := -1.0
		if p.PerRetrieval != nil {
			per = *p.PerRetrieval
		}
		prows = append(prows, prow{p.ID, p.Cited, p.Retrieved, per})
	}
	assert.Equal(t, []prow{
		{"10.1/smith", 2, 1, 2},
		{"h:anon", 2, 0, -1},
		{"h:a", 1, 2, 0.5},
		{"arxiv:1901.00001", 1, 1, 1},
		{"10.1/doe", 0, 1, 0},
		{"h:b", 0, 1, 0},
	}, prows)
	assert.Equal(t, "Fusion of rankings", st.Papers[0].Title)
	assert.Empty(t, st.Papers[5].Title, "h:b is not in the store")
	assert.Equal(t, 1, lk.calls, "titles in one batch")

	var never []string
	for _, p := range st.NeverCited {
		never = append(never, p.ID)
	}
	assert.Equal(t, []string{"10.1/doe", "h:b"}, never)

	require.Len(t, st.NotRetrieved, 2)
	assert.Equal(t, cite.NotRetrieved{ID: "10.1/smith", Title: "Fusion of rankings", Drafts: []string{"two.md"}}, st.NotRetrieved[0])
	assert.Equal(t, cite.NotRetrieved{ID: "h:anon", Title: "Untitled Notes", Drafts: []string{"one.md"}}, st.NotRetrieved[1])

	var drafts []int
	for _, d := range st.Drafts {
		drafts = append(drafts, d.Retrieved)
	}
	assert.Equal(t, []int{3, 0, 0}, drafts)

	empty, err := cite.Stats(t.Context(), corpus.Usage{}, nil)
	require.NoError(t, err)
	assert.Zero(t, empty.Totals)
	assert.NotNil(t, empty.Searches, "empty lists, not null, in JSON")
}
