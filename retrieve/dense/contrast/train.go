package contrast

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/retrieve"
	"github.com/citefind/citefind/retrieve/dense/lsa"
)

// Progress reports training: stage "analyze" (papers read so far), then
// "train" once per step, with the epoch (1-based), the step within it, the
// steps of an epoch and the mean loss of the epoch so far.
type Progress struct {
	Stage       string
	Papers      int
	Epoch       int
	Epochs      int
	Step, Steps int
	Loss        float64
}

// rawDoc is an analyzed paper as ids of the raw term dictionary.
type rawDoc struct {
	title, keywords []int32
	sents           [][]int32
}

// collection is the analyzed corpus before the vocabulary is chosen.
type collection struct {
	terms []string // raw id → term
	df    []int32  // raw id → papers holding it
	docs  []rawDoc
}

const analyzeBatch = 512

// collect analyzes every paper (title, keywords, abstract sentences) on
// workers goroutines, a batch at a time.
func collect(ctx context.Context, papers iter.Seq[corpus.Paper], workers int, progress func(Progress)) (*collection, error) {
	c := &collection{}
	dict := map[string]int32{}
	type analyzed struct {
		title, keywords []string
		sents           [][]string
	}
	batch := make([]corpus.Paper, 0, analyzeBatch)
	out := make([]analyzed, analyzeBatch)
	seen := map[int32]bool{}
	toks := make([]*tokenizer, workers)
	for w := range toks {
		toks[w] = newTokenizer()
	}
	conv := func(terms []string) []int32 {
		ids := make([]int32, len(terms))
		for i, t := range terms {
			id, ok := dict[t]
			if !ok {
				id = int32(len(c.terms))
				dict[t] = id
				c.terms = append(c.terms, t)
				c.df = append(c.df, 0)
			}
			ids[i] = id
			seen[id] = true
		}
		return ids
	}
	flush := func() {
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				z := toks[w]
				for i := w; i < len(batch); i += workers {
					p := &batch[i]
					a := analyzed{title: z.terms(p.Title, nil), keywords: z.terms(strings.Join(p.Keywords, ". "), nil)}
					for _, s := range retrieve.Sentences(p.Abstract) {
						if t := z.terms(s, nil); len(t) > 0 {
							a.sents = append(a.sents, t)
						}
					}
					out[i] = a
				}
			})
		}
		wg.Wait()
		for i := range batch {
			clear(seen)
			a := out[i]
			d := rawDoc{title: conv(a.title), keywords: conv(a.keywords)}
			for _, s := range a.sents {
				d.sents = append(d.sents, conv(s))
			}
			for id := range seen {
				c.df[id]++
			}
			c.docs = append(c.docs, d)
			out[i] = analyzed{}
		}
		batch = batch[:0]
		progress(Progress{Stage: "analyze", Papers: len(c.docs)})
	}
	for p := range papers {
		if len(batch) == analyzeBatch {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			flush()
		}
		batch = append(batch, p)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(batch) > 0 {
		flush()
	}
	return c, nil
}

