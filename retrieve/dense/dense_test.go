package dense_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	chromem "github.com/philippgille/chromem-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/retrieve"
	"github.com/citefind/citefind/retrieve/dense"
)

// dense.Retriever plugs into fusion; the check lives in the test so that
// dense does not import fuse.
var _ retrieve.Retriever = (*dense.Retriever)(nil)

// countingEmbedder wraps an embedder and counts the texts it embeds; fail,
// when set, fails the call after that many texts were embedded.
type countingEmbedder struct {
	dense.Embedder
	texts atomic.Int64
	calls atomic.Int64
	fail  int64
}

func (c *countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if c.fail > 0 && c.texts.Load()+int64(len(texts)) > c.fail {
		return nil, fmt.Errorf("%w: injected failure", dense.ErrEmbedder)
	}
	c.calls.Add(1)
	c.texts.Add(int64(len(texts)))
	return c.Embedder.Embed(ctx, texts)
}

var topics = []string{"neural", "retrieval", "citation", "graph", "protein", "galaxy", "quantum", "language", "vision", "robot"}

func testPapers(n int) []corpus.Paper {
	rng := rand.New(rand.NewSource(42))
	ps := make([]corpus.Paper, n)
	for i := range ps {
		a, b := topics[rng.Intn(len(topics))], topics[rng.Intn(len(topics))]
		ps[i] = corpus.Paper{
			ID:       fmt.Sprintf("p%04d", i),
			Title:    fmt.Sprintf("On %s %s number %d", a, b, i),
			Abstract: fmt.Sprintf("We study %s methods for %s problems, variant %d.", a, b, rng.Intn(1000)),
		}
	}
	return ps
}

func iterPapers(ps []corpus.Paper) func() (corpus.Paper, bool, error) {
	i := 0
	return func() (corpus.Paper, bool, error) {
		if i >= len(ps) {
			return corpus.Paper{}, false, nil
		}
		i++
		return ps[i-1], true, nil
	}
}

func TestBuildOpenRetrieve(t *testing.T) {
	dir := t.TempDir()
	ps := testPapers(300)
	ps = append(ps, corpus.Paper{ID: "empty"})                          // no text: skipped
	ps = append(ps, corpus.Paper{ID: "p0001", Title: "quantum galaxy"}) // repeated ID: last wins
	emb := dense.HashEmbedder{Dims: 64}
	var steps []int
	st, err := dense.Build(t.Context(), dir, dense.BuildOptions{Embedder: emb, BatchSize: 100, Meta: map[string]string{"gen": "7"}},
		iterPapers(ps), func(n int) { steps = append(steps, n) })
	require.NoError(t, err)
	assert.Equal(t, []int{100, 200, 300, 302}, steps, "progress after each batch")
	assert.Equal(t, 300, st.Docs)
	assert.Equal(t, 1, st.Skipped)
	assert.Equal(t, 64, st.Dim)
	assert.Equal(t, 301, st.Embedded)
	assert.Positive(t, st.Bytes)

	h, err := dense.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, "hash-64", h.Model)
	assert.Equal(t, 64, h.Dim)
	assert.Equal(t, 300, h.Docs)
	assert.Equal(t, "7", h.Meta["gen"])
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.ElementsMatch(t, []string{dense.HeaderFile, h.Export, dense.SidecarName(h.Export)}, names, "one export file (and its sidecar), not one per document")

	r, err := dense.Open(dir, emb)
	require.NoError(t, err)
	assert.Equal(t, 300, r.Count())
	hits, err := r.Retrieve(t.Context(), "quantum galaxy", 5)
	require.NoError(t, err)
	require.Len(t, hits, 5)
	assert.Equal(t, "p0001", hits[0].ID, "the replaced paper")
	for i := 1; i < len(hits); i++ {
		assert.GreaterOrEqual(t, hits[i-1].Score, hits[i].Score, "best first")
	}
	assert.InDelta(t, 1.0, hits[0].Score, 0.2)

	t.Run("k clamped", func(t *testing.T) {
		hits, err := r.Retrieve(t.Context(), "neural", 10000)
		require.NoError(t, err)
		assert.Len(t, hits, 300)
	})
	t.Run("bad k", func(t *testing.T) {
		_, err := r.Retrieve(t.Context(), "neural", 0)
		require.ErrorIs(t, err, dense.ErrBadK)
	})
	t.Run("no words", func(t *testing.T) {
		hits, err := r.Retrieve(t.Context(), "!!!", 3)
		require.NoError(t, err)
		assert.Empty(t, hits)
	})
	t.Run("wrong query dimension", func(t *testing.T) {
		_, err := r.RetrieveVector(t.Context(), make([]float32, 3), 3)
		require.ErrorIs(t, err, dense.ErrModelMismatch)
	})
	t.Run("ContextCanceled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err := r.Retrieve(ctx, "neural", 3)
		require.ErrorIs(t, err, context.Canceled)
		_, err = dense.Build(ctx, t.TempDir(), dense.BuildOptions{Embedder: emb}, iterPapers(ps), nil)
		require.ErrorIs(t, err, context.Canceled)
	})
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	_, err := dense.Open(dir, dense.HashEmbedder{})
	require.ErrorIs(t, err, dense.ErrNoIndex)
	_, err = dense.Stat(filepath.Join(dir, "missing"))
	require.ErrorIs(t, err, dense.ErrNoIndex)

	_, err = dense.Build(t.Context(), dir, dense.BuildOptions{Embedder: dense.HashEmbedder{Dims: 32}}, iterPapers(testPapers(10)), nil)
	require.NoError(t, err)
	_, err = dense.Open(dir, dense.HashEmbedder{Dims: 64})
	require.ErrorIs(t, err, dense.ErrModelMismatch)
	_, err = dense.Open(dir, dense.HashEmbedder{Dims: 32})
	require.NoError(t, err)

	require.NoError(t, os.WriteFile(filepath.Join(dir, dense.HeaderFile), []byte("{not json"), 0o644))
	_, err = dense.Open(dir, dense.HashEmbedder{Dims: 32})
	require.ErrorIs(t, err, dense.ErrNoIndex)
}

