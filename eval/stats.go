package eval

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// Defaults of StatOptions.
const (
	DefaultPermutations = 10000
	DefaultResamples    = 10000
	DefaultSeed         = 1
	DefaultLevel        = 0.95
	// MaxExact is the largest number of pairs ExactRandomizationTest
	// enumerates (2^MaxExact sign assignments).
	MaxExact = 24
)

// ErrNoPairs is returned when two results share no query to compare.
var ErrNoPairs = errors.New("no paired query")

// StatOptions configure the significance tests. The zero value means the
// defaults: 10,000 permutations, 10,000 bootstrap resamples, seed 1, 95%
// intervals. A fixed seed makes every number reproducible.
type StatOptions struct {
	Permutations int     // random sign flips of the randomisation test; 0 = DefaultPermutations
	Resamples    int     // bootstrap resamples; 0 = DefaultResamples
	Seed         uint64  // 0 = DefaultSeed
	Level        float64 // confidence level in (0, 1); 0 = DefaultLevel
}

func (o StatOptions) withDefaults() StatOptions {
	if o.Permutations <= 0 {
		o.Permutations = DefaultPermutations
	}
	if o.Resamples <= 0 {
		o.Resamples = DefaultResamples
	}
	if o.Seed == 0 {
		o.Seed = DefaultSeed
	}
	if o.Level <= 0 || o.Level >= 1 {
		o.Level = DefaultLevel
	}
	return o
}

// MethodText names the methods and settings of CompareResults, for reports.
func (o StatOptions) MethodText() string {
	o = o.withDefaults()
	return fmt.Sprintf("Paired over the queries both runs answered. p: two-sided paired randomisation test "+
		"(Fisher's sign-flip test on the per-query differences; statistic |mean difference|; "+
		"%s random sign assignments, seed %d; p = (hits + 1) / (%s + 1)). "+
		"CI: %g%% percentile bootstrap interval of the mean difference (%s resamples of the queries, seed %d). "+
		"Each metric is tested on its own, without correction for multiple comparisons.",
		thousands(o.Permutations), o.Seed, thousands(o.Permutations), 100*o.Level, thousands(o.Resamples), o.Seed)
}

// tieEps absorbs floating-point noise when comparing permuted statistics
// with the observed one: sums of the same differences in another order.
const tieEps = 1e-9

// RandomizationTest returns the two-sided p-value of the paired
// randomisation (sign-flip) test of the per-query differences d against
// "no difference": the share of random sign assignments whose |Σ ±dᵢ| is at
// least the observed |Σ dᵢ|, estimated with permutations draws from a PCG
// generator seeded with seed, as (hits + 1) / (permutations + 1) so it is
// never 0. No difference at all (every dᵢ = 0) gives 1.
func RandomizationTest(d []float64, permutations int, seed uint64) float64 {
	if permutations <= 0 {
		permutations = DefaultPermutations
	}
	obs := math.Abs(sum(d))
	if allZero(d) {
		return 1
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	hits := 0
	for range permutations {
		s := 0.0
		var word uint64
		for i, x := range d {
			if i%64 == 0 {
				word = rng.Uint64()
			}
			if word&1 == 1 {
				s -= x
			} else {
				s += x
			}
			word >>= 1
		}
		if math.Abs(s) >= obs-tieEps {
			hits++
		}
	}
	return float64(hits+1) / float64(permutations+1)
}

// ExactRandomizationTest returns the exact two-sided p-value of the
// paired randomisation test by enumerating all 2^n sign assignments of
// the n differences: the share with |Σ ±dᵢ| ≥ |Σ dᵢ|. n must not exceed
// MaxExact.
func ExactRandomizationTest(d []float64) (float64, error) {
	n := len(d)
	if n > MaxExact {
		return 0, fmt.Errorf("exact randomisation test: %d pairs, at most %d", n, MaxExact)
	}
	if n == 0 || allZero(d) {
		return 1, nil
	}
	obs := math.Abs(sum(d))
	total := uint64(1) << n
	hits := uint64(0)
	for mask := uint64(0); mask < total; mask++ {
		s := 0.0
		for i, x := range d {
			if mask&(1<<i) != 0 {
				s -= x
			} else {
				s += x
			}
		}
		if math.Abs(s) >= obs-tieEps {
			hits++
		}
	}
	return float64(hits) / float64(total), nil
}

// BootstrapCI returns the percentile bootstrap confidence interval at
// level (e.g. 0.95) of the mean of d: the mean is recomputed on resamples
// draws of len(d) values with replacement (PCG seeded with seed), and the
// interval is the (1−level)/2 and (1+level)/2 quantiles of those means
// (nearest rank). It returns (0, 0) for no value.
func BootstrapCI(d []float64, resamples int, level float64, seed uint64) (lo, hi float64) {
	n := len(d)
	if n == 0 {
		return 0, 0
	}
	if resamples <= 0 {
		resamples = DefaultResamples
	}
	if level <= 0 || level >= 1 {
		level = DefaultLevel
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d))
	means := make([]float64, resamples)
	for r := range means {
		s := 0.0
		for range n {
			s += d[rng.IntN(n)]
		}
		means[r] = s / float64(n)
	}
	sort.Float64s(means)
	q := func(p float64) float64 {
		i := int(math.Ceil(p*float64(resamples))) - 1
		return means[max(0, min(i, resamples-1))]
	}
	return q((1 - level) / 2), q((1 + level) / 2)
}

