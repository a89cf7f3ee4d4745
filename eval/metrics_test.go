package eval_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/citefind/citefind/eval"
)

func set(ids ...string) map[string]bool {
	m := map[string]bool{}
	for _, id := range ids {
		m[id] = true
	}
	return m
}

// filler returns n distinct irrelevant ids.
func filler(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("x%d", i)
	}
	return out
}

func TestScore(t *testing.T) {
	// 1/log2(2) = 1, 1/log2(3) = 0.6309297535714575, 1/log2(4) = 0.5,
	// 1/log2(5) = 0.43067655807339306
	tests := []struct {
		name     string
		ranked   []string
		relevant map[string]bool
		want     eval.Metrics
	}{
		{
			// relevant a, b, c; hits at ranks 2 (a) and 4 (b).
			// recall@1 = 0/3; recall@5..100 = 2/3.
			// DCG = 1/log2(3) + 1/log2(5) = 0.6309297535714575 + 0.43067655807339306 = 1.0616063116448506
			// IDCG (3 relevant) = 1 + 1/log2(3) + 1/log2(4) = 2.1309297535714578
			// nDCG@10 = 1.0616063116448506 / 2.1309297535714578 = 0.49818925746641285
			// MRR@10 = 1/2; acc@1 = 0
			name:     "two of three",
			ranked:   []string{"x", "a", "y", "b", "z"},
			relevant: set("a", "b", "c"),
			want: eval.Metrics{"recall@1": 0, "recall@5": 2.0 / 3, "recall@10": 2.0 / 3, "recall@20": 2.0 / 3,
				"recall@50": 2.0 / 3, "recall@100": 2.0 / 3, "ndcg@10": 0.49818925746641285, "mrr@10": 0.5, "acc@1": 0},
		},
		{
			// top hit relevant, one of two relevant ids missing from the
			// collection: recall = 1/2 everywhere;
			// nDCG = 1 / (1 + 1/log2(3)) = 1 / 1.6309297535714575 = 0.6131471927654584
			name:     "missing relevant counts in denominator",
			ranked:   []string{"a", "x"},
			relevant: set("a", "not-in-collection"),
			want: eval.Metrics{"recall@1": 0.5, "recall@5": 0.5, "recall@10": 0.5, "recall@20": 0.5,
				"recall@50": 0.5, "recall@100": 0.5, "ndcg@10": 0.6131471927654584, "mrr@10": 1, "acc@1": 1},
		},
		{
			// "a" repeated: the copies are skipped and take no rank, so b is
			// at rank 2: nDCG = (1/log2(3)) / 1 = 0.6309297535714575; MRR = 1/2
			name:     "duplicates count once",
			ranked:   []string{"a", "a", "a", "b"},
			relevant: set("b"),
			want: eval.Metrics{"recall@1": 0, "recall@5": 1, "recall@10": 1, "recall@20": 1,
				"recall@50": 1, "recall@100": 1, "ndcg@10": 0.6309297535714575, "mrr@10": 0.5, "acc@1": 0},
		},
		{
			// the only relevant id at rank 11: nothing within 10
			// (recall@10 = nDCG@10 = MRR@10 = 0), found by recall@20
			name:     "first relevant at rank 11",
			ranked:   append(filler(10), "a"),
			relevant: set("a"),
			want: eval.Metrics{"recall@1": 0, "recall@5": 0, "recall@10": 0, "recall@20": 1,
				"recall@50": 1, "recall@100": 1, "ndcg@10": 0, "mrr@10": 0, "acc@1": 0},
		},
		{
			// 12 relevant, the top 10 all relevant: ideal DCG uses
			// min(12, 10) = 10 ones, so nDCG@10 = 1; recall@10 = 10/12;
			// r10, r11 at ranks 11, 12: recall@20 = 12/12
			name:     "more relevant than the cutoff",
			ranked:   []string{"r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10", "r11"},
			relevant: set("r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10", "r11"),
			want: eval.Metrics{"recall@1": 1.0 / 12, "recall@5": 5.0 / 12, "recall@10": 10.0 / 12, "recall@20": 1,
				"recall@50": 1, "recall@100": 1, "ndcg@10": 1, "mrr@10": 1, "acc@1": 1},
		},
		{
			// relevant at rank 101 is beyond every cutoff
			name:     "beyond 100",
			ranked:   append(filler(100), "a"),
			relevant: set("a"),
			want: eval.Metrics{"recall@1": 0, "recall@5": 0, "recall@10": 0, "recall@20": 0,
				"recall@50": 0, "recall@100": 0, "ndcg@10": 0, "mrr@10": 0, "acc@1": 0},
		},
		{
			// relevant at rank 100 (x0..x98 take ranks 1..99)
			name:     "at 100",
			ranked:   append(filler(99), "a"),
			relevant: set("a"),
			want: eval.Metrics{"recall@1": 0, "recall@5": 0, "recall@10": 0, "recall@20": 0,
				"recall@50": 0, "recall@100": 1, "ndcg@10": 0, "mrr@10": 0, "acc@1": 0},
		},
		{
			name:     "nothing retrieved",
			ranked:   nil,
			relevant: set("a"),
			want: eval.Metrics{"recall@1": 0, "recall@5": 0, "recall@10": 0, "recall@20": 0,
				"recall@50": 0, "recall@100": 0, "ndcg@10": 0, "mrr@10": 0, "acc@1": 0},
		},
		{
			// entries mapped to false are not relevant: one relevant, at rank 1
			name:     "false entries ignored",
			ranked:   []string{"a", "b"},
			relevant: map[string]bool{"a": true, "b": false},
			want: eval.Metrics{"recall@1": 1, "recall@5": 1, "recall@10": 1, "recall@20": 1,
				"recall@50": 1, "recall@100": 1, "ndcg@10": 1, "mrr@10": 1, "acc@1": 1},
		},
		{
			name:     "no relevant",
			ranked:   []string{"a"},
			relevant: nil,
			want: eval.Metrics{"recall@1": 0, "recall@5": 0, "recall@10": 0, "recall@20": 0,
				"recall@50": 0, "recall@100": 0, "ndcg@10": 0, "mrr@10": 0, "acc@1": 0},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := eval.Score(tc.ranked, tc.relevant)
			assert.Len(t, got, len(eval.MetricKeys()))
			for _, k := range eval.MetricKeys() {
				assert.InDelta(t, tc.want[k], got[k], 1e-12, k)
			}
		})
	}
}

func TestMean(t *testing.T) {
	// (1 + 0 + 0.5) / 3 = 0.5; a query without the key counts as 0:
	// (0.25 + 0 + 0) / 3 = 0.08333…
	got := eval.Mean([]eval.Metrics{
		{"mrr@10": 1, "acc@1": 0.25},
		{"mrr@10": 0},
		{"mrr@10": 0.5},
	})
	assert.InDelta(t, 0.5, got["mrr@10"], 1e-12)
	assert.InDelta(t, 0.25/3, got["acc@1"], 1e-12)
	assert.Empty(t, eval.Mean(nil))
}
