package fuse

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/citefind/citefind/corpus"
)

// Method is a way of fusing ranked lists into one.
type Method string

// Fusion methods. In the formulas, w_r is the weight of retriever r, and a
// paper missing from r's list gets nothing from r.
const (
	// RRF is weighted Reciprocal Rank Fusion: Σ_r w_r / (k + rank_r), with
	// k = Options.RankConstant and rank_r the 1-based position in r's
	// list. Only positions count, not scores. Fused scores are in
	// (0, Σ_r w_r / (k+1)].
	RRF Method = "rrf"
	// MaxNorm is weighted CombSUM of max-normalised scores:
	// Σ_r w_r · score_r / max_r. A list with a negative score is first
	// shifted so that its lowest score is 0, i.e. it is min-max
	// normalised: Σ_r w_r · (score_r − lo_r) / (max_r − lo_r) with
	// lo_r = min(0, min_r). Normalised scores are in [0, 1]; fused scores
	// in [0, Σ_r w_r].
	MaxNorm Method = "max"
	// MinMax is weighted CombSUM of min-max-normalised scores (a linear
	// interpolation when the weights sum to 1):
	// Σ_r w_r · (score_r − min_r) / (max_r − min_r). The last hit of
	// every list normalises to 0, its first to 1. Fused scores are in
	// [0, Σ_r w_r].
	//
	// For both score methods, min and max are taken over the finite
	// scores of the list as kept (deduplicated, cut to Depth). A list
	// whose finite scores are all equal normalises them to 1. NaN and
	// −Inf normalise to 0, +Inf to 1.
	MinMax Method = "minmax"
)

// Defaults used for zero fields of Options and Named.
const (
	// DefaultRankConstant is RRF's k, as in Cormack et al. (2009).
	DefaultRankConstant = 60
	// DefaultDepth is how many hits are asked of each retriever.
	DefaultDepth = 100
	// DefaultWeight is the weight of a retriever that is not given one.
	DefaultWeight = 1.0
)

// Sentinel errors. Test with errors.Is.
var (
	// ErrNoRetrievers: Search was given no retrievers.
	ErrNoRetrievers = errors.New("no retrievers")
	// ErrAllFailed: every retriever failed (or every one that is not a
	// Named.Shadow), so there is nothing to fuse, even with
	// Options.AllowPartial. The error also wraps each Failure.
	ErrAllFailed = errors.New("all retrievers failed")
	// ErrInvalidOptions: an Options field, a weight or a Named is out of
	// range (negative depth, unknown method, duplicate name, …).
	ErrInvalidOptions = errors.New("invalid fusion options")
	// ErrPanic: a retriever panicked. Search recovers and reports it as
	// a Failure whose Err wraps ErrPanic.
	ErrPanic = errors.New("retriever panicked")
)

// Options configures Search and Fuse. The zero value is ready to use:
// RRF with k = 60 over the top 100 hits of each retriever, no timeout,
// and any failing retriever fails the search.
type Options struct {
	// Method is the fusion method. "" means RRF.
	Method Method
	// RankConstant is RRF's k, >= 0; larger values flatten the
	// difference between top and lower ranks. 0 means
	// DefaultRankConstant (60); pass a tiny positive value for k ≈ 0.
	// Only RRF uses it.
	RankConstant float64
	// Depth is how many hits Search asks of each retriever, and how many
	// (after removing duplicates) Fuse keeps of each list, >= 0.
	// 0 means DefaultDepth (100).
	Depth int
	// K is the number of fused hits returned, best first, >= 0. 0 means
	// Depth. Fewer come back when the lists hold fewer distinct papers.
	K int
	// Timeout is the time each retriever gets, from when it starts, >= 0;
	// Named.Timeout overrides it. A retriever that exceeds it fails (see
	// AllowPartial). 0 means no timeout besides ctx's. Search only.
	Timeout time.Duration
	// AllowPartial chooses what a failing retriever (an error, a missed
	// deadline, a panic) does to Search. false (strict, the default):
	// the first failure cancels the other retrievers and Search returns
	// an error wrapping that Failure. true: the failure is recorded in
	// Result.Failures and Result.Warnings and the others' hits are fused;
	// only when every retriever fails does Search return an error
	// (ErrAllFailed). Search only.
	AllowPartial bool
	// Limit is the most retrievers run at once, >= 0. 0 means all at
	// once. Search only.
	Limit int
	// NormDepth, when > 0, takes the min and max of the score methods
	// over the first NormDepth hits of each list only (hits further down
	// normalise below 0), so that the fused scores of the top hits do not
	// depend on how deep the lists were asked (Depth). 0 means the whole
	// list as kept.
	NormDepth int
}

