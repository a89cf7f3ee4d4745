package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/citefind/citefind"
	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/db"
	"github.com/citefind/citefind/engine"
	"github.com/citefind/citefind/eval"
	"github.com/citefind/citefind/internal/progress"
	"github.com/citefind/citefind/rerank"
	"github.com/citefind/citefind/rerank/learned"
)

// selfFlags are the flags of train --self.
type selfFlags struct {
	n    int
	seed uint64
	drop float64
	rare float64
	from string
}

// DefaultAdaptTrees is the number of trees --self adds to the model it
// adapts, unless --trees says otherwise.
const DefaultAdaptTrees = 100

func (f *selfFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&f.n, "pseudo", learned.DefaultPseudoQueries, "with --self: number of pseudo-queries")
	fs.Uint64Var(&f.seed, "pseudo-seed", learned.DefaultPseudoSeed, "with --self: seed of the papers chosen and the words dropped")
	fs.StringVar(&f.from, "from", "builtin", "with --self: the model to adapt, `MODEL`: builtin (the model that ships with citefind), a model FILE, or none (train from scratch)")
	fs.Float64Var(&f.rare, "pseudo-rare", learned.DefaultRareDrop, "with --self: share of a pseudo-query's content words dropped, the rarest in the library first, in (0, 0.9]")
	fs.Float64Var(&f.drop, "pseudo-drop", learned.DefaultDropRate, "with --self: share of the other words dropped at random, in (0, 0.9]")
}

