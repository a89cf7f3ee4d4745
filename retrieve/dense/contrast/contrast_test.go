package contrast_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/retrieve/dense"
	"github.com/citefind/citefind/retrieve/dense/contrast"
)

var _ dense.Embedder = (*contrast.Model)(nil)

// topicPapers returns n synthetic papers about n topics. A topic has four
// words of its own; the title uses two, the abstract the other two in
// different sentences, so that only a trained model can tell which
// abstract a title belongs to (the title and abstract share no word).
// Words shared by every paper make up the rest.
func topicPapers(n int) []corpus.Paper {
	var out []corpus.Paper
	w := func(t, k int) string { return fmt.Sprintf("t%dw%d", t, k) }
	for i := range n {
		out = append(out, corpus.Paper{
			ID:    fmt.Sprintf("p%d", i),
			Title: fmt.Sprintf("Learning %s for %s", w(i, 0), w(i, 1)),
			Abstract: fmt.Sprintf("We present %s %s. Our method uses %s systems. The %s approach works. Results on %s data are reported.",
				w(i, 2), w(i, 3), w(i, 2), w(i, 3), w(i, 0)),
			Keywords: []string{w(i, 1), w(i, 3)},
		})
	}
	return out
}

func abstractText(p corpus.Paper) string { return p.Abstract }

func trainTiny(t *testing.T, opts contrast.Options) (*contrast.Model, []float64) {
	t.Helper()
	var losses []float64
	m, err := contrast.Train(t.Context(), slices.Values(topicPapers(64)), opts, func(p contrast.Progress) {
		if p.Stage == "train" && p.Step == p.Steps {
			losses = append(losses, p.Loss)
		}
	})
	require.NoError(t, err)
	return m, losses
}

var tinyOpts = contrast.Options{Dim: 32, Batch: 32, MinDF: 1, MaxDFRatio: 1, Epochs: 20, MinSteps: -1, Temperature: 0.1, LR: 0.01, Bigrams: -1}

func TestTrainLearns(t *testing.T) {
	for _, tc := range []struct {
		init    contrast.Init
		average bool
		heads   int
		bigrams int
		spec    string
	}{{contrast.InitRandom, false, 1, -1, "uni/32"}, {contrast.InitLSA, false, 1, -1, "uni/32"}, {contrast.InitRandom, true, 1, -1, "uni/32"},
		{contrast.InitRandom, false, 2, -1, "uni/32x2"}, {contrast.InitRandom, false, 1, 0, "uni+bi32768/32"}} {
		init := tc.init
		t.Run(fmt.Sprintf("%s/average=%v/heads=%d/bigrams=%d", init, tc.average, tc.heads, tc.bigrams), func(t *testing.T) {
			o := tinyOpts
			o.Init = init
			o.Average = tc.average
			o.Heads = tc.heads
			o.Bigrams = tc.bigrams
			m, losses := trainTiny(t, o)
			require.Len(t, losses, 20)
			// (LSA starts close to the answer on this corpus)
			assert.Less(t, losses[len(losses)-1], max(losses[0]/4, 0.01), "the loss falls: %v", losses)
			assert.Equal(t, 32, m.Dim())
			assert.Equal(t, tc.spec, m.Spec())
			assert.Equal(t, init, m.Options().Init)
			assert.Regexp(t, `^contrast-32@[0-9a-f]{12}$`, m.Model())

			papers := topicPapers(64)
			var titles, abstracts []string
			for _, p := range papers {
				titles = append(titles, p.Title)
				abstracts = append(abstracts, abstractText(p))
			}
			tv, err := m.Embed(t.Context(), titles)
			require.NoError(t, err)
			av, err := m.Embed(t.Context(), abstracts)
			require.NoError(t, err)
			first := 0
			for i, q := range tv {
				assert.InDelta(t, 1, norm(q), 1e-5)
				best, bestScore := -1, math.Inf(-1)
				for j, a := range av {
					if s := dot(q, a); s > bestScore {
						best, bestScore = j, s
					}
				}
				if best == i {
					first++
				}
			}
			// Title and abstract share no word: chance is 1 in 64.
			assert.GreaterOrEqual(t, first, 60, "titles that rank their own abstract first")
		})
	}
}