// resolve fills in defaults and checks ranges.
func (o Options) resolve() (Options, error) {
	switch o.Method {
	case "":
		o.Method = RRF
	case RRF, MaxNorm, MinMax:
	default:
		return o, fmt.Errorf("%w: unknown method %q (want %q, %q or %q)", ErrInvalidOptions, o.Method, RRF, MaxNorm, MinMax)
	}
	if !(o.RankConstant >= 0) || math.IsInf(o.RankConstant, 1) {
		return o, fmt.Errorf("%w: rank constant %v (want a finite value >= 0)", ErrInvalidOptions, o.RankConstant)
	}
	if o.RankConstant == 0 {
		o.RankConstant = DefaultRankConstant
	}
	if o.Depth < 0 || o.K < 0 || o.Limit < 0 || o.Timeout < 0 || o.NormDepth < 0 {
		return o, fmt.Errorf("%w: negative depth, k, limit or timeout (%d, %d, %d, %v)", ErrInvalidOptions, o.Depth, o.K, o.Limit, o.Timeout)
	}
	if o.Depth == 0 {
		o.Depth = DefaultDepth
	}
	if o.K == 0 {
		o.K = o.Depth
	}
	return o, nil
}

// checkWeight reports whether w is a usable weight: finite and >= 0.
func checkWeight(name string, w float64) error {
	if !(w >= 0) || math.IsInf(w, 1) {
		return fmt.Errorf("%w: weight %v of retriever %q (want a finite value >= 0)", ErrInvalidOptions, w, name)
	}
	return nil
}

// Source is what one retriever said about a fused hit.
type Source struct {
	// Rank is the 1-based position of the paper in the retriever's list,
	// after duplicates were removed.
	Rank int `json:"rank"`
	// Score is the retriever's own score, as returned (not normalised).
	Score float64 `json:"score"`
}

// Hit is one fused result.
type Hit struct {
	// ID is the paper ID.
	ID string `json:"id"`
	// Score is the fused score, higher is better; its range depends on
	// the Method (see RRF, MaxNorm, MinMax). Comparable only within one
	// fused list.
	Score float64 `json:"score"`
	// Sources maps the name of every retriever that returned the paper to
	// its rank and score there, including retrievers of weight 0.
	Sources map[string]Source `json:"sources"`
	// Count is the number of retrievers that returned the paper, which
	// is len(Sources).
	Count int `json:"count"`
}

// Fuse merges ranked lists, keyed by retriever name, into one list of at
// most opts.K hits, best first. It uses opts.Method, RankConstant, Depth
// and K; the other fields are ignored. Fuse is pure and deterministic.
//
// Each list is read best first, as retrievers return it. Hits with an
// empty ID are dropped; when a list holds the same ID more than once,
// only its first (best) occurrence counts; then the list is cut to
// opts.Depth hits. Ranks are positions in the list after these steps.
// The same ID in several lists is one fused hit, which records every
// list's rank and score in Sources.
//
// weights maps retriever names to weights >= 0; a name missing from
// weights (or a nil map) gets DefaultWeight, and names that are not keys
// of lists are ignored. A retriever of weight 0 is an observer: its ranks
// and scores appear in Sources (and Count) of papers that the weighted
// retrievers returned, but it adds no papers, no score and no tie-break,
// so it cannot change the fused order.
//
// Ties in fused score are broken by the best rank the paper has in any
// weighted list (smaller first), then by ID (byte order). Lists are
// fused in the byte order of their names, so the floating-point sums, and
// hence the order, do not depend on map iteration order.
//
// Fuse fails only with ErrInvalidOptions (a bad option, a negative or
// non-finite weight, an empty retriever name).
func Fuse(lists map[string][]corpus.Hit, weights map[string]float64, opts Options) ([]Hit, error) {
	o, err := opts.resolve()
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(lists))
	for name := range lists {
		if name == "" {
			return nil, fmt.Errorf("%w: empty retriever name", ErrInvalidOptions)
		}
		names = append(names, name)
	}
	slices.Sort(names)
	in := make([]list, len(names))
	for i, name := range names {
		w, ok := weights[name]
		if !ok {
			w = DefaultWeight
		}
		if err := checkWeight(name, w); err != nil {
			return nil, err
		}
		in[i] = list{name: name, hits: lists[name], weight: w}
	}
	return fuse(in, o), nil
}

// list is one retriever's hits with its name and weight.
type list struct {
	name   string
	hits   []corpus.Hit
	weight float64
}

