package corpus_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/corpus"
)

func openStore(t testing.TB) (*corpus.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "papers.sqlite")
	s, err := corpus.OpenStore(context.Background(), path)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s, path
}

// rec builds a Record the way readers do: Paper.ID is the stable ID.
func rec(p corpus.Paper, key, file string, line int) corpus.Record {
	p.ID = corpus.PaperID(p)
	return corpus.Record{Paper: p, Key: key, File: file, Line: line, Kind: "article"}
}

var (
	vaswani = corpus.Author{Family: "Vaswani", Given: "Ashish"}
	devlin  = corpus.Author{Family: "Devlin", Given: "Jacob"}
)

func attention(doi string) corpus.Paper {
	return corpus.Paper{Title: "Attention Is All You Need", Authors: []corpus.Author{vaswani}, Year: 2017, DOI: doi}
}

func ingest(t *testing.T, s *corpus.Store, recs ...corpus.Record) corpus.IngestStats {
	t.Helper()
	st, err := s.Ingest(t.Context(), recs)
	require.NoError(t, err)
	return st
}

func allPapers(t *testing.T, s *corpus.Store) []corpus.Paper {
	t.Helper()
	var ps []corpus.Paper
	require.NoError(t, s.Each(t.Context(), func(p corpus.Paper) error {
		ps = append(ps, p)
		return nil
	}))
	return ps
}

func TestStoreIngest(t *testing.T) {
	bare := attention("")
	bareID := corpus.PaperID(bare)
	full := corpus.Paper{
		Type: "paper-conference", Title: "Attention Is All You Need", Authors: []corpus.Author{vaswani},
		Year: 2017, Venue: "NeurIPS", DOI: "10.5555/3295222.3295349", URL: "https://example.org/a",
		Abstract: "The dominant sequence transduction models…", Keywords: []string{"transformer", "attention"},
		Publisher: "Curran", Volume: "30", Issue: "1", Pages: "5998–6008",
	}
	tests := []struct {
		name      string
		batches   [][]corpus.Record
		wantStats []corpus.IngestStats
		want      []corpus.Paper // all papers, by ID
	}{
		{
			name: "same record twice in one batch is one paper",
			batches: [][]corpus.Record{{
				rec(attention("10.5555/X"), "vaswani2017", "a.bib", 1),
				rec(attention("10.5555/X"), "vaswani2017", "a.bib", 1),
			}},
			wantStats: []corpus.IngestStats{{Read: 2, Added: 1, Merged: 1, Aliases: 1}},
			// The ID is the normalised DOI; the DOI is kept as written.
			want: []corpus.Paper{{ID: "10.5555/x", Title: "Attention Is All You Need", Authors: []corpus.Author{vaswani}, Year: 2017, DOI: "10.5555/X"}},
		},
		{
			name: "same record in two batches is one paper",
			batches: [][]corpus.Record{
				{rec(attention("10.5555/x"), "k", "a.bib", 1)},
				{rec(attention("10.5555/x"), "k", "b.bib", 7)},
			},
			wantStats: []corpus.IngestStats{{Read: 1, Added: 1, Aliases: 1}, {Read: 1, Merged: 1}},
			want:      []corpus.Paper{{ID: "10.5555/x", Title: "Attention Is All You Need", Authors: []corpus.Author{vaswani}, Year: 2017, DOI: "10.5555/x"}},
		},
		{
			name: "later record fills gaps and never overwrites",
			batches: [][]corpus.Record{
				{rec(corpus.Paper{DOI: "10.1/a", Title: "First Title", Venue: "SIGIR"}, "", "a.bib", 1)},
				{rec(corpus.Paper{DOI: "10.1/A", Title: "Other Title", Venue: "CIKM", Year: 2020, Abstract: "abs"}, "", "b.bib", 1)},
			},
			wantStats: []corpus.IngestStats{{Read: 1, Added: 1}, {Read: 1, Merged: 1, Updated: 1}},
			want:      []corpus.Paper{{ID: "10.1/a", DOI: "10.1/a", Title: "First Title", Venue: "SIGIR", Year: 2020, Abstract: "abs"}},
		},
		{
			name: "every field survives the store",
			batches: [][]corpus.Record{
				{rec(full, "", "a.bib", 1)},
			},
			wantStats: []corpus.IngestStats{{Read: 1, Added: 1}},
			want:      []corpus.Paper{func() corpus.Paper { p := full; p.ID = "10.5555/3295222.3295349"; return p }()},
		},
		{
			name: "bare record merges into the DOI paper with its fingerprint",
			batches: [][]corpus.Record{
				{rec(attention("10.5555/x"), "", "a.bib", 1)},
				{rec(func() corpus.Paper { p := bare; p.Venue = "NeurIPS"; return p }(), "vaswani2017", "b.bib", 3)},
			},
			wantStats: []corpus.IngestStats{{Read: 1, Added: 1}, {Read: 1, Merged: 1, Updated: 1, Aliases: 1}},
			want:      []corpus.Paper{{ID: "10.5555/x", DOI: "10.5555/x", Title: "Attention Is All You Need", Authors: []corpus.Author{vaswani}, Year: 2017, Venue: "NeurIPS"}},
		},
		{
			name: "DOI record absorbs the earlier bare paper",
			batches: [][]corpus.Record{
				{rec(func() corpus.Paper { p := bare; p.Venue = "NeurIPS"; return p }(), "vaswani2017", "b.bib", 3)},
				{rec(attention("10.5555/x"), "", "a.bib", 1)},
			},
			wantStats: []corpus.IngestStats{{Read: 1, Added: 1, Aliases: 1}, {Read: 1, Merged: 1, Updated: 1, Aliases: 1}},
			want:      []corpus.Paper{{ID: "10.5555/x", DOI: "10.5555/x", Title: "Attention Is All You Need", Authors: []corpus.Author{vaswani}, Year: 2017, Venue: "NeurIPS"}},
		},
		{
			name: "two DOIs with identical title stay two papers",
			batches: [][]corpus.Record{{
				rec(attention("10.1/one"), "", "a.bib", 1),
				rec(attention("10.1/two"), "", "a.bib", 9),
			}},
			wantStats: []corpus.IngestStats{{Read: 2, Added: 2}},
			want: []corpus.Paper{
				{ID: "10.1/one", DOI: "10.1/one", Title: "Attention Is All You Need", Authors: []corpus.Author{vaswani}, Year: 2017},
				{ID: "10.1/two", DOI: "10.1/two", Title: "Attention Is All You Need", Authors: []corpus.Author{vaswani}, Year: 2017},
			},
		},
		{
			name: "bare record matching two DOI papers becomes its own paper",
			batches: [][]corpus.Record{{
				rec(attention("10.1/one"), "", "a.bib", 1),
				rec(attention("10.1/two"), "", "a.bib", 9),
				rec(bare, "", "a.bib", 20),
			}},
			wantStats: []corpus.IngestStats{{Read: 3, Added: 3}},
			want: []corpus.Paper{
				{ID: "10.1/one", DOI: "10.1/one", Title: "Attention Is All You Need", Authors: []corpus.Author{vaswani}, Year: 2017},
				{ID: "10.1/two", DOI: "10.1/two", Title: "Attention Is All You Need", Authors: []corpus.Author{vaswani}, Year: 2017},
				{ID: bareID, Title: "Attention Is All You Need", Authors: []corpus.Author{vaswani}, Year: 2017},
			},
		},
		{
			name: "arXiv version and prefix normalised",
			batches: [][]corpus.Record{{
				rec(corpus.Paper{Title: "BERT", Authors: []corpus.Author{devlin}, ArXiv: "arXiv:1810.04805v2"}, "devlin2019", "a.bib", 1),
				rec(corpus.Paper{Title: "BERT", Year: 2019, ArXiv: "1810.04805"}, "", "b.bib", 1),
			}},
			wantStats: []corpus.IngestStats{{Read: 2, Added: 1, Merged: 1, Updated: 1, Aliases: 1}},
			want:      []corpus.Paper{{ID: "arxiv:1810.04805", Title: "BERT", Authors: []corpus.Author{devlin}, Year: 2019, ArXiv: "1810.04805"}},
		},
		{
			name: "record without DOI, arXiv id or title is skipped",
			batches: [][]corpus.Record{{
				rec(corpus.Paper{Year: 2020, Authors: []corpus.Author{devlin}}, "nothing", "a.bib", 1),
			}},
			wantStats: []corpus.IngestStats{{Read: 1, Skipped: 1}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := openStore(t)
			for i, b := range tc.batches {
				st := ingest(t, s, b...)
				assert.Equal(t, tc.wantStats[i], st, "batch %d", i)
			}
			n, err := s.Count(t.Context())
			require.NoError(t, err)
			assert.Equal(t, len(tc.want), n)
			assert.Equal(t, tc.want, allPapers(t, s))
			for _, w := range tc.want {
				got, err := s.Get(t.Context(), w.ID)
				require.NoError(t, err)
				assert.Equal(t, w, got)
			}
		})
	}
}

