package eval_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/eval"
	"github.com/citefind/citefind/rerank/learned"
)

// TestMeasureTransfer runs leave-one-collection-out for model variants
// on cached candidate datasets (written by citefind train), featurising
// each dataset once:
//
//	CITEFIND_MEASURE=1 CITEFIND_COLLECTIONS='acm-cr=A.json.gz|A.json.gz;scifact=TRAIN.json.gz|TEST.json.gz;…' \
//	  CITEFIND_VARIANTS=default,balanced go test -run MeasureTransfer -v -timeout 5h ./eval
//
// Each collection is NAME=TRAIN[+TRAIN…]|TEST[+TEST…].
func TestMeasureTransfer(t *testing.T) {
	if os.Getenv("CITEFIND_MEASURE") != "1" || os.Getenv("CITEFIND_COLLECTIONS") == "" {
		t.Skip("set CITEFIND_MEASURE=1 and CITEFIND_COLLECTIONS to measure leave-one-collection-out variants")
	}
	cols := measureCollections(t)
	def := learned.DefaultParams()
	with := func(f func(p *learned.Params)) learned.Params { p := def; f(&p); return p }
	variants := []struct {
		name    string
		p       learned.Params
		balance bool
	}{
		{"default", def, false},
		{"balanced", def, true},
		{"l3-300", with(func(p *learned.Params) { p.Trees = 300 }), false},
		{"l3-150", with(func(p *learned.Params) { p.Trees = 150 }), false},
		{"l7-300", with(func(p *learned.Params) { p.Leaves, p.Trees = 7, 300 }), false},
		{"minleaf200", with(func(p *learned.Params) { p.MinLeaf = 200 }), false},
		{"no-prior", with(func(p *learned.Params) { p.Drop = []string{"year.", "venue.", "kw.", "author."} }), false},
		{"no-len", with(func(p *learned.Params) { p.Drop = []string{"title.lenr", "abs.lenr", "abs.has"} }), false},
		{"no-retr-detail", with(func(p *learned.Params) {
			p.Drop = []string{"bm25.", "rm3.", "citing."}
		}), false},
		{"no-local", with(func(p *learned.Params) { p.Drop = []string{"win.", "sent."} }), false},
		{"no-prf", with(func(p *learned.Params) { p.Drop = []string{"prf."} }), false},
		{"no-acro", with(func(p *learned.Params) { p.Drop = []string{"acro."} }), false},
		{"linear", learned.Params{Kind: learned.KindLinear, NDCGAt: 10, Seed: 1}, false},
		{"balanced-l3-300", with(func(p *learned.Params) { p.Trees = 300 }), true},
		{"balanced-l3-1000", with(func(p *learned.Params) { p.Trees = 1000 }), true},
		{"balanced-no-prior", with(func(p *learned.Params) { p.Drop = []string{"year.", "venue.", "kw.", "author."} }), true},
		{"balanced-minleaf200", with(func(p *learned.Params) { p.MinLeaf = 200 }), true},
	}
	want := map[string]bool{}
	for _, v := range strings.Split(os.Getenv("CITEFIND_VARIANTS"), ",") {
		if v != "" {
			want[v] = true
		}
	}
	cache := eval.NewSampleCache()
	for _, v := range variants {
		if len(want) > 0 && !want[v.name] {
			continue
		}
		held, err := eval.LeaveOneCollectionOut(t.Context(), cols, eval.TransferOptions{Params: v.p, Balance: v.balance, Cache: cache})
		require.NoError(t, err)
		cells, worst, mean := locoSummary(held)
		t.Logf("| %s | %s | worst %+.4f | mean %+.4f |", v.name, strings.Join(cells, " | "), worst, mean)
	}
}

// locoSummary returns, for the opt-in measurements' logs, one cell per
// held-out topic set (its nDCG@10 / R@10 gains over the fused order) and
// the worst and mean nDCG@10 gain.
func locoSummary(held []eval.HeldOut) (cells []string, worst, mean float64) {
	worst, n := 1.0, 0
	for _, h := range held {
		for _, s := range h.Scores {
			cells = append(cells, fmt.Sprintf("%s:%s %+.4f/%+.4f", h.Collection, s.Set, s.Gain(eval.NDCG10), s.Gain(eval.Recall10)))
			worst = min(worst, s.Gain(eval.NDCG10))
			mean += s.Gain(eval.NDCG10)
			n++
		}
	}
	return cells, worst, mean / float64(max(n, 1))
}

// measureCollections reads CITEFIND_COLLECTIONS
// (NAME=TRAIN[+TRAIN…]|TEST[+TEST…];…), loading each cached candidate
// dataset once, for the opt-in measurements of this package.
func measureCollections(t *testing.T) []eval.Collection {
	loaded := map[string]*learned.Dataset{}
	load := func(paths string) []*learned.Dataset {
		var out []*learned.Dataset
		for _, p := range strings.Split(paths, "+") {
			if loaded[p] == nil {
				d, err := learned.LoadDataset(p)
				require.NoError(t, err)
				loaded[p] = d
			}
			out = append(out, loaded[p])
		}
		return out
	}
	var cols []eval.Collection
	for _, c := range strings.Split(os.Getenv("CITEFIND_COLLECTIONS"), ";") {
		name, spec, _ := strings.Cut(c, "=")
		tr, te, _ := strings.Cut(spec, "|")
		cols = append(cols, eval.Collection{Name: name, Train: load(tr), Test: load(te)})
	}
	return cols
}
