package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/citefind/citefind"
	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/db"
	"github.com/citefind/citefind/fuse"
	"github.com/citefind/citefind/rerank"
	"github.com/citefind/citefind/retrieve"
	"github.com/citefind/citefind/retrieve/dense"
	_ "github.com/citefind/citefind/retrieve/local" // the default backend
	"github.com/citefind/citefind/retrieve/sparse"
	"github.com/citefind/citefind/selector"
)

// Defaults of the pipeline's query side.
const (
	// DefaultK is the number of hits of a query that asks for none.
	DefaultK = 10
	// DefaultRetrieverTimeout is each retriever's time budget when several
	// run.
	DefaultRetrieverTimeout = 5 * time.Second
	// RerankDepth is how many fused candidates a reranker reorders, unless
	// it names its own depth (rerank.DepthBound: the learned reranker
	// reorders as many as its model was trained on). A search fetches at
	// least this many, and at least the hits asked for; those below the
	// reranker's depth follow the reranked ones in fused order.
	RerankDepth = 100
)

// DefaultSparse are the BM25 settings citefind ships, tuned on ACM-CR
// (docs/bm25.md): k1 2.0, b 0.75, query-term saturation k3 1, and the
// combined text field plus the title at weight 0.25.
func DefaultSparse() sparse.Options {
	return sparse.Options{K1: 2.0, B: 0.75, K3: 1,
		FieldWeights: map[string]float64{sparse.FieldText: 1, sparse.FieldTitle: 0.25}}
}

// Options configure Open. The zero value answers with the database's
// pipeline, BM25 settings DefaultSparse, and fails on a stale index.
type Options struct {
	// Sparse sets BM25 parameters and field weights; the zero value means
	// DefaultSparse().
	Sparse sparse.Options
	// AllowStale opens an index older than the store (with a warning in
	// every result) instead of failing.
	AllowStale bool
	// Raw searches query texts as given, without removing citation
	// markers (QueryOptions.Raw does it for one query).
	Raw bool
	// Retrievers, Fusion and Weights override the database's pipeline
	// (db.DB.QueryPipeline): nil/"" keep its retrievers and method, and
	// a retriever missing from Weights keeps its weight there (1 when it
	// has none).
	Retrievers []string
	Fusion     fuse.Method
	Weights    map[string]float64
	// Rerank overrides the pipeline's default reranker ("" keeps it;
	// "none" turns it off).
	Rerank string
	// Timeout is each retriever's time budget when several run; 0 means
	// DefaultRetrieverTimeout, negative means none.
	Timeout time.Duration
	// Strict makes any retriever failure fail the query. By default, when
	// several retrievers run, a failing one is reported in
	// Result.Warnings and the others' hits are fused.
	Strict bool
	// Embedder, when not nil, replaces the embedder the database records
	// for embedding queries (tests, experiments).
	Embedder dense.Embedder
	// LLM is the Ollama chat model of the LLM reranker and picker (--llm);
	// "" means $CITEFIND_LLM, else llm.DefaultModel for the reranker. The
	// picker uses a model only when LLM or $CITEFIND_LLM is set;
	// otherwise it picks the top rank and says so.
	LLM string
	// Ollama is the client of LLM calls; nil means OLLAMA_HOST.
	Ollama *api.Client
	// RerankModel is the learned reranker's model file; "" means the
	// model that ships with citefind.
	RerankModel string
	// Backend overrides the backend URL the database records ("").
	Backend string
}

// resolve checks the names opts gives and fills the BM25 defaults.
func (o *Options) resolve() error {
	if err := citefind.CheckRetrievers(o.Retrievers); err != nil {
		return err
	}
	if err := citefind.CheckReranker(o.Rerank); err != nil {
		return err
	}
	if so := o.Sparse; so.K1 == 0 && so.B == 0 && so.K3 == 0 && so.FieldWeights == nil {
		o.Sparse = DefaultSparse()
	}
	return nil
}

// Engine answers queries over one database. It is safe for concurrent
// use; Refresh swaps in the indexes of a newer store generation without
// disturbing queries in flight.
type Engine struct {
	db   *db.DB // nil when serving from a remote backend alone (OpenBackend)
	opts Options
	// snap is the backend and the pipeline in effect; Refresh replaces
	// it whole while queries read it.
	snap      atomic.Pointer[snapshot]
	refreshMu sync.Mutex

	rerankMu  sync.Mutex
	rerankers map[string]rerank.Reranker
	pickerVal selector.Picker
}

