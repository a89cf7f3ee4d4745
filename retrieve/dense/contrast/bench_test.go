package contrast_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/retrieve/dense/contrast"
)

var sinkVecs [][]float32

// zipfPapers returns n synthetic papers over a vocabulary of v made-up
// words drawn from a Zipf law (fixed seed): a 9-word title and an
// abstract of 8 sentences of 20 words, about ACM-CR's lengths.
func zipfPapers(n, v int) []corpus.Paper {
	rng := rand.New(rand.NewPCG(42, 42))
	z := rand.NewZipf(rng, 1.07, 2, uint64(v-1))
	words := func(k int) string {
		var b strings.Builder
		for i := range k {
			if i > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "w%xq", z.Uint64())
		}
		return b.String()
	}
	out := make([]corpus.Paper, n)
	for i := range out {
		var abs []string
		for range 8 {
			abs = append(abs, "The "+words(20)+".")
		}
		out[i] = corpus.Paper{ID: fmt.Sprint(i), Title: words(9), Abstract: strings.Join(abs, " ")}
	}
	return out
}

// benchModel trains a model of dim dimensions on 4,096 synthetic papers
// over 30,000 words, once per dimension.
var benchModel = sync.OnceValue(func() map[int]*contrast.Model { return map[int]*contrast.Model{} })

func modelFor(b *testing.B, dim int) (*contrast.Model, []corpus.Paper) {
	papers := zipfPapers(4096, 30000)
	if m := benchModel()[dim]; m != nil {
		return m, papers
	}
	m, err := contrast.Train(b.Context(), slices.Values(papers), contrast.Options{Dim: dim, Epochs: 1, MinSteps: -1}, nil)
	require.NoError(b, err)
	benchModel()[dim] = m
	return m, papers
}

// BenchmarkEmbed is the throughput of embedding papers (title and
// abstract, ~170 words), as the dense index build does, in batches of 256.
func BenchmarkEmbed(b *testing.B) {
	for _, dim := range []int{256, 768} {
		b.Run(fmt.Sprintf("dim=%d", dim), func(b *testing.B) {
			m, papers := modelFor(b, dim)
			texts := make([]string, 256)
			for i := range texts {
				texts[i] = contrast.Text(papers[i])
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				v, err := m.Embed(b.Context(), texts)
				require.NoError(b, err)
				sinkVecs = v
			}
			b.ReportMetric(float64(len(texts))*float64(b.N)/b.Elapsed().Seconds(), "papers/s")
		})
	}
}

// BenchmarkEmbedQuery is the cost of embedding one query: a citation
// sentence of 25 words, or a paragraph of 120.
func BenchmarkEmbedQuery(b *testing.B) {
	for _, dim := range []int{256, 768} {
		m, papers := modelFor(b, dim)
		for _, words := range []int{25, 120} {
			q := strings.Join(strings.Fields(papers[7].Abstract)[:words], " ")
			b.Run(fmt.Sprintf("dim=%d/words=%d", dim, words), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					v, err := m.Embed(b.Context(), []string{q})
					require.NoError(b, err)
					sinkVecs = v
				}
			})
		}
	}
}
