package weaviate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
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

// EnvACMCR gates TestACMCRParity: it indexes all of ACM-CR into a Weaviate
// node and a 3-node cluster (about half an hour on 2 cores).
const EnvACMCR = "CITEFIND_WEAVIATE_ACMCR"

// TestACMCRParity measures, on ACM-CR (both topic sets), BM25 and
// RM3-expanded BM25 through the Weaviate backend against the local BM25
// index over the same store, on one node and on a 3-node cluster with 3
// shards × 2 replicas; also Weaviate's own BM25 over the same analysed
// text, sync speed, query latency, memory and disk. The figures are in
// docs/scale.md. Set CITEFIND_WEAVIATE_ACMCR=1 to run it (make
// bench-weaviate); CITEFIND_WEAVIATE_REPORT=FILE writes them as JSON.
func TestACMCRParity(t *testing.T) {
	if os.Getenv(EnvACMCR) == "" {
		t.Skipf("set %s=1 to measure ACM-CR parity through Weaviate (about 30 minutes)", EnvACMCR)
	}
	dir := datadir.Bench("acm-cr")
	if _, err := os.Stat(filepath.Join(dir, "data", "acm-dl")); err != nil {
		t.Skipf("ACM-CR data not found at %s (set %s): %v", dir, datadir.Env, err)
	}
	weaviatetest.Require(t)
	ctx := t.Context()
	a, err := eval.LoadACMCR(dir)
	require.NoError(t, err)
	st, err := corpus.OpenStore(ctx, filepath.Join(t.TempDir(), "store.db"))
	require.NoError(t, err)
	defer st.Close()
	start := time.Now()
	for _, f := range a.BibFiles {
		var recs []corpus.Record
		err := corpus.ReadFile(ctx, f, func(r corpus.Record) error {
			if ok, _ := a.Keep(r); ok {
				recs = append(recs, r)
			}
			return nil
		}, func(*corpus.ParseError) {})
		require.NoError(t, err)
		_, err = st.Ingest(ctx, recs)
		require.NoError(t, err)
	}
	n, err := st.Count(ctx)
	require.NoError(t, err)
	t.Logf("store: %d papers (%s)", n, time.Since(start).Round(time.Second))
	local := localIndex(t, st)
	report := map[string]any{"papers": n, "date": time.Now().UTC().Format(time.RFC3339), "cores": runtime.NumCPU()}

	resolve := func(ids []string) (map[string]string, error) { return st.Resolve(ctx, ids) }
	run := func(name string, r retrieve.RetrieverFunc) map[string]*eval.Result {
		out := map[string]*eval.Result{}
		for _, set := range a.Sets {
			res, err := eval.Run(ctx, set, r, eval.Options{K: 100, Resolve: resolve})
			require.NoError(t, err)
			require.Zero(t, res.Failed, name)
			out[set.Name] = res
			t.Logf("%-28s %-9s R@10 %.4f nDCG@10 %.4f R@100 %.4f p50 %s p99 %s", name, set.Name,
				res.Metrics["recall@10"], res.Metrics["ndcg@10"], res.Metrics["recall@100"], res.LatencyP50, res.LatencyP99)
			report[name+"/"+set.Name] = map[string]any{"recall@10": res.Metrics["recall@10"], "ndcg@10": res.Metrics["ndcg@10"],
				"recall@100": res.Metrics["recall@100"], "p50_ms": ms(res.LatencyP50), "p99_ms": ms(res.LatencyP99)}
		}
		return out
	}
	terms := func(q string) []retrieve.Term {
		ts, err := sparse.QueryTerms(retrieve.Clean(q), 1)
		require.NoError(t, err)
		return ts
	}
	rm3For := func(bm25 func(context.Context, []retrieve.Term, int) ([]corpus.Hit, error), docs func(context.Context, []string) (map[string]string, error)) retrieve.RetrieverFunc {
		m := &sparse.RM3{Index: local, K3: 1, Docs: docs}
		return func(ctx context.Context, q string, k int) ([]corpus.Hit, error) {
			cleaned := retrieve.Clean(q)
			fb, err := bm25(ctx, terms(q), k)
			if err != nil {
				return nil, err
			}
			ex, err := m.ExpandFrom(ctx, cleaned, fb)
			if err != nil {
				return nil, err
			}
			return bm25(ctx, ex, k)
		}
	}
	storeTexts := func(ctx context.Context, ids []string) (map[string]string, error) {
		ps, err := st.GetMany(ctx, ids)
		if err != nil {
			return nil, err
		}
		return rm3Texts(ps), nil
	}
	localBM25 := func(ctx context.Context, ts []retrieve.Term, k int) ([]corpus.Hit, error) {
		return local.RetrieveTerms(ctx, ts, k)
	}
	base := run("local bm25", func(ctx context.Context, q string, k int) ([]corpus.Hit, error) { return localBM25(ctx, terms(q), k) })
	baseRM3 := run("local rm3", rm3For(localBM25, storeTexts))

	measure := func(label, raw string, nodes []*weaviatetest.Node) {
		be := openURL(t, raw, retrieve.Env{Store: st, BM25: pipelineBM25})
		start := time.Now()
		rep, err := be.Sync(ctx, st, retrieve.SyncOptions{})
		require.NoError(t, err)
		took := time.Since(start)
		t.Logf("%s: sync of %d papers in %s (%.0f papers/s), warnings %v", label, rep.Sent, took.Round(time.Second), float64(rep.Sent)/took.Seconds(), rep.Warnings)
		var rss, hwm, disk int64
		for _, nd := range nodes {
			r, h := procMem(nd.PID())
			rss, hwm, disk = rss+r, hwm+h, disk+dirBytes(nd.DataDir())
		}
		t.Logf("%s: weaviate RSS %d MiB (peak %d MiB), data %d MiB: %.0f bytes/paper on disk, %.0f bytes/paper RSS",
			label, rss>>20, hwm>>20, disk>>20, float64(disk)/float64(n), float64(rss)/float64(n))
		report[label+"/sync"] = map[string]any{"papers": rep.Sent, "seconds": took.Seconds(), "papers_per_s": float64(rep.Sent) / took.Seconds(),
			"rss_bytes": rss, "peak_rss_bytes": hwm, "disk_bytes": disk}
		wv := func(ctx context.Context, q string, k int) ([]corpus.Hit, error) { return be.BM25(ctx, terms(q), k) }
		wvTexts := func(ctx context.Context, ids []string) (map[string]string, error) {
			ps, err := be.Papers(ctx, ids)
			if err != nil {
				return nil, err
			}
			return rm3Texts(ps), nil
		}
		got := run(label+" bm25", wv)
		gotRM3 := run(label+" rm3", rm3For(be.BM25, wvTexts))
		addr := strings.SplitN(raw, "/", 4)[2]
		run(label+" weaviate-native bm25", func(ctx context.Context, q string, k int) ([]corpus.Hit, error) {
			return nativeBM25(ctx, addr, "AcmCR", terms(q), k)
		})
		for _, set := range a.Sets {
			for _, m := range []string{"recall@10", "ndcg@10"} {
				d := got[set.Name].Metrics[m] - base[set.Name].Metrics[m]
				d3 := gotRM3[set.Name].Metrics[m] - baseRM3[set.Name].Metrics[m]
				t.Logf("%s %s %s: bm25 %+.4f, rm3 %+.4f against local", label, set.Name, m, d, d3)
				require.InDelta(t, 0, d, 0.01, "%s %s %s bm25 parity", label, set.Name, m)
				require.InDelta(t, 0, d3, 0.01, "%s %s %s rm3 parity", label, set.Name, m)
			}
		}
		same, total := 0, 0
		for _, set := range a.Sets {
			for i, q := range got[set.Name].PerQuery {
				total++
				if slices.Equal(top10(q.Hits), top10(base[set.Name].PerQuery[i].Hits)) {
					same++
				}
			}
		}
		t.Logf("%s: %d of %d queries have the local top 10 exactly", label, same, total)
		report[label+"/identical_top10"] = fmt.Sprintf("%d/%d", same, total)
	}

	node := weaviatetest.StartNode(t)
	measure("1 node", "weaviate://"+node.Addr()+"/AcmCR", []*weaviatetest.Node{node})
	require.NoError(t, node.Kill())
	c := weaviatetest.StartCluster(t, 3)
	measure("3 nodes 3x2", "weaviate://"+c.Nodes[0].Addr()+"/AcmCR?shards=3&replicas=2", c.Nodes)

	if p := os.Getenv("CITEFIND_WEAVIATE_REPORT"); p != "" {
		b, _ := json.MarshalIndent(report, "", "  ")
		require.NoError(t, os.WriteFile(p, b, 0o644))
	}
}

