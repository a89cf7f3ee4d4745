package weaviate

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/retrieve"
	"github.com/citefind/citefind/retrieve/sparse"
)

// StoreIDKey is the store setting (corpus.Store.Meta) that identifies a
// citefind database to the collections it syncs into; Sync creates it.
const StoreIDKey = "backend.store_id"

// Sync tuning.
const (
	// objectAttempts is how often Sync writes an object that Weaviate
	// refused in a batch (with backoff) before it gives up: as long as a
	// request's write retries (writeAttempts, about 20 s), since a node
	// that died is refused ("broadcast: cannot reach enough replicas")
	// until Weaviate stops counting its replicas (5 attempts, about 6 s,
	// fell short once in TestClusterKill).
	objectAttempts = writeAttempts
	// sendersInFlight is the number of batches written at once.
	sendersInFlight = 2
	// deleteBatch is the number of IDs per batch delete.
	deleteBatch = 1000
)

// Sync brings the collection up to the store's generation: it creates the
// collection when absent, deletes the papers removed since the generation
// the collection reflects (every object the store does not hold, on a full
// sync), writes the papers added or changed since, in batches at the write
// consistency level, and records the new generation in the metadata
// object only after every batch is acknowledged. Objects are keyed by a
// UUID derived from the paper ID, so a repeated write replaces. Every few
// seconds a checkpoint (the last paper ID of the contiguous acknowledged
// batches) goes to the metadata, so a run killed part-way is completed by
// the next without re-sending what is in. Objects a batch refused are
// retried with backoff and reported in Warnings; when some still fail,
// Sync returns an error wrapping ErrIncomplete and the generation is not
// advanced. opts.Force re-sends every paper (and takes over a collection
// synced from another database).
func (b *Backend) Sync(ctx context.Context, st *corpus.Store, opts retrieve.SyncOptions) (retrieve.SyncReport, error) {
	b.syncMu.Lock()
	defer b.syncMu.Unlock()
	defer b.invalidate()
	rep := retrieve.SyncReport{Generation: -1}
	storeID, err := storeIdentity(ctx, st)
	if err != nil {
		return rep, err
	}
	cur, err := st.Generation(ctx)
	if err != nil {
		return rep, fmt.Errorf("weaviate: sync: %w", err)
	}
	spec := opts.Embedder
	if opts.Embed == nil || spec == "" {
		spec = "none"
	} else if opts.Model != "" {
		spec += "|" + opts.Model // another model of the same embedder: every paper is embedded again
	}
	m, exists, _, err := b.inspect(ctx)
	if err != nil {
		return rep, fmt.Errorf("weaviate: sync: %w", err)
	}
	if !exists {
		if m, err = b.create(ctx, storeID, spec); err != nil {
			return rep, err
		}
	}
	if m.Store != "" && m.Store != storeID && !opts.Force {
		return rep, fmt.Errorf("weaviate: sync: %w: %s is synced from another citefind database (store %s, this one is %s); use another collection, or --force to take it over",
			ErrForeignCollection, b.cfg.Collection, m.Store, storeID)
	}
	if m.Dim > 0 && embedderKind(m.Embedder) != embedderKind(spec) && !opts.Force {
		return rep, fmt.Errorf("weaviate: sync: %w: %s holds vectors of the embedder %s (dimension %d), this database's embedder is %s; use another collection, or --force to replace the vectors (same dimension only)",
			ErrSchemaMismatch, b.cfg.Collection, embedderKind(m.Embedder), m.Dim, embedderKind(spec))
	}
	full := m.Generation < 0 || opts.Force || m.Store != storeID || m.Embedder != spec
	from := m.Generation
	if full {
		from = -1
	}
	resume := !opts.Force && m.Target >= 0 && m.Target <= cur && m.Store == storeID && m.Embedder == spec &&
		(m.Generation == from || m.Generation < 0)
	if resume {
		from = m.Generation
	}
	dim := m.Dim
	if spec == "none" {
		dim = 0
	}
	if !full && !resume && m.Generation == cur && m.Rewrite == nil {
		rep.Generation = cur
		return rep, nil
	}
	// A node killed in the middle of a write can keep objects without
	// some of their index entries (see meta.Rewrite): the writes of a run
	// in which a replica failed are marked, to be written again.
	var missingBefore string
	if b.cfg.replicas() > 1 {
		if w, err := b.missingReplicas(ctx); err == nil {
			missingBefore = w
		} else {
			missingBefore = "unknown"
		}
	}
	if exists {
		if err := b.createClass(ctx, b.dfClassDef(m.Fields)); err != nil {
			return rep, err
		}
	}
	s := &syncRun{b: b, st: st, opts: opts, rep: &rep, from: from, m: meta{Store: storeID, Generation: from, Target: cur, Embedder: spec, Dim: dim,
		Fields: m.Fields, N: m.N, Totals: m.Totals, StatsGen: m.StatsGen, Rewrite: m.Rewrite}}
	// Stamped writes: a forced sync, a repair, and a resumed run (a batch
	// in flight when the run stopped, past its checkpoint, may have been
	// cut short on a node that failed with it).
	if opts.Force || m.Rewrite != nil || resume {
		if err := b.ensureStamp(ctx); err != nil {
			return rep, err
		}
		s.stamp = time.Now().UnixMilli()
	}
	// The kept statistics follow the changes when the collection is
	// exactly at a generation they reflect; otherwise they are rebuilt
	// from the store at the end.
	if !full && !resume && m.Target < 0 && m.Generation >= 0 && m.StatsGen == m.Generation {
		s.delta = newCounts()
	}
	if resume {
		// Until the papers changed after the interrupted run's target are
		// re-sent, only its checkpoint holds.
		s.m.Target, s.m.After = m.Target, m.After
	}
	// The metadata says, before any paper is written, that a sync from
	// `from` towards cur is under way.
	if err := b.writeMeta(ctx, s.m); err != nil {
		return rep, err
	}
	if from < 0 {
		if err := s.reconcile(ctx); err != nil {
			return rep, err
		}
	} else if err := s.removeSince(ctx, from); err != nil {
		return rep, err
	}
	if resume && m.After != "" && m.Target < cur {
		// Papers changed after the interrupted run's target among those it
		// had done; the checkpoint stays valid meanwhile.
		if err := s.send(ctx, m.Target, func(id string) bool { return id <= m.After }, false); err != nil {
			return rep, s.keepMark(ctx, err)
		}
	}
	if s.m.Target != cur {
		s.m.Target = cur
		if err := b.writeMeta(ctx, s.m); err != nil {
			return rep, err
		}
	}
	after := ""
	if resume {
		after = m.After
	}
	if err := s.send(ctx, from, func(id string) bool { return id > after }, true); err != nil {
		return rep, s.keepMark(ctx, err)
	}
	if m.Rewrite != nil && (!full || resume) {
		// The papers an earlier run wrote while a replica failed, again
		// with the new stamp (those this run wrote already carry it, and
		// Weaviate skips them).
		s.rewriting = true
		err := s.send(ctx, *m.Rewrite, func(string) bool { return true }, false)
		s.rewriting = false
		if err != nil {
			return rep, s.keepMark(ctx, err)
		}
	}
	if s.delta != nil {
		if err := s.applyDelta(ctx, s.delta); err != nil {
			return rep, s.keepMark(ctx, err)
		}
	} else if err := s.recompute(ctx); err != nil {
		return rep, s.keepMark(ctx, err)
	}
	s.mu.Lock()
	final, troubled := s.m, s.troubled
	s.mu.Unlock()
	final.Generation, final.Target, final.After, final.StatsGen = cur, -1, "", cur
	if b.cfg.replicas() > 1 && rep.Sent+rep.Removed+rep.Rewritten > 0 {
		// Weaviate counts QUORUM over the replicas it can reach: with a
		// node down, a write is acknowledged by one replica, and the
		// node's replica is repaired by async replication when it returns.
		if w, err := b.missingReplicas(ctx); err != nil {
			rep.Warnings = append(rep.Warnings, "could not check the replicas: "+err.Error())
			troubled = true
		} else if w != "" {
			rep.Warnings = append(rep.Warnings, w+": the replicas there missed this sync's writes; Weaviate's async replication copies them when the node is back (citefind status shows whether the replicas agree)")
			// A replica lost during the run may have been killed in the
			// middle of a write; one down from the start missed them all.
			troubled = troubled || newlyMissing(missingBefore, w)
		}
	}
	final.Rewrite = nil
	if troubled && rep.Sent+rep.Rewritten > 0 {
		final.Rewrite = mergeRewrite(m.Rewrite, from)
		s.mu.Lock()
		s.troubled, s.m.Rewrite = true, final.Rewrite
		s.mu.Unlock()
		rep.Warnings = append(rep.Warnings, "writes were refused, or a replica was lost, while this sync wrote papers: the next sync writes them again so that every replica indexes them (a node that fails in the middle of a write can keep objects without some of their index entries)")
	}
	if err := b.writeMeta(ctx, final); err != nil {
		return rep, s.keepMark(ctx, err)
	}
	rep.Generation = cur
	if rep.Sent+rep.Rewritten > 0 && b.cfg.flushWait() > 0 {
		s.mu.Lock()
		probes := s.probes
		s.mu.Unlock()
		if w := b.waitFlushed(ctx, probes, b.cfg.flushWait()); w != "" {
			rep.Warnings = append(rep.Warnings, w)
		}
	}
	return rep, nil
}

