package contrast_test

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"fmt"
	"math"
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
	"github.com/citefind/citefind/build"
	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/db"
	"github.com/citefind/citefind/engine"
	"github.com/citefind/citefind/eval"
	"github.com/citefind/citefind/fuse"
	"github.com/citefind/citefind/internal/datadir"
	"github.com/citefind/citefind/retrieve"
	"github.com/citefind/citefind/retrieve/dense"
	"github.com/citefind/citefind/retrieve/dense/contrast"
)

// The measurement is opt-in: CITEFIND_MEASURE=1. CITEFIND_MEASURE_DB names
// a folder that keeps the benchmark databases (one sub-folder per
// collection) and the cached BM25 lists between runs; without it they are
// built in a temporary folder.
const (
	measureEnv   = "CITEFIND_MEASURE"
	measureDBEnv = "CITEFIND_MEASURE_DB"
)

// topics is one topic set of a collection, with its role: "tune" (settings
// are chosen on it) or "report" (held out).
type topics struct {
	set  eval.TopicSet
	role string
}

// collection is a benchmark collection ready for measuring: its papers,
// topic sets and the shipped pipeline's lists for every query.
type collection struct {
	name    string
	db      string
	ids     []string
	papers  []corpus.Paper
	texts   []string
	sets    []topics
	resolve func(ids []string) (map[string]string, error)
	// lists[set][query id][retriever] are the shipped retrievers' top 100
	lists map[string]map[string]map[string][]corpus.Hit
}

func measureRoot(t *testing.T) string {
	if os.Getenv(measureEnv) == "" {
		t.Skip("set " + measureEnv + "=1")
	}
	db := os.Getenv(measureDBEnv)
	if db == "" {
		db = t.TempDir()
	}
	return db
}

