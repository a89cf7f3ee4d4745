package eval

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/citefind/citefind/rerank/learned"
)

// Collection is one collection of a multi-collection training run: the
// candidate datasets its training queries come from, and those its
// figures are measured on (the same ones when it has no split of its
// own for testing, as ACM-CR).
type Collection struct {
	Name  string
	Train []*learned.Dataset
	Test  []*learned.Dataset
}

// SetScore is the fused and the reranked figures of one topic set of a
// candidate dataset, with the per-query differences of nDCG@10 and
// recall@10 (reranked − fused) and their 95% bootstrap intervals.
type SetScore struct {
	Bench, Set          string
	Queries             int
	Fused, Reranked     Metrics
	NDCGDelta, R10Delta []float64
	NDCGLo, NDCGHi      float64
	R10Lo, R10Hi        float64
}

// Gain returns the mean difference reranked − fused of metric.
func (s SetScore) Gain(metric string) float64 { return s.Reranked[metric] - s.Fused[metric] }

// ScoreOrders scores the queries of ds as ranked by orders (orders[i]
// indexes ds.Queries[i].Cands, best first; nil rows or a nil orders keep
// the fused order), one SetScore per topic set in first-seen order.
// Judged papers missing from the collection count in the recall
// denominators, as in Run; the figures of the fused order are those of
// the fused stage of citefind eval on the same candidates.
func ScoreOrders(ds *learned.Dataset, orders [][]int) []SetScore {
	var out []SetScore
	idx := map[string]int{}
	fused := map[string][]Metrics{}
	reranked := map[string][]Metrics{}
	for i, q := range ds.Queries {
		if _, ok := idx[q.Set]; !ok {
			idx[q.Set] = len(out)
			out = append(out, SetScore{Bench: ds.Bench, Set: q.Set})
		}
		rel := map[string]bool{}
		for _, p := range q.Relevant {
			rel[p] = true
		}
		for m := range q.Missing {
			rel[fmt.Sprintf("\x00missing%d", m)] = true
		}
		ids := make([]string, len(q.Cands))
		rids := make([]string, len(q.Cands))
		for j := range q.Cands {
			ids[j] = q.Cands[j].ID
			k := j
			if orders != nil && orders[i] != nil {
				k = orders[i][j]
			}
			rids[j] = q.Cands[k].ID
		}
		f, r := Score(ids, rel), Score(rids, rel)
		fused[q.Set] = append(fused[q.Set], f)
		reranked[q.Set] = append(reranked[q.Set], r)
		s := &out[idx[q.Set]]
		s.NDCGDelta = append(s.NDCGDelta, r[NDCG10]-f[NDCG10])
		s.R10Delta = append(s.R10Delta, r[Recall10]-f[Recall10])
	}
	for i := range out {
		s := &out[i]
		s.Queries = len(fused[s.Set])
		s.Fused, s.Reranked = Mean(fused[s.Set]), Mean(reranked[s.Set])
		s.NDCGLo, s.NDCGHi = BootstrapCI(s.NDCGDelta, DefaultResamples, DefaultLevel, DefaultSeed)
		s.R10Lo, s.R10Hi = BootstrapCI(s.R10Delta, DefaultResamples, DefaultLevel, DefaultSeed)
	}
	return out
}

// ModelOrders reranks every query of ds with m (from precomputed
// samples of ds for m's retrievers): indexes into each query's
// candidates, best first.
func ModelOrders(m *learned.Model, samples []learned.Sample) [][]int {
	out := make([][]int, len(samples))
	for i, s := range samples {
		sc := make([]float64, len(s.X))
		for j, x := range s.X {
			sc[j] = m.Score(x)
		}
		out[i] = learned.Order(sc)
	}
	return out
}

// TransferOptions configure LeaveOneCollectionOut and TrainCollections.
type TransferOptions struct {
	// Params are the training hyper-parameters (zero fields: defaults).
	Params learned.Params
	// Balance weighs every collection the same in the loss (see
	// learned.Balance); false weighs every query the same.
	Balance bool
	// Log receives a line per model trained; nil: none.
	Log io.Writer
	// Cache keeps the feature vectors of the datasets between calls
	// (experiments with several options); nil: a new one per call.
	Cache *SampleCache
}

// HeldOut is what leave-one-collection-out measured for one collection:
// the model trained on the others, and its figures on this one's test
// datasets.
type HeldOut struct {
	Collection string
	Model      *learned.Model
	Scores     []SetScore
}

// SampleCache keeps the feature vectors of candidate datasets (by
// pointer), so that each is featurised once.
type SampleCache struct {
	samples map[*learned.Dataset][]learned.Sample
}

// NewSampleCache returns an empty cache.
func NewSampleCache() *SampleCache {
	return &SampleCache{samples: map[*learned.Dataset][]learned.Sample{}}
}

// Samples returns the feature vectors of ds for its own retrievers.
func (f *SampleCache) Samples(ctx context.Context, ds *learned.Dataset) ([]learned.Sample, error) {
	if s, ok := f.samples[ds]; ok {
		return s, nil
	}
	s, err := ds.Samples(ctx, ds.Retrievers)
	if err != nil {
		return nil, err
	}
	f.samples[ds] = s
	return s, nil
}

