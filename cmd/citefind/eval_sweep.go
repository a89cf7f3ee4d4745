package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/citefind/citefind/db"
	"github.com/citefind/citefind/eval"
	"github.com/citefind/citefind/fuse"
)

// sweepFlags are eval's weight-sweep flags.
type sweepFlags struct {
	sweep  bool
	values string
	save   bool
	top    int
}

func (f *sweepFlags) register(fs interface {
	BoolVar(*bool, string, bool, string)
	StringVar(*string, string, string, string)
	IntVar(*int, string, int, string)
}) {
	fs.BoolVar(&f.sweep, "sweep-weights", false, "fuse the retrievers' stored rankings with every weight on a grid and report the metrics of each (needs two or more --retrievers)")
	fs.StringVar(&f.values, "sweep-values", "", "comma-separated weights tried for each retriever after the first (default "+formatFloats(eval.DefaultSweepValues)+")")
	fs.BoolVar(&f.save, "save-weights", false, "with --sweep-weights: store the chosen retrievers, fusion and weights in the database as its defaults")
	fs.IntVar(&f.top, "sweep-top", 15, "with --suite --sweep-weights: how many weight vectors the report lists (by mean nDCG@10 gain)")
}

func formatFloats(v []float64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.FormatFloat(x, 'g', -1, 64)
	}
	return strings.Join(s, ",")
}

// parse checks the sweep flags and returns the weights to try.
func (f *sweepFlags) parse() ([]float64, error) {
	if !f.sweep {
		if f.save || f.values != "" || f.top != 15 {
			return nil, usageErr("eval: --save-weights, --sweep-values and --sweep-top need --sweep-weights")
		}
		return nil, nil
	}
	if f.top < 1 {
		return nil, usageErr("eval: --sweep-top %d: want at least 1", f.top)
	}
	if f.values == "" {
		return eval.DefaultSweepValues, nil
	}
	var values []float64
	for _, s := range splitList(f.values) {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || v < 0 {
			return nil, usageErr("eval: --sweep-values: %q is not a weight >= 0", s)
		}
		values = append(values, v)
	}
	if len(values) == 0 {
		return nil, usageErr("eval: --sweep-values %q holds no weight", f.values)
	}
	return values, nil
}

// grid returns the weight vectors to sweep over names.
func sweepGrid(names []string, values []float64) ([]map[string]float64, error) {
	if len(names) < 2 {
		return nil, usageErr("eval: --sweep-weights needs two or more --retrievers (the database's default is %s)", strings.Join(names, ","))
	}
	return eval.WeightGrid(names, values), nil
}

// sweepFolds is the number of folds of the cross-validated weight choice.
const sweepFolds = 5

// groupWord names what the queries are grouped by.
func groupWord(sets []eval.TopicSet) string {
	for _, set := range sets {
		for _, q := range set.Queries {
			if q.Group != "" {
				return "citing paper"
			}
		}
	}
	return "query"
}

