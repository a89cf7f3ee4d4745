package retrieve

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/citefind/citefind/corpus"
)

// Backend is where a database's search indexes live: the seam between the
// query engine and BM25 / vector search. The local backend (bleve +
// chromem-go in the database folder) is one implementation; a remote,
// sharded one (Weaviate) is another, so every method takes a context, may
// fail part-way, and says so with an error rather than fewer hits.
//
// Implementations are safe for concurrent use. Scores are only comparable
// within one returned list; lists are best first.
type Backend interface {
	// Name is the backend's URL scheme ("local", "weaviate").
	Name() string
	// BM25 returns up to k papers for an analysed, weighted query (terms
	// as sparse.Analyze produces them; a paper's score is the sum over
	// terms of Weight × the term's BM25 contribution), best first.
	BM25(ctx context.Context, terms []Term, k int) ([]corpus.Hit, error)
	// DocFreqs returns, for each analysed term, how many papers' text
	// holds it, and the number of papers in the BM25 index (pseudo-relevance
	// feedback filters terms by these).
	DocFreqs(ctx context.Context, terms []string) (df map[string]int, n int, err error)
	// Vector returns up to k papers nearest to vec by cosine similarity,
	// best first. ErrNoVectors when the backend holds no vectors.
	Vector(ctx context.Context, vec []float32, k int) ([]corpus.Hit, error)
	// Papers returns the papers with the given IDs (not aliases); IDs the
	// backend does not hold are absent from the map.
	Papers(ctx context.Context, ids []string) (map[string]corpus.Paper, error)
	// Stats reports what the backend holds.
	Stats(ctx context.Context) (Stats, error)
	// Close releases the backend.
	Close() error
}

// GenerationReporter is a Backend that tells cheaply which store
// generation its indexes reflect, without Stats' counts over the whole
// index: what an engine with no local store polls to follow the backend.
type GenerationReporter interface {
	Generation(ctx context.Context) (int64, error)
}

// Term is an analysed query term and its weight (≥ 0), which multiplies
// the term's BM25 contribution.
type Term struct {
	Text   string
	Weight float64
}

// Stats describes a backend's indexes.
type Stats struct {
	// Papers is the number of papers in the BM25 index.
	Papers int
	// Generation is the store generation the BM25 index reflects (-1
	// when unknown).
	Generation int64
	// Vectors is the number of papers with a vector; 0 when none.
	Vectors int
	// VectorGeneration is the store generation the vectors reflect.
	VectorGeneration int64
	// Dim is the vectors' dimension; 0 when none.
	Dim int
	// Embedder is the embedder spec the vectors were made with ("none"
	// when there are no vectors).
	Embedder string
	// VectorModel is the identity of the model that made the vectors
	// (dense.Embedder.Model()); a query vector must come from it.
	VectorModel string
	// Indexes describes each index of the backend, for `citefind status`.
	Indexes []IndexStats
	// Detail is backend-specific lines for `citefind status` (nodes,
	// shards, replicas, …), in display order.
	Detail []string
}

// IndexStats describes one index of a backend.
type IndexStats struct {
	Name       string // "bm25", "dense", or the backend's own name for it
	Exists     bool
	Docs       int
	Generation int64  // the store generation it reflects; -1 unknown
	Error      string // why it cannot be read; "" when it can
}

// Index returns the index named name and whether there is one.
func (s Stats) Index(name string) (IndexStats, bool) {
	for _, x := range s.Indexes {
		if x.Name == name {
			return x, true
		}
	}
	return IndexStats{Name: name, Generation: -1}, false
}

// Sentinel errors of backends.
var (
	// ErrNoVectors: the backend holds no vectors (no embedder).
	ErrNoVectors = errors.New("the backend holds no vectors")
	// ErrUnknownBackend: no backend is registered for a URL's scheme.
	ErrUnknownBackend = errors.New("unknown backend")
)

// Env is what a backend may need from the database that opens it.
type Env struct {
	// Dir is the database folder ("" when serving from a remote backend
	// alone).
	Dir string
	// Store is the database's canonical store; nil when there is none.
	Store *corpus.Store
	// BM25 are the ranking parameters of the database's pipeline.
	BM25 BM25Params
}

// BM25Params are BM25's parameters: K1 and B, and per-field weights
// (sparse.FieldText, sparse.FieldTitle, …).
type BM25Params struct {
	K1, B        float64
	FieldWeights map[string]float64
}