func (o TransferOptions) cache() *SampleCache {
	if o.Cache != nil {
		return o.Cache
	}
	return NewSampleCache()
}

// TrainCollections trains one model on the training datasets of cols
// (merged with learned.Merge), with provenance prov.
func TrainCollections(ctx context.Context, cols []Collection, o TransferOptions, prov learned.Provenance) (*learned.Model, error) {
	return trainOn(ctx, o.cache(), cols, o, prov)
}

func trainOn(ctx context.Context, f *SampleCache, cols []Collection, o TransferOptions, prov learned.Provenance) (*learned.Model, error) {
	var parts []*learned.Dataset
	var samples []learned.Sample
	for _, c := range cols {
		for _, ds := range c.Train {
			if len(parts) > 0 && !slices.Equal(ds.Retrievers, parts[0].Retrievers) {
				return nil, fmt.Errorf("%w: %s was fused from %v, %s from %v: train on candidates of the same retrievers", ErrBenchUsage,
					parts[0].Bench, parts[0].Retrievers, ds.Bench, ds.Retrievers)
			}
			s, err := f.Samples(ctx, ds)
			if err != nil {
				return nil, err
			}
			parts = append(parts, ds)
			samples = append(samples, s...)
		}
	}
	if len(parts) == 0 {
		return nil, fmt.Errorf("%w: no training dataset", ErrBenchUsage)
	}
	merged, err := learned.Merge(parts...)
	if err != nil {
		return nil, err
	}
	// Merge keeps the queries in order, so the samples line up; their
	// weights are set on a copy (the cache is shared between folds).
	samples = slices.Clone(samples)
	for i := range samples {
		samples[i].Weight = 0
	}
	if o.Balance {
		learned.Balance(merged, samples)
	}
	start := time.Now()
	m, err := learned.Train(ctx, merged, samples, nil, o.Params, prov)
	if err != nil {
		return nil, err
	}
	if o.Log != nil {
		fmt.Fprintf(o.Log, "trained on %s: %d queries (%d relevant of %d candidates) in %s\n", merged.Bench,
			m.Training.Queries, m.Training.Relevant, m.Training.Candidates, time.Since(start).Round(time.Second))
	}
	return m, nil
}

// ScoreModel reranks the queries of ds with m and scores the fused and
// reranked orders per topic set.
func ScoreModel(ctx context.Context, m *learned.Model, ds *learned.Dataset) ([]SetScore, error) {
	s, err := ds.Samples(ctx, m.Retrievers)
	if err != nil {
		return nil, err
	}
	return ScoreOrders(ds, ModelOrders(m, s)), nil
}

// LeaveOneCollectionOut trains, for each collection, a model on the
// training datasets of the others and scores it on the held-out
// collection's test datasets: how the recipe does on a collection it
// never saw. Every dataset is featurised once.
func LeaveOneCollectionOut(ctx context.Context, cols []Collection, o TransferOptions) ([]HeldOut, error) {
	if len(cols) < 2 {
		return nil, fmt.Errorf("%w: leave-one-collection-out needs at least 2 collections, got %d", ErrBenchUsage, len(cols))
	}
	f := o.cache()
	var out []HeldOut
	for i, held := range cols {
		var others []Collection
		var names []string
		for j, c := range cols {
			if j != i {
				others = append(others, c)
				names = append(names, c.Name)
			}
		}
		m, err := trainOn(ctx, f, others, o, learned.Provenance{Bench: strings.Join(names, "+"),
			Command: "leave-one-collection-out without " + held.Name})
		if err != nil {
			return nil, fmt.Errorf("without %s: %w", held.Name, err)
		}
		h := HeldOut{Collection: held.Name, Model: m}
		for _, ds := range held.Test {
			s, err := f.Samples(ctx, ds)
			if err != nil {
				return nil, err
			}
			h.Scores = append(h.Scores, ScoreOrders(ds, ModelOrders(m, s))...)
		}
		out = append(out, h)
	}
	return out, nil
}