func TestBuildCache(t *testing.T) {
	dir := t.TempDir()
	cache, err := dense.OpenCache(filepath.Join(dir, "cache.sqlite"))
	require.NoError(t, err)
	defer cache.Close()
	ps := testPapers(250)
	emb := &countingEmbedder{Embedder: dense.HashEmbedder{Dims: 48}}
	opts := dense.BuildOptions{Embedder: emb, Cache: cache, BatchSize: 64}

	st, err := dense.Build(t.Context(), filepath.Join(dir, "idx"), opts, iterPapers(ps), nil)
	require.NoError(t, err)
	assert.Equal(t, 250, st.Embedded)
	assert.Equal(t, int64(250), emb.texts.Load())
	n, err := cache.Len(t.Context(), "hash-48")
	require.NoError(t, err)
	assert.Equal(t, 250, n)

	t.Run("unchanged papers embed nothing", func(t *testing.T) {
		emb.texts.Store(0)
		emb.calls.Store(0)
		st, err := dense.Build(t.Context(), filepath.Join(dir, "idx"), opts, iterPapers(ps), nil)
		require.NoError(t, err)
		assert.Zero(t, emb.calls.Load())
		assert.Zero(t, st.Embedded)
		assert.Equal(t, 250, st.Cached)
	})
	t.Run("only changed papers are embedded", func(t *testing.T) {
		emb.texts.Store(0)
		changed := append([]corpus.Paper(nil), ps...)
		changed[3].Abstract += " Revised."
		changed[200].Title = "A new title"
		st, err := dense.Build(t.Context(), filepath.Join(dir, "idx"), opts, iterPapers(changed), nil)
		require.NoError(t, err)
		assert.Equal(t, int64(2), emb.texts.Load())
		assert.Equal(t, 2, st.Embedded)
	})
	t.Run("another model misses", func(t *testing.T) {
		other := &countingEmbedder{Embedder: dense.HashEmbedder{Dims: 16}}
		_, err := dense.Build(t.Context(), filepath.Join(dir, "idx2"), dense.BuildOptions{Embedder: other, Cache: cache}, iterPapers(ps), nil)
		require.NoError(t, err)
		assert.Equal(t, int64(250), other.texts.Load())
	})
	t.Run("interrupted build keeps old index and cached progress", func(t *testing.T) {
		idx := filepath.Join(dir, "idx")
		before, err := dense.Stat(idx)
		require.NoError(t, err)
		fresh := testPapers(400)[250:] // 150 new papers
		for i := range fresh {
			fresh[i].Title += " fresh"
		}
		failing := &countingEmbedder{Embedder: dense.HashEmbedder{Dims: 48}, fail: 100}
		_, err = dense.Build(t.Context(), idx, dense.BuildOptions{Embedder: failing, Cache: cache, BatchSize: 50}, iterPapers(fresh), nil)
		require.ErrorIs(t, err, dense.ErrEmbedder)
		after, err := dense.Stat(idx)
		require.NoError(t, err)
		assert.Equal(t, before, after, "old index untouched")
		_, err = dense.Open(idx, dense.HashEmbedder{Dims: 48})
		require.NoError(t, err)

		failing.fail, failing.texts = 0, atomic.Int64{}
		_, err = dense.Build(t.Context(), idx, dense.BuildOptions{Embedder: failing, Cache: cache, BatchSize: 50}, iterPapers(fresh), nil)
		require.NoError(t, err)
		assert.Equal(t, int64(50), failing.texts.Load(), "the two finished batches came from the cache")
	})
}