// keepMark writes the checkpoint once more when a paper write had trouble
// (so that the next sync writes the papers of this run again, see
// meta.Rewrite) and returns err, noting when that write failed too.
func (s *syncRun) keepMark(ctx context.Context, err error) error {
	s.mu.Lock()
	m, troubled := s.m, s.troubled
	s.mu.Unlock()
	if !troubled {
		return err
	}
	if werr := s.b.writeMeta(context.WithoutCancel(ctx), m); werr != nil {
		return fmt.Errorf("%w (and the mark that the papers written need writing again, after a replica failed, was not kept: %v; citefind index --force writes every paper again)", err, werr)
	}
	return err
}

// newlyMissing reports whether the replica check after a sync names a
// shard or node that the check before it did not ("unknown" before: any).
func newlyMissing(before, after string) bool {
	if before == "unknown" {
		return after != ""
	}
	was := strings.Split(before, "; ")
	for _, w := range strings.Split(after, "; ") {
		if w != "" && !slices.Contains(was, w) {
			return true
		}
	}
	return false
}

// probe is a paper just written, to find with its own text.
type probe struct {
	id   string
	text string // analysed text tokens, at most maxProbeTerms
}

const (
	// probeLimit is the depth of a probe search: a paper is among the
	// best 100 for its own text unless Weaviate skipped it (an unflushed
	// memtable holds more than about probeLimit papers that match).
	probeLimit    = 100
	maxProbeTerms = 64
	probesKept    = 3
)