// WriteTransferTable writes one Markdown row per topic set of scores:
// queries, fused and reranked nDCG@10 and recall@10, and the gains with
// their 95% bootstrap intervals. label names the model in the first
// column.
func WriteTransferTable(w io.Writer, rows []TransferRow) error {
	var b strings.Builder
	b.WriteString("| model | collection:set | queries | fused nDCG@10 | reranked nDCG@10 | Δ nDCG@10 [95% CI] | fused R@10 | reranked R@10 | Δ R@10 [95% CI] |\n")
	b.WriteString("|---|---|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, r := range rows {
		for _, s := range r.Scores {
			fmt.Fprintf(&b, "| %s | %s:%s | %d | %.4f | %.4f | %+.4f [%+.3f, %+.3f] | %.4f | %.4f | %+.4f [%+.3f, %+.3f] |\n",
				r.Label, s.Bench, s.Set, s.Queries, s.Fused[NDCG10], s.Reranked[NDCG10], s.Gain(NDCG10), s.NDCGLo, s.NDCGHi,
				s.Fused[Recall10], s.Reranked[Recall10], s.Gain(Recall10), s.R10Lo, s.R10Hi)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// TransferRow is a model's scores on some topic sets, for
// WriteTransferTable.
type TransferRow struct {
	Label  string
	Scores []SetScore
}

// ExcludeSplit drops from b (a BEIR benchmark of the collection in the
// folder data) the queries judged in the collection's split named split,
// e.g. ScisummNet's keep_for_gold, so that a training sample of another
// split holds none of the queries a model is measured on. It returns how
// many queries were dropped.
func ExcludeSplit(b *Bench, data, split string) (int, error) {
	if !b.beir {
		return 0, fmt.Errorf("%w: excluding a split needs a --bench beir benchmark, not %s", ErrBenchUsage, b.Name)
	}
	x, err := LoadBEIR(data, BEIROptions{Split: split})
	if err != nil {
		return 0, fmt.Errorf("exclude split %s: %w", split, err)
	}
	drop := map[string]bool{}
	for _, q := range x.Set.Queries {
		drop[q.ID] = true
	}
	n := 0
	for i := range b.Sets {
		kept := b.Sets[i].Queries[:0:0]
		for _, q := range b.Sets[i].Queries {
			if drop[q.ID] {
				n++
				continue
			}
			kept = append(kept, q)
		}
		b.Sets[i].Queries = kept
		b.Sets[i].Name += "-" + split
	}
	return n, nil
}

// CrossValidateWithin measures the recipe on a collection it trains on
// (cols[held]) as the shipped model, trained on every collection, would
// do on queries it has not seen: the queries of held's test datasets that
// are also its training datasets (ACM-CR, which has no test split of its
// own) are dealt into folds by group (learned.Folds: the citing paper; a
// query without one is a group of its own); for each fold a model is
// trained on the other collections and on held's queries of the other
// folds, and reranks the fold. Test datasets that held does
// not train on (a split of their own) are skipped: any model of the
// recipe is already held out from them.
func CrossValidateWithin(ctx context.Context, cols []Collection, held int, folds int, seed uint64, o TransferOptions) ([]SetScore, error) {
	if folds < 2 {
		return nil, fmt.Errorf("%w: cross-validation needs at least 2 folds, got %d", ErrBenchUsage, folds)
	}
	if held < 0 || held >= len(cols) {
		return nil, fmt.Errorf("%w: no collection %d of %d", ErrBenchUsage, held, len(cols))
	}
	f := o.cache()
	target := &cols[held]
	var others []Collection
	for i := range cols {
		if i != held {
			others = append(others, cols[i])
		}
	}
	var out []SetScore
	for _, ds := range target.Test {
		if !slices.Contains(target.Train, ds) {
			continue
		}
		groupOf := func(q learned.Query) string {
			if q.Group == "" {
				return "\x00" + q.Set + ":" + q.ID // no citing paper: a group of its own
			}
			return q.Group
		}
		groups := make([]string, len(ds.Queries))
		for i, q := range ds.Queries {
			groups[i] = groupOf(q)
		}
		fold := learned.Folds(groups, folds, seed)
		if len(fold) < folds {
			return nil, fmt.Errorf("%w: %s: %d groups for %d folds", ErrBenchUsage, ds.Bench, len(fold), folds)
		}
		all, err := f.Samples(ctx, ds)
		if err != nil {
			return nil, err
		}
		orders := make([][]int, len(ds.Queries))
		for k := range folds {
			// held's training datasets without fold k's groups (ds itself
			// and any other training dataset of held sharing them)
			var train []*learned.Dataset
			for _, td := range target.Train {
				tall, err := f.Samples(ctx, td)
				if err != nil {
					return nil, err
				}
				sub := *td
				sub.Queries = nil
				var ss []learned.Sample
				for i, q := range td.Queries {
					if fk, ok := fold[groupOf(q)]; ok && fk == k {
						continue
					}
					sub.Queries = append(sub.Queries, q)
					ss = append(ss, tall[i])
				}
				f.samples[&sub] = ss
				train = append(train, &sub)
			}
			cs := append(slices.Clone(others), Collection{Name: target.Name, Train: train})
			m, err := trainOn(ctx, f, cs, o, learned.Provenance{Bench: "all",
				Command: fmt.Sprintf("cross-validation within %s, fold %d of %d", target.Name, k+1, folds)})
			if err != nil {
				return nil, fmt.Errorf("%s fold %d: %w", target.Name, k+1, err)
			}
			for i, s := range all {
				if fold[groups[i]] != k {
					continue
				}
				sc := make([]float64, len(s.X))
				for j, x := range s.X {
					sc[j] = m.Score(x)
				}
				orders[i] = learned.Order(sc)
			}
			for _, sub := range train {
				delete(f.samples, sub)
			}
		}
		out = append(out, ScoreOrders(ds, orders)...)
	}
	return out, nil
}
