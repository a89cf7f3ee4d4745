package weaviate_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/internal/weaviatetest"
	"github.com/citefind/citefind/retrieve"
	"github.com/citefind/citefind/retrieve/weaviate"
)

func TestParseURL(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want weaviate.Config
		err  bool
	}{
		{name: "plain", in: "weaviate://127.0.0.1:8080/Papers", want: weaviate.Config{Addr: "127.0.0.1:8080", Addrs: []string{"127.0.0.1:8080"}, Collection: "Papers"}},
		{name: "default port", in: "weaviate://db.example/Papers", want: weaviate.Config{Addr: "db.example:8080", Addrs: []string{"db.example:8080"}, Collection: "Papers"}},
		{name: "layout", in: "weaviate://h:1/P_1?shards=3&replicas=2&write=one&read=QUORUM&depth=500&timeout=2s&batch=50",
			want: weaviate.Config{Addr: "h:1", Addrs: []string{"h:1"}, Collection: "P_1", Shards: 3, Replicas: 2, Write: "ONE", Read: "QUORUM", Depth: 500, Timeout: 2 * time.Second, BatchSize: 50}},
		{name: "nodes", in: "weaviate://a:1,b,c:3/P?hedge=500ms",
			want: weaviate.Config{Addr: "a:1", Addrs: []string{"a:1", "b:8080", "c:3"}, Collection: "P", Hedge: 500 * time.Millisecond}},
		{name: "no hedge", in: "weaviate://a:1,b:2/P?hedge=none", want: weaviate.Config{Addr: "a:1", Addrs: []string{"a:1", "b:2"}, Collection: "P", Hedge: -1}},
		{name: "empty node", in: "weaviate://a:1,,b:2/P", err: true},
		{name: "node twice", in: "weaviate://a:1,a:1/P", err: true},
		{name: "bad port", in: "weaviate://a:x,b:2/P", err: true},
		{name: "bad hedge", in: "weaviate://a:1,b:2/P?hedge=0s", err: true},
		{name: "hedge with one node", in: "weaviate://a:1/P?hedge=2s", err: true},
		{name: "last hedge with one node", in: "weaviate://a:1/P?hedge=none&hedge=2s", err: true},
		{name: "no hedge with one node", in: "weaviate://a:1/P?hedge=none", want: weaviate.Config{Addr: "a:1", Addrs: []string{"a:1"}, Collection: "P", Hedge: -1}},
		{name: "ipv6", in: "weaviate://[::1]:9000/P", want: weaviate.Config{Addr: "[::1]:9000", Addrs: []string{"[::1]:9000"}, Collection: "P"}},
		{name: "ipv6 default port", in: "weaviate://[::1]/P", want: weaviate.Config{Addr: "[::1]:8080", Addrs: []string{"[::1]:8080"}, Collection: "P"}},
		{name: "ipv6 nodes", in: "weaviate://[::1]:8080,[fe80::2],h:3/P?read=ONE",
			want: weaviate.Config{Addr: "[::1]:8080", Addrs: []string{"[::1]:8080", "[fe80::2]:8080", "h:3"}, Collection: "P", Read: "ONE"}},
		{name: "ipv6 without brackets", in: "weaviate://::1:8080,h:3/P", err: true},
		{name: "no flush wait", in: "weaviate://a:1/P?flushwait=none", want: weaviate.Config{Addr: "a:1", Addrs: []string{"a:1"}, Collection: "P", FlushWait: -1}},
		{name: "bad flush wait", in: "weaviate://a:1/P?flushwait=-1s", err: true},
		{name: "lower-case collection", in: "weaviate://h:1/papers", err: true},
		{name: "no collection", in: "weaviate://h:1/", err: true},
		{name: "no host", in: "weaviate:///Papers", err: true},
		{name: "bad shards", in: "weaviate://h:1/P?shards=0", err: true},
		{name: "bad level", in: "weaviate://h:1/P?write=SOME", err: true},
		{name: "unknown parameter", in: "weaviate://h:1/P?shard=3", err: true},
		{name: "other scheme", in: "http://h:1/P", err: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u, err := retrieve.ParseBackendURL(tc.in)
			if err != nil {
				require.True(t, tc.err, "%v", err)
				return
			}
			got, err := weaviate.ParseURL(u)
			if tc.err {
				require.ErrorIs(t, err, weaviate.ErrBadURL)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestRegistered(t *testing.T) {
	assert.Contains(t, retrieve.Backends(), "weaviate")
	_, err := retrieve.OpenBackend(t.Context(), "weaviate://h:1/lower", retrieve.Env{})
	require.ErrorIs(t, err, weaviate.ErrBadURL)
}

func TestUnavailable(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	u, _ := url.Parse("weaviate://127.0.0.1:1/Papers")
	_, err := weaviate.Open(ctx, u, retrieve.Env{}, weaviate.Options{})
	require.ErrorIs(t, err, weaviate.ErrUnavailable)
}

func openURL(t *testing.T, raw string, env retrieve.Env) *weaviate.Backend {
	t.Helper()
	u, err := url.Parse(raw)
	require.NoError(t, err)
	b, err := weaviate.Open(t.Context(), u, env, weaviate.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })
	return b
}

// checkParity compares the backend with the local index on queries.
func checkParity(t *testing.T, be retrieve.Backend, st *corpus.Store, queries []string, k int, seed uint64) {
	t.Helper()
	eachParity(t, be, st, queries, k, seed, func(i int, q string, want, got []corpus.Hit) {
		require.Len(t, got, len(want), "query %d %q", i, q)
		for j := range want {
			assert.Equal(t, want[j].ID, got[j].ID, "query %d %q rank %d", i, q, j)
			assert.InDelta(t, want[j].Score, got[j].Score, 1e-9*want[j].Score, "query %d rank %d", i, j)
		}
	})
}

// parityDiff is checkParity without assertions: the first difference
// from the local index, "" when there is none.
func parityDiff(t *testing.T, be retrieve.Backend, st *corpus.Store, queries []string, k int, seed uint64) string {
	t.Helper()
	diff := ""
	eachParity(t, be, st, queries, k, seed, func(i int, q string, want, got []corpus.Hit) {
		if diff != "" {
			return
		}
		if len(got) != len(want) {
			diff = fmt.Sprintf("query %d: %d hits, want %d", i, len(got), len(want))
			return
		}
		for j := range want {
			if want[j].ID != got[j].ID || math.Abs(want[j].Score-got[j].Score) > 1e-9*want[j].Score {
				diff = fmt.Sprintf("query %d rank %d: %s %.4f, want %s %.4f", i, j, got[j].ID, got[j].Score, want[j].ID, want[j].Score)
				return
			}
		}
	})
	return diff
}

// eachParity runs each query (every other one weighted as RM3 weighs)
// through the local index and the backend and passes both lists to check.
func eachParity(t *testing.T, be retrieve.Backend, st *corpus.Store, queries []string, k int, seed uint64, check func(i int, q string, want, got []corpus.Hit)) {
	t.Helper()
	ctx := t.Context()
	local := localIndex(t, st)
	r := rand.New(rand.NewPCG(seed, 3))
	for i, q := range queries {
		terms := weightedQuery(t, q)
		if i%2 == 1 {
			// weighted as RM3 weighs: real-valued, summing to 1
			for j := range terms {
				terms[j].Weight = 0.01 + r.Float64()
			}
		}
		want, err := local.RetrieveTerms(ctx, terms, k)
		require.NoError(t, err)
		got, err := be.BM25(ctx, terms, k)
		require.NoError(t, err, q)
		check(i, q, want, got)
	}
}

func TestNode(t *testing.T) {
	node := weaviatetest.StartNode(t)
	ctx := t.Context()
	recs := testPapers(400, 1)
	st := newStore(t, recs)
	raw := "weaviate://" + node.Addr() + "/Papers"

	// Before any sync: a serve without store cannot open it.
	u, _ := url.Parse(raw)
	_, err := weaviate.Open(ctx, u, retrieve.Env{BM25: pipelineBM25}, weaviate.Options{})
	require.ErrorIs(t, err, weaviate.ErrNoCollection)

	be := openURL(t, raw, retrieve.Env{Store: st, BM25: pipelineBM25})
	var calls, lastDone, lastTotal int
	start := time.Now()
	rep, err := be.Sync(ctx, st, retrieve.SyncOptions{Progress: func(done, total int) { calls++; lastDone, lastTotal = done, total }})
	require.NoError(t, err)
	gen, err := st.Generation(ctx)
	require.NoError(t, err)
	assert.Equal(t, 400, rep.Sent)
	assert.Equal(t, gen, rep.Generation)
	assert.Empty(t, rep.Warnings)
	t.Logf("first sync: %s", time.Since(start))
	assert.Positive(t, calls)
	assert.Equal(t, 400, lastDone)
	assert.Equal(t, 400, lastTotal)

	stats, err := be.Stats(ctx)
	require.NoError(t, err)
	assert.Equal(t, 400, stats.Papers)
	assert.Equal(t, gen, stats.Generation)
	assert.Equal(t, 0, stats.Vectors)
	t.Logf("stats detail: %v", stats.Detail)

	// A second Sync has nothing to do.
	rep, err = be.Sync(ctx, st, retrieve.SyncOptions{})
	require.NoError(t, err)
	assert.Zero(t, rep.Sent)

	queries := testQueries(recs, 40, 2)
	checkParity(t, be, st, queries, 20, 5)

	// A serve with no store answers from the collection alone.
	ro := openURL(t, raw, retrieve.Env{BM25: pipelineBM25})
	checkParity(t, ro, st, queries[:6], 10, 6)
	ids := []string{recs[3].Paper.ID, recs[10].Paper.ID, "10.0000/absent"}
	papers, err := ro.Papers(ctx, ids)
	require.NoError(t, err)
	require.Len(t, papers, 2)
	want, err := st.Get(ctx, recs[3].Paper.ID)
	require.NoError(t, err)
	assert.Equal(t, want, papers[recs[3].Paper.ID])

	df, n, err := ro.DocFreqs(ctx, []string{"retriev", "zzzabsent"})
	require.NoError(t, err)
	assert.Equal(t, 400, n)
	assert.Equal(t, 0, df["zzzabsent"])
	local := localIndex(t, st)
	wantDF, err := local.DocFreq("text", "retriev")
	require.NoError(t, err)
	assert.Equal(t, int(wantDF), df["retriev"])

	_, err = ro.Vector(ctx, []float32{1, 0}, 5)
	require.ErrorIs(t, err, retrieve.ErrNoVectors)

	// Update one paper, remove two, add one: Sync sends only those.
	changed := recs[5]
	changed.Paper.Abstract = "quantum entanglement teleportation of photons entanglement"
	added := testPapers(401, 9)[400]
	added.Ref, added.Key = "new", "new"
	_, err = st.Ingest(ctx, []corpus.Record{changed, added})
	require.NoError(t, err)
	removed, err := st.Remove(ctx, recs[7].Paper.ID, recs[8].Paper.ID)
	require.NoError(t, err)
	require.Equal(t, 2, removed)
	start = time.Now()
	rep, err = be.Sync(ctx, st, retrieve.SyncOptions{})
	require.NoError(t, err)
	t.Logf("update sync: %s, warnings %v", time.Since(start), rep.Warnings)
	assert.Empty(t, rep.Warnings)
	assert.Equal(t, 2, rep.Sent)
	assert.Equal(t, 2, rep.Removed)
	time.Sleep(weaviate.RefreshInterval)
	checkParity(t, ro, st, append(queries[:10], "quantum entanglement photons"), 20, 7)
	hits, err := ro.BM25(ctx, weightedQuery(t, "quantum entanglement photons"), 3)
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	assert.Equal(t, changed.Paper.ID, hits[0].ID)
	papers, err = ro.Papers(ctx, []string{recs[7].Paper.ID})
	require.NoError(t, err)
	assert.Empty(t, papers, "a removed paper is gone")
	stats, err = ro.Stats(ctx)
	require.NoError(t, err)
	assert.Equal(t, 399, stats.Papers)

	// Another database may not sync into this collection; Force takes it over.
	other := newStore(t, testPapers(50, 3))
	_, err = be.Sync(ctx, other, retrieve.SyncOptions{})
	require.ErrorIs(t, err, weaviate.ErrForeignCollection)
	start = time.Now()
	rep, err = be.Sync(ctx, other, retrieve.SyncOptions{Force: true})
	require.NoError(t, err)
	t.Logf("forced sync: %s, warnings %v", time.Since(start), rep.Warnings)
	assert.Empty(t, rep.Warnings)
	assert.Equal(t, 50, rep.Sent)
	assert.Equal(t, 399, rep.Removed, "a full sync deletes what the store does not hold")
	stats, err = be.Stats(ctx)
	require.NoError(t, err)
	assert.Equal(t, 50, stats.Papers)
	checkParity(t, be, other, testQueries(testPapers(50, 3), 10, 8), 10, 9)
}

func TestForeignCollection(t *testing.T) {
	node := weaviatetest.StartNode(t)
	ctx := t.Context()
	// A collection citefind did not make.
	body := `{"class":"Other","vectorizer":"none","properties":[{"name":"title","dataType":["text"]}]}`
	resp, err := httpPost(ctx, "http://"+node.Addr()+"/v1/schema", body)
	require.NoError(t, err)
	require.Equal(t, 200, resp)
	u, _ := url.Parse("weaviate://" + node.Addr() + "/Other")
	_, err = weaviate.Open(ctx, u, retrieve.Env{BM25: pipelineBM25}, weaviate.Options{})
	require.ErrorIs(t, err, weaviate.ErrForeignCollection)
	st := newStore(t, testPapers(10, 1))
	_, err = weaviate.Open(ctx, u, retrieve.Env{Store: st, BM25: pipelineBM25}, weaviate.Options{})
	require.ErrorIs(t, err, weaviate.ErrForeignCollection)
}

func TestEmbedder(t *testing.T) {
	node := weaviatetest.StartNode(t)
	ctx := t.Context()
	recs := testPapers(60, 4)
	st := newStore(t, recs)
	be := openURL(t, "weaviate://"+node.Addr()+"/Vec", retrieve.Env{Store: st, BM25: pipelineBM25})
	// A toy embedder: a 4-dim vector from letter counts.
	embed := func(dim int) func(context.Context, []corpus.Paper) ([][]float32, error) {
		return func(_ context.Context, ps []corpus.Paper) ([][]float32, error) {
			out := make([][]float32, len(ps))
			for i, p := range ps {
				v := make([]float32, dim)
				for j, c := range strings.ToLower(p.Title) {
					v[(int(c)+j)%dim] += 1
				}
				out[i] = v
			}
			return out, nil
		}
	}
	_, err := be.Sync(ctx, st, retrieve.SyncOptions{Embed: embed(4), Embedder: "toy4", Model: "toy4@1"})
	require.NoError(t, err)
	stats, err := be.Stats(ctx)
	require.NoError(t, err)
	assert.Equal(t, 4, stats.Dim)
	assert.Equal(t, "toy4", stats.Embedder)
	assert.Equal(t, "toy4@1", stats.VectorModel)
	assert.Equal(t, 60, stats.Vectors)

	// Nothing changed: nothing sent. The same embedder's model retrained:
	// every paper is embedded again, and the new model is reported.
	rep, err := be.Sync(ctx, st, retrieve.SyncOptions{Embed: embed(4), Embedder: "toy4", Model: "toy4@1"})
	require.NoError(t, err)
	assert.Zero(t, rep.Sent)
	rep, err = be.Sync(ctx, st, retrieve.SyncOptions{Embed: embed(4), Embedder: "toy4", Model: "toy4@2"})
	require.NoError(t, err)
	assert.Equal(t, 60, rep.Sent)
	stats, err = be.Stats(ctx)
	require.NoError(t, err)
	assert.Equal(t, "toy4", stats.Embedder)
	assert.Equal(t, "toy4@2", stats.VectorModel)
	vecs, _ := embed(4)(ctx, []corpus.Paper{recs[9].Paper})
	hits, err := be.Vector(ctx, vecs[0], 3)
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	assert.InDelta(t, 1.0, hits[0].Score, 1e-5, "the paper's own vector is nearest")
	_, err = be.Vector(ctx, []float32{1, 2}, 3)
	require.ErrorIs(t, err, weaviate.ErrSchemaMismatch)

	// Another embedder: refused; forced with another dimension: refused.
	_, err = be.Sync(ctx, st, retrieve.SyncOptions{Embed: embed(8), Embedder: "toy8"})
	require.ErrorIs(t, err, weaviate.ErrSchemaMismatch)
	_, err = be.Sync(ctx, st, retrieve.SyncOptions{Embed: embed(8), Embedder: "toy8", Force: true})
	require.ErrorIs(t, err, weaviate.ErrSchemaMismatch)
}

func TestMissingReplicas(t *testing.T) {
	ns := []weaviate.NodeShards{
		{Node: "node1", Status: "HEALTHY", Shards: map[string]int{"A": 10, "B": 7}},
		{Node: "node2", Status: "HEALTHY", Shards: map[string]int{"B": 7, "C": 3}},
		{Node: "node3", Status: "HEALTHY", Shards: map[string]int{}}, // restarted, shards not loaded yet
	}
	assert.Equal(t, []string{"shard A on 1 of 2 nodes", "shard C on 1 of 2 nodes"}, weaviate.MissingReplicas(ns, 2))
	assert.Empty(t, weaviate.MissingReplicas(ns, 1))
	ok, _ := weaviate.ReplicasAgree(ns)
	assert.True(t, ok, "the counts alone agree: only MissingReplicas sees the missing replicas")
}
