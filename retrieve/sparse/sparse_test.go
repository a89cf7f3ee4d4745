package sparse_test

import (
	"context"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/retrieve"
	"github.com/citefind/citefind/retrieve/sparse"
)

// sparse.Retriever plugs into fusion; the check lives in the test so that
// sparse does not import fuse.
var _ retrieve.Retriever = (*sparse.Retriever)(nil)

func TestAnalyze(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"stems and lowercases", "Retrieving Documents", []string{"retriev", "document"}},
		{"possessive and stop words", "The model's performance of the users' queries", []string{"model", "perform", "user", "queri"}},
		{"numbers kept", "BM25 in 2020", []string{"bm25", "2020"}},
		{"stop words only", "the of and a", nil},
		{"empty", "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := sparse.Analyze(tc.in)
			if len(tc.want) == 0 {
				assert.Empty(t, got)
				return
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

// ---- reference BM25, written from scratch -------------------------------

type refIndex struct {
	ids    []string
	tf     []map[string]map[string]int // doc -> field -> term -> tf
	dl     []map[string]int            // doc -> field -> length
	df     map[string]map[string]int   // field -> term -> df
	avgdl  map[string]float64
	k1, b  float64
	k3     float64 // query-term saturation; 0 = none
	weight map[string]float64
}

// refFieldTerms tokenises one field of p the way the index is documented
// to: text is title, abstract and keywords (joined with ". ") in order.
func refFieldTerms(p corpus.Paper, f string) []string {
	kw := strings.Join(p.Keywords, ". ")
	switch f {
	case "title":
		return sparse.Analyze(p.Title)
	case "abstract":
		return sparse.Analyze(p.Abstract)
	case "keywords":
		return sparse.Analyze(kw)
	case "text":
		return append(append(sparse.Analyze(p.Title), sparse.Analyze(p.Abstract)...), sparse.Analyze(kw)...)
	}
	panic(f)
}

func newRef(ps []corpus.Paper, weights map[string]float64, k1, b float64) *refIndex {
	// last paper per ID wins
	last := map[string]int{}
	for i, p := range ps {
		last[p.ID] = i
	}
	r := &refIndex{df: map[string]map[string]int{}, avgdl: map[string]float64{}, k1: k1, b: b, weight: weights}
	total := map[string]int{}
	for i, p := range ps {
		if last[p.ID] != i {
			continue
		}
		r.ids = append(r.ids, p.ID)
		tfs := map[string]map[string]int{}
		dls := map[string]int{}
		for f := range weights {
			terms := refFieldTerms(p, f)
			m := map[string]int{}
			for _, t := range terms {
				m[t]++
			}
			tfs[f] = m
			dls[f] = len(terms)
			total[f] += len(terms)
			if r.df[f] == nil {
				r.df[f] = map[string]int{}
			}
			for t := range m {
				r.df[f][t]++
			}
		}
		r.tf = append(r.tf, tfs)
		r.dl = append(r.dl, dls)
	}
	for f := range weights {
		r.avgdl[f] = float64(total[f]) / float64(len(r.ids))
	}
	return r
}

// scores returns the BM25 score of every document with a positive score.
func (r *refIndex) scores(q string) map[string]float64 {
	qtf := map[string]int{}
	for _, t := range sparse.Analyze(q) {
		qtf[t]++
	}
	n := float64(len(r.ids))
	out := map[string]float64{}
	for d, id := range r.ids {
		var s float64
		for f, w := range r.weight {
			if w == 0 {
				continue
			}
			for t, qf := range qtf {
				tf := float64(r.tf[d][f][t])
				if tf == 0 {
					continue
				}
				df := float64(r.df[f][t])
				idf := math.Log(1 + (n-df+0.5)/(df+0.5))
				norm := r.k1 * (1 - r.b + r.b*float64(r.dl[d][f])/r.avgdl[f])
				qw := float64(qf)
				if r.k3 > 0 {
					qw = qw * (r.k3 + 1) / (r.k3 + qw)
				}
				s += w * qw * idf * tf * (r.k1 + 1) / (tf + norm)
			}
		}
		if s > 0 {
			out[id] = s
		}
	}
	return out
}

func (r *refIndex) top(q string, k int) ([]corpus.Hit, map[string]float64) {
	sc := r.scores(q)
	hits := make([]corpus.Hit, 0, len(sc))
	for id, s := range sc {
		hits = append(hits, corpus.Hit{ID: id, Score: s})
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].Score != hits[j].Score {
			return hits[i].Score > hits[j].Score
		}
		return hits[i].ID < hits[j].ID
	})
	if len(hits) > k {
		hits = hits[:k]
	}
	return hits, sc
}

