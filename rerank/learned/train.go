package learned

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
)

// Model kinds.
const (
	// KindLambdaMART is gradient-boosted regression trees fitted to
	// LambdaRank gradients (LambdaMART), optimising nDCG at Params.NDCGAt.
	KindLambdaMART = "lambdamart"
	// KindLinear is a linear scorer over standardised features fitted by
	// full-batch gradient descent on the same LambdaRank gradients.
	KindLinear = "linear"
)

// Params are the hyper-parameters of training. Zero fields take the
// values of DefaultParams.
type Params struct {
	Kind string `json:"kind"`
	// NDCGAt is the rank cutoff of the nDCG whose changes weight the
	// LambdaRank pairs (10: nDCG@10).
	NDCGAt int `json:"ndcg_at"`
	// Sigma is the steepness of the pairwise logistic loss.
	Sigma float64 `json:"sigma"`
	// LambdaMART: number of trees, leaves per tree, shrinkage, the least
	// number of candidates in a leaf, the L2 penalty on leaf values and
	// the number of histogram bins per feature.
	Trees        int     `json:"trees,omitempty"`
	Leaves       int     `json:"leaves,omitempty"`
	LearningRate float64 `json:"learning_rate"`
	MinLeaf      int     `json:"min_leaf,omitempty"`
	L2           float64 `json:"l2"`
	Bins         int     `json:"bins,omitempty"`
	// FeatureFraction is the share of features each tree may split on
	// (1: all), drawn with Seed.
	FeatureFraction float64 `json:"feature_fraction,omitempty"`
	// Linear: number of gradient steps.
	Epochs int `json:"epochs,omitempty"`
	// Drop lists features the model may not use: names, or prefixes
	// ending in "." ("year." drops year.pct and year.has). nil: none.
	Drop []string `json:"drop,omitempty"`
	// Seed fixes every random choice, so training is deterministic.
	Seed uint64 `json:"seed"`
	// Bag (LambdaMART, 2 or more) averages that many models trained
	// with seeds Seed, Seed+1, …: their trees, each leaf value divided
	// by Bag. 0 or 1: one model.
	Bag int `json:"bag,omitempty"`
}

// DefaultParams returns the hyper-parameters the shipped model is
// trained with (chosen by cross-validation on ACM-CR, docs/rerank.md);
// make train adds collection balancing, Bag 5 and 300 trees.
func DefaultParams() Params {
	return Params{Kind: KindLambdaMART, NDCGAt: 10, Sigma: 1, Trees: 600, Leaves: 3,
		LearningRate: 0.05, MinLeaf: 50, L2: 1, Bins: 64, FeatureFraction: 0.8, Seed: 1}
}

// withDefaults fills zero fields from DefaultParams (linear defaults for
// KindLinear).
func (p Params) withDefaults() Params {
	d := DefaultParams()
	if p.Kind == "" {
		p.Kind = d.Kind
	}
	if p.NDCGAt <= 0 {
		p.NDCGAt = d.NDCGAt
	}
	if p.Sigma <= 0 {
		p.Sigma = d.Sigma
	}
	switch p.Kind {
	case KindLinear:
		if p.Epochs <= 0 {
			p.Epochs = 1000
		}
		if p.LearningRate <= 0 {
			p.LearningRate = 0.05 // 0.5 diverged on ACM-CR (docs/rerank.md)
		}
		if p.L2 < 0 {
			p.L2 = 0
		}
		p.Trees, p.Leaves, p.MinLeaf, p.Bins, p.FeatureFraction, p.Bag = 0, 0, 0, 0, 0, 0
	default:
		if p.Trees <= 0 {
			p.Trees = d.Trees
		}
		if p.Leaves < 2 {
			p.Leaves = d.Leaves
		}
		if p.LearningRate <= 0 {
			p.LearningRate = d.LearningRate
		}
		if p.MinLeaf <= 0 {
			p.MinLeaf = d.MinLeaf
		}
		if p.L2 <= 0 {
			p.L2 = d.L2
		}
		if p.Bins < 2 || p.Bins > 256 {
			p.Bins = d.Bins
		}
		if p.FeatureFraction <= 0 || p.FeatureFraction > 1 {
			p.FeatureFraction = d.FeatureFraction
		}
		p.Epochs = 0
	}
	return p
}

