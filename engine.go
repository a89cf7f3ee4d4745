package citefind

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/fuse"
	"github.com/citefind/citefind/rerank"
	"github.com/citefind/citefind/retrieve"
	"github.com/citefind/citefind/retrieve/dense"
	"github.com/citefind/citefind/retrieve/sparse"
	"github.com/citefind/citefind/selector"
)

// Retriever names accepted in QueryOptions.Retrievers and
// EngineOptions.Retrievers.
const (
	RetrieverBM25  = "bm25"
	RetrieverDense = "dense"
	// RetrieverRM3 is BM25 over the query expanded by pseudo-relevance
	// feedback (RM3, see sparse.RM3).
	RetrieverRM3 = "rm3"
	// RetrieverCiting is BM25 over each sentence of the query that holds
	// a citation marker, the lists fused by RRF: for paragraph-long
	// contexts, the sentences around the citations.
	RetrieverCiting = "citing"
)

// RetrieverNames lists every retriever name, in pipeline order.
var RetrieverNames = []string{RetrieverBM25, RetrieverRM3, RetrieverCiting, RetrieverDense}

// checkRetrievers fails on a name not in RetrieverNames.
func checkRetrievers(names []string) error {
	for _, r := range names {
		if !slices.Contains(RetrieverNames, r) {
			return fmt.Errorf("unknown retriever %q (available: %s)", r, strings.Join(RetrieverNames, ", "))
		}
	}
	return nil
}

// Fusion defaults, used when both retrievers run (hybrid retrieval is
// opt-in: the default retrievers are bm25 alone until a measured default
// beats it). On ACM-CR, RRF (k=60, equal weights) over BM25 and LSA-512
// lowered recall@10 by about .05; min-max score fusion with weight 0.1 on
// the cosine was the least harmful setting (about equal to BM25 alone).
const (
	DefaultFusion           = fuse.MinMax
	DefaultDenseWeight      = 0.1
	DefaultRetrieverTimeout = 5 * time.Second
)

// DefaultFusionWeights returns the fusion weights used when none are given:
// bm25 1, dense DefaultDenseWeight.
func DefaultFusionWeights() map[string]float64 {
	return map[string]float64{RetrieverBM25: 1, RetrieverDense: DefaultDenseWeight}
}

// ErrNoDatabase means the database folder has no store or no index yet.
var ErrNoDatabase = errors.New("no citefind database")

// DefaultSparseOptions are the BM25 settings citefind ships, tuned on
// ACM-CR (docs/bm25.md): k1 2.0, b 0.75, query-term saturation k3 1, and
// the combined text field plus the title at weight 0.25.
func DefaultSparseOptions() sparse.Options {
	return sparse.Options{K1: 2.0, B: 0.75, K3: 1,
		FieldWeights: map[string]float64{sparse.FieldText: 1, sparse.FieldTitle: 0.25}}
}

// EngineOptions configure Open. The zero value uses the tuned defaults.
type EngineOptions struct {
	// Sparse sets BM25 parameters and field weights; the zero value means
	// DefaultSparseOptions().
	Sparse sparse.Options
	// AllowStale opens an index older than the store (with a warning in
	// every result) instead of failing.
	AllowStale bool
	// Raw makes Retrieve search the text as given, without removing
	// citation markers (for measuring what the cleaning buys).
	Raw bool
	// Retrievers are the retrievers Retrieve uses, and Query's default
	// (see RetrieverNames). nil means the database's default (its
	// FusionFile, written by index and eval --sweep-weights
	// --save-weights), or bm25 alone when it has none.
	Retrievers []string
	// Fusion is the fusion method when several retrievers run; "" means
	// the database's default, else DefaultFusion (min-max).
	Fusion fuse.Method
	// Weights are fusion weights by retriever name. A retriever missing
	// from the map gets the database's default weight, else its
	// DefaultFusionWeights entry, else 1.
	Weights map[string]float64
	// Timeout is each retriever's time budget when several run; 0 means
	// DefaultRetrieverTimeout, negative means none.
	Timeout time.Duration
	// Strict makes any retriever failure fail the query (and Retrieve).
	// By default, when several retrievers run, a failing one is reported
	// in Result.Warnings and the others' hits are fused.
	Strict bool
	// Embedder, when not nil, replaces the embedder the database records
	// for querying the dense index (tests, experiments).
	Embedder dense.Embedder
	// LLM is the Ollama chat model of the LLM reranker and picker (--llm);
	// "" means $CITEFIND_LLM, else rerank.DefaultLLMModel for the
	// reranker. The picker uses a model only when LLM or $CITEFIND_LLM is
	// set; otherwise it picks the top rank and says so.
	LLM string
	// Ollama is the client of LLM calls; nil means OLLAMA_HOST.
	Ollama *api.Client
	// RerankModel is the learned reranker's model file; "" means the
	// model that ships with citefind.
	RerankModel string
}