// vocabulary chooses the unigram vocabulary and returns the features and
// the papers as feature-vocabulary ids.
func (c *collection) vocabulary(o Options) (*features, []paperDoc) {
	n := len(c.docs)
	maxDF := int32(math.Floor(o.MaxDFRatio * float64(n)))
	if o.MaxDFRatio >= 1 {
		maxDF = math.MaxInt32
	}
	var keep []int32
	for id, df := range c.df {
		if df >= int32(o.MinDF) && df <= maxDF {
			keep = append(keep, int32(id))
		}
	}
	slices.SortFunc(keep, func(a, b int32) int {
		if c := cmp.Compare(c.df[b], c.df[a]); c != 0 {
			return c
		}
		return strings.Compare(c.terms[a], c.terms[b])
	})
	if len(keep) > o.MaxVocab {
		keep = keep[:o.MaxVocab]
	}
	slices.SortFunc(keep, func(a, b int32) int { return strings.Compare(c.terms[a], c.terms[b]) })
	remap := make([]int32, len(c.terms))
	for i := range remap {
		remap[i] = -1
	}
	vocab := make([]string, len(keep))
	for i, id := range keep {
		remap[id] = int32(i)
		vocab[i] = c.terms[id]
	}
	conv := func(ids []int32) []int32 {
		for i, id := range ids {
			ids[i] = remap[id]
		}
		return ids
	}
	docs := make([]paperDoc, n)
	for i := range c.docs {
		d := &c.docs[i]
		docs[i] = paperDoc{title: conv(d.title), keywords: conv(d.keywords)}
		for _, s := range d.sents {
			docs[i].sents = append(docs[i].sents, conv(s))
		}
		c.docs[i] = rawDoc{}
	}
	// document frequencies of every feature, unigrams and bigram buckets
	buckets := max(0, o.Bigrams)
	size := len(vocab) + buckets
	df := make([]int32, size)
	mark := make([]int32, size) // paper index + 1 that last counted the feature
	for i := range docs {
		d := &docs[i]
		count := func(seg []int32) {
			for j, id := range seg {
				if id < 0 {
					continue
				}
				if mark[id] != int32(i+1) {
					mark[id] = int32(i + 1)
					df[id]++
				}
				if buckets > 0 && j > 0 && seg[j-1] >= 0 {
					b := bigram(seg[j-1], id, len(vocab), buckets)
					if mark[b] != int32(i+1) {
						mark[b] = int32(i + 1)
						df[b]++
					}
				}
			}
		}
		count(d.title)
		count(d.keywords)
		for _, s := range d.sents {
			count(s)
		}
	}
	idf := make([]float32, size)
	for f, x := range df {
		if x > 0 {
			idf[f] = float32(math.Log(float64(n) / float64(x)))
		}
	}
	return newFeatures(vocab, buckets, idf), docs
}

// Train learns an embedder from papers (title, abstract, keywords), with
// no judgement and no other data: each paper gives training pairs of a
// short text and the rest of the paper — its title and its abstract (with
// keywords), its keywords and its title and abstract, or one sentence of
// its abstract and its title with the other sentences — and the model
// learns to embed a pair's two sides close together and apart from the
// other pairs of the batch (InfoNCE with in-batch negatives, Oord et al.
// 2018; temperature Options.Temperature, symmetric unless OneWay). The
// model is a linear projection of tf-idf features (see Model), trained by
// Adam from a random start, one randomly chosen pair per paper and epoch.
//
// progress, when not nil, is called from Train's goroutine. A collection
// giving fewer than MinPairs pairs fails with ErrTooSmall.
func Train(ctx context.Context, papers iter.Seq[corpus.Paper], opts Options, progress func(Progress)) (*Model, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if progress == nil {
		progress = func(Progress) {}
	}
	var start *lsa.Model
	if o.Init == InitLSA {
		texts := func(yield func(string) bool) {
			for p := range papers {
				if !yield(lsa.Text(p)) {
					return
				}
			}
		}
		progress(Progress{Stage: "lsa"})
		if start, err = lsa.Train(ctx, texts, lsa.Options{Dim: o.Dim, MinDF: o.MinDF, MaxDFRatio: o.MaxDFRatio, MaxVocab: o.MaxVocab, Fold: lsa.FoldPlain}, nil); err != nil {
			return nil, fmt.Errorf("contrast train: LSA initialisation: %w", err)
		}
	}
	col, err := collect(ctx, papers, o.Workers, progress)
	if err != nil {
		return nil, fmt.Errorf("contrast train: %w", err)
	}
	nDocs := len(col.docs)
	f, docs := col.vocabulary(o)
	col = nil
	m := &Model{opts: o, docs: nDocs, f: f}
	t, err := newTrainer(m, docs)
	if err != nil {
		return nil, err
	}
	if start != nil {
		t.initLSA(start)
	}
	if err := t.run(ctx, progress); err != nil {
		return nil, fmt.Errorf("contrast train: %w", err)
	}
	m.finish()
	// Adam's moments, twice the projection, are garbage on return; the
	// collector's goal still counts them (twice the training heap), so
	// what the caller does next (embedding every paper) would grow the
	// heap by as much before they are freed. Collected here, their memory
	// is reused.
	runtime.GC()
	return m, nil
}