// TestPaperJSONRoundTrip records what the CSL-JSON form, which the store
// keeps, preserves: every field of a normalised paper, but not keywords
// containing commas, DOIs or arXiv ids in unnormalised form, nor empty
// (non-nil) slices. Ingest normalises these before storing.
func TestPaperJSONRoundTrip(t *testing.T) {
	full := corpus.Paper{
		ID: "10.5555/3295222.3295349", Type: "paper-conference", Title: "Attention Is All You Need",
		Authors: []corpus.Author{vaswani, {Literal: "Google Brain"}}, Year: 2017, Venue: "NeurIPS",
		DOI: "10.5555/3295222.3295349", URL: "https://example.org/a", Abstract: "abs",
		Keywords: []string{"transformer", "attention"}, ArXiv: "1706.03762", Publisher: "Curran",
		Volume: "30", Issue: "1", Pages: "5998–6008",
	}
	tests := []struct {
		name string
		in   corpus.Paper
		want corpus.Paper
	}{
		{name: "all fields", in: full, want: full},
		{name: "keyword with comma is split",
			in:   corpus.Paper{ID: "x", Keywords: []string{"neural networks, deep", "ir"}},
			want: corpus.Paper{ID: "x", Keywords: []string{"neural networks", "deep", "ir"}}},
		{name: "DOI without resolver, case kept",
			in:   corpus.Paper{ID: "x", DOI: "https://doi.org/10.1145/ABC"},
			want: corpus.Paper{ID: "x", DOI: "10.1145/ABC"}},
		{name: "arXiv version dropped",
			in:   corpus.Paper{ID: "x", ArXiv: "1706.03762v5"},
			want: corpus.Paper{ID: "x", ArXiv: "1706.03762"}},
		{name: "empty slices become nil",
			in:   corpus.Paper{ID: "x", Authors: []corpus.Author{}, Keywords: []string{}},
			want: corpus.Paper{ID: "x"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.in)
			require.NoError(t, err)
			var got corpus.Paper
			require.NoError(t, json.Unmarshal(b, &got))
			assert.Equal(t, tc.want, got)

			// The store gives back the normalised form too.
			s, _ := openStore(t)
			in := tc.in
			in.Title = "T"
			st := ingest(t, s, corpus.Record{Paper: in})
			require.Equal(t, 1, st.Added)
			ps := allPapers(t, s)
			require.Len(t, ps, 1)
			want := tc.want
			want.Title, want.ID = "T", ps[0].ID
			assert.Equal(t, want, ps[0])
		})
	}
}

