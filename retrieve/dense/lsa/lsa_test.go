package lsa_test

import (
	"bytes"
	"context"
	"fmt"
	"iter"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/retrieve/dense/lsa"
)

// embedder is the dense package's Embedder interface, restated here so
// that lsa does not import dense.
type embedder interface {
	Model() string
	Dim() int
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

var _ embedder = (*lsa.Model)(nil)

// plantedCorpus returns docsPerTopic documents for each of topics topics.
// Every topic has its own 12 words; a document draws 14 words from its
// topic and 6 from 40 background words shared by all topics.
func plantedCorpus(seed int64, topics, docsPerTopic int) (texts []string, labels []int) {
	rng := rand.New(rand.NewSource(seed))
	word := func(prefix string, i int) string {
		return fmt.Sprintf("%s%c%c", prefix, 'a'+i/26%26, 'a'+i%26) // e.g. "zqbk"
	}
	for d := range topics * docsPerTopic {
		topic := d % topics
		var w []string
		for range 14 {
			w = append(w, word("zt"+string(rune('a'+topic)), rng.Intn(12)))
		}
		for range 6 {
			w = append(w, word("zbg", rng.Intn(40)))
		}
		rng.Shuffle(len(w), func(i, j int) { w[i], w[j] = w[j], w[i] })
		texts = append(texts, strings.Join(w, " "))
		labels = append(labels, topic)
	}
	return texts, labels
}

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func norm(a []float32) float64 { return math.Sqrt(dot(a, a)) }

func TestPlantedTopics(t *testing.T) {
	texts, labels := plantedCorpus(7, 4, 30)
	tests := []struct {
		name string
		opts lsa.Options
	}{
		{"plain", lsa.Options{Dim: 4, Fold: lsa.FoldPlain}},
		{"sigma-inv", lsa.Options{Dim: 4, Fold: lsa.FoldInverse}},
		{"sigma-inv-sqrt", lsa.Options{Dim: 4, Fold: lsa.FoldInverseSqrt}},
		{"more dims than topics", lsa.Options{Dim: 16}},
		{"no power iterations", lsa.Options{Dim: 4, PowerIters: -1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := lsa.Train(t.Context(), slices.Values(texts), tc.opts, nil)
			require.NoError(t, err)
			vecs, err := m.Embed(t.Context(), texts)
			require.NoError(t, err)
			require.Len(t, vecs, len(texts))
			nearestSame := 0
			for i, v := range vecs {
				require.Len(t, v, m.Dim())
				assert.InDelta(t, 1, norm(v), 1e-5, "unit length")
				var same, other float64
				var ns, no int
				best, bestSim := -1, math.Inf(-1)
				for j, u := range vecs {
					if i == j {
						continue
					}
					s := dot(v, u)
					if labels[i] == labels[j] {
						same += s
						ns++
					} else {
						other += s
						no++
					}
					if s > bestSim {
						best, bestSim = j, s
					}
				}
				assert.Greater(t, same/float64(ns), other/float64(no)+0.2, "doc %d: same topic nearer", i)
				if labels[best] == labels[i] {
					nearestSame++
				}
			}
			assert.GreaterOrEqual(t, nearestSame, len(texts)*95/100, "nearest neighbour has the same topic")

			// A query made of one topic's words is nearest that topic's documents.
			q, err := m.Embed(t.Context(), []string{"ztcaa ztcab ztcac ztcad"})
			require.NoError(t, err)
			for i, v := range vecs {
				if labels[i] == 2 {
					continue
				}
				for j, u := range vecs {
					if labels[j] == 2 {
						assert.Greater(t, dot(q[0], u), dot(q[0], v), "topic-2 doc %d above doc %d", j, i)
						break
					}
				}
			}
		})
	}
}

func TestEmbedEdgeCases(t *testing.T) {
	texts, _ := plantedCorpus(1, 3, 20)
	m, err := lsa.Train(t.Context(), slices.Values(texts), lsa.Options{Dim: 3}, nil)
	require.NoError(t, err)
	tests := []struct {
		name string
		text string
		zero bool
	}{
		{"empty", "", true},
		{"stop words only", "the of and", true},
		{"out of vocabulary", "quantum chromodynamics", true},
		{"vocabulary word", "ztaab", false},
		{"mixed", "the ztbac of quantum", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vecs, err := m.Embed(t.Context(), []string{tc.text})
			require.NoError(t, err)
			require.Len(t, vecs[0], 3)
			if tc.zero {
				assert.Equal(t, make([]float32, 3), vecs[0])
			} else {
				assert.InDelta(t, 1, norm(vecs[0]), 1e-5)
			}
		})
	}
	vecs, err := m.Embed(t.Context(), nil)
	require.NoError(t, err)
	assert.Empty(t, vecs)
}

