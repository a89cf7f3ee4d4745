package main

import (
	"context"
	"fmt"
	"io"
	"slices"
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
	return "fit the learned reranker on a benchmark's judgements and write a model file"
}

const trainUsage = `Usage: citefind train [--db DIR] --bench NAME [--data DIR] [--out FILE]
                      [--retrievers bm25[,dense]] [--fusion …] [--weights …] [-k N]
                      [--kind lambdamart|linear] [--trees N] [--leaves N] [--learning-rate F]
                      [--min-leaf N] [--epochs N] [--ndcg-at N] [--seed N] [--cache FILE]

Fits the learned reranker (rerank/learned) on the judgements of a benchmark
and writes the model as JSON to --out (default learned-model.json).
query, eval and serve use it with --rerank learned --rerank-model FILE; without
--rerank-model they use the built-in model (make train regenerates it).

For every query of the benchmark the fused top -k candidates of --retrievers
(as eval retrieves them) are featurised: each retriever's rank and score,
the fused rank and score, the number of retrievers, query overlap with the
title, abstract and keywords (coverage, idf-weighted coverage, bigrams,
BM25 of the title and abstract alone), acronyms and author names shared with
the query, year and venue priors, similarity to the top fused candidates,
and the overlap with the sentence and the words around each citation marker. The model (LambdaMART by default) is fitted to put the judged
papers in the top 10 (nDCG@10). The candidates are cached in --db
(--cache FILE), so a second run skips retrieval.

The figures of a model trained on a benchmark are in-sample on it; measure
with cross-validation: citefind eval --bench NAME --rerank learned --folds 5.

NAME: acm-cr (both topic sets) | acm-cr:contexts | acm-cr:sentences | jsonl

Example:
  citefind train --bench acm-cr --db ~/.local/share/citefind/bench/acm-cr \
      --out rerank/learned/default_model.json`

func (c *trainCmd) Run(ctx context.Context, args []string) error {
	fs := newFlagSet(c.env, "train", trainUsage)
	dir := fs.String("db", "", "benchmark database `DIR` (default $CITEFIND_DB/bench/NAME)")
	bench := fs.String("bench", "", "benchmark `NAME`")
	data := fs.String("data", "", "benchmark data `DIR` (default $CITEFIND_DATA/NAME)")
	corpusPath := fs.String("corpus", "", "corpus `PATH` for --bench jsonl")
	queries := fs.String("queries", "", "queries `FILE` for --bench jsonl")
	out := fs.String("out", "learned-model.json", "model `FILE` to write")
	retrievers := fs.String("retrievers", "bm25", "comma-separated retrievers whose fused candidates are reranked: "+strings.Join(citefind.RetrieverNames, ", ")+" (as eval and query take them)")
	var ff fusionFlags
	ff.register(fs)
	var bf bm25Flags
	bf.register(fs)
	depth := fs.Int("k", 100, "candidates per query")
	raw := fs.Bool("raw", false, "search the query texts as given, without removing citation markers")
	cache := fs.String("cache", "", "candidate dataset `FILE` (default: in --db, keyed by the retrieval settings)")
	quiet := fs.Bool("quiet", false, "no progress display")
	d := learned.DefaultParams()
	kind := fs.String("kind", d.Kind, "model: lambdamart or linear")
	trees := fs.Int("trees", d.Trees, "LambdaMART: number of trees")
	epochs := fs.Int("epochs", 0, "linear: gradient steps (default 1000)")
	leaves := fs.Int("leaves", d.Leaves, "LambdaMART: leaves per tree")
	lr := fs.Float64("learning-rate", 0, "shrinkage (LambdaMART, default 0.05) or step size (linear, default 0.05)")
	minLeaf := fs.Int("min-leaf", d.MinLeaf, "LambdaMART: least candidates in a leaf")
	ndcgAt := fs.Int("ndcg-at", d.NDCGAt, "the nDCG cutoff the pairs are weighted by")
	seed := fs.Uint64("seed", d.Seed, "seed of every random choice")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErr("train: unexpected argument %q", pos[0])
	}
	if *bench == "" {
		return usageErr("train: --bench is required (acm-cr, acm-cr:contexts, acm-cr:sentences, jsonl)")
	}
	if *kind != learned.KindLambdaMART && *kind != learned.KindLinear {
		return usageErr("train: --kind must be %s or %s, got %q", learned.KindLambdaMART, learned.KindLinear, *kind)
	}
	names, err := parseRetrievers("train", *retrievers)
	if err != nil {
		return err
	}
	if len(names) == 0 {
		return usageErr("train: --retrievers is empty")
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

	b, err := (&evalCmd{env: c.env}).benchDB(ctx, "train", *bench, eval.BenchOptions{Data: *data, Corpus: *corpusPath, Queries: *queries}, "", dir, prog)
	if err != nil {
		return err
	}
	eng, err := engine.Open(ctx, *dir, eopts)
	if err != nil {
		return err
	}
	defer eng.Close()
	if slices.Contains(names, citefind.RetrieverDense) {
		if err := eng.DenseAvailable(ctx); err != nil {
			return err
		}
	}
	ds, err := candidateDataset(ctx, c.stderr, *dir, eng, b, names, *depth, *raw, eopts, *cache, prog)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.stderr, "featurising %d queries\n", len(ds.Queries))
	samples, err := ds.Samples(ctx, ds.Retrievers)
	if err != nil {
		return err
	}
	p := learned.Params{Kind: *kind, Trees: *trees, Leaves: *leaves, LearningRate: *lr, MinLeaf: *minLeaf,
		NDCGAt: *ndcgAt, Seed: *seed, Epochs: *epochs}
	if *kind == learned.KindLambdaMART {
		p.L2, p.Bins, p.FeatureFraction, p.Sigma = d.L2, d.Bins, d.FeatureFraction, d.Sigma
	}
	var sets []string
	for _, s := range b.Sets {
		sets = append(sets, s.Name)
	}
	start := time.Now()
	fmt.Fprintf(c.stderr, "training %s on %d queries\n", *kind, len(samples))
	m, err := learned.Train(ctx, ds, samples, nil, p, learned.Provenance{Bench: *bench, Sets: sets,
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
	return nil
}