// pairKinds lists the pairs a paper can give, by kind.
const (
	kindTitle    = iota // title ↔ abstract + keywords
	kindKeywords        // keywords ↔ title + abstract
	kindSentence        // one abstract sentence ↔ title + the other sentences + keywords
	kindSpan            // two or three sentences in a row ↔ title + the other sentences + keywords
	numKinds
)

// kinds returns the pair kinds d can give (kindSpan only when spans).
func (d *paperDoc) kinds(dst []int, spans bool) []int {
	dst = dst[:0]
	abs := d.abstractTerms() > 0
	if len(d.title) > 0 && abs {
		dst = append(dst, kindTitle)
	}
	if len(d.keywords) > 0 && (abs || len(d.title) > 0) {
		dst = append(dst, kindKeywords)
	}
	if len(d.sents) >= 2 {
		dst = append(dst, kindSentence)
	}
	if spans && len(d.sents) >= 3 {
		dst = append(dst, kindSpan)
	}
	return dst
}

// pairOf returns the two sides of a pair of kind k of d as segment lists
// (appended to q and p); s is the sentence of kindSentence, or the first
// of kindSpan's, whose length is n.
func (d *paperDoc) pairOf(k, s, n int, q, p [][]int32) ([][]int32, [][]int32) {
	switch k {
	case kindTitle:
		q = append(q, d.title)
		p = append(p, d.sents...)
		if len(d.keywords) > 0 {
			p = append(p, d.keywords)
		}
	case kindKeywords:
		q = append(q, d.keywords)
		if len(d.title) > 0 {
			p = append(p, d.title)
		}
		p = append(p, d.sents...)
	case kindSentence, kindSpan:
		if k == kindSentence {
			n = 1
		}
		q = append(q, d.sents[s:s+n]...)
		if len(d.title) > 0 {
			p = append(p, d.title)
		}
		for i, x := range d.sents {
			if i < s || i >= s+n {
				p = append(p, x)
			}
		}
		if len(d.keywords) > 0 {
			p = append(p, d.keywords)
		}
	}
	return q, p
}

// dropShared returns copies of the segments p without the terms that also
// occur in q, each such term dropped with probability prob (decided once
// per term, by a hash of the term and seed, so the result depends on
// nothing else).
func dropShared(q, p [][]int32, prob float64, seed uint64) [][]int32 {
	shared := map[int32]bool{}
	for _, s := range q {
		for _, id := range s {
			if id >= 0 {
				shared[id] = false
			}
		}
	}
	limit := uint64(prob * (1 << 53))
	for id := range shared {
		x := seed ^ uint64(uint32(id))*0xbf58476d1ce4e5b9
		x ^= x >> 31
		x *= 0x94d049bb133111eb
		x ^= x >> 29
		shared[id] = x>>11 < limit
	}
	out := make([][]int32, len(p))
	for k, s := range p {
		c := make([]int32, 0, len(s))
		for _, id := range s {
			if id >= 0 && shared[id] {
				id = -1 // a gap: no bigram spans it
			}
			c = append(c, id)
		}
		out[k] = c
	}
	return out
}

