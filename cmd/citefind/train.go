package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/citefind/citefind"
	"github.com/citefind/citefind/engine"
	"github.com/citefind/citefind/eval"
	"github.com/citefind/citefind/rerank/learned"
)

type trainCmd struct{ env }

func (c *trainCmd) Name() string { return "train" }
func (c *trainCmd) Synopsis() string {
	return "fit the learned reranker on benchmarks' judgements, or on your own library (--self), and write a model file"
}

const trainUsage = `Usage: citefind train --bench NAME [--data DIR] [--db DIR] [--sample N] [--exclude-split SPLIT]
                      [--bench NAME … ] [--eval-bench NAME …] [--loco [--loco-out DIR] [--folds N]] [--out FILE]
                      [--retrievers LIST] [--fusion …] [--weights …] [-k N] [--balance]
                      [--kind lambdamart|linear] [--trees N] [--leaves N] [--learning-rate F]
                      [--min-leaf N] [--epochs N] [--ndcg-at N] [--seed N] [--bag N] [--drop-features LIST]
       citefind train --self [--db DIR] [--out FILE] [--from builtin|FILE|none] [--pseudo N] [model flags]

Fits the learned reranker (rerank/learned, docs/rerank.md) and writes the
model as JSON to --out. query, eval and serve use it with --rerank learned
--rerank-model FILE; without --rerank-model they use the database's own model
(DIR/learned-model.json, written by --self) when there is one, else the
built-in model (make train regenerates it). A model reranks the fused lists
of the retrievers it was trained with, and only those.

On benchmarks: for every query of each --bench the fused top -k candidates
(as eval retrieves them) are featurised — each retriever's rank and score and
the fused ones normalised within the query's list, the query's overlap with
the title, abstract and keywords as fractions, BM25 of the fields as a share
of the best candidate's, acronyms and author names shared with the query,
similarity to the top candidates, the overlap with the words around each
citation marker — and the model (LambdaMART by default) is fitted to put the
judged papers in the top 10 (nDCG@10). The candidates are cached in each
benchmark's database, so a second run skips retrieval.

Several collections: repeat --bench. --data, --db, --sample, --corpus,
--queries and --exclude-split apply to the --bench (or --eval-bench) they
follow (given before any, to the first). Benchmarks in the same database are
one collection. --eval-bench names benchmarks that are scored, never trained
on: after training, the model's nDCG@10 and recall@10 against the fused order
on each, with 95% bootstrap intervals of the gain. --exclude-split SPLIT
drops the queries of another split of the same BEIR collection (train on
ScisummNet's clean split without its keep_for_gold queries). --balance
weighs each collection the same, whatever its number of queries. --bag N
averages N models trained with seeds --seed, --seed+1, … (make train: 5),
which varies less from one seed to another than one model does.

--loco: leave-one-collection-out. For each collection, a model is trained on
the others and scored on it (its --eval-bench benchmarks, else its --bench
ones); no model is written unless --loco-out DIR (one file per held-out
collection, to check with citefind eval --rerank-model). This is how a model
does on a collection it never saw. With --folds N, each collection measured on
its own training queries (ACM-CR, which has no test split) also gets the
figures of the shipped recipe on queries it did not see: its queries are
dealt into N folds by citing paper, and each fold is reranked by a model
trained on every other collection and on the other folds.

--self: training on your own library, without judgements. Pseudo-queries are
made from the database's papers (--pseudo N, default 1000, a fixed sample):
a sentence of an abstract, a title, or a keyword string, with the rarest half
of its content words dropped and a fifth of the rest (--pseudo-rare,
--pseudo-drop), so that the query is not the paper's text verbatim, and the
sentence (or keywords) taken out of the paper the features see. The paper is
the answer, the pipeline's other candidates the negatives. By default the
built-in model is adapted (--from builtin: 100 more trees, --trees N, fitted to
the pseudo-queries from its scores); --from FILE adapts another model, --from
none trains from scratch. The model is written to --out (default
DIR/learned-model.json, which --rerank learned then uses on that database). A
database too small to learn from (fewer than 200 papers with a title or an
abstract to make queries from, or fewer than 50 queries finding their paper)
is refused, exit status 1. Measured on ACM-CR, SciFact and ScisummNet with
the default pipeline it lowered nDCG@10 on all three (docs/rerank.md): check
it on judged queries of your own (citefind eval --bench jsonl --queries FILE --db DIR --rerank learned).

The figures of a model on benchmarks it was trained on are in-sample; use
citefind eval --rerank learned --folds 5 (by citing paper) for one
collection, --loco across collections.

NAME: acm-cr | acm-cr:contexts | acm-cr:sentences | jsonl | beir[:SPLIT]

Examples:
  citefind train --bench acm-cr --out model.json
  citefind train --bench acm-cr --bench beir:train --data ../shared/data/devsets/scifact \
      --bench beir:clean --data ../shared/data/devsets/scisummnet --sample 2000 --exclude-split keep_for_gold \
      --eval-bench beir:test --data ../shared/data/devsets/scifact \
      --eval-bench beir:keep_for_gold --data ../shared/data/devsets/scisummnet --loco
  citefind train --self --db ~/papers`

