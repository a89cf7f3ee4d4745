package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/citefind/citefind"
	"github.com/citefind/citefind/engine"
	"github.com/citefind/citefind/eval"
	"github.com/citefind/citefind/internal/progress"
	"github.com/citefind/citefind/rerank"
	"github.com/citefind/citefind/rerank/learned"
	"github.com/citefind/citefind/retrieve/dense"
)

// learnedFlags are the flags of the learned reranker in eval.
type learnedFlags struct {
	model string
	folds int
	cache string
	seed  uint64
}

func (f *learnedFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.model, "rerank-model", "", "learned reranker model `FILE` (default: the database's own learned-model.json, else the built-in model)")
	fs.IntVar(&f.folds, "folds", 0, "with --rerank learned: cross-validate over `N` folds by citing paper (train on N-1, rerank the held-out fold) instead of using a model file")
	fs.StringVar(&f.cache, "rerank-cache", "", "candidate dataset `FILE` for --folds (default: in --db, keyed by the retrieval settings)")
	fs.Uint64Var(&f.seed, "folds-seed", 1, "seed of the fold assignment")
}

// validate checks the reranker flags for --rerank name.
func (f *learnedFlags) validate(name string) error {
	switch name {
	case rerank.NameNone, "":
		if f.folds != 0 || f.model != "" {
			return usageErr("eval: --folds and --rerank-model need --rerank learned")
		}
	case rerank.NameLearned:
		if f.folds != 0 && f.model != "" {
			return usageErr("eval: --folds trains its own models; drop --rerank-model")
		}
		if f.folds == 1 || f.folds < 0 {
			return usageErr("eval: --folds must be at least 2, got %d", f.folds)
		}
	case rerank.NameLLM:
		if f.folds != 0 || f.model != "" {
			return usageErr("eval: --folds and --rerank-model need --rerank learned")
		}
	default:
		return usageErr("eval: unknown reranker %q (available: %s)", name, strings.Join(citefind.RerankerNames, ", "))
	}
	return nil
}

// settings records the reranker settings in a saved run.
func (f *learnedFlags) settings(name string, s map[string]string) {
	if name != rerank.NameLearned {
		return
	}
	if f.folds > 0 {
		s["rerank-folds"] = strconv.Itoa(f.folds)
		s["rerank-folds-seed"] = strconv.FormatUint(f.seed, 10)
	} else if f.model != "" {
		s["rerank-model"] = f.model
	} else {
		s["rerank-model"] = "built-in"
	}
}

// checkLearnedModel fails when the engine's learned model (--rerank-model,
// the database's own or the built-in one) cannot rerank the fused lists
// of names: it was trained on other retrievers' candidates, or for
// another feature set.
func (c *evalCmd) checkLearnedModel(eng *engine.Engine, names []string) error {
	r, err := eng.Reranker(rerank.NameLearned)
	if err != nil {
		return err
	}
	if rb, ok := r.(rerank.RetrieverBound); ok {
		return rb.CheckRetrievers(names)
	}
	return nil
}

// crossValidated reranks each query's fused candidates with the model of
// its fold (eval --rerank learned --folds N).
type crossValidated struct{ cv *eval.CrossValidated }

func (x *crossValidated) rerank(ctx context.Context, text string, r *citefind.Result) (eval.StageList, error) {
	return x.cv.Rerank(ctx, text, r.Stages.Candidates)
}

// crossValidate trains the fold models on the benchmark's candidate
// dataset (made once and cached in the database folder).
func (c *evalCmd) crossValidate(ctx context.Context, f learnedFlags, dir string, eng *engine.Engine, b *eval.Bench,
	names []string, depth int, raw bool, eopts engine.Options, prog io.Writer) (*crossValidated, error) {
	ds, err := candidateDataset(ctx, c.stderr, dir, eng, b, names, depth, raw, eopts, f.cache, prog)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	cv, err := eval.CrossValidate(ctx, ds, f.folds, f.seed, func(done, total int) {
		fmt.Fprintf(c.stderr, "cross-validation: fold %d of %d trained (%s)\n", done, total, time.Since(start).Round(time.Second))
	})
	if err != nil {
		return nil, err
	}
	return &crossValidated{cv: cv}, nil
}

// denseSettings returns what a cached search result depends on besides the
// store when names has the dense retriever: the embedder's model (which
// `index --force` retrains without changing the store) and how the query
// vector is formed; "" without it.
func denseSettings(ctx context.Context, eng *engine.Engine, names []string) string {
	if !slices.Contains(names, citefind.RetrieverDense) {
		return ""
	}
	model, err := eng.DenseModel(ctx)
	if err != nil {
		model = "unavailable"
	}
	return fmt.Sprintf(" dense=%s dense_query=%s", model, dense.QueryForm)
}

// candidateDataset returns the benchmark's queries with their fused
// candidates and judgements (eval.CandidateDataset), cached in dir under
// the retrieval settings.
func candidateDataset(ctx context.Context, stderr io.Writer, dir string, eng *engine.Engine, b *eval.Bench, names []string,
	depth int, raw bool, eopts engine.Options, cache string, prog io.Writer) (*learned.Dataset, error) {
	gen, err := eng.Store().Generation(ctx)
	if err != nil {
		return nil, err
	}
	var sets []string
	for _, s := range b.Sets {
		sets = append(sets, s.Name)
	}
	p := eng.Pipeline()
	settings := fmt.Sprintf("bench=%s sets=%s retrievers=%s k=%d raw=%t fusion=%s weights=%s bm25=%+v generation=%d papers=%d",
		b.Name, strings.Join(sets, ","), strings.Join(names, ","), depth, raw, p.Method, formatWeights(p.Weights),
		eopts.Sparse, gen, eng.Count(ctx)) + denseSettings(ctx, eng, names)
	bars := map[string]*progress.Bar{}
	ds, err := eval.CandidateDataset(ctx, b, func(ctx context.Context, text string) ([]rerank.Candidate, error) {
		r, err := eng.Search(ctx, text, citefind.QueryOptions{K: depth, Retrievers: names, Raw: raw, Rerank: rerank.NameNone})
		if err != nil {
			return nil, err
		}
		return r.Stages.Candidates, nil
	}, func(ids []string) (map[string]string, error) { return eng.Store().Resolve(ctx, ids) }, eval.DatasetOptions{
		Retrievers: names, Depth: depth, Settings: settings, Cache: cache, Dir: dir, Log: stderr,
		Progress: func(set string, done, total int) {
			if prog == nil {
				return
			}
			if bars[set] == nil {
				bars[set] = progress.New(prog, "candidates "+b.Name+":"+set, int64(total), "queries")
			}
			bars[set].Set(int64(done), 0)
			if done == total {
				bars[set].Done()
			}
		},
	})
	if err != nil {
		return nil, benchErr("eval", err)
	}
	return ds, nil
}