// trainer holds the state of one training run.
type trainer struct {
	m       *Model
	o       Options
	docs    []paperDoc
	usable  []int32 // papers that give at least one pair
	rng     *rand.Rand
	d, b    int
	workers int
	steps   int // steps per epoch
	epochs  int

	adamM, adamV []float32
	t            int // Adam step

	avg       []float32 // Average: the running mean of the projections
	snapshots int

	// per-step buffers; texts 0..b-1 are queries, b..2b-1 their papers
	feats [][]int32
	vals  [][]float32
	h     []float32 // 2b×d raw sums, then normalised in place
	norms []float32 // 2b
	s, g  []float32 // b×b scores, then gradients; g's transpose
	gt    []float32
	tq    []float32 // d×b transposes of the normalised queries and papers
	tp    []float32
	dh    []float32 // 2b×d gradients w.r.t. the normalised, then raw, sums

	// backward: the features of the batch, each with its (text, weight)
	// entries
	slot    []int32 // feature → index in touched, -1
	touched []int32
	start   []int32
	entText []int32
	entVal  []float32
	fill    []int32
	// lossGrad's scratch
	losses, partMax, colMax []float64
	colScale                []float32
	grads                   [][]float32 // update: one row per worker
}

func newTrainer(m *Model, docs []paperDoc) (*trainer, error) {
	o := m.opts
	t := &trainer{m: m, o: o, docs: docs, d: o.Dim, workers: o.Workers,
		rng: rand.New(rand.NewPCG(o.Seed, o.Seed^0x9e3779b97f4a7c15))}
	var kinds []int
	for i := range docs {
		if kinds = docs[i].kinds(kinds, o.Spans); len(kinds) > 0 {
			t.usable = append(t.usable, int32(i))
		}
	}
	if len(t.usable) < MinPairs {
		return nil, fmt.Errorf("contrast train: %w: %d of %d papers give a training pair (a title or keywords with an abstract, or an abstract of two sentences), need %d",
			ErrTooSmall, len(t.usable), len(docs), MinPairs)
	}
	t.b = min(o.Batch, len(t.usable))
	t.steps = len(t.usable) / t.b
	t.epochs = max(o.Epochs, (o.MinSteps+t.steps-1)/t.steps) // MinSteps -1: Epochs
	// the initial projection
	size := m.f.size()
	m.w = make([]float32, size*t.d)
	init := rand.New(rand.NewPCG(o.Seed, 0x5eed))
	for i := range m.w {
		m.w[i] = float32(init.NormFloat64() * o.InitScale)
	}
	t.adamM = make([]float32, len(m.w))
	t.adamV = make([]float32, len(m.w))
	b, d := t.b, t.d
	t.feats = make([][]int32, 2*b)
	t.vals = make([][]float32, 2*b)
	t.h = make([]float32, 2*b*d)
	t.norms = make([]float32, 2*b*o.Heads)
	t.s = make([]float32, b*b)
	t.g = make([]float32, b*b)
	t.gt = make([]float32, b*b)
	t.tq = make([]float32, d/o.Heads*b)
	t.tp = make([]float32, d/o.Heads*b)
	t.dh = make([]float32, 2*b*d)
	t.slot = make([]int32, size)
	for i := range t.slot {
		t.slot[i] = -1
	}
	return t, nil
}

// initLSA replaces the random rows of the vocabulary's terms by their LSA
// rows (zero-padded when LSA has fewer dimensions), scaled to the mean
// length of a random row.
func (t *trainer) initLSA(start *lsa.Model) {
	d := t.d
	var sum float64
	n := 0
	for j, term := range t.m.f.vocab {
		if row := start.Row(term); row != nil {
			sum += float64(copyLen(row, t.m.w[j*d:(j+1)*d]))
			n++
		}
	}
	if n == 0 {
		return
	}
	scale := float32(t.o.InitScale * math.Sqrt(float64(d)) / (sum / float64(n)))
	for j, term := range t.m.f.vocab {
		if start.Row(term) != nil {
			for k := range d {
				t.m.w[j*d+k] *= scale
			}
		}
	}
}