// TestStoreKeepsEveryField fills every field of Paper, found by
// reflection so that a field added later is covered, and checks that the
// store gives it back and agrees with Paper's own JSON round trip.
func TestStoreKeepsEveryField(t *testing.T) {
	var p corpus.Paper
	v := reflect.ValueOf(&p).Elem()
	for i := range v.NumField() {
		f, name := v.Field(i), v.Type().Field(i).Name
		switch {
		case name == "DOI":
			f.SetString("10.1/every")
		case name == "ArXiv":
			f.SetString("1706.03762")
		case f.Kind() == reflect.String:
			f.SetString("value of " + name)
		case f.Kind() == reflect.Int:
			f.SetInt(1999)
		case f.Type() == reflect.TypeOf([]corpus.Author(nil)):
			f.Set(reflect.ValueOf([]corpus.Author{vaswani, {Literal: "Org"}}))
		case f.Type() == reflect.TypeOf([]string(nil)):
			f.Set(reflect.ValueOf([]string{"one", "two"}))
		default:
			t.Fatalf("Paper.%s has a kind this test does not fill; extend it", name)
		}
	}
	p.ID = corpus.PaperID(p)
	s, _ := openStore(t)
	ingest(t, s, corpus.Record{Paper: p})
	got, err := s.Get(t.Context(), p.ID)
	require.NoError(t, err)
	assert.Equal(t, p, got)

	b, err := json.Marshal(p)
	require.NoError(t, err)
	var viaJSON corpus.Paper
	require.NoError(t, json.Unmarshal(b, &viaJSON))
	assert.Equal(t, viaJSON, got)
}

func TestStoreResolve(t *testing.T) {
	s, _ := openStore(t)
	ingest(t, s,
		// ACM-CR: the key is a mixed-case DOI that differs from the doi field.
		rec(corpus.Paper{Title: "Paper A", DOI: "10.1145/3269206.3271693"}, "10.1145/3269206.3271753", "acm.jsonl", 1),
		rec(corpus.Paper{Title: "Paper B", DOI: "10.1145/3397271.3401032"}, "10.1145/3397271.3401032", "acm.jsonl", 2),
		rec(corpus.Paper{Title: "Paper C", DOI: "10.1145/CCC.111"}, "10.1145/CcC.111", "acm.jsonl", 3),
		rec(attention(""), "vaswani2017", "refs.bib", 1),
		rec(corpus.Paper{Title: "BERT", ArXiv: "1810.04805"}, "devlin2019", "refs.bib", 9),
		// Two papers whose keys differ only in case.
		rec(corpus.Paper{Title: "Smith One", DOI: "10.9/s1"}, "Smith2020", "refs.bib", 20),
		rec(corpus.Paper{Title: "Smith Two", DOI: "10.9/s2"}, "smith2020", "refs.bib", 30),
	)
	attID := corpus.PaperID(attention(""))
	tests := []struct {
		name   string
		asked  string
		want   string // "" when absent
		getErr error
	}{
		{name: "paper ID", asked: "10.1145/3269206.3271693", want: "10.1145/3269206.3271693"},
		{name: "key differing from doi field", asked: "10.1145/3269206.3271753", want: "10.1145/3269206.3271693"},
		{name: "that key with doi: prefix", asked: "doi:10.1145/3269206.3271753", want: "10.1145/3269206.3271693"},
		{name: "mixed-case DOI", asked: "10.1145/ccc.111", want: "10.1145/ccc.111"},
		{name: "mixed-case DOI key", asked: "10.1145/CcC.111", want: "10.1145/ccc.111"},
		{name: "other case of DOI", asked: "10.1145/CCC.111", want: "10.1145/ccc.111"},
		{name: "doi: prefix", asked: "doi:10.1145/3397271.3401032", want: "10.1145/3397271.3401032"},
		{name: "resolver URL", asked: "https://doi.org/10.1145/3397271.3401032", want: "10.1145/3397271.3401032"},
		{name: "cite key", asked: "vaswani2017", want: attID},
		{name: "cite key other case", asked: "Vaswani2017", want: attID},
		{name: "h: ID", asked: attID, want: attID},
		{name: "arXiv ID", asked: "arxiv:1810.04805", want: "arxiv:1810.04805"},
		{name: "arXiv with version", asked: "arXiv:1810.04805v3", want: "arxiv:1810.04805"},
		{name: "case-sensitive key exact", asked: "Smith2020", want: "10.9/s1"},
		{name: "case-sensitive key exact lower", asked: "smith2020", want: "10.9/s2"},
		{name: "ambiguous case-insensitive key", asked: "SMITH2020", getErr: corpus.ErrAmbiguous},
		{name: "missing", asked: "nobody1999", getErr: corpus.ErrNotFound},
		{name: "missing DOI", asked: "10.1/none", getErr: corpus.ErrNotFound},
		{name: "empty", asked: "", getErr: corpus.ErrNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.Resolve(t.Context(), []string{tc.asked})
			require.NoError(t, err)
			p, err := s.Get(t.Context(), tc.asked)
			if tc.want == "" {
				assert.NotContains(t, got, tc.asked)
				require.ErrorIs(t, err, tc.getErr)
				return
			}
			assert.Equal(t, map[string]string{tc.asked: tc.want}, got)
			require.NoError(t, err)
			assert.Equal(t, tc.want, p.ID)
		})
	}
}

