package weaviate_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/eval"
	"github.com/citefind/citefind/internal/datadir"
	"github.com/citefind/citefind/internal/weaviatetest"
	"github.com/citefind/citefind/retrieve"
	"github.com/citefind/citefind/retrieve/sparse"
)

// TestACMCRDepth measures how many candidates the re-scoring needs: for
// each candidate depth and set of searched fields, how many ACM-CR queries
// (the first 150 of each topic set) get exactly the local top 10, and the
// query latency. Gated like TestACMCRParity.
func TestACMCRDepth(t *testing.T) {
	if os.Getenv(EnvACMCR) == "" {
		t.Skipf("set %s=1 to measure", EnvACMCR)
	}
	dir := datadir.Bench("acm-cr")
	if _, err := os.Stat(filepath.Join(dir, "data", "acm-dl")); err != nil {
		t.Skipf("ACM-CR data not found at %s (set %s): %v", dir, datadir.Env, err)
	}
	ctx := t.Context()
	a, err := eval.LoadACMCR(dir)
	require.NoError(t, err)
	st, err := corpus.OpenStore(ctx, filepath.Join(t.TempDir(), "store.db"))
	require.NoError(t, err)
	defer st.Close()
	for _, f := range a.BibFiles {
		var recs []corpus.Record
		require.NoError(t, corpus.ReadFile(ctx, f, func(r corpus.Record) error {
			if ok, _ := a.Keep(r); ok {
				recs = append(recs, r)
			}
			return nil
		}, func(*corpus.ParseError) {}))
		_, err = st.Ingest(ctx, recs)
		require.NoError(t, err)
	}
	local := localIndex(t, st)
	node := weaviatetest.StartNode(t)
	be := openURL(t, "weaviate://"+node.Addr()+"/AcmCR", retrieve.Env{Store: st, BM25: pipelineBM25})
	_, err = be.Sync(ctx, st, retrieve.SyncOptions{})
	require.NoError(t, err)
	var queries []string
	for _, set := range a.Sets {
		for _, q := range set.Queries[:150] {
			queries = append(queries, retrieve.Clean(q.Text))
		}
	}
	want := make([][]string, len(queries))
	for i, q := range queries {
		ts, _ := sparse.QueryTerms(q, 1)
		hits, err := local.RetrieveTerms(ctx, ts, 10)
		require.NoError(t, err)
		want[i] = top10(hits)
	}
	for _, c := range []struct {
		depth  int
		fields []string
	}{{100, nil}, {200, nil}, {300, []string{sparse.FieldText}}, {300, nil}} {
		be.SetDepth(c.depth)
		be.SetSearchFields(c.fields)
		same := 0
		var lat []time.Duration
		for i, q := range queries {
			ts, _ := sparse.QueryTerms(q, 1)
			start := time.Now()
			hits, err := be.BM25(context.Background(), ts, 10)
			lat = append(lat, time.Since(start))
			require.NoError(t, err)
			if slices.Equal(top10(hits), want[i]) {
				same++
			}
		}
		slices.Sort(lat)
		t.Logf("depth %d, fields %v: %d of %d queries with the local top 10; p50 %s p99 %s", c.depth, c.fields, same, len(queries),
			lat[len(lat)/2].Round(time.Millisecond), lat[len(lat)*99/100].Round(time.Millisecond))
	}
}
