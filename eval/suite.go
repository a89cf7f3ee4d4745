package eval

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// SuiteCollection is one collection of the evaluation suite: a benchmark
// (LoadBench spec and options) and the role it plays.
type SuiteCollection struct {
	// Name is the collection's short name in reports ("acm-cr").
	Name string
	// Spec and Options are what LoadBench takes.
	Spec    string
	Options BenchOptions
	// About says what a query is and how the collection is used.
	About string
}

// ScisummnetSuiteSplit is the ScisummNet split the suite evaluates: the
// 1,675 citation sentences of the gold summaries (keep_for_gold).
const ScisummnetSuiteSplit = "keep_for_gold"

// DefaultSuite returns the suite's collections under the data folder
// (datadir.Dir()): ACM-CR (both topic sets), SciFact's test split and
// ScisummNet's keep_for_gold split.
func DefaultSuite(dataDir string) []SuiteCollection {
	return []SuiteCollection{
		{Name: "acm-cr", Spec: "acm-cr", Options: BenchOptions{Data: filepath.Join(dataDir, "acm-cr")},
			About: "IR papers of the ACM DL; paragraph and sentence citation contexts from 50 papers of 2020, judged by hand"},
		{Name: "scifact", Spec: "beir:test", Options: BenchOptions{Data: filepath.Join(dataDir, "devsets", "scifact")},
			About: "5,183 biomedical abstracts; scientific claims, relevant = the papers cited for them (test split)"},
		{Name: "scisummnet", Spec: "beir:" + ScisummnetSuiteSplit, Options: BenchOptions{Data: filepath.Join(dataDir, "devsets", "scisummnet")},
			About: "978 ACL papers (title + abstract); citation sentences with the markers masked, relevant = the cited paper"},
	}
}

// Missing says why the collection's data is not there ("" when it is).
func (c SuiteCollection) Missing() string {
	if _, err := os.Stat(c.Options.Data); err != nil {
		return fmt.Sprintf("%s: no data at %s (%v)", c.Name, c.Options.Data, err)
	}
	return ""
}

// SuiteRun is one collection's outcome in a suite run.
type SuiteRun struct {
	Collection SuiteCollection
	Papers     int       // papers in its database
	Results    []*Result // every stage of every topic set
	// Skipped says why the collection was not run ("" when it was).
	Skipped string
}

// SuiteReportOptions configure WriteSuiteReport.
type SuiteReportOptions struct {
	// Baseline is the stage every other stage is compared with ("bm25").
	Baseline string
	// Title, Preamble: the report's heading and the paragraphs under it
	// (how it was made). Commands lists the command lines of the run.
	Title    string
	Preamble string
	Commands []string
	Stats    StatOptions
}

// suiteMetrics are the metrics the suite tables compare.
var suiteMetrics = []string{Recall10, NDCG10, Recall100}

