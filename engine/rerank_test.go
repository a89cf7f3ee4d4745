package engine_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind"
	"github.com/citefind/citefind/build"
	"github.com/citefind/citefind/db"
	"github.com/citefind/citefind/engine"
	"github.com/citefind/citefind/rerank/learned"
)

// TestLearnedRerankerInput: the learned reranker reads the query as
// given, citation markers included (its local-context features look
// for them, as in training), and reranks only the retrievers' lists it
// was trained on.
func TestLearnedRerankerInput(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	_, err := build.Ensure(ctx, dir, build.EnsureOptions{Files: []string{filepath.Join("..", "sample", "papers.bib")}})
	require.NoError(t, err)
	eng, err := engine.Open(ctx, dir, engine.Options{})
	require.NoError(t, err)
	defer eng.Close()
	text := "Rankings are merged with reciprocal rank fusion [3], and passages come from a dense retriever [7]."
	res, err := eng.Search(ctx, text, citefind.QueryOptions{K: 10, Rerank: "learned"})
	require.NoError(t, err)
	// The sample database has no embedder: the built-in model of its
	// pipeline (bm25, rm3, citing) reranks.
	r, err := learned.DefaultFor(eng.Pipeline().Retrievers)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"bm25", "rm3", "citing"}, r.Model().Retrievers)
	want, err := r.Rerank(ctx, text, res.Stages.Candidates)
	require.NoError(t, err)
	require.Len(t, res.Stages.Reranked, len(want.Candidates))
	for i, c := range want.Candidates {
		assert.Equal(t, c.ID, res.Stages.Reranked[i].ID, "rank %d", i+1)
		assert.InDelta(t, want.Scores[i], res.Stages.Reranked[i].Score, 1e-12)
	}

	_, err = eng.Search(ctx, text, citefind.QueryOptions{K: 10, Rerank: "learned", Retrievers: []string{"bm25"}})
	require.ErrorIs(t, err, learned.ErrRetrievers)
	assert.Contains(t, err.Error(), "this search fuses bm25:")
}

// TestDatabaseLearnedModel: a database's own model file (train --self)
// is the learned reranker's model on that database.
func TestDatabaseLearnedModel(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	_, err := build.Ensure(ctx, dir, build.EnsureOptions{Files: []string{filepath.Join("..", "sample", "papers.bib")}})
	require.NoError(t, err)
	own := filepath.Join(dir, db.LearnedModelFile)
	require.NoError(t, os.WriteFile(own, []byte(`{"format": "not a model"}`), 0o644))
	eng, err := engine.Open(ctx, dir, engine.Options{})
	require.NoError(t, err)
	defer eng.Close()
	_, err = eng.Search(ctx, "reciprocal rank fusion", citefind.QueryOptions{Rerank: "learned"})
	require.ErrorIs(t, err, learned.ErrInvalidModel)
	assert.Contains(t, err.Error(), own)

	// --rerank-model wins over the database's file.
	m, err := learned.DefaultModelFor(eng.Pipeline().Retrievers)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "m.json")
	require.NoError(t, m.Save(path))
	eng2, err := engine.Open(ctx, dir, engine.Options{RerankModel: path})
	require.NoError(t, err)
	defer eng2.Close()
	_, err = eng2.Search(ctx, "reciprocal rank fusion", citefind.QueryOptions{Rerank: "learned"})
	require.NoError(t, err)

	// A new model file (train --self while serve runs) is used by the
	// open engine from the next search on.
	require.NoError(t, m.Save(own))
	_, err = eng.Search(ctx, "reciprocal rank fusion", citefind.QueryOptions{Rerank: "learned"})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(own, []byte(`{"format": "not a model either"}`), 0o644))
	later := time.Now().Add(time.Minute)
	require.NoError(t, os.Chtimes(own, later, later))
	_, err = eng.Search(ctx, "reciprocal rank fusion", citefind.QueryOptions{Rerank: "learned"})
	require.ErrorIs(t, err, learned.ErrInvalidModel, "the changed file is read again")
}

