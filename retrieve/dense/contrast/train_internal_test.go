package contrast

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/corpus"
)

// tinyPapers returns n synthetic papers: each has its own topic words, so
// that a title finds its own abstract only through what was learnt.
func tinyPapers(n int) []corpus.Paper {
	var out []corpus.Paper
	for i := range n {
		a, b, c := fmt.Sprintf("alpha%d", i), fmt.Sprintf("beta%d", (i+1)%n), fmt.Sprintf("gamma%d", (i*7)%n)
		out = append(out, corpus.Paper{
			ID:       fmt.Sprintf("p%d", i),
			Title:    fmt.Sprintf("Study of %s and %s", a, b),
			Abstract: fmt.Sprintf("We describe %s with %s. The %s results improve %s. Experiments on %s confirm it.", a, c, b, c, a),
			Keywords: []string{a, c},
		})
	}
	return out
}

// TestGradient checks the analytic gradient of the loss with respect to
// the projection against central finite differences, for both the
// symmetric and the one-way loss.
func TestGradient(t *testing.T) {
	for _, tc := range []struct {
		oneWay bool
		heads  int
	}{{false, 1}, {true, 1}, {false, 2}} {
		t.Run(fmt.Sprintf("oneway=%v/heads=%d", tc.oneWay, tc.heads), func(t *testing.T) {
			o, err := Options{Dim: 16, Batch: 8, MinDF: 1, MaxDFRatio: 1, Temperature: 0.5, InitScale: 0.3, OneWay: tc.oneWay, Heads: tc.heads, Workers: 2, Bigrams: 64}.withDefaults()
			require.NoError(t, err)
			col, err := collect(t.Context(), slices.Values(tinyPapers(40)), 2, func(Progress) {})
			require.NoError(t, err)
			f, docs := col.vocabulary(o)
			m := &Model{opts: o, docs: len(docs), f: f}
			tr, err := newTrainer(m, docs)
			require.NoError(t, err)
			v := f.vectorizer()
			for i := range tr.b {
				var q, p [][]int32
				q, p = docs[i].pairOf(kindSentence, 1, 1, q, p)
				tr.feats[i], tr.vals[i] = v.vector(nil, nil, q...)
				tr.feats[tr.b+i], tr.vals[tr.b+i] = v.vector(nil, nil, p...)
			}
			tr.forwardBackward()
			// analytic gradient of a few rows of w
			d := tr.d
			checked, nonzero := 0, 0
			for _, feat := range []int32{tr.feats[0][0], tr.feats[tr.b+3][1], tr.feats[5][len(tr.feats[5])-1]} {
				for _, k := range []int{0, 5, 15} {
					var want float64
					for i := range tr.feats {
						for j, ff := range tr.feats[i] {
							if ff == feat {
								want += float64(tr.vals[i][j]) * float64(tr.dh[i*d+k])
							}
						}
					}
					const eps = 1e-2
					x := m.w[int(feat)*d+k]
					m.w[int(feat)*d+k] = x + eps
					up := tr.forwardBackward()
					m.w[int(feat)*d+k] = x - eps
					down := tr.forwardBackward()
					m.w[int(feat)*d+k] = x
					tr.forwardBackward()
					got := float64(up-down) / (2 * eps)
					assert.InDelta(t, want, got, 2e-3+0.02*math.Abs(want), "feature %d dim %d", feat, k)
					checked++
					if math.Abs(want) > 1e-3 {
						nonzero++
					}
				}
			}
			assert.Equal(t, 9, checked)
			assert.GreaterOrEqual(t, nonzero, 6, "the checked gradients are not all zero")
		})
	}
}

// syntheticDocs returns n papers of random Zipf-distributed unigram ids
// over a vocabulary of v terms: a 10-term title and 8 sentences of 12.
func syntheticDocs(n, v int, seed uint64) []paperDoc {
	rng := rand.New(rand.NewPCG(seed, 1))
	z := rand.NewZipf(rng, 1.1, 10, uint64(v-1))
	seq := func(k int) []int32 {
		out := make([]int32, k)
		for i := range out {
			out[i] = int32(z.Uint64())
		}
		return out
	}
	docs := make([]paperDoc, n)
	for i := range docs {
		docs[i].title = seq(10)
		for range 8 {
			docs[i].sents = append(docs[i].sents, seq(12))
		}
	}
	return docs
}

