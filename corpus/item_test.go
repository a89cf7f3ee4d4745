package corpus_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/corpus"
)

func TestMergeItems(t *testing.T) {
	tests := []struct {
		name  string
		items []string
		want  string
	}{
		{"one item comes back unchanged", []string{`{"id":"a", "title":"T" }`}, `{"id":"a", "title":"T" }`},
		{"the first wins, later ones fill what it lacks, in order",
			[]string{`{"id":"a","title":"First","author":[{"family":"A"}]}`, `{"id":"b","title":"Second","DOI":"10.1/X","page":"1-2"}`, `{"page":"9","ISBN":"978"}`},
			`{"id":"a","title":"First","author":[{"family":"A"}],"DOI":"10.1/X","page":"1-2","ISBN":"978"}`},
		{"empty values are filled in place",
			[]string{`{"id":"a","title":"","author":[],"issued":{},"volume":null}`, `{"title":"T","author":[{"literal":"X"}],"issued":{"date-parts":[[2020]]},"volume":"3"}`},
			`{"id":"a","title":"T","author":[{"literal":"X"}],"issued":{"date-parts":[[2020]]},"volume":"3"}`},
		{"variables are taken whole, never part by part",
			[]string{`{"issued":{"date-parts":[[2020]]},"author":[{"family":"A"}]}`, `{"issued":{"date-parts":[[2020,5,1]],"circa":true},"author":[{"family":"A"},{"family":"B"}]}`},
			`{"issued":{"date-parts":[[2020]]},"author":[{"family":"A"}]}`},
		{"unknown keys and escapes are kept",
			[]string{`{"x-a":{"b":[1,"\"]"]}}`, `{"x\u002db":true}`}, `{"x-a":{"b":[1,"\"]"]},"x\u002db":true}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			items := make([]json.RawMessage, len(tc.items))
			for i, it := range tc.items {
				items[i] = json.RawMessage(it)
			}
			got, err := corpus.MergeItems(items...)
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(got))
		})
	}
	_, err := corpus.MergeItems(json.RawMessage(`[1]`), json.RawMessage(`{}`))
	require.Error(t, err)
}

func TestItemWithID(t *testing.T) {
	got, err := corpus.ItemWithID(json.RawMessage(`{"type":"book","id":"key","title":"T"}`), "10.1/x")
	require.NoError(t, err)
	assert.Equal(t, `{"type":"book","id":"10.1/x","title":"T"}`, string(got), "in place")
	got, err = corpus.ItemWithID(json.RawMessage(`{"title":"<T&>"}`), "a&b")
	require.NoError(t, err)
	assert.Equal(t, `{"id":"a&b","title":"<T&>"}`, string(got), "first, HTML not escaped")
}

func TestPaperFromItem(t *testing.T) {
	p, err := corpus.PaperFromItem([]byte(`{"id":7,"type":"chapter","title":" <i>Moonlight</i> &amp; more ",
		"author":[{"family":"Beethoven","given":"Ludwig","dropping-particle":"van"},{"family":"Gogh","non-dropping-particle":"van","given":"V."},
			{"family":"King","given":"Martin Luther","suffix":"Jr.","comma-suffix":true},{"literal":"WHO"}],
		"issued":{"date-parts":[[1801,3],[1802]],"circa":true},"container-title":"A &amp; B","DOI":"https://doi.org/10.5555/AbC",
		"volume":27,"number":"4","page":"1-22","keyword":["a, b","c"],"arxiv":"arXiv:1706.03762v2","x-other":{"a":1}}`))
	require.NoError(t, err)
	assert.Equal(t, corpus.Paper{
		ID: "7", Type: "chapter", Title: "Moonlight & more",
		Authors: []corpus.Author{{Family: "van Beethoven", Given: "Ludwig"}, {Family: "van Gogh", Given: "V."},
			{Family: "King, Jr.", Given: "Martin Luther"}, {Literal: "WHO"}},
		Year: 1801, Venue: "A & B", DOI: "10.5555/AbC", Volume: "27", Issue: "4", Pages: "1-22",
		Keywords: []string{"a", "b", "c"}, ArXiv: "1706.03762",
	}, p)
	assert.Equal(t, "10.5555/abc", corpus.PaperID(p))

	for _, bad := range []string{`{"title":true}`, `{"author":"x"}`, `{"issued":[2020]}`, `{"keyword":3}`, `[`} {
		_, err := corpus.PaperFromItem([]byte(bad))
		assert.Error(t, err, bad)
	}
}
