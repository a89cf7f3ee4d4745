package lsa

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"strings"
	"sync"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/retrieve/sparse"
)

// Defaults used for the zero values of Options fields.
const (
	DefaultDim        = 256     // latent dimensions
	DefaultMinDF      = 2       // a term must occur in at least this many documents
	DefaultMaxDFRatio = 0.5     // a term in more than this share of the documents is dropped
	DefaultMaxVocab   = 100_000 // terms kept, the most frequent (by document frequency)
	DefaultOversample = 10      // extra random directions of the range finder
	DefaultPowerIters = 2       // power iterations of the range finder
	DefaultSeed       = 1       // seed of the Gaussian test matrix
	// DefaultFold is the fold-in that retrieved best on ACM-CR at every
	// dimension tried (128, 256, 512): x·V_k beat x·V_k·Σ_k^(-1/2) and
	// x·V_k·Σ_k⁻¹ on recall@10 of both topic sets.
	DefaultFold = FoldPlain
)

// workers is the number of goroutines the heavy loops (text analysis,
// sparse×dense products, Gram matrices, embedding) run on. It is fixed,
// not GOMAXPROCS, so that results do not depend on the machine: the
// floating point sums are split the same way everywhere.
const workers = 2

// Errors callers can act on.
var (
	// ErrEmptyCorpus is returned by Train when no document has a term left
	// after the vocabulary filters.
	ErrEmptyCorpus = errors.New("lsa: no document with a vocabulary term")
	// ErrCorrupt is returned by Load for a file that is not an LSA model or
	// whose checksum does not match.
	ErrCorrupt = errors.New("lsa: corrupt model file")
)

// Fold says how a text's tf-idf vector x is mapped into the latent space.
// Every fold is L2-normalised afterwards, so only the relative scale of the
// dimensions matters.
type Fold string

// Folds.
const (
	// FoldPlain is x·V_k: a training document lands on its row of U_k·Σ_k,
	// classic LSA document coordinates, dimensions weighted by their
	// singular value.
	FoldPlain Fold = "plain"
	// FoldInverse is x·V_k·Σ_k⁻¹: a training document lands on its row of
	// U_k, every dimension weighted alike.
	FoldInverse Fold = "sigma-inv"
	// FoldInverseSqrt is x·V_k·Σ_k^(-1/2), between the two.
	FoldInverseSqrt Fold = "sigma-inv-sqrt"
)

func (f Fold) valid() bool {
	return f == FoldPlain || f == FoldInverse || f == FoldInverseSqrt
}

// Options configure Train. The zero value trains the default model.
type Options struct {
	// Dim is the number of latent dimensions k; 0 means DefaultDim. A
	// corpus with fewer documents or terms than Dim gives a model of that
	// smaller dimension (see Model.Dim).
	Dim int
	// MinDF drops terms found in fewer documents; 0 means DefaultMinDF.
	MinDF int
	// MaxDFRatio drops terms found in more than this share of the
	// documents, in (0, 1]; 0 means DefaultMaxDFRatio, 1 keeps them all.
	MaxDFRatio float64
	// MaxVocab keeps at most this many terms after the two filters above,
	// those in the most documents (ties by term); 0 means DefaultMaxVocab.
	MaxVocab int
	// Oversample is the number of random directions beyond Dim the range
	// finder uses; 0 means DefaultOversample, negative means none.
	Oversample int
	// PowerIters is the number of power iterations (A·Aᵀ applications)
	// of the range finder; 0 means DefaultPowerIters, negative means none.
	PowerIters int
	// Seed seeds the Gaussian test matrix; 0 means DefaultSeed. The same
	// corpus, options and seed give the same model, bit for bit.
	Seed int64
	// Fold is the fold-in used by Embed; "" means DefaultFold. It can be
	// changed after training with Model.WithFold.
	Fold Fold
}

