package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
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
	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/eval"
	"github.com/citefind/citefind/internal/progress"
	"github.com/citefind/citefind/rerank"
	"github.com/citefind/citefind/rerank/learned"
	"github.com/citefind/citefind/retrieve"
)

// learnedFlags are the flags of the learned reranker in eval.
type learnedFlags struct {
	model string
	folds int
	cache string
	seed  uint64
}

func (f *learnedFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.model, "rerank-model", "", "learned reranker model `FILE` (default: the built-in model, trained on ACM-CR)")
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

// rerankStage returns the "reranked" stage of eval for --rerank name, or
// nil for none. With --folds it cross-validates on the benchmark's
// candidates first: each query is then reranked by the fold model that
// never saw its citing paper.
func (c *evalCmd) rerankStage(ctx context.Context, name string, f learnedFlags, db string, eng *citefind.Engine, b *benchSpec,
	retrievers []string, depth int, raw bool, eopts citefind.EngineOptions, prog io.Writer) (*eval.Stage, error) {
	if err := f.validate(name); err != nil || name != rerank.NameLearned {
		return nil, err
	}
	candOpts := citefind.QueryOptions{K: depth, Retrievers: retrievers, Raw: raw}
	stage := func(pick func(text string) (*learned.Reranker, error)) *eval.Stage {
		return &eval.Stage{Name: "reranked", Retriever: retrieve.RetrieverFunc(func(ctx context.Context, text string, k int) ([]corpus.Hit, error) {
			r, err := pick(text)
			if err != nil {
				return nil, err
			}
			o := candOpts
			o.K = k
			cands, _, _, err := eng.Candidates(ctx, text, o)
			if err != nil {
				return nil, err
			}
			out, err := r.Rerank(ctx, text, cands)
			if err != nil {
				return nil, err
			}
			hits := make([]corpus.Hit, len(out.Candidates))
			for i, c := range out.Candidates {
				hits[i] = corpus.Hit{ID: c.ID, Score: out.Scores[i]}
			}
			return hits, nil
		})}
	}
	if f.folds == 0 {
		var m *learned.Model
		var err error
		if f.model != "" {
			m, err = learned.LoadModel(f.model)
		} else {
			m, err = learned.DefaultModel()
		}
		if err != nil {
			return nil, err
		}
		if !slices.Equal(m.Retrievers, retrievers) {
			fmt.Fprintf(c.stderr, "warning: the learned model was trained on candidates from %s; this run retrieves with %s\n",
				strings.Join(m.Retrievers, ","), strings.Join(retrievers, ","))
		}
		r := learned.New(m)
		return stage(func(string) (*learned.Reranker, error) { return r, nil }), nil
	}
	ds, err := candidateDataset(ctx, c.stderr, db, eng, b, retrievers, depth, raw, eopts, f.cache, prog)
	if err != nil {
		return nil, err
	}
	samples, err := ds.Samples(ctx, ds.Retrievers)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	cv, err := learned.CrossValidate(ctx, ds, samples, f.folds, learned.DefaultParams(), f.seed, func(done, total int) {
		fmt.Fprintf(c.stderr, "cross-validation: fold %d of %d trained (%s)\n", done, total, time.Since(start).Round(time.Second))
	})
	if err != nil {
		return nil, err
	}
	// Each query text is reranked by its fold's model; a text shared by
	// queries of different citing papers in different folds cannot be.
	fold := map[string]int{}
	for _, q := range ds.Queries {
		fq := cv.Fold[q.Group]
		if prev, ok := fold[q.Text]; ok && prev != fq {
			return nil, fmt.Errorf("cross-validation: query %s:%s has the text of a query of another fold", q.Set, q.ID)
		}
		fold[q.Text] = fq
	}
	rs := make([]*learned.Reranker, len(cv.Models))
	for i, m := range cv.Models {
		rs[i] = learned.New(m)
	}
	return stage(func(text string) (*learned.Reranker, error) {
		fq, ok := fold[text]
		if !ok {
			return nil, errors.New("cross-validation: query not in the candidate dataset")
		}
		return rs[fq], nil
	}), nil
}

// candidateDataset returns the benchmark's queries with their fused
// candidates and judgements, from the cache file when its settings
// match, else by running retrieval once and saving it there.
func candidateDataset(ctx context.Context, stderr io.Writer, db string, eng *citefind.Engine, b *benchSpec, retrievers []string,
	depth int, raw bool, eopts citefind.EngineOptions, cache string, prog io.Writer) (*learned.Dataset, error) {
	gen, err := eng.Store().Generation(ctx)
	if err != nil {
		return nil, err
	}
	var sets []string
	for _, s := range b.sets {
		sets = append(sets, s.Name)
	}
	settings := fmt.Sprintf("bench=%s sets=%s retrievers=%s k=%d raw=%t fusion=%s weights=%s bm25=%+v generation=%d papers=%d",
		b.name, strings.Join(sets, ","), strings.Join(retrievers, ","), depth, raw, eopts.Fusion, formatWeights(eopts.Weights),
		eopts.Sparse, gen, eng.Count())
	if cache == "" {
		h := sha256.Sum256([]byte(settings))
		cache = filepath.Join(db, "learned-dataset-"+hex.EncodeToString(h[:6])+".json.gz")
	}
	if ds, err := learned.LoadDataset(cache); err == nil && ds.Settings == settings {
		fmt.Fprintf(stderr, "candidate dataset: %d queries from %s\n", len(ds.Queries), cache)
		return ds, nil
	} else if err == nil {
		fmt.Fprintf(stderr, "candidate dataset %s was made with other settings; rebuilding it\n", cache)
	} else if !errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(stderr, "candidate dataset %s is unusable (%v); rebuilding it\n", cache, err)
	}
	ds := &learned.Dataset{Version: learned.DatasetVersion, Bench: b.name, Depth: depth,
		Retrievers: slices.Clone(retrievers), Settings: settings, Created: time.Now().UTC()}
	for _, set := range b.sets {
		if set.Gold != nil {
			return nil, usageErr("the learned reranker trains on benchmarks judged by paper IDs (acm-cr, jsonl), not on %s's gold papers", b.name)
		}
		var ids []string
		for _, q := range set.Queries {
			ids = append(ids, q.Relevant...)
		}
		slices.Sort(ids)
		resolved, err := eng.Store().Resolve(ctx, slices.Compact(ids))
		if err != nil {
			return nil, fmt.Errorf("resolve judged ids: %w", err)
		}
		var bar *progress.Bar
		if prog != nil {
			bar = progress.New(prog, "candidates "+b.name+":"+set.Name, int64(len(set.Queries)), "queries")
		}
		for i, q := range set.Queries {
			cands, _, _, err := eng.Candidates(ctx, q.Text, citefind.QueryOptions{K: depth, Retrievers: retrievers, Raw: raw})
			if err != nil {
				bar.Done()
				return nil, fmt.Errorf("candidates of %s:%s: %w", set.Name, q.ID, err)
			}
			dq := learned.Query{Set: set.Name, ID: q.ID, Group: q.Group, Text: q.Text}
			for _, id := range q.Relevant {
				if p, ok := resolved[id]; ok {
					if !slices.Contains(dq.Relevant, p) {
						dq.Relevant = append(dq.Relevant, p)
					}
				} else {
					dq.Missing++
				}
			}
			ds.Add(dq, cands)
			bar.Set(int64(i+1), 0)
		}
		bar.Done()
	}
	if err := ds.Save(cache); err != nil {
		return nil, err
	}
	fmt.Fprintf(stderr, "candidate dataset: %d queries saved to %s\n", len(ds.Queries), cache)
	return ds, nil
}
