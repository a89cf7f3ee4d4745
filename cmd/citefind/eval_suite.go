package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/citefind/citefind"
	"github.com/citefind/citefind/db"
	"github.com/citefind/citefind/engine"
	"github.com/citefind/citefind/eval"
	"github.com/citefind/citefind/fuse"
	"github.com/citefind/citefind/internal/datadir"
	"github.com/citefind/citefind/rerank"
	"github.com/citefind/citefind/retrieve/sparse"
)

// suiteRun is what eval --suite was asked.
type suiteRun struct {
	root, data, embedder string
	retrievers           []string
	rerank               string
	eopts                engine.Options
	sparse               sparse.Options
	depth                int
	raw                  bool
	report               string
	llm                  llmFlags
	model                string
	args                 []string
	sweep                bool
	sweepValues          []float64
	sweepTop             int
}

// runSuite runs every stage on every collection of the suite, each in its
// own database under the suite folder, and writes the report (with paired
// comparisons against bm25) to --report, else standard output.
func (c *evalCmd) runSuite(ctx context.Context, o suiteRun, prog io.Writer) error {
	root := o.root
	if root == "" {
		root = filepath.Join(db.DefaultDir(), "bench", "suite")
		if o.embedder != "" && o.embedder != db.EmbedderNone {
			root += "-" + strings.NewReplacer(":", "-", "/", "-").Replace(o.embedder)
		}
	}
	data := o.data
	if data == "" {
		data = datadir.Dir()
	}
	var runs []eval.SuiteRun
	var sw *suiteSweeper
	for _, col := range eval.DefaultSuite(data) {
		if why := col.Missing(); why != "" {
			fmt.Fprintf(c.stderr, "suite: skipped %s\n", why)
			runs = append(runs, eval.SuiteRun{Collection: col, Skipped: why})
			continue
		}
		run, err := c.suiteCollection(ctx, col, filepath.Join(root, col.Name), o, &sw, prog)
		if err != nil {
			return fmt.Errorf("suite: %s: %w", col.Name, err)
		}
		runs = append(runs, run)
	}
	ro := eval.SuiteReportOptions{
		Baseline: citefind.RetrieverBM25,
		Title:    "Evaluation suite",
		Preamble: fmt.Sprintf("Produced by `citefind eval --suite` (version %s) on %s. Every stage of the pipeline on every collection, "+
			"each stage compared with BM25 alone query by query: difference, 95%% bootstrap interval and two-sided paired "+
			"randomisation-test p-value (10,000 resamples and sign flips, fixed seed). Each collection is indexed into its own "+
			"database under %s with the default pipeline of its embedder; `fused` is that pipeline's fusion. "+
			"`reranked`, when the pipeline has the learned reranker with the model citefind ships: that model was trained on "+
			"every ACM-CR query, SciFact's train split and ScisummNet sentences outside keep_for_gold, so its ACM-CR rows are "+
			"in-sample (not a measure; docs/rerank.md gives the cross-validated and leave-one-collection-out figures) while "+
			"SciFact test and ScisummNet keep_for_gold are queries it did not see.", Version, eval.SuiteDate(), root),
		Commands: []string{"citefind eval " + strings.Join(o.args, " ")},
	}
	write := func(w io.Writer) error {
		if err := eval.WriteSuiteReport(w, runs, ro); err != nil {
			return err
		}
		if sw == nil {
			return nil
		}
		return eval.WriteSuiteSweep(w, sw.result(), o.sweepTop)
	}
	if o.report == "" {
		return write(c.stdout)
	}
	if err := os.MkdirAll(filepath.Dir(o.report), 0o755); err != nil {
		return err
	}
	if err := writeFile(o.report, write); err != nil {
		return err
	}
	fmt.Fprintf(c.stderr, "wrote %s\n", o.report)
	return nil
}