func (o Options) withDefaults() (Options, error) {
	if o.Dim == 0 {
		o.Dim = DefaultDim
	}
	if o.MinDF == 0 {
		o.MinDF = DefaultMinDF
	}
	if o.MaxDFRatio == 0 {
		o.MaxDFRatio = DefaultMaxDFRatio
	}
	if o.MaxVocab == 0 {
		o.MaxVocab = DefaultMaxVocab
	}
	switch {
	case o.Oversample == 0:
		o.Oversample = DefaultOversample
	case o.Oversample < 0:
		o.Oversample = 0
	}
	switch {
	case o.PowerIters == 0:
		o.PowerIters = DefaultPowerIters
	case o.PowerIters < 0:
		o.PowerIters = 0
	}
	if o.Seed == 0 {
		o.Seed = DefaultSeed
	}
	if o.Fold == "" {
		o.Fold = DefaultFold
	}
	switch {
	case o.Dim < 0 || o.Dim > maxDim:
		return o, fmt.Errorf("lsa: Dim %d out of range [1, %d]", o.Dim, maxDim)
	case o.MinDF < 0:
		return o, fmt.Errorf("lsa: negative MinDF %d", o.MinDF)
	case !(o.MaxDFRatio > 0 && o.MaxDFRatio <= 1):
		return o, fmt.Errorf("lsa: MaxDFRatio %v out of range (0, 1]", o.MaxDFRatio)
	case o.MaxVocab < 0 || o.MaxVocab > maxTerms:
		return o, fmt.Errorf("lsa: MaxVocab %d out of range [1, %d]", o.MaxVocab, maxTerms)
	case o.Oversample > maxDim || o.PowerIters > 100:
		return o, fmt.Errorf("lsa: Oversample %d or PowerIters %d too large", o.Oversample, o.PowerIters)
	case !o.Fold.valid():
		return o, fmt.Errorf("lsa: unknown fold %q", o.Fold)
	}
	return o, nil
}

// Size limits, also the sanity limits of Load.
const (
	maxDim   = 4096
	maxTerms = 1 << 24
)

// Text returns the text of p that Train and Embed should see for a paper:
// title, abstract and keywords (joined by ". "), one per line, as the BM25
// index's combined text field holds them.
func Text(p corpus.Paper) string {
	parts := make([]string, 0, 3)
	for _, s := range []string{p.Title, p.Abstract, strings.Join(p.Keywords, ". ")} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "\n")
}

// Model is a trained LSA embedder: a vocabulary with idf weights and the
// top-k right singular vectors V_k and singular values Σ_k of the
// documents × terms tf-idf matrix. It is immutable and safe for concurrent
// use.
type Model struct {
	opts  Options  // effective options (defaults filled in); Dim is the model's k
	docs  int      // training documents (rows of the matrix)
	vocab []string // term of each column, sorted
	index map[string]int32
	idf   []float64 // ln(docs/df) per term
	sigma []float64 // k singular values, descending
	v     []float32 // len(vocab)×k, row-major: term j's row is v[j*k:(j+1)*k]
	scale []float64 // per-dimension factor of the fold
	id    string
}

// Model returns the model's identity, "lsa-<dim>@<hash>": hash is the first
// 12 hex digits of the SHA-256 of the model file (parameters, vocabulary,
// idf, singular values, vectors and fold), so it changes whenever the
// vectors Embed returns could change.
func (m *Model) Model() string { return m.id }

// Dim returns the length of the vectors Embed returns.
func (m *Model) Dim() int { return m.opts.Dim }

// Fold returns the fold-in Embed uses.
func (m *Model) Fold() Fold { return m.opts.Fold }

// Terms returns the vocabulary size.
func (m *Model) Terms() int { return len(m.vocab) }

// Row returns term's row of V_k, the vector a text's weight for the term
// is multiplied by when it is folded in (before the fold's per-dimension
// scaling), or nil when the term is not in the vocabulary. The slice is
// the model's own: do not modify it. Other embedders start from it (the
// contrast package's LSA initialisation).
func (m *Model) Row(term string) []float32 {
	j, ok := m.index[term]
	if !ok {
		return nil
	}
	k := m.opts.Dim
	return m.v[int(j)*k : int(j+1)*k : int(j+1)*k]
}

// Singular returns a copy of the k singular values, descending.
func (m *Model) Singular() []float64 { return append([]float64(nil), m.sigma...) }

// WithFold returns a model sharing m's vectors that embeds with fold f (and
// has its own Model identity).
func (m *Model) WithFold(f Fold) (*Model, error) {
	if !f.valid() {
		return nil, fmt.Errorf("lsa: unknown fold %q", f)
	}
	c := *m
	c.opts.Fold = f
	c.finish()
	return &c, nil
}