// copyLen copies src into dst (zero-padding) and returns the length
// of src.
func copyLen(src, dst []float32) float32 {
	clear(dst)
	n := copy(dst, src)
	var ss float64
	for _, x := range dst[:n] {
		ss += float64(x) * float64(x)
	}
	return float32(math.Sqrt(ss))
}

// run trains for the planned epochs.
func (t *trainer) run(ctx context.Context, progress func(Progress)) error {
	// order holds positions in t.usable
	order := make([]int32, len(t.usable))
	for i := range order {
		order[i] = int32(i)
	}
	var nb, paired []int32
	var placed []bool
	if t.o.Neighbours {
		var err error
		if nb, err = t.neighbours(ctx); err != nil {
			return err
		}
		placed = make([]bool, len(order))
		paired = make([]int32, 0, len(order))
	}
	kinds := make([]int, 0, numKinds)
	type pick struct{ doc, kind, sent, n int32 }
	picks := make([]pick, len(order))
	vecs := make([]*vectorizer, t.workers)
	for w := range vecs {
		vecs[w] = t.m.f.vectorizer()
	}
	// each worker's segment lists, reused so that a step allocates
	// nothing (garbage would grow the heap by ~1 MB a step until the
	// collector's goal, twice the projection and Adam's moments)
	qs, ps := make([][][]int32, t.workers), make([][][]int32, t.workers)
	for ep := 1; ep <= t.epochs; ep++ {
		t.rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		epoch := order
		if nb != nil {
			paired = pairUp(order, nb, placed, paired)
			epoch = paired
		}
		for i, u := range epoch {
			di := t.usable[u]
			d := &t.docs[di]
			kinds = d.kinds(kinds, t.o.Spans)
			k := kinds[t.rng.IntN(len(kinds))]
			s, n := 0, 1
			switch k {
			case kindSentence:
				s = t.rng.IntN(len(d.sents))
			case kindSpan:
				n = 2 + t.rng.IntN(min(2, len(d.sents)-2))
				s = t.rng.IntN(len(d.sents) - n + 1)
			}
			picks[i] = pick{di, int32(k), int32(s), int32(n)}
		}
		var sum float64
		for st := 0; st < t.steps; st++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			batch := picks[st*t.b : (st+1)*t.b]
			// vectorize the 2b texts
			step := uint64(ep)<<32 | uint64(st)
			t.parallel(2*t.b, func(w, i int) {
				pk := batch[i%t.b]
				q, p := t.docs[pk.doc].pairOf(int(pk.kind), int(pk.sent), int(pk.n), qs[w][:0], ps[w][:0])
				qs[w], ps[w] = q, p
				segs := q
				if i >= t.b {
					segs = p
					if t.o.Overlap > 0 {
						segs = dropShared(q, p, t.o.Overlap, t.o.Seed^step*0x9e3779b97f4a7c15^uint64(i))
					}
				}
				t.feats[i], t.vals[i] = vecs[w].vector(t.feats[i][:0], t.vals[i][:0], segs...)
			})
			sum += float64(t.step())
			progress(Progress{Stage: "train", Epoch: ep, Epochs: t.epochs, Step: st + 1, Steps: t.steps, Loss: sum / float64(st+1)})
		}
		if t.o.Average && 2*ep > t.epochs {
			t.accumulate()
		}
	}
	if t.o.Average {
		t.m.w, t.avg = t.avg, nil
	}
	return nil
}

// accumulate folds the projection into the running mean of the
// projections at the ends of the epochs of the second half (stochastic
// weight averaging, Izmailov et al. 2018).
func (t *trainer) accumulate() {
	t.snapshots++
	if t.avg == nil {
		t.avg = slices.Clone(t.m.w)
		return
	}
	f := float32(1 / float64(t.snapshots))
	w := t.m.w
	t.parallel(t.workers, func(wk, _ int) {
		n := len(w)
		lo, hi := n*wk/t.workers, n*(wk+1)/t.workers
		for i := lo; i < hi; i++ {
			t.avg[i] += (w[i] - t.avg[i]) * f
		}
	})
}

