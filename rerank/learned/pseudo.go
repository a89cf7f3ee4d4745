package learned

import (
	"encoding/binary"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strings"
	"unicode"

	"github.com/citefind/citefind/retrieve/sparse"
)

// Kinds of pseudo-query (PseudoQuery.Kind).
const (
	// PseudoSentence is a sentence of the paper's abstract, which is taken
	// out of the abstract the features see (the inverse cloze task of
	// Lee et al., 2019): the query is about the paper, not a copy of the
	// text the reranker reads.
	PseudoSentence = "sentence"
	// PseudoTitle is the paper's title.
	PseudoTitle = "title"
	// PseudoKeywords is the paper's keywords, which are taken out of the
	// paper the features see.
	PseudoKeywords = "keywords"
)

// Defaults of PseudoOptions.
const (
	DefaultPseudoQueries = 1000
	DefaultPseudoSeed    = 1
	DefaultDropRate      = 0.2
	DefaultRareDrop      = 0.5
	// MinSelfPapers is the least number of papers with a usable title or
	// abstract that self-training accepts: fewer give too few queries,
	// and too few negatives per query, to learn from.
	MinSelfPapers = 200
)

// PseudoOptions configure PseudoQueries. The zero value makes
// DefaultPseudoQueries queries with seed DefaultPseudoSeed, dropping
// DefaultRareDrop of the rarest content words and DefaultDropRate of the
// other words.
type PseudoOptions struct {
	N    int
	Seed uint64
	// RareDrop is the share of a query's content words (not stop words)
	// dropped, the rarest in the library first, in [0, 0.9]: the
	// words only the answer has, which make a query copied from a paper
	// trivially matched, while a sentence citing a paper describes it in
	// its own, more common, words.
	RareDrop float64
	// DropRate is the share of the remaining words dropped at random, in
	// [0, 0.9].
	DropRate float64
}

// PseudoPaper is a paper pseudo-queries are made from.
type PseudoPaper struct {
	ID string
	Paper
}

// PseudoQuery is one query made from a paper, with the paper as its
// answer. Paper is the answer as the features must see it: without the
// sentence or keywords the query was made from.
type PseudoQuery struct {
	PaperID string
	Kind    string
	Text    string
	Paper   Paper
}

// Eligible reports whether pseudo-queries can be made from p: a title of
// at least three words, or an abstract of at least two sentences.
func Eligible(p Paper) bool {
	return len(words(p.Title)) >= 3 || len(abstractSentences(p.Abstract)) >= 2
}

// PseudoQueries makes up to o.N pseudo-queries from the eligible papers:
// the papers whose IDs hash lowest under the seed (so the same library
// gives the same queries on any machine), one query each, the kinds
// taken in turn among those the paper allows (a sentence of its abstract
// when it has two or more of 8–60 words, its title when it has three
// words or more, its keywords when it has two or more). A share
// o.DropRate of each query's words is dropped at random, so that the
// query is not the paper's text verbatim.
func PseudoQueries(papers []PseudoPaper, o PseudoOptions) []PseudoQuery {
	if o.N <= 0 {
		o.N = DefaultPseudoQueries
	}
	if o.Seed == 0 {
		o.Seed = DefaultPseudoSeed
	}
	if o.DropRate <= 0 || o.DropRate > 0.9 {
		o.DropRate = DefaultDropRate
	}
	if o.RareDrop <= 0 || o.RareDrop > 0.9 {
		o.RareDrop = DefaultRareDrop
	}
	type ranked struct {
		h uint64
		p *PseudoPaper
	}
	var pool []ranked
	for i := range papers {
		if Eligible(papers[i].Paper) {
			pool = append(pool, ranked{idHash(papers[i].ID, o.Seed), &papers[i]})
		}
	}
	slices.SortFunc(pool, func(a, b ranked) int {
		if a.h != b.h {
			if a.h < b.h {
				return -1
			}
			return 1
		}
		return strings.Compare(a.p.ID, b.p.ID)
	})
	// Document frequencies of the analysed terms (stop words have none),
	// over at most dfPapers papers of the pool.
	df := map[string]int{}
	for _, r := range pool[:min(len(pool), dfPapers)] {
		seen := map[string]bool{}
		for _, t := range sparse.Analyze(r.p.Title + " " + r.p.Abstract + " " + strings.Join(r.p.Keywords, " ")) {
			if !seen[t] {
				seen[t] = true
				df[t]++
			}
		}
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x70736575646f))
	drop := func(s string) string { return dropWords(s, df, o.RareDrop, o.DropRate, rng) }
	var out []PseudoQuery
	for i, r := range pool {
		if len(out) == o.N {
			break
		}
		p := r.p
		var kinds []string
		sents := abstractSentences(p.Abstract)
		var usable []int
		for k, s := range sents {
			if n := len(words(s)); n >= 8 && n <= 60 {
				usable = append(usable, k)
			}
		}
		if len(sents) >= 2 && len(usable) > 0 {
			kinds = append(kinds, PseudoSentence)
		}
		if len(words(p.Title)) >= 3 {
			kinds = append(kinds, PseudoTitle)
		}
		if len(p.Keywords) >= 2 {
			kinds = append(kinds, PseudoKeywords)
		}
		if len(kinds) == 0 {
			continue
		}
		q := PseudoQuery{PaperID: p.ID, Kind: kinds[i%len(kinds)], Paper: p.Paper}
		switch q.Kind {
		case PseudoSentence:
			k := usable[rng.IntN(len(usable))]
			q.Text = drop(sents[k])
			rest := slices.Delete(slices.Clone(sents), k, k+1)
			q.Paper.Abstract = strings.Join(rest, " ")
		case PseudoTitle:
			q.Text = drop(p.Title)
		case PseudoKeywords:
			q.Text = drop(strings.Join(p.Keywords, ", "))
			q.Paper.Keywords = nil
		}
		out = append(out, q)
	}
	return out
}

