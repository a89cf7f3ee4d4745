package eval

import (
	"bytes"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"unicode"
)

// ReportOptions configure WriteReport. The zero value writes no figure and
// uses the default statistics.
type ReportOptions struct {
	// FigureDir is the folder figures are written to; "" writes none.
	FigureDir string
	// LinkDir is how the Markdown links reach FigureDir: "" when the report
	// sits in FigureDir, else a relative path ("figures").
	LinkDir string
	// Prefix starts every figure file name ("acm-cr" → acm-cr-contexts-recall.png).
	Prefix string
	// WinLossMetric is the metric of the win/loss charts; "" means ndcg@10.
	WinLossMetric string
	// Stats configures the significance tests.
	Stats StatOptions
}

// WriteReport writes the Markdown report of one or two runs: per topic set
// a table of every run and stage with all metrics, latency and coverage,
// a recall@K figure (K = 1…100, one line per run and stage), and the
// paired comparisons — between stages when one run is given (every stage
// against the first), between the runs when two are (same-named stages,
// or the one stage of each) — with difference, bootstrap interval and
// randomisation p-value, and a win/loss figure per comparison. Figures are
// written as PNG and SVG (SaveFigure) when opts.FigureDir is set.
func WriteReport(w io.Writer, runs []*RunFile, opts ReportOptions) error {
	if len(runs) == 0 || len(runs) > 2 {
		return fmt.Errorf("report: want 1 or 2 runs, got %d", len(runs))
	}
	if opts.WinLossMetric == "" {
		opts.WinLossMetric = NDCG10
	}
	var b bytes.Buffer
	two := len(runs) == 2
	label := func(rf *RunFile, r *Result) string {
		if two {
			return rf.Label + "/" + stageName(r)
		}
		return stageName(r)
	}

	// Runs and their settings.
	b.WriteString("## Runs\n\n")
	for i, rf := range runs {
		name := rf.Label
		if two {
			name = fmt.Sprintf("%s (%s)", rf.Label, string(rune('A'+i)))
		}
		fmt.Fprintf(&b, "- **%s**", name)
		if !rf.Created.IsZero() {
			fmt.Fprintf(&b, ", %s", rf.Created.UTC().Format("2006-01-02 15:04 UTC"))
		}
		if rf.Version != "" {
			fmt.Fprintf(&b, ", citefind %s", rf.Version)
		}
		if len(rf.Settings) > 0 {
			keys := make([]string, 0, len(rf.Settings))
			for k := range rf.Settings {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			var kv []string
			for _, k := range keys {
				kv = append(kv, k+"="+rf.Settings[k])
			}
			fmt.Fprintf(&b, ": `%s`", strings.Join(kv, " "))
		}
		b.WriteString("\n")
		if len(rf.Command) > 0 {
			fmt.Fprintf(&b, "  - command: `%s`\n", strings.Join(rf.Command, " "))
		}
	}
	b.WriteString("\n")

	// Topic sets in order of first appearance.
	type entry struct {
		run *RunFile
		res *Result
	}
	var sets []string
	bySet := map[string][]entry{}
	for _, rf := range runs {
		for _, r := range rf.Results {
			name := benchName(r)
			if _, ok := bySet[name]; !ok {
				sets = append(sets, name)
			}
			bySet[name] = append(bySet[name], entry{rf, r})
		}
	}

	var comparisons [][]Comparison
	for _, set := range sets {
		es := bySet[set]
		fmt.Fprintf(&b, "## %s\n\n", set)
		b.WriteString("| run | queries | " + strings.Join(MetricKeys(), " | ") + " | p50 ms | p99 ms | coverage | failed |\n")
		b.WriteString("|---|--:|" + strings.Repeat("--:|", len(MetricKeys())) + "--:|--:|--:|--:|\n")
		for _, e := range es {
			r := e.res
			fmt.Fprintf(&b, "| %s | %d | %s | %.1f | %.1f | %s | %d |\n",
				label(e.run, r), r.Queries, metricCells(r.Metrics), ms(r.LatencyP50), ms(r.LatencyP99), coverageCell(r), r.Failed)
		}
		b.WriteString("\n")
		b.WriteString(coverageText(es[0].res))
		b.WriteString("\n")

		if opts.FigureDir != "" {
			curves := make([]Curve, len(es))
			for i, e := range es {
				curves[i] = Curve{Label: label(e.run, e.res), Result: e.res}
			}
			p, err := PlotRecallCurves("recall@K, "+set, curves, CurveDepth)
			if err != nil {
				return err
			}
			base := figureName(opts.Prefix, set) + "-recall"
			if _, _, err := SaveFigure(p, filepath.Join(opts.FigureDir, base)); err != nil {
				return err
			}
			fmt.Fprintf(&b, "![recall@K for K = 1…%d, %s](%s) ([SVG](%s))\n\n", CurveDepth, set, link(opts.LinkDir, base+".png"), link(opts.LinkDir, base+".svg"))
		}

		// Pairs to compare.
		var pairs [][2]entry
		if two {
			var as, bs []entry
			for _, e := range es {
				if e.run == runs[0] {
					as = append(as, e)
				} else {
					bs = append(bs, e)
				}
			}
			if len(as) == 1 && len(bs) == 1 {
				pairs = append(pairs, [2]entry{as[0], bs[0]})
			} else {
				for _, x := range as {
					for _, y := range bs {
						if x.res.Stage == y.res.Stage {
							pairs = append(pairs, [2]entry{x, y})
						}
					}
				}
			}
		} else {
			for _, e := range es[1:] {
				pairs = append(pairs, [2]entry{es[0], e})
			}
		}
		if len(pairs) == 0 {
			continue
		}
		fmt.Fprintf(&b, "### Paired comparisons, %s\n\n", set)
		for _, pr := range pairs {
			la, lb := label(pr[0].run, pr[0].res), label(pr[1].run, pr[1].res)
			cs, err := CompareResults(pr[0].res, pr[1].res, la, lb, nil, opts.Stats)
			if err != nil {
				return err
			}
			comparisons = append(comparisons, cs)
			fmt.Fprintf(&b, "**%s** (A) against **%s** (B), %d paired queries", la, lb, cs[0].N)
			if cs[0].OnlyA+cs[0].OnlyB > 0 {
				fmt.Fprintf(&b, " (%d only in A, %d only in B, left out)", cs[0].OnlyA, cs[0].OnlyB)
			}
			b.WriteString(":\n\n")
			writeComparisonTable(&b, cs, opts.Stats)
			if opts.FigureDir != "" {
				p, err := PlotWinLoss(fmt.Sprintf("%s: %s − %s, %s", set, lb, la, opts.WinLossMetric), pr[0].res, pr[1].res, opts.WinLossMetric)
				if err != nil {
					return err
				}
				base := fmt.Sprintf("%s-winloss-%s-vs-%s", figureName(opts.Prefix, set), slug(lb), slug(la))
				if _, _, err := SaveFigure(p, filepath.Join(opts.FigureDir, base)); err != nil {
					return err
				}
				fmt.Fprintf(&b, "![per-query %s difference, %s − %s](%s) ([SVG](%s))\n\n", opts.WinLossMetric, lb, la, link(opts.LinkDir, base+".png"), link(opts.LinkDir, base+".svg"))
			}
		}
	}
	if len(comparisons) > 0 {
		b.WriteString("## Method\n\n")
		b.WriteString("Metrics as trec_eval computes them, macro-averaged over the queries of a topic set; " +
			"relevant papers missing from the collection count in the recall denominator (coverage). ")
		b.WriteString(opts.Stats.MethodText())
		b.WriteString("\n")
	}
	_, err := w.Write(b.Bytes())
	return err
}

// WriteComparisons writes the paired comparison of one pair of results as
// a Markdown table (see CompareResults).
func WriteComparisons(w io.Writer, cs []Comparison, opts StatOptions) error {
	var b bytes.Buffer
	writeComparisonTable(&b, cs, opts)
	_, err := w.Write(b.Bytes())
	return err
}

func writeComparisonTable(b *bytes.Buffer, cs []Comparison, opts StatOptions) {
	opts = opts.withDefaults()
	fmt.Fprintf(b, "| metric | A | B | B − A | %g%% CI of B − A | p | wins / ties / losses |\n", 100*opts.Level)
	b.WriteString("|---|--:|--:|--:|--:|--:|--:|\n")
	for _, c := range cs {
		fmt.Fprintf(b, "| %s | %.4f | %.4f | %+.4f | [%+.4f, %+.4f] | %s | %d / %d / %d |\n",
			c.Metric, c.MeanA, c.MeanB, c.Diff, c.CILow, c.CIHigh, pText(c.P), c.Wins, c.Ties, c.Losses)
	}
	b.WriteString("\n")
}

// pText formats a p-value: 4 decimals, or "< 0.0001" at the resolution
// floor of 10,000 permutations.
func pText(p float64) string {
	if p < 0.0001 {
		return "< 0.0001"
	}
	return fmt.Sprintf("%.4f", p)
}

func coverageText(r *Result) string {
	var parts []string
	if r.Relevant > 0 {
		parts = append(parts, fmt.Sprintf("Coverage: %d of %d relevant papers (summed over queries) are in the collection (%.1f%%); "+
			"the %d missing ones count in the recall denominator. %d of %d queries have at least one relevant paper in the collection.",
			r.Relevant-r.Missing, r.Relevant, 100*r.Coverage(), r.Missing, r.Answerable, r.Queries))
	} else if r.Missing > 0 {
		parts = append(parts, fmt.Sprintf("%d relevant papers (summed over queries) are missing from the collection and count in the recall denominator.", r.Missing))
	}
	if r.Answerable > 0 && r.Answerable < r.Queries && len(r.PerQuery) > 0 {
		var per []Metrics
		for _, q := range r.PerQuery {
			if q.Relevant > q.RelevantMissing {
				per = append(per, q.Metrics)
			}
		}
		m := Mean(per)
		parts = append(parts, fmt.Sprintf("Over the %d answerable queries alone: recall@10 %.4f, recall@100 %.4f, nDCG@10 %.4f, MRR@10 %.4f (their missing papers still in the denominator).",
			len(per), m[Recall10], m[Recall100], m[NDCG10], m[MRR10]))
	}
	if len(r.MatchedBy) > 0 {
		var kv []string
		for _, k := range sortedKeysInt(r.MatchedBy) {
			kv = append(kv, fmt.Sprintf("%s %d", k, r.MatchedBy[k]))
		}
		parts = append(parts, "Found by "+strings.Join(kv, ", ")+".")
	}
	if r.Unjudged > 0 {
		parts = append(parts, fmt.Sprintf("%d topics without any judgement are left out.", r.Unjudged))
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, " ") + "\n"
}

func link(dir, file string) string {
	if dir == "" {
		return file
	}
	return path.Join(filepath.ToSlash(dir), file)
}

// figureName is the file name stem of a topic set's figures: the prefix
// and the set's slug, the prefix once when the slug starts with it
// ("acm-cr" and "acm-cr:contexts" → "acm-cr-contexts").
func figureName(prefix, set string) string {
	s := slug(set)
	switch {
	case prefix == "":
		return s
	case s == prefix || strings.HasPrefix(s, prefix+"-"):
		return s
	}
	return prefix + "-" + s
}

// slug turns a name into a file-name part: lower-case letters and digits,
// other runs of characters as one "-".
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) && r < 128 || unicode.IsDigit(r) && r < 128 {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
		} else {
			dash = true
		}
	}
	return b.String()
}
