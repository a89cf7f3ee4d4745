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
	Text  string `json:"text"`  // as given (citation markers not cleaned)
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
	m, err := fit(ctx, train, len(names), p)
	if err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	m.Format, m.Version = FormatName, FormatVersion
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