func TestDeterministic(t *testing.T) {
	texts, _ := plantedCorpus(3, 5, 40)
	train := func(o lsa.Options) (*lsa.Model, [][]float32) {
		m, err := lsa.Train(t.Context(), slices.Values(texts), o, nil)
		require.NoError(t, err)
		v, err := m.Embed(t.Context(), texts)
		require.NoError(t, err)
		return m, v
	}
	m1, v1 := train(lsa.Options{Dim: 8})
	m2, v2 := train(lsa.Options{Dim: 8})
	assert.Regexp(t, regexp.MustCompile(`^lsa-8@[0-9a-f]{12}$`), m1.Model())
	assert.Equal(t, m1.Model(), m2.Model())
	assert.Equal(t, v1, v2, "same vectors, bit for bit")
	assert.Equal(t, m1.Singular(), m2.Singular())

	tests := []struct {
		name string
		opts lsa.Options
	}{
		{"other seed", lsa.Options{Dim: 8, Seed: 2}},
		{"other dim", lsa.Options{Dim: 6}},
		{"other fold", lsa.Options{Dim: 8, Fold: lsa.FoldInverse}},
		{"other vocabulary", lsa.Options{Dim: 8, MinDF: 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := train(tc.opts)
			assert.NotEqual(t, m1.Model(), m.Model())
		})
	}

	inv, err := m1.WithFold(lsa.FoldInverse)
	require.NoError(t, err)
	assert.Equal(t, lsa.FoldInverse, inv.Fold())
	assert.NotEqual(t, m1.Model(), inv.Model())
	back, err := inv.WithFold(m1.Fold())
	require.NoError(t, err)
	assert.Equal(t, m1.Model(), back.Model())
	_, err = m1.WithFold("cubic")
	require.Error(t, err)
}

func TestSaveLoad(t *testing.T) {
	texts, _ := plantedCorpus(5, 4, 25)
	for _, fold := range []lsa.Fold{lsa.FoldPlain, lsa.FoldInverse, lsa.FoldInverseSqrt} {
		t.Run(string(fold), func(t *testing.T) {
			m, err := lsa.Train(t.Context(), slices.Values(texts), lsa.Options{Dim: 5, Fold: fold}, nil)
			require.NoError(t, err)
			var buf bytes.Buffer
			require.NoError(t, m.Save(&buf))
			saved := slices.Clone(buf.Bytes())

			got, err := lsa.Load(&buf)
			require.NoError(t, err)
			assert.Equal(t, m.Model(), got.Model())
			assert.Equal(t, m.Dim(), got.Dim())
			assert.Equal(t, m.Fold(), got.Fold())
			assert.Equal(t, m.Terms(), got.Terms())
			assert.Equal(t, m.Singular(), got.Singular())
			want, err := m.Embed(t.Context(), texts)
			require.NoError(t, err)
			have, err := got.Embed(t.Context(), texts)
			require.NoError(t, err)
			assert.Equal(t, want, have, "bit-exact vectors")

			var again bytes.Buffer
			require.NoError(t, got.Save(&again))
			assert.Equal(t, saved, again.Bytes(), "bit-exact file")

			path := filepath.Join(t.TempDir(), "lsa.model")
			require.NoError(t, os.WriteFile(path, saved, 0o644))
			id, err := lsa.ModelID(path)
			require.NoError(t, err)
			assert.Equal(t, m.Model(), id, "identity read from the file")
		})
	}
}

func TestLoadCorrupt(t *testing.T) {
	texts, _ := plantedCorpus(5, 3, 20)
	m, err := lsa.Train(t.Context(), slices.Values(texts), lsa.Options{Dim: 3}, nil)
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, m.Save(&buf))
	good := buf.Bytes()
	flip := func(i int) []byte {
		b := slices.Clone(good)
		b[i] ^= 0x40
		return b
	}
	tests := []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"not a model", []byte("PK\x03\x04 this is a zip file, not a model")},
		{"bad magic", flip(0)},
		{"bad version", flip(8)},
		{"huge dimension", flip(12 + 3)},
		{"header bit flip", flip(30)},
		{"vocabulary bit flip", flip(80)},
		{"vector bit flip", flip(len(good) - 40)},
		{"checksum bit flip", flip(len(good) - 1)},
		{"truncated header", good[:20]},
		{"truncated body", good[:len(good)/2]},
		{"checksum missing", good[:len(good)-32]},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := lsa.Load(bytes.NewReader(tc.data))
			require.ErrorIs(t, err, lsa.ErrCorrupt)
		})
	}
	t.Run("ModelID", func(t *testing.T) {
		dir := t.TempDir()
		for name, data := range map[string][]byte{"empty": nil, "short": good[:40], "not a model": flip(0)} {
			path := filepath.Join(dir, name)
			require.NoError(t, os.WriteFile(path, data, 0o644))
			_, err := lsa.ModelID(path)
			require.ErrorIs(t, err, lsa.ErrCorrupt, name)
		}
		_, err := lsa.ModelID(filepath.Join(dir, "missing"))
		require.ErrorIs(t, err, os.ErrNotExist)
	})
}

