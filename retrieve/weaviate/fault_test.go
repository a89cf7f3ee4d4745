package weaviate_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/internal/weaviatetest"
	"github.com/citefind/citefind/retrieve"
	"github.com/citefind/citefind/retrieve/weaviate"
)

// faultProxy stands between the backend and a real Weaviate and injects
// failures: batch answers that say objects were refused, and 503s.
type faultProxy struct {
	refuse      func(pid string) bool // mark these objects refused in batch answers
	fail503     atomic.Int64          // answer this many next GraphQL requests with 503
	refused     atomic.Int64
	unavailable atomic.Int64
}

func (f *faultProxy) start(t *testing.T, target string) string {
	u, _ := url.Parse("http://" + target)
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ModifyResponse = func(resp *http.Response) error {
		if resp.Request.Method != http.MethodPost || resp.Request.URL.Path != "/v1/batch/objects" || f.refuse == nil {
			return nil
		}
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		var objs []map[string]any
		if json.Unmarshal(b, &objs) == nil {
			for _, o := range objs {
				props, _ := o["properties"].(map[string]any)
				pid, _ := props["pid"].(string)
				if pid != "" && f.refuse(pid) {
					f.refused.Add(1)
					o["result"] = map[string]any{"errors": map[string]any{"error": []any{map[string]any{"message": "injected: shard busy"}}}}
				}
			}
			b, _ = json.Marshal(objs)
		}
		resp.Body = io.NopCloser(bytes.NewReader(b))
		resp.ContentLength = int64(len(b))
		resp.Header.Del("Content-Length")
		return nil
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/graphql" && f.fail503.Load() > 0 {
			f.fail503.Add(-1)
			f.unavailable.Add(1)
			http.Error(w, `{"error":[{"message":"injected: unavailable"}]}`, http.StatusServiceUnavailable)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// TestFaults: objects a batch refuses are retried and reported; an object
// refused every time fails the sync (ErrIncomplete) without advancing the
// generation, and nothing is silently missing; reads retry 503s.
func TestFaults(t *testing.T) {
	node := weaviatetest.StartNode(t)
	ctx := t.Context()
	recs := testPapers(120, 31)
	st := newStore(t, recs)
	f := &faultProxy{}
	addr := f.start(t, node.Addr())
	be := openURL(t, "weaviate://"+addr+"/Faults?batch=30", retrieve.Env{Store: st, BM25: pipelineBM25})

	// Refused once: written on a retry, with a warning.
	var seen sync.Map
	f.refuse = func(pid string) bool {
		if pid != recs[7].Paper.ID && pid != recs[70].Paper.ID {
			return false
		}
		_, again := seen.LoadOrStore(pid, true)
		return !again
	}
	rep, err := be.Sync(ctx, st, retrieve.SyncOptions{})
	require.NoError(t, err)
	assert.Equal(t, int64(2), f.refused.Load())
	require.Len(t, rep.Warnings, 2, "%v", rep.Warnings)
	assert.Contains(t, rep.Warnings[0], "injected: shard busy")
	stats, err := be.Stats(ctx)
	require.NoError(t, err)
	assert.Equal(t, 120, stats.Papers)

	// Refused always: the sync fails, names the paper, and the collection
	// stays at the previous generation.
	before := stats.Generation
	more := testPapers(140, 32)[120:]
	_, err = st.Ingest(ctx, more)
	require.NoError(t, err)
	bad := more[5].Paper.ID
	f.refuse = func(pid string) bool { return pid == bad }
	_, err = be.Sync(ctx, st, retrieve.SyncOptions{})
	require.ErrorIs(t, err, weaviate.ErrIncomplete)
	assert.Contains(t, err.Error(), bad)
	stats, err = be.Stats(ctx)
	require.NoError(t, err)
	assert.Equal(t, before, stats.Generation, "a failed sync does not advance the generation")

	// The fault goes away: the next sync completes.
	f.refuse = nil
	_, err = be.Sync(ctx, st, retrieve.SyncOptions{})
	require.NoError(t, err)
	stats, err = be.Stats(ctx)
	require.NoError(t, err)
	assert.Equal(t, 140, stats.Papers)
	gen, _ := st.Generation(ctx)
	assert.Equal(t, gen, stats.Generation)

	// Reads retry 503s with backoff.
	f.fail503.Store(2)
	hits, err := be.BM25(ctx, weightedQuery(t, "retrieval model"), 5)
	require.NoError(t, err)
	assert.NotEmpty(t, hits)
	assert.Equal(t, int64(2), f.unavailable.Load())
	// … and give up with ErrUnavailable when it lasts.
	f.fail503.Store(1000)
	_, err = be.Papers(ctx, []string{recs[0].Paper.ID})
	require.ErrorIs(t, err, weaviate.ErrUnavailable)
	f.fail503.Store(0)
	checkParity(t, be, st, testQueries(append(recs, more...), 10, 33), 10, 34)
}
