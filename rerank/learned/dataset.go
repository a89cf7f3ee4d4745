package learned

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/citefind/citefind/fuse"
	"github.com/citefind/citefind/internal/atomicfile"
	"github.com/citefind/citefind/rerank"
)

// DatasetVersion is the version of the candidate dataset file format.
const DatasetVersion = 1

// ErrInvalidDataset means a dataset file could not be used.
var ErrInvalidDataset = errors.New("invalid learned reranker dataset")

// Dataset is a benchmark's queries with their fused candidates and
// judgements: what training and cross-validation need, so that they
// never re-run retrieval. It is stored as gzipped JSON (Save,
// LoadDataset).
type Dataset struct {
	Version    int       `json:"version"`
	Bench      string    `json:"bench"`
	Depth      int       `json:"depth"`      // candidates asked per query
	Retrievers []string  `json:"retrievers"` // retrievers fused into the candidates
	Settings   string    `json:"settings"`   // retrieval settings, free text (cache key)
	Created    time.Time `json:"created"`
	// Papers holds the metadata of every candidate, by paper ID.
	Papers  map[string]Paper `json:"papers"`
	Queries []Query          `json:"queries"`
}

// Paper is the candidate metadata features are computed from.
type Paper struct {
	Title    string   `json:"title"`
	Abstract string   `json:"abstract,omitempty"`
	Keywords []string `json:"keywords,omitempty"`
	Authors  []string `json:"authors,omitempty"`
	Year     int      `json:"year,omitempty"`
	Venue    string   `json:"venue,omitempty"`
}

// Query is one judged query and its candidates, best fused first.
type Query struct {
	Set   string `json:"set"` // topic set, e.g. "contexts"
	ID    string `json:"id"`
	Group string `json:"group"` // cross-validation group (ACM-CR: the citing paper)
	// Collection is the dataset a query came from in a merged dataset
	// (Merge): its Bench; "" otherwise.
	Collection string `json:"collection,omitempty"`
	Text       string `json:"text"` // as given (citation markers not cleaned)
	// Relevant are the paper IDs judged relevant that are in the
	// collection; Missing counts judged items that are not.
	Relevant []string `json:"relevant"`
	Missing  int      `json:"missing,omitempty"`
	Cands    []Cand   `json:"cands"`
}

// Cand is one fused candidate of a query.
type Cand struct {
	ID      string                 `json:"id"`
	Rank    int                    `json:"rank"`
	Score   float64                `json:"score"`
	Sources map[string]fuse.Source `json:"sources"`
}

// Add appends a query with its candidates, keeping their papers'
// metadata in d.Papers.
func (d *Dataset) Add(q Query, cands []rerank.Candidate) {
	if d.Papers == nil {
		d.Papers = map[string]Paper{}
	}
	q.Cands = make([]Cand, len(cands))
	for i, c := range cands {
		q.Cands[i] = Cand{ID: c.ID, Rank: c.Rank, Score: c.Score, Sources: c.Sources}
		if _, ok := d.Papers[c.ID]; !ok {
			d.Papers[c.ID] = Paper{Title: c.Title, Abstract: c.Abstract, Keywords: c.Keywords,
				Authors: c.Authors, Year: c.Year, Venue: c.Venue}
		}
	}
	d.Queries = append(d.Queries, q)
}

// Candidates rebuilds the rerank candidates of query i.
func (d *Dataset) Candidates(i int) []rerank.Candidate {
	q := d.Queries[i]
	out := make([]rerank.Candidate, len(q.Cands))
	for j, c := range q.Cands {
		p := d.Papers[c.ID]
		out[j] = rerank.Candidate{ID: c.ID, Title: p.Title, Abstract: p.Abstract, Keywords: p.Keywords,
			Authors: p.Authors, Year: p.Year, Venue: p.Venue, Rank: c.Rank, Score: c.Score, Sources: c.Sources}
	}
	return out
}

// Save writes d as gzipped JSON to path (through a temporary file).
func (d *Dataset) Save(path string) error {
	err := atomicfile.Write(path, 0o644, func(f *os.File) error {
		zw := gzip.NewWriter(f)
		return errors.Join(json.NewEncoder(zw).Encode(d), zw.Close())
	})
	if err != nil {
		return fmt.Errorf("write dataset: %w", err)
	}
	return nil
}

// LoadDataset reads a dataset written by Save.
func LoadDataset(path string) (*Dataset, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("dataset %s: %w: %v", path, ErrInvalidDataset, err)
	}
	var d Dataset
	if err := json.NewDecoder(zr).Decode(&d); err != nil {
		return nil, fmt.Errorf("dataset %s: %w: %v", path, ErrInvalidDataset, err)
	}
	if d.Version != DatasetVersion {
		return nil, fmt.Errorf("dataset %s: %w: version %d, want %d", path, ErrInvalidDataset, d.Version, DatasetVersion)
	}
	for _, q := range d.Queries {
		for _, c := range q.Cands {
			if _, ok := d.Papers[c.ID]; !ok {
				return nil, fmt.Errorf("dataset %s: %w: query %s: candidate %s has no paper", path, ErrInvalidDataset, q.ID, c.ID)
			}
		}
	}
	return &d, nil
}

