package eval

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// WriteRun writes the hits of res as a TREC run file, one line per hit:
// "qid Q0 docid rank score tag", rank from 1, docid = the paper ID, score
// as returned by the retriever. A repeated paper ID within one query is
// written once, at its first rank (as Score counts it). Failed queries
// have no line. tag must be non-empty and without whitespace; so must the
// query and paper ids.
//
// Note that trec_eval ranks a run by score (ties broken by docid), not by
// the rank column, and that ACM-CR's "340982510#2" is not a qrels topic id.
func WriteRun(w io.Writer, res *Result, tag string) error {
	if tag == "" || strings.ContainsFunc(tag, isSpace) {
		return fmt.Errorf("run tag %q: want a non-empty word without spaces", tag)
	}
	bw := bufio.NewWriter(w)
	for _, q := range res.PerQuery {
		if q.ID == "" || strings.ContainsFunc(q.ID, isSpace) {
			return fmt.Errorf("query id %q: empty or has whitespace", q.ID)
		}
		seen := map[string]bool{}
		rank := 0
		for _, h := range q.Hits {
			if seen[h.ID] {
				continue
			}
			seen[h.ID] = true
			if h.ID == "" || strings.ContainsFunc(h.ID, isSpace) {
				return fmt.Errorf("query %s: paper id %q: empty or has whitespace", q.ID, h.ID)
			}
			rank++
			fmt.Fprintf(bw, "%s Q0 %s %d %s %s\n", q.ID, h.ID, rank, strconv.FormatFloat(h.Score, 'g', -1, 64), tag)
		}
	}
	return bw.Flush()
}

func isSpace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\v' || r == '\f'
}

// WriteMarkdown writes one Markdown table row per result (topic set ×
// stage), in the order given: queries, recall@1/5/10/20/50/100, ndcg@10,
// mrr@10 and acc@1 (4 decimals), p50/p99 latency in milliseconds, coverage
// (relevant items found in the collection / all relevant items, summed over
// queries; the missing ones count in the recall denominator) and failed
// queries.
func WriteMarkdown(w io.Writer, results []*Result) error {
	var b bytes.Buffer
	b.WriteString("| bench | stage | queries | " + strings.Join(MetricKeys(), " | ") + " | p50 ms | p99 ms | coverage | failed |\n")
	b.WriteString("|---|---|--:|" + strings.Repeat("--:|", len(MetricKeys())) + "--:|--:|--:|--:|\n")
	for _, r := range results {
		fmt.Fprintf(&b, "| %s | %s | %d | %s | %.1f | %.1f | %s | %d |\n",
			benchName(r), stageName(r), r.Queries, metricCells(r.Metrics),
			ms(r.LatencyP50), ms(r.LatencyP99), coverageCell(r), r.Failed)
	}
	_, err := w.Write(b.Bytes())
	return err
}

func metricCells(m Metrics) string {
	cells := make([]string, 0, len(MetricKeys()))
	for _, k := range MetricKeys() {
		cells = append(cells, fmt.Sprintf("%.4f", m[k]))
	}
	return strings.Join(cells, " | ")
}

// coverageCell is "found/total (pct%)", or "–" when the result does not
// know its relevant total (a result made before coverage was recorded).
func coverageCell(r *Result) string {
	if r.Relevant == 0 {
		if r.Missing > 0 {
			return fmt.Sprintf("%d missing", r.Missing)
		}
		return "–"
	}
	return fmt.Sprintf("%d/%d (%.1f%%)", r.Relevant-r.Missing, r.Relevant, 100*r.Coverage())
}