func relDiff(a, b float64) float64 {
	return math.Abs(a-b) / math.Max(math.Abs(a), math.Abs(b))
}

// assertSameRanking checks got against the reference: same length, every
// score within 1e-5 relative, and the same IDs in the same order except
// where reference scores tie (to 1e-9, summation order).
func assertSameRanking(t *testing.T, q string, want []corpus.Hit, all map[string]float64, got []corpus.Hit) {
	t.Helper()
	require.Len(t, got, len(want), "query %q", q)
	for i := range got {
		assert.LessOrEqual(t, relDiff(got[i].Score, want[i].Score), 1e-5, "query %q rank %d: score", q, i)
		if got[i].ID != want[i].ID {
			ref, ok := all[got[i].ID]
			assert.True(t, ok && relDiff(ref, want[i].Score) <= 1e-9,
				"query %q rank %d: got %s (ref %v), want %s (%v)", q, i, got[i].ID, ref, want[i].ID, want[i].Score)
		}
		if i > 0 {
			assert.GreaterOrEqual(t, got[i-1].Score, got[i].Score, "not sorted")
		}
	}
}

// zapFiles counts the segment files of an index.
func zapFiles(t *testing.T, dir string) int {
	m, err := filepath.Glob(filepath.Join(dir, "store", "*.zap"))
	require.NoError(t, err)
	return len(m)
}

func TestExactBM25(t *testing.T) {
	base := papers(7, 300, 3000)
	// duplicates: some IDs come again with other content; the last wins
	dups := append([]corpus.Paper(nil), base...)
	for i := 0; i < 300; i += 17 {
		p := base[(i*7+3)%300]
		p.ID = base[i].ID
		dups = append(dups, p)
	}
	allFields := []string{"text", "title", "abstract", "keywords"}
	tests := []struct {
		name     string
		ps       []corpus.Paper
		build    sparse.BuildOptions
		opts     sparse.Options
		weights  map[string]float64 // reference weights (nil: text 1)
		minZaps  int
		wantZaps int
	}{
		{name: "one segment", ps: base},
		{name: "many segments", ps: base, build: sparse.BuildOptions{BatchSize: 7, KeepSegments: true}, minZaps: 2},
		{name: "many batches merged", ps: base, build: sparse.BuildOptions{BatchSize: 7}, wantZaps: 1},
		{name: "text and title", ps: base, build: sparse.BuildOptions{BatchSize: 7, KeepSegments: true},
			opts: sparse.Options{FieldWeights: map[string]float64{"text": 1, "title": 2}}},
		{name: "all fields k1 b", ps: base, build: sparse.BuildOptions{Fields: allFields, BatchSize: 50},
			opts: sparse.Options{K1: 1.5, B: 0.4, FieldWeights: map[string]float64{"text": 1, "title": 0.5, "abstract": 0.3, "keywords": 2}}},
		{name: "query-term saturation k3", ps: base, build: sparse.BuildOptions{BatchSize: 50},
			opts: sparse.Options{K1: 2, B: 0.65, K3: 1, FieldWeights: map[string]float64{"text": 1, "title": 0.25}}},
		{name: "duplicate IDs", ps: dups, build: sparse.BuildOptions{BatchSize: 7, KeepSegments: true}, minZaps: 2},
	}
	qs := make([]string, 30) // 1 to 30 words
	for i := range qs {
		qs[i] = queries(uint64(100+i), 1, 1+i, 3000)[0]
	}
	qs = append(qs, "retrieval retrieval retrieving models", base[5].Title, base[9].Abstract)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "idx")
			st, err := sparse.Build(t.Context(), dir, tc.build, iter(tc.ps), nil)
			require.NoError(t, err)
			if tc.minZaps > 0 {
				require.GreaterOrEqual(t, zapFiles(t, dir), tc.minZaps, "want several segments")
			}
			if tc.wantZaps > 0 {
				require.Equal(t, tc.wantZaps, zapFiles(t, dir), "want merged segments")
			}
			r, err := sparse.Open(dir, tc.opts)
			require.NoError(t, err)
			defer r.Close()

			weights := tc.opts.FieldWeights
			if weights == nil {
				weights = map[string]float64{"text": 1}
			}
			k1, b := tc.opts.K1, tc.opts.B
			if k1 == 0 {
				k1 = 1.2
			}
			if b == 0 {
				b = 0.75
			}
			ref := newRef(tc.ps, weights, k1, b)
			ref.k3 = tc.opts.K3
			assert.Equal(t, len(ref.ids), st.Docs)
			assert.Equal(t, len(ref.ids), r.Count())
			for _, q := range qs {
				for _, k := range []int{1, 10, 1000} {
					got, err := r.Retrieve(t.Context(), q, k)
					require.NoError(t, err)
					want, all := ref.top(q, k)
					assertSameRanking(t, q, want, all, got)
				}
			}
		})
	}
}

