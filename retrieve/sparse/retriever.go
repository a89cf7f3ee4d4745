package sparse

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	index "github.com/blevesearch/bleve_index_api"
	segment "github.com/blevesearch/scorch_segment_api/v2"
	zap "github.com/blevesearch/zapx/v17"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/internal/topk"
	"github.com/citefind/citefind/retrieve"
)

// Sentinel errors. Test with errors.Is.
var (
	// ErrNotIndex: Open was given a folder that is not an index written
	// by Build.
	ErrNotIndex = errors.New("not a citefind sparse index")
	// ErrUnknownField: a field name that Build cannot index.
	ErrUnknownField = errors.New("unknown field")
	// ErrFieldNotIndexed: Options.FieldWeights names a field that the
	// index was built without.
	ErrFieldNotIndexed = errors.New("field not indexed")
	// ErrNoMeta: Meta was asked for a key that Build was not given.
	ErrNoMeta = errors.New("no such meta key")
	// ErrClosed: the Retriever was closed.
	ErrClosed = errors.New("retriever closed")
	// ErrBadK: Retrieve was called with k <= 0.
	ErrBadK = errors.New("k must be positive")
)

// BM25 defaults (Robertson/Lucene/Xapian-style values).
const (
	DefaultK1 = 1.2
	DefaultB  = 0.75
)

// DefaultFieldWeights returns the weights used when Options.FieldWeights
// is nil: only the combined text field.
func DefaultFieldWeights() map[string]float64 { return map[string]float64{FieldText: 1} }

// Options configures a Retriever. The zero value is ready to use.
type Options struct {
	// K1 is the BM25 term-frequency saturation, >= 0. Zero means
	// DefaultK1 (1.2).
	K1 float64
	// B is the BM25 length normalisation in [0, 1]. Zero means DefaultB
	// (0.75); pass a tiny positive value for (almost) no normalisation.
	B float64
	// FieldWeights maps field names to weights >= 0. The score of a paper
	// is the weighted sum of its per-field BM25 scores; fields with weight
	// 0 are not scored. Every named field must have been indexed
	// (BuildOptions.Fields). nil means DefaultFieldWeights ({"text": 1}).
	FieldWeights map[string]float64
	// K3 saturates the weight of a term repeated in the query, as in
	// Robertson's BM25 with k3: qtf·(k3+1)/(k3+qtf). Zero means no
	// saturation (a term counts qtf times, like Lucene's summed clauses);
	// a tiny positive value counts every distinct term once.
	K3 float64
	// PostingsCache is how many bytes of decoded postings the retriever
	// keeps in memory (12 bytes a posting, lists of at least
	// minCachedDF documents, first come first kept): a query term whose
	// list is kept is scored from flat arrays instead of the index's
	// compressed postings, with the same result. 0 means
	// DefaultPostingsCache; negative, none.
	PostingsCache int64
}

// DefaultPostingsCache is the default Options.PostingsCache: 64 MiB,
// most of the long postings lists of a 100,000-paper collection.
const DefaultPostingsCache = 64 << 20

// fieldScorer holds the per-field constants of the BM25 formula:
// tf·(k1+1) / (tf + c1 + c2·dl) with c1 = k1·(1−b), c2 = k1·b/avgdl.
type fieldScorer struct {
	name   string
	weight float64
	c1, c2 float64
}

// Retriever ranks the papers of an index built by Build with Okapi BM25.
// It is safe for concurrent use. The index is opened read-only and one
// bleve reader snapshot is held until Close.
type Retriever struct {
	mu      sync.RWMutex // write-locked only by Close
	idx     bleve.Index
	rd      index.IndexReader
	fields  []string
	scorers []fieldScorer
	k1      float64
	k3      float64 // query-term saturation; 0 = none
	n       uint64
	size    int       // doc-number space of the snapshot (live + deleted)
	segs    []segInfo // nil: score through TermFieldReader (non-scorch reader)
	pool    sync.Pool
	cache   *postingsCache // nil: none
}

// segInfo is one segment of the held scorch snapshot. A document's internal
// number is offset + its number within the segment, as in scorch.
type segInfo struct {
	seg     segment.Segment
	deleted *roaring.Bitmap
	offset  uint64
}