// pipeState is the pipeline in effect, immutable once stored.
type pipeState struct {
	retrievers []string
	method     fuse.Method
	weights    map[string]float64
	rerankName string
	source     string
	warnings   []string // about the pipeline, in every result
}

// snapshot is the backend the engine answers from, with the store
// generation it reflects and the pipeline read with it. Queries hold a
// reference while they run; a snapshot replaced by Refresh is closed when
// the last one ends.
type snapshot struct {
	pipe     *pipeState
	backend  retrieve.Backend
	gen      int64
	warnings []string
	refs     atomic.Int64 // 1 while current, +1 per query in flight

	embedOnce sync.Once
	emb       dense.Embedder
	embedErr  error
	denseWarn []string
}

func (s *snapshot) acquire() bool {
	for {
		n := s.refs.Load()
		if n <= 0 {
			return false
		}
		if s.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

func (s *snapshot) release() {
	if s.refs.Add(-1) == 0 {
		s.backend.Close()
	}
}

// Open opens the database in dir for querying. It fails with
// db.ErrNoDatabase (wrapped, with the command that fixes it) when there
// is no store or no index, and when the index is older than the store
// unless opts.AllowStale or an index run is updating it.
func Open(ctx context.Context, dir string, opts Options) (*Engine, error) {
	if err := opts.resolve(); err != nil {
		return nil, err
	}
	d, err := db.Open(ctx, dir)
	if err != nil {
		return nil, err
	}
	e := &Engine{db: d, opts: opts}
	s, err := e.openSnapshot(ctx)
	if err != nil {
		d.Close()
		return nil, err
	}
	if s.pipe, err = e.readPipeline(ctx, s); err != nil {
		s.release()
		d.Close()
		return nil, err
	}
	e.snap.Store(s)
	return e, nil
}

// OpenBackend opens an engine over a remote backend alone, with no local
// database (several serve processes sharing one cluster): paper metadata
// comes from the backend's stored objects, the pipeline is the built-in
// one of the embedder the backend's vectors were made with, and aliases
// (record keys) are not known (papers are found by ID). Dense retrieval
// needs an embedder that lives outside the database folder (ollama:MODEL,
// or Options.Embedder).
func OpenBackend(ctx context.Context, url string, opts Options) (*Engine, error) {
	if err := opts.resolve(); err != nil {
		return nil, err
	}
	opts.Backend = url
	e := &Engine{opts: opts}
	s, err := e.openSnapshot(ctx)
	if err != nil {
		return nil, err
	}
	if s.pipe, err = e.readPipeline(ctx, s); err != nil {
		s.release()
		return nil, err
	}
	e.snap.Store(s)
	return e, nil
}

// readPipeline returns the retrievers, fusion, weights and reranker of the
// database's pipeline with the Options over it. Without a database it is
// the pipeline of the backend of s.
func (e *Engine) readPipeline(ctx context.Context, s *snapshot) (*pipeState, error) {
	var p db.Pipeline
	var warns []string
	var err error
	if e.db != nil {
		p, warns, err = e.db.QueryPipeline(ctx)
	} else {
		p, err = remotePipeline(ctx, s)
	}
	if err != nil {
		return nil, err
	}
	ps := &pipeState{warnings: warns, retrievers: slices.Clone(p.Retrievers), method: p.Method, source: p.Source,
		weights: maps.Clone(p.Weights), rerankName: p.Rerank}
	if ps.weights == nil {
		ps.weights = map[string]float64{}
	}
	if e.opts.Retrievers != nil {
		ps.retrievers = slices.Clone(e.opts.Retrievers)
	}
	if e.opts.Fusion != "" {
		ps.method = e.opts.Fusion
	}
	maps.Copy(ps.weights, e.opts.Weights)
	if e.opts.Rerank != "" {
		ps.rerankName = e.opts.Rerank
	}
	if ps.rerankName == "" {
		ps.rerankName = rerank.NameNone
	}
	return ps, nil
}

// remotePipeline is the pipeline of an engine without a database: the
// built-in one of the backend's embedder.
func remotePipeline(ctx context.Context, s *snapshot) (db.Pipeline, error) {
	st, err := s.backend.Stats(ctx)
	if err != nil {
		return db.Pipeline{}, err
	}
	spec, err := db.ParseEmbedder(st.Embedder)
	if err != nil {
		return db.Pipeline{}, err
	}
	p := db.BuiltinPipeline(spec)
	p.Source += "; serving from the " + s.backend.Name() + " backend alone"
	return p, nil
}

// openSnapshot opens the database's backend and checks it against the
// store generation.
func (e *Engine) openSnapshot(ctx context.Context) (*snapshot, error) {
	so := e.opts.Sparse
	params := retrieve.BM25Params{K1: so.K1, B: so.B, FieldWeights: so.FieldWeights}
	if e.db == nil {
		b, err := retrieve.OpenBackend(ctx, e.opts.Backend, retrieve.Env{BM25: params})
		if err != nil {
			return nil, err
		}
		st, err := b.Stats(ctx)
		if err != nil {
			b.Close()
			return nil, fmt.Errorf("%s backend: %w", b.Name(), err)
		}
		if bm, _ := st.Index("bm25"); !bm.Exists {
			b.Close()
			return nil, fmt.Errorf("%w: the %s backend %s holds no papers (run `citefind index --backend %s FILES`)", db.ErrNoDatabase, b.Name(), e.opts.Backend, e.opts.Backend)
		}
		s := &snapshot{backend: b, gen: st.Generation}
		s.refs.Store(1)
		return s, nil
	}
	dir := e.db.Dir
	b, err := e.db.OpenBackend(ctx, e.opts.Backend, params)
	if err != nil {
		return nil, err
	}
	st, err := b.Stats(ctx)
	if err != nil {
		b.Close()
		return nil, fmt.Errorf("%s backend of %s: %w", b.Name(), dir, err)
	}
	bm, _ := st.Index("bm25")
	switch {
	case !bm.Exists:
		b.Close()
		return nil, fmt.Errorf("%w: the BM25 index of %s is missing (run `citefind index --db %s` to build it)", db.ErrNoDatabase, dir, dir)
	case bm.Error != "":
		b.Close()
		return nil, fmt.Errorf("open the BM25 index of %s: %s (run `citefind index --db %s` to rebuild it)", dir, bm.Error, dir)
	}
	// The generation is read after the backend was opened: an update may
	// rename a new index into place at any moment, and the snapshot keeps
	// the index it opened.
	gen, err := e.db.Store.Generation(ctx)
	if err != nil {
		b.Close()
		return nil, err
	}
	s := &snapshot{backend: b, gen: st.Generation}
	s.refs.Store(1)
	if st.Generation != gen {
		switch pid, writing := db.WriterActive(dir); {
		case writing:
			s.warnings = append(s.warnings, fmt.Sprintf("an index run (pid %d) is updating %s; results come from the index as it was before that run", pid, dir))
		case e.opts.AllowStale:
			s.warnings = append(s.warnings, "the BM25 index is older than the store; results may miss recent papers")
		default:
			b.Close()
			return nil, fmt.Errorf("the BM25 index of %s is older than its store (run `citefind index --db %s` to bring it up to date)", dir, dir)
		}
	}
	return s, nil
}

// acquire returns the current snapshot with a reference held (release
// it), nil when the engine is closed.
func (e *Engine) acquire() *snapshot {
	for {
		s := e.snap.Load()
		if s == nil || s.acquire() {
			return s
		}
	}
}

// Refresh reopens the backend when the store has moved to another
// generation since the engine's indexes were opened (an index or remove
// run by another process) and the indexes have caught up with it; queries
// in flight finish on the old indexes. It reports whether it swapped.
func (e *Engine) Refresh(ctx context.Context) (bool, error) {
	e.refreshMu.Lock()
	defer e.refreshMu.Unlock()
	cur := e.snap.Load()
	if cur == nil {
		return false, errClosed
	}
	var gen int64
	var err error
	if e.db == nil {
		// No store: the backend's own generation (its last complete sync).
		if g, ok := cur.backend.(retrieve.GenerationReporter); ok {
			gen, err = g.Generation(ctx)
		} else {
			st, serr := cur.backend.Stats(ctx)
			gen, err = st.Generation, serr
		}
	} else {
		gen, err = e.db.Store.Generation(ctx)
	}
	if err != nil {
		return false, err
	}
	if gen == cur.gen {
		return false, nil
	}
	if e.db != nil {
		if _, writing := db.WriterActive(e.db.Dir); writing {
			return false, nil // the run is still writing; try again later
		}
	}
	s, err := e.openSnapshot(ctx)
	if err != nil {
		return false, err
	}
	if s.pipe, err = e.readPipeline(ctx, s); err != nil {
		s.release()
		return false, err
	}
	if old := e.snap.Swap(s); old != nil {
		old.release()
	}
	return true, nil
}

// Follow calls Refresh every interval until ctx is done, reporting errors
// (and swaps, with err nil) to report, which may be nil.
func (e *Engine) Follow(ctx context.Context, interval time.Duration, report func(swapped bool, err error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			swapped, err := e.Refresh(ctx)
			if report != nil && (swapped || err != nil) {
				report(swapped, err)
			}
		}
	}
}

// Generation returns the store generation the engine's indexes reflect.
func (e *Engine) Generation() int64 {
	if s := e.snap.Load(); s != nil {
		return s.gen
	}
	return -1
}

// Close releases the store and indexes.
func (e *Engine) Close() error {
	s := e.snap.Swap(nil)
	if s != nil {
		s.release()
	}
	if e.db == nil {
		return nil
	}
	return e.db.Close()
}

// Store returns the engine's paper store; nil when the engine serves from
// a remote backend alone (OpenBackend): use Papers.
func (e *Engine) Store() *corpus.Store {
	if e.db == nil {
		return nil
	}
	return e.db.Store
}

// Dir returns the database folder ("" without one).
func (e *Engine) Dir() string {
	if e.db == nil {
		return ""
	}
	return e.db.Dir
}

// PaperLookup finds papers by ID or alias. *corpus.Store is one.
type PaperLookup interface {
	GetMany(ctx context.Context, idsOrAliases []string) (map[string]corpus.Paper, error)
	Get(ctx context.Context, idOrAlias string) (corpus.Paper, error)
}

// Papers returns where the engine's papers are looked up: the store, or,
// serving from a remote backend alone, the backend (by paper ID only).
func (e *Engine) Papers() PaperLookup {
	if e.db != nil {
		return e.db.Store
	}
	return backendLookup{e}
}

// backendLookup looks papers up in the current backend.
type backendLookup struct{ e *Engine }

func (l backendLookup) GetMany(ctx context.Context, ids []string) (map[string]corpus.Paper, error) {
	s := l.e.acquire()
	if s == nil {
		return nil, errClosed
	}
	defer s.release()
	return s.backend.Papers(ctx, ids)
}

func (l backendLookup) Get(ctx context.Context, id string) (corpus.Paper, error) {
	m, err := l.GetMany(ctx, []string{id})
	if err != nil {
		return corpus.Paper{}, err
	}
	p, ok := m[id]
	if !ok {
		return corpus.Paper{}, fmt.Errorf("%q: %w", id, corpus.ErrNotFound)
	}
	return p, nil
}

// Count returns the number of papers in the BM25 index.
func (e *Engine) Count(ctx context.Context) int {
	s := e.acquire()
	if s == nil {
		return 0
	}
	defer s.release()
	st, err := s.backend.Stats(ctx)
	if err != nil {
		return 0
	}
	return st.Papers
}

// Pipeline describes the pipeline in effect: retrievers, fusion method
// and weights, default reranker, and where they come from.
type Pipeline struct {
	Retrievers []string
	Method     fuse.Method
	Weights    map[string]float64
	Rerank     string
	Source     string
}

// Pipeline returns the pipeline queries run when they override nothing.
func (e *Engine) Pipeline() Pipeline {
	s := e.acquire()
	if s == nil {
		return Pipeline{}
	}
	defer s.release()
	p := s.pipe
	return Pipeline{Retrievers: slices.Clone(p.retrievers), Method: p.method, Weights: maps.Clone(p.weights),
		Rerank: p.rerankName, Source: p.source}
}

// DenseAvailable reports why the dense retriever cannot be used, or nil.
func (e *Engine) DenseAvailable(ctx context.Context) error {
	s := e.acquire()
	if s == nil {
		return errClosed
	}
	defer s.release()
	_, err := e.embedder(ctx, s)
	return err
}

// DenseModel returns the identity of the model the dense retriever embeds
// queries with (dense.Embedder.Model, e.g. "contrast-768@4a75e8b14ab4"),
// or the reason it cannot be used. Settings that cache what a search
// returns record it.
func (e *Engine) DenseModel(ctx context.Context) (string, error) {
	s := e.acquire()
	if s == nil {
		return "", errClosed
	}
	defer s.release()
	emb, err := e.embedder(ctx, s)
	if err != nil {
		return "", err
	}
	return emb.Model(), nil
}

// embedder opens the query embedder of the snapshot's vectors, once.
func (e *Engine) embedder(ctx context.Context, s *snapshot) (dense.Embedder, error) {
	s.embedOnce.Do(func() {
		fail := func(err error) { s.embedErr = fmt.Errorf("the dense retriever is unavailable: %w", err) }
		st, err := s.backend.Stats(ctx)
		if err != nil {
			fail(err)
			return
		}
		dir, spec := e.Dir(), st.Embedder
		if e.db != nil {
			if spec, err = e.db.Embedder(ctx); err != nil {
				fail(err)
				return
			}
		} else if db.TrainedInFolder(spec) && e.opts.Embedder == nil {
			fail(fmt.Errorf("%w: the %s embedder's model lives in the database folder; serving from the %s backend alone, dense retrieval needs an ollama:MODEL embedder", dense.ErrNoIndex, spec, s.backend.Name()))
			return
		}
		dn, _ := st.Index("dense")
		switch {
		case spec == db.EmbedderNone && e.opts.Embedder == nil:
			fail(fmt.Errorf("%w: the database has no embedder (run `citefind index --db %s --embedder contrast`)", dense.ErrNoIndex, dir))
			return
		case !dn.Exists:
			fail(fmt.Errorf("%w (run `citefind index --db %s --embedder %s`)", dense.ErrNoIndex, dir, spec))
			return
		case dn.Error != "":
			fail(fmt.Errorf("%s (run `citefind index --db %s --embedder %s`)", dn.Error, dir, spec))
			return
		}
		emb := e.opts.Embedder
		if emb == nil {
			if emb, err = db.OpenEmbedder(dir, spec); err != nil {
				fail(err)
				return
			}
		}
		switch {
		case st.VectorModel != "" && emb.Model() != st.VectorModel:
			fail(fmt.Errorf("%w: index has %q, embedder is %q", dense.ErrModelMismatch, st.VectorModel, emb.Model()))
			return
		case st.VectorModel == "" && e.opts.Embedder == nil && st.Embedder != spec:
			// The backend knows the embedder spec, not the model.
			fail(fmt.Errorf("%w: the %s backend holds vectors of %q, the database records %q (run `citefind index --db %s`)", dense.ErrModelMismatch, s.backend.Name(), st.Embedder, spec, dir))
			return
		}
		if d := emb.Dim(); d != 0 && d != st.Dim {
			fail(fmt.Errorf("%w: index has dimension %d, embedder %d", dense.ErrModelMismatch, st.Dim, d))
			return
		}
		if lb, ok := s.backend.(interface{ LoadDense() error }); ok {
			// Load the vectors now, before a retriever's deadline runs.
			if err := lb.LoadDense(); err != nil {
				fail(err)
				return
			}
		}
		if dn.Generation != s.gen {
			s.denseWarn = append(s.denseWarn, "the dense index is older than the store; dense results may miss recent papers (run `citefind index`)")
		}
		s.emb = emb
	})
	return s.emb, s.embedErr
}

// retrievers returns the named retrievers over the snapshot's backend for
// one query: text as given (citing) and cleaned (the others). bm25, rm3's
// feedback and citing's single sentence share one BM25 run of the cleaned
// text, depth deep.
func (e *Engine) namedRetrievers(ctx context.Context, s *snapshot, text, cleaned string, depth int, names []string) ([]fuse.Named, error) {
	b := s.backend
	k3 := e.opts.Sparse.K3
	bm25 := func(ctx context.Context, q string, k int) ([]corpus.Hit, error) {
		terms, err := sparse.QueryTerms(q, k3)
		if err != nil {
			return nil, err
		}
		if len(terms) == 0 {
			return []corpus.Hit{}, nil
		}
		return b.BM25(ctx, terms, k)
	}
	plain := sync.OnceValues(func() ([]corpus.Hit, error) { return bm25(ctx, cleaned, depth) })
	top := func(k int) ([]corpus.Hit, error) {
		if k > depth {
			return bm25(ctx, cleaned, k)
		}
		hits, err := plain()
		return hits[:min(k, len(hits))], err
	}
	var rs []fuse.Named
	for _, n := range names {
		var r retrieve.RetrieverFunc
		switch n {
		case citefind.RetrieverBM25:
			r = func(ctx context.Context, _ string, k int) ([]corpus.Hit, error) { return top(k) }
		case citefind.RetrieverRM3:
			r = func(ctx context.Context, _ string, k int) ([]corpus.Hit, error) {
				fb, err := top(sparse.DefaultFbDocs)
				if err != nil {
					return nil, err
				}
				m := &sparse.RM3{Index: b, K3: k3, Docs: func(ctx context.Context, ids []string) (map[string]string, error) {
					return paperTexts(ctx, b, ids)
				}}
				terms, err := m.ExpandFrom(ctx, cleaned, fb)
				if err != nil {
					return nil, err
				}
				return b.BM25(ctx, terms, k)
			}
		case citefind.RetrieverCiting:
			r = func(ctx context.Context, _ string, k int) ([]corpus.Hit, error) {
				return citing(ctx, text, cleaned, k, top, bm25)
			}
		case citefind.RetrieverDense:
			r = func(ctx context.Context, _ string, k int) ([]corpus.Hit, error) {
				emb, err := e.embedder(ctx, s)
				if err != nil {
					return nil, err
				}
				// the sentences around the citations weigh more
				vec, err := dense.QueryVector(ctx, emb, text)
				if err != nil {
					return nil, err
				}
				return b.Vector(ctx, vec, k)
			}
		default:
			return nil, citefind.CheckRetrievers([]string{n})
		}
		rs = append(rs, fuse.Named{Name: n, Retriever: r})
	}
	return rs, nil
}

// paperTexts returns the searchable text (title, abstract, keywords) of
// the given papers, for pseudo-relevance feedback.
func paperTexts(ctx context.Context, b retrieve.Backend, ids []string) (map[string]string, error) {
	papers, err := b.Papers(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(papers))
	for id, p := range papers {
		out[id] = p.Title + "\n" + p.Abstract + "\n" + strings.Join(p.Keywords, ", ")
	}
	return out, nil
}

// citing retrieves BM25 hits for each sentence of text that holds a
// citation marker and fuses the lists by RRF (k=60, equal weights). A text
// without such a sentence is searched whole (plain).
func citing(ctx context.Context, text, cleaned string, k int, plain func(int) ([]corpus.Hit, error), bm25 retrieve.RetrieverFunc) ([]corpus.Hit, error) {
	sents := retrieve.CitingSentences(text)
	if len(sents) == 0 || (len(sents) == 1 && sents[0] == cleaned) {
		return plain(k)
	}
	if len(sents) == 1 {
		return bm25(ctx, sents[0], k)
	}
	lists := make(map[string][]corpus.Hit, len(sents))
	for i, s := range sents {
		hits, err := bm25(ctx, s, k)
		if err != nil {
			return nil, err
		}
		lists[fmt.Sprint(i)] = hits
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

// retrieve runs the named retrievers (in parallel, fused when several) and
// returns up to k fused hits with every retriever's rank and score, each
// retriever's own list, warnings, and how long each took.
func (e *Engine) retrieve(ctx context.Context, s *snapshot, p *pipeState, text, cleaned string, k int, names []string) (*fuse.Result, []string, error) {
	depth := max(k, fuse.DefaultDepth)
	rs, err := e.namedRetrievers(ctx, s, text, cleaned, depth, names)
	if err != nil {
		return nil, nil, err
	}
	usesDense := slices.Contains(names, citefind.RetrieverDense)
	var warns []string
	if len(rs) == 1 {
		start := time.Now()
		hits, err := rs[0].Retriever.Retrieve(ctx, cleaned, k)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", rs[0].Name, err)
		}
		if usesDense {
			warns = append(warns, s.denseWarn...)
		}
		res := &fuse.Result{Hits: make([]fuse.Hit, len(hits)),
			Lists: map[string][]corpus.Hit{rs[0].Name: hits}, Latency: map[string]time.Duration{rs[0].Name: time.Since(start)}}
		for i, h := range hits {
			res.Hits[i] = fuse.Hit{ID: h.ID, Score: h.Score, Count: 1,
				Sources: map[string]fuse.Source{rs[0].Name: {Rank: i + 1, Score: h.Score}}}
		}
		return res, warns, nil
	}
	for i := range rs {
		w, ok := p.weights[rs[i].Name]
		switch {
		case !ok:
			w = 1
		case w == 0:
			rs[i].Shadow = true
		}
		rs[i].Weight = w
	}
	timeout := e.opts.Timeout
	switch {
	case timeout == 0:
		timeout = DefaultRetrieverTimeout
	case timeout < 0:
		timeout = 0
	}
	if usesDense {
		// Open the embedder and load the dense index before the
		// retrievers' deadline starts: the first query of a process would
		// otherwise spend its budget reading the index. A failure is
		// reported by the dense retriever itself.
		_, _ = e.embedder(ctx, s)
	}
	res, err := fuse.Search(ctx, cleaned, rs, fuse.Options{
		Method: p.method, K: k, Depth: depth, NormDepth: fuse.DefaultDepth,
		Timeout: timeout, AllowPartial: !e.opts.Strict,
	})
	if err != nil {
		return nil, nil, err
	}
	isDense := func(f fuse.Failure) bool { return f.Retriever == citefind.RetrieverDense }
	if usesDense && !slices.ContainsFunc(res.Failures, isDense) {
		warns = append(warns, s.denseWarn...)
	}
	return res, append(warns, res.Warnings...), nil
}

// Search answers one query: the retrievers (in parallel) on the text with
// citation markers removed, their fusion, the reranker and, with
// opts.Pick, the picker. Result.Hits holds up to opts.K hits best first
// with their metadata; Result.Stages holds what each stage produced. A
// failing reranker or LLM picker gives the fused order and the top rank,
// with a warning.
func (e *Engine) Search(ctx context.Context, text string, opts citefind.QueryOptions) (*citefind.Result, error) {
	k := opts.K
	if k <= 0 {
		k = DefaultK
	}
	s := e.acquire()
	if s == nil {
		return nil, errClosed
	}
	defer s.release()
	p := s.pipe
	names := opts.Retrievers
	if names == nil {
		names = p.retrievers
	}
	names = uniq(names)
	if len(names) == 0 {
		names = []string{citefind.RetrieverBM25}
	}
	if err := citefind.CheckRetrievers(names); err != nil {
		return nil, err
	}
	rerankName := opts.Rerank
	fromPipeline := rerankName == ""
	if fromPipeline {
		rerankName = p.rerankName
	}
	rr, err := e.reranker(rerankName, names)
	if err != nil {
		return nil, err
	}
	var rerankWarning string
	if rb, ok := rr.(rerank.RetrieverBound); ok {
		if err := rb.CheckRetrievers(names); err != nil {
			if !fromPipeline {
				return nil, err
			}
			// The database's reranker was made for the pipeline's
			// retrievers; a search that picks others is not reranked.
			rerankWarning = fmt.Sprintf("not reranked: the database's %s reranker was made for other retrievers than %s (pass --rerank none to leave it out)", rr.Name(), strings.Join(names, ","))
			rr = rerank.None{}
		}
	}

	cleaned := text
	if !opts.Raw && !e.opts.Raw {
		cleaned = retrieve.Clean(text)
	}
	res := &citefind.Result{Query: text, Cleaned: cleaned, Hits: []citefind.Hit{},
		Warnings: append(slices.Clone(p.warnings), s.warnings...),
		Stages:   citefind.Stages{Retrievers: map[string][]corpus.Hit{}, Reranker: rr.Name(), Durations: map[string]time.Duration{}}}
	if rerankWarning != "" {
		res.Warnings = append(res.Warnings, rerankWarning)
	}
	if strings.TrimSpace(cleaned) == "" {
		res.Warnings = append(res.Warnings, "the query is empty after removing citation markers")
		return res, nil
	}
	depth, rerankDepth := k, RerankDepth
	if rr.Name() != rerank.NameNone {
		if db, ok := rr.(rerank.DepthBound); ok && db.Depth() > 0 {
			rerankDepth = db.Depth()
		}
		depth = max(k, rerankDepth)
		if pr, ok := rr.(rerank.Preparer); ok {
			go pr.Prepare(text)
		}
	}
	start := time.Now()
	fr, warns, err := e.retrieve(ctx, s, p, text, cleaned, depth, names)
	if err != nil {
		return nil, err
	}
	res.Warnings = append(res.Warnings, warns...)
	res.Stages.Retrievers = fr.Lists
	maps.Copy(res.Stages.Durations, fr.Latency)
	cands, warns, err := e.candidates(ctx, s, fr.Hits)
	if err != nil {
		return nil, err
	}
	res.Warnings = append(res.Warnings, warns...)
	res.Stages.Durations["fused"] = time.Since(start)
	res.Stages.Candidates = cands

	if rr.Name() != rerank.NameNone && len(cands) > 1 {
		start := time.Now()
		// the reranker reorders its depth's worth; candidates below
		// follow in fused order
		head, tail := cands, []rerank.Candidate(nil)
		if len(cands) > rerankDepth {
			head, tail = cands[:rerankDepth], cands[rerankDepth:]
		}
		out, err := rr.Rerank(ctx, text, head)
		if err != nil {
			return nil, fmt.Errorf("rerank: %w", err)
		}
		res.Warnings = append(res.Warnings, out.Warnings...)
		if len(out.Candidates) != len(head) {
			res.Warnings = append(res.Warnings, fmt.Sprintf("the %s reranker returned %d of %d candidates; kept the fused order", rr.Name(), len(out.Candidates), len(head)))
		} else {
			// The hits carry the reranker's rank and score (its own, or
			// one by position for a reranker without scores), and the
			// fused ones as the source "fused".
			reranked := make([]rerank.Candidate, len(out.Candidates))
			res.Stages.Reranked = make([]corpus.Hit, len(out.Candidates))
			for i, c := range out.Candidates {
				score := float64(len(out.Candidates) - i)
				if len(out.Scores) == len(out.Candidates) {
					score = out.Scores[i]
				}
				res.Stages.Reranked[i] = corpus.Hit{ID: c.ID, Score: score}
				c.Sources = maps.Clone(c.Sources)
				c.Sources[citefind.SourceFused] = fuse.Source{Rank: c.Rank, Score: c.Score}
				c.Sources[rr.Name()] = fuse.Source{Rank: i + 1, Score: score}
				c.Rank, c.Score = i+1, score
				reranked[i] = c
			}
			// below the reranked ones, in fused order, scored below the
			// last of them so that scores still decrease (TREC run files
			// are read by score)
			last := 0.0
			if len(reranked) > 0 {
				last = reranked[len(reranked)-1].Score
			}
			for j, c := range tail {
				score := last - float64(j+1)
				res.Stages.Reranked = append(res.Stages.Reranked, corpus.Hit{ID: c.ID, Score: score})
				c.Sources = maps.Clone(c.Sources)
				c.Sources[citefind.SourceFused] = fuse.Source{Rank: c.Rank, Score: c.Score}
				c.Rank, c.Score = len(reranked)+j+1, score
				reranked = append(reranked, c)
			}
			cands = reranked
		}
		res.Stages.Durations["reranked"] = time.Since(start)
	}
	if len(cands) > k {
		cands = cands[:k]
	}
	keys := e.keys(ctx, cands)
	for i, c := range cands {
		h := citefind.Hit{ID: c.ID, Key: keys[c.ID].Key, Aliases: keys[c.ID].Aliases, Title: c.Title, Year: c.Year, Venue: c.Venue, DOI: c.DOI,
			Rank: i + 1, Score: c.Score, Authors: c.Authors, Sources: make(map[string]citefind.SourceRank, len(c.Sources))}
		for name, src := range c.Sources {
			h.Sources[name] = citefind.SourceRank{Rank: src.Rank, Score: src.Score}
		}
		res.Hits = append(res.Hits, h)
	}
	if opts.Pick && len(cands) > 0 {
		start := time.Now()
		p, err := e.Picker()
		if err != nil {
			return nil, err
		}
		pick, err := p.Pick(ctx, cleaned, cands)
		if err != nil {
			return nil, fmt.Errorf("pick: %w", err)
		}
		res.Picked = &pick
		if pick.Fallback {
			res.Warnings = append(res.Warnings, "picked the top-ranked candidate: "+pick.Reason)
		}
		res.Stages.Durations["picked"] = time.Since(start)
	}
	return res, nil
}

// keys returns the record keys of the candidates' papers; a failure only
// leaves them out.
func (e *Engine) keys(ctx context.Context, cands []rerank.Candidate) map[string]corpus.Keys {
	if e.db == nil || len(cands) == 0 {
		return nil
	}
	ids := make([]string, len(cands))
	for i, c := range cands {
		ids[i] = c.ID
	}
	keys, err := e.db.Store.Keys(ctx, ids)
	if err != nil {
		return nil
	}
	return keys
}

// candidates attaches the papers' metadata to fused hits.
func (e *Engine) candidates(ctx context.Context, s *snapshot, hits []fuse.Hit) ([]rerank.Candidate, []string, error) {
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	papers, err := s.backend.Papers(ctx, ids)
	if err != nil {
		return nil, nil, fmt.Errorf("look up hits: %w", err)
	}
	var warnings []string
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
	return cands, warnings, nil
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

// errClosed is returned by queries on a closed engine.
var errClosed = errors.New("engine: closed")