// openCollection opens (building when missing) the database of one
// collection and loads its papers and lists.
func openCollection(t *testing.T, ctx context.Context, root, name string) *collection {
	t.Helper()
	c := &collection{name: name, db: filepath.Join(root, name)}
	require.NoError(t, os.MkdirAll(c.db, 0o755))
	storePath := filepath.Join(c.db, db.StoreFile)
	_, statErr := os.Stat(storePath)
	var ingest func(st *corpus.Store)
	switch name {
	case "acm-cr":
		dir := datadir.Bench("acm-cr")
		if _, err := os.Stat(filepath.Join(dir, "data", "acm-dl")); err != nil {
			t.Skipf("ACM-CR data not found at %s (set %s): %v", dir, datadir.Env, err)
		}
		a, err := eval.LoadACMCR(dir)
		require.NoError(t, err)
		c.sets = []topics{{a.Sets[0], "report"}, {a.Sets[1], "tune"}}
		ingest = func(st *corpus.Store) {
			_, err := build.Ingest(ctx, st, a.BibFiles, build.IngestOptions{Keep: a.Keep})
			require.NoError(t, err)
		}
	case "scifact", "scisummnet":
		dir := filepath.Join(datadir.Bench("devsets"), name)
		if _, err := os.Stat(filepath.Join(dir, eval.BEIRCorpusFile)); err != nil {
			t.Skipf("%s not found at %s (set %s): %v", name, dir, datadir.Env, err)
		}
		if name == "scifact" {
			train, err := eval.LoadBEIR(dir, eval.BEIROptions{Split: "train"})
			require.NoError(t, err)
			test, err := eval.LoadBEIR(dir, eval.BEIROptions{Split: "test"})
			require.NoError(t, err)
			c.sets = []topics{{test.Set, "report"}, {train.Set, "tune"}}
		} else {
			gold, err := eval.LoadBEIR(dir, eval.BEIROptions{Split: "keep_for_gold"})
			require.NoError(t, err)
			// tune on a fixed sample of the other judged sentences
			all, err := eval.LoadBEIR(dir, eval.BEIROptions{Split: "test"})
			require.NoError(t, err)
			held := map[string]bool{}
			for _, q := range gold.Set.Queries {
				held[q.ID] = true
			}
			rest := all.Set
			rest.Queries = slices.DeleteFunc(slices.Clone(rest.Queries), func(q eval.Query) bool { return held[q.ID] })
			rest.Name = "tune-sample"
			rest.Queries = sample(rest.Queries, 2000)
			c.sets = []topics{{gold.Set, "report"}, {rest, "tune"}}
		}
		ingest = func(st *corpus.Store) {
			in, err := os.Open(filepath.Join(dir, eval.BEIRCorpusFile))
			require.NoError(t, err)
			defer in.Close()
			conv := filepath.Join(c.db, name+"-corpus.jsonl")
			out, err := os.Create(conv)
			require.NoError(t, err)
			_, err = eval.ConvertBEIRCorpus(ctx, in, in.Name(), out, func(pe *corpus.ParseError) { t.Errorf("%v", pe) })
			require.NoError(t, err)
			require.NoError(t, out.Close())
			_, err = build.Ingest(ctx, st, []string{conv}, build.IngestOptions{})
			require.NoError(t, err)
		}
	default:
		t.Fatalf("unknown collection %q", name)
	}
	d, err := db.Create(ctx, c.db)
	require.NoError(t, err)
	st := d.Store
	if statErr != nil {
		ingest(st)
	}
	_, err = build.Indexes(ctx, d, build.Options{})
	require.NoError(t, err)
	require.NoError(t, st.Each(ctx, func(p corpus.Paper) error {
		c.ids = append(c.ids, p.ID)
		c.papers = append(c.papers, p)
		c.texts = append(c.texts, contrast.Text(p))
		return nil
	}))
	require.NoError(t, d.Close())

	eng, err := engine.Open(ctx, c.db, engine.Options{Retrievers: []string{citefind.RetrieverBM25}})
	require.NoError(t, err)
	t.Cleanup(func() { eng.Close() })
	c.resolve = func(ids []string) (map[string]string, error) { return eng.Store().Resolve(ctx, ids) }
	c.lists = loadLists(t, ctx, c, eng)
	t.Logf("%s: %d papers", name, len(c.ids))
	return c
}

// sample keeps n queries by a fixed stride (deterministic).
func sample(qs []eval.Query, n int) []eval.Query {
	if len(qs) <= n {
		return qs
	}
	out := make([]eval.Query, 0, n)
	for i := range n {
		out = append(out, qs[i*len(qs)/n])
	}
	return out
}

var shipped = []string{citefind.RetrieverBM25, citefind.RetrieverRM3, citefind.RetrieverCiting}

// loadLists returns the shipped retrievers' top 100 for every query,
// cached in the database folder.
func loadLists(t *testing.T, ctx context.Context, c *collection, eng *engine.Engine) map[string]map[string]map[string][]corpus.Hit {
	path := filepath.Join(c.db, "lists.gob")
	out := map[string]map[string]map[string][]corpus.Hit{}
	if f, err := os.Open(path); err == nil {
		err = gob.NewDecoder(f).Decode(&out)
		f.Close()
		require.NoError(t, err)
	}
	changed := false
	for _, ts := range c.sets {
		if out[ts.set.Name] == nil {
			out[ts.set.Name] = map[string]map[string][]corpus.Hit{}
		}
		for _, q := range ts.set.Queries {
			if out[ts.set.Name][q.ID] != nil {
				continue
			}
			m := map[string][]corpus.Hit{}
			res, err := eng.Search(ctx, q.Text, citefind.QueryOptions{K: 100, Retrievers: shipped})
			require.NoError(t, err)
			for _, r := range shipped {
				hits := res.Stages.Retrievers[r]
				m[r] = hits[:min(100, len(hits))]
			}
			out[ts.set.Name][q.ID] = m
			changed = true
		}
	}
	if changed {
		f, err := os.Create(path)
		require.NoError(t, err)
		require.NoError(t, gob.NewEncoder(f).Encode(out))
		require.NoError(t, f.Close())
	}
	return out
}