// Engine answers queries over one database folder. It is safe for
// concurrent use.
type Engine struct {
	dir      string
	store    *corpus.Store
	bm25     *sparse.Retriever
	rm3      *sparse.RM3
	raw      bool
	opts     EngineOptions
	warnings []string

	// The dense side is loaded on first use, so that queries that do not
	// ask for it pay nothing for it.
	denseOnce     sync.Once
	dense         *dense.Retriever
	denseErr      error    // why dense is unavailable
	denseWarnings []string // e.g. a stale dense index

	// weights are the fusion weights in effect: EngineOptions.Weights
	// over the database's defaults over DefaultFusionWeights.
	weights map[string]float64
	// fusionSource says where the default pipeline comes from.
	fusionSource string

	rerankMu  sync.Mutex
	rerankers map[string]rerank.Reranker
	pickerVal selector.Picker
}

// Open opens the database folder dir for querying.
func Open(ctx context.Context, dir string, opts EngineOptions) (*Engine, error) {
	storePath := filepath.Join(dir, StoreFile)
	if _, err := os.Stat(storePath); err != nil {
		return nil, fmt.Errorf("%w at %s (run `citefind index --db %s FILES` first)", ErrNoDatabase, dir, dir)
	}
	st, err := corpus.OpenStore(ctx, storePath)
	if err != nil {
		return nil, err
	}
	if err := checkRetrievers(opts.Retrievers); err != nil {
		st.Close()
		return nil, err
	}
	e := &Engine{dir: dir, store: st, raw: opts.Raw, opts: opts}
	so := opts.Sparse
	if so.K1 == 0 && so.B == 0 && so.K3 == 0 && so.FieldWeights == nil {
		so = DefaultSparseOptions()
	}
	// The index is opened first and its generation read from what was
	// opened: an update may rename a new index into place at any moment,
	// and the engine keeps the snapshot it opened.
	path := filepath.Join(dir, SparseDir)
	e.bm25, err = openSparse(path, so)
	if errors.Is(err, os.ErrNotExist) {
		st.Close()
		return nil, fmt.Errorf("%w: the BM25 index of %s is missing (run `citefind index --db %s` to build it)", ErrNoDatabase, dir, dir)
	}
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("open the BM25 index of %s: %w (run `citefind index --db %s` to rebuild it)", dir, err, dir)
	}
	e.rm3 = &sparse.RM3{R: e.bm25, Docs: e.paperTexts}
	if err := e.applyFusionDefaults(ctx); err != nil {
		e.Close()
		return nil, err
	}
	gen, err := st.Generation(ctx)
	if err != nil {
		e.Close()
		return nil, err
	}
	if v, _ := e.bm25.Meta(metaGeneration); v != strconv.FormatInt(gen, 10) {
		switch pid, writing := WriterActive(dir); {
		case writing:
			e.warnings = append(e.warnings, fmt.Sprintf("an index run (pid %d) is updating %s; results come from the index as it was before that run", pid, dir))
		case opts.AllowStale:
			e.warnings = append(e.warnings, "the BM25 index is older than the store; results may miss recent papers")
		default:
			e.Close()
			return nil, fmt.Errorf("the BM25 index of %s is older than its store (run `citefind index --db %s` to bring it up to date)", dir, dir)
		}
	}
	return e, nil
}