// WriteSuiteReport writes the suite's Markdown report: a summary (each
// stage's difference from the baseline on every topic set, with its worst
// and mean), then one table per topic set with every stage's recall@10,
// nDCG@10 and recall@100, each with its paired difference from the
// baseline, the 95% bootstrap interval and the randomisation-test p-value,
// and latency.
func WriteSuiteReport(w io.Writer, runs []SuiteRun, o SuiteReportOptions) error {
	if o.Baseline == "" {
		o.Baseline = "bm25"
	}
	p := &errWriter{w: w}
	if o.Title != "" {
		p.printf("# %s\n\n", o.Title)
	}
	if o.Preamble != "" {
		p.printf("%s\n\n", strings.TrimSpace(o.Preamble))
	}
	if len(o.Commands) > 0 {
		p.printf("```\n%s\n```\n\n", strings.Join(o.Commands, "\n"))
	}
	p.printf("## Collections\n\n| collection | papers | topic sets (queries) | what a query is |\n|---|--:|---|---|\n")
	for _, r := range runs {
		if r.Skipped != "" {
			p.printf("| %s | – | skipped: %s | %s |\n", r.Collection.Name, r.Skipped, r.Collection.About)
			continue
		}
		var sets []string
		seen := map[string]bool{}
		for _, res := range r.Results {
			k := benchName(res)
			if !seen[k] {
				seen[k] = true
				sets = append(sets, fmt.Sprintf("%s (%d)", k, res.Queries))
			}
		}
		p.printf("| %s | %d | %s | %s |\n", r.Collection.Name, r.Papers, strings.Join(sets, ", "), r.Collection.About)
	}

	// Per set: baseline and stages.
	type setRes struct {
		name   string
		base   *Result
		stages []*Result
	}
	var sets []setRes
	for _, r := range runs {
		idx := map[string]int{}
		for _, res := range r.Results {
			k := benchName(res)
			i, ok := idx[k]
			if !ok {
				i = len(sets)
				idx[k] = i
				sets = append(sets, setRes{name: k})
			}
			if res.Stage == o.Baseline {
				sets[i].base = res
			}
			sets[i].stages = append(sets[i].stages, res)
		}
	}
	// Summary: Δ nDCG@10 and Δ recall@10 per stage and set.
	var stageOrder []string
	seenStage := map[string]bool{}
	for _, s := range sets {
		for _, res := range s.stages {
			if !seenStage[res.Stage] {
				seenStage[res.Stage] = true
				stageOrder = append(stageOrder, res.Stage)
			}
		}
	}
	for _, metric := range []string{NDCG10, Recall10} {
		p.printf("\n## Summary: %s, difference from %s\n\n| stage |", metric, o.Baseline)
		for _, s := range sets {
			p.printf(" %s |", s.name)
		}
		p.printf(" worst | mean |\n|---|")
		for range sets {
			p.printf("--:|")
		}
		p.printf("--:|--:|\n")
		for _, st := range stageOrder {
			if st == o.Baseline {
				continue
			}
			p.printf("| %s |", st)
			worst, sum, n := 0.0, 0.0, 0
			for _, s := range sets {
				var r *Result
				for _, res := range s.stages {
					if res.Stage == st {
						r = res
					}
				}
				if r == nil || s.base == nil {
					p.printf(" – |")
					continue
				}
				d := r.Metrics[metric] - s.base.Metrics[metric]
				if n == 0 || d < worst {
					worst = d
				}
				sum += d
				n++
				p.printf(" %+.4f |", d)
			}
			if n == 0 {
				p.printf(" – | – |\n")
				continue
			}
			p.printf(" %+.4f | %+.4f |\n", worst, sum/float64(n))
		}
	}
	for _, s := range sets {
		p.printf("\n## %s\n\n", s.name)
		p.printf("| stage | recall@10 | Δ [95%% CI] p | nDCG@10 | Δ [95%% CI] p | recall@100 | Δ [95%% CI] p | p50 ms | p99 ms |\n|---|--:|---|--:|---|--:|---|--:|--:|\n")
		for _, res := range s.stages {
			p.printf("| %s |", res.Stage)
			var cmp map[string]Comparison
			if s.base != nil && res != s.base {
				cs, err := CompareResults(s.base, res, o.Baseline, res.Stage, suiteMetrics, o.Stats)
				if err != nil {
					return err
				}
				cmp = map[string]Comparison{}
				for _, c := range cs {
					cmp[c.Metric] = c
				}
			}
			for _, m := range suiteMetrics {
				p.printf(" %.4f |", res.Metrics[m])
				if c, ok := cmp[m]; ok {
					p.printf(" %+.4f [%+.4f, %+.4f] %s |", c.Diff, c.CILow, c.CIHigh, formatP(c.P))
				} else {
					p.printf(" – |")
				}
			}
			p.printf(" %.1f | %.1f |\n", ms(res.LatencyP50), ms(res.LatencyP99))
		}
	}
	return p.err
}

func formatP(p float64) string {
	if p < 0.0001 {
		return "p<.0001"
	}
	return strings.Replace(fmt.Sprintf("p=%.4f", p), "0.", ".", 1)
}

// SuiteSets lists the topic sets of runs as "collection:set" keys, sorted.
func SuiteSets(runs []SuiteRun) []string {
	var out []string
	for _, r := range runs {
		for _, res := range r.Results {
			out = append(out, benchName(res))
		}
	}
	sort.Strings(out)
	return compactStrings(out)
}