// Open opens the index that Build wrote to dir. It fails with an error
// wrapping fs.ErrNotExist when dir is missing, ErrNotIndex when dir is not
// such an index, and ErrFieldNotIndexed or ErrUnknownField when
// opts.FieldWeights names a field the index lacks.
func Open(dir string, opts Options) (*Retriever, error) {
	k1, b := opts.K1, opts.B
	if k1 == 0 {
		k1 = DefaultK1
	}
	if b == 0 {
		b = DefaultB
	}
	if k1 < 0 || math.IsNaN(k1) || math.IsInf(k1, 0) || b < 0 || b > 1 || math.IsNaN(b) {
		return nil, fmt.Errorf("sparse: open: bad BM25 parameters k1=%v b=%v", k1, b)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("sparse: open: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("sparse: open %s: %w (not a folder)", dir, ErrNotIndex)
	}
	if _, err := os.Stat(filepath.Join(dir, "index_meta.json")); err != nil {
		return nil, fmt.Errorf("sparse: open %s: %w (no index_meta.json)", dir, ErrNotIndex)
	}
	idx, err := bleve.OpenUsing(dir, map[string]any{"read_only": true})
	if err != nil {
		return nil, fmt.Errorf("sparse: open %s: %w: %v", dir, ErrNotIndex, err)
	}
	if opts.K3 < 0 || math.IsNaN(opts.K3) || math.IsInf(opts.K3, 0) {
		return nil, fmt.Errorf("sparse: open: bad BM25 parameter k3=%v", opts.K3)
	}
	r, err := newRetriever(idx, k1, b, opts.FieldWeights)
	if err != nil {
		_ = idx.Close()
		return nil, fmt.Errorf("sparse: open %s: %w", dir, err)
	}
	r.k3 = opts.K3
	switch {
	case opts.PostingsCache == 0:
		r.cache = newPostingsCache(DefaultPostingsCache)
	case opts.PostingsCache > 0:
		r.cache = newPostingsCache(opts.PostingsCache)
	}
	return r, nil
}

func newRetriever(idx bleve.Index, k1, b float64, weights map[string]float64) (*Retriever, error) {
	adv, err := idx.Advanced()
	if err != nil {
		return nil, err
	}
	rd, err := adv.Reader()
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			_ = rd.Close()
		}
	}()
	hb, err := rd.GetInternal([]byte(headerKey))
	if err != nil {
		return nil, err
	}
	if hb == nil {
		return nil, fmt.Errorf("%w (no header; not written by Build)", ErrNotIndex)
	}
	var h header
	if err := json.Unmarshal(hb, &h); err != nil {
		return nil, fmt.Errorf("%w (bad header: %v)", ErrNotIndex, err)
	}
	if h.Format != formatV1 && h.Format != formatV2 {
		return nil, fmt.Errorf("%w (format %d, want %d; rebuild the index)", ErrNotIndex, h.Format, formatV2)
	}
	if h.Analyzer != AnalyzerName {
		return nil, fmt.Errorf("%w (analyzer %q, want %q; rebuild the index)", ErrNotIndex, h.Analyzer, AnalyzerName)
	}
	n, err := rd.DocCount()
	if err != nil {
		return nil, err
	}
	if n != h.Docs {
		return nil, fmt.Errorf("%w (bleve counts %d documents, header %d: modified outside Build)", ErrNotIndex, n, h.Docs)
	}

	if weights == nil {
		weights = DefaultFieldWeights()
	}
	var scorers []fieldScorer
	for _, f := range knownFields() { // fixed order: deterministic sums
		w, named := weights[f]
		if !named {
			continue
		}
		if w < 0 || math.IsNaN(w) || math.IsInf(w, 0) {
			return nil, fmt.Errorf("bad weight %v for field %q", w, f)
		}
		if !slices.Contains(h.Fields, f) {
			return nil, fmt.Errorf("%w: %q (index has %s)", ErrFieldNotIndexed, f, strings.Join(h.Fields, ", "))
		}
		if w == 0 {
			continue
		}
		fs := fieldScorer{name: f, weight: w, c1: k1 * (1 - b)}
		if h.Docs > 0 && h.Lengths[f] > 0 {
			avgdl := float64(h.Lengths[f]) / float64(h.Docs)
			fs.c2 = k1 * b / avgdl
		}
		scorers = append(scorers, fs)
	}
	for f := range weights {
		if !slices.Contains(knownFields(), f) {
			return nil, fmt.Errorf("%w: %q", ErrUnknownField, f)
		}
	}
	if len(scorers) == 0 {
		return nil, errors.New("no field has a positive weight")
	}

	size := int(n)
	var segs []segInfo
	if snap, ok := rd.(*scorch.IndexSnapshot); ok {
		size = 0
		for _, s := range snap.Segments() {
			segs = append(segs, segInfo{seg: s.Segment(), deleted: s.Deleted(), offset: uint64(size)})
			size += int(s.FullSize())
		}
	}
	r := &Retriever{
		idx:     idx,
		rd:      rd,
		fields:  slices.Clone(h.Fields),
		scorers: scorers,
		k1:      k1,
		n:       n,
		size:    size,
		segs:    segs,
	}
	r.pool.New = func() any { return &accum{scores: make([]float64, r.size)} }
	ok = true
	return r, nil
}

