package eval

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/fuse"
)

// DefaultSweepValues are the weights tried for each retriever after the
// first (whose weight stays 1) by WeightGrid.
var DefaultSweepValues = []float64{0, 0.025, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 1.5, 2}

// WeightGrid returns every weight vector over names that gives names[0]
// weight 1 and each other name one of values (their Cartesian product, in
// lexicographic order of values). Scaling every weight by the same factor
// does not change a fused ranking, so fixing the first loses nothing.
func WeightGrid(names []string, values []float64) []map[string]float64 {
	if len(names) == 0 {
		return nil
	}
	grid := []map[string]float64{{names[0]: 1}}
	for _, n := range names[1:] {
		var next []map[string]float64
		for _, w := range grid {
			for _, v := range values {
				m := make(map[string]float64, len(w)+1)
				for k, x := range w {
					m[k] = x
				}
				m[n] = v
				next = append(next, m)
			}
		}
		grid = next
	}
	return grid
}

// FormatWeights writes weights as "a=1,b=0.1" in the order of names.
func FormatWeights(names []string, w map[string]float64) string {
	parts := make([]string, 0, len(names))
	for _, n := range names {
		parts = append(parts, n+"="+strconv.FormatFloat(w[n], 'g', -1, 64))
	}
	return strings.Join(parts, ",")
}

// Sweep fuses, for every weight vector of grid, the rankings that the
// single-retriever results lists (keyed by retriever name, all of set,
// from Run with the same opts) hold for each query, scores the fused
// rankings against set's judgements, and returns one Result per weight
// vector (Stage "fused NAME=W,…"). Fusing stored rankings gives what a
// live fused run with the same lists would give (fuse.Fuse is pure), at a
// fraction of the cost. fo sets the method, depth and RRF constant; its K
// is ignored (opts.K hits are kept). A query that failed in some list is
// fused from the others. The results' PerQuery hold metrics and ranks but
// no Hits.
func Sweep(ctx context.Context, set TopicSet, lists map[string]*Result, grid []map[string]float64, fo fuse.Options, opts Options) ([]*Result, error) {
	names := make([]string, 0, len(lists))
	for n := range lists {
		names = append(names, n)
	}
	sort.Strings(names)
	perQuery := make(map[string]map[string][]corpus.Hit, len(set.Queries))
	for _, n := range names {
		res := lists[n]
		if res.Set != set.Name {
			return nil, fmt.Errorf("sweep: the %s result is of topic set %q, not %q", n, res.Set, set.Name)
		}
		for _, q := range res.PerQuery {
			if q.Err != "" {
				continue
			}
			if perQuery[q.ID] == nil {
				perQuery[q.ID] = map[string][]corpus.Hit{}
			}
			perQuery[q.ID][n] = q.Hits
		}
	}
	k := opts.K
	if k <= 0 {
		k = DefaultK
	}
	fo.K = k
	var out []*Result
	for _, w := range grid {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		fused := make(map[string][]corpus.Hit, len(perQuery))
		for id, ls := range perQuery {
			hs, err := fuse.Fuse(ls, w, fo)
			if err != nil {
				return nil, fmt.Errorf("sweep: fuse query %s: %w", id, err)
			}
			hits := make([]corpus.Hit, len(hs))
			for i, h := range hs {
				hits[i] = corpus.Hit{ID: h.ID, Score: h.Score}
			}
			fused[id] = hits
		}
		o := opts
		o.Stage = "fused " + FormatWeights(names, w)
		o.Progress = nil
		res, err := ScoreRun(ctx, set, fused, o)
		if err != nil {
			return nil, err
		}
		// Keep each query's metrics and ranks, not its hits: a grid of
		// thousands of vectors over thousands of queries would hold
		// gigabytes of lists no caller reads.
		for i := range res.PerQuery {
			res.PerQuery[i].Hits = nil
		}
		out = append(out, res)
	}
	return out, nil
}

// Choice is the weight vector ChooseWeights picked and why.
type Choice struct {
	Weights map[string]float64
	// OK is false when no vector met the constraints; Weights then
	// gives the baseline retriever alone.
	OK     bool
	Reason string
	// Delta is the chosen vector's metric minus the baseline's, by topic
	// set and metric (recall@10, recall@100, ndcg@10).
	Delta map[string]Metrics
}

// SweepTolerance is how far below the baseline a chosen weight vector may
// fall on recall@10 and nDCG@10 in any topic set.
const SweepTolerance = 0.005

