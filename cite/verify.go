package cite

import (
	"strings"

	"github.com/citefind/citefind/corpus"
)

// QuoteSimilarity is how well quote matches some passage of the paper's
// title or abstract, in [0, 1]: 1 - Levenshtein distance / length over the
// normalised text (corpus.NormalizeTitle: lower case, no accents or
// punctuation), maximised over word windows of the quote's length ±1.
func QuoteSimilarity(quote string, p corpus.Paper) float64 {
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
				if s := similarity(q, w); s > best {
					best = s
				}
				if i+size >= len(words) {
					break
				}
			}
		}
	}
	return best
}

func similarity(a, b string) float64 {
	ra, rb := []rune(a), []rune(b)
	m := max(len(ra), len(rb))
	if m == 0 {
		return 1
	}
	return 1 - float64(levenshtein(ra, rb))/float64(m)
}

func levenshtein(a, b []rune) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