func compactStrings(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// errWriter keeps the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err != nil {
		return
	}
	_, e.err = fmt.Fprintf(e.w, format, args...)
}

// SuiteDate is the date stamp reports use (UTC).
func SuiteDate() string { return time.Now().UTC().Format("2006-01-02") }

// SuiteSweep is a weight sweep over the suite's topic sets.
type SuiteSweep struct {
	Method string               // fusion method
	Names  []string             // retrievers, the first fixed at 1
	Grid   []map[string]float64 // weight vectors
	// Sweeps[set][i] is the fused result of Grid[i] on set, Baseline[set]
	// the first retriever alone; sets are "collection:set" keys.
	Sweeps   map[string][]*Result
	Baseline map[string]*Result
	Choice   Choice
	HeldOut  []WeightsHeldOut
}

// WriteSuiteSweep writes a sweep's outcome: the chosen weights, the top
// vectors by mean gain with their gain on every set, and the choice made
// on the other collections scored on each held-out one.
func WriteSuiteSweep(w io.Writer, s SuiteSweep, top int) error {
	p := &errWriter{w: w}
	sets := setNames(s.Sweeps)
	base := s.Names[0]
	p.printf("\n## Weight sweep: %s fusion of %s (%d vectors, %s fixed at 1)\n\n", s.Method, strings.Join(s.Names, ", "), len(s.Grid), base)
	p.printf("Chosen on every topic set: **%s** — %s.\n\n", FormatWeights(s.Names, s.Choice.Weights), s.Choice.Reason)
	type row struct {
		i           int
		mean, worst float64
	}
	var rows []row
	for i := range s.Grid {
		r := row{i: i}
		for j, set := range sets {
			d := s.Sweeps[set][i].Metrics[NDCG10] - s.Baseline[set].Metrics[NDCG10]
			if j == 0 || d < r.worst {
				r.worst = d
			}
			r.mean += d
		}
		r.mean /= float64(len(sets))
		rows = append(rows, r)
	}
	sort.SliceStable(rows, func(a, b int) bool { return rows[a].mean > rows[b].mean })
	p.printf("Top %d of %d vectors by mean nDCG@10 gain over %s (Δ nDCG@10 / Δ recall@10 per topic set):\n\n| weights |", min(top, len(rows)), len(rows), base)
	for _, set := range sets {
		p.printf(" %s |", set)
	}
	p.printf(" worst Δ nDCG@10 | mean |\n|---|")
	for range sets {
		p.printf("---|")
	}
	p.printf("--:|--:|\n")
	for _, r := range rows[:min(top, len(rows))] {
		p.printf("| %s |", FormatWeights(s.Names, s.Grid[r.i]))
		for _, set := range sets {
			m, b := s.Sweeps[set][r.i].Metrics, s.Baseline[set].Metrics
			p.printf(" %+.4f / %+.4f |", m[NDCG10]-b[NDCG10], m[Recall10]-b[Recall10])
		}
		p.printf(" %+.4f | %+.4f |\n", r.worst, r.mean)
	}
	if len(s.HeldOut) > 0 {
		p.printf("\nLeave one collection out: weights chosen on the other collections, scored on the held-out one (Δ from %s alone):\n\n| held out | chosen on the others | topic set | Δ recall@10 | Δ nDCG@10 | Δ recall@100 |\n|---|---|---|--:|--:|--:|\n", base)
		for _, h := range s.HeldOut {
			var hs []string
			for set := range h.Metrics {
				hs = append(hs, set)
			}
			sort.Strings(hs)
			for _, set := range hs {
				m, b := h.Metrics[set], h.Baseline[set]
				p.printf("| %s | %s | %s | %+.4f | %+.4f | %+.4f |\n", h.Collection, FormatWeights(s.Names, h.Weights), set,
					m[Recall10]-b[Recall10], m[NDCG10]-b[NDCG10], m[Recall100]-b[Recall100])
			}
		}
	}
	return p.err
}
