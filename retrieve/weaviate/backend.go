package weaviate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/citefind/citefind/retrieve"
	"github.com/citefind/citefind/retrieve/sparse"
)

// Scheme is the backend URL scheme this package registers.
const Scheme = "weaviate"

func init() {
	retrieve.Register(Scheme, func(ctx context.Context, u *url.URL, env retrieve.Env) (retrieve.Backend, error) {
		return Open(ctx, u, env, Options{})
	})
}

// Sentinel errors. Test with errors.Is.
var (
	// ErrBadURL: a backend URL that does not parse.
	ErrBadURL = errors.New("bad weaviate backend URL")
	// ErrUnavailable: Weaviate did not answer (or answered 5xx) after
	// retries with backoff.
	ErrUnavailable = errors.New("weaviate unavailable")
	// ErrNoCollection: the collection does not exist (yet): nothing was
	// synced into it.
	ErrNoCollection = errors.New("no such weaviate collection")
	// ErrForeignCollection: a collection of that name exists but was not
	// made by citefind, or is synced from another citefind database.
	ErrForeignCollection = errors.New("the weaviate collection is not this database's")
	// ErrSchemaMismatch: the collection is citefind's but does not fit:
	// another schema format, another embedder or vector dimension, other
	// fields, shards or replicas than asked.
	ErrSchemaMismatch = errors.New("the weaviate collection does not fit")
	// ErrIncomplete: a Sync could not write every paper (after retries);
	// the backend keeps reflecting the previous generation.
	ErrIncomplete = errors.New("weaviate sync incomplete")
	// ErrBadK: a query with k ≤ 0.
	ErrBadK = errors.New("k must be positive")
)

// RefreshInterval is how often a Backend re-reads the collection's
// generation to know whether its cached collection statistics (N, average
// field lengths, document frequencies) are still valid.
const RefreshInterval = time.Second

// Options configure Open. The zero value is ready to use.
type Options struct {
	// HTTPClient is the client of every request; nil means a client of
	// its own (no proxy).
	HTTPClient *http.Client
}

// Backend is a retrieve.Backend and retrieve.Syncer over one Weaviate
// collection. It is safe for concurrent use.
type Backend struct {
	cfg     Config
	c       *client
	k1, b   float64
	weights map[string]float64
	scorers []fieldScorer // fields with a positive weight, in sparse's order

	mu         sync.Mutex
	snap       *snapshot
	reloadDone chan struct{} // closed when the running re-read of the metadata ends; nil when none runs

	syncMu sync.Mutex // one Sync at a time

	metaMu       sync.Mutex
	metaSeq      int64 // the newest metadata write number seen (readMeta, writeMeta)
	metaUsed     int64 // the highest number this Backend wrote or tried to write
	metaSeqReady bool  // the metadata collection has the write-number property
	stampReady   bool  // the papers collection has propStamp

	searchFields []string // tests: the fields searched for candidates (nil: every scored field)
}

// fieldScorer holds BM25's per-field constants (as package sparse).
type fieldScorer struct {
	name   string
	weight float64
}

var (
	_ retrieve.Backend            = (*Backend)(nil)
	_ retrieve.Syncer             = (*Backend)(nil)
	_ retrieve.GenerationReporter = (*Backend)(nil)
)

// Open opens the collection a weaviate:// URL names. env.BM25 gives the
// ranking (K1 0 means sparse.DefaultK1, B 0 sparse.DefaultB, nil
// FieldWeights sparse.DefaultFieldWeights, as sparse.Options). When the
// collection does not exist, Open fails with ErrNoCollection unless
// env.Store is set (Sync will create it). A collection that exists is
// checked: ErrForeignCollection when it is not citefind's,
// ErrSchemaMismatch when it lacks a weighted field or has other shards or
// replicas than the URL names.
func Open(ctx context.Context, u *url.URL, env retrieve.Env, opts Options) (*Backend, error) {
	cfg, err := ParseURL(u)
	if err != nil {
		return nil, err
	}
	b := &Backend{cfg: cfg, c: newClient(cfg.Addrs, cfg.hedge(), opts.HTTPClient), k1: env.BM25.K1, b: env.BM25.B}
	if b.k1 == 0 {
		b.k1 = sparse.DefaultK1
	}
	if b.b == 0 {
		b.b = sparse.DefaultB
	}
	if b.k1 < 0 || b.b < 0 || b.b > 1 || math.IsNaN(b.k1) || math.IsNaN(b.b) || math.IsInf(b.k1, 0) {
		return nil, fmt.Errorf("weaviate: bad BM25 parameters k1=%v b=%v", b.k1, b.b)
	}
	b.weights = env.BM25.FieldWeights
	if b.weights == nil {
		b.weights = sparse.DefaultFieldWeights()
	}
	for f, w := range b.weights {
		known := false
		for _, k := range sparse.KnownFields() {
			known = known || k == f
		}
		if !known {
			return nil, fmt.Errorf("weaviate: %w: %q", sparse.ErrUnknownField, f)
		}
		if w < 0 || math.IsNaN(w) || math.IsInf(w, 0) {
			return nil, fmt.Errorf("weaviate: bad weight %v for field %q", w, f)
		}
	}
	for _, f := range sparse.KnownFields() {
		if w := b.weights[f]; w > 0 {
			b.scorers = append(b.scorers, fieldScorer{name: f, weight: w})
		}
	}
	if len(b.scorers) == 0 {
		return nil, errors.New("weaviate: no BM25 field has a positive weight")
	}
	_, exists, lay, err := b.inspect(ctx)
	if err != nil {
		return nil, err
	}
	if !exists && env.Store == nil {
		return nil, fmt.Errorf("%w: %s at %s (run `citefind index --backend %s` to fill it)", ErrNoCollection, cfg.Collection, cfg.Addr, u.Redacted())
	}
	if exists {
		b.cfg.Shards, b.cfg.Replicas = lay.shards, lay.replicas
	}
	return b, nil
}