// waitFlushed waits until Weaviate's BM25 finds the papers written last
// (each searched with its own analysed text, in the top probeLimit). Weaviate
// 1.35.2's BM25 (block-max WAND) gives the objects still in a memtable
// no score bound and skips them once it holds enough hits, so a freshly
// written paper is missing from BM25 results until its memtable is flushed
// to a disk segment, which Weaviate does once the memtable has been idle
// for PERSISTENCE_MEMTABLES_FLUSH_IDLE_AFTER_SECONDS (60 by default). It
// returns a warning when the wait ran out.
func (b *Backend) waitFlushed(ctx context.Context, probes []probe, limit time.Duration) string {
	if len(probes) == 0 {
		return ""
	}
	wctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	start := time.Now()
	var missing string
	for {
		missing = ""
		for _, p := range probes {
			rows, err := b.search(wctx, []retrieve.Term{{Text: p.text, Weight: 1}}, sparse.FieldText, probeLimit)
			if err != nil {
				missing = p.id + " (" + err.Error() + ")"
				break
			}
			found := false
			for _, r := range rows {
				found = found || (r[propPID] != nil && *r[propPID] == p.id)
			}
			if !found {
				missing = p.id
				break
			}
		}
		if missing == "" {
			return ""
		}
		select {
		case <-wctx.Done():
			return fmt.Sprintf("after %s Weaviate's BM25 does not yet find the paper %s written last; until Weaviate flushes its memtables, its BM25 misses recently written papers (it flushes a memtable idle for PERSISTENCE_MEMTABLES_FLUSH_IDLE_AFTER_SECONDS, 60 by default)",
				time.Since(start).Round(time.Second), missing)
		case <-time.After(time.Second):
		}
	}
}