// benchEntry is one --bench or --eval-bench with the flags that follow it.
type benchEntry struct {
	spec    string
	test    bool // --eval-bench: scored, not trained on
	opts    eval.BenchOptions
	db      string
	exclude string
	given   map[string]bool
}

// benchList collects --bench and --eval-bench with their own flags.
type benchList struct {
	entries []*benchEntry
	early   *benchEntry // flags given before any --bench
}

func (l *benchList) register(fs *flag.FlagSet) {
	fs.Func("bench", "benchmark `NAME` to train on (repeatable)", func(s string) error { return l.add(s, false) })
	fs.Func("eval-bench", "benchmark `NAME` to score the model on, not to train on (repeatable)", func(s string) error { return l.add(s, true) })
	fs.Func("data", "benchmark data `DIR` of the --bench before it (default $CITEFIND_DATA/NAME)", l.set("data", func(e *benchEntry, v string) error { e.opts.Data = v; return nil }))
	fs.Func("db", "database `DIR` of the --bench before it (default $CITEFIND_DB/bench/NAME); with --self, the library", l.set("db", func(e *benchEntry, v string) error { e.db = v; return nil }))
	fs.Func("corpus", "corpus `PATH` of a --bench jsonl", l.set("corpus", func(e *benchEntry, v string) error { e.opts.Corpus = v; return nil }))
	fs.Func("queries", "queries `FILE` of a --bench jsonl", l.set("queries", func(e *benchEntry, v string) error { e.opts.Queries = v; return nil }))
	fs.Func("sample", "a fixed sample of `N` queries of the --bench beir before it", l.set("sample", func(e *benchEntry, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("not a number of queries: %q", v)
		}
		e.opts.Sample = n
		return nil
	}))
	fs.Func("exclude-split", "drop the queries judged in `SPLIT` of the same BEIR collection from the --bench before it", l.set("exclude-split", func(e *benchEntry, v string) error { e.exclude = v; return nil }))
}

func (l *benchList) add(spec string, test bool) error {
	e := &benchEntry{spec: spec, test: test, given: map[string]bool{}}
	if len(l.entries) == 0 && l.early != nil {
		e.opts, e.db, e.exclude, e.given = l.early.opts, l.early.db, l.early.exclude, l.early.given
	}
	l.entries = append(l.entries, e)
	return nil
}

// set returns the flag function of a per-benchmark flag.
func (l *benchList) set(name string, apply func(*benchEntry, string) error) func(string) error {
	return func(v string) error {
		var e *benchEntry
		if len(l.entries) == 0 {
			if l.early == nil {
				l.early = &benchEntry{given: map[string]bool{}}
			}
			e = l.early
		} else {
			e = l.entries[len(l.entries)-1]
		}
		if e.given[name] {
			return fmt.Errorf("given twice for the same benchmark")
		}
		e.given[name] = true
		return apply(e, v)
	}
}