// Name returns "weaviate".
func (b *Backend) Name() string { return Scheme }

// Config returns the backend's configuration (after Open, Shards and
// Replicas are the collection's own).
func (b *Backend) Config() Config { return b.cfg }

// Close releases idle connections.
func (b *Backend) Close() error {
	b.c.hc.CloseIdleConnections()
	return nil
}

// snapshot is the cached state of the collection that BM25 scoring needs:
// N, the total analysed length of each field and the document frequencies
// asked so far. It is valid while the metadata (generation and sync
// checkpoint) is unchanged.
type snapshot struct {
	key      string // generation/target/after of the metadata
	checked  time.Time
	m        meta
	exists   bool
	hasStats bool // N, totals and document frequencies are kept
	n        int
	totals   map[string]float64
	dfMu     sync.Mutex
	df       map[string]int // field + "\x00" + term
	created  time.Time
}

// maxCachedDF bounds the document-frequency cache of one snapshot.
const maxCachedDF = 1 << 20

// state returns the current snapshot. One older than RefreshInterval is
// re-checked: the metadata is re-read in the background (one re-read at a
// time) and queries wait for it at most staleWait, then go on with the
// snapshot they have; a re-read that fails (a node down, a slow
// coordinator) leaves the snapshot in use, to be tried again after
// RefreshInterval. With no snapshot (the first query, or after a Sync) it
// is read before answering.
func (b *Backend) state(ctx context.Context) (*snapshot, error) {
	b.mu.Lock()
	s := b.snap
	if s != nil && b.reloadDone == nil && time.Since(s.checked) >= RefreshInterval {
		done := make(chan struct{})
		b.reloadDone = done
		go func() {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), b.cfg.timeout())
			defer cancel()
			_, err := b.reload(rctx)
			b.mu.Lock()
			if err != nil && b.snap == s {
				s.checked = time.Now()
			}
			b.reloadDone = nil
			b.mu.Unlock()
			close(done)
		}()
	}
	done := b.reloadDone
	b.mu.Unlock()
	if s == nil {
		return b.reload(ctx)
	}
	if done != nil {
		t := time.NewTimer(staleWait)
		select {
		case <-done:
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
		b.mu.Lock()
		if b.snap != nil {
			s = b.snap
		}
		b.mu.Unlock()
	}
	return s, nil
}

// staleWait is how long a query waits for a re-read of the metadata
// before it goes on with the snapshot it has.
const staleWait = time.Second

// Generation returns the store generation the collection reflects (its
// last complete sync; -1 before the first), from the snapshot state keeps:
// what a serve with no local store polls to follow the collection.
func (b *Backend) Generation(ctx context.Context) (int64, error) {
	s, err := b.state(ctx)
	if err != nil {
		return -1, err
	}
	if !s.exists {
		return -1, nil
	}
	return s.m.Generation, nil
}

