package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/citefind/citefind/corpus"
)

// Judge finds the judged ids of topic sets in a database's store: paper
// IDs and aliases, and for benchmarks judged by gold papers (CiteME,
// LitSearch, ScholarGym) also DOIs, arXiv ids and titles (MatchGold). The
// catalog of titles is read once, on first need.
type Judge struct {
	st  *corpus.Store
	cat *Catalog
}

// NewJudge returns a Judge over st.
func NewJudge(st *corpus.Store) *Judge { return &Judge{st: st} }

// Options returns o with Resolve (and ResolveGold for a gold-judged set)
// set for set.
func (j *Judge) Options(ctx context.Context, set TopicSet, o Options) (Options, error) {
	o.Resolve = func(ids []string) (map[string]string, error) { return j.st.Resolve(ctx, ids) }
	if set.Gold != nil {
		if j.cat == nil {
			cat, err := BuildCatalog(ctx, j.st)
			if err != nil {
				return o, fmt.Errorf("read the corpus for matching gold papers: %w", err)
			}
			j.cat = cat
		}
		o.ResolveGold = MatchGold(set, j.cat, o.Resolve)
	}
	return o, nil
}

// ReadCompared reads the two (or more) runs to compare: saved runs
// (WriteRunFile), or TREC run files, which are scored against bench's
// judgements found by judge (both may be nil when every path is a saved
// run), k deep. Runs with the same label are told apart by -A, -B.
func ReadCompared(ctx context.Context, paths []string, bench *Bench, judge *Judge, k int) ([]*RunFile, error) {
	var runs []*RunFile
	for _, path := range paths {
		rf, err := ReadRunFile(path)
		if err == nil {
			runs = append(runs, rf)
			continue
		}
		if !errors.Is(err, ErrNotRunFile) {
			return nil, err
		}
		hits, tag, terr := ReadTRECRun(path)
		if terr != nil {
			return nil, fmt.Errorf("%s is neither a saved run (%v) nor a TREC run file: %w", path, err, terr)
		}
		if bench == nil || judge == nil {
			return nil, fmt.Errorf("%w: %s is a TREC run file; give --bench NAME for its judgements", ErrBenchUsage, path)
		}
		set, ok := BestSet(bench.Sets, hits)
		if !ok {
			return nil, fmt.Errorf("%s: no query id of the run is a topic of %s", path, bench.Name)
		}
		opts, err := judge.Options(ctx, set, Options{K: k, Bench: bench.Name, Stage: strings.TrimPrefix(tag, "citefind-")})
		if err != nil {
			return nil, err
		}
		res, err := ScoreRun(ctx, set, hits, opts)
		if err != nil {
			return nil, err
		}
		runs = append(runs, &RunFile{Label: strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)), Results: []*Result{res}})
	}
	if len(runs) == 2 && runs[0].Label == runs[1].Label {
		runs[0].Label += "-A"
		runs[1].Label += "-B"
	}
	return runs, nil
}

// BestSet picks the topic set that holds most of the run's query ids.
func BestSet(sets []TopicSet, hits map[string][]corpus.Hit) (TopicSet, bool) {
	best, bestN := -1, 0
	for i, s := range sets {
		n := 0
		for _, q := range s.Queries {
			if _, ok := hits[q.ID]; ok {
				n++
			}
		}
		if n > bestN {
			best, bestN = i, n
		}
	}
	if best < 0 {
		return TopicSet{}, false
	}
	return sets[best], true
}

// ComparisonJSON is one topic set and pair of stages compared, as
// WriteComparisonsJSON prints it.
type ComparisonJSON struct {
	Bench   string                 `json:"bench"`
	A       string                 `json:"a"`
	B       string                 `json:"b"`
	Queries int                    `json:"queries"`
	Method  string                 `json:"method"`
	Metrics map[string]MetricDelta `json:"metrics"`
}

// MetricDelta is one metric of a ComparisonJSON.
type MetricDelta struct {
	MeanA  float64    `json:"mean_a"`
	MeanB  float64    `json:"mean_b"`
	Diff   float64    `json:"diff"`
	CI95   [2]float64 `json:"ci95"`
	P      float64    `json:"p"`
	Wins   int        `json:"wins"`
	Ties   int        `json:"ties"`
	Losses int        `json:"losses"`
}

// WriteComparisonsJSON prints the comparisons of two runs as a JSON array,
// one object per topic set and paired stage.
func WriteComparisonsJSON(w io.Writer, runs []*RunFile) error {
	var out []ComparisonJSON
	opts := StatOptions{}
	byKey := func(rf *RunFile) map[string][]*Result {
		m := map[string][]*Result{}
		for _, r := range rf.Results {
			k := r.Bench + ":" + r.Set
			m[k] = append(m[k], r)
		}
		return m
	}
	ma, mb := byKey(runs[0]), byKey(runs[1])
	var keys []string
	for k := range ma {
		if _, ok := mb[k]; ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		as, bs := ma[k], mb[k]
		for _, a := range as {
			for _, bb := range bs {
				if !(len(as) == 1 && len(bs) == 1) && a.Stage != bb.Stage {
					continue
				}
				la, lb := runs[0].Label+"/"+a.Stage, runs[1].Label+"/"+bb.Stage
				cs, err := CompareResults(a, bb, la, lb, nil, opts)
				if err != nil {
					return err
				}
				cj := ComparisonJSON{Bench: cs[0].Set, A: la, B: lb, Queries: cs[0].N, Method: opts.MethodText(), Metrics: map[string]MetricDelta{}}
				for _, c := range cs {
					cj.Metrics[c.Metric] = MetricDelta{c.MeanA, c.MeanB, c.Diff, [2]float64{c.CILow, c.CIHigh}, c.P, c.Wins, c.Ties, c.Losses}
				}
				out = append(out, cj)
			}
		}
	}
	if len(out) == 0 {
		return fmt.Errorf("compare: the two runs share no topic set")
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