// dbDir is the database of --self (or of the only benchmark).
func (l *benchList) dbDir() string {
	if len(l.entries) > 0 {
		return l.entries[0].db
	}
	if l.early != nil {
		return l.early.db
	}
	return ""
}

// modelFlags are the training hyper-parameters.
type modelFlags struct {
	kind                  string
	trees, leaves, epochs int
	bag                   int
	minLeaf, ndcgAt       int
	lr                    float64
	seed                  uint64
	drop                  string
	balance               bool
}

func (f *modelFlags) register(fs *flag.FlagSet) {
	d := learned.DefaultParams()
	fs.StringVar(&f.kind, "kind", d.Kind, "model: lambdamart or linear")
	fs.IntVar(&f.trees, "trees", d.Trees, "LambdaMART: number of trees")
	fs.IntVar(&f.epochs, "epochs", 0, "linear: gradient steps (default 1000)")
	fs.IntVar(&f.leaves, "leaves", d.Leaves, "LambdaMART: leaves per tree")
	fs.Float64Var(&f.lr, "learning-rate", 0, "shrinkage (LambdaMART, default 0.05) or step size (linear, default 0.05)")
	fs.IntVar(&f.minLeaf, "min-leaf", d.MinLeaf, "LambdaMART: least candidates in a leaf")
	fs.IntVar(&f.ndcgAt, "ndcg-at", d.NDCGAt, "the nDCG cutoff the pairs are weighted by")
	fs.Uint64Var(&f.seed, "seed", d.Seed, "seed of every random choice")
	fs.IntVar(&f.bag, "bag", d.Bag, "LambdaMART: average `N` models trained with seeds --seed, --seed+1, … (0 or 1: one)")
	fs.StringVar(&f.drop, "drop-features", strings.Join(d.Drop, ","), "comma-separated `FEATURES` the model may not use: names, or prefixes ending in \".\" (see docs/rerank.md)")
	fs.BoolVar(&f.balance, "balance", false, "weigh each collection the same in the loss, whatever its number of queries")
}

func (f *modelFlags) params() (learned.Params, error) {
	if f.kind != learned.KindLambdaMART && f.kind != learned.KindLinear {
		return learned.Params{}, usageErr("train: --kind must be %s or %s, got %q", learned.KindLambdaMART, learned.KindLinear, f.kind)
	}
	if f.bag < 0 || f.bag > 100 {
		return learned.Params{}, usageErr("train: --bag must be 0 to 100, got %d", f.bag)
	}
	d := learned.DefaultParams()
	p := learned.Params{Kind: f.kind, Trees: f.trees, Leaves: f.leaves, LearningRate: f.lr, MinLeaf: f.minLeaf,
		NDCGAt: f.ndcgAt, Seed: f.seed, Epochs: f.epochs, Drop: splitList(f.drop), Bag: f.bag}
	if f.kind == learned.KindLambdaMART {
		p.L2, p.Bins, p.FeatureFraction, p.Sigma = d.L2, d.Bins, d.FeatureFraction, d.Sigma
	}
	names := learned.FeatureNames(nil)
	for _, d := range p.Drop {
		if !strings.HasSuffix(d, ".") && !slices.Contains(names, d) && !slices.ContainsFunc(perRetrieverSuffixes(), func(s string) bool { return strings.HasSuffix(d, "."+s) }) {
			return p, usageErr("train: --drop-features: %q is no feature name (nor a prefix ending in \".\")", d)
		}
	}
	return p, nil
}

// perRetrieverSuffixes are the suffixes of the per-retriever features.
func perRetrieverSuffixes() []string {
	var out []string
	for _, n := range learned.FeatureNames([]string{"x"}) {
		if s, ok := strings.CutPrefix(n, "x."); ok {
			out = append(out, s)
		}
	}
	return out
}