func TestStoreAliasConflicts(t *testing.T) {
	tests := []struct {
		name      string
		recs      []corpus.Record
		want      corpus.IngestStats
		alias     string
		aliasOf   string
		wantCount int
	}{
		{
			name: "key reused for another paper keeps the first",
			recs: []corpus.Record{
				rec(corpus.Paper{Title: "One", DOI: "10.1/one"}, "smith2020", "a.bib", 1),
				rec(corpus.Paper{Title: "Two", DOI: "10.1/two"}, "smith2020", "b.bib", 1),
			},
			want: corpus.IngestStats{Read: 2, Added: 2, Aliases: 1, AliasConflicts: 1, KeyConflicts: []corpus.KeyConflict{
				{Key: "smith2020", File: "b.bib", Line: 1, Paper: "10.1/two", Other: "10.1/one", OtherFile: "a.bib", OtherLine: 1},
			}},
			alias: "smith2020", aliasOf: "10.1/one", wantCount: 2,
		},
		{
			name: "key that is another paper's ID",
			recs: []corpus.Record{
				rec(corpus.Paper{Title: "One", DOI: "10.1/one"}, "", "a.bib", 1),
				rec(corpus.Paper{Title: "Two", DOI: "10.1/two"}, "10.1/ONE", "b.bib", 1),
			},
			want: corpus.IngestStats{Read: 2, Added: 2, AliasConflicts: 1, KeyConflicts: []corpus.KeyConflict{
				{Key: "10.1/ONE", File: "b.bib", Line: 1, Paper: "10.1/two", Other: "10.1/one", OtherFile: "a.bib", OtherLine: 1},
			}},
			alias: "10.1/ONE", aliasOf: "10.1/one", wantCount: 2,
		},
		{
			name: "ID arriving after a key naming it",
			recs: []corpus.Record{
				rec(corpus.Paper{Title: "Two", DOI: "10.1/two"}, "10.1/one", "b.bib", 1),
				rec(corpus.Paper{Title: "One", DOI: "10.1/one"}, "", "a.bib", 1),
			},
			want:  corpus.IngestStats{Read: 2, Added: 2, Aliases: 1, AliasConflicts: 1},
			alias: "10.1/one", aliasOf: "10.1/one", wantCount: 2,
		},
		{
			name: "same key for the same paper is no conflict",
			recs: []corpus.Record{
				rec(corpus.Paper{Title: "One", DOI: "10.1/one"}, "k", "a.bib", 1),
				rec(corpus.Paper{Title: "One", DOI: "10.1/one"}, "k", "b.bib", 1),
			},
			want:  corpus.IngestStats{Read: 2, Added: 1, Merged: 1, Aliases: 1},
			alias: "k", aliasOf: "10.1/one", wantCount: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := openStore(t)
			assert.Equal(t, tc.want, ingest(t, s, tc.recs...))
			p, err := s.Get(t.Context(), tc.alias)
			require.NoError(t, err)
			assert.Equal(t, tc.aliasOf, p.ID)
			n, err := s.Count(t.Context())
			require.NoError(t, err)
			assert.Equal(t, tc.wantCount, n)
		})
	}
}

func TestStoreGetMany(t *testing.T) {
	s, _ := openStore(t)
	var recs []corpus.Record
	for i := range 1500 {
		recs = append(recs, rec(corpus.Paper{Title: fmt.Sprintf("Paper %d", i), DOI: fmt.Sprintf("10.1/p%d", i)}, fmt.Sprintf("key%d", i), "a.bib", i+1))
	}
	ingest(t, s, recs...)

	var asked []string
	want := map[string]string{} // asked → ID
	for i := 0; i < 1000; i++ {
		switch i % 4 {
		case 0:
			asked = append(asked, fmt.Sprintf("10.1/p%d", i))
			want[asked[len(asked)-1]] = fmt.Sprintf("10.1/p%d", i)
		case 1:
			asked = append(asked, fmt.Sprintf("key%d", i))
			want[asked[len(asked)-1]] = fmt.Sprintf("10.1/p%d", i)
		case 2:
			asked = append(asked, fmt.Sprintf("missing%d", i))
		case 3:
			asked = append(asked, fmt.Sprintf("10.1/P%d", i)) // case-insensitive DOI
			want[asked[len(asked)-1]] = fmt.Sprintf("10.1/p%d", i)
		}
	}
	asked = append(asked, "key1", "10.1/p0", "key1") // duplicates
	require.Len(t, asked, 1003)

	got, err := s.GetMany(t.Context(), asked)
	require.NoError(t, err)
	assert.Len(t, got, len(want))
	for k, id := range want {
		if assert.Contains(t, got, k) {
			assert.Equal(t, id, got[k].ID)
			assert.Equal(t, "Paper "+strings.TrimPrefix(id, "10.1/p"), got[k].Title)
		}
	}

	res, err := s.Resolve(t.Context(), asked)
	require.NoError(t, err)
	assert.Equal(t, want, res)

	empty, err := s.GetMany(t.Context(), nil)
	require.NoError(t, err)
	assert.Empty(t, empty)

	// GetByID takes paper IDs only: keys, other cases and unknown IDs are
	// absent; each paper is the one GetMany gives
	byID, err := s.GetByID(t.Context(), asked)
	require.NoError(t, err)
	var ids []string
	for i := 0; i < 1000; i += 4 {
		ids = append(ids, fmt.Sprintf("10.1/p%d", i))
	}
	require.Len(t, byID, len(ids))
	for _, id := range ids {
		assert.Equal(t, got[id], byID[id], id)
	}
	empty, err = s.GetByID(t.Context(), nil)
	require.NoError(t, err)
	assert.Empty(t, empty)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = s.GetByID(ctx, ids)
	assert.ErrorIs(t, err, context.Canceled)
}

