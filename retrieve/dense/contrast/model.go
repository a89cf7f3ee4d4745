package contrast

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
)

// Model is a trained embedder: a vocabulary (and bigram buckets) with idf
// weights, and the projection of every feature to Dim dimensions. A text's
// embedding is the L2-normalised sum of the rows of its features weighted
// by their tf-idf, a fixed function of the text, so papers added after
// training are embedded without retraining. It is immutable and safe for
// concurrent use, and satisfies dense.Embedder.
type Model struct {
	opts Options // the options it was trained with, defaults filled in
	docs int     // training papers
	f    *features
	w    []float32 // f.size()×dim, row-major
	id   string
	// pool keeps textEmbedders between calls, for their stem caches
	pool sync.Pool
}

// Model returns the model's identity, "contrast-<dim>@<hash>": hash is the
// first 12 hex digits of the SHA-256 of the model file body, so it changes
// whenever the vectors Embed returns could change.
func (m *Model) Model() string { return m.id }

// Dim returns the length of the vectors Embed returns.
func (m *Model) Dim() int { return m.opts.Dim }

// Spec returns the model's feature set and dimension (see Options.Spec),
// e.g. "uni+bi131072/768".
func (m *Model) Spec() string { return m.opts.Spec() }

// Options returns the options the model was trained with, defaults
// filled in.
func (m *Model) Options() Options { return m.opts }

// Terms returns the vocabulary size (unigram features).
func (m *Model) Terms() int { return len(m.f.vocab) }

// Docs returns the number of papers the model was trained on.
func (m *Model) Docs() int { return m.docs }

// Embed returns one L2-normalised vector of length Dim per text, in order.
// A text is analyzed much as the BM25 index does (see tokenizer), line by line
// (word bigrams do not span lines), weighted (1 + ln tf)·idf over the
// model's features and projected. A text without a known term gets the
// zero vector. Cosine similarity of two vectors is their dot product.
func (m *Model) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	d := m.opts.Dim
	out := make([][]float32, len(texts))
	flat := make([]float32, len(texts)*d)
	n := min(m.opts.Workers, max(1, len(texts)/32))
	var wg sync.WaitGroup
	errs := make([]error, n)
	for w := range n {
		wg.Go(func() {
			e := m.embedder()
			defer m.pool.Put(e)
			for i := w; i < len(texts); i += n {
				if i%256 < n {
					if err := ctx.Err(); err != nil {
						errs[w] = err
						return
					}
				}
				out[i] = flat[i*d : (i+1)*d : (i+1)*d]
				e.embed(texts[i], out[i])
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("contrast embed: %w", err)
	}
	return out, nil
}

// textEmbedder embeds one text at a time with its own scratch space.
type textEmbedder struct {
	m    *Model
	v    *vectorizer
	z    *tokenizer
	toks []string
	segs [][]int32
	ids  []int32
	vals []float32
}

// embedder returns a textEmbedder from the pool, or a new one; give it
// back with m.pool.Put.
func (m *Model) embedder() *textEmbedder {
	if e, ok := m.pool.Get().(*textEmbedder); ok {
		return e
	}
	return &textEmbedder{m: m, v: m.f.vectorizer(), z: newTokenizer()}
}

func (e *textEmbedder) embed(text string, dst []float32) {
	e.segs = e.segs[:0]
	for line := range strings.SplitSeq(text, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		e.toks = e.z.terms(line, e.toks[:0])
		e.segs = append(e.segs, e.m.f.ids(e.toks, nil))
	}
	e.ids, e.vals = e.v.vector(e.ids[:0], e.vals[:0], e.segs...)
	project(e.m.w, e.m.opts.Dim, e.ids, e.vals, dst)
	normalizeHeads(dst, e.m.opts.Heads)
}

// normalizeHeads scales each of the heads equal blocks of v to unit
// length, then v to unit length: the cosine of two such vectors is the
// mean of their heads' cosines (a zero block stays zero).
func normalizeHeads(v []float32, heads int) {
	if heads <= 1 {
		normalize(v)
		return
	}
	dh := len(v) / heads
	for hd := range heads {
		normalize(v[hd*dh : (hd+1)*dh])
	}
	normalize(v)
}

// project sets dst to Σ vals[i]·row(ids[i]) of w.
func project(w []float32, d int, ids []int32, vals []float32, dst []float32) {
	clear(dst)
	for i, f := range ids {
		axpy(vals[i], w[int(f)*d:int(f+1)*d], dst)
	}
}

// normalize scales v to unit length in place and returns its former
// length; a zero (or non-finite) vector is left alone and gives 0.
func normalize(v []float32) float32 {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	if ss == 0 || math.IsNaN(ss) || math.IsInf(ss, 0) {
		return 0
	}
	n := math.Sqrt(ss)
	inv := float32(1 / n)
	for i := range v {
		v[i] *= inv
	}
	return float32(n)
}