// finish sets the derived fields: term index, fold scale and identity.
func (m *Model) finish() {
	if m.index == nil {
		m.index = make(map[string]int32, len(m.vocab))
		for j, t := range m.vocab {
			m.index[t] = int32(j)
		}
	}
	m.scale = make([]float64, len(m.sigma))
	var top float64
	if len(m.sigma) > 0 {
		top = m.sigma[0]
	}
	for d, s := range m.sigma {
		switch {
		case m.opts.Fold == FoldPlain:
			m.scale[d] = 1
		case s <= top*1e-10: // rank-deficient corpus: the direction is noise
			m.scale[d] = 0
		case m.opts.Fold == FoldInverse:
			m.scale[d] = 1 / s
		default:
			m.scale[d] = 1 / math.Sqrt(s)
		}
	}
	m.id = fmt.Sprintf("lsa-%d@%s", m.opts.Dim, m.hash()[:12])
}

// termWeight is the document weighting of a term with frequency tf and
// inverse document frequency idf: (1 + ln tf) · idf.
func termWeight(tf int, idf float64) float64 {
	return (1 + math.Log(float64(tf))) * idf
}

// Embed returns one L2-normalised vector of length Dim per text, in order:
// the text is analyzed as the BM25 index does (sparse.Analyze), weighted
// like the training documents (log tf × idf over the model's vocabulary)
// and folded in (see Fold). A text without a vocabulary term gets the zero
// vector. Cosine similarity of two vectors is their dot product.
func (m *Model) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	k := m.opts.Dim
	flat := make([]float32, len(texts)*k)
	n := workers
	if len(texts) < 64 {
		n = 1
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for w := range n {
		wg.Go(func() {
			acc := make([]float64, k)
			counts := map[int32]int{}
			for i := w; i < len(texts); i += n {
				if i%256 < n {
					if err := ctx.Err(); err != nil {
						errs[w] = err
						return
					}
				}
				out[i] = flat[i*k : (i+1)*k : (i+1)*k]
				m.embed(texts[i], acc, counts, out[i])
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("lsa embed: %w", err)
	}
	return out, nil
}

// embed folds one text into dst, using acc and counts as scratch.
func (m *Model) embed(text string, acc []float64, counts map[int32]int, dst []float32) {
	clear(counts)
	for _, t := range sparse.Analyze(text) {
		if j, ok := m.index[t]; ok {
			counts[j]++
		}
	}
	if len(counts) == 0 {
		return
	}
	// Sum in term order so that the result does not depend on map order.
	terms := make([]int32, 0, len(counts))
	for j := range counts {
		terms = append(terms, j)
	}
	sortInt32(terms)
	clear(acc)
	k := len(acc)
	for _, j := range terms {
		axpy32(termWeight(counts[j], m.idf[j]), m.v[int(j)*k:int(j+1)*k], acc)
	}
	var norm float64
	for d := range acc {
		acc[d] *= m.scale[d]
		norm += acc[d] * acc[d]
	}
	if norm == 0 {
		return
	}
	norm = 1 / math.Sqrt(norm)
	for d := range acc {
		dst[d] = float32(acc[d] * norm)
	}
}

// Train fits an LSA model on the documents texts yields (for papers, see
// Text), streaming over them once. It builds the documents × terms matrix
// with log-tf × idf weights and L2-normalised rows over the vocabulary left
// by the Options filters, and computes its top-Dim singular values and
// right singular vectors by randomized SVD (Halko, Martinsson & Tropp 2011:
// Gaussian test matrix, power iterations with re-orthonormalisation,
// Rayleigh–Ritz on the captured subspace).
//
// progress, when not nil, is called from Train's goroutine as work is
// done: stage "analyze" (documents read so far, total 0 = unknown),
// "matrix" (1 of 1), "svd" (steps done of the total) and "done".
func Train(ctx context.Context, texts iter.Seq[string], opts Options, progress func(stage string, done, total int)) (*Model, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if progress == nil {
		progress = func(string, int, int) {}
	}
	col, err := collect(ctx, texts, progress)
	if err != nil {
		return nil, fmt.Errorf("lsa train: %w", err)
	}
	vocab, remap := col.vocabulary(o)
	if len(vocab) == 0 {
		return nil, ErrEmptyCorpus
	}
	a, idf := col.matrix(remap, len(vocab))
	col = nil
	if a.nnz() == 0 {
		return nil, ErrEmptyCorpus
	}
	progress("matrix", 1, 1)
	sigma, v, err := randomizedSVD(ctx, a, o.Dim, o.Oversample, o.PowerIters, o.Seed, func(done, total int) {
		progress("svd", done, total)
	})
	if err != nil {
		return nil, fmt.Errorf("lsa train: %w", err)
	}
	o.Dim = len(sigma)
	m := &Model{opts: o, docs: a.rows, vocab: vocab, idf: idf, sigma: sigma, v: v}
	m.finish()
	progress("done", 1, 1)
	return m, nil
}
