package lsa_test

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind"
	"github.com/citefind/citefind/corpus"
	dbpkg "github.com/citefind/citefind/db"
	"github.com/citefind/citefind/engine"
	"github.com/citefind/citefind/eval"
	"github.com/citefind/citefind/retrieve"
	"github.com/citefind/citefind/retrieve/dense/lsa"
)

// TestACMCRMeasure trains LSA on every ACM-CR paper and scores cosine
// retrieval (brute force, top 100) on both topic sets, for each dimension
// of $CITEFIND_MEASURE_DIMS (default 128,256,512) and each fold; then fuses
// the best setting with BM25. Opt-in: CITEFIND_MEASURE=1; set
// CITEFIND_MEASURE_DB to a folder to keep the benchmark database between
// runs.
func TestACMCRMeasure(t *testing.T) {
	if os.Getenv(measureEnv) == "" {
		t.Skip("set " + measureEnv + "=1")
	}
	ctx := t.Context()
	a, db := acmcrDB(t, ctx)
	st, err := corpus.OpenStore(ctx, filepath.Join(db, dbpkg.StoreFile))
	require.NoError(t, err)
	var ids, texts []string
	require.NoError(t, st.Each(ctx, func(p corpus.Paper) error {
		ids = append(ids, p.ID)
		texts = append(texts, lsa.Text(p))
		return nil
	}))
	require.NoError(t, st.Close())
	t.Logf("%d papers", len(ids))

	dims := []int{128, 256, 512}
	if s := os.Getenv("CITEFIND_MEASURE_DIMS"); s != "" {
		dims = dims[:0]
		for f := range strings.SplitSeq(s, ",") {
			d, err := strconv.Atoi(f)
			require.NoError(t, err)
			dims = append(dims, d)
		}
	}
	folds := []lsa.Fold{lsa.FoldPlain, lsa.FoldInverseSqrt, lsa.FoldInverse}
	if s := os.Getenv("CITEFIND_MEASURE_FOLDS"); s != "" {
		folds = folds[:0]
		for f := range strings.SplitSeq(s, ",") {
			folds = append(folds, lsa.Fold(f))
		}
	}
	opts := lsa.Options{}
	if s := os.Getenv("CITEFIND_MEASURE_POWER"); s != "" {
		opts.PowerIters, err = strconv.Atoi(s)
		require.NoError(t, err)
	}

	eng, err := engine.Open(ctx, db, engine.Options{Retrievers: []string{citefind.RetrieverBM25}})
	require.NoError(t, err)
	defer eng.Close()
	resolve := func(ids []string) (map[string]string, error) { return eng.Store().Resolve(ctx, ids) }

	type setting struct {
		model *lsa.Model
		index *docIndex
		score float64
		name  string
	}
	var best setting
	for _, dim := range dims {
		o := opts
		o.Dim = dim
		runtime.GC()
		peak := sampleHeap()
		start := time.Now()
		last := start
		m, err := lsa.Train(ctx, slices.Values(texts), o, func(stage string, done, total int) {
			if stage != "analyze" || done == len(texts) || done%(100*512) == 0 {
				t.Logf("  %s %d/%d  +%s", stage, done, total, time.Since(last).Round(time.Millisecond))
				last = time.Now()
			}
		})
		require.NoError(t, err)
		trained := time.Since(start)
		for _, fold := range folds {
			mf, err := m.WithFold(fold)
			require.NoError(t, err)
			estart := time.Now()
			vecs, err := mf.Embed(ctx, texts)
			require.NoError(t, err)
			embedded := time.Since(estart)
			if fold == folds[0] {
				t.Logf("lsa-%d (%d terms, power %d): train %s, embed %d papers %s, total %s, peak heap %.0f MiB",
					dim, m.Terms(), cmp.Or(o.PowerIters, lsa.DefaultPowerIters), trained.Round(time.Millisecond), len(texts), embedded.Round(time.Millisecond),
					(trained + embedded).Round(time.Millisecond), float64(peak())/(1<<20))
			}
			idx := newDocIndex(ids, vecs)
			name := fmt.Sprintf("lsa-%d/%s", dim, fold)
			var sum float64
			for _, set := range a.Sets {
				r := retrieve.RetrieverFunc(func(ctx context.Context, q string, k int) ([]corpus.Hit, error) {
					v, err := mf.Embed(ctx, []string{retrieve.Clean(q)})
					if err != nil {
						return nil, err
					}
					return idx.search(v[0], k), nil
				})
				res, err := eval.Run(ctx, set, r, eval.Options{K: 100, Resolve: resolve})
				require.NoError(t, err)
				logMetrics(t, name, set.Name, res.Metrics)
				sum += res.Metrics[eval.Recall10]
			}
			if sum > best.score {
				best = setting{model: mf, index: idx, score: sum, name: name}
			}
		}
	}
	if os.Getenv("CITEFIND_MEASURE_FUSE") == "0" || best.model == nil {
		return
	}
	t.Logf("fusion with BM25 for %s", best.name)
	for _, set := range a.Sets {
		type cached struct {
			bm25 []corpus.Hit
			vec  []float32
		}
		cache := map[string]cached{}
		get := func(ctx context.Context, q string) (cached, error) {
			if c, ok := cache[q]; ok {
				return c, nil
			}
			res, err := eng.Search(ctx, q, citefind.QueryOptions{K: 100})
			if err != nil {
				return cached{}, err
			}
			hits := res.Stages.Retrievers[citefind.RetrieverBM25]
			v, err := best.model.Embed(ctx, []string{retrieve.Clean(q)})
			if err != nil {
				return cached{}, err
			}
			c := cached{bm25: hits, vec: v[0]}
			cache[q] = c
			return c, nil
		}
		runs := []struct {
			name string
			fuse func(c cached) []corpus.Hit
		}{
			{"bm25", func(c cached) []corpus.Hit { return c.bm25 }},
			{"rrf60", func(c cached) []corpus.Hit { return rrf(60, c.bm25, best.index.search(c.vec, 100)) }},
		}
		for _, w := range []float64{0.1, 0.2, 0.3} {
			runs = append(runs, struct {
				name string
				fuse func(c cached) []corpus.Hit
			}{fmt.Sprintf("linear w=%.1f", w), func(c cached) []corpus.Hit {
				return best.index.linear(w, c.vec, c.bm25, best.index.search(c.vec, 100))
			}})
		}
		for _, run := range runs {
			r := retrieve.RetrieverFunc(func(ctx context.Context, q string, k int) ([]corpus.Hit, error) {
				c, err := get(ctx, q)
				if err != nil {
					return nil, err
				}
				return run.fuse(c), nil
			})
			res, err := eval.Run(ctx, set, r, eval.Options{K: 100, Resolve: resolve})
			require.NoError(t, err)
			logMetrics(t, run.name+" + "+best.name, set.Name, res.Metrics)
		}
	}
}