func (c *trainCmd) Run(ctx context.Context, args []string) error {
	fs := newFlagSet(c.env, "train", trainUsage)
	var bl benchList
	bl.register(fs)
	out := fs.String("out", "", "model `FILE` to write (default learned-model.json; with --self, DIR/learned-model.json)")
	retrievers := fs.String("retrievers", "", "comma-separated retrievers whose fused candidates are reranked: "+strings.Join(citefind.RetrieverNames, ", ")+" (default: the database's pipeline)")
	var ff fusionFlags
	ff.register(fs)
	var bf bm25Flags
	bf.register(fs)
	depth := fs.Int("k", 100, "candidates per query")
	raw := fs.Bool("raw", false, "search the query texts as given, without removing citation markers")
	cache := fs.String("cache", "", "candidate dataset `FILE` of a single --bench (default: in its database, keyed by the retrieval settings)")
	quiet := fs.Bool("quiet", false, "no progress display")
	loco := fs.Bool("loco", false, "leave-one-collection-out: train on all collections but one, score the one left out, for each")
	locoOut := fs.String("loco-out", "", "with --loco: write each held-out collection's model to `DIR`/loco-without-NAME.json")
	folds := fs.Int("folds", 0, "with --loco: also cross-validate the recipe trained on all collections within each collection that has no test split, over `N` folds by citing paper")
	self := fs.Bool("self", false, "train on pseudo-queries made from the papers of --db (no judgements needed)")
	var sf selfFlags
	sf.register(fs)
	var mf modelFlags
	mf.register(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErr("train: unexpected argument %q", pos[0])
	}
	p, err := mf.params()
	if err != nil {
		return err
	}
	var names []string
	if *retrievers != "" {
		if names, err = parseRetrievers("train", *retrievers); err != nil {
			return err
		}
	}
	if *depth < 2 || *depth > learned.MaxDepth {
		return usageErr("train: -k %d: a model reranks 2 to %d candidates a query", *depth, learned.MaxDepth)
	}
	var prog io.Writer = c.stderr
	if *quiet {
		prog = nil
	}
	eopts, err := ff.options()
	if err != nil {
		return err
	}
	if eopts.Sparse, err = bf.options(); err != nil {
		return err
	}
	eopts.Raw, eopts.Retrievers = *raw, names
	if *self {
		if len(bl.entries) > 0 || *loco {
			return usageErr("train: --self trains on the papers of --db, without --bench, --eval-bench or --loco")
		}
		treesGiven := false
		fs.Visit(func(f *flag.Flag) { treesGiven = treesGiven || f.Name == "trees" })
		return c.runSelf(ctx, args, bl.dbDir(), *out, sf, p, treesGiven, eopts, *depth, prog)
	}
	if *out == "" {
		*out = "learned-model.json"
	}
	var train int
	for _, e := range bl.entries {
		if !e.test {
			train++
		}
	}
	switch {
	case train == 0:
		return usageErr("train: --bench is required (acm-cr, acm-cr:contexts, acm-cr:sentences, jsonl, beir[:SPLIT]), or --self")
	case *cache != "" && len(bl.entries) > 1:
		return usageErr("train: --cache names the dataset of a single --bench")
	case *locoOut != "" && !*loco:
		return usageErr("train: --loco-out needs --loco")
	case *folds != 0 && !*loco:
		return usageErr("train: --folds needs --loco")
	case *folds < 0 || *folds == 1:
		return usageErr("train: --folds must be 2 or more, got %d", *folds)
	}

	cols, err := c.collections(ctx, bl.entries, eopts, *depth, *raw, *cache, prog)
	if err != nil {
		return err
	}
	o := eval.TransferOptions{Params: p, Balance: mf.balance, Log: c.stderr}
	if *loco {
		return c.leaveOneOut(ctx, cols, o, *locoOut, *folds)
	}
	var benches, sets []string
	for _, col := range cols {
		for _, ds := range col.Train {
			benches = append(benches, ds.Bench)
			for _, q := range ds.Queries {
				if s := ds.Bench + ":" + q.Set; !slices.Contains(sets, s) {
					sets = append(sets, s)
				}
			}
		}
	}
	if len(benches) == 1 {
		// One benchmark: its name and sets as before (acm-cr: contexts, sentences).
		sets = sets[:0]
		for _, q := range cols[0].Train[0].Queries {
			if !slices.Contains(sets, q.Set) {
				sets = append(sets, q.Set)
			}
		}
	}
	start := time.Now()
	fmt.Fprintf(c.stderr, "training %s on %s\n", p.Kind, strings.Join(benches, ", "))
	m, err := eval.TrainCollections(ctx, cols, o, learned.Provenance{Bench: strings.Join(benches, "+"), Sets: sets,
		Created: time.Now().UTC().Truncate(time.Second), Command: "citefind train " + strings.Join(args, " ")})
	if err != nil {
		return err
	}
	if err := m.Save(*out); err != nil {
		return err
	}
	fmt.Fprintf(c.stderr, "wrote %s: %s, %d features, %d queries (%d relevant of %d candidates), trained in %s\n",
		*out, m.Params.Kind, len(m.Features), m.Training.Queries, m.Training.Relevant, m.Training.Candidates,
		time.Since(start).Round(time.Millisecond))
	var rows []eval.TransferRow
	for _, col := range cols {
		for _, ds := range col.Test {
			if slices.Contains(col.Train, ds) {
				continue
			}
			sc, err := eval.ScoreModel(ctx, m, ds)
			if err != nil {
				return err
			}
			rows = append(rows, eval.TransferRow{Label: filepath.Base(*out), Scores: sc})
		}
	}
	if len(rows) > 0 {
		fmt.Fprintln(c.stdout, "The model on the --eval-bench benchmarks (queries it was not trained on; fused = the candidates' fused order):")
		fmt.Fprintln(c.stdout)
		return eval.WriteTransferTable(c.stdout, rows)
	}
	return nil
}