// Sample is one training query: a feature vector and a relevance label
// (1 relevant, 0 not) per candidate, and the query's weight in the loss
// (0 means 1; see Balance).
type Sample struct {
	X      [][]float64
	Labels []float64
	Weight float64
}

// weight returns the sample's weight (1 when unset).
func (s Sample) weight() float64 {
	if s.Weight > 0 {
		return s.Weight
	}
	return 1
}

// usable returns the indexes of the features of names that p.Drop does
// not exclude.
func usable(names []string, drop []string) []int {
	var out []int
	for f, n := range names {
		if !dropped(n, drop) {
			out = append(out, f)
		}
	}
	return out
}

// dropped reports whether feature name is listed in drop, by name or by
// a prefix ending in ".".
func dropped(name string, drop []string) bool {
	for _, d := range drop {
		if name == d || (strings.HasSuffix(d, ".") && strings.HasPrefix(name, d)) {
			return true
		}
	}
	return false
}

// fit trains a scorer on samples (every vector of len(names)); with a
// base model (LambdaMART only), boosting starts from its scores.
func fit(ctx context.Context, samples []Sample, names []string, p Params, base *Model) (*Model, error) {
	nf := len(names)
	p = p.withDefaults()
	for i, s := range samples {
		if len(s.X) != len(s.Labels) {
			return nil, fmt.Errorf("sample %d: %d vectors, %d labels", i, len(s.X), len(s.Labels))
		}
		for _, x := range s.X {
			if len(x) != nf {
				return nil, fmt.Errorf("sample %d: a vector of %d features, want %d", i, len(x), nf)
			}
		}
	}
	switch p.Kind {
	case KindLambdaMART:
		feats := usable(names, p.Drop)
		if len(feats) == 0 {
			return nil, fmt.Errorf("every feature is dropped")
		}
		if p.Bag < 2 {
			trees, err := fitTrees(ctx, samples, nf, feats, p, base)
			if err != nil {
				return nil, err
			}
			return &Model{Params: p, Trees: trees}, nil
		}
		var all []Tree
		for k := range p.Bag {
			q := p
			q.Seed = p.Seed + uint64(k)
			trees, err := fitTrees(ctx, samples, nf, feats, q, base)
			if err != nil {
				return nil, err
			}
			for _, t := range trees {
				for j := range t.Nodes {
					t.Nodes[j].Value /= float64(p.Bag)
				}
			}
			all = append(all, trees...)
		}
		return &Model{Params: p, Trees: all}, nil
	case KindLinear:
		lin, err := fitLinear(ctx, samples, nf, usable(names, p.Drop), p)
		if err != nil {
			return nil, err
		}
		return &Model{Params: p, Linear: lin}, nil
	}
	return nil, fmt.Errorf("unknown model kind %q (want %s or %s)", p.Kind, KindLambdaMART, KindLinear)
}

