package eval

import (
	"math"
	"sort"
)

// Metric names: the keys of Metrics.
const (
	Recall1   = "recall@1"
	Recall5   = "recall@5"
	Recall10  = "recall@10"
	Recall20  = "recall@20"
	Recall50  = "recall@50"
	Recall100 = "recall@100"
	NDCG10    = "ndcg@10"
	MRR10     = "mrr@10"
	Acc1      = "acc@1"
)

// MetricKeys returns the metric names Score computes, in report order.
func MetricKeys() []string {
	return []string{Recall1, Recall5, Recall10, Recall20, Recall50, Recall100, NDCG10, MRR10, Acc1}
}

// Metrics maps a metric name (see MetricKeys) to its value in [0, 1].
type Metrics map[string]float64

// Score computes the metrics of one query as trec_eval does, from the
// ranked list of retrieved ids (best first) and the set of relevant ids
// (entries mapped to false are ignored), both in the same id space:
//
//   - recall@K = |relevant ∩ top K| / |relevant| (trec_eval recall.K); a
//     relevant id that can never be retrieved (missing from the
//     collection) still counts in the denominator;
//   - ndcg@10 with binary gains (trec_eval ndcg_cut.10): DCG = Σ 1/log2(rank+1)
//     over relevant hits at ranks 1…10, divided by the ideal DCG of
//     min(|relevant|, 10) relevant hits at the top;
//   - mrr@10 = 1/rank of the first relevant hit within the top 10, else 0
//     (trec_eval recip_rank, cut at 10);
//   - acc@1 = 1 when the top hit is relevant, else 0 (= recall@1 only for
//     single-answer queries).
//
// The list is taken in the order given (trec_eval re-sorts a run file by
// score, breaking ties by docid). An id that occurs more than once counts
// at its first rank only; later copies are skipped and do not take a rank.
// With no relevant id every metric is 0.
func Score(ranked []string, relevant map[string]bool) Metrics {
	nrel := 0
	for _, ok := range relevant {
		if ok {
			nrel++
		}
	}
	m := Metrics{}
	for _, k := range MetricKeys() {
		m[k] = 0
	}
	if nrel == 0 {
		return m
	}
	cuts := []struct {
		k   int
		key string
	}{{1, Recall1}, {5, Recall5}, {10, Recall10}, {20, Recall20}, {50, Recall50}, {100, Recall100}}
	seen := make(map[string]bool, len(ranked))
	found := 0 // relevant ids seen at ranks 1…rank
	dcg := 0.0
	first := 0 // rank of the first relevant hit
	rank := 0
	maxK := cuts[len(cuts)-1].k
	for _, id := range ranked {
		if seen[id] {
			continue
		}
		seen[id] = true
		rank++
		if rank > maxK {
			break
		}
		if relevant[id] {
			found++
			if rank <= 10 {
				dcg += 1 / math.Log2(float64(rank)+1)
			}
			if first == 0 {
				first = rank
			}
		}
		for _, c := range cuts {
			if rank == c.k {
				m[c.key] = float64(found) / float64(nrel)
			}
		}
	}
	// Lists shorter than a cutoff: recall at the cutoff is recall at the end.
	for _, c := range cuts {
		if rank < c.k {
			m[c.key] = float64(found) / float64(nrel)
		}
	}
	idcg := 0.0
	for i := 1; i <= min(nrel, 10); i++ {
		idcg += 1 / math.Log2(float64(i)+1)
	}
	m[NDCG10] = dcg / idcg
	if first > 0 && first <= 10 {
		m[MRR10] = 1 / float64(first)
	}
	if first == 1 {
		m[Acc1] = 1
	}
	return m
}

// Mean macro-averages per-query metrics: each metric is the sum over the
// queries divided by len(per); a query lacking a metric counts as 0.
// Mean of no query is an empty Metrics.
func Mean(per []Metrics) Metrics {
	out := Metrics{}
	if len(per) == 0 {
		return out
	}
	keys := map[string]bool{}
	for _, m := range per {
		for k := range m {
			keys[k] = true
		}
	}
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names) // fixed summation order
	for _, k := range names {
		sum := 0.0
		for _, m := range per {
			sum += m[k]
		}
		out[k] = sum / float64(len(per))
	}
	return out
}