// reload reads the metadata and returns the snapshot it describes: the
// current one (its caches kept) while the metadata is unchanged, else a
// new one, which becomes current.
func (b *Backend) reload(ctx context.Context) (*snapshot, error) {
	b.mu.Lock()
	s := b.snap
	b.mu.Unlock()
	m, ok, err := b.readMeta(ctx)
	if err != nil {
		var se *StatusError
		if errors.As(err, &se) && se.Code == http.StatusNotFound {
			ok = false
		} else {
			return nil, err
		}
	}
	key := "none"
	if ok {
		key = fmt.Sprintf("%d/%d/%s/%s/%d/%d/%d/%s", m.Generation, m.Target, m.After, m.Embedder, m.Dim, m.StatsGen, m.N, m.Totals)
	}
	if s != nil && s.key == key {
		b.mu.Lock()
		if b.snap == s {
			s.checked = time.Now()
		}
		b.mu.Unlock()
		return s, nil
	}
	ns := &snapshot{key: key, checked: time.Now(), m: m, exists: ok, df: map[string]int{}, totals: map[string]float64{}, created: time.Now()}
	if ok && m.StatsGen >= 0 {
		ns.hasStats = true
		ns.n = int(m.N)
		if m.Totals != "" {
			if err := json.Unmarshal([]byte(m.Totals), &ns.totals); err != nil {
				return nil, fmt.Errorf("weaviate: the statistics of %s: %w", b.cfg.Collection, err)
			}
		}
	}
	b.mu.Lock()
	b.snap = ns
	b.mu.Unlock()
	return ns, nil
}

// invalidate drops the cached snapshot (after a Sync).
func (b *Backend) invalidate() {
	b.mu.Lock()
	b.snap = nil
	b.mu.Unlock()
}

// countObjects returns the number of objects in the collection
// (Aggregate; it fails while a node holding a shard replica is down).
func (b *Backend) countObjects(ctx context.Context) (int, error) {
	var out struct {
		Aggregate map[string][]struct {
			Meta struct {
				Count float64 `json:"count"`
			} `json:"meta"`
		} `json:"Aggregate"`
	}
	if err := b.c.graphql(ctx, "{ Aggregate { "+b.cfg.Collection+" { meta { count } } } }", &out, b.cfg.timeout()); err != nil {
		return 0, fmt.Errorf("weaviate: count objects: %w", err)
	}
	rows := out.Aggregate[b.cfg.Collection]
	if len(rows) != 1 {
		return 0, fmt.Errorf("weaviate: count objects: %d result rows", len(rows))
	}
	return int(rows[0].Meta.Count), nil
}

// Stats reports the papers in the collection, the generation it reflects,
// its vectors, and per node the shards and their object counts.
func (b *Backend) Stats(ctx context.Context) (retrieve.Stats, error) {
	st := retrieve.Stats{Generation: -1, VectorGeneration: -1, Embedder: "none"}
	s, err := b.reload(ctx) // the metadata as it is now; the caches kept if unchanged
	if err != nil {
		return st, err
	}
	st.Detail = append(st.Detail, fmt.Sprintf("weaviate %s collection %s: %s, consistency: writes %s, reads %s",
		strings.Join(b.cfg.Addrs, ","), b.cfg.Collection, b.layoutString(), b.cfg.writeLevel(), b.cfg.readLevel()))
	if !s.exists {
		st.Detail = append(st.Detail, "the collection is empty: nothing synced yet")
		st.Indexes = []retrieve.IndexStats{{Name: "bm25", Generation: -1}}
		return st, nil
	}

	st.Papers = s.n
	if n, err := b.countObjects(ctx); err == nil {
		st.Papers = n
		if s.hasStats && n != s.n {
			st.Detail = append(st.Detail, fmt.Sprintf("the collection holds %d objects, its statistics count %d papers", n, s.n))
		}
	} else {
		st.Detail = append(st.Detail, fmt.Sprintf("object count unavailable (%v): %d papers as of the last sync", err, s.n))
	}
	st.Generation = s.m.Generation
	if s.m.Target >= 0 {
		st.Detail = append(st.Detail, fmt.Sprintf("a sync towards generation %d stopped after paper %q; the next sync completes it", s.m.Target, s.m.After))
	}
	if r := s.m.Rewrite; r != nil {
		which := fmt.Sprintf("the papers changed after generation %d", *r)
		if *r < 0 {
			which = "every paper"
		}
		st.Detail = append(st.Detail, fmt.Sprintf("papers to write again: %s, written while a replica failed; the next sync writes them again so that every replica indexes them", which))
	}
	if s.m.Dim > 0 {
		st.Vectors, st.VectorGeneration, st.Dim = s.n, s.m.Generation, s.m.Dim
		st.Embedder, st.VectorModel = embedderKind(s.m.Embedder), embedderModel(s.m.Embedder)
	}
	// What citefind status compares with the store: the BM25 side (the
	// objects, and the generation of the last complete sync) and the
	// vectors when there are any.
	st.Indexes = []retrieve.IndexStats{{Name: "bm25", Exists: true, Docs: st.Papers, Generation: st.Generation}}
	if st.Dim > 0 {
		st.Indexes = append(st.Indexes, retrieve.IndexStats{Name: "dense", Exists: true, Docs: st.Vectors, Generation: st.VectorGeneration})
	}
	nodes, err := b.nodes(ctx)
	if err != nil {
		st.Detail = append(st.Detail, "nodes: "+err.Error())
		return st, nil
	}
	st.Detail = append(st.Detail, nodes...)
	return st, nil
}

