package cite_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/cite"
	"github.com/citefind/citefind/corpus"
)

// TestBibTeXRoundTrip writes the styles fixture as BibTeX and reads it back
// with the project's own reader: the same papers come back.
func TestBibTeXRoundTrip(t *testing.T) {
	ps := loadFixture(t)
	ps = append(ps, corpus.Paper{Type: "article-journal", Title: "Braces {and} 50% & $money$ #1_x ~ ^", Authors: []corpus.Author{{Family: "d'Arc", Given: "Jeanne"}, {Family: "van Beethoven", Given: "Ludwig"}}, Year: 2001, Venue: "J & K", Abstract: "Some abstract.", Keywords: []string{"a", "b"}})
	blogs := 0
	for _, p := range ps {
		if p.Type == "webpage" && p.Venue != "" {
			blogs++
		}
	}
	require.Positive(t, blogs, "the fixture has web pages inside a site (container-title)")
	for i := range ps {
		ps[i].ID = corpus.PaperID(ps[i])
		if ps[i].Type == "article" && ps[i].ArXiv == "" {
			ps[i].ArXiv = corpus.NormalizeArXiv(ps[i].URL)
			ps[i].ID = corpus.PaperID(ps[i])
		}
	}
	var buf bytes.Buffer
	require.NoError(t, cite.WriteBibTeX(&buf, ps, nil))
	var got []corpus.Paper
	require.NoError(t, corpus.ReadBibTeX(t.Context(), &buf, "out.bib", func(r corpus.Record) error {
		got = append(got, r.Paper)
		return nil
	}, func(e *corpus.ParseError) { t.Errorf("parse error: %v", e) }))
	require.Len(t, got, len(ps))
	for i := range ps {
		// The reader follows CSL's conventions, as pandoc does: page
		// ranges with a hyphen, typographic apostrophes in names.
		want := ps[i]
		want.Pages = strings.ReplaceAll(want.Pages, "–", "-")
		want.Authors = append([]corpus.Author(nil), want.Authors...)
		for j := range want.Authors {
			want.Authors[j].Family = strings.ReplaceAll(want.Authors[j].Family, "'", "’")
		}
		assert.Equal(t, want, got[i], "paper %d", i)
	}
}

// TestBibTeXUserKeys: an entry's key is the user's key when there is one.
func TestBibTeXUserKeys(t *testing.T) {
	ps := []corpus.Paper{
		{ID: "10.1145/1571941.1572114", Type: "paper-conference", Title: "Reciprocal rank fusion", Year: 2009},
		{ID: "h:abc123", Type: "article-journal", Title: "Other", Year: 2020},
	}
	var buf bytes.Buffer
	require.NoError(t, cite.WriteBibTeX(&buf, ps, map[string]string{"10.1145/1571941.1572114": "cormack2009rrf"}))
	assert.Contains(t, buf.String(), "@inproceedings{cormack2009rrf,\n")
	assert.Contains(t, buf.String(), "@article{h:abc123,\n")
}

func TestCSLJSONRoundTrip(t *testing.T) {
	ps := loadFixture(t)
	var buf bytes.Buffer
	require.NoError(t, cite.WriteCSLJSON(&buf, ps))
	var got []corpus.Paper
	require.NoError(t, json.Unmarshal(buf.Bytes(), &got))
	assert.Equal(t, ps, got)
}