func TestTiesByID(t *testing.T) {
	var ps []corpus.Paper
	for _, id := range []string{"d", "b", "e", "a", "c"} {
		ps = append(ps, corpus.Paper{ID: id, Title: "sparse retrieval", Abstract: "bm25 ranking of papers"})
	}
	ps = append(ps, corpus.Paper{ID: "z", Title: "dense retrieval", Abstract: "embeddings"})
	dir := filepath.Join(t.TempDir(), "idx")
	_, err := sparse.Build(t.Context(), dir, sparse.BuildOptions{BatchSize: 2, KeepSegments: true}, iter(ps), nil)
	require.NoError(t, err)
	r, err := sparse.Open(dir, sparse.Options{})
	require.NoError(t, err)
	defer r.Close()

	tests := []struct {
		name string
		k    int
		want []string
	}{
		{"cut inside ties", 2, []string{"a", "b"}},
		{"all ties", 5, []string{"a", "b", "c", "d", "e"}},
		{"more than matches", 100, []string{"a", "b", "c", "d", "e", "z"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hits, err := r.Retrieve(t.Context(), "sparse retrieval", tc.k)
			require.NoError(t, err)
			var ids []string
			for _, h := range hits {
				ids = append(ids, h.ID)
			}
			assert.Equal(t, tc.want, ids)
		})
	}
}

func buildSmall(t *testing.T, dir string, n int, opts sparse.BuildOptions) {
	t.Helper()
	_, err := sparse.Build(t.Context(), dir, opts, iter(papers(3, n, 2000)), nil)
	require.NoError(t, err)
}

