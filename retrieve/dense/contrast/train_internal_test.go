package contrast

import (
	"fmt"
	"math"
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
	for _, oneWay := range []bool{false, true} {
		t.Run(fmt.Sprint("oneway=", oneWay), func(t *testing.T) {
			o, err := Options{Dim: 16, Batch: 8, MinDF: 1, MaxDFRatio: 1, Temperature: 0.5, InitScale: 0.3, OneWay: oneWay, Workers: 2, Bigrams: 64}.withDefaults()
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
				q, p = docs[i].pairOf(kindSentence, 1, q, p)
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