func top10(hits []corpus.Hit) []string {
	out := make([]string, 0, 10)
	for _, h := range hits[:min(10, len(hits))] {
		out = append(out, h.ID)
	}
	return out
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// rm3Texts is the feedback text of papers, as the engine gives RM3.
func rm3Texts(ps map[string]corpus.Paper) map[string]string {
	out := make(map[string]string, len(ps))
	for id, p := range ps {
		out[id] = p.Title + "\n" + p.Abstract + "\n" + strings.Join(p.Keywords, ", ")
	}
	return out
}

// nativeBM25 is Weaviate's own BM25 over the analysed text (each query
// term repeated as often as it occurs: Weaviate's query-term weighting),
// without citefind's re-scoring.
func nativeBM25(ctx context.Context, addr, class string, terms []retrieve.Term, k int) ([]corpus.Hit, error) {
	var words []string
	for _, t := range terms {
		for range max(1, int(t.Weight+0.5)) {
			words = append(words, t.Text)
		}
	}
	q := fmt.Sprintf(`{ Get { %s(bm25: {query: %q, properties: ["text"]}, limit: %d) { pid _additional { score } } } }`, class, strings.Join(words, " "), k)
	body, _ := json.Marshal(map[string]string{"query": q})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/v1/graphql", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var ans struct {
		Data struct {
			Get map[string][]struct {
				PID        string `json:"pid"`
				Additional struct {
					Score string `json:"score"`
				} `json:"_additional"`
			} `json:"Get"`
		} `json:"data"`
		Errors []struct{ Message string } `json:"errors"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&ans); err != nil {
		return nil, err
	}
	if len(ans.Errors) > 0 {
		return nil, fmt.Errorf("graphql: %s", ans.Errors[0].Message)
	}
	rows := ans.Data.Get[class]
	hits := make([]corpus.Hit, len(rows))
	for i, r := range rows {
		var s float64
		fmt.Sscan(r.Additional.Score, &s)
		hits[i] = corpus.Hit{ID: r.PID, Score: s}
	}
	return hits, nil
}

// procMem returns a process's resident set size and its peak, in bytes.
func procMem(pid int) (rss, hwm int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		var kb int64
		if _, err := fmt.Sscanf(l, "VmRSS: %d kB", &kb); err == nil {
			rss = kb << 10
		}
		if _, err := fmt.Sscanf(l, "VmHWM: %d kB", &kb); err == nil {
			hwm = kb << 10
		}
	}
	return rss, hwm
}

func dirBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