// suiteCollection builds (once) and evaluates one collection.
func (c *evalCmd) suiteCollection(ctx context.Context, col eval.SuiteCollection, dir string, o suiteRun, sw **suiteSweeper, prog io.Writer) (eval.SuiteRun, error) {
	run := eval.SuiteRun{Collection: col}
	b, err := c.benchDB(ctx, "eval --suite", col.Spec, col.Options, o.embedder, &dir, prog)
	if err != nil {
		return run, err
	}
	eopts := o.eopts
	eopts.Sparse, eopts.Raw = o.sparse, o.raw
	o.llm.apply(&eopts)
	eopts.RerankModel = o.model
	eng, err := engine.Open(ctx, dir, eopts)
	if err != nil {
		return run, err
	}
	defer eng.Close()
	names := o.retrievers
	pipe := eng.Pipeline()
	switch {
	case len(names) == 0 && o.rerank == "" && pipe.Rerank != "" && pipe.Rerank != rerank.NameNone:
		// The pipeline's reranker was made for the pipeline's
		// retrievers: they are the stages.
		names = pipe.Retrievers
	case len(names) == 0:
		// Every retriever the database can run, each a stage; the
		// pipeline's weights fuse them.
		names = []string{citefind.RetrieverBM25, citefind.RetrieverRM3, citefind.RetrieverCiting}
		if eng.DenseAvailable(ctx) == nil {
			names = append(names, citefind.RetrieverDense)
		}
	case slices.Contains(names, citefind.RetrieverDense):
		if err := eng.DenseAvailable(ctx); err != nil {
			return run, err
		}
	}
	rerankName := o.rerank
	if rerankName == "" {
		rerankName = eng.Pipeline().Rerank
	}
	stages := eval.PipelineStages(names, rerankName != "" && rerankName != rerank.NameNone, false)
	b.Name = col.Name
	fmt.Fprintf(c.stderr, "suite: %s, %d papers; stages %s\n", col.Name, eng.Count(ctx), strings.Join(stages, ", "))
	var picks pickTally
	var optsBySet map[string]eval.Options
	run.Results, optsBySet, err = c.runSets(ctx, eng, b, stages, citefind.QueryOptions{Retrievers: names, Raw: o.raw, Rerank: rerankName}, o.depth, nil, &picks, prog)
	run.Papers = eng.Count(ctx)
	if err != nil {
		return run, err
	}
	// Failed queries score 0: say so, and refuse a stage where all failed.
	for _, r := range run.Results {
		if r.Failed == 0 {
			continue
		}
		first := ""
		for _, q := range r.PerQuery {
			if q.Err != "" {
				first = q.Err
				break
			}
		}
		if r.Failed == r.Queries {
			return run, fmt.Errorf("%s %s: every query failed: %s", r.Set, r.Stage, first)
		}
		fmt.Fprintf(c.stderr, "suite: %s %s: %d of %d queries failed (scored 0), first: %s\n", r.Set, r.Stage, r.Failed, r.Queries, first)
	}
	if !o.sweep {
		return run, nil
	}
	if *sw == nil {
		grid, err := sweepGrid(names, o.sweepValues)
		if err != nil {
			return run, err
		}
		*sw = &suiteSweeper{names: names, grid: grid, method: eng.Pipeline().Method,
			sweeps: map[string][]*eval.Result{}, baseline: map[string]*eval.Result{}, collection: map[string]string{}}
	} else if !slices.Equal((*sw).names, names) {
		return run, fmt.Errorf("--sweep-weights: the collections run different retrievers (%s, %s); give --retrievers", strings.Join((*sw).names, ","), strings.Join(names, ","))
	}
	return run, (*sw).add(ctx, col.Name, b.Sets, run.Results, optsBySet)
}

// suiteSweeper fuses the suite's stored per-retriever rankings with every
// weight vector, collection by collection.
type suiteSweeper struct {
	names      []string
	grid       []map[string]float64
	method     fuse.Method
	sweeps     map[string][]*eval.Result
	baseline   map[string]*eval.Result
	collection map[string]string // set key → collection
}

func (s *suiteSweeper) add(ctx context.Context, col string, sets []eval.TopicSet, results []*eval.Result, optsBySet map[string]eval.Options) error {
	for _, set := range sets {
		lists := map[string]*eval.Result{}
		for _, r := range results {
			if r.Set == set.Name && slices.Contains(s.names, r.Stage) {
				lists[r.Stage] = r
			}
		}
		o := optsBySet[set.Name]
		rs, err := eval.Sweep(ctx, set, lists, s.grid, fuse.Options{Method: s.method, Depth: max(o.K, fuse.DefaultDepth), NormDepth: fuse.DefaultDepth}, o)
		if err != nil {
			return err
		}
		key := col + ":" + set.Name
		s.sweeps[key], s.baseline[key], s.collection[key] = rs, lists[s.names[0]], col
	}
	return nil
}

func (s *suiteSweeper) result() eval.SuiteSweep {
	ss := eval.SuiteSweep{Method: string(s.method), Names: s.names, Grid: s.grid, Sweeps: s.sweeps, Baseline: s.baseline}
	ss.Choice = eval.ChooseWeightsAcross(s.grid, s.sweeps, s.baseline, s.names[0])
	ss.HeldOut = eval.LeaveOneCollectionOutWeights(s.grid, s.sweeps, s.baseline, s.names[0], func(set string) string { return s.collection[set] })
	return ss
}