// citing retrieves BM25 hits for each sentence of text that holds a
// citation marker and fuses the lists by RRF (k=60, equal weights). A text
// without such a sentence is searched whole.
func (e *Engine) citing(ctx context.Context, text, cleaned string, k int, plain func(int) ([]corpus.Hit, error)) ([]corpus.Hit, error) {
	sents := retrieve.CitingSentences(text)
	if len(sents) == 0 || (len(sents) == 1 && sents[0] == cleaned) {
		return plain(k)
	}
	if len(sents) == 1 {
		return e.bm25.Retrieve(ctx, sents[0], k)
	}
	lists := make(map[string][]corpus.Hit, len(sents))
	for i, s := range sents {
		hits, err := e.bm25.Retrieve(ctx, s, k)
		if err != nil {
			return nil, err
		}
		lists[strconv.Itoa(i)] = hits
	}
	fused, err := fuse.Fuse(lists, nil, fuse.Options{Method: fuse.RRF, K: k, Depth: k})
	if err != nil {
		return nil, err
	}
	out := make([]corpus.Hit, len(fused))
	for i, h := range fused {
		out[i] = corpus.Hit{ID: h.ID, Score: h.Score}
	}
	return out, nil
}

// applyFusionDefaults fills the retrievers, method and weights that
// EngineOptions leave unset from the database's FusionFile.
func (e *Engine) applyFusionDefaults(ctx context.Context) error {
	cfg, err := ReadFusionConfig(e.dir)
	if err != nil {
		return err
	}
	e.weights = DefaultFusionWeights()
	e.fusionSource = "built-in: bm25 alone"
	if cfg != nil {
		spec, err := RecordedEmbedder(ctx, e.store)
		if err != nil {
			return err
		}
		if slices.Contains(cfg.Retrievers, RetrieverDense) && cfg.Embedder != spec {
			e.warnings = append(e.warnings, fmt.Sprintf("the database's fusion defaults (%s) were measured with the %s embedder, not %s: ignored (run `citefind index --db %s` to reset them)", FusionFile, cfg.Embedder, spec, e.dir))
			cfg = nil
		}
	}
	if cfg != nil {
		if e.opts.Retrievers == nil {
			e.opts.Retrievers = slices.Clone(cfg.Retrievers)
		}
		if e.opts.Fusion == "" {
			e.opts.Fusion = cfg.Method
		}
		for n, w := range cfg.Weights {
			e.weights[n] = w
		}
		e.fusionSource = cfg.Source
	}
	for n, w := range e.opts.Weights {
		e.weights[n] = w
	}
	return nil
}

// DefaultRetrievers returns the retrievers a query uses when it names
// none, and where that choice comes from.
func (e *Engine) DefaultRetrievers() ([]string, string) {
	if len(e.opts.Retrievers) == 0 {
		return []string{RetrieverBM25}, e.fusionSource
	}
	return slices.Clone(e.opts.Retrievers), e.fusionSource
}

// Fusion returns the fusion method and weights in effect.
func (e *Engine) Fusion() (fuse.Method, map[string]float64) {
	m := e.opts.Fusion
	if m == "" {
		m = DefaultFusion
	}
	return m, maps.Clone(e.weights)
}

// paperTexts returns the searchable text (title, abstract, keywords) of
// the given papers, for pseudo-relevance feedback.
func (e *Engine) paperTexts(ctx context.Context, ids []string) (map[string]string, error) {
	papers, err := e.store.GetMany(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(papers))
	for id, p := range papers {
		out[id] = p.Title + "\n" + p.Abstract + "\n" + strings.Join(p.Keywords, ", ")
	}
	return out, nil
}

// Close releases the store and indexes.
func (e *Engine) Close() error {
	return errors.Join(e.bm25.Close(), e.store.Close())
}