// collections resolves every benchmark, builds its database once, makes
// (or reads) its candidate dataset, and groups them by database: one
// collection per database.
func (c *trainCmd) collections(ctx context.Context, entries []*benchEntry, eopts engine.Options, depth int, raw bool,
	cache string, prog io.Writer) ([]eval.Collection, error) {
	var cols []eval.Collection
	byDB := map[string]int{}
	for _, e := range entries {
		if e.exclude != "" && e.test {
			return nil, usageErr("train: --exclude-split applies to a training --bench, not to --eval-bench %s", e.spec)
		}
		if name, _, _ := strings.Cut(e.spec, ":"); (e.opts.Sample > 0 || e.exclude != "") && name != "beir" {
			return nil, usageErr("train: --sample and --exclude-split apply to a --bench beir, not to %s", e.spec)
		}
	}
	for _, e := range entries {
		b, err := (&evalCmd{env: c.env}).benchDB(ctx, "train", e.spec, e.opts, "", &e.db, prog)
		if err != nil {
			return nil, err
		}
		if e.exclude != "" {
			n, err := eval.ExcludeSplit(b, e.opts.Data, e.exclude)
			if err != nil {
				return nil, benchErr("train", err)
			}
			fmt.Fprintf(c.stderr, "%s: %d queries of split %s left out, %d remain\n", e.spec, n, e.exclude, len(b.Sets[0].Queries))
		}
		ds, err := c.dataset(ctx, e.db, b, eopts, depth, raw, cache, prog)
		if err != nil {
			return nil, err
		}
		abs, err := filepath.Abs(e.db)
		if err != nil {
			return nil, err
		}
		i, ok := byDB[abs]
		if !ok {
			i = len(cols)
			byDB[abs] = i
			cols = append(cols, eval.Collection{Name: b.Name})
		}
		if e.test {
			cols[i].Test = append(cols[i].Test, ds)
		} else {
			cols[i].Train = append(cols[i].Train, ds)
		}
	}
	for i := range cols {
		if len(cols[i].Test) == 0 {
			cols[i].Test = cols[i].Train // ACM-CR: scored on the queries it trains on (only held out)
		}
	}
	return cols, nil
}