func TestCache(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.sqlite")
	c, err := dense.OpenCache(path)
	require.NoError(t, err)
	ctx := t.Context()
	require.NoError(t, c.Put(ctx, "m", []string{"a", "b"}, [][]float32{{1, 2}, {3, -4.5}}))
	got, err := c.Get(ctx, "m", []string{"b", "x", "a"})
	require.NoError(t, err)
	assert.Equal(t, [][]float32{{3, -4.5}, nil, {1, 2}}, got)
	got, err = c.Get(ctx, "other", []string{"a"})
	require.NoError(t, err)
	assert.Nil(t, got[0])
	require.Error(t, c.Put(ctx, "m", []string{"a"}, nil))
	require.NoError(t, c.Close())

	t.Run("torn row is a miss", func(t *testing.T) {
		db, err := sql.Open("sqlite", path)
		require.NoError(t, err)
		_, err = db.Exec("UPDATE embedding SET vec = x'0102' WHERE model = 'm'")
		require.NoError(t, err)
		require.NoError(t, db.Close())
		c, err := dense.OpenCache(path)
		require.NoError(t, err)
		defer c.Close()
		got, err := c.Get(ctx, "m", []string{"a", "b"})
		require.NoError(t, err)
		assert.Equal(t, [][]float32{nil, nil}, got)
	})
	t.Run("closed", func(t *testing.T) {
		_, err := c.Get(ctx, "m", []string{"a"})
		require.ErrorIs(t, err, dense.ErrClosed)
	})
	t.Run("ContextCanceled", func(t *testing.T) {
		c, err := dense.OpenCache(path)
		require.NoError(t, err)
		defer c.Close()
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		_, err = c.Get(cctx, "m", []string{"a"})
		require.ErrorIs(t, err, context.Canceled)
	})
}

// vecEmbedder maps "doc-<i>" to vecs[i] and anything else to query.
type vecEmbedder struct {
	vecs  [][]float32
	query []float32
}

func (e *vecEmbedder) Model() string { return fmt.Sprintf("vec-%d", len(e.query)) }
func (e *vecEmbedder) Dim() int      { return len(e.query) }
func (e *vecEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		var j int
		if _, err := fmt.Sscanf(t, "doc-%d", &j); err == nil {
			out[i] = e.vecs[j]
		} else {
			out[i] = e.query
		}
	}
	return out, nil
}

func randomVecs(rng *rand.Rand, n, dim int) [][]float32 {
	out := make([][]float32, n)
	for i := range out {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		out[i] = v
	}
	return out
}

func vecPapers(n int) []corpus.Paper {
	ps := make([]corpus.Paper, n)
	for i := range ps {
		ps[i] = corpus.Paper{ID: fmt.Sprintf("id%07d", i), Title: fmt.Sprintf("doc-%d", i)}
	}
	return ps
}