// variant is one embedder setting to measure.
type variant struct {
	name string
	opts contrast.Options
	// ens > 1 trains that many models (seeds seed, seed+1, …) and embeds a
	// text as their vectors concatenated, each scaled by 1/√ens (cosine =
	// the mean of the members' cosines).
	ens int
}

// ensemble embeds with several models at once (variant.ens).
type ensemble []*contrast.Model

func (e ensemble) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(e) == 1 {
		return e[0].Embed(ctx, texts)
	}
	out := make([][]float32, len(texts))
	scale := float32(1 / math.Sqrt(float64(len(e))))
	for _, m := range e {
		vs, err := m.Embed(ctx, texts)
		if err != nil {
			return nil, err
		}
		for i, v := range vs {
			for _, x := range v {
				out[i] = append(out[i], x*scale)
			}
		}
	}
	return out, nil
}

// variants reads CITEFIND_MEASURE_VARIANTS: ";"-separated settings, each
// "name:key=value,key=value" over the Options fields (dim, bigrams,
// epochs, batch, temp, lr, init, oneway, seed, minsteps, maxvocab).
func variants(t *testing.T) []variant {
	spec := os.Getenv("CITEFIND_MEASURE_VARIANTS")
	if spec == "" {
		spec = "default:"
	}
	var out []variant
	for v := range strings.SplitSeq(spec, ";") {
		name, kvs, _ := strings.Cut(strings.TrimSpace(v), ":")
		var o contrast.Options
		ens := 1
		for kv := range strings.SplitSeq(kvs, ",") {
			if kv == "" {
				continue
			}
			k, val, _ := strings.Cut(kv, "=")
			f, err := strconv.ParseFloat(val, 64)
			require.NoError(t, err, kv)
			switch k {
			case "dim":
				o.Dim = int(f)
			case "bigrams":
				o.Bigrams = int(f)
			case "epochs":
				o.Epochs = int(f)
			case "batch":
				o.Batch = int(f)
			case "temp":
				o.Temperature = f
			case "lr":
				o.LR = f
			case "init":
				o.InitScale = f
			case "oneway":
				o.OneWay = f != 0
			case "decay":
				o.Decay = f != 0
			case "lsa":
				if f != 0 {
					o.Init = contrast.InitLSA
				}
			case "overlap":
				o.Overlap = f
			case "heads":
				o.Heads = int(f)
			case "avg":
				o.Average = f != 0
			case "nb":
				o.Neighbours = f != 0
			case "spans":
				o.Spans = f != 0
			case "seed":
				o.Seed = uint64(f)
			case "ens":
				ens = int(f)
			case "minsteps":
				o.MinSteps = int(f)
			case "maxvocab":
				o.MaxVocab = int(f)
			case "mindf":
				o.MinDF = int(f)
			default:
				t.Fatalf("unknown variant key %q", k)
			}
		}
		out = append(out, variant{name, o, ens})
	}
	return out
}

