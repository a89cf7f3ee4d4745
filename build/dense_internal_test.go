package build

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/db"
	"github.com/citefind/citefind/retrieve/dense"
	"github.com/citefind/citefind/retrieve/dense/contrast"
)

// TestTrainedKindsAreInFolder: every embedder build trains is one the
// engine knows lives in the database folder, and the other way round.
func TestTrainedKindsAreInFolder(t *testing.T) {
	for spec, k := range trainedKinds {
		assert.True(t, db.TrainedInFolder(spec), spec)
		assert.Equal(t, spec, k.spec)
	}
	for _, spec := range []string{db.EmbedderBuiltin, db.EmbedderContrast} {
		assert.Contains(t, trainedKinds, spec)
	}
	assert.False(t, db.TrainedInFolder("ollama:nomic-embed-text"))
	assert.Contains(t, trainedKinds, db.DefaultEmbedder)
}

// TestContrastEarlierDefaults: a database whose contrast model was trained
// with the earlier defaults (unigrams only, "uni/768") keeps answering
// with it, and the next index run retrains it with the defaults, saying
// why, although the store has not changed.
func TestContrastEarlierDefaults(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	var b strings.Builder
	topics := []string{"dense passage retrieval encoders", "citation recommendation contexts", "rank fusion of runs", "neural machine translation"}
	for i := range 80 {
		fmt.Fprintf(&b, `{"id":"p%d","type":"article-journal","title":"%s %d","abstract":"We study %s on paper %d. Our method improves %s.","issued":{"date-parts":[[2020]]}}`+"\n",
			i, topics[i%4], i, topics[(i+1)%4], i, topics[i%4])
	}
	in := filepath.Join(t.TempDir(), "papers.jsonl")
	require.NoError(t, os.WriteFile(in, []byte(b.String()), 0o644))
	d, err := db.Create(ctx, dir)
	require.NoError(t, err)
	defer d.Close()
	_, err = Ingest(ctx, d.Store, []string{in}, IngestOptions{})
	require.NoError(t, err)

	// an index built by the earlier defaults
	kind := trainedKinds[db.EmbedderContrast]
	saved := kind.train
	kind.train = func(ctx context.Context, st *corpus.Store, n int, opts Options) (dense.Embedder, error) {
		papers, walkErr := storeSeq(ctx, st, func(p corpus.Paper) corpus.Paper { return p })
		m, err := contrast.Train(ctx, papers, contrast.Options{Bigrams: -1, Epochs: 1, MinSteps: -1}, nil)
		if err := walkErr(); err != nil {
			return nil, err
		}
		return m, err
	}
	t.Cleanup(func() { kind.train = saved })
	rep, err := Indexes(ctx, d, Options{Embedder: db.EmbedderContrast})
	require.NoError(t, err)
	require.True(t, rep.Dense.Trained)
	kind.train = saved
	path := filepath.Join(dir, db.ContrastModelFile)
	spec, err := contrast.FileSpec(path)
	require.NoError(t, err)
	require.Equal(t, "uni/768", spec)

	// queries still embed with it
	emb, err := db.OpenEmbedder(dir, db.EmbedderContrast)
	require.NoError(t, err)
	assert.Equal(t, "uni/768", emb.(*contrast.Model).Spec())

	// the next run retrains with the defaults
	rep, err = Indexes(ctx, d, Options{})
	require.NoError(t, err)
	assert.True(t, rep.Dense.Trained)
	assert.Equal(t, "the contrast embedder's model was trained with earlier defaults (uni/768, now uni+bi32768/768)", rep.Dense.Reason)
	spec, err = contrast.FileSpec(path)
	require.NoError(t, err)
	assert.Equal(t, contrast.DefaultSpec, spec)
	rep, err = Indexes(ctx, d, Options{})
	require.NoError(t, err)
	assert.False(t, rep.Dense.Trained)
	assert.Empty(t, rep.Dense.Reason, "up to date")
}