func TestBuildAtomic(t *testing.T) {
	cancelAfterFirstBatch := func(ctx context.Context) (context.Context, func(int)) {
		ctx, cancel := context.WithCancel(ctx)
		return ctx, func(int) { cancel() }
	}
	failingIter := func(n int) func() (corpus.Paper, bool, error) {
		next := iter(papers(4, n, 2000))
		i := 0
		return func() (corpus.Paper, bool, error) {
			if i++; i > n/2 {
				return corpus.Paper{}, false, errors.New("store broke")
			}
			return next()
		}
	}
	tests := []struct {
		name    string
		old     bool // an index exists at dir before
		cancel  bool
		next    func() (corpus.Paper, bool, error)
		wantErr error
		wantN   int // Count at dir afterwards; 0: dir absent
	}{
		{name: "cancel new", cancel: true, next: iter(papers(4, 300, 2000)), wantErr: context.Canceled},
		{name: "cancel replace", old: true, cancel: true, next: iter(papers(4, 300, 2000)), wantErr: context.Canceled, wantN: 120},
		{name: "iterator error", old: true, next: failingIter(300), wantN: 120},
		{name: "replace", old: true, next: iter(papers(4, 300, 2000)), wantN: 300},
		{name: "new", next: iter(papers(4, 300, 2000)), wantN: 300},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			parent := t.TempDir()
			dir := filepath.Join(parent, "idx")
			if tc.old {
				buildSmall(t, dir, 120, sparse.BuildOptions{})
			}
			ctx, progress := t.Context(), func(int) {}
			if tc.cancel {
				ctx, progress = cancelAfterFirstBatch(ctx)
			}
			_, err := sparse.Build(ctx, dir, sparse.BuildOptions{BatchSize: 50}, tc.next, progress)
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
			} else if tc.wantN != 300 {
				require.Error(t, err)
			} else {
				require.NoError(t, err)
			}
			ents, err := os.ReadDir(parent)
			require.NoError(t, err)
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			if tc.wantN == 0 {
				assert.Empty(t, names, "no index and no temp folders")
				return
			}
			assert.Equal(t, []string{"idx"}, names, "no temp folders left")
			r, err := sparse.Open(dir, sparse.Options{})
			require.NoError(t, err)
			defer r.Close()
			assert.Equal(t, tc.wantN, r.Count())
		})
	}

	t.Run("refuses to replace other folders", func(t *testing.T) {
		dir := t.TempDir()
		f := filepath.Join(dir, "notes.txt")
		require.NoError(t, os.WriteFile(f, []byte("keep"), 0o600))
		_, err := sparse.Build(t.Context(), dir, sparse.BuildOptions{}, iter(papers(4, 10, 2000)), nil)
		require.Error(t, err)
		assert.FileExists(t, f)
	})
	t.Run("progress", func(t *testing.T) {
		var got []int
		_, err := sparse.Build(t.Context(), filepath.Join(t.TempDir(), "idx"), sparse.BuildOptions{BatchSize: 40},
			iter(papers(4, 100, 2000)), func(n int) { got = append(got, n) })
		require.NoError(t, err)
		assert.Equal(t, []int{40, 80, 100}, got)
	})
	t.Run("bad options", func(t *testing.T) {
		_, err := sparse.Build(t.Context(), filepath.Join(t.TempDir(), "idx"), sparse.BuildOptions{Fields: []string{"venue"}}, iter(nil), nil)
		require.ErrorIs(t, err, sparse.ErrUnknownField)
	})
	t.Run("empty corpus", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "idx")
		st, err := sparse.Build(t.Context(), dir, sparse.BuildOptions{}, iter(nil), nil)
		require.NoError(t, err)
		assert.Equal(t, 0, st.Docs)
		r, err := sparse.Open(dir, sparse.Options{})
		require.NoError(t, err)
		defer r.Close()
		assert.Equal(t, 0, r.Count())
		hits, err := r.Retrieve(t.Context(), "retrieval", 10)
		require.NoError(t, err)
		assert.Empty(t, hits)
	})
	t.Run("empty ID", func(t *testing.T) {
		parent := t.TempDir()
		_, err := sparse.Build(t.Context(), filepath.Join(parent, "idx"), sparse.BuildOptions{}, iter([]corpus.Paper{{Title: "x"}}), nil)
		require.Error(t, err)
		ents, _ := os.ReadDir(parent)
		assert.Empty(t, ents)
	})
}

func TestOpenErrors(t *testing.T) {
	built := filepath.Join(t.TempDir(), "idx")
	buildSmall(t, built, 50, sparse.BuildOptions{})
	plain := filepath.Join(t.TempDir(), "plain")
	bi, err := bleve.New(plain, bleve.NewIndexMapping())
	require.NoError(t, err)
	require.NoError(t, bi.Close())
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))

	tests := []struct {
		name    string
		dir     string
		opts    sparse.Options
		wantErr error
	}{
		{"missing", filepath.Join(t.TempDir(), "nope"), sparse.Options{}, fs.ErrNotExist},
		{"empty folder", t.TempDir(), sparse.Options{}, sparse.ErrNotIndex},
		{"a file", file, sparse.Options{}, sparse.ErrNotIndex},
		{"bleve index not from Build", plain, sparse.Options{}, sparse.ErrNotIndex},
		{"weight on field not indexed", built, sparse.Options{FieldWeights: map[string]float64{"text": 1, "abstract": 1}}, sparse.ErrFieldNotIndexed},
		{"weight on unknown field", built, sparse.Options{FieldWeights: map[string]float64{"venue": 1}}, sparse.ErrUnknownField},
		{"negative weight", built, sparse.Options{FieldWeights: map[string]float64{"text": -1}}, nil},
		{"all weights zero", built, sparse.Options{FieldWeights: map[string]float64{"text": 0}}, nil},
		{"bad b", built, sparse.Options{B: 2}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := sparse.Open(tc.dir, tc.opts)
			require.Error(t, err)
			assert.Nil(t, r)
			if tc.wantErr != nil {
				assert.ErrorIs(t, err, tc.wantErr)
			}
		})
	}
}