// parallel calls fn(worker, i) for i < n, worker w taking i ≡ w mod workers.
func (t *trainer) parallel(n int, fn func(w, i int)) {
	if t.workers == 1 {
		for i := range n {
			fn(0, i)
		}
		return
	}
	var wg sync.WaitGroup
	for w := range t.workers {
		wg.Go(func() {
			for i := w; i < n; i += t.workers {
				fn(w, i)
			}
		})
	}
	wg.Wait()
}

// step runs one batch (texts already vectorized) forward and backward,
// updates the projection and returns the loss.
func (t *trainer) step() float32 {
	loss := t.forwardBackward()
	t.update()
	return loss
}

// forwardBackward returns the loss of the batch and leaves in t.dh its
// gradient with respect to every text's raw sum.
func (t *trainer) forwardBackward() float32 {
	b, d := t.b, t.d
	heads := t.o.Heads
	dh := d / heads
	w := t.m.w
	// forward: sums, normalised head by head, and the heads' norms
	t.parallel(2*b, func(_, i int) {
		row := t.h[i*d : (i+1)*d]
		project(w, d, t.feats[i], t.vals[i], row)
		for hd := range heads {
			t.norms[i*heads+hd] = normalize(row[hd*dh : (hd+1)*dh])
		}
	})
	q, p := t.h[:b*d], t.h[b*d:]
	dq, dp := t.dh[:b*d], t.dh[b*d:]
	var loss float32
	for hd := range heads {
		off := hd * dh
		gemmNT(b, b, dh, q[off:], d, p[off:], d, t.s, b, t.workers)
		loss += t.lossGrad() / float32(heads)
		// gradients w.r.t. the normalised sums: dq = G·p / τ, dp = Gᵀ·q / τ
		transposeBlock(q[off:], b, dh, d, t.tq)
		transposeBlock(p[off:], b, dh, d, t.tp)
		transpose(t.g, b, b, t.gt)
		gemmNT(b, dh, b, t.g, b, t.tp, b, dq[off:], d, t.workers)
		gemmNT(b, dh, b, t.gt, b, t.tq, b, dp[off:], d, t.workers)
	}
	// through the normalisation: dh = (dn − n·(n·dn)) / |h| per head; the
	// loss is the heads' mean
	inv := float32(1 / (t.o.Temperature * float64(heads)))
	t.parallel(2*b, func(_, i int) {
		for hd := range heads {
			lo, hi := i*d+hd*dh, i*d+(hd+1)*dh
			n, g := t.h[lo:hi], t.dh[lo:hi]
			nm := t.norms[i*heads+hd]
			if nm == 0 {
				clear(g)
				continue
			}
			c := dot(n, g)
			s := inv / nm
			for k := range g {
				g[k] = (g[k] - n[k]*c) * s
			}
		}
	})
	return loss
}