// Store returns the engine's paper store.
func (e *Engine) Store() *corpus.Store { return e.store }

// Count returns the number of papers in the BM25 index.
func (e *Engine) Count() int { return e.bm25.Count() }

// QueryOptions configure one query.
type QueryOptions struct {
	K int // hits to return; 0 means 10
	// Retrievers are RetrieverBM25 and/or RetrieverDense; nil means the
	// EngineOptions.Retrievers (by default bm25 alone: hybrid retrieval
	// is opt-in). With both, their hits are fused (EngineOptions.Fusion,
	// Weights) and ResultHit.Score is the fused score.
	Retrievers []string
	Raw        bool // do not strip citation markers from the text
	// Rerank names the reranker applied to the fused candidates:
	// rerank.NameNone ("" means none), NameLearned or NameLLM.
	Rerank string
	// Pick chooses the one paper to cite among the hits (Result.Picked).
	// Without an LLM picker (EngineOptions.LLM) it is the top-ranked
	// candidate, marked as a fallback.
	Pick bool
}

// SourceRank is one retriever's view of a hit.
type SourceRank struct {
	Rank  int     `json:"rank"`  // 1-based
	Score float64 `json:"score"` // the retriever's own score, higher is better
}

// ResultHit is one candidate paper, best first.
type ResultHit struct {
	ID      string                `json:"id"`
	Title   string                `json:"title"`
	Year    int                   `json:"year,omitempty"`
	Authors []string              `json:"authors"`
	Venue   string                `json:"venue,omitempty"`
	DOI     string                `json:"doi,omitempty"`
	Rank    int                   `json:"rank"`
	Score   float64               `json:"score"`
	Sources map[string]SourceRank `json:"sources"`
}

// Result is the answer to one query, in the JSON shape of `query --json`.
type Result struct {
	Query    string      `json:"query"`
	Cleaned  string      `json:"cleaned"`
	Hits     []ResultHit `json:"hits"`
	Picked   *Picked     `json:"picked"`
	Warnings []string    `json:"warnings,omitempty"`
}

// Retrieve runs the retrieval stages on text (citation markers stripped)
// and returns up to k paper hits, best first. It uses the retrievers,
// fusion and strictness of the EngineOptions given to Open. It is what
// evaluation calls.
func (e *Engine) Retrieve(ctx context.Context, text string, k int) ([]corpus.Hit, error) {
	return e.Retriever(e.opts.Retrievers...).Retrieve(ctx, text, k)
}

// Retriever returns a retriever over the named retrievers (none means
// bm25), fused with the Open options when there are several, that cleans
// citation markers from the text unless the engine is Raw. Evaluation
// uses it to report each retriever alone and fused.
func (e *Engine) Retriever(names ...string) retrieve.RetrieverFunc {
	return func(ctx context.Context, text string, k int) ([]corpus.Hit, error) {
		cleaned := text
		if !e.raw {
			cleaned = retrieve.Clean(text)
		}
		hits, _, err := e.search(ctx, text, cleaned, k, names)
		if err != nil {
			return nil, err
		}
		out := make([]corpus.Hit, len(hits))
		for i, h := range hits {
			out[i] = corpus.Hit{ID: h.ID, Score: h.Score}
		}
		return out, nil
	}
}