func TestStoreRemove(t *testing.T) {
	tests := []struct {
		name      string
		remove    []string
		wantN     int
		wantLeft  []string
		wantGone  []string
		wantBump  bool
		goneAlias string
	}{
		{name: "by ID", remove: []string{"10.1/a"}, wantN: 1, wantLeft: []string{"10.1/b", "10.1/c"}, wantGone: []string{"10.1/a"}, wantBump: true, goneAlias: "ka"},
		{name: "by alias", remove: []string{"kb"}, wantN: 1, wantLeft: []string{"10.1/a", "10.1/c"}, wantGone: []string{"10.1/b"}, wantBump: true, goneAlias: "kb"},
		{name: "several and duplicates", remove: []string{"10.1/a", "ka", "10.1/C"}, wantN: 2, wantLeft: []string{"10.1/b"}, wantGone: []string{"10.1/a", "10.1/c"}, wantBump: true},
		{name: "unknown", remove: []string{"nope"}, wantN: 0, wantLeft: []string{"10.1/a", "10.1/b", "10.1/c"}},
		{name: "none", wantN: 0, wantLeft: []string{"10.1/a", "10.1/b", "10.1/c"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := openStore(t)
			ingest(t, s,
				rec(corpus.Paper{Title: "A", DOI: "10.1/a"}, "ka", "a.bib", 1),
				rec(corpus.Paper{Title: "B", DOI: "10.1/b"}, "kb", "a.bib", 2),
				rec(corpus.Paper{Title: "C", DOI: "10.1/c"}, "kc", "a.bib", 3),
			)
			g0, err := s.Generation(t.Context())
			require.NoError(t, err)
			n, err := s.Remove(t.Context(), tc.remove...)
			require.NoError(t, err)
			assert.Equal(t, tc.wantN, n)
			var left []string
			for _, p := range allPapers(t, s) {
				left = append(left, p.ID)
			}
			assert.Equal(t, tc.wantLeft, left)
			g1, err := s.Generation(t.Context())
			require.NoError(t, err)
			assert.Equal(t, tc.wantBump, g1 > g0)
			gone, err := s.RemovedSince(t.Context(), g0)
			require.NoError(t, err)
			assert.Equal(t, tc.wantGone, gone)
			if tc.goneAlias != "" {
				_, err := s.Get(t.Context(), tc.goneAlias)
				require.ErrorIs(t, err, corpus.ErrNotFound)
			}
		})
	}
}

func TestStoreGeneration(t *testing.T) {
	s, _ := openStore(t)
	a := rec(corpus.Paper{Title: "A", DOI: "10.1/a"}, "ka", "a.bib", 1)
	steps := []struct {
		name   string
		do     func() error
		bumped bool
	}{
		{name: "new paper", bumped: true, do: func() error { _, err := s.Ingest(t.Context(), []corpus.Record{a}); return err }},
		{name: "same record again", do: func() error { _, err := s.Ingest(t.Context(), []corpus.Record{a}); return err }},
		{name: "same record from another file", do: func() error {
			b := a
			b.File = "b.bib"
			_, err := s.Ingest(t.Context(), []corpus.Record{b})
			return err
		}},
		{name: "gap filled", bumped: true, do: func() error {
			b := a
			b.Paper.Year = 2020
			_, err := s.Ingest(t.Context(), []corpus.Record{b})
			return err
		}},
		{name: "new alias", bumped: true, do: func() error {
			b := a
			b.Key = "other"
			_, err := s.Ingest(t.Context(), []corpus.Record{b})
			return err
		}},
		{name: "empty batch", do: func() error { _, err := s.Ingest(t.Context(), nil); return err }},
		{name: "meta", do: func() error { return s.SetMeta(t.Context(), "embedder", "x") }},
		{name: "mark source", do: func() error { return s.MarkSource(t.Context(), "a.bib", 1, time.Now(), "ab", 1) }},
		{name: "remove unknown", do: func() error { _, err := s.Remove(t.Context(), "nope"); return err }},
		{name: "remove", bumped: true, do: func() error { _, err := s.Remove(t.Context(), "ka"); return err }},
	}
	g, err := s.Generation(t.Context())
	require.NoError(t, err)
	assert.Zero(t, g)
	for _, st := range steps {
		require.NoError(t, st.do(), st.name)
		g2, err := s.Generation(t.Context())
		require.NoError(t, err)
		if st.bumped {
			assert.Equal(t, g+1, g2, st.name)
		} else {
			assert.Equal(t, g, g2, st.name)
		}
		g = g2
	}
}

