package sparse

// White-box checks of the bleve facts the ranking relies on, and of the
// generic TermFieldReader scoring path (the fast path reads scorch
// segments directly; both must agree).

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/document"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/registry"
	index "github.com/blevesearch/bleve_index_api"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/corpus"
)

// TestBleveNormIsFieldLength checks that bleve's posting norm is
// float32(1/sqrt(field length)), that the length of a multi-valued field is
// the sum over its values, that round(1/norm²) recovers it exactly for long
// fields, and that TermFieldReader.Count is the number of live documents
// with the term across segments (deleted and replaced documents excluded).
func TestBleveNormIsFieldLength(t *testing.T) {
	an, err := analyzer()
	require.NoError(t, err)
	idx, err := bleve.NewUsing(filepath.Join(t.TempDir(), "idx"), newMapping([]string{"f"}), scorch.Name, scorch.Name, nil)
	require.NoError(t, err)
	defer idx.Close()

	field := func(n int) *document.TextField {
		return document.NewTextFieldCustom("f", nil, []byte(strings.Repeat("paper ", n)), index.IndexField, an)
	}
	tests := []struct {
		id      string
		lengths []int // one text field per value
	}{
		{"one", []int{1}},
		{"short", []int{7}},
		{"multi", []int{3, 5}},
		{"multi3", []int{100, 1, 23}},
		{"long", []int{100_000}},
		{"longer", []int{300_001}},
		{"gone", []int{2}},
	}
	want := map[string]int{}
	for _, tc := range tests { // one batch, so one segment, per document
		d := document.NewDocument(tc.id)
		for _, n := range tc.lengths {
			d.AddField(field(n))
			want[tc.id] += n
		}
		b := idx.NewBatch()
		require.NoError(t, b.IndexAdvanced(d))
		require.NoError(t, idx.Batch(b))
	}
	// replace "short" (new length 9) and delete "gone"
	b := idx.NewBatch()
	d := document.NewDocument("short")
	d.AddField(field(9))
	want["short"] = 9
	require.NoError(t, b.IndexAdvanced(d))
	b.Delete("gone")
	delete(want, "gone")
	require.NoError(t, idx.Batch(b))

	adv, err := idx.Advanced()
	require.NoError(t, err)
	rd, err := adv.Reader()
	require.NoError(t, err)
	defer rd.Close()
	tfr, err := rd.TermFieldReader(t.Context(), []byte("paper"), "f", true, true, false)
	require.NoError(t, err)
	defer tfr.Close()
	assert.EqualValues(t, len(want), tfr.Count(), "df counts live documents only")
	n, err := rd.DocCount()
	require.NoError(t, err)
	assert.EqualValues(t, len(want), n)

	got := map[string]int{}
	for {
		p, err := tfr.Next(nil)
		require.NoError(t, err)
		if p == nil {
			break
		}
		require.Len(t, p.ID, 8, "internal IDs are 8-byte big-endian numbers")
		id, err := rd.ExternalID(p.ID)
		require.NoError(t, err)
		assert.EqualValues(t, want[id], p.Freq, id)
		assert.Equal(t, float64(float32(1/math.Sqrt(float64(want[id])))), p.Norm, id)
		got[id] = int(lengthFromNorm(p.Norm))
	}
	assert.Equal(t, want, got)
}