// Count returns the number of papers in the index.
func (r *Retriever) Count() int { return int(r.n) }

// Fields returns the indexed fields.
func (r *Retriever) Fields() []string { return slices.Clone(r.fields) }

// Meta returns the value stored for key by BuildOptions.Meta, or an error
// wrapping ErrNoMeta.
func (r *Retriever) Meta(key string) (string, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.rd == nil {
		return "", ErrClosed
	}
	v, err := r.rd.GetInternal([]byte(metaPrefix + key))
	if err != nil {
		return "", fmt.Errorf("sparse: meta %q: %w", key, err)
	}
	if v == nil {
		return "", fmt.Errorf("sparse: meta %q: %w", key, ErrNoMeta)
	}
	return string(v), nil
}

// Close releases the index. Retrieve calls in flight finish first; later
// calls fail with ErrClosed.
func (r *Retriever) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.rd == nil {
		return nil
	}
	err := r.rd.Close()
	if cerr := r.idx.Close(); err == nil {
		err = cerr
	}
	r.rd, r.idx = nil, nil
	r.cache = nil // the decoded postings go with the snapshot
	return err
}

// accum is the per-query scratch space, pooled: a dense score array
// indexed by bleve's internal document number, the list of touched
// numbers, a reusable posting and the top-k heap.
type accum struct {
	scores  []float64
	touched []uint32
	tfd     index.TermFieldDoc
	heap    topk.Heap[cand]
	idbuf   []byte
	// per segment, reused across terms and queries
	dicts []segment.TermDictionary
	pls   []segment.PostingsList
	its   []segment.PostingsIterator
}

type cand struct {
	num   uint32
	score float64
}

// checkEvery is how many postings are scored between ctx checks.
const checkEvery = 4096

// Retrieve returns the k papers with the highest BM25 score for query,
// best first; equal scores are ordered by ID ascending. Scores are
// positive; papers that share no term with the query are not returned, so
// fewer than k hits may come back. An empty or stop-word-only query gives
// an empty result. k <= 0 is an error (ErrBadK).
func (r *Retriever) Retrieve(ctx context.Context, query string, k int) ([]corpus.Hit, error) {
	if k <= 0 {
		return nil, fmt.Errorf("sparse: retrieve: %w (got %d)", ErrBadK, k)
	}
	terms, err := analyzeQuery(query)
	if err != nil {
		return nil, err
	}
	if r.k3 > 0 {
		for i := range terms {
			terms[i].qtf = terms[i].qtf * (r.k3 + 1) / (r.k3 + terms[i].qtf)
		}
	}
	return r.retrieve(ctx, terms, k)
}

// Term is an analyzed query term (as Analyze returns it) and its weight,
// which multiplies the term's BM25 contribution.
type Term = retrieve.Term