// create makes the metadata collection and object, then the papers
// collection (in this order, so that a run killed in between finds a
// collection it can complete).
func (b *Backend) create(ctx context.Context, storeID, spec string) (meta, error) {
	if err := b.createClass(ctx, b.metaClassDef()); err != nil {
		return meta{}, err
	}
	fields := fieldsFor(b.weights)
	m := meta{Store: storeID, Generation: -1, Target: -1, Embedder: spec, Fields: fields, StatsGen: -1}
	old, ok, err := b.readMeta(ctx)
	if err != nil {
		return meta{}, err
	}
	if ok && old.Kind == metaKind && old.Store != storeID {
		m.Store = old.Store // a half-made collection of another database: Sync refuses it
	}
	if err := b.writeMeta(ctx, m); err != nil {
		return meta{}, err
	}
	if err := b.createClass(ctx, b.dfClassDef(fields)); err != nil {
		return meta{}, err
	}
	if err := b.createClass(ctx, b.paperClass(fields)); err != nil {
		return meta{}, err
	}
	m.Kind, m.Format = metaKind, schemaFormat
	return m, nil
}

// storeIdentity returns the store's ID, creating it on first use.
func storeIdentity(ctx context.Context, st *corpus.Store) (string, error) {
	id, err := st.Meta(ctx, StoreIDKey)
	if err != nil {
		return "", fmt.Errorf("weaviate: sync: %w", err)
	}
	if id != "" {
		return id, nil
	}
	var r [8]byte
	if _, err := rand.Read(r[:]); err != nil {
		return "", err
	}
	id = hex.EncodeToString(r[:])
	if err := st.SetMeta(ctx, StoreIDKey, id); err != nil {
		return "", fmt.Errorf("weaviate: sync: %w", err)
	}
	return id, nil
}

// syncRun is one Sync's state.
type syncRun struct {
	b    *Backend
	st   *corpus.Store
	opts retrieve.SyncOptions
	rep  *retrieve.SyncReport

	from      int64 // the generation the papers written are changed after
	stamp     int64 // when not 0, every paper written carries it (propStamp)
	rewriting bool  // papers written count as Rewritten, not Sent

	mu       sync.Mutex
	troubled bool // a paper write was refused or failed: a replica may have failed during it
	m        meta // the checkpoint written last
	done     int
	total    int
	probes   []probe // papers of the batch written last
	delta    *counts // changes to the kept statistics (incremental sync); nil: rebuild them
	lastSave time.Time
}

// removeSince deletes the papers removed from the store after gen.
func (s *syncRun) removeSince(ctx context.Context, gen int64) error {
	ids, err := s.st.RemovedSince(ctx, gen)
	if err != nil {
		return fmt.Errorf("weaviate: sync: %w", err)
	}
	return s.delete(ctx, ids)
}

// reconcile deletes every object whose paper the store does not hold.
func (s *syncRun) reconcile(ctx context.Context) error {
	have, err := s.b.allIDs(ctx)
	if err != nil {
		return err
	}
	if len(have) == 0 {
		return nil
	}
	err = s.st.Each(ctx, func(p corpus.Paper) error {
		delete(have, p.ID)
		return nil
	})
	if err != nil {
		return fmt.Errorf("weaviate: sync: %w", err)
	}
	ids := make([]string, 0, len(have))
	for id := range have {
		ids = append(ids, id)
	}
	return s.delete(ctx, ids)
}