// TestTermFieldReaderPath checks that the generic TermFieldReader scoring
// path gives the same ranking as the segment path.
func TestTermFieldReaderPath(t *testing.T) {
	words := strings.Fields("sparse dense retrieval model models ranking citation graph neural query")
	var ps []corpus.Paper
	for i := range 120 {
		var ab []string
		for j := range 5 + (i*7)%40 {
			ab = append(ab, words[(i*j+j*j+i)%len(words)])
		}
		if i == 3 {
			ab = append(ab, strings.Repeat("graph ", 5000))
		}
		ps = append(ps, corpus.Paper{ID: fmt.Sprintf("p%03d", (i*37)%120), Title: words[i%len(words)] + " " + words[(i/3)%len(words)], Abstract: strings.Join(ab, " ")})
	}
	next := func() func() (corpus.Paper, bool, error) {
		i := 0
		return func() (corpus.Paper, bool, error) {
			if i >= len(ps) {
				return corpus.Paper{}, false, nil
			}
			i++
			return ps[i-1], true, nil
		}
	}
	dir := filepath.Join(t.TempDir(), "idx")
	_, err := Build(t.Context(), dir, BuildOptions{BatchSize: 13, KeepSegments: true}, next(), nil)
	require.NoError(t, err)
	r, err := Open(dir, Options{FieldWeights: map[string]float64{FieldText: 1, FieldTitle: 3}})
	require.NoError(t, err)
	defer r.Close()
	require.Greater(t, len(r.segs), 1)

	for _, q := range []string{"graph", "sparse retrieval models", "citation graph neural query ranking dense", "nothing"} {
		fast, err := r.Retrieve(t.Context(), q, 50)
		require.NoError(t, err)
		segs := r.segs
		r.segs = nil
		slow, err := r.Retrieve(t.Context(), q, 50)
		r.segs = segs
		require.NoError(t, err)
		require.Len(t, slow, len(fast), q)
		for i := range fast {
			assert.Equal(t, fast[i].ID, slow[i].ID, q)
			assert.InDelta(t, fast[i].Score, slow[i].Score, 1e-12*fast[i].Score, q)
		}
	}
}

// TestAnalyzerIsBleveEn: the analyzer of queries and candidates (bleve's
// tokenizer and filters, with the stemmer's results cached) gives exactly
// the tokens of bleve's "en" analyzer, which the index is built with, and
// again from the cache.
func TestAnalyzerIsBleveEn(t *testing.T) {
	ours, err := analyzer()
	require.NoError(t, err)
	theirs, err := registry.NewCache().AnalyzerNamed(AnalyzerName)
	require.NoError(t, err)
	texts := []string{
		"The model's performance of the users' queries", "Retrieving Documents: BM25 in 2020, e-mail 3.5 U.S.A. don't",
		"Hyphen-ated co-operation re-ranking; data_set x86-64 C++ F1-score 1,000.5 ratios of 3:4",
		"Naïve café résumé Straße İstanbul ÉCOLE ﬁnance", "王小明 and 山田太郎 studied カタカナ and 한국어 text",
		"Иванов и Παπαδόπουλος: дерево λόγος", "running runs ran runner generalizations generously relational",
		"", "the of and a", "  \t\n ", "Ωmega‐Δ ‘quoted’ “double” — dash … ellipsis",
	}
	words := strings.Fields("retrieval retrieving retrieved models modelling citation citations cited context contexts " +
		"neural networks learning learned ranking rankings ranked queries query's users' dense sparse BM25 RM3 " +
		"embedding embeddings evaluation evaluated generalization generalizes conditional probabilities analysis " +
		"analyses hypothesis hypotheses e.g. i.e. 3.5% 2,048 x86_64 state-of-the-art pre-trained Transformer's")
	for i := range 400 {
		var b strings.Builder
		for j := range 5 + i%60 {
			b.WriteString(words[(i*31+j*17+j*j)%len(words)])
			b.WriteString([]string{" ", " ", ", ", ". ", "-", " (", ") "}[(i+j)%7])
		}
		texts = append(texts, b.String())
	}
	for pass := range 2 { // the second pass answers from the stem cache
		for _, text := range texts {
			want := theirs.Analyze([]byte(text))
			got := ours.Analyze([]byte(text))
			require.Equal(t, len(want), len(got), "pass %d: %q", pass, text)
			for i := range want {
				assert.Equal(t, *want[i], *got[i], "pass %d: %q token %d", pass, text, i)
			}
		}
	}
}
