package contrast

import (
	"context"
	"slices"
	"sync"
)

// nearDuplicate is how close to a paper's own score (its title against its
// own text) a neighbour may come before it is taken for another version
// of the same paper and not used.
const nearDuplicate = 0.9

// neighbours returns, for each usable paper (by position in t.usable), the
// position of the usable paper whose text its title (or, without a title,
// its first sentence) matches best by tf-idf cosine, or -1: the paper's
// hardest lexical negative. Terms in more than 2% of the papers are left
// out of the match (they cost the most and tell the least), and so is a
// neighbour scoring within nearDuplicate of the paper itself (a second
// record of the same paper).
func (t *trainer) neighbours(ctx context.Context) ([]int32, error) {
	n := len(t.usable)
	vz := t.m.f.vectorizer()
	// document vectors of every usable paper, and their postings
	size := t.m.f.size()
	cap := int32(max(50, n/50))
	df := make([]int32, size)
	docIDs := make([][]int32, n)
	docVals := make([][]float32, n)
	var segs [][]int32
	for u, di := range t.usable {
		d := &t.docs[di]
		segs = append(segs[:0], d.title)
		segs = append(segs, d.sents...)
		if len(d.keywords) > 0 {
			segs = append(segs, d.keywords)
		}
		docIDs[u], docVals[u] = vz.vector(nil, nil, segs...)
		for _, f := range docIDs[u] {
			df[f]++
		}
	}
	start := make([]int32, size+1)
	for f, c := range df {
		if c > cap {
			c = 0
		}
		start[f+1] = start[f] + c
	}
	postDoc := make([]int32, start[size])
	postVal := make([]float32, start[size])
	fill := slices.Clone(start[:size])
	for u := range n {
		for k, f := range docIDs[u] {
			if df[f] > cap {
				continue
			}
			postDoc[fill[f]] = int32(u)
			postVal[fill[f]] = docVals[u][k]
			fill[f]++
		}
	}
	docIDs, docVals = nil, nil
	out := make([]int32, n)
	var wg sync.WaitGroup
	errs := make([]error, t.workers)
	for w := range t.workers {
		wg.Go(func() {
			vz := t.m.f.vectorizer()
			score := make([]float32, n)
			var touched []int32
			var ids []int32
			var vals []float32
			for u := w; u < n; u += t.workers {
				if u%4096 < t.workers {
					if err := ctx.Err(); err != nil {
						errs[w] = err
						return
					}
				}
				d := &t.docs[t.usable[u]]
				q := d.title
				if len(q) == 0 && len(d.sents) > 0 {
					q = d.sents[0]
				}
				ids, vals = vz.vector(ids[:0], vals[:0], q)
				touched = touched[:0]
				for k, f := range ids {
					for e := start[f]; e < start[f+1]; e++ {
						v := postDoc[e]
						if score[v] == 0 {
							touched = append(touched, v)
						}
						score[v] += vals[k] * postVal[e]
					}
				}
				self := score[u]
				best, bestScore := int32(-1), float32(0)
				for _, v := range touched {
					s := score[v]
					if v != int32(u) && s > bestScore && !(self > 0 && s >= nearDuplicate*self) {
						best, bestScore = v, s
					}
					score[v] = 0
				}
				out[u] = best
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// pairUp reorders order (positions in t.usable) so that each paper is
// followed by its neighbour when that one is not placed yet: most papers
// then share a batch with their hardest lexical negative.
func pairUp(order []int32, nb []int32, placed []bool, dst []int32) []int32 {
	clear(placed)
	dst = dst[:0]
	for _, u := range order {
		if placed[u] {
			continue
		}
		placed[u] = true
		dst = append(dst, u)
		if v := nb[u]; v >= 0 && !placed[v] {
			placed[v] = true
			dst = append(dst, v)
		}
	}
	return dst
}