func sum(d []float64) float64 {
	s := 0.0
	for _, x := range d {
		s += x
	}
	return s
}

func allZero(d []float64) bool {
	for _, x := range d {
		if math.Abs(x) > tieEps {
			return false
		}
	}
	return true
}

// Comparison is the paired comparison of one metric between two results
// of the same topic set (A, the baseline, and B).
type Comparison struct {
	Set           string // topic set (bench name as in reports)
	A, B          string // labels of the two sides, e.g. "textbook/bm25"
	Metric        string
	N             int     // paired queries
	MeanA, MeanB  float64 // means over the paired queries
	Diff          float64 // MeanB − MeanA
	CILow, CIHigh float64 // bootstrap interval of Diff
	P             float64 // two-sided randomisation-test p-value
	Wins, Losses  int     // queries where B is above / below A
	Ties          int
	OnlyA, OnlyB  int // queries of one side only (not paired)
}

// CompareResults compares a (the baseline) and b query by query on each
// metric (all of MetricKeys when metrics is empty): means, difference
// (b − a), bootstrap interval and randomisation-test p-value. Queries are
// paired by ID; queries of only one side are counted and left out. It
// returns ErrNoPairs when no query is shared.
func CompareResults(a, b *Result, labelA, labelB string, metrics []string, opts StatOptions) ([]Comparison, error) {
	opts = opts.withDefaults()
	if len(metrics) == 0 {
		metrics = MetricKeys()
	}
	byID := make(map[string]int, len(b.PerQuery))
	for i, q := range b.PerQuery {
		byID[q.ID] = i
	}
	var pa, pb []Metrics
	paired := map[string]bool{}
	onlyA := 0
	for _, q := range a.PerQuery {
		j, ok := byID[q.ID]
		if !ok {
			onlyA++
			continue
		}
		paired[q.ID] = true
		pa = append(pa, q.Metrics)
		pb = append(pb, b.PerQuery[j].Metrics)
	}
	if len(pa) == 0 {
		return nil, fmt.Errorf("compare %s with %s: %w", labelA, labelB, ErrNoPairs)
	}
	onlyB := len(b.PerQuery) - len(paired)
	out := make([]Comparison, 0, len(metrics))
	for _, m := range metrics {
		c := Comparison{Set: benchName(a), A: labelA, B: labelB, Metric: m, N: len(pa), OnlyA: onlyA, OnlyB: onlyB}
		d := make([]float64, len(pa))
		for i := range pa {
			x, y := pa[i][m], pb[i][m]
			c.MeanA += x
			c.MeanB += y
			d[i] = y - x
			switch {
			case d[i] > tieEps:
				c.Wins++
			case d[i] < -tieEps:
				c.Losses++
			default:
				c.Ties++
			}
		}
		n := float64(len(pa))
		c.MeanA /= n
		c.MeanB /= n
		c.Diff = sum(d) / n
		// The same seed for every metric: each metric's numbers do not
		// depend on which other metrics are compared.
		c.CILow, c.CIHigh = BootstrapCI(d, opts.Resamples, opts.Level, opts.Seed)
		c.P = RandomizationTest(d, opts.Permutations, opts.Seed)
		out = append(out, c)
	}
	return out, nil
}

// Differences returns b − a of one metric per query paired by ID, in a's
// order, with the query ids: the data of a win/loss chart.
func Differences(a, b *Result, metric string) (ids []string, d []float64) {
	byID := make(map[string]int, len(b.PerQuery))
	for i, q := range b.PerQuery {
		byID[q.ID] = i
	}
	for _, q := range a.PerQuery {
		if j, ok := byID[q.ID]; ok {
			ids = append(ids, q.ID)
			d = append(d, b.PerQuery[j].Metrics[metric]-q.Metrics[metric])
		}
	}
	return ids, d
}

// thousands formats n with "," between groups of three digits.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