// lambdas adds to g and h (parallel to the sample's candidates) the
// LambdaRank gradient and second derivative of the pairwise logistic
// loss, each pair weighted by the change in nDCG@cut that swapping it
// would make, at the current scores.
func lambdas(s Sample, scores, g, h []float64, cut int, sigma float64) {
	n := len(scores)
	wq := s.weight()
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return scores[order[a]] > scores[order[b]] })
	rank := make([]int, n)
	for r, i := range order {
		rank[i] = r + 1
	}
	nrel := 0
	for _, l := range s.Labels {
		if l > 0 {
			nrel++
		}
	}
	if nrel == 0 || nrel == n {
		return
	}
	idcg := 0.0
	for r := 1; r <= min(nrel, cut); r++ {
		idcg += 1 / math.Log2(float64(r)+1)
	}
	disc := func(r int) float64 {
		if r > cut {
			return 0
		}
		return 1 / math.Log2(float64(r)+1)
	}
	for i := range n {
		if s.Labels[i] <= 0 {
			continue
		}
		for j := range n {
			if s.Labels[j] > 0 {
				continue
			}
			if rank[i] > cut && rank[j] > cut {
				continue
			}
			delta := wq * math.Abs(disc(rank[i])-disc(rank[j])) / idcg
			rho := 1 / (1 + math.Exp(sigma*(scores[i]-scores[j])))
			g[i] -= sigma * delta * rho
			g[j] += sigma * delta * rho
			hh := sigma * sigma * delta * rho * (1 - rho)
			h[i] += hh
			h[j] += hh
		}
	}
}

// flat is the training set as one table.
type flat struct {
	rows  int
	start []int     // start[q] is the first row of sample q; start[len] = rows
	bins  [][]uint8 // bins[f][row]
	th    [][]float64
}

func binned(samples []Sample, nf, nbins int) *flat {
	fl := &flat{start: make([]int, len(samples)+1)}
	for q, s := range samples {
		fl.start[q] = fl.rows
		fl.rows += len(s.X)
	}
	fl.start[len(samples)] = fl.rows
	fl.bins = make([][]uint8, nf)
	fl.th = make([][]float64, nf)
	vals := make([]float64, 0, fl.rows)
	for f := range nf {
		vals = vals[:0]
		for _, s := range samples {
			for _, x := range s.X {
				vals = append(vals, x[f])
			}
		}
		sorted := slices.Clone(vals)
		slices.Sort(sorted)
		uniq := slices.Compact(sorted)
		var th []float64
		if len(uniq) <= nbins {
			for i := 0; i+1 < len(uniq); i++ {
				th = append(th, (uniq[i]+uniq[i+1])/2)
			}
		} else {
			// Quantile thresholds over all values (not unique ones).
			all := slices.Clone(vals)
			slices.Sort(all)
			for b := 1; b < nbins; b++ {
				v := all[b*len(all)/nbins]
				// Split just above v, between v and the next distinct value.
				k := sort.SearchFloat64s(uniq, v)
				if k+1 < len(uniq) {
					t := (uniq[k] + uniq[k+1]) / 2
					if len(th) == 0 || t > th[len(th)-1] {
						th = append(th, t)
					}
				}
			}
		}
		fl.th[f] = th
		col := make([]uint8, fl.rows)
		for r, v := range vals {
			col[r] = uint8(sort.SearchFloat64s(th, v)) // x <= th[b] ⇔ bin <= b
		}
		fl.bins[f] = col
	}
	return fl
}

type leaf struct {
	rows       []int
	node       int
	hist       *hist
	gain       float64
	feat, bin  int
	splittable bool
	sumG, sumH float64
}

// hist is a leaf's histogram: sums of gradients, hessians and counts per
// feature and bin.
type hist struct {
	g, h [][]float64
	c    [][]int
}

func newHist(fl *flat) *hist {
	nf := len(fl.th)
	hs := &hist{g: make([][]float64, nf), h: make([][]float64, nf), c: make([][]int, nf)}
	for f := range nf {
		nb := len(fl.th[f]) + 1
		hs.g[f], hs.h[f], hs.c[f] = make([]float64, nb), make([]float64, nb), make([]int, nb)
	}
	return hs
}

func buildHist(fl *flat, g, h []float64, feats []int, rows []int) *hist {
	hs := newHist(fl)
	for _, f := range feats {
		col, hg, hh, hc := fl.bins[f], hs.g[f], hs.h[f], hs.c[f]
		for _, r := range rows {
			b := col[r]
			hg[b] += g[r]
			hh[b] += h[r]
			hc[b]++
		}
	}
	return hs
}

