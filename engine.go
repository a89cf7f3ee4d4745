package citefind

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/retrieve"
	"github.com/citefind/citefind/retrieve/sparse"
)

// Retriever names accepted in QueryOptions.Retrievers.
const (
	RetrieverBM25 = "bm25"
)

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
}

// Engine answers queries over one database folder. It is safe for
// concurrent use.
type Engine struct {
	dir      string
	store    *corpus.Store
	bm25     *sparse.Retriever
	raw      bool
	warnings []string
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
	e := &Engine{dir: dir, store: st, raw: opts.Raw}
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
	K          int      // hits to return; 0 means 10
	Retrievers []string // nil means all available ("bm25")
	Raw        bool     // do not strip citation markers from the text
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

// Picked is the paper chosen to cite; nil until a picker runs.
type Picked struct {
	ID       string `json:"id"`
	Fallback bool   `json:"fallback"`
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
// and returns up to k paper hits, best first. It is what evaluation calls.
func (e *Engine) Retrieve(ctx context.Context, text string, k int) ([]corpus.Hit, error) {
	if !e.raw {
		text = retrieve.Clean(text)
	}
	return e.bm25.Retrieve(ctx, text, k)
}

// Query answers one query with paper metadata attached.
func (e *Engine) Query(ctx context.Context, text string, opts QueryOptions) (*Result, error) {
	k := opts.K
	if k <= 0 {
		k = 10
	}
	for _, r := range opts.Retrievers {
		if r != RetrieverBM25 {
			return nil, fmt.Errorf("unknown retriever %q (available: %s)", r, RetrieverBM25)
		}
	}
	cleaned := text
	if !opts.Raw {
		cleaned = retrieve.Clean(text)
	}
	res := &Result{Query: text, Cleaned: cleaned, Hits: []ResultHit{}, Warnings: slices.Clone(e.warnings)}
	if strings.TrimSpace(cleaned) == "" {
		res.Warnings = append(res.Warnings, "the query is empty after removing citation markers")
		return res, nil
	}
	hits, err := e.bm25.Retrieve(ctx, cleaned, k)
	if err != nil {
		return nil, fmt.Errorf("bm25: %w", err)
	}
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	papers, err := e.store.GetMany(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("look up hits: %w", err)
	}
	for i, h := range hits {
		p, ok := papers[h.ID]
		if !ok {
			res.Warnings = append(res.Warnings, fmt.Sprintf("hit %s is in the index but not in the store (run `citefind index` to rebuild)", h.ID))
			continue
		}
		rh := ResultHit{
			ID: h.ID, Title: p.Title, Year: p.Year, Venue: p.Venue, DOI: p.DOI,
			Rank: len(res.Hits) + 1, Score: h.Score, Authors: []string{},
			Sources: map[string]SourceRank{RetrieverBM25: {Rank: i + 1, Score: h.Score}},
		}
		for _, a := range p.Authors {
			rh.Authors = append(rh.Authors, a.Name())
		}
		res.Hits = append(res.Hits, rh)
	}
	return res, nil
}
