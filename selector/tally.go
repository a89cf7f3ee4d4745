package selector

import "github.com/citefind/citefind/rerank"

// Metric names reported by Tally.Metrics.
const (
	// MetricAccuracy is the share of picks that are relevant: the
	// picker's accuracy@1.
	MetricAccuracy = "pick_acc@1"
	// MetricOutside is the share of final picks that are not in the
	// candidate set. The guard makes it 0; anything else is a bug.
	MetricOutside = "pick_outside_candidates"
	// MetricNamedNonCandidate is the share of raw model answers that
	// named a paper that is not a candidate: how often the guard caught a
	// hallucination.
	MetricNamedNonCandidate = "pick_named_non_candidate"
	// MetricFallback is the share of picks that fell back to the top rank.
	MetricFallback = "pick_fallback"
)

// Tally accumulates picker figures over the queries of an evaluation.
// The zero value is empty and ready; it is not safe for concurrent use.
type Tally struct {
	Queries           int // picks added
	Correct           int // picks whose ID is relevant
	Outside           int // picks whose ID is not among the candidates
	Answered          int // picks with a raw model reply (Pick.Raw != "")
	NamedNonCandidate int // answered picks with Pick.NamedNonCandidate
	Fallbacks         int // picks with Pick.Fallback
}

// Add records one query's pick among cands, with relevant the set of
// relevant paper IDs.
func (t *Tally) Add(p Pick, cands []rerank.Candidate, relevant map[string]bool) {
	t.Queries++
	if relevant[p.ID] {
		t.Correct++
	}
	in := false
	for _, c := range cands {
		if c.ID == p.ID {
			in = true
			break
		}
	}
	if !in {
		t.Outside++
	}
	if p.Raw != "" {
		t.Answered++
		if p.NamedNonCandidate {
			t.NamedNonCandidate++
		}
	}
	if p.Fallback {
		t.Fallbacks++
	}
}

// Metrics returns the figures as shares in [0, 1], keyed by the Metric*
// names: accuracy, outside and fallback over Queries, named-non-candidate
// over Answered. A zero denominator gives 0.
func (t Tally) Metrics() map[string]float64 {
	share := func(n, d int) float64 {
		if d == 0 {
			return 0
		}
		return float64(n) / float64(d)
	}
	return map[string]float64{
		MetricAccuracy:          share(t.Correct, t.Queries),
		MetricOutside:           share(t.Outside, t.Queries),
		MetricNamedNonCandidate: share(t.NamedNonCandidate, t.Answered),
		MetricFallback:          share(t.Fallbacks, t.Queries),
	}
}
