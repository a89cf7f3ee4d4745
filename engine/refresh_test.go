package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind"
	"github.com/citefind/citefind/build"
	"github.com/citefind/citefind/db"
	"github.com/citefind/citefind/engine"
)

const newPaper = `@article{zebra2031,
  title = {Zebrafish Striping Patterns Explain Retrieval Fusion},
  author = {Quagga, Zed},
  journal = {Journal of Unlikely Results},
  year = {2031}
}
`

// TestRefreshFollowsTheDatabase: a paper indexed and a paper removed by
// another run after the engine opened are seen after Refresh, and queries
// running meanwhile complete on the indexes they started with.
func TestRefreshFollowsTheDatabase(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	sample := filepath.Join("..", "sample", "papers.bib")
	_, err := build.Ensure(ctx, dir, build.EnsureOptions{Files: []string{sample}})
	require.NoError(t, err)
	eng, err := engine.Open(ctx, dir, engine.Options{})
	require.NoError(t, err)
	defer eng.Close()
	gen0 := eng.Generation()
	swapped, err := eng.Refresh(ctx)
	require.NoError(t, err)
	assert.False(t, swapped, "nothing changed")

	extra := filepath.Join(t.TempDir(), "new.bib")
	require.NoError(t, os.WriteFile(extra, []byte(newPaper), 0o644))
	_, err = build.Ensure(ctx, dir, build.EnsureOptions{Files: []string{extra}})
	require.NoError(t, err)

	res, err := eng.Search(ctx, "zebrafish striping", citefind.QueryOptions{K: 3})
	require.NoError(t, err)
	assert.Empty(t, res.Hits, "before Refresh the engine answers from the indexes it opened")

	// Queries in flight while the indexes are swapped all succeed.
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	stop := make(chan struct{})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := eng.Search(ctx, "reciprocal rank fusion", citefind.QueryOptions{K: 5}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	swapped, err = eng.Refresh(ctx)
	require.NoError(t, err)
	assert.True(t, swapped)
	time.Sleep(20 * time.Millisecond)
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("a query during the swap failed: %v", err)
	}
	assert.Greater(t, eng.Generation(), gen0)

	res, err = eng.Search(ctx, "zebrafish striping", citefind.QueryOptions{K: 3})
	require.NoError(t, err)
	require.NotEmpty(t, res.Hits)
	// BibTeX titles are stored in sentence case, as CSL data wants them.
	assert.Equal(t, "Zebrafish striping patterns explain retrieval fusion", res.Hits[0].Title)

	// remove by another process: after Refresh no hit names the removed
	// paper and no warning says it is missing from the store.
	d, err := db.Open(ctx, dir)
	require.NoError(t, err)
	_, err = d.Store.Remove(ctx, "zebra2031")
	require.NoError(t, err)
	_, err = build.Indexes(ctx, d, build.Options{})
	require.NoError(t, err)
	require.NoError(t, d.Close())
	swapped, err = eng.Refresh(ctx)
	require.NoError(t, err)
	assert.True(t, swapped)
	res, err = eng.Search(ctx, "zebrafish striping retrieval fusion", citefind.QueryOptions{K: 10})
	require.NoError(t, err)
	for _, h := range res.Hits {
		assert.NotEqual(t, "Zebrafish striping patterns explain retrieval fusion", h.Title)
	}
	assert.Empty(t, res.Warnings)
}

// TestFollow swaps within a few intervals on its own.
func TestFollow(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	dir := t.TempDir()
	_, err := build.Ensure(ctx, dir, build.EnsureOptions{Files: []string{filepath.Join("..", "sample", "papers.bib")}})
	require.NoError(t, err)
	eng, err := engine.Open(ctx, dir, engine.Options{})
	require.NoError(t, err)
	defer eng.Close()
	swaps := make(chan int64, 4)
	go eng.Follow(ctx, 10*time.Millisecond, func(swapped bool, err error) {
		if err == nil && swapped {
			swaps <- eng.Generation()
		}
	})
	extra := filepath.Join(t.TempDir(), "new.bib")
	require.NoError(t, os.WriteFile(extra, []byte(newPaper), 0o644))
	_, err = build.Ensure(ctx, dir, build.EnsureOptions{Files: []string{extra}})
	require.NoError(t, err)
	select {
	case g := <-swaps:
		assert.Equal(t, eng.Generation(), g)
	case <-time.After(10 * time.Second):
		t.Fatal("Follow did not pick up the new generation")
	}
}

// TestRerankedHits: after a reranker, hits are in the order of their
// scores (the reranker's), and their sources hold the reranker's and the
// fused rank and score.
func TestRerankedHits(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	_, err := build.Ensure(ctx, dir, build.EnsureOptions{Files: []string{filepath.Join("..", "sample", "papers.bib")}})
	require.NoError(t, err)
	eng, err := engine.Open(ctx, dir, engine.Options{})
	require.NoError(t, err)
	defer eng.Close()
	res, err := eng.Search(ctx, "dense passage retrieval and BM25 ranking fusion [3]", citefind.QueryOptions{K: 8, Rerank: "learned"})
	require.NoError(t, err)
	require.Len(t, res.Hits, 8)
	require.Len(t, res.Stages.Reranked, len(res.Stages.Candidates))
	for i, h := range res.Hits {
		assert.Equal(t, i+1, h.Rank)
		if i > 0 {
			assert.LessOrEqual(t, h.Score, res.Hits[i-1].Score, "scores in order")
		}
		require.Contains(t, h.Sources, "learned")
		require.Contains(t, h.Sources, citefind.SourceFused)
		assert.Equal(t, i+1, h.Sources["learned"].Rank)
		assert.Equal(t, h.Score, h.Sources["learned"].Score)
		assert.Equal(t, res.Stages.Reranked[i].ID, h.ID)
	}
	// The fused stage is untouched by the reranker.
	for i, c := range res.Stages.Candidates {
		assert.Equal(t, i+1, c.Rank)
		assert.NotContains(t, c.Sources, citefind.SourceFused)
	}
}