// QueryTerms returns the distinct analyzed terms of query in
// first-occurrence order, each weighted by its frequency in the query,
// saturated by k3 when k3 > 0 (qtf·(k3+1)/(k3+qtf)): the weighted query
// that Retrieve runs for a Retriever with Options.K3 = k3.
func QueryTerms(query string, k3 float64) ([]Term, error) {
	terms, err := analyzeQuery(query)
	if err != nil {
		return nil, err
	}
	out := make([]Term, len(terms))
	for i, t := range terms {
		w := t.qtf
		if k3 > 0 {
			w = w * (k3 + 1) / (k3 + w)
		}
		out[i] = Term{Text: string(t.term), Weight: w}
	}
	return out, nil
}

// QueryTerms is the package's QueryTerms with the retriever's K3.
func (r *Retriever) QueryTerms(query string) ([]Term, error) { return QueryTerms(query, r.k3) }

// BM25 is RetrieveTerms (it makes a Retriever an RM3 TermSearcher).
func (r *Retriever) BM25(ctx context.Context, terms []Term, k int) ([]corpus.Hit, error) {
	return r.RetrieveTerms(ctx, terms, k)
}

// DocFreqs returns DocFreq(FieldText, t) for each term, and the number of
// papers in the index.
func (r *Retriever) DocFreqs(ctx context.Context, terms []string) (map[string]int, int, error) {
	out := make(map[string]int, len(terms))
	for _, t := range terms {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		df, err := r.DocFreq(FieldText, t)
		if err != nil {
			return nil, 0, err
		}
		out[t] = int(df)
	}
	return out, int(r.n), nil
}

// RetrieveTerms is Retrieve for an already analyzed, weighted query:
// the score of a paper is the sum over terms of Weight times the term's
// BM25 contribution. Terms with a weight <= 0 (or NaN) are skipped; a
// term given twice counts twice.
func (r *Retriever) RetrieveTerms(ctx context.Context, terms []Term, k int) ([]corpus.Hit, error) {
	if k <= 0 {
		return nil, fmt.Errorf("sparse: retrieve: %w (got %d)", ErrBadK, k)
	}
	qts := make([]queryTerm, 0, len(terms))
	for _, t := range terms {
		if t.Weight > 0 && t.Text != "" {
			qts = append(qts, queryTerm{term: []byte(t.Text), qtf: t.Weight})
		}
	}
	return r.retrieve(ctx, qts, k)
}

// DocFreq returns the number of papers whose field holds term (an
// analyzed term), 0 when none does.
func (r *Retriever) DocFreq(field, term string) (uint64, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.rd == nil {
		return 0, fmt.Errorf("sparse: doc freq: %w", ErrClosed)
	}
	tfr, err := r.rd.TermFieldReader(context.Background(), []byte(term), field, false, false, false)
	if err != nil {
		return 0, fmt.Errorf("sparse: doc freq: %w", err)
	}
	defer tfr.Close()
	return tfr.Count(), nil
}

