package learned_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/eval"
	"github.com/citefind/citefind/rerank/learned"
)

// cvScores returns the mean metrics per topic set of the queries of d
// ranked by orders (nil: the fused order).
func cvScores(d *learned.Dataset, orders [][]int) map[string]eval.Metrics {
	per := map[string][]eval.Metrics{}
	for i, q := range d.Queries {
		rel := map[string]bool{}
		for _, p := range q.Relevant {
			rel[p] = true
		}
		for m := range q.Missing {
			rel[fmt.Sprintf("\x00missing%d", m)] = true
		}
		ids := make([]string, len(q.Cands))
		for j := range q.Cands {
			k := j
			if orders != nil {
				k = orders[i][j]
			}
			ids[j] = q.Cands[k].ID
		}
		per[q.Set] = append(per[q.Set], eval.Score(ids, rel))
	}
	out := map[string]eval.Metrics{}
	for s, ms := range per {
		out[s] = eval.Mean(ms)
	}
	return out
}

// mask sets the named features (by prefix) to 0 in a copy of samples.
func mask(samples []learned.Sample, names []string, prefixes []string) []learned.Sample {
	if len(prefixes) == 0 {
		return samples
	}
	var cols []int
	for f, n := range names {
		for _, p := range prefixes {
			if strings.HasPrefix(n, p) {
				cols = append(cols, f)
			}
		}
	}
	out := make([]learned.Sample, len(samples))
	for i, s := range samples {
		out[i].Labels = s.Labels
		out[i].X = make([][]float64, len(s.X))
		for j, x := range s.X {
			y := append([]float64(nil), x...)
			for _, c := range cols {
				y[c] = 0
			}
			out[i].X[j] = y
		}
	}
	return out
}

// TestMeasureCV cross-validates model variants on a cached candidate
// dataset (written by `citefind train` or `citefind eval --folds`):
// CITEFIND_MEASURE=1 CITEFIND_LEARNED_DATASET=FILE go test -run MeasureCV -v ./rerank/learned
// CITEFIND_VARIANTS picks variants by name (comma-separated; default all).
func TestMeasureCV(t *testing.T) {
	if os.Getenv("CITEFIND_MEASURE") != "1" {
		t.Skip("set CITEFIND_MEASURE=1 and CITEFIND_LEARNED_DATASET=FILE to cross-validate model variants")
	}
	path := os.Getenv("CITEFIND_LEARNED_DATASET")
	if path == "" {
		t.Skip("CITEFIND_LEARNED_DATASET is not set (a dataset file written by citefind train)")
	}
	d, err := learned.LoadDataset(path)
	require.NoError(t, err)
	samples, err := d.Samples(t.Context(), d.Retrievers)
	require.NoError(t, err)
	names := learned.FeatureNames(d.Retrievers)

	def := learned.DefaultParams()
	with := func(f func(p *learned.Params)) learned.Params { p := def; f(&p); return p }
	variants := []struct {
		name string
		p    learned.Params
		mask []string
	}{
		{"lambdamart-default", def, nil},
		{"linear-lr.5-300", learned.Params{Kind: learned.KindLinear, NDCGAt: 10, Seed: 1, LearningRate: 0.5, Epochs: 300}, nil},
		{"linear", learned.Params{Kind: learned.KindLinear, NDCGAt: 10, Seed: 1}, nil}, // lr .05, 1000 steps
		{"l15-300trees", with(func(p *learned.Params) { p.Leaves, p.Trees = 15, 300 }), nil},
		{"l7-300trees", with(func(p *learned.Params) { p.Leaves, p.Trees = 7, 300 }), nil},
		{"no-text", def, []string{"title.", "abs.", "kw.", "all.", "acro.", "q.len"}},
		{"no-provenance", def, append(retrieverPrefixes(d.Retrievers), "fused.")},
		{"no-author-acronym", def, []string{"author.", "acro."}},
		{"no-prior", def, []string{"year", "venue."}},
		{"no-prf", def, []string{"prf."}},
		{"no-local", def, []string{"win.", "sent."}},
		{"l7-500trees", with(func(p *learned.Params) { p.Leaves, p.Trees = 7, 500 }), nil},
		{"l3-600trees", with(func(p *learned.Params) { p.Leaves, p.Trees = 3, 600 }), nil},
		{"l7-ndcg20", with(func(p *learned.Params) { p.Leaves, p.NDCGAt = 7, 20 }), nil},
		{"l7-minleaf100", with(func(p *learned.Params) { p.Leaves, p.MinLeaf = 7, 100 }), nil},
		{"l7-150trees", with(func(p *learned.Params) { p.Leaves, p.Trees = 7, 150 }), nil},
	}
	want := map[string]bool{}
	for _, v := range strings.Split(os.Getenv("CITEFIND_VARIANTS"), ",") {
		if v != "" {
			want[v] = true
		}
	}
	sets := []string{eval.SetContexts, eval.SetSentences}
	row := func(name string, m map[string]eval.Metrics, dur time.Duration) {
		var cells []string
		for _, s := range sets {
			cells = append(cells, fmt.Sprintf("%.4f | %.4f | %.4f", m[s][eval.Recall10], m[s][eval.NDCG10], m[s][eval.Recall100]))
		}
		t.Logf("| %s | %s | %s |", name, strings.Join(cells, " | "), dur.Round(time.Second))
	}
	t.Logf("| variant | contexts R@10 | nDCG@10 | R@100 | sentences R@10 | nDCG@10 | R@100 | CV time |")
	row("fused (no rerank)", cvScores(d, nil), 0)
	for _, v := range variants {
		if len(want) > 0 && !want[v.name] {
			continue
		}
		start := time.Now()
		cv, err := learned.CrossValidate(t.Context(), d, mask(samples, names, v.mask), 5, v.p, 1, nil)
		require.NoError(t, err)
		row(v.name, cvScores(d, cv.Orders), time.Since(start))
	}
}

func retrieverPrefixes(rs []string) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r+".")
	}
	return out
}

// BenchmarkRerank100ACMCR measures the reranker on real ACM-CR candidate
// lists (100 fused candidates each, cycling over the dataset's queries):
// CITEFIND_LEARNED_DATASET=FILE go test -run '^$' -bench Rerank100ACMCR ./rerank/learned
func BenchmarkRerank100ACMCR(b *testing.B) {
	path := os.Getenv("CITEFIND_LEARNED_DATASET")
	if path == "" {
		b.Skip("CITEFIND_LEARNED_DATASET is not set (a dataset file written by citefind train)")
	}
	d, err := learned.LoadDataset(path)
	require.NoError(b, err)
	r, err := learned.Default()
	require.NoError(b, err)
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		q := i % len(d.Queries)
		i++
		sink, err = r.Rerank(b.Context(), d.Queries[q].Text, d.Candidates(q))
		require.NoError(b, err)
	}
}