// lossGrad turns the cosines in t.s into the InfoNCE loss, returned, and
// its gradient with respect to the logits S = cos/τ, written to t.g (step
// applies the 1/τ of the chain rule). Rows: each query's softmax over the
// batch's papers; columns (unless OneWay): each paper's over the queries.
func (t *trainer) lossGrad() float32 {
	b := t.b
	inv := 1 / t.o.Temperature
	halves := 2.0
	if t.o.OneWay {
		halves = 1
	}
	scale := 1 / (float64(b) * halves)
	t.losses = grow(t.losses, 2*b)
	losses := t.losses
	clear(losses)
	t.parallel(b, func(_, i int) {
		row := t.s[i*b : (i+1)*b]
		g := t.g[i*b : (i+1)*b]
		mx := math.Inf(-1)
		for _, x := range row {
			mx = max(mx, float64(x)*inv)
		}
		var z float64
		for j, x := range row {
			e := math.Exp(float64(x)*inv - mx)
			g[j] = float32(e)
			z += e
		}
		f := float32(scale / z)
		for j := range g {
			g[j] *= f
		}
		g[i] -= float32(scale)
		losses[i] = -(float64(row[i])*inv - mx - math.Log(z))
	})
	if !t.o.OneWay {
		// columns: each paper's softmax over the queries, computed row
		// by row (cache-friendly) in fixed chunks of rows whose partial
		// results are merged in chunk order, so that the sums do not
		// depend on the number of workers.
		const chunks = 8
		rows := func(c int) (int, int) { return c * b / chunks, (c + 1) * b / chunks }
		t.partMax = grow(t.partMax, chunks*b)
		partMax := t.partMax
		t.parallel(chunks, func(_, c int) {
			pm := partMax[c*b : (c+1)*b]
			for j := range pm {
				pm[j] = math.Inf(-1)
			}
			lo, hi := rows(c)
			for i := lo; i < hi; i++ {
				for j, x := range t.s[i*b : (i+1)*b] {
					pm[j] = max(pm[j], float64(x)*inv)
				}
			}
		})
		t.colMax = grow(t.colMax, b)
		colMax := t.colMax
		for j := range colMax {
			colMax[j] = math.Inf(-1)
			for c := range chunks {
				colMax[j] = max(colMax[j], partMax[c*b+j])
			}
		}
		partSum := partMax // reused: chunk c's sums of exp over its rows
		t.parallel(chunks, func(_, c int) {
			ps := partSum[c*b : (c+1)*b]
			clear(ps)
			lo, hi := rows(c)
			for i := lo; i < hi; i++ {
				e := t.gt[i*b : (i+1)*b]
				for j, x := range t.s[i*b : (i+1)*b] {
					v := math.Exp(float64(x)*inv - colMax[j])
					e[j] = float32(v)
					ps[j] += v
				}
			}
		})
		t.colScale = grow(t.colScale, b)
		colScale := t.colScale
		for j := range b {
			var z float64
			for c := range chunks {
				z += partSum[c*b+j]
			}
			colScale[j] = float32(scale / z)
			losses[b+j] = -(float64(t.s[j*b+j])*inv - colMax[j] - math.Log(z))
		}
		t.parallel(b, func(_, i int) {
			g, e := t.g[i*b:(i+1)*b], t.gt[i*b:(i+1)*b]
			for j := range g {
				g[j] += e[j] * colScale[j]
			}
			g[i] -= float32(scale)
		})
	}
	var loss float64
	for _, l := range losses {
		loss += l
	}
	return float32(loss * scale)
}

// transpose writes the transpose of the r×c matrix a into dst (c×r).
func transpose(a []float32, r, c int, dst []float32) { transposeBlock(a, r, c, c, dst) }

// transposeBlock writes the transpose of the r×c matrix a of row stride
// lda into dst (c×r).
func transposeBlock(a []float32, r, c, lda int, dst []float32) {
	const blk = 32
	for i0 := 0; i0 < r; i0 += blk {
		for j0 := 0; j0 < c; j0 += blk {
			for i := i0; i < min(i0+blk, r); i++ {
				row := a[i*lda : i*lda+c]
				for j := j0; j < min(j0+blk, c); j++ {
					dst[j*r+i] = row[j]
				}
			}
		}
	}
}

// lr returns the learning rate of step t.t (1-based): Options.LR, or with
// Decay a linear warm-up over the first 2% of the steps and a linear decay
// to zero over the rest.
func (t *trainer) lr() float64 {
	if !t.o.Decay {
		return t.o.LR
	}
	total := float64(t.steps * t.epochs)
	warm := max(1, math.Floor(0.02*total))
	x := float64(t.t)
	if x <= warm {
		return t.o.LR * x / warm
	}
	return t.o.LR * max(0, (total-x+1)/(total-warm+1))
}

// Adam's constants.
const (
	beta1   = 0.9
	beta2   = 0.999
	epsilon = 1e-8
)