func (r *Retriever) retrieve(ctx context.Context, terms []queryTerm, k int) ([]corpus.Hit, error) {
	if len(terms) == 0 {
		return []corpus.Hit{}, nil
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.rd == nil {
		return nil, fmt.Errorf("sparse: retrieve: %w", ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sparse: retrieve: %w", err)
	}
	a := r.pool.Get().(*accum)
	defer r.release(a)
	if err := r.accumulate(ctx, a, terms); err != nil {
		return nil, fmt.Errorf("sparse: retrieve: %w", err)
	}
	hits, err := r.topK(a, k)
	if err != nil {
		return nil, fmt.Errorf("sparse: retrieve: %w", err)
	}
	return hits, nil
}

func (r *Retriever) release(a *accum) {
	for _, n := range a.touched {
		a.scores[n] = 0
	}
	a.touched = a.touched[:0]
	a.heap.Reset(0)
	r.pool.Put(a)
}

// accumulate adds every posting's BM25 contribution to a.scores.
func (r *Retriever) accumulate(ctx context.Context, a *accum, terms []queryTerm) error {
	if r.segs == nil {
		return r.accumulateTFR(ctx, a, terms)
	}
	return r.accumulateSegments(ctx, a, terms)
}

// accumulateSegments reads the postings of the held scorch snapshot segment
// by segment: the same data a TermFieldReader yields (it is a thin wrapper
// over these iterators), without the per-posting wrapping, with one term
// dictionary per segment and field instead of one per term, and with the
// exact field length instead of float32(1/sqrt(length)).
func (r *Retriever) accumulateSegments(ctx context.Context, a *accum, terms []queryTerm) error {
	n := float64(r.n)
	k1p1 := r.k1 + 1
	count := 0
	if len(a.dicts) < len(r.segs) {
		a.dicts = make([]segment.TermDictionary, len(r.segs))
		a.pls = make([]segment.PostingsList, len(r.segs))
		a.its = make([]segment.PostingsIterator, len(r.segs))
	}
	for fi, fs := range r.scorers {
		haveDicts := false
		for _, qt := range terms {
			if cp := r.cache.get(fi, qt.term); cp != nil {
				// the same postings, in the same order, from flat arrays
				dff := float64(cp.df)
				idf := math.Log(1 + (n-dff+0.5)/(dff+0.5))
				coef := fs.weight * qt.qtf * idf * k1p1
				c1, c2 := fs.c1, fs.c2
				scores := a.scores
				for j, num := range cp.num {
					if uint64(num) >= uint64(len(scores)) {
						scores = a.grow(uint64(num))
					}
					tf, dl := float64(cp.tf[j]), float64(cp.dl[j])
					s := coef * tf / (tf + c1 + c2*dl)
					if scores[num] == 0 {
						a.touched = append(a.touched, num)
					}
					scores[num] += s
					if count++; count%checkEvery == 0 {
						if err := ctx.Err(); err != nil {
							return err
						}
					}
				}
				continue
			}
			if !haveDicts {
				for i, sg := range r.segs {
					d, err := sg.seg.Dictionary(fs.name)
					if err != nil {
						return err
					}
					a.dicts[i] = d
				}
				haveDicts = true
			}
			var df uint64
			for i, sg := range r.segs {
				pl, err := a.dicts[i].PostingsList(qt.term, sg.deleted, a.pls[i])
				if err != nil {
					return err
				}
				a.pls[i] = pl
				df += pl.Count() // excludes deleted documents
			}
			if df == 0 {
				continue
			}
			dff := float64(df)
			idf := math.Log(1 + (n-dff+0.5)/(dff+0.5))
			coef := fs.weight * qt.qtf * idf * k1p1
			c1, c2 := fs.c1, fs.c2
			keep := r.cache.wants(df)
			var cp *cachedPostings
			if keep {
				cp = &cachedPostings{df: df, num: make([]uint32, 0, df), tf: make([]float32, 0, df), dl: make([]float32, 0, df)}
			}
			for i, sg := range r.segs {
				if a.pls[i].Count() == 0 {
					continue
				}
				it := a.pls[i].Iterator(true, true, false, a.its[i])
				a.its[i] = it
				scores := a.scores
				for {
					p, err := it.Next()
					if err != nil {
						return err
					}
					if p == nil {
						break
					}
					var num uint64
					var tf, dl float64
					if zp, ok := p.(*zap.Posting); ok { // direct calls, inlined
						num, tf, dl = zp.Number(), float64(zp.Frequency()), float64(zp.NormUint64())
					} else {
						num, tf, dl = p.Number(), float64(p.Frequency()), lengthFromNorm(p.Norm())
					}
					num += sg.offset
					if num >= uint64(len(scores)) {
						scores = a.grow(num)
					}
					if cp != nil {
						if num > math.MaxUint32 || tf >= maxExactFloat32 || dl >= maxExactFloat32 {
							cp = nil // not exact as float32: not kept
						} else {
							cp.num, cp.tf, cp.dl = append(cp.num, uint32(num)), append(cp.tf, float32(tf)), append(cp.dl, float32(dl))
						}
					}
					s := coef * tf / (tf + c1 + c2*dl)
					if scores[num] == 0 {
						a.touched = append(a.touched, uint32(num))
					}
					scores[num] += s
					if count++; count%checkEvery == 0 {
						if err := ctx.Err(); err != nil {
							return err
						}
					}
				}
			}
			if cp != nil {
				r.cache.put(fi, qt.term, cp)
			}
		}
	}
	return nil
}

// lengthFromNorm recovers the field length from bleve's norm,
// float32(1/sqrt(length)); exact for lengths below about 4 million.
func lengthFromNorm(norm float64) float64 {
	return float64(int64(1/(norm*norm) + 0.5))
}

// accumulateTFR is accumulate through the generic bleve reader API.
func (r *Retriever) accumulateTFR(ctx context.Context, a *accum, terms []queryTerm) error {
	n := float64(r.n)
	k1p1 := r.k1 + 1
	count := 0
	for _, fs := range r.scorers {
		for _, qt := range terms {
			tfr, err := r.rd.TermFieldReader(ctx, qt.term, fs.name, true, true, false)
			if err != nil {
				return err
			}
			df := float64(tfr.Count())
			if df == 0 {
				_ = tfr.Close()
				continue
			}
			idf := math.Log(1 + (n-df+0.5)/(df+0.5))
			coef := fs.weight * qt.qtf * idf * k1p1
			c1, c2 := fs.c1, fs.c2
			scores := a.scores
			for {
				d, err := tfr.Next(&a.tfd)
				if err != nil {
					_ = tfr.Close()
					return err
				}
				if d == nil {
					break
				}
				num := binary.BigEndian.Uint64(d.ID)
				if num >= uint64(len(scores)) {
					scores = a.grow(num)
				}
				tf := float64(d.Freq)
				// bleve stores norm = float32(1/sqrt(fieldLength)).
				dl := lengthFromNorm(d.Norm)
				s := coef * tf / (tf + c1 + c2*dl)
				if scores[num] == 0 {
					a.touched = append(a.touched, uint32(num))
				}
				scores[num] += s
				if count++; count%checkEvery == 0 {
					if err := ctx.Err(); err != nil {
						_ = tfr.Close()
						return err
					}
				}
			}
			if err := tfr.Close(); err != nil {
				return err
			}
		}
	}
	return nil
}

func (a *accum) grow(num uint64) []float64 {
	s := make([]float64, max(num+1, uint64(2*len(a.scores))))
	copy(s, a.scores)
	a.scores = s
	return s
}

// Worse orders candidates worst first for the top-k heap: lower score,
// then higher doc number.
func (c cand) Worse(d cand) bool {
	if c.score != d.score {
		return c.score < d.score
	}
	return c.num > d.num
}

// topK selects the k best touched documents and returns them best first,
// ties by external ID ascending.
func (r *Retriever) topK(a *accum, k int) ([]corpus.Hit, error) {
	a.heap.Reset(k)
	for _, num := range a.touched {
		a.heap.Push(cand{num: num, score: a.scores[num]})
	}
	h := a.heap.Items()

	// Ties at the cut-off score: the heap kept an arbitrary subset of the
	// documents scoring exactly the k-th score; choose by external ID.
	var tied []string
	if len(h) == k && len(a.touched) > k {
		cut := h[0].score
		inHeap := 0
		for _, c := range h {
			if c.score == cut {
				inHeap++
			}
		}
		total := 0
		for _, num := range a.touched {
			if a.scores[num] == cut {
				total++
			}
		}
		if total > inHeap {
			for _, num := range a.touched {
				if a.scores[num] == cut {
					id, err := r.externalID(a, num)
					if err != nil {
						return nil, err
					}
					tied = append(tied, id)
				}
			}
			sort.Strings(tied)
			tied = tied[:inHeap]
		}
	}

	hits := make([]corpus.Hit, 0, len(h))
	for _, c := range h {
		if tied != nil && c.score == h[0].score {
			continue
		}
		id, err := r.externalID(a, c.num)
		if err != nil {
			return nil, err
		}
		hits = append(hits, corpus.Hit{ID: id, Score: c.score})
	}
	if tied != nil {
		cut := h[0].score
		for _, id := range tied {
			hits = append(hits, corpus.Hit{ID: id, Score: cut})
		}
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].Score != hits[j].Score {
			return hits[i].Score > hits[j].Score
		}
		return hits[i].ID < hits[j].ID
	})
	return hits, nil
}

func (r *Retriever) externalID(a *accum, num uint32) (string, error) {
	a.idbuf = index.NewIndexInternalID(a.idbuf, uint64(num))
	return r.rd.ExternalID(a.idbuf)
}
