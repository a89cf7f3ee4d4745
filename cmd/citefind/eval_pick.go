package main

import (
	"fmt"
	"io"
	"sync"

	"github.com/citefind/citefind"
	"github.com/citefind/citefind/eval"
	"github.com/citefind/citefind/rerank"
	"github.com/citefind/citefind/selector"
)

// pickTally counts the picker's figures across a picked stage.
type pickTally struct {
	mu sync.Mutex
	t  map[string]*selector.Tally // by topic set
}

// add counts the pick of one query of set: the picker saw the top
// selector.DefaultWindow hits.
func (pt *pickTally) add(set string, r *citefind.Result) {
	shown := make([]rerank.Candidate, 0, selector.DefaultWindow)
	for _, h := range r.Hits[:min(len(r.Hits), selector.DefaultWindow)] {
		shown = append(shown, rerank.Candidate{ID: h.ID, Title: h.Title})
	}
	pt.mu.Lock()
	defer pt.mu.Unlock()
	if pt.t == nil {
		pt.t = map[string]*selector.Tally{}
	}
	if pt.t[set] == nil {
		pt.t[set] = &selector.Tally{}
	}
	pt.t[set].Add(*r.Picked, shown, nil)
}

// write prints the picker figures of each topic set: accuracy@1 is the
// picked stage's; the others say how often the guard had to act.
func (pt *pickTally) write(w io.Writer, results []*eval.Result) {
	for _, r := range results {
		if r.Stage != eval.StagePicked || pt.t[r.Set] == nil {
			continue
		}
		t := pt.t[r.Set]
		m := t.Metrics()
		fmt.Fprintf(w, "picker on %s: %d picks, accuracy@1 %.4f; outside the candidates %d (%.1f%%, must be 0); "+
			"model answers naming a non-candidate %d of %d (%.1f%%, caught by the guard); top-rank fallbacks %d (%.1f%%)\n",
			r.Set, t.Queries, r.Metrics[eval.Acc1], t.Outside, 100*m[selector.MetricOutside],
			t.NamedNonCandidate, t.Answered, 100*m[selector.MetricNamedNonCandidate], t.Fallbacks, 100*m[selector.MetricFallback])
	}
}
