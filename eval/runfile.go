package eval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/citefind/citefind/corpus"
)

// RunFormat is the "format" value of a saved run file.
const RunFormat = "citefind-run/1"

// ErrNotRunFile means a file is not a saved run (RunFile) in a format this
// version reads.
var ErrNotRunFile = errors.New("not a citefind run file")

// RunFile is a saved evaluation run (`citefind eval --save-run FILE`): the
// results of every topic set and stage with their per-query metrics,
// ranks and ranked paper IDs, and the settings that produced them. It is
// self-contained: `citefind eval --compare` needs nothing else.
//
// On disk it is one JSON object:
//
//	{"format": "citefind-run/1", "label": "tuned", "created": "2026-11-22T10:00:00Z",
//	 "version": "…", "command": ["citefind", "eval", …], "settings": {"bm25-k1": "2", …},
//	 "results": [{"bench": "acm-cr", "set": "contexts", "stage": "bm25", "queries": 269,
//	   "failed": 0, "missing": 2, "relevant": 903, "answerable": 269, "unjudged": 0,
//	   "matched_by": {…}, "metrics": {…}, "latency_ms": {"p50": 16.5, "p99": 39.7},
//	   "per_query": [{"id": "337796001", "metrics": {…}, "relevant": 3, "missing": 0,
//	     "ranks": [1, 7], "latency_ms": 12.1, "hits": ["10.1145/…", …], "error": ""}]}]}
type RunFile struct {
	Label    string            // short name of the run for reports ("tuned")
	Created  time.Time         // when the run was made (UTC)
	Version  string            // citefind version
	Command  []string          // command line
	Settings map[string]string // settings that shape the ranking (BM25 parameters, depth, …)
	Results  []*Result
}

type runFileWire struct {
	Format   string            `json:"format"`
	Label    string            `json:"label"`
	Created  string            `json:"created"`
	Version  string            `json:"version,omitempty"`
	Command  []string          `json:"command,omitempty"`
	Settings map[string]string `json:"settings,omitempty"`
	Results  []resultWire      `json:"results"`
}

type latencyWire struct {
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
}

type resultWire struct {
	Bench      string         `json:"bench"`
	Set        string         `json:"set"`
	Stage      string         `json:"stage"`
	Queries    int            `json:"queries"`
	Failed     int            `json:"failed"`
	Missing    int            `json:"missing"`
	Relevant   int            `json:"relevant"`
	Answerable int            `json:"answerable"`
	Unjudged   int            `json:"unjudged"`
	MatchedBy  map[string]int `json:"matched_by,omitempty"`
	Metrics    Metrics        `json:"metrics"`
	Latency    latencyWire    `json:"latency_ms"`
	PerQuery   []queryWire    `json:"per_query"`
}

type queryWire struct {
	ID        string    `json:"id"`
	Metrics   Metrics   `json:"metrics"`
	Relevant  int       `json:"relevant"`
	Missing   int       `json:"missing"`
	Ranks     []int     `json:"ranks"`
	LatencyMs float64   `json:"latency_ms"`
	Hits      []string  `json:"hits"`
	Scores    []float64 `json:"scores"`
	Err       string    `json:"error,omitempty"`
}