// allIDs lists the paper IDs of every object in the collection (cursor
// over object UUIDs).
func (b *Backend) allIDs(ctx context.Context) (map[string]bool, error) {
	out := map[string]bool{}
	after := ""
	for {
		cursor := ""
		if after != "" {
			cursor = ", after: " + gqlString(after)
		}
		q := fmt.Sprintf(`{ Get { %s(limit: %d%s) { %s _additional { id } } } }`, b.cfg.Collection, maxLimit, cursor, propPID)
		var ans struct {
			Get map[string][]struct {
				PID        string `json:"pid"`
				Additional struct {
					ID string `json:"id"`
				} `json:"_additional"`
			} `json:"Get"`
		}
		if err := b.c.graphql(ctx, q, &ans, b.cfg.writeTimeout()); err != nil {
			return nil, fmt.Errorf("weaviate: list the collection: %w", err)
		}
		rows := ans.Get[b.cfg.Collection]
		for _, r := range rows {
			out[r.PID] = true
		}
		if len(rows) < maxLimit {
			return out, nil
		}
		after = rows[len(rows)-1].Additional.ID
	}
}

// delete removes the objects of these paper IDs, in batches, retrying
// until every matched object is deleted.
func (s *syncRun) delete(ctx context.Context, ids []string) error {
	b := s.b
	for start := 0; start < len(ids); start += deleteBatch {
		chunk := ids[start:min(start+deleteBatch, len(ids))]
		if s.delta != nil {
			old, err := b.oldFields(ctx, chunk, s.m.Fields)
			if err != nil {
				return err
			}
			s.mu.Lock()
			for _, fs := range old {
				s.delta.add(fs, -1)
			}
			s.mu.Unlock()
		}
		body := map[string]any{
			"match": map[string]any{"class": b.cfg.Collection, "where": map[string]any{
				"path": []string{propPID}, "operator": "ContainsAny", "valueTextArray": chunk}},
			"output": "minimal",
		}
		var lastErr error
		for attempt := range objectAttempts {
			if attempt > 0 && !backoff(ctx, attempt-1) {
				return fmt.Errorf("weaviate: sync: delete: %w", ctx.Err())
			}
			var ans struct {
				Results struct {
					Matches, Successful, Failed int
					Objects                     []struct {
						Errors *struct {
							Error []gqlError `json:"error"`
						} `json:"errors"`
					} `json:"objects"`
				} `json:"results"`
			}
			err := b.c.do(ctx, http.MethodDelete, "/v1/batch/objects?consistency_level="+b.cfg.writeLevel(), body, &ans, b.cfg.writeTimeout())
			if err == nil && ans.Results.Failed > 0 {
				err = fmt.Errorf("%d of %d objects not deleted", ans.Results.Failed, ans.Results.Matches)
			}
			if err == nil {
				s.mu.Lock()
				s.rep.Removed += ans.Results.Successful
				if attempt > 0 {
					s.rep.Warnings = append(s.rep.Warnings, fmt.Sprintf("deleting %d papers needed %d attempts (%v)", len(chunk), attempt+1, lastErr))
				}
				s.mu.Unlock()
				lastErr = nil
				break
			}
			lastErr = err
		}
		if lastErr != nil {
			return fmt.Errorf("weaviate: sync: %w: delete %d papers (first %s): %w", ErrIncomplete, len(chunk), chunk[0], lastErr)
		}
	}
	return nil
}

// job is one batch of papers to write; seq numbers batches in store
// (paper ID) order.
type job struct {
	seq    int
	papers []corpus.Paper
}

