package sparse_test

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/retrieve/sparse"
)

// TestPostingsCacheSameHits: with the postings cache (first from the
// index, then from the cache, also from goroutines at once, also with a
// budget that keeps only some lists) a retriever returns exactly the hits
// and scores it returns without one, on an index of several segments with
// replaced and deleted documents, over two fields.
func TestPostingsCacheSameHits(t *testing.T) {
	ctx := t.Context()
	dir := filepath.Join(t.TempDir(), "idx")
	ps := papers(7, 3000, 1500) // a small vocabulary: many lists above minCachedDF
	_, err := sparse.Build(ctx, dir, sparse.BuildOptions{Fields: []string{"title", "text"}}, iter(ps[:2000]), nil)
	require.NoError(t, err)
	// a second segment, replaced and deleted papers
	more := ps[2000:]
	for i := 0; i < 50; i++ {
		p := ps[i*7]
		p.Abstract += " replaced text of the paper"
		more = append(more, p)
	}
	_, err = sparse.Update(ctx, dir, sparse.UpdateOptions{}, iter(more), []string{ps[3].ID, ps[11].ID, ps[2500].ID}, nil)
	require.NoError(t, err)

	weights := map[string]float64{"title": 0.25, "text": 1}
	open := func(budget int64) *sparse.Retriever {
		r, err := sparse.Open(dir, sparse.Options{FieldWeights: weights, K1: 2, K3: 1, PostingsCache: budget})
		require.NoError(t, err)
		t.Cleanup(func() { r.Close() })
		return r
	}
	plain, cached, small := open(-1), open(0), open(200_000)
	qs := queries(8, 60, 25, 1500)
	qs = append(qs, queries(9, 20, 125, 1500)...)
	want := make([][]corpus.Hit, len(qs))
	for i, q := range qs {
		want[i], err = plain.Retrieve(ctx, q, 100)
		require.NoError(t, err)
		require.NotEmpty(t, want[i])
	}
	for pass := range 2 {
		for i, q := range qs {
			for _, r := range []*sparse.Retriever{cached, small} {
				got, err := r.Retrieve(ctx, q, 100)
				require.NoError(t, err)
				require.Equal(t, want[i], got, "pass %d query %d", pass, i)
			}
		}
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := g; i < len(qs); i += 4 {
				got, err := cached.Retrieve(ctx, qs[i], 100)
				if err == nil && fmt.Sprint(got) != fmt.Sprint(want[i]) {
					err = fmt.Errorf("query %d differs", i)
				}
				require.NoError(t, err)
			}
		})
	}
	wg.Wait()
	lists, bytes := sparse.PostingsCacheSize(cached)
	require.Positive(t, lists, "lists were kept")
	smallLists, smallBytes := sparse.PostingsCacheSize(small)
	require.LessOrEqual(t, smallBytes, int64(200_000))
	require.Less(t, smallLists, lists, "the budget keeps fewer lists")
	t.Logf("cache: %d lists, %d bytes; budget 200,000: %d lists, %d bytes", lists, bytes, smallLists, smallBytes)
	plainLists, _ := sparse.PostingsCacheSize(plain)
	require.Zero(t, plainLists)
}