// runSweep fuses the single-retriever results with every weight vector of
// grid, prints one table per topic set and the chosen weights, and stores
// them in the database with --save-weights.
func (c *evalCmd) runSweep(ctx context.Context, f *sweepFlags, dir string, names []string,
	grid []map[string]float64, method fuse.Method, sets []eval.TopicSet, results []*eval.Result, optsBySet map[string]eval.Options) error {
	byStage := map[string]map[string]*eval.Result{} // set → stage → result
	for _, r := range results {
		if byStage[r.Set] == nil {
			byStage[r.Set] = map[string]*eval.Result{}
		}
		byStage[r.Set][r.Stage] = r
	}
	sweeps := map[string][]*eval.Result{}
	baseline := map[string]*eval.Result{}
	w := c.stdout
	fmt.Fprintf(w, "\nWeight sweep: %s fusion of %s, %d weight vectors (%s fixed at 1)\n", method, strings.Join(names, ", "), len(grid), names[0])
	for _, set := range sets {
		lists := map[string]*eval.Result{}
		for _, n := range names {
			lists[n] = byStage[set.Name][n]
		}
		baseline[set.Name] = lists[names[0]]
		o := optsBySet[set.Name]
		rs, err := eval.Sweep(ctx, set, lists, grid, fuse.Options{Method: method, Depth: max(o.K, fuse.DefaultDepth), NormDepth: fuse.DefaultDepth}, o)
		if err != nil {
			return err
		}
		sweeps[set.Name] = rs
		writeSweepTable(w, set.Name, names, grid, rs, baseline[set.Name])
	}
	ch := eval.ChooseWeights(grid, sweeps, baseline, names[0])
	fmt.Fprintf(w, "\nchosen: %s (%s)\n", eval.FormatWeights(names, ch.Weights), ch.Reason)
	// The choice is made on the very queries it is scored on; a
	// cross-validated estimate shows how much of the gain is real.
	if groups := len(eval.FoldOf(sets, 1<<30)); groups >= sweepFolds {
		cv, err := eval.CrossValidateChoice(grid, sweeps, baseline, names[0], sets, sweepFolds)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "\ncross-validated choice (%d folds by %s; weights chosen on 4 folds, scored on the fifth):\n\n", sweepFolds, groupWord(sets))
		fmt.Fprintf(w, "| topic set | recall@10 | recall@100 | ndcg@10 | Δrecall@10 | Δrecall@100 | Δndcg@10 |\n|---|--:|--:|--:|--:|--:|--:|\n")
		for _, set := range sets {
			m, b := cv.Metrics[set.Name], cv.Baseline[set.Name]
			fmt.Fprintf(w, "| %s | %.4f | %.4f | %.4f | %+.4f | %+.4f | %+.4f |\n", set.Name,
				m[eval.Recall10], m[eval.Recall100], m[eval.NDCG10],
				m[eval.Recall10]-b[eval.Recall10], m[eval.Recall100]-b[eval.Recall100], m[eval.NDCG10]-b[eval.NDCG10])
		}
		fmt.Fprintln(w)
		for i, cw := range cv.Chosen {
			fmt.Fprintf(w, "fold %d chose %s\n", i+1, eval.FormatWeights(names, cw))
		}
	}
	if !f.save {
		return nil
	}
	cfg := db.Pipeline{
		Retrievers: names, Method: method, Weights: ch.Weights,
		Source: fmt.Sprintf("citefind eval --sweep-weights on %s, %s", optsBySet[sets[0].Name].Bench, time.Now().UTC().Format("2006-01-02")),
		Delta:  map[string]map[string]float64{},
	}
	if !ch.OK {
		cfg.Retrievers = names[:1]
	}
	for set, d := range ch.Delta {
		cfg.Delta[set] = d
	}
	d, err := db.Open(ctx, dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if cur, err := db.ReadPipeline(dir); err == nil && cur != nil {
		cfg.Rerank = cur.Rerank // the sweep chooses the fusion only
	}
	if err := d.SavePipeline(ctx, cfg); err != nil {
		return err
	}
	fmt.Fprintf(c.stderr, "stored the chosen fusion in %s as the database's pipeline\n", filepath.Join(dir, db.PipelineFile))
	return nil
}

func writeSweepTable(w io.Writer, set string, names []string, grid []map[string]float64, rs []*eval.Result, base *eval.Result) {
	fmt.Fprintf(w, "\n%s (%s alone: recall@10 %.4f, recall@100 %.4f, ndcg@10 %.4f)\n\n", set, names[0],
		base.Metrics[eval.Recall10], base.Metrics[eval.Recall100], base.Metrics[eval.NDCG10])
	fmt.Fprintf(w, "| weights | recall@10 | recall@100 | ndcg@10 | Δrecall@10 | Δrecall@100 | Δndcg@10 |\n|---|--:|--:|--:|--:|--:|--:|\n")
	for i, r := range rs {
		m := r.Metrics
		fmt.Fprintf(w, "| %s | %.4f | %.4f | %.4f | %+.4f | %+.4f | %+.4f |\n", eval.FormatWeights(names, grid[i]),
			m[eval.Recall10], m[eval.Recall100], m[eval.NDCG10],
			m[eval.Recall10]-base.Metrics[eval.Recall10], m[eval.Recall100]-base.Metrics[eval.Recall100], m[eval.NDCG10]-base.Metrics[eval.NDCG10])
	}
}
