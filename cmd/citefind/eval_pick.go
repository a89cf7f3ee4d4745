package main

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/citefind/citefind"
	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/eval"
	"github.com/citefind/citefind/retrieve"
	"github.com/citefind/citefind/selector"
)

// engineRerankStage is the "reranked" stage: the fused candidates
// reordered by the engine's reranker of that name.
func engineRerankStage(eng *citefind.Engine, name string) eval.Stage {
	return eval.Stage{Name: "reranked", Retriever: retrieve.RetrieverFunc(func(ctx context.Context, text string, k int) ([]corpus.Hit, error) {
		cands, _, _, err := eng.Ranked(ctx, text, citefind.QueryOptions{K: k, Rerank: name})
		if err != nil {
			return nil, err
		}
		hits := make([]corpus.Hit, len(cands))
		for i, c := range cands {
			hits[i] = corpus.Hit{ID: c.ID, Score: float64(len(cands) - i)}
		}
		return hits, nil
	})}
}

// pickTally counts the picker's figures across a picked stage.
type pickTally struct {
	mu sync.Mutex
	t  map[string]*selector.Tally // by topic set
}

// pickStage is the "picked" stage: the pick first, then the other
// candidates in reranked order, so that its accuracy@1 is the picker's.
// The picker sees the top 10 reranked candidates (what query shows).
func pickStage(eng *citefind.Engine, rerankName, set string, tally *pickTally) eval.Stage {
	return eval.Stage{Name: "picked", Retriever: retrieve.RetrieverFunc(func(ctx context.Context, text string, k int) ([]corpus.Hit, error) {
		cands, cleaned, _, err := eng.Ranked(ctx, text, citefind.QueryOptions{K: k, Rerank: rerankName})
		if err != nil || len(cands) == 0 {
			return nil, err
		}
		p, err := eng.Picker()
		if err != nil {
			return nil, err
		}
		shown := cands[:min(len(cands), 10)]
		pick, err := p.Pick(ctx, cleaned, shown)
		if err != nil {
			return nil, err
		}
		tally.mu.Lock()
		if tally.t == nil {
			tally.t = map[string]*selector.Tally{}
		}
		if tally.t[set] == nil {
			tally.t[set] = &selector.Tally{}
		}
		tally.t[set].Add(pick, shown, nil)
		tally.mu.Unlock()
		hits := []corpus.Hit{{ID: pick.ID, Score: float64(len(cands) + 1)}}
		for i, c := range cands {
			if c.ID != pick.ID {
				hits = append(hits, corpus.Hit{ID: c.ID, Score: float64(len(cands) - i)})
			}
		}
		return hits, nil
	})}
}

// write prints the picker figures of each topic set: accuracy@1 is the
// picked stage's; the others say how often the guard had to act.
func (pt *pickTally) write(w io.Writer, results []*eval.Result) {
	for _, r := range results {
		if r.Stage != "picked" || pt.t[r.Set] == nil {
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