// fuse merges lists, which must be in a fixed order (the float sums
// follow it), with resolved options.
func fuse(lists []list, o Options) []Hit {
	n := len(lists)
	total, longest := 0, 0
	for _, l := range lists {
		total += min(len(l.hits), o.Depth)
		longest = max(longest, min(len(l.hits), o.Depth))
	}
	// Entry e is one distinct paper; ranks[e*n+l] and raw[e*n+l] hold its
	// rank (0: absent) and score in list l.
	idx := make(map[string]int32, total)
	ids := make([]string, 0, total)
	ranks := make([]int32, total*n)
	raw := make([]float64, total*n)
	fused := make([]float64, total)
	best := make([]int32, total) // best rank in a weighted list; 0: none
	pos := make([]int32, 0, longest)
	for l, li := range lists {
		pos = pos[:0]
		for _, h := range li.hits {
			if len(pos) == o.Depth {
				break
			}
			if h.ID == "" {
				continue
			}
			e, ok := idx[h.ID]
			if !ok {
				e = int32(len(ids))
				idx[h.ID] = e
				ids = append(ids, h.ID)
			} else if ranks[int(e)*n+l] != 0 {
				continue // duplicate within this list: keep the first
			}
			ranks[int(e)*n+l] = int32(len(pos) + 1)
			raw[int(e)*n+l] = h.Score
			pos = append(pos, e)
		}
		w := li.weight
		if w == 0 || len(pos) == 0 {
			continue
		}
		for r, e := range pos {
			if best[e] == 0 || int32(r+1) < best[e] {
				best[e] = int32(r + 1)
			}
		}
		switch o.Method {
		case RRF:
			for r, e := range pos {
				fused[e] += w / (o.RankConstant + float64(r+1))
			}
		case MaxNorm, MinMax:
			// A list without finite scores keeps lo > hi; normalise
			// never reaches them then.
			lo, hi := math.Inf(1), math.Inf(-1)
			top := pos
			if o.NormDepth > 0 && len(top) > o.NormDepth {
				top = top[:o.NormDepth]
			}
			for _, e := range top {
				s := raw[int(e)*n+l]
				if math.IsNaN(s) || math.IsInf(s, 0) {
					continue
				}
				lo, hi = min(lo, s), max(hi, s)
			}
			if o.Method == MaxNorm {
				lo = min(lo, 0)
			}
			for _, e := range pos {
				fused[e] += w * normalise(raw[int(e)*n+l], lo, hi)
			}
		}
	}

	cand := make([]int32, 0, len(ids))
	for e := range ids {
		if best[e] != 0 {
			cand = append(cand, int32(e))
		}
	}
	// better reports whether entry a goes before entry b.
	better := func(a, b int32) bool {
		if fused[a] != fused[b] {
			return fused[a] > fused[b]
		}
		if best[a] != best[b] {
			return best[a] < best[b]
		}
		return ids[a] < ids[b]
	}
	cand = topK(cand, o.K, better)
	out := make([]Hit, len(cand))
	for i, e := range cand {
		src := make(map[string]Source, n)
		for l := range lists {
			if r := ranks[int(e)*n+l]; r != 0 {
				src[lists[l].name] = Source{Rank: int(r), Score: raw[int(e)*n+l]}
			}
		}
		out[i] = Hit{ID: ids[e], Score: fused[e], Sources: src, Count: len(src)}
	}
	return out
}

// topK returns the k best of cand in order, best first, reordering cand.
// When k is well below len(cand) it keeps a heap of the k best seen
// (O(n log k)) instead of sorting everything.
func topK(cand []int32, k int, better func(a, b int32) bool) []int32 {
	order := func(a, b int32) int {
		switch {
		case better(a, b):
			return -1
		case better(b, a):
			return 1
		}
		return 0
	}
	if k >= len(cand)/4 {
		slices.SortFunc(cand, order)
		return cand[:min(k, len(cand))]
	}
	// h = cand[:k] is a heap whose root is the worst of the k kept.
	h := cand[:k]
	down := func(i int) {
		for {
			w, l, r := i, 2*i+1, 2*i+2
			if l < k && better(h[w], h[l]) {
				w = l
			}
			if r < k && better(h[w], h[r]) {
				w = r
			}
			if w == i {
				return
			}
			h[i], h[w] = h[w], h[i]
			i = w
		}
	}
	for i := k/2 - 1; i >= 0; i-- {
		down(i)
	}
	for _, e := range cand[k:] {
		if better(e, h[0]) {
			h[0] = e
			down(0)
		}
	}
	slices.SortFunc(h, order)
	return h
}

// normalise maps s into [0, 1] given the finite bounds [lo, hi] of its
// list (see MinMax for the rules).
func normalise(s, lo, hi float64) float64 {
	switch {
	case math.IsNaN(s) || math.IsInf(s, -1):
		return 0
	case math.IsInf(s, 1):
		return 1
	case hi == lo:
		return 1
	default:
		return (s - lo) / (hi - lo)
	}
}
