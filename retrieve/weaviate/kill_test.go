package weaviate_test

import (
	"bufio"
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/internal/weaviatetest"
	"github.com/citefind/citefind/retrieve"
	"github.com/citefind/citefind/retrieve/weaviate"
)

// TestHelperSync is not a test: TestSyncKill runs the test binary with it
// as a child process that syncs a store and prints its progress, and
// kills it with SIGKILL part-way.
func TestHelperSync(t *testing.T) {
	storePath, raw := os.Getenv("CITEFIND_HELPER_STORE"), os.Getenv("CITEFIND_HELPER_URL")
	if storePath == "" {
		t.Skip("helper process only")
	}
	ctx := context.Background()
	st, err := corpus.OpenStore(ctx, storePath)
	require.NoError(t, err)
	u, _ := url.Parse(raw)
	be, err := weaviate.Open(ctx, u, retrieve.Env{Store: st, BM25: pipelineBM25}, weaviate.Options{})
	require.NoError(t, err)
	_, err = be.Sync(ctx, st, retrieve.SyncOptions{Progress: func(done, _ int) {
		fmt.Printf("done %d\n", done)
		time.Sleep(30 * time.Millisecond) // slow enough to be killed part-way
	}})
	require.NoError(t, err)
	fmt.Println("finished")
}

// TestSyncKill kills a syncing process with SIGKILL (kill -9) part-way
// and checks that the next Sync completes the work from the checkpoint
// (sending less than everything) and that nothing is missing.
func TestSyncKill(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a child process; skipped with -short")
	}
	node := weaviatetest.StartNode(t)
	ctx := t.Context()
	recs := testPapers(600, 12)
	storePath := filepath.Join(t.TempDir(), "store.db")
	st, err := corpus.OpenStore(ctx, storePath)
	require.NoError(t, err)
	defer st.Close()
	_, err = st.Ingest(ctx, recs)
	require.NoError(t, err)
	raw := "weaviate://" + node.Addr() + "/Killed?batch=20&checkpoint=50ms"

	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperSync$", "-test.count=1")
	cmd.Env = append(os.Environ(), "CITEFIND_HELPER_STORE="+storePath, "CITEFIND_HELPER_URL="+raw)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	killedAt := -1
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		var n int
		if _, err := fmt.Sscanf(sc.Text(), "done %d", &n); err == nil && n >= 300 {
			require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
			killedAt = n
			break
		}
	}
	_ = cmd.Wait()
	require.Positive(t, killedAt, "the child was killed part-way")

	be := openURL(t, raw, retrieve.Env{Store: st, BM25: pipelineBM25})
	stats, err := be.Stats(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(-1), stats.Generation, "an interrupted first sync reflects no generation")
	rep, err := be.Sync(ctx, st, retrieve.SyncOptions{})
	require.NoError(t, err)
	t.Logf("killed after %d papers; the next sync sent %d", killedAt, rep.Sent)
	assert.Less(t, rep.Sent, 600-200, "the resumed sync skips the checkpointed papers")
	stats, err = be.Stats(ctx)
	require.NoError(t, err)
	assert.Equal(t, 600, stats.Papers)
	gen, _ := st.Generation(ctx)
	assert.Equal(t, gen, stats.Generation)
	checkParity(t, be, st, testQueries(recs, 10, 13), 10, 14)
}