// WriteJSON writes the report of `citefind eval --json`: a JSON array with
// one object per topic set, in order of first appearance in results; the
// results of one set (same Bench and Set) are its stages, in the order
// given:
//
//	[
//	  {
//	    "bench": "acm-cr:contexts",
//	    "queries": 269,
//	    "metrics": {"recall@1": …, "recall@5": …, "recall@10": …, …, "acc@1": …},
//	    "stages": {
//	      "bm25": {"metrics": {…}, "latency_ms": {"p50": 3.1, "p99": 12.7}, "failed": 0}
//	    },
//	    "missing_relevant": 2,
//	    "coverage": {"relevant": 903, "found": 901, "fraction": 0.997785, "answerable_queries": 269,
//	                 "unjudged_topics": 0, "matched_by": {"id": 901}}
//	  }
//	]
//
// "metrics" at the top is that of the last stage (the pipeline's output).
// "coverage" counts relevant items (judgements, summed over queries) found
// in the collection; "matched_by" is present for benchmarks matched by
// MatchGold.
// Keys are in a fixed order: object keys as above, metrics in MetricKeys
// order then any other metric by name, stages in the order given. Metric
// values are rounded to 6 decimals, latencies to 3 (milliseconds). An
// empty stage name is written "default".
func WriteJSON(w io.Writer, results []*Result) error {
	type group struct {
		name   string
		stages []*Result
	}
	var groups []*group
	index := map[string]*group{}
	for _, r := range results {
		name := benchName(r)
		g := index[name]
		if g == nil {
			g = &group{name: name}
			index[name] = g
			groups = append(groups, g)
		}
		g.stages = append(g.stages, r)
	}
	out := make([]object, 0, len(groups))
	for _, g := range groups {
		stages := object{}
		seen := map[string]bool{}
		for _, r := range g.stages {
			name := stageName(r)
			if seen[name] {
				return fmt.Errorf("%s: stage %q given twice", g.name, name)
			}
			seen[name] = true
			stages = append(stages, field{name, object{
				{"metrics", metricsObject(r.Metrics)},
				{"latency_ms", object{{"p50", round(ms(r.LatencyP50), 3)}, {"p99", round(ms(r.LatencyP99), 3)}}},
				{"failed", r.Failed},
			}})
		}
		first, last := g.stages[0], g.stages[len(g.stages)-1]
		out = append(out, object{
			{"bench", g.name},
			{"queries", first.Queries},
			{"metrics", metricsObject(last.Metrics)},
			{"stages", stages},
			{"missing_relevant", first.Missing},
			{"coverage", coverageObject(first)},
		})
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = w.Write(b)
	return err
}

func benchName(r *Result) string {
	switch {
	case r.Bench == "":
		return r.Set
	case r.Set == "":
		return r.Bench
	}
	return r.Bench + ":" + r.Set
}

func stageName(r *Result) string {
	if r.Stage == "" {
		return "default"
	}
	return r.Stage
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func round(v float64, places int) float64 {
	p := math.Pow(10, float64(places))
	return math.Round(v*p) / p
}

func metricsObject(m Metrics) object {
	var o object
	done := map[string]bool{}
	for _, k := range MetricKeys() {
		if v, ok := m[k]; ok {
			o = append(o, field{k, round(v, 6)})
			done[k] = true
		}
	}
	var rest []string
	for k := range m {
		if !done[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	for _, k := range rest {
		o = append(o, field{k, round(m[k], 6)})
	}
	if o == nil {
		o = object{}
	}
	return o
}

// object is a JSON object that keeps its key order.
type object []field

type field struct {
	key   string
	value any
}

// MarshalJSON writes the fields in order.
func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(f.key)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(f.value)
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", f.key, err)
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func coverageObject(r *Result) object {
	o := object{
		{"relevant", r.Relevant},
		{"found", r.Relevant - r.Missing},
		{"fraction", round(r.Coverage(), 6)},
		{"answerable_queries", r.Answerable},
		{"unjudged_topics", r.Unjudged},
	}
	if r.MatchedBy != nil {
		var by object
		for _, k := range sortedKeysInt(r.MatchedBy) {
			by = append(by, field{k, r.MatchedBy[k]})
		}
		if by == nil {
			by = object{}
		}
		o = append(o, field{"matched_by", by})
	}
	return o
}

func sortedKeysInt(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