func logMetrics(t *testing.T, name, set string, m eval.Metrics) {
	t.Logf("%-32s %-9s recall@10 %.4f recall@100 %.4f ndcg@10 %.4f mrr@10 %.4f",
		name, set, m[eval.Recall10], m[eval.Recall100], m[eval.NDCG10], m[eval.MRR10])
}

// sampleHeap samples the in-use heap every 50 ms until the returned
// function is called, which returns the largest value seen.
func sampleHeap() func() uint64 {
	var mu sync.Mutex
	var peak uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			mu.Lock()
			peak = max(peak, ms.HeapInuse)
			mu.Unlock()
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 {
		close(stop)
		<-done
		return peak
	}
}

// docIndex is a brute-force cosine index over unit vectors.
type docIndex struct {
	ids  []string
	dim  int
	flat []float32
	pos  map[string]int
}

func newDocIndex(ids []string, vecs [][]float32) *docIndex {
	x := &docIndex{ids: ids, dim: len(vecs[0]), pos: make(map[string]int, len(ids))}
	x.flat = make([]float32, 0, len(ids)*x.dim)
	for i, v := range vecs {
		x.flat = append(x.flat, v...)
		x.pos[ids[i]] = i
	}
	return x
}

func (x *docIndex) cos(q []float32, i int) float64 {
	var s float32
	for d, v := range x.flat[i*x.dim : (i+1)*x.dim] {
		s += v * q[d]
	}
	return float64(s)
}