func TestRetrieve(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "idx")
	ps := papers(5, 200, 2000)
	_, err := sparse.Build(t.Context(), dir, sparse.BuildOptions{Meta: map[string]string{"generation": "42"}}, iter(ps), nil)
	require.NoError(t, err)
	r, err := sparse.Open(dir, sparse.Options{FieldWeights: map[string]float64{"text": 1, "title": 1}})
	require.NoError(t, err)
	defer r.Close()

	assert.Equal(t, 200, r.Count())
	assert.Equal(t, []string{"text", "title"}, r.Fields())
	gen, err := r.Meta("generation")
	require.NoError(t, err)
	assert.Equal(t, "42", gen)
	_, err = r.Meta("nope")
	require.ErrorIs(t, err, sparse.ErrNoMeta)

	tests := []struct {
		name    string
		query   string
		k       int
		wantErr error
		check   func(t *testing.T, hits []corpus.Hit)
	}{
		{name: "empty query", query: "", k: 10, check: func(t *testing.T, hits []corpus.Hit) { assert.Empty(t, hits) }},
		{name: "stop words only", query: "the of and", k: 10, check: func(t *testing.T, hits []corpus.Hit) { assert.Empty(t, hits) }},
		{name: "unknown words", query: "qwxzy vvvv", k: 10, check: func(t *testing.T, hits []corpus.Hit) { assert.Empty(t, hits) }},
		{name: "k zero", query: "retrieval", k: 0, wantErr: sparse.ErrBadK},
		{name: "k negative", query: "retrieval", k: -1, wantErr: sparse.ErrBadK},
		{name: "k larger than docs", query: ps[0].Title + " " + ps[1].Abstract, k: 10_000, check: func(t *testing.T, hits []corpus.Hit) {
			assert.NotEmpty(t, hits)
			assert.LessOrEqual(t, len(hits), 200)
			seen := map[string]bool{}
			for _, h := range hits {
				assert.False(t, seen[h.ID], "duplicate %s", h.ID)
				seen[h.ID] = true
				assert.Greater(t, h.Score, 0.0)
			}
		}},
		{name: "own title finds paper", query: ps[17].Title + " " + ps[17].Abstract, k: 3, check: func(t *testing.T, hits []corpus.Hit) {
			require.NotEmpty(t, hits)
			assert.Equal(t, ps[17].ID, hits[0].ID)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hits, err := r.Retrieve(t.Context(), tc.query, tc.k)
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			tc.check(t, hits)
		})
	}

	t.Run("ContextCanceled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err := r.Retrieve(ctx, "retrieval models", 10)
		require.ErrorIs(t, err, context.Canceled)
	})
}

func TestRetrieveAfterClose(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "idx")
	buildSmall(t, dir, 20, sparse.BuildOptions{})
	r, err := sparse.Open(dir, sparse.Options{})
	require.NoError(t, err)
	require.NoError(t, r.Close())
	require.NoError(t, r.Close())
	_, err = r.Retrieve(t.Context(), "retrieval", 5)
	require.ErrorIs(t, err, sparse.ErrClosed)
}

func TestConcurrentRetrieve(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "idx")
	buildSmall(t, dir, 400, sparse.BuildOptions{BatchSize: 60, KeepSegments: true})
	r, err := sparse.Open(dir, sparse.Options{FieldWeights: map[string]float64{"text": 1, "title": 0.5}})
	require.NoError(t, err)
	defer r.Close()

	qs := queries(6, 20, 25, 2000)
	want := make([][]corpus.Hit, len(qs))
	for i, q := range qs {
		want[i], err = r.Retrieve(t.Context(), q, 20)
		require.NoError(t, err)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for j := range 3 * len(qs) {
				i := (j + g) % len(qs)
				got, err := r.Retrieve(t.Context(), qs[i], 20)
				if assert.NoError(t, err) {
					assert.Equal(t, want[i], got)
				}
			}
		})
	}
	wg.Wait()
}