// Samples computes the feature vectors and labels of every query of d
// for the given retrievers (analysed paper texts are shared between
// queries).
func (d *Dataset) Samples(ctx context.Context, retrievers []string) ([]Sample, error) {
	x := &extractor{retrievers: retrievers, docs: map[string]*docText{}}
	out := make([]Sample, len(d.Queries))
	for i, q := range d.Queries {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rel := set(q.Relevant)
		out[i].X = x.features(q.Text, d.Candidates(i))
		out[i].Labels = make([]float64, len(q.Cands))
		for j, c := range q.Cands {
			if rel[c.ID] {
				out[i].Labels[j] = 1
			}
		}
	}
	return out, nil
}

// Merge returns one dataset holding the queries of parts, for training
// on several collections at once. The parts must have been fused from
// the same retrievers (in any order) and be as deep. Each query keeps
// its part's Bench as Collection; its set becomes "BENCH:SET", its group
// "BENCH/GROUP" (the query id when it has no group), and paper IDs are
// prefixed with the part's index, so that papers of different
// collections never share an ID.
func Merge(parts ...*Dataset) (*Dataset, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("merge: %w: no dataset", ErrInvalidDataset)
	}
	first := parts[0]
	out := &Dataset{Version: DatasetVersion, Depth: first.Depth, Retrievers: slices.Clone(first.Retrievers),
		Papers: map[string]Paper{}}
	var benches, settings []string
	want := slices.Sorted(slices.Values(first.Retrievers))
	for i, d := range parts {
		if got := slices.Sorted(slices.Values(d.Retrievers)); !slices.Equal(got, want) {
			return nil, fmt.Errorf("merge: %w: %s was fused from %v, %s from %v", ErrInvalidDataset, first.Bench, first.Retrievers, d.Bench, d.Retrievers)
		}
		if d.Depth != first.Depth {
			return nil, fmt.Errorf("merge: %w: %s has %d candidates a query, %s %d", ErrInvalidDataset, first.Bench, first.Depth, d.Bench, d.Depth)
		}
		prefix := fmt.Sprintf("%d\x1f", i)
		for id, p := range d.Papers {
			out.Papers[prefix+id] = p
		}
		for _, q := range d.Queries {
			q.Collection = d.Bench
			q.Set = d.Bench + ":" + q.Set
			g := q.Group
			if g == "" {
				g = q.ID
			}
			q.Group = d.Bench + "/" + g
			q.Relevant = slices.Clone(q.Relevant)
			for k := range q.Relevant {
				q.Relevant[k] = prefix + q.Relevant[k]
			}
			cands := make([]Cand, len(q.Cands))
			for k, c := range q.Cands {
				c.ID = prefix + c.ID
				cands[k] = c
			}
			q.Cands = cands
			out.Queries = append(out.Queries, q)
		}
		benches = append(benches, d.Bench)
		settings = append(settings, d.Settings)
		if d.Created.After(out.Created) {
			out.Created = d.Created
		}
	}
	out.Bench = strings.Join(benches, "+")
	out.Settings = strings.Join(settings, " | ")
	return out, nil
}

// Balance sets the weight of every sample so that each collection
// (Query.Collection, or Bench when not merged) weighs the same in the
// loss whatever its number of queries: a query of a collection of n
// queries weighs N / (C·n), N queries and C collections in all.
func Balance(d *Dataset, samples []Sample) {
	count := map[string]int{}
	for _, q := range d.Queries {
		count[q.Collection]++
	}
	for i, q := range d.Queries {
		samples[i].Weight = float64(len(d.Queries)) / float64(len(count)*count[q.Collection])
	}
}

// Folds assigns each group to one of n folds: the distinct groups, in
// sorted order, are shuffled with seed and dealt round-robin. Queries
// with the same group always share a fold; the result maps group → fold
// in [0, n).
func Folds(groups []string, n int, seed uint64) map[string]int {
	u := slices.Clone(groups)
	slices.Sort(u)
	u = slices.Compact(u)
	rng := rand.New(rand.NewPCG(seed, 0x666f6c6473))
	rng.Shuffle(len(u), func(i, j int) { u[i], u[j] = u[j], u[i] })
	out := make(map[string]int, len(u))
	for i, g := range u {
		out[g] = i % n
	}
	return out
}