// ChooseWeights picks, from the sweep results of several topic sets
// (sweeps[set][i] for grid[i]) and the baseline retriever's results
// (baseline[set]), the weight vector that (a) is at most SweepTolerance
// below the baseline on recall@10 and nDCG@10 in every set, (b) raises
// recall@100 in every set, and among those (c) has the largest mean gain
// in recall@10 + recall@100 + nDCG@10 over the sets. Ties keep the
// earlier vector of grid.
func ChooseWeights(grid []map[string]float64, sweeps map[string][]*Result, baseline map[string]*Result, base string) Choice {
	return choose(grid, base, setNames(sweeps), true,
		func(set string, i int) Metrics { return sweeps[set][i].Metrics },
		func(set string) Metrics { return baseline[set].Metrics })
}

func setNames(sweeps map[string][]*Result) []string {
	sets := make([]string, 0, len(sweeps))
	for s := range sweeps {
		sets = append(sets, s)
	}
	sort.Strings(sets)
	return sets
}

// ChooseWeightsAcross is ChooseWeights for topic sets of several
// collections (the suite): the vector at most SweepTolerance below the
// baseline on recall@10 and nDCG@10 in every set with the largest mean
// gain in recall@10 + recall@100 + nDCG@10; recall@100 need not rise
// everywhere.
func ChooseWeightsAcross(grid []map[string]float64, sweeps map[string][]*Result, baseline map[string]*Result, base string) Choice {
	return choose(grid, base, setNames(sweeps), false,
		func(set string, i int) Metrics { return sweeps[set][i].Metrics },
		func(set string) Metrics { return baseline[set].Metrics })
}

// WeightsHeldOut is one collection's outcome in LeaveOneCollectionOutWeights.
type WeightsHeldOut struct {
	Collection string
	// Weights were chosen (ChooseWeightsAcross) on the other collections.
	Weights map[string]float64
	OK      bool
	// Metrics and Baseline are the held-out sets' metrics with Weights
	// and with the baseline retriever, by set.
	Metrics, Baseline map[string]Metrics
}

// LeaveOneCollectionOutWeights estimates how a choice made on some collections
// holds on another: for each collection (collectionOf maps a set key of
// sweeps to it), weights are chosen on the other collections' sets and
// scored on its own.
func LeaveOneCollectionOutWeights(grid []map[string]float64, sweeps map[string][]*Result, baseline map[string]*Result, base string, collectionOf func(set string) string) []WeightsHeldOut {
	sets := setNames(sweeps)
	var cols []string
	seen := map[string]bool{}
	for _, s := range sets {
		if c := collectionOf(s); !seen[c] {
			seen[c] = true
			cols = append(cols, c)
		}
	}
	var out []WeightsHeldOut
	for _, c := range cols {
		var train []string
		for _, s := range sets {
			if collectionOf(s) != c {
				train = append(train, s)
			}
		}
		if len(train) == 0 {
			continue
		}
		ch := choose(grid, base, train, false,
			func(set string, i int) Metrics { return sweeps[set][i].Metrics },
			func(set string) Metrics { return baseline[set].Metrics })
		h := WeightsHeldOut{Collection: c, Weights: ch.Weights, OK: ch.OK, Metrics: map[string]Metrics{}, Baseline: map[string]Metrics{}}
		idx := -1
		for i, w := range grid {
			if sameWeights(w, ch.Weights) {
				idx = i
				break
			}
		}
		for _, s := range sets {
			if collectionOf(s) != c {
				continue
			}
			h.Baseline[s] = baseline[s].Metrics
			h.Metrics[s] = baseline[s].Metrics
			if idx >= 0 {
				h.Metrics[s] = sweeps[s][idx].Metrics
			}
		}
		out = append(out, h)
	}
	return out
}

func choose(grid []map[string]float64, base string, sets []string, needRecall100 bool, at func(set string, i int) Metrics, baseline func(set string) Metrics) Choice {
	best := -1
	var bestGain float64
	deltas := make([]map[string]Metrics, len(grid))
	for i := range grid {
		ok := true
		var gain float64
		deltas[i] = map[string]Metrics{}
		for _, set := range sets {
			m, b := at(set, i), baseline(set)
			d := Metrics{}
			for _, k := range []string{Recall10, Recall100, NDCG10} {
				d[k] = m[k] - b[k]
				gain += d[k]
			}
			deltas[i][set] = d
			if d[Recall10] < -SweepTolerance || d[NDCG10] < -SweepTolerance || needRecall100 && d[Recall100] <= 0 {
				ok = false
			}
		}
		if ok && (best < 0 || gain > bestGain+1e-12) {
			best, bestGain = i, gain
		}
	}
	if best < 0 {
		w := map[string]float64{}
		for n := range grid[0] {
			w[n] = 0
		}
		w[base] = 1
		if !needRecall100 {
			return Choice{Weights: w, Reason: fmt.Sprintf("no weights kept recall@10 and nDCG@10 within %.3f of %s alone on every topic set", SweepTolerance, base)}
		}
		return Choice{Weights: w, Reason: fmt.Sprintf("no weights kept recall@10 and nDCG@10 within %.3f of %s alone and raised recall@100 on every topic set", SweepTolerance, base)}
	}
	if !needRecall100 {
		return Choice{Weights: grid[best], OK: true, Delta: deltas[best],
			Reason: fmt.Sprintf("largest mean gain in recall@10 + recall@100 + nDCG@10 over %s alone among the weights within %.3f of it on recall@10 and nDCG@10 on every topic set", base, SweepTolerance)}
	}
	return Choice{Weights: grid[best], OK: true, Delta: deltas[best],
		Reason: fmt.Sprintf("largest mean gain in recall@10 + recall@100 + nDCG@10 over %s alone among the weights within %.3f of it on recall@10 and nDCG@10 that raise recall@100 on every topic set", base, SweepTolerance)}
}

