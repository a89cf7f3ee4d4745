package cite

import (
	"strings"

	"github.com/citefind/citefind/corpus"
)

// QuoteSimilarity is how well quote matches some passage of the paper's
// title or abstract, in [0, 1]: 1 - Levenshtein distance / length over the
// normalised text (corpus.NormalizeTitle: lower case, no accents or
// punctuation), maximised over word windows of the quote's length ±1.
//
// The distances are computed with Myers' bit-vector algorithm, one pass
// per window start giving all three window lengths: O(len(text) ×
// len(quote)²/64) in all, where a cell-by-cell table per window cost
// len(text) × len(quote)² (0.6 s for a 150-word quote against a 250-word
// abstract, which a draft of many quotes multiplied).
func QuoteSimilarity(quote string, p corpus.Paper) float64 {
	q := corpus.NormalizeTitle(quote)
	if q == "" {
		return 0
	}
	n := len(strings.Fields(q))
	pat := newPattern([]rune(q))
	best := 0.0
	for _, src := range []string{p.Title, p.Abstract} {
		if s := pat.bestWindow(strings.Fields(corpus.NormalizeTitle(src)), n); s > best {
			best = s
		}
	}
	return best
}

// pattern is a string prepared for Myers' algorithm: for each character,
// the bit mask of its positions, in 64-bit blocks.
type pattern struct {
	m      int          // length in characters
	blocks int          // 64-bit blocks
	index  map[rune]int // character → its masks in peq
	peq    [][]uint64   // per character, per block
	pv, mv []uint64     // the vertical deltas of the column, per block
	last   uint64       // the bit of row m in the last block
	zero   []uint64     // the masks of a character not in the pattern
	scores []int        // scratch: distance after each character of a window
	codes  []int        // scratch: the window's characters as indexes of peq (-1: none)
	starts []int        // scratch: where each word starts in the text, in characters
	ends   []int        // scratch: where each word ends
	text   []rune       // scratch: the words joined by single spaces
}

func newPattern(q []rune) *pattern {
	p := &pattern{m: len(q), blocks: (len(q) + 63) / 64, index: map[rune]int{}}
	for i, r := range q {
		k, ok := p.index[r]
		if !ok {
			k = len(p.peq)
			p.index[r] = k
			p.peq = append(p.peq, make([]uint64, p.blocks))
		}
		p.peq[k][i/64] |= 1 << (i % 64)
	}
	p.pv, p.mv = make([]uint64, p.blocks), make([]uint64, p.blocks)
	p.zero = make([]uint64, p.blocks)
	p.last = 1 << ((p.m - 1) % 64)
	return p
}

// distances sets p.scores[j] to the Levenshtein distance between the
// pattern and text[:j+1], for each j, with Myers' block-wise algorithm
// (Myers 1999, "A fast bit-vector algorithm for approximate string
// matching based on dynamic programming"; the top row counts one per
// character, as a global distance does).
func (p *pattern) distances(codes []int) {
	for b := range p.blocks {
		p.pv[b], p.mv[b] = ^uint64(0), 0
	}
	score := p.m
	p.scores = p.scores[:0]
	for _, c := range codes {
		eqs := p.zero
		if c >= 0 {
			eqs = p.peq[c]
		}
		hin := 1
		for b := range p.blocks {
			pv, mv, eq := p.pv[b], p.mv[b], eqs[b]
			xv := eq | mv
			if hin < 0 {
				eq |= 1
			}
			xh := (((eq & pv) + pv) ^ pv) | eq
			ph := mv | ^(xh | pv)
			mh := pv & xh
			high := uint64(1) << 63
			if b == p.blocks-1 {
				high = p.last
			}
			hout := 0
			if ph&high != 0 {
				hout = 1
			} else if mh&high != 0 {
				hout = -1
			}
			ph <<= 1
			mh <<= 1
			if hin < 0 {
				mh |= 1
			} else if hin > 0 {
				ph |= 1
			}
			p.pv[b] = mh | ^(xv | ph)
			p.mv[b] = ph & xv
			hin = hout
		}
		score += hin
		p.scores = append(p.scores, score)
	}
}

// bestWindow returns the best similarity between the pattern (n words)
// and the windows of max(1, n-1) to n+1 consecutive words; a text shorter
// than a window length is one window of all its words.
func (p *pattern) bestWindow(words []string, n int) float64 {
	if len(words) == 0 {
		return 0 // the empty window: distance m, similarity 0
	}
	p.text, p.starts, p.ends = p.text[:0], p.starts[:0], p.ends[:0]
	for i, w := range words {
		if i > 0 {
			p.text = append(p.text, ' ')
		}
		p.starts = append(p.starts, len(p.text))
		p.text = append(p.text, []rune(w)...)
		p.ends = append(p.ends, len(p.text))
	}
	p.codes = p.codes[:0]
	for _, r := range p.text {
		k, ok := p.index[r]
		if !ok {
			k = -1
		}
		p.codes = append(p.codes, k)
	}
	lo, hi := max(1, n-1), n+1
	best := 0.0
	for i := range words {
		// The window lengths that start at word i: size words when they
		// fit, all the words when the text is shorter than size.
		last := 0 // the most words any of them takes
		for size := lo; size <= hi; size++ {
			if i+size <= len(words) {
				last = max(last, size)
			} else if i == 0 {
				last = max(last, len(words))
			}
		}
		if last == 0 {
			break
		}
		from := p.starts[i]
		p.distances(p.codes[from:p.ends[i+last-1]])
		for size := lo; size <= hi; size++ {
			k := size
			if i+size > len(words) {
				if i != 0 {
					continue
				}
				k = len(words)
			}
			chars := p.ends[i+k-1] - from
			if s := 1 - float64(p.scores[chars-1])/float64(max(p.m, chars)); s > best {
				best = s
			}
		}
	}
	return best
}
