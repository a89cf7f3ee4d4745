package db_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/build"
	"github.com/citefind/citefind/db"
	"github.com/citefind/citefind/fuse"
)

func samplePath() string { return filepath.Join("..", "sample", "papers.bib") }

func TestOpenNoDatabase(t *testing.T) {
	_, err := db.Open(t.Context(), t.TempDir())
	require.ErrorIs(t, err, db.ErrNoDatabase)
	assert.Contains(t, err.Error(), "citefind index")
}

func TestCreateRecordsBackendAndEmbedder(t *testing.T) {
	ctx := t.Context()
	d, err := db.Create(ctx, filepath.Join(t.TempDir(), "new", "db"))
	require.NoError(t, err)
	defer d.Close()
	b, err := d.Backend(ctx)
	require.NoError(t, err)
	assert.Equal(t, "local", b)
	e, err := d.Embedder(ctx)
	require.NoError(t, err)
	assert.Equal(t, db.EmbedderNone, e)
	require.NoError(t, d.SetBackend(ctx, "weaviate://127.0.0.1:8080/Papers?shards=3"))
	b, _ = d.Backend(ctx)
	assert.Equal(t, "weaviate://127.0.0.1:8080/Papers?shards=3", b)
	require.Error(t, d.SetBackend(ctx, "127.0.0.1:8080"), "a URL needs a scheme")
}