func TestTrainErrors(t *testing.T) {
	texts, _ := plantedCorpus(2, 3, 10)
	tests := []struct {
		name  string
		texts []string
		opts  lsa.Options
		is    error
	}{
		{"no documents", nil, lsa.Options{}, lsa.ErrEmptyCorpus},
		{"only stop words", []string{"the", "of the", "and"}, lsa.Options{}, lsa.ErrEmptyCorpus},
		{"every term filtered", texts, lsa.Options{MinDF: 1000}, lsa.ErrEmptyCorpus},
		{"negative dim", texts, lsa.Options{Dim: -1}, nil},
		{"ratio above one", texts, lsa.Options{MaxDFRatio: 1.5}, nil},
		{"unknown fold", texts, lsa.Options{Fold: "cubic"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := lsa.Train(t.Context(), slices.Values(tc.texts), tc.opts, nil)
			require.Error(t, err)
			if tc.is != nil {
				require.ErrorIs(t, err, tc.is)
			}
		})
	}
}

func TestSmallCorpusClampsDim(t *testing.T) {
	texts := []string{"graph neural network", "graph convolution network", "neural retrieval model", "retrieval model ranking"}
	m, err := lsa.Train(t.Context(), slices.Values(texts), lsa.Options{MaxDFRatio: 1}, nil)
	require.NoError(t, err)
	assert.LessOrEqual(t, m.Dim(), 4)
	assert.Positive(t, m.Dim())
	v, err := m.Embed(t.Context(), []string{"graph network"})
	require.NoError(t, err)
	assert.Len(t, v[0], m.Dim())
}

func TestProgress(t *testing.T) {
	texts, _ := plantedCorpus(2, 4, 300)
	var stages []string
	_, err := lsa.Train(t.Context(), slices.Values(texts), lsa.Options{Dim: 4}, func(stage string, done, total int) {
		if len(stages) == 0 || stages[len(stages)-1] != stage {
			stages = append(stages, stage)
		}
		if total > 0 {
			assert.LessOrEqual(t, done, total, stage)
		}
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"analyze", "matrix", "svd", "done"}, stages)
}

func TestContextCanceled(t *testing.T) {
	texts, _ := plantedCorpus(4, 4, 400)
	m, err := lsa.Train(t.Context(), slices.Values(texts), lsa.Options{Dim: 4}, nil)
	require.NoError(t, err)

	t.Run("train before start", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err := lsa.Train(ctx, slices.Values(texts), lsa.Options{Dim: 4}, nil)
		require.ErrorIs(t, err, context.Canceled)
	})
	t.Run("train while reading", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		var seq iter.Seq[string] = func(yield func(string) bool) {
			for i, s := range texts {
				if i == 700 {
					cancel()
				}
				if !yield(s) {
					return
				}
			}
		}
		_, err := lsa.Train(ctx, seq, lsa.Options{Dim: 4}, nil)
		require.ErrorIs(t, err, context.Canceled)
	})
	t.Run("train during svd", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		_, err := lsa.Train(ctx, slices.Values(texts), lsa.Options{Dim: 4}, func(stage string, done, total int) {
			if stage == "svd" && done == 2 {
				cancel()
			}
		})
		require.ErrorIs(t, err, context.Canceled)
	})
	t.Run("embed", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err := m.Embed(ctx, texts)
		require.ErrorIs(t, err, context.Canceled)
	})
}

func TestEmbedConcurrent(t *testing.T) {
	texts, _ := plantedCorpus(6, 3, 50)
	m, err := lsa.Train(t.Context(), slices.Values(texts), lsa.Options{Dim: 3}, nil)
	require.NoError(t, err)
	want, err := m.Embed(t.Context(), texts)
	require.NoError(t, err)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			got, err := m.Embed(t.Context(), texts)
			assert.NoError(t, err)
			assert.Equal(t, want, got)
		})
	}
	wg.Wait()
}

func TestText(t *testing.T) {
	tests := []struct {
		name string
		p    corpus.Paper
		want string
	}{
		{"all fields", corpus.Paper{Title: "T", Abstract: "A", Keywords: []string{"k1", "k2"}}, "T\nA\nk1. k2"},
		{"title only", corpus.Paper{Title: "T"}, "T"},
		{"no title", corpus.Paper{Abstract: "A", Keywords: []string{"k"}}, "A\nk"},
		{"empty", corpus.Paper{}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, lsa.Text(tc.p))
		})
	}
}

func TestRow(t *testing.T) {
	texts, _ := plantedCorpus(1, 3, 20)
	m, err := lsa.Train(t.Context(), slices.Values(texts), lsa.Options{Dim: 3}, nil)
	require.NoError(t, err)
	assert.Nil(t, m.Row("quantum"), "not in the vocabulary")
	row := m.Row("ztaab")
	require.Len(t, row, 3)
	// a one-term text folds in to its row, normalised (plain fold)
	vecs, err := m.Embed(t.Context(), []string{"ztaab"})
	require.NoError(t, err)
	n := norm(row)
	for k := range row {
		assert.InDelta(t, float64(row[k])/n, vecs[0][k], 1e-5)
	}
}
