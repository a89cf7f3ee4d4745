package contrast

import (
	"math"
	"slices"
	"strings"

	"github.com/citefind/citefind/corpus"
)

// features maps analyzed text to sparse tf-idf vectors: unigrams of a
// vocabulary, and optionally word bigrams hashed into a fixed number of
// buckets.
type features struct {
	vocab   []string // unigram of each id, sorted
	index   map[string]int32
	buckets int       // hashed bigram buckets, 0 for none
	idf     []float32 // per feature: len(vocab) unigrams, then buckets
}

func newFeatures(vocab []string, buckets int, idf []float32) *features {
	f := &features{vocab: vocab, buckets: buckets, idf: idf, index: make(map[string]int32, len(vocab))}
	for i, t := range vocab {
		f.index[t] = int32(i)
	}
	return f
}

// size is the number of features (rows of the projection).
func (f *features) size() int { return len(f.vocab) + f.buckets }

// ids maps analyzed terms to unigram ids, -1 for a term outside the
// vocabulary (it still separates its neighbours, so that no bigram jumps
// over it).
func (f *features) ids(terms []string, dst []int32) []int32 {
	for _, t := range terms {
		id, ok := f.index[t]
		if !ok {
			id = -1
		}
		dst = append(dst, id)
	}
	return dst
}

// bigram returns the feature of the unigram ids a, b (both >= 0) in a row.
func bigram(a, b int32, nUni, buckets int) int32 {
	x := uint64(uint32(a))<<32 | uint64(uint32(b))
	// splitmix64 finaliser
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return int32(nUni + int(x%uint64(buckets)))
}

// vectorizer builds sparse vectors; it holds scratch space and is not
// safe for concurrent use.
type vectorizer struct {
	f      *features
	counts map[int32]int32
	keys   []int32
}

func (f *features) vectorizer() *vectorizer {
	return &vectorizer{f: f, counts: map[int32]int32{}}
}

// vector returns the L2-normalised tf-idf vector of the segments (token
// id lists; bigrams are taken within a segment only), as feature ids in
// ascending order and their weights (1 + ln tf)·idf / norm, appended to
// ids and vals. A text without a feature gives nothing.
func (v *vectorizer) vector(ids []int32, vals []float32, segments ...[]int32) ([]int32, []float32) {
	clear(v.counts)
	nUni, buckets := len(v.f.vocab), v.f.buckets
	for _, seg := range segments {
		for i, id := range seg {
			if id < 0 {
				continue
			}
			v.counts[id]++
			if buckets > 0 && i > 0 && seg[i-1] >= 0 {
				v.counts[bigram(seg[i-1], id, nUni, buckets)]++
			}
		}
	}
	if len(v.counts) == 0 {
		return ids, vals
	}
	v.keys = v.keys[:0]
	for k := range v.counts {
		v.keys = append(v.keys, k)
	}
	slices.Sort(v.keys)
	start := len(vals)
	var ss float64
	for _, k := range v.keys {
		w := (1 + math.Log(float64(v.counts[k]))) * float64(v.f.idf[k])
		ids = append(ids, k)
		vals = append(vals, float32(w))
		ss += w * w
	}
	if ss > 0 {
		inv := 1 / math.Sqrt(ss)
		for i := start; i < len(vals); i++ {
			vals[i] = float32(float64(vals[i]) * inv)
		}
	}
	return ids, vals
}

// paperDoc is a training paper as unigram id lists.
type paperDoc struct {
	title    []int32
	keywords []int32
	sents    [][]int32 // the abstract's sentences
}

// hasAbstract reports whether the paper has an abstract with a term.
func (d *paperDoc) abstractTerms() int {
	n := 0
	for _, s := range d.sents {
		n += len(s)
	}
	return n
}

// Text returns the text of p that the index should embed: title, abstract
// and keywords (joined by ". "), one per line, as the BM25 index's
// combined text field holds them.
func Text(p corpus.Paper) string {
	parts := make([]string, 0, 3)
	for _, s := range []string{p.Title, p.Abstract, strings.Join(p.Keywords, ". ")} {
		if s = strings.TrimSpace(s); s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "\n")
}
