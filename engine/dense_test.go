package engine_test

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind"
	"github.com/citefind/citefind/build"
	"github.com/citefind/citefind/corpus"
	dbpkg "github.com/citefind/citefind/db"
	"github.com/citefind/citefind/engine"
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

// recordingEmbedder embeds like HashEmbedder and records the texts.
type recordingEmbedder struct {
	dense.HashEmbedder
	mu    *sync.Mutex
	texts *[]string
}

func (r recordingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	r.mu.Lock()
	*r.texts = append(*r.texts, texts...)
	r.mu.Unlock()
	return r.HashEmbedder.Embed(ctx, texts)
}

// hashDB builds a database of the sample papers with a BM25 index and a
// dense index embedded by dense.HashEmbedder.
func hashDB(t *testing.T) string {
	t.Helper()
	ctx := t.Context()
	db := t.TempDir()
	_, err := build.Ensure(ctx, db, build.EnsureOptions{Files: []string{filepath.Join("..", "sample", "papers.bib")}})
	require.NoError(t, err)
	d, err := dbpkg.Open(ctx, db)
	require.NoError(t, err)
	defer d.Close()
	st := d.Store
	var ps []corpus.Paper
	require.NoError(t, st.Each(ctx, func(p corpus.Paper) error { ps = append(ps, p); return nil }))
	gen, err := st.Generation(ctx)
	require.NoError(t, err)
	i := 0
	_, err = dense.Build(ctx, filepath.Join(db, dbpkg.DenseDir), dense.BuildOptions{Embedder: dense.HashEmbedder{},
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
		opts       engine.Options
		retrievers []string
		sources    []string
		warn       bool
		wantErr    bool
	}{
		{name: "default is the database's pipeline", opts: engine.Options{Embedder: dense.HashEmbedder{}}, sources: []string{"bm25", "rm3", "citing"}},
		{name: "dense alone", opts: engine.Options{Embedder: dense.HashEmbedder{}}, retrievers: []string{"dense"}, sources: []string{"dense"}},
		{name: "fused", opts: engine.Options{Embedder: dense.HashEmbedder{}}, retrievers: []string{"bm25", "dense"}, sources: []string{"bm25", "dense"}},
		{name: "fused rrf", opts: engine.Options{Embedder: dense.HashEmbedder{}, Fusion: fuse.RRF}, retrievers: []string{"bm25", "dense"}, sources: []string{"bm25", "dense"}},
		{name: "failing dense warns", opts: engine.Options{Embedder: failingEmbedder{}}, retrievers: []string{"bm25", "dense"}, sources: []string{"bm25"}, warn: true},
		{name: "failing dense strict", opts: engine.Options{Embedder: failingEmbedder{}, Strict: true}, retrievers: []string{"bm25", "dense"}, wantErr: true},
		{name: "slow dense times out", opts: engine.Options{Embedder: slowEmbedder{delay: time.Second}, Timeout: 50 * time.Millisecond}, retrievers: []string{"bm25", "dense"}, sources: []string{"bm25"}, warn: true},
		{name: "no embedder recorded", retrievers: []string{"bm25", "dense"}, sources: []string{"bm25"}, warn: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			eng, err := engine.Open(t.Context(), db, tc.opts)
			require.NoError(t, err)
			defer eng.Close()
			res, err := eng.Search(t.Context(), q, citefind.QueryOptions{K: 5, Retrievers: tc.retrievers})
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

// TestDenseQueryWeighsCiting checks that the dense retriever searches a
// paragraph with its citing sentences weighted in (dense.QueryVector),
// alone or beside other retrievers.
func TestDenseQueryWeighsCiting(t *testing.T) {
	db := hashDB(t)
	const q = "Sparse methods dominate. Dense passage retrieval [12] uses dual encoders. Both are fast."
	const whole = "Sparse methods dominate. Dense passage retrieval uses dual encoders. Both are fast."
	const citing = "Dense passage retrieval uses dual encoders."
	for _, tc := range []struct {
		retrievers []string
		want       []string
	}{
		{[]string{"dense"}, []string{whole, citing}},
		{[]string{"bm25", "dense"}, []string{whole, citing}},
		{[]string{"bm25", "citing", "dense"}, []string{whole, citing}},
	} {
		t.Run(strings.Join(tc.retrievers, ","), func(t *testing.T) {
			var texts []string
			emb := recordingEmbedder{mu: &sync.Mutex{}, texts: &texts}
			eng, err := engine.Open(t.Context(), db, engine.Options{Embedder: emb})
			require.NoError(t, err)
			defer eng.Close()
			res, err := eng.Search(t.Context(), q, citefind.QueryOptions{K: 5, Retrievers: tc.retrievers})
			require.NoError(t, err)
			require.NotEmpty(t, res.Hits)
			assert.Equal(t, tc.want, texts)
			if len(tc.retrievers) == 1 {
				// the hits are those of the mixed vector
				v, err := dense.QueryVector(t.Context(), dense.HashEmbedder{}, q)
				require.NoError(t, err)
				r, err := dense.Open(filepath.Join(db, dbpkg.DenseDir), dense.HashEmbedder{})
				require.NoError(t, err)
				want, err := r.RetrieveVector(t.Context(), v, 5)
				require.NoError(t, err)
				require.Len(t, res.Hits, len(want))
				for i, h := range want {
					assert.Equal(t, h.ID, res.Hits[i].ID)
				}
			}
		})
	}
}

// TestSearchStages checks that one search reports each retriever's own
// list: the list a search with that retriever alone returns.
func TestSearchStages(t *testing.T) {
	db := hashDB(t)
	ctx := t.Context()
	const q = "reciprocal rank fusion [3] of retrieval runs"
	eng, err := engine.Open(ctx, db, engine.Options{Embedder: dense.HashEmbedder{}, Retrievers: []string{"bm25", "dense"}})
	require.NoError(t, err)
	defer eng.Close()
	res, err := eng.Search(ctx, q, citefind.QueryOptions{K: 10})
	require.NoError(t, err)
	require.Len(t, res.Stages.Candidates, len(res.Hits))
	for i, h := range res.Hits {
		assert.Equal(t, h.ID, res.Stages.Candidates[i].ID)
		assert.InDelta(t, h.Score, res.Stages.Candidates[i].Score, 1e-12)
	}
	for _, name := range []string{"bm25", "dense"} {
		alone, err := eng.Search(ctx, q, citefind.QueryOptions{K: 100, Retrievers: []string{name}})
		require.NoError(t, err)
		got := res.Stages.Retrievers[name]
		require.NotEmpty(t, got, name)
		require.Len(t, alone.Hits, min(len(got), 100))
		for i, h := range alone.Hits {
			assert.Equal(t, h.ID, got[i].ID, "%s rank %d", name, i+1)
			assert.InDelta(t, h.Score, got[i].Score, 1e-12)
		}
	}
	_, err = engine.Open(ctx, db, engine.Options{Retrievers: []string{"splade"}})
	require.Error(t, err)
}
