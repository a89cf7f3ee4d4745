package citefind_test

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind"
	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/fuse"
	"github.com/citefind/citefind/retrieve/dense"
)

// failingEmbedder looks like emb to dense.Open but fails every Embed.
type failingEmbedder struct{ dense.HashEmbedder }

func (failingEmbedder) Embed(context.Context, []string) ([][]float32, error) {
	return nil, dense.ErrEmbedder
}

// slowEmbedder embeds like HashEmbedder after a delay.
type slowEmbedder struct {
	dense.HashEmbedder
	delay time.Duration
}

func (s slowEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	select {
	case <-time.After(s.delay):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return s.HashEmbedder.Embed(ctx, texts)
}

// hashDB builds a database of the sample papers with a BM25 index and a
// dense index embedded by dense.HashEmbedder.
func hashDB(t *testing.T) string {
	t.Helper()
	ctx := t.Context()
	db := t.TempDir()
	st, err := corpus.OpenStore(ctx, filepath.Join(db, citefind.StoreFile))
	require.NoError(t, err)
	defer st.Close()
	_, err = citefind.Ingest(ctx, st, []string{filepath.Join("sample", "papers.bib")}, citefind.IngestOptions{})
	require.NoError(t, err)
	_, err = citefind.BuildIndexes(ctx, db, st, citefind.BuildOptions{})
	require.NoError(t, err)
	var ps []corpus.Paper
	require.NoError(t, st.Each(ctx, func(p corpus.Paper) error { ps = append(ps, p); return nil }))
	gen, err := st.Generation(ctx)
	require.NoError(t, err)
	i := 0
	_, err = dense.Build(ctx, filepath.Join(db, citefind.DenseDir), dense.BuildOptions{Embedder: dense.HashEmbedder{},
		Meta: map[string]string{"store_generation": strconv.FormatInt(gen, 10)}},
		func() (corpus.Paper, bool, error) {
			if i == len(ps) {
				return corpus.Paper{}, false, nil
			}
			i++
			return ps[i-1], true, nil
		}, nil)
	require.NoError(t, err)
	return db
}

func TestEngineHybrid(t *testing.T) {
	db := hashDB(t)
	const q = "Dense passage retrieval [12] for open-domain question answering."
	tests := []struct {
		name       string
		opts       citefind.EngineOptions
		retrievers []string
		sources    []string
		warn       bool
		wantErr    bool
	}{
		{name: "default is bm25 alone", opts: citefind.EngineOptions{Embedder: dense.HashEmbedder{}}, sources: []string{"bm25"}},
		{name: "dense alone", opts: citefind.EngineOptions{Embedder: dense.HashEmbedder{}}, retrievers: []string{"dense"}, sources: []string{"dense"}},
		{name: "fused", opts: citefind.EngineOptions{Embedder: dense.HashEmbedder{}}, retrievers: []string{"bm25", "dense"}, sources: []string{"bm25", "dense"}},
		{name: "fused rrf", opts: citefind.EngineOptions{Embedder: dense.HashEmbedder{}, Fusion: fuse.RRF}, retrievers: []string{"bm25", "dense"}, sources: []string{"bm25", "dense"}},
		{name: "failing dense warns", opts: citefind.EngineOptions{Embedder: failingEmbedder{}}, retrievers: []string{"bm25", "dense"}, sources: []string{"bm25"}, warn: true},
		{name: "failing dense strict", opts: citefind.EngineOptions{Embedder: failingEmbedder{}, Strict: true}, retrievers: []string{"bm25", "dense"}, wantErr: true},
		{name: "slow dense times out", opts: citefind.EngineOptions{Embedder: slowEmbedder{delay: time.Second}, Timeout: 50 * time.Millisecond}, retrievers: []string{"bm25", "dense"}, sources: []string{"bm25"}, warn: true},
		{name: "no embedder recorded", retrievers: []string{"bm25", "dense"}, sources: []string{"bm25"}, warn: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			eng, err := citefind.Open(t.Context(), db, tc.opts)
			require.NoError(t, err)
			defer eng.Close()
			res, err := eng.Query(t.Context(), q, citefind.QueryOptions{K: 5, Retrievers: tc.retrievers})
			if tc.wantErr {
				require.Error(t, err)
				var f fuse.Failure
				assert.True(t, errors.As(err, &f))
				return
			}
			require.NoError(t, err)
			require.NotEmpty(t, res.Hits)
			assert.Equal(t, tc.warn, len(res.Warnings) > 0, res.Warnings)
			got := map[string]bool{}
			for _, h := range res.Hits {
				for name := range h.Sources {
					got[name] = true
				}
			}
			for _, s := range tc.sources {
				assert.True(t, got[s], "source %s", s)
			}
			assert.Len(t, got, len(tc.sources))
		})
	}
}

func TestEngineRetrieveFollowsOptions(t *testing.T) {
	db := hashDB(t)
	ctx := t.Context()
	const q = "reciprocal rank fusion [3] of retrieval runs"
	eng, err := citefind.Open(ctx, db, citefind.EngineOptions{Embedder: dense.HashEmbedder{}, Retrievers: []string{"bm25", "dense"}})
	require.NoError(t, err)
	defer eng.Close()
	fused, err := eng.Retrieve(ctx, q, 10)
	require.NoError(t, err)
	res, err := eng.Query(ctx, q, citefind.QueryOptions{K: 10})
	require.NoError(t, err)
	require.Len(t, fused, len(res.Hits))
	for i, h := range res.Hits {
		assert.Equal(t, h.ID, fused[i].ID)
		assert.InDelta(t, h.Score, fused[i].Score, 1e-12)
	}
	bm25, err := eng.Retriever("bm25").Retrieve(ctx, q, 10)
	require.NoError(t, err)
	plain, err := citefind.Open(ctx, db, citefind.EngineOptions{})
	require.NoError(t, err)
	defer plain.Close()
	want, err := plain.Retrieve(ctx, q, 10)
	require.NoError(t, err)
	assert.Equal(t, want, bm25)

	_, err = citefind.Open(ctx, db, citefind.EngineOptions{Retrievers: []string{"splade"}})
	require.Error(t, err)
}