// TestLearnedRerankerDepth: a model trained on N candidates per query
// reranks the top N fused candidates; the ones below follow in fused
// order, without the reranker's source, scored below the reranked ones.
func TestLearnedRerankerDepth(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	_, err := build.Ensure(ctx, dir, build.EnsureOptions{Files: []string{filepath.Join("..", "sample", "papers.bib")}})
	require.NoError(t, err)
	probe, err := engine.Open(ctx, dir, engine.Options{})
	require.NoError(t, err)
	m, err := learned.DefaultModelFor(probe.Pipeline().Retrievers)
	require.NoError(t, err)
	require.NoError(t, probe.Close())
	m.Training.Depth = 5
	path := filepath.Join(t.TempDir(), "model.json")
	require.NoError(t, m.Save(path))

	eng, err := engine.Open(ctx, dir, engine.Options{RerankModel: path})
	require.NoError(t, err)
	defer eng.Close()
	text := "Rankings are merged with reciprocal rank fusion [3], and passages come from a dense retriever [7]."
	res, err := eng.Search(ctx, text, citefind.QueryOptions{K: 12, Rerank: "learned"})
	require.NoError(t, err)
	cands := res.Stages.Candidates
	require.Greater(t, len(cands), 5, "the sample needs more candidates than the depth")
	want, err := learned.New(m).Rerank(ctx, text, cands[:5])
	require.NoError(t, err)
	require.Len(t, res.Stages.Reranked, len(cands))
	for i, h := range res.Stages.Reranked {
		if i < 5 {
			assert.Equal(t, want.Candidates[i].ID, h.ID, "rank %d", i+1)
		} else {
			assert.Equal(t, cands[i].ID, h.ID, "rank %d: fused order below the depth", i+1)
		}
		if i > 0 {
			assert.Less(t, h.Score, res.Stages.Reranked[i-1].Score, "rank %d", i+1)
		}
	}
	require.Len(t, res.Hits, min(12, len(cands)))
	for i, h := range res.Hits {
		_, reranked := h.Sources["learned"]
		assert.Equal(t, i < 5, reranked, "rank %d", i+1)
		assert.Equal(t, i+1, h.Rank)
		assert.Contains(t, h.Sources, citefind.SourceFused)
	}
}

// TestPipelineRerankerOtherRetrievers: the database's pipeline reranks
// with the learned reranker; a search that picks other retrievers than
// its model's is not reranked and says why, while asking for the learned
// reranker with them is refused.
func TestPipelineRerankerOtherRetrievers(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	_, err := build.Ensure(ctx, dir, build.EnsureOptions{Files: []string{filepath.Join("..", "sample", "papers.bib")}})
	require.NoError(t, err)
	d, err := db.Open(ctx, dir)
	require.NoError(t, err)
	p := db.BuiltinPipeline(db.EmbedderNone)
	p.Rerank = "learned"
	require.NoError(t, d.SavePipeline(ctx, p))
	require.NoError(t, d.Close())

	eng, err := engine.Open(ctx, dir, engine.Options{})
	require.NoError(t, err)
	defer eng.Close()
	text := "Rankings are merged with reciprocal rank fusion [3]."
	res, err := eng.Search(ctx, text, citefind.QueryOptions{K: 5})
	require.NoError(t, err)
	assert.Equal(t, "learned", res.Stages.Reranker, "the pipeline's retrievers: reranked")
	assert.NotEmpty(t, res.Stages.Reranked)

	res, err = eng.Search(ctx, text, citefind.QueryOptions{K: 5, Retrievers: []string{"bm25"}})
	require.NoError(t, err)
	assert.Equal(t, "none", res.Stages.Reranker)
	assert.Nil(t, res.Stages.Reranked)
	require.NotEmpty(t, res.Hits)
	require.Len(t, res.Warnings, 1)
	assert.Contains(t, res.Warnings[0], "not reranked")
	assert.Contains(t, res.Warnings[0], "--rerank none")

	_, err = eng.Search(ctx, text, citefind.QueryOptions{K: 5, Retrievers: []string{"bm25"}, Rerank: "learned"})
	require.ErrorIs(t, err, learned.ErrRetrievers)
	res, err = eng.Search(ctx, text, citefind.QueryOptions{K: 5, Retrievers: []string{"bm25"}, Rerank: "none"})
	require.NoError(t, err)
	assert.Empty(t, res.Warnings)
}