// update applies the gradient of the batch to the rows of the features it
// holds, with lazy Adam (rows not in the batch are left alone).
func (t *trainer) update() {
	d := t.d
	// group the (text, weight) entries by feature, in text order
	t.touched = t.touched[:0]
	counts := t.start[:0]
	for i := range t.feats {
		for _, f := range t.feats[i] {
			s := t.slot[f]
			if s < 0 {
				s = int32(len(t.touched))
				t.slot[f] = s
				t.touched = append(t.touched, f)
				counts = append(counts, 0)
			}
			counts[s]++
		}
	}
	// prefix sums: start[s] is where feature s's entries begin
	total := int32(0)
	for s, c := range counts {
		counts[s] = total
		total += c
	}
	counts = append(counts, total)
	t.start = counts
	if cap(t.entText) < int(total) {
		t.entText = make([]int32, total)
		t.entVal = make([]float32, total)
	}
	t.entText, t.entVal = t.entText[:total], t.entVal[:total]
	t.fill = append(t.fill[:0], t.start[:len(t.touched)]...)
	fill := t.fill
	for i := range t.feats {
		for k, f := range t.feats[i] {
			s := t.slot[f]
			t.entText[fill[s]] = int32(i)
			t.entVal[fill[s]] = t.vals[i][k]
			fill[s]++
		}
	}
	t.t++
	bc1 := 1 - math.Pow(beta1, float64(t.t))
	bc2 := 1 - math.Pow(beta2, float64(t.t))
	lr := float32(t.lr() / bc1)
	ibc2 := float32(1 / bc2)
	w := t.m.w
	if len(t.grads) < t.workers {
		t.grads = make([][]float32, t.workers)
		for wk := range t.grads {
			t.grads[wk] = make([]float32, d)
		}
	}
	t.parallel(t.workers, func(wk, _ int) {
		g := t.grads[wk]
		for s := wk; s < len(t.touched); s += t.workers {
			clear(g)
			for e := t.start[s]; e < t.start[s+1]; e++ {
				i := t.entText[e]
				axpy(t.entVal[e], t.dh[int(i)*d:int(i+1)*d], g)
			}
			off := int(t.touched[s]) * d
			adam(w[off:off+d], t.adamM[off:off+d], t.adamV[off:off+d], g, lr, ibc2)
		}
	})
	for _, f := range t.touched {
		t.slot[f] = -1
	}
}

// grow returns buf resized to n, reallocated only when too small; the
// contents are not kept.
func grow[T any](buf []T, n int) []T {
	if cap(buf) < n {
		return make([]T, n)
	}
	return buf[:n]
}

// adam updates one row: m, v moving averages of g and g²,
// w −= lr·m/(√(v/bc2)+ε), where lr holds the first moment's bias
// correction and ibc2 = 1/bc2.
func adam(w, m, v, g []float32, lr, ibc2 float32) {
	w, m, v = w[:len(g)], m[:len(g)], v[:len(g)]
	k := 0
	if useAVX2 && len(g) >= 8 {
		k = len(g) &^ 7
		adamAVX2(&w[0], &m[0], &v[0], &g[0], k, lr, ibc2)
	}
	adamGeneric(w[k:], m[k:], v[k:], g[k:], lr, ibc2)
}

func adamGeneric(w, m, v, g []float32, lr, ibc2 float32) {
	w, m, v = w[:len(g)], m[:len(g)], v[:len(g)]
	for k, x := range g {
		mk := beta1*m[k] + (1-beta1)*x
		vk := beta2*v[k] + (1-beta2)*x*x
		m[k], v[k] = mk, vk
		w[k] -= lr * mk / (float32(math.Sqrt(float64(vk*ibc2))) + epsilon)
	}
}

// finish sets the model's identity.
func (m *Model) finish() {
	m.id = fmt.Sprintf("contrast-%d@%s", m.opts.Dim, m.hash()[:12])
}