func TestStoreEachSince(t *testing.T) {
	s, _ := openStore(t)
	ingest(t, s,
		rec(corpus.Paper{Title: "A", DOI: "10.1/a"}, "", "a.bib", 1),
		rec(corpus.Paper{Title: "B", DOI: "10.1/b"}, "", "a.bib", 2),
	)
	g1, err := s.Generation(t.Context())
	require.NoError(t, err)
	ingest(t, s,
		rec(corpus.Paper{Title: "B", DOI: "10.1/b", Year: 2000}, "", "b.bib", 1), // gap filled
		rec(corpus.Paper{Title: "C", DOI: "10.1/c"}, "", "b.bib", 2),
		rec(corpus.Paper{Title: "A", DOI: "10.1/a"}, "", "b.bib", 3), // unchanged
	)
	var changed []string
	require.NoError(t, s.EachSince(t.Context(), g1, func(p corpus.Paper) error {
		changed = append(changed, p.ID)
		return nil
	}))
	assert.Equal(t, []string{"10.1/b", "10.1/c"}, changed)

	// Removed then stored again: changed, not removed.
	g2, err := s.Generation(t.Context())
	require.NoError(t, err)
	_, err = s.Remove(t.Context(), "10.1/a")
	require.NoError(t, err)
	ingest(t, s, rec(corpus.Paper{Title: "A", DOI: "10.1/a"}, "", "c.bib", 1))
	gone, err := s.RemovedSince(t.Context(), g2)
	require.NoError(t, err)
	assert.Empty(t, gone)
	changed = nil
	require.NoError(t, s.EachSince(t.Context(), g2, func(p corpus.Paper) error {
		changed = append(changed, p.ID)
		return nil
	}))
	assert.Equal(t, []string{"10.1/a"}, changed)

	// An absorbed bare paper is reported removed.
	g3, err := s.Generation(t.Context())
	require.NoError(t, err)
	bare := attention("")
	ingest(t, s, rec(bare, "", "d.bib", 1))
	ingest(t, s, rec(attention("10.5555/x"), "", "d.bib", 2))
	gone, err = s.RemovedSince(t.Context(), g3)
	require.NoError(t, err)
	assert.Equal(t, []string{corpus.PaperID(bare)}, gone)
	p, err := s.Get(t.Context(), corpus.PaperID(bare))
	require.NoError(t, err)
	assert.Equal(t, "10.5555/x", p.ID)
}

func TestStoreEachStops(t *testing.T) {
	s, _ := openStore(t)
	ingest(t, s,
		rec(corpus.Paper{Title: "A", DOI: "10.1/a"}, "ka", "a.bib", 1),
		rec(corpus.Paper{Title: "B", DOI: "10.1/b"}, "kb", "a.bib", 2),
	)
	stop := fmt.Errorf("stop")
	calls := 0
	err := s.Each(t.Context(), func(p corpus.Paper) error {
		calls++
		// Reading the store from inside Each must not deadlock.
		_, err := s.Get(t.Context(), p.ID)
		require.NoError(t, err)
		return stop
	})
	require.ErrorIs(t, err, stop)
	assert.Equal(t, 1, calls)
}

func TestStoreRecordSources(t *testing.T) {
	s, _ := openStore(t)
	ingest(t, s,
		rec(attention("10.5555/x"), "10.5555/X", "acm.jsonl", 4),
		rec(attention(""), "vaswani2017", "refs.bib", 12),
	)
	got, err := s.RecordSources(t.Context(), "vaswani2017")
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.JSONEq(t, `{"id":"10.5555/X","title":"Attention Is All You Need","author":[{"family":"Vaswani","given":"Ashish"}],"issued":{"date-parts":[[2017]]},"DOI":"10.5555/x"}`, string(got[0].Item))
	assert.JSONEq(t, `{"id":"vaswani2017","title":"Attention Is All You Need","author":[{"family":"Vaswani","given":"Ashish"}],"issued":{"date-parts":[[2017]]}}`, string(got[1].Item))
	for i := range got {
		got[i].Item = nil
	}
	assert.Equal(t, []corpus.RecordSource{
		{File: "acm.jsonl", Line: 4, Key: "10.5555/X"},
		{File: "refs.bib", Line: 12, Key: "vaswani2017"},
	}, got)
	_, err = s.RecordSources(t.Context(), "nope")
	require.ErrorIs(t, err, corpus.ErrNotFound)
}