// BenchmarkTrainStep times one training step (forward, loss, backward,
// Adam) on a batch of synthetic pairs: batch 1024, 768 dimensions, a
// 35,000-term vocabulary (ACM-CR's size), ~10 terms a query and ~90 a
// paper.
func BenchmarkTrainStep(b *testing.B) {
	for _, sz := range []struct{ batch, dim int }{{1024, 768}, {512, 768}, {1024, 512}} {
		b.Run(fmt.Sprintf("batch=%d/dim=%d", sz.batch, sz.dim), func(b *testing.B) {
			const v = 35000
			docs := syntheticDocs(sz.batch, v, 1)
			idf := make([]float32, v)
			vocab := make([]string, v)
			for i := range idf {
				idf[i] = 1 + float32(i%7)
				vocab[i] = fmt.Sprintf("w%08d", i)
			}
			o, err := Options{Dim: sz.dim, Batch: sz.batch, MinSteps: -1}.withDefaults()
			require.NoError(b, err)
			m := &Model{opts: o, docs: len(docs), f: newFeatures(vocab, 0, idf)}
			tr, err := newTrainer(m, docs)
			require.NoError(b, err)
			vz := m.f.vectorizer()
			for i := range tr.b {
				var q, p [][]int32
				q, p = docs[i].pairOf(kindSentence, 2, 1, q, p)
				tr.feats[i], tr.vals[i] = vz.vector(nil, nil, q...)
				tr.feats[tr.b+i], tr.vals[tr.b+i] = vz.vector(nil, nil, p...)
			}
			b.ResetTimer()
			for b.Loop() {
				tr.step()
			}
		})
	}
}

func TestNeighbours(t *testing.T) {
	// papers 2k and 2k+1 share a rare word; paper 40 is a second record of
	// paper 0 (a near duplicate, never taken as a neighbour)
	var papers []corpus.Paper
	for i := range 40 {
		twin := fmt.Sprintf("shared%d", i/2)
		papers = append(papers, corpus.Paper{
			Title:    fmt.Sprintf("Title %s own%d", twin, i),
			Abstract: fmt.Sprintf("About own%d and %s here. Second sentence own%d.", i, twin, i),
		})
	}
	papers = append(papers, papers[0])
	o, err := Options{Dim: 8, Batch: 8, MinDF: 1, MaxDFRatio: 1}.withDefaults()
	require.NoError(t, err)
	col, err := collect(t.Context(), slices.Values(papers), 2, func(Progress) {})
	require.NoError(t, err)
	f, docs := col.vocabulary(o)
	tr, err := newTrainer(&Model{opts: o, f: f}, docs)
	require.NoError(t, err)
	require.Len(t, tr.usable, 41)
	nb, err := tr.neighbours(t.Context())
	require.NoError(t, err)
	for u := 2; u < 40; u++ {
		assert.Equal(t, int32(u^1), nb[u], "paper %d", u)
	}
	assert.Equal(t, int32(1), nb[0], "the duplicate (40) is not paper 0's neighbour")
	assert.Equal(t, int32(1), nb[40])

	order := []int32{5, 3, 4, 2, 1, 0}
	got := pairUp(order, []int32{1, 0, 3, 2, -1, 4}, make([]bool, 6), nil)
	assert.Equal(t, []int32{5, 4, 3, 2, 1, 0}, got)
}

func TestDropShared(t *testing.T) {
	q := [][]int32{{1, 2, -1, 3}}
	p := [][]int32{{1, 4, 2}, {3, 5, 1}}
	assert.Equal(t, p, dropShared(q, p, 0, 7), "probability 0 keeps all")
	assert.Equal(t, [][]int32{{-1, 4, -1}, {-1, 5, -1}}, dropShared(q, p, 1, 7), "probability 1 drops every shared term")
	assert.Equal(t, [][]int32{{1, 4, 2}, {3, 5, 1}}, p, "p is not modified")
	// with 1/2, a term is dropped everywhere or nowhere, the same way for a seed
	var q2, p2 [][]int32
	for id := range int32(200) {
		q2 = append(q2, []int32{id})
		p2 = append(p2, []int32{id, 1000 + id, id})
	}
	a := dropShared(q2, p2, 0.5, 3)
	assert.Equal(t, a, dropShared(q2, p2, 0.5, 3))
	dropped := 0
	for id, s := range a {
		assert.Equal(t, s[0], s[2], "both occurrences alike")
		assert.Equal(t, int32(1000+id), s[1], "a term of p only is kept")
		if s[0] < 0 {
			dropped++
		} else {
			assert.Equal(t, int32(id), s[0])
		}
	}
	assert.InDelta(t, 100, dropped, 30)
	assert.NotEqual(t, a, dropShared(q2, p2, 0.5, 4), "another seed drops others")
}