func (b *Backend) layoutString() string {
	sh := "shards: Weaviate's default"
	if b.cfg.Shards > 0 {
		sh = fmt.Sprintf("%d shards", b.cfg.Shards)
	}
	return fmt.Sprintf("%s × %d replicas", sh, b.cfg.replicas())
}

// NodeShards is what one node reports about the collection.
type NodeShards struct {
	Node   string
	Status string         // HEALTHY, UNHEALTHY, UNAVAILABLE, …
	Shards map[string]int // shard name → objects on disk (flushed) in it
}

// Nodes returns, per node of the cluster (by name), its status and the
// collection's shards it holds with their object counts. Weaviate counts
// only objects flushed to disk segments, so replicas of a shard agree
// once writes have settled and async replication has repaired a replica
// that missed writes.
func (b *Backend) Nodes(ctx context.Context) ([]NodeShards, error) {
	var out struct {
		Nodes []struct {
			Name   string `json:"name"`
			Status string `json:"status"`
			Shards []struct {
				Name        string `json:"name"`
				Class       string `json:"class"`
				ObjectCount int    `json:"objectCount"`
			} `json:"shards"`
		} `json:"nodes"`
	}
	if err := b.c.do(ctx, http.MethodGet, "/v1/nodes?output=verbose&collection="+url.QueryEscape(b.cfg.Collection), nil, &out, b.cfg.timeout()); err != nil {
		return nil, fmt.Errorf("weaviate: nodes: %w", err)
	}
	res := make([]NodeShards, 0, len(out.Nodes))
	for _, n := range out.Nodes {
		ns := NodeShards{Node: n.Name, Status: n.Status, Shards: map[string]int{}}
		for _, s := range n.Shards {
			if s.Class == b.cfg.Collection {
				ns.Shards[s.Name] = s.ObjectCount
			}
		}
		res = append(res, ns)
	}
	sort.Slice(res, func(i, j int) bool { return res[i].Node < res[j].Node })
	return res, nil
}

// ReplicasAgree reports whether every shard has the same object count on
// every node that holds it; the detail names the shards that differ.
func ReplicasAgree(nodes []NodeShards) (bool, string) {
	counts := map[string][]string{}
	vals := map[string]map[int]bool{}
	for _, n := range nodes {
		for sh, c := range n.Shards {
			counts[sh] = append(counts[sh], fmt.Sprintf("%s %d", n.Node, c))
			if vals[sh] == nil {
				vals[sh] = map[int]bool{}
			}
			vals[sh][c] = true
		}
	}
	var diff []string
	for sh, v := range vals {
		if len(v) > 1 {
			diff = append(diff, fmt.Sprintf("shard %s: %s", sh, strings.Join(counts[sh], ", ")))
		}
	}
	sort.Strings(diff)
	return len(diff) == 0, strings.Join(diff, "; ")
}

// nodes describes each node: status, and the collection's shards on it
// with their object counts, and whether the replicas agree.
func (b *Backend) nodes(ctx context.Context) ([]string, error) {
	ns, err := b.Nodes(ctx)
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, n := range ns {
		var parts []string
		for sh, c := range n.Shards {
			parts = append(parts, fmt.Sprintf("%s %d objects", sh, c))
		}
		sort.Strings(parts)
		lines = append(lines, fmt.Sprintf("node %s %s: %s", n.Node, n.Status, strings.Join(parts, ", ")))
	}
	if ok, diff := ReplicasAgree(ns); !ok {
		lines = append(lines, "replicas differ (objects on disk; async replication repairs a replica that missed writes): "+diff)
	}
	if short := MissingReplicas(ns, b.cfg.replicas()); len(short) > 0 {
		lines = append(lines, "replicas missing (a node down, or restarted and still loading its shards; reads go to the other replicas): "+strings.Join(short, "; "))
	}
	return lines, nil
}

// MissingReplicas names the shards that fewer than replicas nodes list,
// with how many do ("shard X on 1 of 2 nodes"), sorted; none when every
// shard has all its replicas.
func MissingReplicas(nodes []NodeShards, replicas int) []string {
	held := map[string]int{}
	for _, n := range nodes {
		for sh := range n.Shards {
			held[sh]++
		}
	}
	var out []string
	for sh, k := range held {
		if k < replicas {
			out = append(out, fmt.Sprintf("shard %s on %d of %d nodes", sh, k, replicas))
		}
	}
	sort.Strings(out)
	return out
}