func TestTrainDeterministic(t *testing.T) {
	for _, workers := range []int{1, 2, 3} {
		o := tinyOpts
		o.Epochs = 3
		o.Workers = workers
		o.Bigrams = 256
		o.Average = true
		m, _ := trainTiny(t, o)
		o.Workers = 2
		m2, _ := trainTiny(t, o)
		assert.Equal(t, m2.Model(), m.Model(), "workers %d", workers)
	}
	o := tinyOpts
	o.Epochs = 3
	a, _ := trainTiny(t, o)
	o.Seed = 2
	b, _ := trainTiny(t, o)
	assert.NotEqual(t, a.Model(), b.Model(), "another seed, another model")
}

func TestEmbed(t *testing.T) {
	m, _ := trainTiny(t, contrast.Options{Dim: 16, Batch: 32, MinDF: 1, MaxDFRatio: 1, Epochs: 1, MinSteps: -1, Bigrams: -1})
	vecs, err := m.Embed(t.Context(), []string{"", "of the and", "t1w0 for t1w1", "T1W0 for\nt1w1"})
	require.NoError(t, err)
	require.Len(t, vecs, 4)
	assert.Equal(t, make([]float32, 16), vecs[0], "no text: zero vector")
	assert.Equal(t, make([]float32, 16), vecs[1], "stop words only: zero vector")
	assert.InDelta(t, 1, norm(vecs[2]), 1e-5)
	assert.InDeltaSlice(t, vecs[2], vecs[3], 1e-6, "case does not matter; unigram lines")
	// a fixed function of the text: batches do not matter
	one, err := m.Embed(t.Context(), []string{"t1w0 for t1w1"})
	require.NoError(t, err)
	assert.Equal(t, vecs[2], one[0])

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	many := make([]string, 1000)
	for i := range many {
		many[i] = fmt.Sprintf("t%dw0", i%64)
	}
	_, err = m.Embed(ctx, many)
	require.ErrorIs(t, err, context.Canceled)
}