// minus returns parent − child over feats (the sibling's histogram).
func (hs *hist) minus(fl *flat, child *hist, feats []int) *hist {
	out := newHist(fl)
	for _, f := range feats {
		for b := range out.g[f] {
			out.g[f][b] = hs.g[f][b] - child.g[f][b]
			out.h[f][b] = hs.h[f][b] - child.h[f][b]
			out.c[f][b] = hs.c[f][b] - child.c[f][b]
		}
	}
	return out
}

func fitTrees(ctx context.Context, samples []Sample, nf int, feats []int, p Params, base *Model) ([]Tree, error) {
	// Queries with no relevant candidate (or only relevant ones) have no
	// gradient: they are left out.
	var use []Sample
	for _, s := range samples {
		rel := 0
		for _, l := range s.Labels {
			if l > 0 {
				rel++
			}
		}
		if rel > 0 && rel < len(s.Labels) {
			use = append(use, s)
		}
	}
	samples = use
	if len(samples) == 0 {
		return nil, fmt.Errorf("no query has both relevant and non-relevant candidates")
	}
	fl := binned(samples, nf, p.Bins)
	scores := make([]float64, fl.rows)
	if base != nil {
		r := 0
		for _, s := range samples {
			for _, x := range s.X {
				scores[r] = base.Score(x)
				r++
			}
		}
	}
	g := make([]float64, fl.rows)
	h := make([]float64, fl.rows)
	rng := rand.New(rand.NewPCG(p.Seed, 0x6c616d626461))
	trees := make([]Tree, 0, p.Trees)
	feats = slices.Clone(feats)
	nUse := max(1, int(math.Round(p.FeatureFraction*float64(len(feats)))))
	for range p.Trees {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		clear(g)
		clear(h)
		for q, s := range samples {
			a, b := fl.start[q], fl.start[q+1]
			lambdas(s, scores[a:b], g[a:b], h[a:b], p.NDCGAt, p.Sigma)
		}
		rng.Shuffle(len(feats), func(i, j int) { feats[i], feats[j] = feats[j], feats[i] })
		use := slices.Clone(feats[:nUse])
		slices.Sort(use)
		t := growTree(fl, g, h, use, p)
		for r := range fl.rows {
			scores[r] += t.rowVal[r]
		}
		trees = append(trees, t.tree)
	}
	return trees, nil
}

// grown is a tree during training, with the value of every row's leaf.
type grown struct {
	tree   Tree
	rowVal []float64
}