// loadDense opens the dense index and its embedder, once.
func (e *Engine) loadDense(ctx context.Context) (*dense.Retriever, error) {
	e.denseOnce.Do(func() {
		fail := func(err error) { e.denseErr = fmt.Errorf("the dense retriever is unavailable: %w", err) }
		spec, err := RecordedEmbedder(ctx, e.store)
		if err != nil {
			fail(err)
			return
		}
		h, err := DenseInfo(e.dir)
		switch {
		case spec == EmbedderNone && e.opts.Embedder == nil:
			fail(fmt.Errorf("%w: the database has no embedder (run `citefind index --db %s --embedder builtin`)", dense.ErrNoIndex, e.dir))
			return
		case err != nil:
			fail(fmt.Errorf("%w (run `citefind index --db %s --embedder %s`)", err, e.dir, spec))
			return
		}
		emb := e.opts.Embedder
		if emb == nil {
			if emb, err = openEmbedder(e.dir, spec); err != nil {
				fail(err)
				return
			}
		}
		r, err := dense.Open(filepath.Join(e.dir, DenseDir), emb)
		if err != nil {
			fail(err)
			return
		}
		if gen, err := e.store.Generation(ctx); err == nil && h.Meta[metaGeneration] != strconv.FormatInt(gen, 10) {
			e.denseWarnings = append(e.denseWarnings, "the dense index is older than the store; dense results may miss recent papers (run `citefind index`)")
		}
		e.dense = r
	})
	return e.dense, e.denseErr
}

// DenseAvailable loads the dense index (on first use) and returns why it
// cannot be used, or nil.
func (e *Engine) DenseAvailable(ctx context.Context) error {
	_, err := e.loadDense(ctx)
	return err
}

// denseRetriever is the dense side as a retrieve.Retriever: it fails with the
// reason when the dense index could not be loaded.
func (e *Engine) denseRetriever() retrieve.RetrieverFunc {
	return func(ctx context.Context, q string, k int) ([]corpus.Hit, error) {
		r, err := e.loadDense(ctx)
		if err != nil {
			return nil, err
		}
		return r.Retrieve(ctx, q, k)
	}
}

// search runs the named retrievers on the cleaned text (the citing
// retriever on the text as given) and returns up to k hits, with every
// retriever's rank and score, and warnings.
func (e *Engine) search(ctx context.Context, text, cleaned string, k int, names []string) ([]fuse.Hit, []string, error) {
	names = uniq(names)
	if len(names) == 0 {
		names = []string{RetrieverBM25}
	}
	var rs []fuse.Named
	var warns []string
	// bm25, rm3's feedback and citing's single sentence share one BM25
	// run of the cleaned text.
	depth := max(k, fuse.DefaultDepth)
	plain := sync.OnceValues(func() ([]corpus.Hit, error) { return e.bm25.Retrieve(ctx, cleaned, depth) })
	top := func(k int) ([]corpus.Hit, error) {
		if k > depth {
			return e.bm25.Retrieve(ctx, cleaned, k)
		}
		hits, err := plain()
		return hits[:min(k, len(hits))], err
	}
	for _, n := range names {
		switch n {
		case RetrieverBM25:
			rs = append(rs, fuse.Named{Name: n, Retriever: retrieve.RetrieverFunc(func(ctx context.Context, _ string, k int) ([]corpus.Hit, error) {
				return top(k)
			})})
		case RetrieverRM3:
			rs = append(rs, fuse.Named{Name: n, Retriever: retrieve.RetrieverFunc(func(ctx context.Context, _ string, k int) ([]corpus.Hit, error) {
				fb, err := top(sparse.DefaultFbDocs)
				if err != nil {
					return nil, err
				}
				terms, err := e.rm3.ExpandFrom(ctx, cleaned, fb)
				if err != nil {
					return nil, err
				}
				return e.bm25.RetrieveTerms(ctx, terms, k)
			})})
		case RetrieverCiting:
			rs = append(rs, fuse.Named{Name: n, Retriever: retrieve.RetrieverFunc(func(ctx context.Context, _ string, k int) ([]corpus.Hit, error) {
				return e.citing(ctx, text, cleaned, k, top)
			})})
		case RetrieverDense:
			rs = append(rs, fuse.Named{Name: n, Retriever: e.denseRetriever()})
		default:
			return nil, nil, checkRetrievers([]string{n})
		}
	}
	if len(rs) == 1 {
		hits, err := rs[0].Retriever.Retrieve(ctx, cleaned, k)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", rs[0].Name, err)
		}
		if rs[0].Name == RetrieverDense {
			warns = append(warns, e.denseWarnings...)
		}
		out := make([]fuse.Hit, len(hits))
		for i, h := range hits {
			out[i] = fuse.Hit{ID: h.ID, Score: h.Score, Count: 1,
				Sources: map[string]fuse.Source{rs[0].Name: {Rank: i + 1, Score: h.Score}}}
		}
		return out, warns, nil
	}
	weights := e.weights
	for i := range rs {
		w, ok := weights[rs[i].Name]
		switch {
		case !ok:
			w = 1
		case w == 0:
			rs[i].Shadow = true
		}
		rs[i].Weight = w
	}
	method := e.opts.Fusion
	if method == "" {
		method = DefaultFusion
	}
	timeout := e.opts.Timeout
	switch {
	case timeout == 0:
		timeout = DefaultRetrieverTimeout
	case timeout < 0:
		timeout = 0
	}
	if slices.Contains(names, RetrieverDense) {
		// Load the dense index before the retrievers' deadline starts:
		// the first query of a process would otherwise spend its budget
		// reading the index. A load failure is reported by the dense
		// retriever itself.
		_, _ = e.loadDense(ctx)
	}
	res, err := fuse.Search(ctx, cleaned, rs, fuse.Options{
		Method: method, K: k, Depth: max(k, fuse.DefaultDepth),
		Timeout: timeout, AllowPartial: !e.opts.Strict,
	})
	if err != nil {
		return nil, nil, err
	}
	// The dense retriever returned (so loadDense finished, and Search
	// waited for it) unless it is among the failures.
	isDense := func(f fuse.Failure) bool { return f.Retriever == RetrieverDense }
	if slices.Contains(names, RetrieverDense) && !slices.ContainsFunc(res.Failures, isDense) {
		warns = append(warns, e.denseWarnings...)
	}
	warns = append(warns, res.Warnings...)
	return res.Hits, warns, nil
}