// OpenFunc opens a backend from its URL.
type OpenFunc func(ctx context.Context, u *url.URL, env Env) (Backend, error)

var (
	registryMu sync.RWMutex
	registry   = map[string]OpenFunc{}
)

// Register makes a backend available under a URL scheme, as database/sql
// drivers do. It panics when the scheme is registered twice or open is
// nil; call it from the backend package's init.
func Register(scheme string, open OpenFunc) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if open == nil {
		panic("retrieve: Register with a nil OpenFunc for " + scheme)
	}
	if _, dup := registry[scheme]; dup {
		panic("retrieve: Register called twice for " + scheme)
	}
	registry[scheme] = open
}

// Backends lists the registered schemes, sorted.
func Backends() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	out := make([]string, 0, len(registry))
	for s := range registry {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// OpenBackend opens the backend that rawURL names ("local", or
// SCHEME://…).
func OpenBackend(ctx context.Context, rawURL string, env Env) (Backend, error) {
	u, err := ParseBackendURL(rawURL)
	if err != nil {
		return nil, err
	}
	registryMu.RLock()
	open, ok := registry[u.Scheme]
	registryMu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("%w %q (available: %s)", ErrUnknownBackend, u.Scheme, strings.Join(Backends(), ", "))
	}
	return open(ctx, u, env)
}

// ParseBackendURL parses a backend URL; "" and "local" mean the local
// backend (local:).
func ParseBackendURL(rawURL string) (*url.URL, error) {
	s := strings.TrimSpace(rawURL)
	if s == "" || s == "local" {
		return &url.URL{Scheme: "local"}, nil
	}
	u, err := url.Parse(s)
	if err != nil {
		u, err = parseNodeList(s, err)
	}
	if err != nil {
		return nil, fmt.Errorf("backend URL %q: %w", rawURL, err)
	}
	if u.Scheme == "" {
		return nil, fmt.Errorf("backend URL %q: no scheme (want local or weaviate://HOST:PORT/COLLECTION)", rawURL)
	}
	return u, nil
}

// parseNodeList parses a URL whose authority is a list of nodes that
// net/url does not accept as a host: one with IPv6 literals,
// "weaviate://[::1]:8080,[::2]:8080/P". The rest of the URL is parsed as
// usual and Host is the list as written; any other URL keeps err.
func parseNodeList(s string, err error) (*url.URL, error) {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return nil, err
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	nodes := rest[:end]
	if !strings.Contains(nodes, ",") || strings.ContainsAny(nodes, "@ ") {
		return nil, err
	}
	u, perr := url.Parse(scheme + "://nodes" + rest[end:])
	if perr != nil || u.Host != "nodes" {
		return nil, err
	}
	u.Host = nodes
	return u, nil
}

// Syncer is a backend that copies the store's papers into its indexes
// itself (a remote one); the local backend is built by package build.
type Syncer interface {
	// Sync brings the backend up to the store's current generation: the
	// papers added or changed since the generation it reflects, and the
	// removals. It is idempotent, and a run killed part-way is completed
	// by the next.
	Sync(ctx context.Context, st *corpus.Store, opts SyncOptions) (SyncReport, error)
}

// SyncOptions configure Syncer.Sync.
type SyncOptions struct {
	// Embed returns one vector per paper (the database's embedder); nil
	// when the database has none.
	Embed func(ctx context.Context, papers []corpus.Paper) ([][]float32, error)
	// Embedder is the embedder spec the vectors come from ("none" without).
	Embedder string
	// Model is the identity of the model that makes the vectors
	// (dense.Embedder.Model(); "" when unknown): the backend records it,
	// reports it as Stats.VectorModel, and re-embeds every paper when a
	// sync brings vectors of another model of the same embedder (a trained
	// embedder retrained).
	Model string
	// Force re-sends every paper (and makes every replica of a remote
	// backend index each afresh).
	Force bool
	// Progress, when set, is called with papers done and the total.
	Progress func(done, total int)
}

// SyncReport says what Sync did.
type SyncReport struct {
	Sent, Removed int
	// Rewritten counts the papers written again, unchanged, so that every
	// replica indexes them afresh: those an earlier sync wrote while a
	// replica failed.
	Rewritten  int
	Generation int64    // the store generation the backend now reflects
	Warnings   []string // e.g. objects a batch could not write, retried
}