// dataset opens the benchmark's database and returns its candidate
// dataset (cached there).
func (c *trainCmd) dataset(ctx context.Context, dir string, b *eval.Bench, eopts engine.Options, depth int, raw bool,
	cache string, prog io.Writer) (*learned.Dataset, error) {
	eng, err := engine.Open(ctx, dir, eopts)
	if err != nil {
		return nil, err
	}
	defer eng.Close()
	names := eopts.Retrievers
	if names == nil {
		names = eng.Pipeline().Retrievers
	}
	if slices.Contains(names, citefind.RetrieverDense) {
		if err := eng.DenseAvailable(ctx); err != nil {
			return nil, err
		}
	}
	return candidateDataset(ctx, c.stderr, dir, eng, b, names, depth, raw, eopts, cache, prog)
}

// leaveOneOut prints the leave-one-collection-out table and whether the
// recipe meets the rule for a shipped model: no held-out topic set below
// the fused order by more than .005 nDCG@10, and a mean gain.
func (c *trainCmd) leaveOneOut(ctx context.Context, cols []eval.Collection, o eval.TransferOptions, dir string, folds int) error {
	var trained []eval.Collection
	var untrained []eval.Collection
	for _, col := range cols {
		if len(col.Train) > 0 {
			trained = append(trained, col)
		} else {
			untrained = append(untrained, col)
		}
	}
	held, err := eval.LeaveOneCollectionOut(ctx, trained, o)
	if err != nil {
		return benchErr("train", err)
	}
	var rows []eval.TransferRow
	for _, h := range held {
		rows = append(rows, eval.TransferRow{Label: "without " + h.Collection, Scores: h.Scores})
		if dir != "" {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			path := filepath.Join(dir, "loco-without-"+fileSafe(h.Collection)+".json")
			h.Model.Training.Created = time.Now().UTC().Truncate(time.Second)
			if err := h.Model.Save(path); err != nil {
				return err
			}
			fmt.Fprintf(c.stderr, "wrote %s\n", path)
		}
	}
	if len(untrained) > 0 {
		m, err := eval.TrainCollections(ctx, trained, o, learned.Provenance{Bench: "all"})
		if err != nil {
			return err
		}
		for _, col := range untrained {
			for _, ds := range col.Test {
				sc, err := eval.ScoreModel(ctx, m, ds)
				if err != nil {
					return err
				}
				rows = append(rows, eval.TransferRow{Label: "all (never trains on " + col.Name + ")", Scores: sc})
			}
		}
	}
	var cvRows []eval.TransferRow
	if folds > 0 {
		for i, col := range trained {
			sc, err := eval.CrossValidateWithin(ctx, trained, i, folds, 1, o)
			if err != nil {
				return benchErr("train", err)
			}
			if len(sc) > 0 {
				cvRows = append(cvRows, eval.TransferRow{Label: fmt.Sprintf("all, %d-fold CV within %s", folds, col.Name), Scores: sc})
			}
		}
	}
	fmt.Fprintln(c.stdout, "Leave-one-collection-out: each collection scored by a model trained on the others only.")
	fmt.Fprintln(c.stdout)
	if err := eval.WriteTransferTable(c.stdout, rows); err != nil {
		return err
	}
	worst, mean, n := 1.0, 0.0, 0
	for _, r := range rows {
		for _, s := range r.Scores {
			worst = min(worst, s.Gain(eval.NDCG10))
			mean += s.Gain(eval.NDCG10)
			n++
		}
	}
	mean /= float64(n)
	ok := worst >= -0.005 && mean > 0
	fmt.Fprintf(c.stdout, "\nnDCG@10 gain over the fused order: worst held-out set %+.4f, mean %+.4f over %d sets; rule (none below −.005, mean above 0): %s\n",
		worst, mean, n, map[bool]string{true: "met", false: "NOT met"}[ok])
	if len(cvRows) > 0 {
		fmt.Fprintln(c.stdout)
		fmt.Fprintln(c.stdout, "The recipe trained on all collections, cross-validated within each collection that has no test split (folds by citing paper; each fold reranked by a model trained on the other collections and the other folds):")
		fmt.Fprintln(c.stdout)
		if err := eval.WriteTransferTable(c.stdout, cvRows); err != nil {
			return err
		}
	}
	return nil
}

// fileSafe turns a collection name into a file name part.
func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == ':' || r == '/' || r == ' ' {
			return '-'
		}
		return r
	}, s)
}