func TestStoreSources(t *testing.T) {
	s, _ := openStore(t)
	mt := time.Date(2024, 5, 1, 12, 0, 0, 123, time.UTC)
	require.NoError(t, s.MarkSource(t.Context(), "refs.bib", 100, mt, "ABCDEF", 7))
	tests := []struct {
		name string
		path string
		size int64
		mt   time.Time
		sum  string
		want bool
	}{
		{name: "same content", path: "refs.bib", size: 100, mt: mt, sum: "abcdef", want: true},
		{name: "same content, touched", path: "refs.bib", size: 100, mt: mt.Add(time.Hour), sum: "abcdef", want: true},
		{name: "other hash", path: "refs.bib", size: 100, mt: mt, sum: "012345"},
		{name: "other size", path: "refs.bib", size: 101, mt: mt, sum: "abcdef"},
		{name: "no hash, same mtime", path: "refs.bib", size: 100, mt: mt, want: true},
		{name: "no hash, other mtime", path: "refs.bib", size: 100, mt: mt.Add(time.Second)},
		{name: "unknown file", path: "other.bib", size: 100, mt: mt, sum: "abcdef"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.SourceSeen(t.Context(), tc.path, tc.size, tc.mt, tc.sum)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
	// Marking again replaces.
	require.NoError(t, s.MarkSource(t.Context(), "refs.bib", 200, mt, "999", 9))
	got, err := s.SourceSeen(t.Context(), "refs.bib", 100, mt, "abcdef")
	require.NoError(t, err)
	assert.False(t, got)
}

func TestStoreMeta(t *testing.T) {
	s, _ := openStore(t)
	v, err := s.Meta(t.Context(), "embedder")
	require.NoError(t, err)
	assert.Empty(t, v)
	require.NoError(t, s.SetMeta(t.Context(), "embedder", "nomic"))
	require.NoError(t, s.SetMeta(t.Context(), "embedder", "bge"))
	v, err = s.Meta(t.Context(), "embedder")
	require.NoError(t, err)
	assert.Equal(t, "bge", v)
}

func TestStoreReopen(t *testing.T) {
	s, path := openStore(t)
	ingest(t, s, rec(attention("10.5555/x"), "vaswani2017", "a.bib", 1))
	require.NoError(t, s.SetMeta(t.Context(), "embedder", "bge"))
	require.NoError(t, s.MarkSource(t.Context(), "a.bib", 10, time.Unix(5, 0), "aa", 1))
	g, err := s.Generation(t.Context())
	require.NoError(t, err)
	require.NoError(t, s.Close())

	s2, err := corpus.OpenStore(t.Context(), path)
	require.NoError(t, err)
	defer s2.Close()
	p, err := s2.Get(t.Context(), "vaswani2017")
	require.NoError(t, err)
	assert.Equal(t, "10.5555/x", p.ID)
	g2, err := s2.Generation(t.Context())
	require.NoError(t, err)
	assert.Equal(t, g, g2)
	v, err := s2.Meta(t.Context(), "embedder")
	require.NoError(t, err)
	assert.Equal(t, "bge", v)
	seen, err := s2.SourceSeen(t.Context(), "a.bib", 10, time.Unix(5, 0), "aa")
	require.NoError(t, err)
	assert.True(t, seen)
}

func TestStoreSchemaVersion(t *testing.T) {
	s, path := openStore(t)
	require.NoError(t, s.Close())
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	_, err = db.Exec("PRAGMA user_version = 99")
	require.NoError(t, err)
	require.NoError(t, db.Close())
	_, err = corpus.OpenStore(t.Context(), path)
	require.ErrorIs(t, err, corpus.ErrSchemaVersion)
}

func TestStoreNotFound(t *testing.T) {
	s, _ := openStore(t)
	_, err := s.Get(t.Context(), "10.1/none")
	require.ErrorIs(t, err, corpus.ErrNotFound)
	assert.Contains(t, err.Error(), "10.1/none")
}

func TestStoreContextCanceled(t *testing.T) {
	s, _ := openStore(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := s.Ingest(ctx, []corpus.Record{rec(attention("10.5555/x"), "k", "a.bib", 1)})
	require.ErrorIs(t, err, context.Canceled)
	_, err = s.Remove(ctx, "k")
	require.ErrorIs(t, err, context.Canceled)

	n, err := s.Count(t.Context())
	require.NoError(t, err)
	assert.Zero(t, n)
	g, err := s.Generation(t.Context())
	require.NoError(t, err)
	assert.Zero(t, g)
}

// TestStoreContextCanceledMidBatch cancels a large batch while it runs:
// nothing of it may be stored.
func TestStoreContextCanceledMidBatch(t *testing.T) {
	s, _ := openStore(t)
	ingest(t, s, rec(attention("10.5555/x"), "k", "a.bib", 1))
	recs := synthRecords(rand.New(rand.NewSource(7)), 50_000)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err := s.Ingest(ctx, recs)
	if err == nil {
		t.Skip("machine ingested 50k records in 50ms; nothing was cancelled")
	}
	require.ErrorIs(t, err, context.DeadlineExceeded)
	n, err := s.Count(t.Context())
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	g, err := s.Generation(t.Context())
	require.NoError(t, err)
	assert.Equal(t, int64(1), g)
	// The store still works after the rollback.
	ingest(t, s, recs[:10]...)
}

// synthRecords makes n records like a bibliography dump: mostly DOI
// papers, some arXiv and bare ones, and about 10% repeats of earlier
// records (some without their DOI, matching by fingerprint).
func synthRecords(rng *rand.Rand, n int) []corpus.Record {
	words := strings.Fields("neural retrieval dense sparse citation transformer graph learning " +
		"ranking query document model language attention network embedding search evaluation " +
		"recommendation knowledge scientific large efficient robust contrastive generative")
	families := []string{"Smith", "Wang", "Müller", "García", "Kim", "Nguyen", "Rossi", "Dupont", "Ivanov", "Sato"}
	sentence := func(k int) string {
		ws := make([]string, k)
		for i := range ws {
			ws[i] = words[rng.Intn(len(words))]
		}
		return strings.Join(ws, " ")
	}
	recs := make([]corpus.Record, 0, n)
	for i := 0; i < n; i++ {
		if i > 100 && rng.Intn(10) == 0 {
			r := recs[rng.Intn(len(recs))]
			r.Line = i + 1
			if rng.Intn(2) == 0 {
				r.Paper.DOI, r.Paper.ArXiv = "", ""
				r.Paper.Venue = "Proc. " + sentence(2)
				r.Paper.ID = corpus.PaperID(r.Paper)
				r.Key = fmt.Sprintf("%s%d", strings.ToLower(r.Paper.Authors[0].Family), i)
			}
			recs = append(recs, r)
			continue
		}
		p := corpus.Paper{
			Type:     "paper-conference",
			Title:    fmt.Sprintf("%s %d", sentence(6+rng.Intn(6)), i),
			Authors:  []corpus.Author{{Family: families[rng.Intn(len(families))], Given: "A."}, {Family: families[rng.Intn(len(families))], Given: "B."}},
			Year:     1990 + rng.Intn(35),
			Venue:    "Proceedings of " + sentence(3),
			Abstract: sentence(80),
			Pages:    fmt.Sprintf("%d-%d", i%500, i%500+10),
		}
		key := fmt.Sprintf("key%d", i)
		switch r := rng.Intn(20); {
		case r < 14:
			p.DOI = fmt.Sprintf("10.1145/%d.%d", 3000000+i/7, i)
			key = fmt.Sprintf("10.1145/%d.%d", 3000000+i/7, i)
		case r < 17:
			p.ArXiv = fmt.Sprintf("%02d%02d.%05d", 10+i%15, 1+i%12, i%100000)
		}
		p.ID = corpus.PaperID(p)
		recs = append(recs, corpus.Record{Paper: p, Key: key, File: "synth.jsonl", Line: i + 1})
	}
	return recs
}

func ingestAll(tb testing.TB, ctx context.Context, s *corpus.Store, recs []corpus.Record, batch int) corpus.IngestStats {
	tb.Helper()
	var total corpus.IngestStats
	for i := 0; i < len(recs); i += batch {
		st, err := s.Ingest(ctx, recs[i:min(i+batch, len(recs))])
		require.NoError(tb, err)
		total.Read += st.Read
		total.Added += st.Added
		total.Merged += st.Merged
		total.Updated += st.Updated
		total.Skipped += st.Skipped
		total.Aliases += st.Aliases
		total.AliasConflicts += st.AliasConflicts
	}
	return total
}

var storeLarge = flag.Bool("store-large", false, "run TestStoreIngest100k (about 10 s)")

// TestStoreIngest100k ingests 100,000 synthetic records in batches of
// 2,000, the ACM-CR shape, and logs the rate; opt-in with -store-large.
func TestStoreIngest100k(t *testing.T) {
	if !*storeLarge {
		t.Skip("slow; run with -store-large")
	}
	recs := synthRecords(rand.New(rand.NewSource(42)), 100_000)
	s, _ := openStore(t)
	start := time.Now()
	st := ingestAll(t, t.Context(), s, recs, 2000)
	el := time.Since(start)
	t.Logf("ingested %d records in %v (%.0f records/s): %+v", len(recs), el, float64(len(recs))/el.Seconds(), st)
	n, err := s.Count(t.Context())
	require.NoError(t, err)
	assert.Equal(t, st.Added, n)
	assert.Equal(t, len(recs), st.Added+st.Merged+st.Skipped)

	ids := make([]string, 0, 1000)
	for _, r := range recs[:1000] {
		ids = append(ids, r.Key)
	}
	start = time.Now()
	got, err := s.GetMany(t.Context(), ids)
	require.NoError(t, err)
	t.Logf("GetMany(1000) in %v", time.Since(start))
	assert.Len(t, got, len(uniq(ids)))

	start = time.Now()
	count := 0
	require.NoError(t, s.Each(t.Context(), func(corpus.Paper) error { count++; return nil }))
	t.Logf("Each over %d papers in %v", count, time.Since(start))
	assert.Equal(t, n, count)
}

func uniq(ss []string) []string {
	out := append([]string(nil), ss...)
	sort.Strings(out)
	j := 0
	for i, s := range out {
		if i == 0 || s != out[j-1] {
			out[j] = s
			j++
		}
	}
	return out[:j]
}

var sinkStats corpus.IngestStats

func BenchmarkIngest(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		recs := synthRecords(rand.New(rand.NewSource(42)), n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			dir := b.TempDir()
			var total time.Duration
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				s, err := corpus.OpenStore(context.Background(), filepath.Join(dir, fmt.Sprintf("%d.sqlite", i)))
				require.NoError(b, err)
				b.StartTimer()
				start := time.Now()
				sinkStats = ingestAll(b, context.Background(), s, recs, 2000)
				total += time.Since(start)
				b.StopTimer()
				require.NoError(b, s.Close())
				b.StartTimer()
			}
			b.ReportMetric(float64(n*b.N)/total.Seconds(), "records/s")
		})
	}
}