// TestMeasure trains each variant on each collection's papers and scores
// the embedder alone and fused with the shipped BM25 (and with the
// shipped bm25+rm3+citing pipeline), min-max fusion at several weights.
// Collections: CITEFIND_MEASURE_SETS (default acm-cr,scifact,scisummnet).
func TestMeasure(t *testing.T) {
	root := measureRoot(t)
	ctx := t.Context()
	names := []string{"acm-cr", "scifact", "scisummnet"}
	if s := os.Getenv("CITEFIND_MEASURE_SETS"); s != "" {
		names = strings.Split(s, ",")
	}
	weights := []float64{0.25, 0.4, 0.5, 0.75, 1, 1.5}
	out, err := os.OpenFile(filepath.Join(root, "results.tsv"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	require.NoError(t, err)
	defer out.Close()
	stamp := time.Now().UTC().Format("2006-01-02T15:04")
	for _, name := range names {
		c := openCollection(t, ctx, root, name)
		// baselines
		for _, ts := range c.sets {
			for _, st := range []struct {
				name string
				fuse map[string]float64
			}{{"bm25", nil}, {"pipeline", map[string]float64{"bm25": 1, "rm3": 0.2, "citing": 0.5}}} {
				m := c.score(t, ctx, ts.set, func(q eval.Query) []corpus.Hit {
					l := c.lists[ts.set.Name][q.ID]
					if st.fuse == nil {
						return l["bm25"]
					}
					return fused(t, l, nil, st.fuse)
				})
				c.log(t, out, stamp, "-", ts, st.name, m, "")
			}
		}
		for _, v := range variants(t) {
			c.measure(t, ctx, out, stamp, v, weights)
		}
	}
}

func (c *collection) measure(t *testing.T, ctx context.Context, out *os.File, stamp string, v variant, weights []float64) {
	runtime.GC()
	peak := sampleHeap()
	start := time.Now()
	last := start
	var ms ensemble
	for k := 0; k < max(v.ens, 1); k++ {
		opts := v.opts
		name := v.name
		if k > 0 {
			if opts.Seed == 0 {
				opts.Seed = 1
			}
			opts.Seed += uint64(k)
			name = fmt.Sprintf("%s-m%d", v.name, k)
		}
		// saved under its settings, so variants that share a member
		// (an ensemble and its first model) load it
		sum := sha256.Sum256(fmt.Appendf(nil, "%+v", opts))
		saved := filepath.Join(c.db, "models", hex.EncodeToString(sum[:8])+".model")
		var m *contrast.Model
		if _, err := os.Stat(saved); err == nil && os.Getenv("CITEFIND_MEASURE_LOAD") != "" {
			m, err = contrast.LoadFile(saved, "")
			require.NoError(t, err)
			t.Logf("%s: loaded %s", name, saved)
		} else {
			var err error
			m, err = contrast.Train(ctx, slices.Values(c.papers), opts, func(p contrast.Progress) {
				if p.Stage == "train" && p.Step == p.Steps {
					t.Logf("  %s epoch %d/%d loss %.4f (+%s)", name, p.Epoch, p.Epochs, p.Loss, time.Since(last).Round(time.Millisecond))
					last = time.Now()
				}
			})
			require.NoError(t, err)
			if os.Getenv("CITEFIND_MEASURE_SAVE") != "" {
				require.NoError(t, os.MkdirAll(filepath.Join(c.db, "models"), 0o755))
				require.NoError(t, contrast.SaveFile(saved, m))
			}
		}
		ms = append(ms, m)
	}
	m := ms[0]
	trained := time.Since(start)
	estart := time.Now()
	vecs, err := ms.Embed(ctx, c.texts)
	require.NoError(t, err)
	embedded := time.Since(estart)
	heap := peak()
	cost := fmt.Sprintf("train %s embed %s heap %.0fMiB terms %d", trained.Round(time.Second), embedded.Round(time.Millisecond), float64(heap)/(1<<20), m.Terms())
	t.Logf("%s on %s (%s): %s", v.name, c.name, m.Spec(), cost)
	idx := newIndex(c.ids, vecs)
	for _, ts := range c.sets {
		// the dense query: the cleaned text; "citing": only the sentences
		// that hold a citation marker (the whole text when none does)
		qs := make([]string, len(ts.set.Queries))
		cs := make([]string, len(ts.set.Queries))
		for i, q := range ts.set.Queries {
			qs[i] = retrieve.Clean(q.Text)
			cs[i] = qs[i]
			if sents := retrieve.CitingSentences(q.Text); len(sents) > 0 {
				cs[i] = strings.Join(sents, " ")
			}
		}
		kinds := []string{"dense", "dense-citing", "dense-sentmean", "dense-mix", "dense-split", "dense-split-whole"}
		if k := os.Getenv("CITEFIND_MEASURE_KINDS"); k != "" {
			kinds = strings.Split(k, ",")
		}
		for _, kind := range kinds {
			var qv [][]float32
			var split map[string][]corpus.Hit // dense-split*: the query's lists fused already
			if fb, beta, ok := prfKind(kind); ok {
				// pseudo-relevance feedback in the embedding space: the
				// engine's query vector moved towards the mean of BM25's
				// top fb papers' vectors, by beta
				if len(ms) > 1 {
					continue
				}
				for _, q := range ts.set.Queries {
					v, err := dense.QueryVector(ctx, m, q.Text)
					require.NoError(t, err)
					qv = append(qv, idx.feedback(v, c.lists[ts.set.Name][q.ID]["bm25"], fb, beta))
				}
			}
			switch kind {
			case "dense-rank":
				// the whole query's list with rank-based scores,
				// 1/(60+rank), instead of cosines
				vs, err := ms.Embed(ctx, qs)
				require.NoError(t, err)
				res := idx.searchAll(vs, 100)
				split = map[string][]corpus.Hit{}
				for i, q := range ts.set.Queries {
					hs := make([]corpus.Hit, len(res[i]))
					for x, h := range res[i] {
						hs[x] = corpus.Hit{ID: h.ID, Score: 1 / float64(60+x+1)}
					}
					split[q.ID] = hs
				}
			case "dense-split", "dense-split-whole":
				// each citing sentence searched on its own (and the whole
				// query too, for -whole), the lists fused by RRF as the
				// citing BM25 retriever fuses its sentences'
				if slices.Equal(cs, qs) {
					continue
				}
				var texts []string
				var owner []int
				for i, q := range ts.set.Queries {
					sents := retrieve.CitingSentences(q.Text)
					if len(sents) == 0 || kind == "dense-split-whole" {
						texts, owner = append(texts, qs[i]), append(owner, i)
					}
					for _, st := range sents {
						texts, owner = append(texts, st), append(owner, i)
					}
				}
				vs, err := ms.Embed(ctx, texts)
				require.NoError(t, err)
				res := idx.searchAll(vs, 100)
				per := make([]map[string][]corpus.Hit, len(ts.set.Queries))
				for j, hs := range res {
					i := owner[j]
					if per[i] == nil {
						per[i] = map[string][]corpus.Hit{}
					}
					per[i][fmt.Sprint(j)] = hs
				}
				split = map[string][]corpus.Hit{}
				for i, q := range ts.set.Queries {
					f, err := fuse.Fuse(per[i], nil, fuse.Options{Method: fuse.RRF, K: 100, Depth: 100})
					require.NoError(t, err)
					hs := make([]corpus.Hit, len(f))
					for x, h := range f {
						hs[x] = corpus.Hit{ID: h.ID, Score: h.Score}
					}
					split[q.ID] = hs
				}
			case "dense", "dense-citing":
				texts := qs
				if kind == "dense-citing" {
					texts = cs
					if slices.Equal(cs, qs) {
						continue
					}
				}
				var err error
				qv, err = ms.Embed(ctx, texts)
				require.NoError(t, err)
			case "dense-sentmean":
				if len(ms) > 1 {
					continue
				}
				// the mean of the query's sentences' embeddings
				if slices.Equal(cs, qs) {
					continue
				}
				for _, q := range qs {
					sv, err := m.Embed(ctx, retrieve.Sentences(q))
					require.NoError(t, err)
					qv = append(qv, meanUnit(sv))
				}
			case "dense-mix":
				// the whole query's embedding plus its citing sentences'
				// (dense.QueryVector)
				if slices.Equal(cs, qs) || len(ms) > 1 {
					continue
				}
				for _, q := range ts.set.Queries {
					v, err := dense.QueryVector(ctx, m, q.Text)
					require.NoError(t, err)
					qv = append(qv, v)
				}
			}
			byID := split
			if byID == nil {
				dense := idx.searchAll(qv, 100)
				byID = map[string][]corpus.Hit{}
				for i, q := range ts.set.Queries {
					byID[q.ID] = dense[i]
				}
			}
			alone := c.score(t, ctx, ts.set, func(q eval.Query) []corpus.Hit { return byID[q.ID] })
			c.log(t, out, stamp, v.name, ts, kind, alone, cost)
			for _, w := range weights {
				for _, base := range []struct {
					name string
					w    map[string]float64
				}{{"bm25", map[string]float64{"bm25": 1}}, {"pipeline", map[string]float64{"bm25": 1, "rm3": 0.2, "citing": 0.5}}, {"default", map[string]float64{"bm25": 1, "citing": 0.5}}} {
					ws := maps(base.w)
					ws["dense"] = w
					f := c.score(t, ctx, ts.set, func(q eval.Query) []corpus.Hit {
						return fused(t, c.lists[ts.set.Name][q.ID], byID[q.ID], ws)
					})
					c.log(t, out, stamp, v.name, ts, fmt.Sprintf("%s+%s@%.2f", base.name, kind, w), f, "")
				}
			}
		}
	}
}

// meanUnit returns the normalised mean of vs (zero when it is zero).
func meanUnit(vs [][]float32) []float32 {
	if len(vs) == 0 {
		return nil
	}
	out := make([]float32, len(vs[0]))
	for _, v := range vs {
		for k, x := range v {
			out[k] += x
		}
	}
	var ss float64
	for _, x := range out {
		ss += float64(x) * float64(x)
	}
	if ss > 0 {
		inv := float32(1 / math.Sqrt(ss))
		for k := range out {
			out[k] *= inv
		}
	}
	return out
}

func maps(m map[string]float64) map[string]float64 {
	out := make(map[string]float64, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

// fused min-max fuses the lists named in weights (dense from d).
func fused(t *testing.T, lists map[string][]corpus.Hit, d []corpus.Hit, weights map[string]float64) []corpus.Hit {
	in := map[string][]corpus.Hit{}
	for name := range weights {
		if name == "dense" {
			in[name] = d
		} else {
			in[name] = lists[name]
		}
	}
	hits, err := fuse.Fuse(in, weights, fuse.Options{Method: fuse.MinMax, Depth: 100, K: 100})
	require.NoError(t, err)
	out := make([]corpus.Hit, len(hits))
	for i, h := range hits {
		out[i] = corpus.Hit{ID: h.ID, Score: h.Score}
	}
	return out
}

func (c *collection) score(t *testing.T, ctx context.Context, set eval.TopicSet, hits func(eval.Query) []corpus.Hit) eval.Metrics {
	byText := map[string][]eval.Query{}
	for _, q := range set.Queries {
		byText[q.Text] = append(byText[q.Text], q)
	}
	// eval.Run passes the text; map it back to the query (texts can
	// repeat; their lists are then the same retriever's answer anyway
	// except for the cached lists, keyed by id: take the first).
	r := retrieve.RetrieverFunc(func(ctx context.Context, text string, k int) ([]corpus.Hit, error) {
		return hits(byText[text][0]), nil
	})
	res, err := eval.Run(ctx, set, r, eval.Options{K: 100, Resolve: c.resolve})
	require.NoError(t, err)
	return res.Metrics
}

func (c *collection) log(t *testing.T, out *os.File, stamp, variant string, ts topics, stage string, m eval.Metrics, cost string) {
	t.Logf("%-28s %-10s %-13s %-6s %-22s R@10 %.4f R@100 %.4f nDCG@10 %.4f", variant, c.name, ts.set.Name, ts.role, stage,
		m[eval.Recall10], m[eval.Recall100], m[eval.NDCG10])
	fmt.Fprintf(out, "%s\t%s\t%s\t%s\t%s\t%s\t%.4f\t%.4f\t%.4f\t%s\n", stamp, variant, c.name, ts.set.Name, ts.role, stage,
		m[eval.Recall10], m[eval.Recall100], m[eval.NDCG10], cost)
}

// index is an exact brute-force cosine index over unit vectors.
type index struct {
	ids  []string
	row  map[string]int
	dim  int
	flat []float32
}

func newIndex(ids []string, vecs [][]float32) *index {
	x := &index{ids: ids, dim: len(vecs[0]), row: make(map[string]int, len(ids))}
	x.flat = make([]float32, 0, len(ids)*x.dim)
	for i, v := range vecs {
		x.flat = append(x.flat, v...)
		x.row[ids[i]] = i
	}
	return x
}

// prfKind parses "dense-prfK-BETA" (feedback papers, weight).
func prfKind(kind string) (int, float64, bool) {
	rest, ok := strings.CutPrefix(kind, "dense-prf")
	if !ok {
		return 0, 0, false
	}
	ks, bs, _ := strings.Cut(rest, "-")
	k, err1 := strconv.Atoi(ks)
	b, err2 := strconv.ParseFloat(bs, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return k, b, true
}

// feedback returns the unit vector (1-beta)·q + beta·m, m the unit mean of
// the vectors of the first k hits (q itself when none is indexed).
func (x *index) feedback(q []float32, hits []corpus.Hit, k int, beta float64) []float32 {
	var vs [][]float32
	for _, h := range hits[:min(k, len(hits))] {
		if r, ok := x.row[h.ID]; ok {
			vs = append(vs, x.flat[r*x.dim:(r+1)*x.dim])
		}
	}
	if len(vs) == 0 {
		return q
	}
	m := meanUnit(vs)
	out := make([]float32, len(q))
	for i := range q {
		out[i] = float32(1-beta)*q[i] + float32(beta)*m[i]
	}
	return meanUnit([][]float32{out})
}

// searchAll returns the k best documents of every query, best first (ties
// by id); a zero query gets nothing.
func (x *index) searchAll(qs [][]float32, k int) [][]corpus.Hit {
	n := len(x.ids)
	out := make([][]corpus.Hit, len(qs))
	const chunk = 48
	scores := make([]float32, chunk*n)
	flat := make([]float32, chunk*x.dim)
	for lo := 0; lo < len(qs); lo += chunk {
		hi := min(lo+chunk, len(qs))
		for i := lo; i < hi; i++ {
			copy(flat[(i-lo)*x.dim:], qs[i])
		}
		contrast.GemmNT(hi-lo, n, x.dim, flat, x.dim, x.flat, x.dim, scores, n, 2)
		var wg sync.WaitGroup
		for i := lo; i < hi; i++ {
			wg.Go(func() {
				zero := true
				for _, v := range qs[i] {
					if v != 0 {
						zero = false
						break
					}
				}
				if zero {
					return
				}
				row := scores[(i-lo)*n : (i-lo+1)*n]
				var top []corpus.Hit
				for j, s := range row {
					if len(top) == k && float64(s) <= top[k-1].Score {
						continue
					}
					h := corpus.Hit{ID: x.ids[j], Score: float64(s)}
					p, _ := slices.BinarySearchFunc(top, h, hitOrder)
					top = slices.Insert(top, p, h)
					if len(top) > k {
						top = top[:k]
					}
				}
				out[i] = top
			})
		}
		wg.Wait()
	}
	return out
}

func hitOrder(a, b corpus.Hit) int {
	if c := cmp.Compare(b.Score, a.Score); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
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

// TestMeasureQueryCost measures the per-query cost of the dense retriever
// on ACM-CR as `citefind query` pays it: the model (CITEFIND_MEASURE_MODEL,
// else one trained with the default options and saved there when the
// variable names a file that does not exist yet) embeds every paper into
// a real dense index (dense.Build, dense.Open: the int8 two-pass scan),
// then every query of both topic sets is embedded and searched (top 100),
// three times; it logs the p50/p99 of the dense retrieval alone, of
// embedding the query alone, of BM25 alone, and of BM25 and dense run in
// parallel as the engine does.
func TestMeasureQueryCost(t *testing.T) {
	root := measureRoot(t)
	ctx := t.Context()
	c := openCollection(t, ctx, root, "acm-cr")
	path := os.Getenv("CITEFIND_MEASURE_MODEL")
	var m *contrast.Model
	if path != "" {
		if _, err := os.Stat(path); err == nil {
			m, err = contrast.LoadFile(path, "")
			require.NoError(t, err)
		}
	}
	if m == nil {
		var err error
		m, err = contrast.Train(ctx, slices.Values(c.papers), variants(t)[0].opts, nil)
		require.NoError(t, err)
		if path != "" {
			require.NoError(t, contrast.SaveFile(path, m))
		}
	}
	t.Logf("model %s (%s)", m.Model(), m.Spec())
	dir := t.TempDir()
	i := 0
	next := func() (corpus.Paper, bool, error) {
		if i == len(c.papers) {
			return corpus.Paper{}, false, nil
		}
		p := c.papers[i]
		i++
		if len(p.Keywords) > 0 {
			p.Abstract = strings.TrimSpace(p.Abstract + "\n" + strings.Join(p.Keywords, ". "))
		}
		return p, true, nil
	}
	start := time.Now()
	st, err := dense.Build(ctx, dir, dense.BuildOptions{Embedder: m}, next, nil)
	require.NoError(t, err)
	t.Logf("dense index: %d papers embedded and written in %s", st.Docs, time.Since(start).Round(time.Millisecond))
	r, err := dense.Open(dir, m)
	require.NoError(t, err)
	eng, err := engine.Open(ctx, c.db, engine.Options{Retrievers: []string{citefind.RetrieverBM25}})
	require.NoError(t, err)
	defer eng.Close()
	bm25 := func(ctx context.Context, q string, k int) ([]corpus.Hit, error) {
		res, err := eng.Search(ctx, q, citefind.QueryOptions{K: k})
		if err != nil {
			return nil, err
		}
		return res.Stages.Retrievers[citefind.RetrieverBM25], nil
	}
	var times [4][]time.Duration // dense, embed, bm25, both in parallel
	for round := range 3 {
		for _, ts := range c.sets {
			for _, q := range ts.set.Queries {
				text := retrieve.Clean(q.Text)
				s := time.Now()
				_, err := r.Retrieve(ctx, text, 100)
				require.NoError(t, err)
				d := time.Since(s)
				s = time.Now()
				_, err = m.Embed(ctx, []string{text})
				require.NoError(t, err)
				e := time.Since(s)
				s = time.Now()
				_, err = bm25(ctx, q.Text, 100)
				require.NoError(t, err)
				b := time.Since(s)
				s = time.Now()
				var wg sync.WaitGroup
				wg.Go(func() { _, _ = r.Retrieve(ctx, text, 100) })
				_, _ = bm25(ctx, q.Text, 100)
				wg.Wait()
				both := time.Since(s)
				if round > 0 { // the first round warms the caches
					times[0] = append(times[0], d)
					times[1] = append(times[1], e)
					times[2] = append(times[2], b)
					times[3] = append(times[3], both)
				}
			}
		}
	}
	for i, name := range []string{"dense (embed + scan)", "embed the query", "bm25", "bm25 ∥ dense"} {
		slices.Sort(times[i])
		n := len(times[i])
		t.Logf("%-22s p50 %s p99 %s (%d queries)", name, times[i][n/2].Round(10*time.Microsecond), times[i][n*99/100].Round(10*time.Microsecond), n)
	}
}