// runSelf trains the learned reranker on pseudo-queries made from the
// papers of the database dir (train --self).
func (c *trainCmd) runSelf(ctx context.Context, args []string, dir, out string, sf selfFlags, p learned.Params, treesGiven bool, eopts engine.Options,
	depth int, prog io.Writer) error {
	if sf.n <= 0 {
		return usageErr("train: --pseudo must be at least 1, got %d", sf.n)
	}
	if sf.drop <= 0 || sf.drop > 0.9 {
		return usageErr("train: --pseudo-drop must be in (0, 0.9], got %v", sf.drop)
	}
	if sf.rare <= 0 || sf.rare > 0.9 {
		return usageErr("train: --pseudo-rare must be in (0, 0.9], got %v", sf.rare)
	}
	var base *learned.Model
	var err error
	switch sf.from {
	case "none":
	case "builtin":
		if base, err = learned.DefaultModel(); err != nil {
			return err
		}
	default:
		if base, err = learned.LoadModel(sf.from); err != nil {
			return err
		}
	}
	if base != nil && !treesGiven {
		p.Trees = DefaultAdaptTrees
	}
	if dir == "" {
		dir = db.DefaultDir()
	}
	if out == "" {
		out = filepath.Join(dir, db.LearnedModelFile)
	}
	eng, err := engine.Open(ctx, dir, eopts)
	if err != nil {
		return err
	}
	defer eng.Close()
	names := eopts.Retrievers
	if names == nil {
		names = eng.Pipeline().Retrievers
	}
	if sf.from == "builtin" {
		// The built-in model of this pipeline, when citefind ships one.
		if base, err = learned.DefaultModelFor(names); err != nil {
			return err
		}
	}
	if base != nil {
		if err := learned.New(base).CheckRetrievers(names); err != nil {
			return &exitError{code: 2, err: fmt.Errorf("train --self --from %s: %w (or --from none)", sf.from, err)}
		}
	}
	if containsDense(names) {
		if err := eng.DenseAvailable(ctx); err != nil {
			return err
		}
	}
	var papers []learned.PseudoPaper
	err = eng.Store().Each(ctx, func(p corpus.Paper) error {
		pp := learned.PseudoPaper{ID: p.ID, Paper: learned.Paper{Title: p.Title, Abstract: p.Abstract,
			Keywords: p.Keywords, Year: p.Year, Venue: p.Venue}}
		for _, a := range p.Authors {
			pp.Authors = append(pp.Authors, a.Name())
		}
		papers = append(papers, pp)
		return nil
	})
	if err != nil {
		return err
	}
	gen, err := eng.Store().Generation(ctx)
	if err != nil {
		return err
	}
	pl := eng.Pipeline()
	settings := fmt.Sprintf("retrievers=%s k=%d fusion=%s weights=%s bm25=%+v generation=%d",
		strings.Join(names, ","), depth, pl.Method, formatWeights(pl.Weights), eopts.Sparse, gen) + denseSettings(ctx, eng, names)
	var bar *progress.Bar
	ds, err := eval.SelfDataset(ctx, papers, func(ctx context.Context, text string) ([]rerank.Candidate, error) {
		r, err := eng.Search(ctx, text, citefind.QueryOptions{K: depth, Retrievers: names, Rerank: rerank.NameNone})
		if err != nil {
			return nil, err
		}
		return r.Stages.Candidates, nil
	}, eval.SelfOptions{
		Pseudo:     learned.PseudoOptions{N: sf.n, Seed: sf.seed, DropRate: sf.drop, RareDrop: sf.rare},
		Retrievers: names, Depth: depth, Settings: settings, Dir: dir, Log: c.stderr,
		Progress: func(done, total int) {
			if prog == nil {
				return
			}
			if bar == nil {
				bar = progress.New(prog, "pseudo-queries", int64(total), "queries")
			}
			bar.Set(int64(done), 0)
			if done == total {
				bar.Done()
			}
		},
	})
	if errors.Is(err, eval.ErrTooSmall) {
		return &exitError{code: 1, err: fmt.Errorf("train --self: the database %s is %w", dir, err)}
	}
	if err != nil {
		return err
	}
	kinds := map[string]int{}
	for _, q := range ds.Queries {
		kinds[q.Set]++
	}
	fmt.Fprintf(c.stderr, "pseudo-queries: %d (%d sentences, %d titles, %d keyword strings); %d found their paper among the top %d\n",
		len(ds.Queries), kinds[learned.PseudoSentence], kinds[learned.PseudoTitle], kinds[learned.PseudoKeywords],
		eval.SelfFound(ds), depth)
	samples, err := ds.Samples(ctx, ds.Retrievers)
	if err != nil {
		return err
	}
	start := time.Now()
	prov := learned.Provenance{Bench: "self:" + dir,
		Sets:    []string{learned.PseudoSentence, learned.PseudoTitle, learned.PseudoKeywords},
		Created: time.Now().UTC().Truncate(time.Second), Command: "citefind train " + strings.Join(args, " ")}
	var m *learned.Model
	if base != nil {
		m, err = learned.Adapt(ctx, base, ds, samples, p, prov)
	} else {
		m, err = learned.Train(ctx, ds, samples, nil, p, prov)
	}
	if err != nil {
		return err
	}
	if err := m.Save(out); err != nil {
		return err
	}
	how := "trained from scratch"
	if base != nil {
		how = fmt.Sprintf("%d trees added to %s", p.Trees, m.Training.Base)
	}
	fmt.Fprintf(c.stderr, "wrote %s: %s, %d features, %d pseudo-queries, %s in %s\n", out, m.Params.Kind,
		len(m.Features), m.Training.Queries, how, time.Since(start).Round(time.Millisecond))
	if out == filepath.Join(dir, db.LearnedModelFile) {
		fmt.Fprintf(c.stderr, "--rerank learned on %s now uses it (delete the file to go back to the built-in model)\n", dir)
	}
	fmt.Fprintf(c.stderr, "note: measured on three collections, self-training lowered nDCG@10 on all three with the default pipeline (docs/rerank.md); "+
		"check it on judged queries of your own: citefind eval --bench jsonl --queries FILE --db %s --rerank learned\n", dir)
	return nil
}

func containsDense(names []string) bool {
	for _, n := range names {
		if n == citefind.RetrieverDense {
			return true
		}
	}
	return false
}