// WriteRunFile writes rf as JSON (see RunFile).
func WriteRunFile(w io.Writer, rf *RunFile) error {
	out := runFileWire{
		Format: RunFormat, Label: rf.Label, Created: rf.Created.UTC().Format(time.RFC3339),
		Version: rf.Version, Command: rf.Command, Settings: rf.Settings,
		Results: make([]resultWire, 0, len(rf.Results)),
	}
	for _, r := range rf.Results {
		rw := resultWire{
			Bench: r.Bench, Set: r.Set, Stage: r.Stage, Queries: r.Queries, Failed: r.Failed,
			Missing: r.Missing, Relevant: r.Relevant, Answerable: r.Answerable, Unjudged: r.Unjudged,
			MatchedBy: r.MatchedBy, Metrics: r.Metrics,
			Latency:  latencyWire{round(ms(r.LatencyP50), 3), round(ms(r.LatencyP99), 3)},
			PerQuery: make([]queryWire, 0, len(r.PerQuery)),
		}
		for _, q := range r.PerQuery {
			qw := queryWire{ID: q.ID, Metrics: q.Metrics, Relevant: q.Relevant, Missing: q.RelevantMissing,
				Ranks: q.Ranks, LatencyMs: round(ms(q.Latency), 3), Err: q.Err,
				Hits: make([]string, len(q.Hits)), Scores: make([]float64, len(q.Hits))}
			if qw.Ranks == nil {
				qw.Ranks = []int{}
			}
			for i, h := range q.Hits {
				qw.Hits[i], qw.Scores[i] = h.ID, h.Score
			}
			rw.PerQuery = append(rw.PerQuery, qw)
		}
		out.Results = append(out.Results, rw)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = w.Write(b)
	return err
}

// ReadRunFile reads a run file written by WriteRunFile. A file that is not
// one gives an error wrapping ErrNotRunFile.
func ReadRunFile(path string) (*RunFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var w runFileWire
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, fmt.Errorf("%s: %w: %w", path, ErrNotRunFile, err)
	}
	if w.Format != RunFormat {
		return nil, fmt.Errorf("%s: %w (format %q, want %q)", path, ErrNotRunFile, w.Format, RunFormat)
	}
	rf := &RunFile{Label: w.Label, Version: w.Version, Command: w.Command, Settings: w.Settings}
	if w.Created != "" {
		if rf.Created, err = time.Parse(time.RFC3339, w.Created); err != nil {
			return nil, fmt.Errorf("%s: created: %w", path, err)
		}
	}
	for _, rw := range w.Results {
		r := &Result{
			Bench: rw.Bench, Set: rw.Set, Stage: rw.Stage, Queries: rw.Queries, Failed: rw.Failed,
			Missing: rw.Missing, Relevant: rw.Relevant, Answerable: rw.Answerable, Unjudged: rw.Unjudged,
			MatchedBy: rw.MatchedBy, Metrics: rw.Metrics,
			LatencyP50: fromMs(rw.Latency.P50), LatencyP99: fromMs(rw.Latency.P99),
		}
		for _, qw := range rw.PerQuery {
			if len(qw.Scores) != 0 && len(qw.Scores) != len(qw.Hits) {
				return nil, fmt.Errorf("%s: %s/%s query %s: %d hits but %d scores", path, rw.Set, rw.Stage, qw.ID, len(qw.Hits), len(qw.Scores))
			}
			q := QueryResult{ID: qw.ID, Metrics: qw.Metrics, Relevant: qw.Relevant, RelevantMissing: qw.Missing,
				Ranks: qw.Ranks, Latency: fromMs(qw.LatencyMs), Err: qw.Err}
			for i, id := range qw.Hits {
				h := corpus.Hit{ID: id}
				if len(qw.Scores) > 0 {
					h.Score = qw.Scores[i]
				}
				q.Hits = append(q.Hits, h)
			}
			r.PerQuery = append(r.PerQuery, q)
		}
		if r.Metrics == nil {
			r.Metrics = Metrics{}
		}
		rf.Results = append(rf.Results, r)
	}
	if rf.Label == "" {
		rf.Label = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	return rf, nil
}

func fromMs(v float64) time.Duration { return time.Duration(math.Round(v * float64(time.Millisecond))) }

// ReadTRECRun reads a TREC run file ("qid Q0 docid rank score tag" per
// line, blank lines skipped) into the hits of each query, best first:
// ordered by score, descending, ties by the rank column, as written. A
// docid repeated within a query keeps its first line. It also returns
// the run tag of the first line.
func ReadTRECRun(path string) (map[string][]corpus.Hit, string, error) {
	type line struct {
		hit  corpus.Hit
		rank int
	}
	per := map[string][]line{}
	seen := map[[2]string]bool{}
	tag := ""
	err := readLines(path, func(n int, l []byte) error {
		// a byte-order mark is dropped from every line, not only the first
		fs := strings.Fields(string(bytes.TrimPrefix(l, []byte("\ufeff"))))
		if len(fs) == 0 {
			return nil
		}
		if len(fs) != 6 {
			return fmt.Errorf("want 6 fields \"qid Q0 docid rank score tag\", got %d", len(fs))
		}
		rank, err1 := strconv.Atoi(fs[3])
		score, err2 := strconv.ParseFloat(fs[4], 64)
		if err1 != nil || err2 != nil {
			return fmt.Errorf("rank %q or score %q is not a number", fs[3], fs[4])
		}
		if tag == "" {
			tag = fs[5]
		}
		if seen[[2]string{fs[0], fs[2]}] {
			return nil
		}
		seen[[2]string{fs[0], fs[2]}] = true
		per[fs[0]] = append(per[fs[0]], line{corpus.Hit{ID: fs[2], Score: score}, rank})
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	if len(per) == 0 {
		return nil, "", fmt.Errorf("%s: no run line: %w", path, ErrEmptyBenchmark)
	}
	out := make(map[string][]corpus.Hit, len(per))
	for q, ls := range per {
		sort.SliceStable(ls, func(i, j int) bool {
			if ls[i].hit.Score != ls[j].hit.Score {
				return ls[i].hit.Score > ls[j].hit.Score
			}
			return ls[i].rank < ls[j].rank
		})
		hs := make([]corpus.Hit, len(ls))
		for i, l := range ls {
			hs[i] = l.hit
		}
		out[q] = hs
	}
	return out, tag, nil
}