func TestTrainErrors(t *testing.T) {
	tests := []struct {
		name   string
		papers []corpus.Paper
		opts   contrast.Options
		is     error
		msg    string
	}{
		{name: "too small", papers: topicPapers(10), is: contrast.ErrTooSmall, msg: "10 of 10 papers give a training pair"},
		{name: "titles only", papers: []corpus.Paper{{Title: "a"}, {Title: "b"}}, is: contrast.ErrTooSmall, msg: "0 of 2 papers"},
		{name: "bad dim", papers: topicPapers(64), opts: contrast.Options{Dim: -3}, msg: "Dim -3 out of range"},
		{name: "bad ratio", papers: topicPapers(64), opts: contrast.Options{MaxDFRatio: 2}, msg: "MaxDFRatio 2 out of range"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := contrast.Train(t.Context(), slices.Values(tc.papers), tc.opts, nil)
			require.Error(t, err)
			if tc.is != nil {
				require.ErrorIs(t, err, tc.is)
			}
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := contrast.Train(ctx, slices.Values(topicPapers(64)), tinyOpts, nil)
	require.ErrorIs(t, err, context.Canceled)
}

func TestSaveLoad(t *testing.T) {
	o := tinyOpts
	o.Epochs = 2
	o.Bigrams = 128
	m, _ := trainTiny(t, o)
	path := filepath.Join(t.TempDir(), "contrast.model")
	require.NoError(t, contrast.SaveFile(path, m))
	id, err := contrast.ModelID(path)
	require.NoError(t, err)
	assert.Equal(t, m.Model(), id)

	back, err := contrast.LoadFile(path, "uni+bi128/32")
	require.NoError(t, err)
	assert.Equal(t, m.Model(), back.Model())
	assert.Equal(t, m.Options(), back.Options())
	assert.Equal(t, m.Terms(), back.Terms())
	texts := []string{"t3w0 and t3w1", "We present t5w2 t5w3."}
	v1, err := m.Embed(t.Context(), texts)
	require.NoError(t, err)
	v2, err := back.Embed(t.Context(), texts)
	require.NoError(t, err)
	assert.Equal(t, v1, v2, "the loaded model embeds alike")
	ents, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	assert.Len(t, ents, 1, "no temporary file left")

	// a model of another feature set or dimension is refused, naming both
	_, err = contrast.LoadFile(path, "uni/32")
	require.ErrorIs(t, err, contrast.ErrMismatch)
	assert.Contains(t, err.Error(), path)
	assert.Contains(t, err.Error(), "it has uni+bi128/32, want uni/32")
	_, err = contrast.LoadFile(path, contrast.Options{Dim: 768}.Spec())
	require.ErrorIs(t, err, contrast.ErrMismatch)
	assert.Contains(t, err.Error(), "want uni+bi32768/768")
	// any of several specs; the first is named when none matches
	_, err = contrast.LoadFile(path, contrast.DefaultSpec, "uni+bi128/32")
	require.NoError(t, err)
	_, err = contrast.LoadFile(path, contrast.DefaultSpec, "uni/32")
	require.ErrorIs(t, err, contrast.ErrMismatch)
	assert.Contains(t, err.Error(), "it has uni+bi128/32, want uni+bi32768/768")

	// the spec is read from the start of the file
	spec, err := contrast.FileSpec(path)
	require.NoError(t, err)
	assert.Equal(t, "uni+bi128/32", spec)
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	short := filepath.Join(t.TempDir(), "short.model")
	require.NoError(t, os.WriteFile(short, raw[:30], 0o644))
	_, err = contrast.FileSpec(short)
	require.ErrorIs(t, err, contrast.ErrCorrupt)
	assert.Contains(t, err.Error(), short)
	_, err = contrast.FileSpec(filepath.Join(t.TempDir(), "missing.model"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

// TestDefaultSpec: the defaults hash word bigrams into 32,768 buckets
// besides the unigrams (docs/dense.md); the unigram-only models of the
// earlier defaults stay usable.
func TestDefaultSpec(t *testing.T) {
	assert.Equal(t, contrast.Options{}.Spec(), contrast.DefaultSpec)
	assert.Equal(t, "uni+bi32768/768", contrast.DefaultSpec)
	assert.Equal(t, contrast.Options{Bigrams: -1}.Spec(), contrast.EarlierDefaultSpec)
}

func TestLoadCorrupt(t *testing.T) {
	o := tinyOpts
	o.Epochs = 1
	m, _ := trainTiny(t, o)
	var buf bytes.Buffer
	require.NoError(t, m.Save(&buf))
	good := buf.Bytes()
	flip := slices.Clone(good)
	flip[len(flip)/2] ^= 0x40
	badMagic := slices.Clone(good)
	copy(badMagic, "notmodel")
	tests := []struct {
		name string
		data []byte
		msg  string
	}{
		{"empty", nil, "truncated"},
		{"truncated", good[:len(good)/3], "truncated"},
		{"no checksum", good[:len(good)-5], "truncated"},
		{"flipped bit", flip, ""},
		{"other file", badMagic, "not a contrast model"},
	}
	dir := t.TempDir()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, "bad.model")
			require.NoError(t, os.WriteFile(path, tc.data, 0o644))
			_, err := contrast.LoadFile(path, "")
			require.ErrorIs(t, err, contrast.ErrCorrupt)
			assert.Contains(t, err.Error(), path, "the error names the file")
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
	_, err := contrast.LoadFile(filepath.Join(dir, "missing.model"), "")
	require.ErrorIs(t, err, os.ErrNotExist)
}

func norm(v []float32) float64 { return math.Sqrt(dot(v, v)) }

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}
