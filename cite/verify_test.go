package cite_test

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/cite"
	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/internal/editdist"
)

// referenceSimilarity is QuoteSimilarity as first written: a Levenshtein
// table, cell by cell, for every window. QuoteSimilarity must give the
// same numbers.
func referenceSimilarity(quote string, p corpus.Paper) float64 {
	q := corpus.NormalizeTitle(quote)
	if q == "" {
		return 0
	}
	n := len(strings.Fields(q))
	best := 0.0
	for _, src := range []string{p.Title, p.Abstract} {
		words := strings.Fields(corpus.NormalizeTitle(src))
		for size := max(1, n-1); size <= n+1; size++ {
			for i := 0; i+size <= len(words) || (i == 0 && len(words) < size); i++ {
				w := strings.Join(words[i:min(i+size, len(words))], " ")
				ra, rb := []rune(q), []rune(w)
				m := max(len(ra), len(rb))
				s := 1.0
				if m > 0 {
					s = 1 - float64(editdist.Levenshtein(ra, rb))/float64(m)
				}
				best = max(best, s)
				if i+size >= len(words) {
					break
				}
			}
		}
	}
	return best
}

// TestQuoteSimilarityMatchesReference compares QuoteSimilarity with the
// cell-by-cell table on random texts from a small alphabet (so that
// windows nearly match), with quotes from 1 to 30 words (up to 200
// characters): patterns of one and of several 64-bit blocks, and texts
// shorter than the quote.
func TestQuoteSimilarityMatchesReference(t *testing.T) {
	r := rand.New(rand.NewSource(42))
	letters := []rune("abcdeé")
	word := func() string {
		w := make([]rune, 1+r.Intn(6))
		for i := range w {
			w[i] = letters[r.Intn(len(letters))]
		}
		return string(w)
	}
	words := func(n int) string {
		ws := make([]string, n)
		for i := range ws {
			ws[i] = word()
		}
		return strings.Join(ws, " ")
	}
	n := 3000
	if testing.Short() {
		n = 300 // the reference table is slow under -race
	}
	for i := range n {
		p := corpus.Paper{Title: words(r.Intn(8)), Abstract: words(r.Intn(40))}
		quote := words(1 + r.Intn(30))
		if i%5 == 0 && p.Abstract != "" { // a passage of the abstract, edited
			ws := strings.Fields(p.Abstract)
			a := r.Intn(len(ws))
			b := min(len(ws), a+1+r.Intn(30))
			quote = strings.Join(ws[a:b], " ") + " " + word()
		}
		want := referenceSimilarity(quote, p)
		require.InDelta(t, want, cite.QuoteSimilarity(quote, p), 1e-12, "quote %q\ntitle %q\nabstract %q", quote, p.Title, p.Abstract)
	}
	assert.Equal(t, 0.0, cite.QuoteSimilarity("", corpus.Paper{Title: "x"}))
	assert.Equal(t, 0.0, cite.QuoteSimilarity("words", corpus.Paper{}))
	assert.Equal(t, 1.0, cite.QuoteSimilarity("Rank Fusion!", corpus.Paper{Abstract: "reciprocal rank fusion beats"}))
}

// BenchmarkQuoteSimilarity: quotes of 10, 50 and 150 words that match
// nothing, against a 250-word abstract (the cell-by-cell table took 16
// ms, 257 ms and 610 ms).
func BenchmarkQuoteSimilarity(b *testing.B) {
	r := rand.New(rand.NewSource(1))
	word := func() string {
		w := make([]byte, 3+r.Intn(8))
		for i := range w {
			w[i] = byte('a' + r.Intn(26))
		}
		return string(w)
	}
	words := func(n int) string {
		ws := make([]string, n)
		for i := range ws {
			ws[i] = word()
		}
		return strings.Join(ws, " ")
	}
	p := corpus.Paper{Title: words(8), Abstract: words(250)}
	for _, n := range []int{10, 50, 150} {
		q := words(n)
		b.Run(fmt.Sprintf("%d-words", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				parseSink += int(100 * cite.QuoteSimilarity(q, p))
			}
		})
	}
}