// Train fits a model on the queries of d selected by use (nil: all),
// with samples from d.Samples(ctx, d.Retrievers).
func Train(ctx context.Context, d *Dataset, samples []Sample, use func(i int) bool, p Params, prov Provenance) (*Model, error) {
	var train []Sample
	prov.Queries, prov.Candidates, prov.Relevant = 0, 0, 0
	for i, s := range samples {
		if use != nil && !use(i) {
			continue
		}
		train = append(train, s)
		prov.Queries++
		prov.Candidates += len(s.Labels)
		for _, l := range s.Labels {
			if l > 0 {
				prov.Relevant++
			}
		}
	}
	if len(train) == 0 {
		return nil, fmt.Errorf("train: no query to train on")
	}
	names := FeatureNames(d.Retrievers)
	m, err := fit(ctx, train, names, p, nil)
	if err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	m.Format, m.Version, m.FeatureSet = FormatName, FormatVersion, FeatureSet
	m.Retrievers, m.Features = slices.Clone(d.Retrievers), names
	if prov.Bench == "" {
		prov.Bench = d.Bench
	}
	if prov.Depth == 0 {
		prov.Depth = d.Depth
	}
	if prov.Settings == "" {
		prov.Settings = d.Settings
	}
	m.Training = prov
	return m, nil
}

// Adapt continues the boosting of base on the queries of d (self-training
// on a library from a model trained elsewhere): p.Trees new trees are
// fitted to the LambdaRank gradients at base's scores, and the model is
// base's trees followed by them, so that a weak or misleading training
// signal moves base's ranking only as far as those trees take it. base
// must be a LambdaMART model whose retrievers are d's.
func Adapt(ctx context.Context, base *Model, d *Dataset, samples []Sample, p Params, prov Provenance) (*Model, error) {
	if base.Params.Kind != KindLambdaMART || len(base.Trees) == 0 {
		return nil, fmt.Errorf("adapt: %w: the base model is not a LambdaMART model", ErrInvalidModel)
	}
	if !slices.Equal(base.Retrievers, d.Retrievers) {
		return nil, fmt.Errorf("adapt: %w: the base model was trained on candidates of %s, these come from %s", ErrRetrievers,
			strings.Join(base.Retrievers, ","), strings.Join(d.Retrievers, ","))
	}
	p.Kind = KindLambdaMART
	names := FeatureNames(d.Retrievers)
	var train []Sample
	prov.Queries, prov.Candidates, prov.Relevant = len(samples), 0, 0
	for _, s := range samples {
		train = append(train, s)
		prov.Candidates += len(s.Labels)
		for _, l := range s.Labels {
			if l > 0 {
				prov.Relevant++
			}
		}
	}
	m, err := fit(ctx, train, names, p, base)
	if err != nil {
		return nil, fmt.Errorf("adapt: %w", err)
	}
	m.Format, m.Version, m.FeatureSet = FormatName, FormatVersion, FeatureSet
	m.Retrievers, m.Features = slices.Clone(d.Retrievers), names
	m.Trees = append(slices.Clone(base.Trees), m.Trees...)
	if prov.Base == "" {
		prov.Base = fmt.Sprintf("%s (%d trees, %d queries)", base.Training.Bench, len(base.Trees), base.Training.Queries)
	}
	if prov.Depth == 0 {
		prov.Depth = d.Depth
	}
	if prov.Settings == "" {
		prov.Settings = d.Settings
	}
	m.Training = prov
	return m, nil
}

// CV is the outcome of cross-validation.
type CV struct {
	Folds  int
	Fold   map[string]int // group → fold
	Models []*Model       // Models[f] was trained without fold f
	// Orders[i] is query i's candidates reranked by the model that did
	// not see its group: indexes into Queries[i].Cands, best first.
	Orders [][]int
}

// CrossValidate trains one model per fold on the queries of the other
// folds (folds by Query.Group, see Folds) and reranks each query with the
// model that never saw its group. progress, when set, is called after
// each fold.
func CrossValidate(ctx context.Context, d *Dataset, samples []Sample, folds int, p Params, seed uint64, progress func(done, total int)) (*CV, error) {
	if folds < 2 {
		return nil, fmt.Errorf("cross-validation needs at least 2 folds, got %d", folds)
	}
	groups := make([]string, len(d.Queries))
	for i, q := range d.Queries {
		groups[i] = q.Group
		if q.Group == "" {
			return nil, fmt.Errorf("cross-validation: query %s:%s has no group (citing paper)", q.Set, q.ID)
		}
	}
	cv := &CV{Folds: folds, Fold: Folds(groups, folds, seed), Orders: make([][]int, len(d.Queries))}
	if len(cv.Fold) < folds {
		return nil, fmt.Errorf("cross-validation: %d groups for %d folds", len(cv.Fold), folds)
	}
	for f := range folds {
		m, err := Train(ctx, d, samples, func(i int) bool { return cv.Fold[groups[i]] != f }, p,
			Provenance{Command: fmt.Sprintf("cross-validation fold %d of %d", f+1, folds)})
		if err != nil {
			return nil, fmt.Errorf("fold %d: %w", f+1, err)
		}
		cv.Models = append(cv.Models, m)
		for i, s := range samples {
			if cv.Fold[groups[i]] != f {
				continue
			}
			sc := make([]float64, len(s.X))
			for j, x := range s.X {
				sc[j] = m.Score(x)
			}
			cv.Orders[i] = Order(sc)
		}
		if progress != nil {
			progress(f+1, folds)
		}
	}
	return cv, nil
}