// TestKilledWriteLostIndex: a node killed in the middle of a write can keep,
// after Weaviate's WAL recovery, objects without some of their index
// entries. TestClusterKill saw it in CI (2026-11-29: the restarted node
// logged lsm_recover_from_active_wal_corruption for one shard's objects,
// property_text and property_text_searchable WALs, and its BM25 missed a
// paper for the minute the test waited); async replication compares
// objects, so it does not mend it, and a sync that writes the same
// object does not either (Weaviate skips an unchanged object). Here the
// cut is made on purpose: the papers are written with the memtables kept
// in their WALs, the node is killed, and the WAL of the text field's
// searchable index is cut in half in every shard. Every object is still
// there, Weaviate's BM25 misses papers, and a forced sync, which writes
// every paper with a new stamp, gives the local rankings again.
func TestKilledWriteLostIndex(t *testing.T) {
	if testing.Short() {
		t.Skip("restarts a Weaviate node; skipped with -short")
	}
	node := weaviatetest.StartNode(t)
	ctx := t.Context()
	// Memtables stay in their WALs until the kill (no idle flush).
	require.NoError(t, node.Kill())
	node.SetEnv("PERSISTENCE_MEMTABLES_FLUSH_IDLE_AFTER_SECONDS=3600")
	require.NoError(t, node.Start(ctx))
	recs := testPapers(200, 41)
	st := newStore(t, recs)
	raw := "weaviate://" + node.Addr() + "/Mend?shards=2&flushwait=none"
	be := openURL(t, raw, retrieve.Env{Store: st, BM25: pipelineBM25})
	_, err := be.Sync(ctx, st, retrieve.SyncOptions{})
	require.NoError(t, err)

	require.NoError(t, node.Kill())
	wals, err := filepath.Glob(filepath.Join(node.DataDir(), "mend", "*", "lsm", "property_text_searchable", "*.wal"))
	require.NoError(t, err)
	cut := 0
	for _, w := range wals {
		fi, err := os.Stat(w)
		require.NoError(t, err)
		if fi.Size() > 0 {
			require.NoError(t, os.Truncate(w, fi.Size()/2))
			cut++
		}
	}
	require.Equal(t, 2, cut, "one text-index WAL with entries per shard: %v", wals)
	node.SetEnv() // the test defaults: idle memtables are flushed after 1 s
	require.NoError(t, node.Start(ctx))

	be = openURL(t, raw, retrieve.Env{Store: st, BM25: pipelineBM25})
	stats, err := be.Stats(ctx)
	require.NoError(t, err)
	assert.Equal(t, 200, stats.Papers, "every object is there")
	queries := testQueries(recs, 10, 42)
	assert.NotEmpty(t, parityDiff(t, be, st, queries, 10, 43), "without the cut index entries Weaviate's BM25 misses papers")
	rep, err := be.Sync(ctx, st, retrieve.SyncOptions{})
	require.NoError(t, err)
	assert.Zero(t, rep.Sent+rep.Rewritten, "nothing changed, nothing marked: a plain sync has nothing to do")

	// (No wait for the flush: after a rewrite of every paper, Weaviate's
	// own BM25 scores were below 0 here — a negative IDF, so it counted
	// more papers holding a term than there are, the replaced objects
	// presumably — and its search for the paper written last, with that
	// paper's own text, missed it for the whole 3-minute wait in one run
	// of two. citefind rescores the candidates with its own statistics.)
	rep, err = be.Sync(ctx, st, retrieve.SyncOptions{Force: true})
	require.NoError(t, err)
	assert.Equal(t, 200, rep.Sent)
	checkParity(t, be, st, queries, 10, 43)
}