func growTree(fl *flat, g, h []float64, feats []int, p Params) *grown {
	all := make([]int, fl.rows)
	for i := range all {
		all[i] = i
	}
	t := &grown{rowVal: make([]float64, fl.rows)}
	t.tree.Nodes = []Node{{Feature: -1}}
	root := &leaf{rows: all, node: 0, hist: buildHist(fl, g, h, feats, all)}
	findSplit(fl, g, h, feats, p, root)
	leaves := []*leaf{root}
	for len(leaves) < p.Leaves {
		best := -1
		for i, l := range leaves {
			if l.splittable && (best < 0 || l.gain > leaves[best].gain) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		l := leaves[best]
		var lr, rr []int
		col := fl.bins[l.feat]
		for _, r := range l.rows {
			if int(col[r]) <= l.bin {
				lr = append(lr, r)
			} else {
				rr = append(rr, r)
			}
		}
		li, ri := len(t.tree.Nodes), len(t.tree.Nodes)+1
		t.tree.Nodes = append(t.tree.Nodes, Node{Feature: -1}, Node{Feature: -1})
		t.tree.Nodes[l.node] = Node{Feature: l.feat, Threshold: fl.th[l.feat][l.bin], Left: li, Right: ri}
		a := &leaf{rows: lr, node: li}
		b := &leaf{rows: rr, node: ri}
		small, large := a, b
		if len(rr) < len(lr) {
			small, large = b, a
		}
		small.hist = buildHist(fl, g, h, feats, small.rows)
		large.hist = l.hist.minus(fl, small.hist, feats)
		l.hist = nil
		findSplit(fl, g, h, feats, p, a)
		findSplit(fl, g, h, feats, p, b)
		leaves[best] = a
		leaves = append(leaves, b)
	}
	for _, l := range leaves {
		var G, H float64
		for _, r := range l.rows {
			G += g[r]
			H += h[r]
		}
		v := -G / (H + p.L2) * p.LearningRate
		t.tree.Nodes[l.node].Value = v
		for _, r := range l.rows {
			t.rowVal[r] = v
		}
	}
	return t
}

// findSplit finds the best split of leaf l over feats from its histogram.
func findSplit(fl *flat, g, h []float64, feats []int, p Params, l *leaf) {
	l.splittable = false
	if len(l.rows) < 2*p.MinLeaf {
		return
	}
	var G, H float64
	for _, r := range l.rows {
		G += g[r]
		H += h[r]
	}
	parent := G * G / (H + p.L2)
	for _, f := range feats {
		nb := len(fl.th[f]) + 1
		if nb < 2 {
			continue
		}
		hg, hh, hc := l.hist.g[f], l.hist.h[f], l.hist.c[f]
		var gl, hl float64
		cl := 0
		for b := 0; b < nb-1; b++ {
			gl += hg[b]
			hl += hh[b]
			cl += hc[b]
			cr := len(l.rows) - cl
			if cl < p.MinLeaf {
				continue
			}
			if cr < p.MinLeaf {
				break
			}
			gr, hr := G-gl, H-hl
			gain := gl*gl/(hl+p.L2) + gr*gr/(hr+p.L2) - parent
			if gain > 1e-12 && (!l.splittable || gain > l.gain) {
				l.splittable, l.gain, l.feat, l.bin = true, gain, f, b
			}
		}
	}
}

// fitLinear fits w·z(x), z the standardisation of x, by gradient descent
// on the LambdaRank gradients.
func fitLinear(ctx context.Context, samples []Sample, nf int, feats []int, p Params) (*Linear, error) {
	lin := &Linear{Mean: make([]float64, nf), Scale: make([]float64, nf), Weights: make([]float64, nf)}
	n := 0
	for _, s := range samples {
		for _, x := range s.X {
			for f, v := range x {
				lin.Mean[f] += v
			}
			n++
		}
	}
	if n == 0 {
		return lin, nil
	}
	for f := range nf {
		lin.Mean[f] /= float64(n)
	}
	for _, s := range samples {
		for _, x := range s.X {
			for f, v := range x {
				d := v - lin.Mean[f]
				lin.Scale[f] += d * d
			}
		}
	}
	use := make([]bool, nf)
	for _, f := range feats {
		use[f] = true
	}
	for f := range nf {
		sd := math.Sqrt(lin.Scale[f] / float64(n))
		if sd > 0 && use[f] {
			lin.Scale[f] = 1 / sd
		} else {
			lin.Scale[f] = 0
		}
	}
	grad := make([]float64, nf)
	for range p.Epochs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		clear(grad)
		for _, s := range samples {
			sc := make([]float64, len(s.X))
			for i, x := range s.X {
				sc[i] = lin.score(x)
			}
			g := make([]float64, len(s.X))
			h := make([]float64, len(s.X))
			lambdas(s, sc, g, h, p.NDCGAt, p.Sigma)
			for i, x := range s.X {
				if g[i] == 0 {
					continue
				}
				for f, v := range x {
					grad[f] += g[i] * (v - lin.Mean[f]) * lin.Scale[f]
				}
			}
		}
		for f := range nf {
			lin.Weights[f] -= p.LearningRate * (grad[f]/float64(len(samples)) + p.L2*lin.Weights[f])
		}
	}
	return lin, nil
}