// buildVec builds an index of n random vectors and returns it with the
// embedder and the export file's path.
func buildVec(tb testing.TB, n, dim int, compress bool) (string, *vecEmbedder) {
	tb.Helper()
	rng := rand.New(rand.NewSource(42))
	emb := &vecEmbedder{vecs: randomVecs(rng, n, dim), query: randomVecs(rng, 1, dim)[0]}
	dir := tb.TempDir()
	_, err := dense.Build(context.Background(), dir, dense.BuildOptions{Embedder: emb, BatchSize: 4096, Compress: compress}, iterPapers(vecPapers(n)), nil)
	require.NoError(tb, err)
	return dir, emb
}

func importChromem(tb testing.TB, dir string) *chromem.Collection {
	tb.Helper()
	h, err := dense.Stat(dir)
	require.NoError(tb, err)
	db := chromem.NewDB()
	require.NoError(tb, db.ImportFromFile(filepath.Join(dir, h.Export), ""))
	col := db.GetCollection(dense.CollectionName, func(context.Context, string) ([]float32, error) {
		return nil, errors.New("no embedding in tests")
	})
	require.NotNil(tb, col)
	return col
}

// TestSameAsChromem checks the flat scan against chromem-go's own query
// over the same exported collection.
func TestSameAsChromem(t *testing.T) {
	for _, compress := range []bool{false, true} {
		t.Run(fmt.Sprintf("compress=%v", compress), func(t *testing.T) {
			dir, emb := buildVec(t, 2000, 40, compress)
			r, err := dense.Open(dir, emb)
			require.NoError(t, err)
			col := importChromem(t, dir)
			rng := rand.New(rand.NewSource(7))
			for _, q := range randomVecs(rng, 20, 40) {
				want, err := col.QueryEmbedding(t.Context(), q, 10, nil, nil)
				require.NoError(t, err)
				got, err := r.RetrieveVector(t.Context(), q, 10)
				require.NoError(t, err)
				require.Len(t, got, len(want))
				for i := range want {
					assert.Equal(t, want[i].ID, got[i].ID, "rank %d", i)
					assert.InDelta(t, want[i].Similarity, got[i].Score, 1e-5)
				}
			}
		})
	}
}

func TestTiesByID(t *testing.T) {
	// Five papers with the same text: equal scores, ordered by ID.
	var ps []corpus.Paper
	for _, id := range []string{"e", "b", "d", "a", "c"} {
		ps = append(ps, corpus.Paper{ID: id, Title: "same words"})
	}
	ps = append(ps, corpus.Paper{ID: "0", Title: "other"})
	dir := t.TempDir()
	_, err := dense.Build(t.Context(), dir, dense.BuildOptions{Embedder: dense.HashEmbedder{}}, iterPapers(ps), nil)
	require.NoError(t, err)
	r, err := dense.Open(dir, dense.HashEmbedder{})
	require.NoError(t, err)
	for k := 1; k <= 5; k++ {
		hits, err := r.Retrieve(t.Context(), "same words", k)
		require.NoError(t, err)
		var ids []string
		for _, h := range hits {
			ids = append(ids, h.ID)
		}
		assert.Equal(t, strings.Split("abcde", "")[:k], ids)
	}
}

func TestHashEmbedder(t *testing.T) {
	e := dense.HashEmbedder{}
	assert.Equal(t, "hash-256", e.Model())
	assert.Equal(t, 256, e.Dim())
	vs, err := e.Embed(t.Context(), []string{"Dense retrieval", "dense RETRIEVAL!", "", "graph neural networks"})
	require.NoError(t, err)
	require.Len(t, vs, 4)
	assert.Equal(t, vs[0], vs[1], "case and punctuation do not matter")
	var ss, zero, cross float64
	for i := range vs[0] {
		ss += float64(vs[0][i]) * float64(vs[0][i])
		zero += float64(vs[2][i]) * float64(vs[2][i])
		cross += float64(vs[0][i]) * float64(vs[3][i])
	}
	assert.InDelta(t, 1, ss, 1e-5)
	assert.Zero(t, zero, "no words: zero vector")
	assert.Less(t, cross, 0.5)

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	t.Run("ContextCanceled", func(t *testing.T) {
		_, err := e.Embed(ctx, []string{"x"})
		require.ErrorIs(t, err, context.Canceled)
		require.ErrorIs(t, err, dense.ErrEmbedder)
	})
}

func openRetriever(dir string, emb dense.Embedder) (*dense.Retriever, error) {
	return dense.Open(dir, emb)
}
