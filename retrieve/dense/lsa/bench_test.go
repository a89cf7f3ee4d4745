package lsa_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/citefind/citefind/retrieve/dense/lsa"
)

var (
	sinkModel *lsa.Model
	sinkVecs  [][]float32
)

// BenchmarkTrain trains 64 dimensions on planted-topic corpora of 100, 1k
// and 10k documents (20 words each, seed 42).
func BenchmarkTrain(b *testing.B) {
	for _, n := range []int{100, 1_000, 10_000} {
		texts, _ := plantedCorpus(42, 20, n/20)
		b.Run(fmt.Sprintf("docs=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				m, err := lsa.Train(b.Context(), slices.Values(texts), lsa.Options{Dim: 64}, nil)
				if err != nil {
					b.Fatal(err)
				}
				sinkModel = m
			}
		})
	}
}

// BenchmarkEmbed embeds batches of 1, 100 and 1k texts with a 64-dimension
// model trained on 10k documents.
func BenchmarkEmbed(b *testing.B) {
	texts, _ := plantedCorpus(42, 20, 500)
	m, err := lsa.Train(b.Context(), slices.Values(texts), lsa.Options{Dim: 64}, nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{1, 100, 1_000} {
		b.Run(fmt.Sprintf("texts=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				v, err := m.Embed(b.Context(), texts[:n])
				if err != nil {
					b.Fatal(err)
				}
				sinkVecs = v
			}
		})
	}
}