// search returns the k documents of highest cosine with q, best first
// (ties by id); a zero query gives nothing.
func (x *docIndex) search(q []float32, k int) []corpus.Hit {
	zero := true
	for _, v := range q {
		if v != 0 {
			zero = false
			break
		}
	}
	if zero {
		return nil
	}
	const parts = 2
	res := make([][]corpus.Hit, parts)
	var wg sync.WaitGroup
	n := len(x.ids)
	for p := range parts {
		wg.Go(func() {
			var top []corpus.Hit // kept sorted, worst last
			for i := n * p / parts; i < n*(p+1)/parts; i++ {
				s := x.cos(q, i)
				if len(top) == k && s <= top[k-1].Score {
					continue
				}
				h := corpus.Hit{ID: x.ids[i], Score: s}
				j, _ := slices.BinarySearchFunc(top, h, hitOrder)
				top = slices.Insert(top, j, h)
				if len(top) > k {
					top = top[:k]
				}
			}
			res[p] = top
		})
	}
	wg.Wait()
	all := slices.Concat(res...)
	slices.SortFunc(all, hitOrder)
	return all[:min(k, len(all))]
}

func hitOrder(a, b corpus.Hit) int {
	if c := cmp.Compare(b.Score, a.Score); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}

// rrf fuses ranked lists by reciprocal rank fusion with constant k.
func rrf(k float64, lists ...[]corpus.Hit) []corpus.Hit {
	score := map[string]float64{}
	for _, l := range lists {
		for r, h := range l {
			score[h.ID] += 1 / (k + float64(r+1))
		}
	}
	return sortedHits(score, 100)
}

// linear reranks the union of the BM25 and LSA lists by
// (1-w)·minmax(bm25) + w·minmax(cosine); a paper outside the BM25 list
// gets 0 for BM25, and every candidate gets its exact cosine.
func (x *docIndex) linear(w float64, q []float32, bm25, dense []corpus.Hit) []corpus.Hit {
	bn := map[string]float64{}
	if len(bm25) > 0 {
		hi, lo := bm25[0].Score, bm25[len(bm25)-1].Score
		for _, h := range bm25 {
			if hi > lo {
				bn[h.ID] = (h.Score - lo) / (hi - lo)
			} else {
				bn[h.ID] = 1
			}
		}
	}
	cand := map[string]float64{}
	for _, l := range [][]corpus.Hit{bm25, dense} {
		for _, h := range l {
			if i, ok := x.pos[h.ID]; ok {
				cand[h.ID] = x.cos(q, i)
			} else {
				cand[h.ID] = 0
			}
		}
	}
	lo, hi := 2.0, -2.0
	for _, c := range cand {
		lo, hi = min(lo, c), max(hi, c)
	}
	score := map[string]float64{}
	for id, c := range cand {
		cn := 0.0
		if hi > lo {
			cn = (c - lo) / (hi - lo)
		}
		score[id] = (1-w)*bn[id] + w*cn
	}
	return sortedHits(score, 100)
}

func sortedHits(score map[string]float64, k int) []corpus.Hit {
	out := make([]corpus.Hit, 0, len(score))
	for id, s := range score {
		out = append(out, corpus.Hit{ID: id, Score: s})
	}
	slices.SortFunc(out, hitOrder)
	return out[:min(k, len(out))]
}