// TestClusterKill runs a 3-node cluster with a 3 shards × 2 replicas
// collection: a node killed with SIGKILL during queries loses none; a node
// killed during a sync makes it fail or finish, never silently short; after
// a restart the next sync completes and every node holds its shards.
func TestClusterKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-node cluster; skipped with -short")
	}
	// CI shows only the end of a failed run's output, below the nodes'
	// log tails: this cleanup, registered first, runs last and says
	// which step failed.
	step, t0 := "start the cluster", time.Now()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("TestClusterKill failed in step %q, %s after the start (its error is above the nodes' log tails)", step, time.Since(t0).Round(time.Second))
		}
	})
	setStep := func(s string) {
		t.Logf("%s: step %q", time.Since(t0).Round(time.Second), s)
		step = s
	}
	c := weaviatetest.StartCluster(t, 3)
	ctx := t.Context()
	recs := testPapers(500, 21)
	st := newStore(t, recs[:300])
	raw := "weaviate://" + c.Nodes[0].Addr() + "/Cluster?shards=3&replicas=2&batch=25"
	be := openURL(t, raw, retrieve.Env{Store: st, BM25: pipelineBM25})
	rep, err := be.Sync(ctx, st, retrieve.SyncOptions{})
	require.NoError(t, err)
	assert.Equal(t, 300, rep.Sent)
	stats, err := be.Stats(ctx)
	require.NoError(t, err)
	assert.Equal(t, 300, stats.Papers)
	t.Logf("cluster: %s", strings.Join(stats.Detail, "; "))
	queries := testQueries(recs[:300], 20, 22)
	checkParity(t, be, st, queries, 10, 23)

	// kill -9 of node 3 during queries: every query answers, unchanged.
	setStep("kill node3 during queries")
	want := map[string][]corpus.Hit{}
	for _, q := range queries {
		hits, err := be.BM25(ctx, weightedQuery(t, q), 10)
		require.NoError(t, err)
		want[q] = hits
	}
	var failed, answered atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				q := queries[i%len(queries)]
				hits, err := be.BM25(ctx, weightedQuery(t, q), 10)
				if err != nil {
					failed.Add(1)
					t.Errorf("query during the kill: %v", err)
					continue
				}
				answered.Add(1)
				assert.Equal(t, want[q], hits, "query during the kill: %q", q)
			}
		}()
	}
	time.Sleep(time.Second)
	require.NoError(t, c.Nodes[2].Kill())
	time.Sleep(8 * time.Second)
	close(stop)
	wg.Wait()
	t.Logf("node3 killed during queries: %d answered, %d failed", answered.Load(), failed.Load())
	assert.Zero(t, failed.Load())
	papers, err := be.Papers(ctx, []string{recs[0].Paper.ID, recs[150].Paper.ID, recs[299].Paper.ID})
	require.NoError(t, err)
	assert.Len(t, papers, 3, "papers are found with a node down")
	stats, err = be.Stats(ctx)
	require.NoError(t, err)
	assert.True(t, hasWarning(stats.Detail, "replicas missing"), "status says that node3's replicas are missing: %v", stats.Detail)

	setStep("sync with node3 down")
	// A sync while the node is down: Weaviate's QUORUM counts the
	// replicas it can reach, so the writes succeed on one replica and the
	// sync says which node missed them.
	_, err = st.Ingest(ctx, recs[300:400])
	require.NoError(t, err)
	start := time.Now()
	rep, err = be.Sync(ctx, st, retrieve.SyncOptions{})
	require.NoError(t, err)
	assert.Equal(t, 100, rep.Sent)
	assert.True(t, hasWarning(rep.Warnings, "of 2 replicas reachable"), "the sync says that replicas missed its writes: %v", rep.Warnings)
	t.Logf("sync with node3 down: %s, warnings %v", time.Since(start), rep.Warnings)
	assert.False(t, hasWarning(rep.Warnings, "writes them again"), "node3 was down before the sync: it was in the middle of none of its writes")
	checkParity(t, be, st, testQueries(recs[:400], 10, 26), 10, 27)

	// Restart: async replication repairs node 3's replicas.
	setStep("restart node3, replicas repaired")
	require.NoError(t, c.Nodes[2].Start(ctx))
	require.NoError(t, c.WaitHealthy(ctx))
	waitReplicas(t, be, 2, 400)

	// kill -9 of node 2 during a sync; restart; the next sync completes.
	setStep("kill node2 during a sync")
	_, err = st.Ingest(ctx, recs[400:])
	require.NoError(t, err)
	done := make(chan error, 1)
	var once sync.Once
	go func() {
		sctx, cancel := context.WithTimeout(ctx, 90*time.Second)
		defer cancel()
		_, err := be.Sync(sctx, st, retrieve.SyncOptions{Progress: func(int, int) {
			once.Do(func() { require.NoError(t, c.Nodes[1].Kill()) })
			time.Sleep(50 * time.Millisecond)
		}})
		done <- err
	}()
	syncErr := <-done
	t.Logf("sync with node2 killed part-way: %v", syncErr)
	setStep("restart node2, sync again")
	require.NoError(t, c.Nodes[1].Start(ctx))
	require.NoError(t, c.WaitHealthy(ctx))
	rep, err = be.Sync(ctx, st, retrieve.SyncOptions{})
	require.NoError(t, err)
	t.Logf("sync after the restart: sent %d, written again %d, warnings %v", rep.Sent, rep.Rewritten, rep.Warnings)
	// node2 was lost in the middle of the sync's writes, and a write cut
	// short can leave an object without index entries on it (seen in CI:
	// its BM25 missed a paper for good): the papers are written again.
	assert.Positive(t, rep.Rewritten, "the papers written while node2 failed are written again")
	if syncErr == nil {
		assert.Zero(t, rep.Sent, "the sync that survived the kill left nothing to do")
	}
	stats, err = be.Stats(ctx)
	require.NoError(t, err)
	gen, _ := st.Generation(ctx)
	assert.Equal(t, gen, stats.Generation)
	setStep("replicas repaired after node2's restart")
	// The restarted node's replicas catch up by Weaviate's async
	// replication; reads at consistency ONE may count the lagging replica
	// until then (481 of 500 once, on a loaded machine).
	waitReplicas(t, be, 2, 500)
	stats, err = be.Stats(ctx)
	require.NoError(t, err)
	assert.Equal(t, 500, stats.Papers)
	t.Logf("cluster: %s", strings.Join(stats.Detail, "; "))

	// Every node, as coordinator, answers the same.
	for _, n := range c.Nodes {
		setStep("same answers through " + n.Name)
		ro := openURL(t, "weaviate://"+n.Addr()+"/Cluster", retrieve.Env{BM25: pipelineBM25})
		// The BM25 index of a replica that async replication filled can
		// lag its objects for a few seconds (seen once under load: other
		// candidates at ranks 8-9 through one node): wait for it, and say
		// how long it took.
		queries := testQueries(recs, 10, 24)
		start := time.Now()
		for d := parityDiff(t, ro, st, queries, 10, 25); d != "" && time.Since(start) < time.Minute; d = parityDiff(t, ro, st, queries, 10, 25) {
			t.Logf("%s: rankings differ from the local index after %s (%s)", n.Name, time.Since(start).Round(time.Second), d)
			time.Sleep(2 * time.Second)
		}
		checkParity(t, ro, st, queries, 10, 25)
		// Lookups by ID go through the pid filter index, which on the
		// restarted node can lag the objects async replication copied
		// (494 of 500 once, on a loaded machine): wait for it, and say
		// how long it took.
		start = time.Now()
		for {
			all, err := ro.Papers(ctx, ids(recs))
			require.NoError(t, err)
			if len(all) == 500 || time.Since(start) > time.Minute {
				assert.Len(t, all, 500, "every paper through "+n.Name)
				break
			}
			t.Logf("%s: %d of 500 papers by ID after %s", n.Name, len(all), time.Since(start).Round(time.Second))
			time.Sleep(2 * time.Second)
		}
	}
}