func TestPipelineFile(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	d, err := db.Create(ctx, dir)
	require.NoError(t, err)
	defer d.Close()

	// No file: queries use the built-in pipeline.
	p, warns, err := d.QueryPipeline(ctx)
	require.NoError(t, err)
	assert.Empty(t, warns)
	assert.Equal(t, db.BuiltinPipeline(db.EmbedderNone).Retrievers, p.Retrievers)

	// A legacy fusion.json is read, and EnsurePipeline rewrites it as
	// pipeline.json unchanged.
	legacy := `{"format": 1, "embedder": "none", "retrievers": ["bm25", "rm3"], "method": "rrf", "weights": {"bm25": 1, "rm3": 0.5}, "source": "a sweep"}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, db.LegacyFusionFile), []byte(legacy), 0o644))
	got, err := db.ReadPipeline(dir)
	require.NoError(t, err)
	assert.Equal(t, fuse.RRF, got.Method)
	warn, err := d.EnsurePipeline(ctx)
	require.NoError(t, err)
	assert.Empty(t, warn)
	assert.NoFileExists(t, filepath.Join(dir, db.LegacyFusionFile))
	got, err = db.ReadPipeline(dir)
	require.NoError(t, err)
	assert.Equal(t, []string{"bm25", "rm3"}, got.Retrievers)
	assert.Equal(t, "a sweep", got.Source)

	// Bad files: an error naming the file; EnsurePipeline replaces them
	// and says why.
	tests := []struct {
		name, body, want string
	}{
		{"not JSON", `{`, "unexpected end"},
		{"unknown retriever", `{"format": 2, "retrievers": ["bm25", "splade"], "method": "minmax"}`, `unknown retriever "splade"`},
		{"unknown reranker", `{"format": 2, "retrievers": ["bm25"], "method": "minmax", "rerank": "magic"}`, `unknown reranker "magic"`},
		{"negative weight", `{"format": 2, "retrievers": ["bm25"], "method": "minmax", "weights": {"bm25": -1}}`, "negative weight"},
		{"future format", `{"format": 3, "retrievers": ["bm25"], "method": "minmax"}`, "format 3, want 2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, db.PipelineFile)
			require.NoError(t, os.WriteFile(path, []byte(tc.body), 0o644))
			_, _, err := d.QueryPipeline(ctx)
			require.Error(t, err)
			assert.Contains(t, err.Error(), path)
			assert.Contains(t, err.Error(), tc.want)
			warn, err := d.EnsurePipeline(ctx)
			require.NoError(t, err)
			assert.Contains(t, warn, "replaced by the built-in pipeline")
			got, err := db.ReadPipeline(dir)
			require.NoError(t, err)
			assert.Equal(t, db.BuiltinPipeline(db.EmbedderNone), *got)
		})
	}

	// A pipeline with dense cannot be saved without an embedder.
	withDense := db.BuiltinPipeline(db.EmbedderBuiltin)
	require.Error(t, d.SavePipeline(ctx, withDense))
}

// TestOldBuiltinPipelineUpdated: a database holding the contrast
// embedder's built-in pipeline of an earlier citefind (no reranker) gets
// this version's from EnsurePipeline, with a warning; a pipeline the user
// measured is kept.
func TestOldBuiltinPipelineUpdated(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	d, err := db.Create(ctx, dir)
	require.NoError(t, err)
	defer d.Close()
	require.NoError(t, d.SetEmbedder(ctx, db.EmbedderContrast))
	path := filepath.Join(dir, db.PipelineFile)
	for _, old := range []string{`{"format": 2, "embedder": "contrast", "retrievers": ["bm25", "citing", "dense"], "method": "minmax",
	"weights": {"bm25": 1, "citing": 0.5, "dense": 0.4},
	"source": "built-in default for the contrast embedder, chosen on ACM-CR, SciFact and ScisummNet (eval --suite --sweep-weights)"}`,
		// the unigram embedder's, with the reranker
		`{"format": 2, "embedder": "contrast", "retrievers": ["bm25", "citing", "dense"], "method": "minmax",
	"weights": {"bm25": 1, "citing": 0.5, "dense": 0.4}, "rerank": "learned",
	"source": "built-in default for the contrast embedder, chosen on ACM-CR, SciFact and ScisummNet (eval --suite --sweep-weights), reranked by the learned reranker"}`} {
		require.NoError(t, os.WriteFile(path, []byte(old), 0o644))
		warn, err := d.EnsurePipeline(ctx)
		require.NoError(t, err)
		assert.Contains(t, warn, "built-in pipeline of an earlier citefind")
		got, err := db.ReadPipeline(dir)
		require.NoError(t, err)
		assert.Equal(t, db.BuiltinPipeline(db.EmbedderContrast), *got)
		assert.Equal(t, "learned", got.Rerank)
		assert.Equal(t, 1.0, got.Weights["dense"])
		warn, err = d.EnsurePipeline(ctx)
		require.NoError(t, err)
		assert.Empty(t, warn, "this version's is kept")
	}

	measured := `{"format": 2, "embedder": "contrast", "retrievers": ["bm25", "dense"], "method": "minmax",
	"weights": {"bm25": 1, "dense": 0.7}, "source": "eval --sweep-weights on my field"}`
	require.NoError(t, os.WriteFile(path, []byte(measured), 0o644))
	warn, err := d.EnsurePipeline(ctx)
	require.NoError(t, err)
	assert.Empty(t, warn)
	got, err := db.ReadPipeline(dir)
	require.NoError(t, err)
	assert.Equal(t, "eval --sweep-weights on my field", got.Source)
}

func TestQueryPipelineOfAnotherEmbedder(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	d, err := db.Create(ctx, dir)
	require.NoError(t, err)
	defer d.Close()
	require.NoError(t, d.SetEmbedder(ctx, db.EmbedderBuiltin))
	require.NoError(t, d.SavePipeline(ctx, db.BuiltinPipeline(db.EmbedderBuiltin)))
	require.NoError(t, d.SetEmbedder(ctx, "ollama:nomic-embed-text"))
	p, warns, err := d.QueryPipeline(ctx)
	require.NoError(t, err)
	require.Len(t, warns, 1)
	assert.Contains(t, warns[0], "measured with the builtin embedder")
	assert.Equal(t, db.BuiltinPipeline("ollama:nomic-embed-text").Weights, p.Weights)
}

func TestReadStatus(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	_, err := db.ReadStatus(ctx, dir)
	require.ErrorIs(t, err, db.ErrNoDatabase)

	// A store without an index: one problem, and the fix.
	d, err := db.Create(ctx, dir)
	require.NoError(t, err)
	require.NoError(t, d.Close())
	s, err := db.ReadStatus(ctx, dir)
	require.NoError(t, err)
	assert.False(t, s.Agree)
	assert.Equal(t, []string{"bm25: no index"}, s.Problems)
	assert.Equal(t, "citefind index --db "+dir, s.Fix)

	// Built: in agreement, with the pipeline file.
	_, err = build.Ensure(ctx, dir, build.EnsureOptions{Files: []string{samplePath()}})
	require.NoError(t, err)
	s, err = db.ReadStatus(ctx, dir)
	require.NoError(t, err)
	assert.True(t, s.Agree, s.Problems)
	assert.Equal(t, 30, s.StorePapers)
	require.Len(t, s.Indexes, 1)
	assert.Equal(t, db.IndexStatus{Name: "bm25", Exists: true, Docs: 30, Generation: s.StoreGeneration, UpToDate: true}, s.Indexes[0])
	require.NotNil(t, s.Pipeline)
	assert.Equal(t, "local", s.Backend)

	// The store moves on without the index: out of date.
	d, err = db.Open(ctx, dir)
	require.NoError(t, err)
	_, err = d.Store.Remove(ctx, "10.1145/1571941.1572114")
	require.NoError(t, err)
	require.NoError(t, d.Close())
	s, err = db.ReadStatus(ctx, dir)
	require.NoError(t, err)
	assert.False(t, s.Agree)
	require.Len(t, s.Problems, 1)
	assert.Contains(t, s.Problems[0], "bm25: built from store generation")
}