func uniq(names []string) []string {
	var out []string
	for _, n := range names {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// Candidates runs the retrievers named in opts (nil: the engine's) on the
// text (citation markers stripped unless opts.Raw) and returns up to
// opts.K fused candidates with their papers' metadata, best first, the
// cleaned text and warnings. It is the input of rerankers and pickers.
func (e *Engine) Candidates(ctx context.Context, text string, opts QueryOptions) ([]rerank.Candidate, string, []string, error) {
	k := opts.K
	if k <= 0 {
		k = 10
	}
	names := opts.Retrievers
	if names == nil {
		names = e.opts.Retrievers
	}
	if err := checkRetrievers(names); err != nil {
		return nil, "", nil, err
	}
	cleaned := text
	if !opts.Raw {
		cleaned = retrieve.Clean(text)
	}
	warnings := slices.Clone(e.warnings)
	if strings.TrimSpace(cleaned) == "" {
		return []rerank.Candidate{}, cleaned, append(warnings, "the query is empty after removing citation markers"), nil
	}
	hits, warns, err := e.search(ctx, text, cleaned, k, names)
	if err != nil {
		return nil, cleaned, nil, err
	}
	warnings = append(warnings, warns...)
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	papers, err := e.store.GetMany(ctx, ids)
	if err != nil {
		return nil, cleaned, nil, fmt.Errorf("look up hits: %w", err)
	}
	cands := make([]rerank.Candidate, 0, len(hits))
	for _, h := range hits {
		p, ok := papers[h.ID]
		if !ok {
			warnings = append(warnings, fmt.Sprintf("hit %s is in the index but not in the store (run `citefind index` to rebuild)", h.ID))
			continue
		}
		c := rerank.Candidate{
			ID: h.ID, Title: p.Title, Abstract: p.Abstract, Year: p.Year, Venue: p.Venue, DOI: p.DOI,
			Keywords: p.Keywords, Authors: []string{},
			Rank: len(cands) + 1, Score: h.Score, Sources: h.Sources,
		}
		for _, a := range p.Authors {
			c.Authors = append(c.Authors, a.Name())
		}
		cands = append(cands, c)
	}
	return cands, cleaned, warnings, nil
}