// dfPapers bounds the papers whose terms give the document frequencies
// of PseudoQueries.
const dfPapers = 20000

// idHash is FNV-1a 64 of the seed and the id.
func idHash(id string, seed uint64) uint64 {
	h := fnv.New64a()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], seed)
	h.Write(b[:])
	h.Write([]byte(id))
	return h.Sum64()
}

// dropWords drops from the whitespace-separated words of s the share
// rare of its content words (those with an analysed term: no stop word)
// with the lowest document frequency df, then the share rate of the rest at random,
// keeping at least three words, in their order.
func dropWords(s string, df map[string]int, rare, rate float64, rng *rand.Rand) string {
	ws := strings.Fields(s)
	if len(ws) <= 3 {
		return strings.Join(ws, " ")
	}
	type cw struct{ i, df int }
	var content []cw
	for i, w := range ws {
		ts := sparse.Analyze(w)
		if len(ts) == 0 {
			continue // a stop word, or no word at all
		}
		d := df[ts[0]]
		for _, t := range ts[1:] {
			d = min(d, df[t])
		}
		content = append(content, cw{i, d})
	}
	slices.SortStableFunc(content, func(a, b cw) int { return a.df - b.df })
	gone := make([]bool, len(ws))
	for _, c := range content[:int(rare*float64(len(content))+0.5)] {
		gone[c.i] = true
	}
	kept := 0
	for i := range ws {
		if !gone[i] && rng.Float64() < rate {
			gone[i] = true
		}
		if !gone[i] {
			kept++
		}
	}
	// Fewer than three words left: the most common content words come
	// back.
	for k := len(content) - 1; k >= 0 && kept < 3; k-- {
		if gone[content[k].i] {
			gone[content[k].i] = false
			kept++
		}
	}
	keep := make([]string, 0, kept)
	for i, w := range ws {
		if !gone[i] {
			keep = append(keep, w)
		}
	}
	return strings.Join(keep, " ")
}

// abstractSentences splits an abstract into sentences at ". ", "! " and
// "? " followed by a capital letter or a digit.
func abstractSentences(s string) []string {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil
	}
	var out []string
	start := 0
	rs := []rune(s)
	for i := 0; i+2 < len(rs); i++ {
		if (rs[i] == '.' || rs[i] == '!' || rs[i] == '?') && unicode.IsSpace(rs[i+1]) &&
			(unicode.IsUpper(rs[i+2]) || unicode.IsDigit(rs[i+2])) {
			out = append(out, strings.TrimSpace(string(rs[start:i+1])))
			start = i + 2
		}
	}
	if t := strings.TrimSpace(string(rs[start:])); t != "" {
		out = append(out, t)
	}
	return out
}