func hasWarning(ws []string, sub string) bool {
	for _, w := range ws {
		if strings.Contains(w, sub) {
			return true
		}
	}
	return false
}

// waitReplicas waits (at most 2 minutes) until every node is healthy,
// every shard is listed by replicas nodes (a node down lists none of its
// shards, which comparing the counts alone took for agreement; a restarted
// node still loading them would too) and holds the same objects on each
// of them, n in all.
func waitReplicas(t *testing.T, be *weaviate.Backend, replicas, n int) {
	t.Helper()
	start := time.Now()
	var last string
	for time.Since(start) < 2*time.Minute {
		ns, err := be.Nodes(t.Context())
		if err == nil {
			ok, diff := weaviate.ReplicasAgree(ns)
			total, healthy := 0, true
			seen := map[string]bool{}
			for _, nd := range ns {
				healthy = healthy && nd.Status == "HEALTHY"
				for sh, c := range nd.Shards {
					if !seen[sh] {
						seen[sh] = true
						total += c
					}
				}
			}
			short := weaviate.MissingReplicas(ns, replicas)
			if ok && healthy && len(short) == 0 && total == n {
				t.Logf("replicas agree after %s", time.Since(start).Round(time.Second))
				return
			}
			last = fmt.Sprintf("agree %v (%s), healthy %v, missing %v, %d objects: %+v", ok, diff, healthy, short, total, ns)
		} else {
			last = err.Error()
		}
		time.Sleep(time.Second)
	}
	t.Fatalf("replicas do not agree after 2 minutes: %s", last)
}

func ids(recs []corpus.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.Paper.ID
	}
	return out
}