var sinkPapers map[string]corpus.Paper

// benchLookupStore returns a store of 20,000 synthetic papers and the keys
// of its first n.
func benchLookupStore(b *testing.B, n int) (*corpus.Store, []string) {
	s, _ := openStore(b)
	recs := synthRecords(rand.New(rand.NewSource(42)), 20_000)
	ingestAll(b, context.Background(), s, recs, 2000)
	ids := make([]string, 0, n)
	for _, r := range recs[:n] {
		ids = append(ids, r.Key)
	}
	return s, ids
}

func BenchmarkGetMany(b *testing.B) {
	s, ids := benchLookupStore(b, 1000)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		sinkPapers, err = s.GetMany(context.Background(), ids)
		require.NoError(b, err)
	}
}

// BenchmarkGetByID looks up the same 100 of 20,000 papers as the
// reranker's candidates are: by GetByID (exact IDs) and by GetMany (IDs
// or aliases).
func BenchmarkGetByID(b *testing.B) {
	s, ids := benchLookupStore(b, 100)
	for _, f := range []struct {
		name string
		get  func(context.Context, []string) (map[string]corpus.Paper, error)
	}{{"GetByID", s.GetByID}, {"GetMany", s.GetMany}} {
		b.Run(f.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var err error
				sinkPapers, err = f.get(context.Background(), ids)
				require.NoError(b, err)
			}
		})
	}
}

// TestStoreConcurrent runs writers and readers at once (meant for -race).
func TestStoreConcurrent(t *testing.T) {
	s, _ := openStore(t)
	recs := synthRecords(rand.New(rand.NewSource(3)), 4000)
	done := make(chan error, 4)
	for w := range 2 {
		go func() {
			var err error
			for i := w * 2000; i < (w+1)*2000 && err == nil; i += 500 {
				_, err = s.Ingest(t.Context(), recs[i:i+500])
			}
			done <- err
		}()
	}
	for range 2 {
		go func() {
			for i := 0; i < 20; i++ {
				if _, err := s.GetMany(t.Context(), []string{recs[i].Key, recs[i+2000].Key}); err != nil {
					done <- err
					return
				}
				if err := s.Each(t.Context(), func(corpus.Paper) error { return nil }); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for range 4 {
		require.NoError(t, <-done)
	}
	n, err := s.Count(t.Context())
	require.NoError(t, err)
	want := ingestAll(t, t.Context(), func() *corpus.Store { s2, _ := openStore(t); return s2 }(), recs, 500).Added
	assert.Equal(t, want, n)
}