// CVChoice is the cross-validated outcome of choosing weights.
type CVChoice struct {
	Folds int
	// Chosen holds the weights chosen on each fold's training queries.
	Chosen []map[string]float64
	// Metrics are, per topic set, the means over all queries of the
	// metrics each query got with the weights chosen without its fold;
	// Baseline the baseline retriever's means over the same queries.
	Metrics, Baseline map[string]Metrics
}

// FoldOf assigns groups to folds: the distinct groups, sorted, go round
// robin to folds 0…folds-1. A query without a group is its own group.
func FoldOf(sets []TopicSet, folds int) map[string]int {
	seen := map[string]bool{}
	var groups []string
	for _, set := range sets {
		for _, q := range set.Queries {
			g := groupOf(q)
			if !seen[g] {
				seen[g] = true
				groups = append(groups, g)
			}
		}
	}
	sort.Strings(groups)
	out := make(map[string]int, len(groups))
	for i, g := range groups {
		out[g] = i % folds
	}
	return out
}

func groupOf(q Query) string {
	if q.Group != "" {
		return q.Group
	}
	return "query " + q.ID
}

// CrossValidateChoice estimates how the weight choice of ChooseWeights
// generalises: the queries are split into folds by Query.Group (for
// ACM-CR the citing paper, across all topic sets, so no citing paper is
// ever on both sides), weights are chosen on all folds but one and scored
// on the held-out one, and each query's metrics come from the fold where
// it was held out.
func CrossValidateChoice(grid []map[string]float64, sweeps map[string][]*Result, baseline map[string]*Result, base string, sets []TopicSet, folds int) (CVChoice, error) {
	if folds < 2 {
		return CVChoice{}, fmt.Errorf("cross-validation needs at least 2 folds, got %d", folds)
	}
	fold := FoldOf(sets, folds)
	foldOfQuery := map[string]map[string]int{} // set → query id → fold
	for _, set := range sets {
		foldOfQuery[set.Name] = map[string]int{}
		for _, q := range set.Queries {
			foldOfQuery[set.Name][q.ID] = fold[groupOf(q)]
		}
	}
	names := setNames(sweeps)
	mean := func(rs []QueryResult, set string, keep func(f int) bool) Metrics {
		var per []Metrics
		for _, q := range rs {
			if keep(foldOfQuery[set][q.ID]) {
				per = append(per, q.Metrics)
			}
		}
		return Mean(per)
	}
	cv := CVChoice{Folds: folds, Metrics: map[string]Metrics{}, Baseline: map[string]Metrics{}}
	held := map[string][]Metrics{}
	for f := range folds {
		train := func(g int) bool { return g != f }
		ch := choose(grid, base, names, true,
			func(set string, i int) Metrics { return mean(sweeps[set][i].PerQuery, set, train) },
			func(set string) Metrics { return mean(baseline[set].PerQuery, set, train) })
		cv.Chosen = append(cv.Chosen, ch.Weights)
		idx := -1
		for i, w := range grid {
			if sameWeights(w, ch.Weights) {
				idx = i
				break
			}
		}
		for _, set := range names {
			rs := baseline[set].PerQuery
			if idx >= 0 {
				rs = sweeps[set][idx].PerQuery
			}
			for _, q := range rs {
				if foldOfQuery[set][q.ID] == f {
					held[set] = append(held[set], q.Metrics)
				}
			}
		}
	}
	for _, set := range names {
		cv.Metrics[set] = Mean(held[set])
		cv.Baseline[set] = baseline[set].Metrics
	}
	return cv, nil
}

func sameWeights(a, b map[string]float64) bool {
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	for k, v := range b {
		if a[k] != v {
			return false
		}
	}
	return true
}
