package topk_test

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/citefind/citefind/internal/topk"
)

type item struct {
	score float64
	id    int
}

// Worse: lower score, then higher id.
func (a item) Worse(b item) bool { return a.score < b.score || a.score == b.score && a.id > b.id }

func TestHeapKeepsTheBest(t *testing.T) {
	tests := []struct {
		name string
		n, k int
		ties bool
	}{
		{name: "fewer than k", n: 5, k: 10},
		{name: "exactly k", n: 10, k: 10},
		{name: "many", n: 1000, k: 17},
		{name: "many ties", n: 1000, k: 50, ties: true},
		{name: "k zero", n: 10, k: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			var all []item
			h := topk.New[item](tc.k)
			for i := range tc.n {
				s := r.Float64()
				if tc.ties {
					s = float64(r.IntN(5))
				}
				c := item{s, i}
				all = append(all, c)
				h.Push(c)
			}
			slices.SortFunc(all, func(a, b item) int {
				if c := cmp.Compare(b.score, a.score); c != 0 {
					return c
				}
				return cmp.Compare(a.id, b.id)
			})
			want := all[:min(tc.k, len(all))]
			assert.Equal(t, want, h.Sorted())
			assert.Equal(t, len(want), h.Len())
		})
	}
}

func TestHeapReset(t *testing.T) {
	h := topk.New[item](2)
	h.Push(item{1, 1})
	h.Push(item{2, 2})
	assert.True(t, h.Full())
	assert.False(t, h.Push(item{0, 3}), "worse than every kept item")
	assert.Equal(t, item{1, 1}, h.Min())
	h.Reset(1)
	assert.Zero(t, h.Len())
	h.Push(item{5, 5})
	h.Push(item{6, 6})
	assert.Equal(t, []item{{6, 6}}, h.Sorted())
}

var sink []item

func BenchmarkPush(b *testing.B) {
	r := rand.New(rand.NewPCG(42, 42))
	xs := make([]item, 100_000)
	for i := range xs {
		xs[i] = item{r.Float64(), i}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		h := topk.New[item](100)
		for _, x := range xs {
			h.Push(x)
		}
		sink = h.Items()
	}
}
