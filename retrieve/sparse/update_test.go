package sparse_test

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/retrieve/sparse"
)

// TestUpdateExactBM25 applies rounds of upserts and deletes with Update
// and checks the scores against a from-scratch BM25 of the resulting
// collection, and against a Build of it.
func TestUpdateExactBM25(t *testing.T) {
	base := papers(11, 300, 3000)
	extra := papers(12, 400, 3000)
	opts := sparse.Options{K1: 2, B: 0.75, K3: 1, FieldWeights: map[string]float64{"text": 1, "title": 0.25}}
	dir := filepath.Join(t.TempDir(), "idx")
	_, err := sparse.Build(t.Context(), dir, sparse.BuildOptions{BatchSize: 50, Meta: map[string]string{"gen": "1", "other": "x"}}, iter(base), nil)
	require.NoError(t, err)

	cur := map[string]corpus.Paper{}
	for _, p := range base {
		cur[p.ID] = p
	}
	qs := queries(300, 20, 12, 3000)
	qs = append(qs, base[3].Title, extra[350].Abstract)
	for round := range 4 {
		var ups []corpus.Paper
		var dels []string
		// replace every 9th paper with another text, delete every 13th,
		// add new ones (from round 2 on, IDs beyond base), delete an
		// unknown ID
		for i := round; i < len(base); i += 9 {
			p := extra[(i*5+round)%len(extra)]
			p.ID = base[i].ID
			ups = append(ups, p)
		}
		for i := round + 1; i < len(base); i += 13 {
			if _, ok := cur[base[i].ID]; ok && !containsID(ups, base[i].ID) {
				dels = append(dels, base[i].ID)
			}
		}
		for i := range 10 {
			p := extra[round*10+i]
			p.ID = "new/" + p.ID
			ups = append(ups, p)
		}
		dels = append(dels, "no/such/id")
		st, err := sparse.Update(t.Context(), dir, sparse.UpdateOptions{BatchSize: 16, MaxSegments: 3,
			Meta: map[string]string{"gen": string(rune('2' + round))}}, iter(ups), dels, nil)
		require.NoError(t, err)
		for _, p := range ups {
			cur[p.ID] = p
		}
		for _, id := range dels {
			delete(cur, id)
		}
		assert.Equal(t, 1, st.Missing)
		assert.Equal(t, len(cur), st.Docs)

		var all []corpus.Paper
		for _, p := range cur {
			all = append(all, p)
		}
		sort.Slice(all, func(i, j int) bool { return all[i].ID < all[j].ID })
		ref := newRef(all, opts.FieldWeights, opts.K1, opts.B)
		ref.k3 = opts.K3

		fresh := filepath.Join(t.TempDir(), "fresh")
		_, err = sparse.Build(t.Context(), fresh, sparse.BuildOptions{}, iter(all), nil)
		require.NoError(t, err)
		rf, err := sparse.Open(fresh, opts)
		require.NoError(t, err)

		r, err := sparse.Open(dir, opts)
		require.NoError(t, err)
		assert.Equal(t, len(all), r.Count())
		g, err := r.Meta("gen")
		require.NoError(t, err)
		assert.Equal(t, string(rune('2'+round)), g)
		o, err := r.Meta("other")
		require.NoError(t, err)
		assert.Equal(t, "x", o, "meta not given to Update is kept")
		for _, q := range qs {
			got, err := r.Retrieve(t.Context(), q, 50)
			require.NoError(t, err)
			want, scores := ref.top(q, 50)
			assertSameRanking(t, q, want, scores, got)
			fromBuild, err := rf.Retrieve(t.Context(), q, 50)
			require.NoError(t, err)
			require.Equal(t, len(fromBuild), len(got))
			for i := range got {
				assert.Equal(t, fromBuild[i].ID, got[i].ID)
				assert.InDelta(t, fromBuild[i].Score, got[i].Score, 1e-9*fromBuild[i].Score)
			}
		}
		r.Close()
		rf.Close()
	}
	left, err := filepath.Glob(dir + ".*")
	require.NoError(t, err)
	assert.Empty(t, left, "no temp folders left")
}

func containsID(ps []corpus.Paper, id string) bool {
	for _, p := range ps {
		if p.ID == id {
			return true
		}
	}
	return false
}

// TestUpdateKeepsOpenReaders: a Retriever opened before an Update keeps
// its snapshot; one opened after sees the update.
func TestUpdateKeepsOpenReaders(t *testing.T) {
	base := papers(21, 200, 2000)
	dir := filepath.Join(t.TempDir(), "idx")
	_, err := sparse.Build(t.Context(), dir, sparse.BuildOptions{}, iter(base), nil)
	require.NoError(t, err)
	old, err := sparse.Open(dir, sparse.Options{})
	require.NoError(t, err)
	defer old.Close()
	q := base[0].Title
	before, err := old.Retrieve(t.Context(), q, 5)
	require.NoError(t, err)

	_, err = sparse.Update(t.Context(), dir, sparse.UpdateOptions{}, nil, []string{base[0].ID}, nil)
	require.NoError(t, err)

	again, err := old.Retrieve(t.Context(), q, 5)
	require.NoError(t, err)
	assert.Equal(t, before, again)
	assert.Equal(t, 200, old.Count())
	r, err := sparse.Open(dir, sparse.Options{})
	require.NoError(t, err)
	defer r.Close()
	assert.Equal(t, 199, r.Count())
}

func TestUpdateCancelledLeavesIndex(t *testing.T) {
	base := papers(31, 100, 1000)
	dir := filepath.Join(t.TempDir(), "idx")
	_, err := sparse.Build(t.Context(), dir, sparse.BuildOptions{}, iter(base), nil)
	require.NoError(t, err)
	n := 0
	next := func() (corpus.Paper, bool, error) {
		n++
		if n > 30 {
			return corpus.Paper{}, false, os.ErrDeadlineExceeded
		}
		p := base[n]
		p.Title = "changed"
		return p, true, nil
	}
	_, err = sparse.Update(t.Context(), dir, sparse.UpdateOptions{BatchSize: 8}, next, nil, nil)
	require.Error(t, err)
	r, err := sparse.Open(dir, sparse.Options{})
	require.NoError(t, err)
	defer r.Close()
	hits, err := r.Retrieve(t.Context(), "changed", 10)
	require.NoError(t, err)
	assert.Empty(t, hits, "nothing of the failed update is visible")
	left, _ := filepath.Glob(dir + ".tmp-*")
	assert.Empty(t, left)
}

func TestRemoveLeftovers(t *testing.T) {
	d := t.TempDir()
	dir := filepath.Join(d, "bm25.bleve")
	for _, n := range []string{"bm25.bleve.tmp-123", "bm25.bleve.old-9", "bm25.bleve", "other.tmp-1"} {
		require.NoError(t, os.MkdirAll(filepath.Join(d, n, "store"), 0o755))
	}
	n, err := sparse.RemoveLeftovers(dir)
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	ents, _ := os.ReadDir(d)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	assert.Equal(t, []string{"bm25.bleve", "other.tmp-1"}, names)
}