// send writes the papers changed since gen whose IDs pass keep, in ID
// order, sendersInFlight batches at a time. With checkpoint, the metadata
// records (at most every Config.Checkpoint) the last ID of the contiguous
// acknowledged batches.
func (s *syncRun) send(ctx context.Context, gen int64, keep func(string) bool, checkpoint bool) error {
	b := s.b
	n, err := s.st.CountChangedSince(ctx, gen)
	if err != nil {
		return fmt.Errorf("weaviate: sync: %w", err)
	}
	s.mu.Lock()
	s.total += n
	s.mu.Unlock()
	g, gctx := errgroup.WithContext(ctx)
	jobs := make(chan job, sendersInFlight)
	type result struct {
		seq    int
		lastID string
		n      int
	}
	results := make(chan result, 64)
	g.Go(func() error { // the store, in ID order
		defer close(jobs)
		var cur []corpus.Paper
		seq, skipped := 0, 0
		flush := func() error {
			if len(cur) == 0 {
				return nil
			}
			select {
			case jobs <- job{seq: seq, papers: cur}:
			case <-gctx.Done():
				return gctx.Err()
			}
			seq++
			cur = nil
			return nil
		}
		err := s.st.EachSince(gctx, gen, func(p corpus.Paper) error {
			if !keep(p.ID) {
				skipped++
				if skipped%1000 == 0 {
					s.progress(1000)
				}
				return nil
			}
			cur = append(cur, p)
			if len(cur) >= b.cfg.batchSize() {
				return flush()
			}
			return nil
		})
		s.progress(skipped % 1000)
		if err != nil {
			return fmt.Errorf("weaviate: sync: %w", err)
		}
		return flush()
	})
	var wg sync.WaitGroup
	for range sendersInFlight {
		wg.Add(1)
		g.Go(func() error {
			defer wg.Done()
			for j := range jobs {
				if err := s.writePapers(gctx, j.papers); err != nil {
					return err
				}
				select {
				case results <- result{seq: j.seq, lastID: j.papers[len(j.papers)-1].ID, n: len(j.papers)}:
				case <-gctx.Done():
					return gctx.Err()
				}
			}
			return nil
		})
	}
	go func() { wg.Wait(); close(results) }()
	// Collect in this goroutine: progress and checkpoints.
	pending := map[int]result{}
	next := 0
	var cerr error
	for r := range results {
		s.mu.Lock()
		if s.rewriting {
			s.rep.Rewritten += r.n
		} else {
			s.rep.Sent += r.n
		}
		s.mu.Unlock()
		s.progress(r.n)
		pending[r.seq] = r
		advanced := false
		for {
			pr, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next++
			s.mu.Lock()
			s.m.After = pr.lastID
			s.mu.Unlock()
			advanced = true
		}
		if checkpoint && advanced && cerr == nil && time.Since(s.lastSave) >= b.cfg.checkpoint() {
			s.mu.Lock()
			m := s.m
			s.mu.Unlock()
			if err := b.writeMeta(gctx, m); err != nil {
				cerr = err
			}
			s.lastSave = time.Now()
		}
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return cerr
}

func (s *syncRun) progress(n int) {
	if n == 0 {
		return
	}
	s.mu.Lock()
	s.done += n
	done, total := s.done, s.total
	s.mu.Unlock()
	if s.opts.Progress != nil {
		s.opts.Progress(done, total)
	}
}

// object is a paper object of Weaviate's batch API.
type object struct {
	Class      string         `json:"class"`
	ID         string         `json:"id"`
	Properties map[string]any `json:"properties"`
	Vector     []float32      `json:"vector,omitempty"`
}

// writePapers analyses and (with an embedder) embeds one batch and writes
// it, retrying the objects Weaviate refused.
func (s *syncRun) writePapers(ctx context.Context, papers []corpus.Paper) error {
	b := s.b
	objs := make([]object, len(papers))
	toks := make([]map[string][]string, len(papers))
	for i := range papers {
		p := &papers[i]
		js, err := json.Marshal(p)
		if err != nil {
			return fmt.Errorf("weaviate: sync: paper %s: %w", p.ID, err)
		}
		props := map[string]any{propPID: p.ID, propPaper: string(js)}
		if s.stamp != 0 {
			props[propStamp] = s.stamp
		}
		toks[i] = analysed(p, s.m.Fields)
		for f, ts := range toks[i] {
			props[f] = strings.Join(ts, " ")
			props[lenPrefix+f] = len(ts)
		}
		objs[i] = object{Class: b.cfg.Collection, ID: uuidFor(p.ID), Properties: props}
	}
	if s.opts.Embed != nil && s.m.Embedder != "none" {
		vecs, err := s.opts.Embed(ctx, papers)
		if err != nil {
			return fmt.Errorf("weaviate: sync: embed %d papers (from %s): %w", len(papers), papers[0].ID, err)
		}
		if len(vecs) != len(papers) {
			return fmt.Errorf("weaviate: sync: the embedder returned %d vectors for %d papers", len(vecs), len(papers))
		}
		s.mu.Lock()
		for i, v := range vecs {
			if s.m.Dim == 0 {
				s.m.Dim = len(v)
			}
			if len(v) != s.m.Dim {
				s.mu.Unlock()
				return fmt.Errorf("weaviate: sync: %w: paper %s has a vector of dimension %d, the collection's are %d (%s); use another collection", ErrSchemaMismatch, papers[i].ID, len(v), s.m.Dim, s.m.Embedder)
			}
			objs[i].Vector = v
		}
		s.mu.Unlock()
	}
	if s.delta != nil && !s.rewriting { // a rewrite changes no paper
		ids := make([]string, len(papers))
		for i := range papers {
			ids[i] = papers[i].ID
		}
		old, err := b.oldFields(ctx, ids, s.m.Fields)
		if err != nil {
			return err
		}
		s.mu.Lock()
		for _, fs := range old {
			s.delta.add(fs, -1)
		}
		for i := range papers {
			s.delta.add(toks[i], 1)
		}
		s.mu.Unlock()
	}
	refused, err := s.writeObjects(ctx, objs, func(i int) string { return papers[i].ID })
	if refused {
		s.mu.Lock()
		s.troubled = true
		s.m.Rewrite = mergeRewrite(s.m.Rewrite, s.from)
		s.mu.Unlock()
	}
	if err != nil {
		return err
	}
	s.keepProbes(objs)
	return nil
}

// writeObjects writes objects in one batch and retries, with backoff, the
// ones Weaviate refused; name(i) names objs[i] in messages. refused says
// whether Weaviate refused any of them, or a request failed, on the way
// (not when the context ended it).
func (s *syncRun) writeObjects(ctx context.Context, objs []object, name func(int) string) (refused bool, err error) {
	index := make(map[string]int, len(objs))
	for i := range objs {
		index[objs[i].ID] = i
	}
	w := s.b.postRetrying(ctx, objs)
	refused = w.firstMsg != "" || (w.err != nil && ctx.Err() == nil)
	switch {
	case w.err != nil && ctx.Err() != nil:
		return refused, fmt.Errorf("weaviate: sync: %w", w.err)
	case w.err != nil:
		return refused, fmt.Errorf("weaviate: sync: write %d objects (from %s): %w", len(objs), name(0), w.err)
	case len(w.failed) > 0:
		ids := make([]string, 0, len(w.failed))
		for _, o := range w.failed {
			ids = append(ids, name(index[o.ID]))
		}
		return true, fmt.Errorf("weaviate: sync: %w: %d objects not written after %d attempts (%s …): %s", ErrIncomplete, len(ids), objectAttempts, strings.Join(ids[:min(5, len(ids))], ", "), w.lastMsg)
	case w.firstMsg != "":
		s.mu.Lock()
		s.rep.Warnings = append(s.rep.Warnings, fmt.Sprintf("%d objects (first %s) were refused at first (%s), written on attempt %d", len(objs), name(0), w.firstMsg, w.attempts+1))
		s.mu.Unlock()
	}
	return refused, nil
}

// retried is what postRetrying did: the attempts after the first, the
// first and last refusal messages ("" when none), the objects still
// refused after the last attempt, and the error that stopped it.
type retried struct {
	attempts          int
	firstMsg, lastMsg string
	failed            []object
	err               error
}

// postRetrying writes objects in one batch and writes the ones Weaviate
// refused again, with backoff, up to objectAttempts times in all (a node
// that died is refused, "broadcast: cannot reach enough replicas" inside
// a 200 answer, until Weaviate stops counting its replicas). A request
// that fails (after the client's own retries) or a context that ends
// stops it, with err set.
func (b *Backend) postRetrying(ctx context.Context, objs []object) retried {
	var r retried
	for attempt := range objectAttempts {
		if attempt > 0 && !backoff(ctx, attempt) {
			r.err = ctx.Err()
			return r
		}
		r.attempts = attempt
		failed, msgs, err := b.postBatch(ctx, objs)
		if err != nil {
			r.err = err
			return r
		}
		if len(failed) == 0 {
			r.failed = nil
			return r
		}
		if r.firstMsg == "" {
			r.firstMsg = msgs[0]
		}
		objs, r.failed, r.lastMsg = failed, failed, msgs[0]
	}
	return r
}

// postBatch writes objects in one batch request and returns those Weaviate
// refused, with their messages.
func (b *Backend) postBatch(ctx context.Context, objs []object) ([]object, []string, error) {
	var ans []struct {
		ID     string `json:"id"`
		Result struct {
			Errors *struct {
				Error []gqlError `json:"error"`
			} `json:"errors"`
		} `json:"result"`
	}
	body := map[string]any{"objects": objs}
	if err := b.c.do(ctx, http.MethodPost, "/v1/batch/objects?consistency_level="+b.cfg.writeLevel(), body, &ans, b.cfg.writeTimeout()); err != nil {
		return nil, nil, err
	}
	if len(ans) != len(objs) {
		return objs, []string{fmt.Sprintf("the batch answer lists %d of %d objects", len(ans), len(objs))}, nil
	}
	byID := make(map[string]*object, len(objs))
	for i := range objs {
		byID[objs[i].ID] = &objs[i]
	}
	var failed []object
	var msgs []string
	for _, a := range ans {
		if a.Result.Errors == nil || len(a.Result.Errors.Error) == 0 {
			continue
		}
		o, ok := byID[a.ID]
		if !ok {
			return nil, nil, errors.New("the batch answer names an object not sent: " + a.ID)
		}
		failed = append(failed, *o)
		msgs = append(msgs, a.Result.Errors.Error[0].Message)
	}
	return failed, msgs, nil
}

// keepProbes keeps a few papers of the batch written last.
func (s *syncRun) keepProbes(objs []object) {
	var ps []probe
	for _, i := range []int{len(objs) - 1, len(objs) / 2, 0} {
		text, _ := objs[i].Properties[sparse.FieldText].(string)
		toks := strings.Fields(text)
		if len(toks) == 0 || len(ps) == probesKept || (len(ps) > 0 && ps[len(ps)-1].id == objs[i].Properties[propPID]) {
			continue
		}
		id, _ := objs[i].Properties[propPID].(string)
		ps = append(ps, probe{id: id, text: strings.Join(toks[:min(len(toks), maxProbeTerms)], " ")})
	}
	s.mu.Lock()
	s.probes = ps
	s.mu.Unlock()
}

// missingReplicas names the shards with fewer reachable replicas than the
// replication factor, and the nodes not healthy ("" when none). A node
// that is down is not listed at all, so the shards come from the nodes
// that answer (a shard with no live replica is not seen; writes to it
// fail anyway).
func (b *Backend) missingReplicas(ctx context.Context) (string, error) {
	ns, err := b.Nodes(ctx)
	if err != nil {
		return "", err
	}
	var parts []string
	have := map[string]int{}
	for _, n := range ns {
		if n.Status != "HEALTHY" {
			parts = append(parts, fmt.Sprintf("node %s is %s", n.Node, n.Status))
			continue
		}
		for sh := range n.Shards {
			have[sh]++
		}
	}
	var short []string
	for sh, n := range have {
		if n < b.cfg.replicas() {
			short = append(short, fmt.Sprintf("shard %s has %d of %d replicas reachable", sh, n, b.cfg.replicas()))
		}
	}
	slices.Sort(short)
	return strings.Join(append(parts, short...), "; "), nil
}
