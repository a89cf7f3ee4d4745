package learned

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/citefind/citefind/internal/atomicfile"
	"github.com/citefind/citefind/rerank"
)

// Model file identification.
const (
	// FormatName is the "format" of every model file.
	FormatName = "citefind-learned-reranker"
	// FormatVersion is the model file version this package reads and
	// writes: 2 since the feature set "transfer-2" (FeatureSet); version
	// 1 files hold feature set "v1".
	FormatVersion = 2
)

// ErrInvalidModel means a model file could not be used; the error says
// which file and why.
var ErrInvalidModel = errors.New("invalid learned reranker model")

// ErrFeatureSet means a model was trained for another feature set than
// the one this citefind computes (it also wraps ErrInvalidModel), and
// ErrRetrievers that candidates come from other retrievers than the
// model was trained with.
var (
	ErrFeatureSet = errors.New("learned reranker model of another feature set")
	ErrRetrievers = errors.New("learned reranker model of other retrievers")
)

// Node is one node of a regression tree. A node with Feature < 0 is a
// leaf worth Value; otherwise a vector x goes Left when
// x[Feature] <= Threshold, else Right (indexes into Tree.Nodes).
type Node struct {
	Feature   int     `json:"f"`
	Threshold float64 `json:"t,omitempty"`
	Left      int     `json:"l,omitempty"`
	Right     int     `json:"r,omitempty"`
	Value     float64 `json:"v,omitempty"`
}

// Tree is a regression tree; Nodes[0] is the root.
type Tree struct {
	Nodes []Node `json:"nodes"`
}

func (t Tree) eval(x []float64) float64 {
	i := 0
	for {
		n := t.Nodes[i]
		if n.Feature < 0 {
			return n.Value
		}
		if x[n.Feature] <= n.Threshold {
			i = n.Left
		} else {
			i = n.Right
		}
	}
}

// Linear is a linear scorer: Σ_f Weights[f]·(x[f]−Mean[f])·Scale[f].
type Linear struct {
	Mean    []float64 `json:"mean"`
	Scale   []float64 `json:"scale"`
	Weights []float64 `json:"weights"`
}

func (l *Linear) score(x []float64) float64 {
	s := 0.0
	for f, v := range x {
		s += l.Weights[f] * (v - l.Mean[f]) * l.Scale[f]
	}
	return s
}

// Provenance says how a model was trained.
type Provenance struct {
	Bench      string    `json:"bench"`          // e.g. "acm-cr"
	Sets       []string  `json:"sets,omitempty"` // topic sets, e.g. contexts, sentences
	Queries    int       `json:"queries"`        // training queries
	Candidates int       `json:"candidates"`     // training candidates (all queries)
	Relevant   int       `json:"relevant"`       // relevant candidates among them
	Depth      int       `json:"depth"`          // candidates per query
	Created    time.Time `json:"created"`
	Command    string    `json:"command,omitempty"`
	Settings   string    `json:"settings,omitempty"` // retrieval settings of the candidates
	// Base describes the model an adapted model started from (Adapt);
	// "" when it was trained from scratch.
	Base string `json:"base,omitempty"`
}

// Model is a trained learned reranker, as stored in a model file
// (versioned JSON). It is safe for concurrent use.
type Model struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	// FeatureSet is the feature set the model was trained for
	// (FeatureSet when it was made by this citefind).
	FeatureSet string `json:"feature_set"`
	// Retrievers are the retriever names the features were computed for,
	// in feature order. A candidate a retriever did not return gets that
	// retriever's "not retrieved" values; a retriever of the candidates
	// missing here is ignored.
	Retrievers []string   `json:"retrievers"`
	Features   []string   `json:"features"`
	Params     Params     `json:"params"`
	Training   Provenance `json:"training"`
	Trees      []Tree     `json:"trees,omitempty"`
	Linear     *Linear    `json:"linear,omitempty"`
}

// Score returns the model's score of one feature vector (higher is
// better); x must have len(m.Features) entries.
func (m *Model) Score(x []float64) float64 {
	if m.Linear != nil {
		return m.Linear.score(x)
	}
	s := 0.0
	for _, t := range m.Trees {
		s += t.eval(x)
	}
	return s
}

// Save writes the model as indented JSON to path (through a temporary
// file renamed into place).
func (m *Model) Save(path string) error {
	b, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write model: %w", err)
	}
	return nil
}

// Load returns a reranker with the model file at path (see LoadModel).
func Load(path string) (*Reranker, error) {
	m, err := LoadModel(path)
	if err != nil {
		return nil, err
	}
	return New(m), nil
}

// LoadModel reads and validates the model file at path. Errors name the
// file and the cause, and wrap ErrInvalidModel when the file is not a
// usable model (or the os error when it cannot be read).
func LoadModel(path string) (*Model, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("learned reranker model: %w", err)
	}
	m, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("learned reranker model %s: %w", path, err)
	}
	return m, nil
}

// Parse decodes and validates a model file's contents.
func Parse(b []byte) (*Model, error) {
	var m Model
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%w: not a model file: %v", ErrInvalidModel, err)
	}
	if err := m.validate(); err != nil {
		return nil, err
	}
	return &m, nil
}

func (m *Model) validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidModel, fmt.Sprintf(format, args...))
	}
	if m.Format != FormatName {
		return bad("format is %q, want %q", m.Format, FormatName)
	}
	set := m.FeatureSet
	if set == "" && m.Version == 1 {
		set = "v1"
	}
	if m.Version != FormatVersion || set != FeatureSet {
		return fmt.Errorf("%w: %w: it was trained for feature set %q (model format %d), this citefind computes feature set %q (format %d); retrain it with `citefind train`",
			ErrInvalidModel, ErrFeatureSet, set, m.Version, FeatureSet, FormatVersion)
	}
	want := FeatureNames(m.Retrievers)
	if !slices.Equal(m.Features, want) {
		return bad("its features (%d) are not the ones feature set %s has for retrievers %v (%d); retrain with `citefind train`", len(m.Features), FeatureSet, m.Retrievers, len(want))
	}
	if m.Training.Depth < 0 || m.Training.Depth > MaxDepth {
		return bad("trained on %d candidates a query; a model names 1 to %d (0: not recorded)", m.Training.Depth, MaxDepth)
	}
	nf := len(m.Features)
	switch m.Params.Kind {
	case KindLambdaMART:
		if len(m.Trees) == 0 {
			return bad("kind %s but no trees", m.Params.Kind)
		}
		for ti, t := range m.Trees {
			if len(t.Nodes) == 0 {
				return bad("tree %d is empty", ti)
			}
			for ni, n := range t.Nodes {
				if n.Feature < 0 {
					if math.IsNaN(n.Value) || math.IsInf(n.Value, 0) {
						return bad("tree %d node %d: leaf value is not finite", ti, ni)
					}
					continue
				}
				// Children come after their parent, so evaluation ends.
				if n.Feature >= nf || n.Left <= ni || n.Right <= ni || n.Left >= len(t.Nodes) || n.Right >= len(t.Nodes) || math.IsNaN(n.Threshold) {
					return bad("tree %d node %d is malformed (feature %d, children %d and %d of %d nodes)", ti, ni, n.Feature, n.Left, n.Right, len(t.Nodes))
				}
			}
		}
	case KindLinear:
		l := m.Linear
		if l == nil || len(l.Weights) != nf || len(l.Mean) != nf || len(l.Scale) != nf {
			return bad("kind %s needs linear weights, means and scales for %d features", m.Params.Kind, nf)
		}
	default:
		return bad("unknown model kind %q", m.Params.Kind)
	}
	return nil
}

// The models that ship with citefind, one per pipeline (make train):
// default_model.json for the default pipeline of a database with an
// embedder (bm25, citing, dense), default_model_sparse.json for the one
// without (bm25, rm3, citing).
var (
	//go:embed default_model.json
	defaultModel []byte
	//go:embed default_model_sparse.json
	sparseModel []byte
)

var parsedDefaults = sync.OnceValues(func() ([]*Model, error) {
	var out []*Model
	for _, b := range [][]byte{defaultModel, sparseModel} {
		m, err := Parse(b)
		if err != nil {
			return nil, fmt.Errorf("the built-in learned reranker model: %w", err)
		}
		out = append(out, m)
	}
	return out, nil
})

// DefaultModel returns the model that ships with citefind for the default
// pipeline (rerank/learned/default_model.json, trained by `make train` on
// ACM-CR, SciFact and ScisummNet).
func DefaultModel() (*Model, error) {
	ms, err := parsedDefaults()
	if err != nil {
		return nil, err
	}
	return ms[0], nil
}

// DefaultModelFor returns the built-in model trained on the candidates of
// the retrievers names (in any order), else DefaultModel.
func DefaultModelFor(names []string) (*Model, error) {
	ms, err := parsedDefaults()
	if err != nil {
		return nil, err
	}
	for _, m := range ms {
		if sameSet(m.Retrievers, names) {
			return m, nil
		}
	}
	return ms[0], nil
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

// Reranker reorders candidates by a model's scores, keeping the analysed
// texts of the last DefaultDocCache candidates it saw (docCache). It is
// safe for concurrent use.
type Reranker struct {
	model   *Model
	forest  *forest // the model's trees laid out flat; nil for a linear model
	cache   *docCache
	queries *queryMemo
}

var (
	_ rerank.Reranker       = (*Reranker)(nil)
	_ rerank.RetrieverBound = (*Reranker)(nil)
	_ rerank.Preparer       = (*Reranker)(nil)
	_ rerank.DepthBound     = (*Reranker)(nil)
)

// New returns a reranker scoring with m.
func New(m *Model) *Reranker {
	return &Reranker{model: m, forest: flatten(m), cache: newDocCache(DefaultDocCache), queries: newQueryMemo(maxPrepared)}
}

// forest is a model's trees in flat arrays, node k of all trees at index
// k: the feature tested (-1 at a leaf), the threshold (the value at a
// leaf) and the children. Scoring it adds the same leaf values in the
// same order as Model.Score, so it gives the same scores, in about 30 %
// less time on the built-in model (BenchmarkScore).
type forest struct {
	feat        []int32
	thr         []float64
	left, right []int32
	roots       []int32
}

// flatten returns m's trees as a forest, or nil when m is linear or a
// tree is malformed (Model.Score is used then).
func flatten(m *Model) *forest {
	if m == nil || m.Linear != nil || len(m.Trees) == 0 {
		return nil
	}
	f := &forest{}
	for _, t := range m.Trees {
		base := int32(len(f.feat))
		f.roots = append(f.roots, base)
		for _, n := range t.Nodes {
			if n.Feature >= 0 && (n.Left <= 0 || n.Right <= 0 || n.Left >= len(t.Nodes) || n.Right >= len(t.Nodes)) {
				return nil
			}
			f.feat = append(f.feat, int32(n.Feature))
			if n.Feature < 0 {
				f.feat[len(f.feat)-1] = -1
				f.thr = append(f.thr, n.Value)
			} else {
				f.thr = append(f.thr, n.Threshold)
			}
			f.left = append(f.left, base+int32(n.Left))
			f.right = append(f.right, base+int32(n.Right))
		}
	}
	return f
}

func (f *forest) score(x []float64) float64 {
	s := 0.0
	for _, i := range f.roots {
		for f.feat[i] >= 0 {
			if x[f.feat[i]] <= f.thr[i] {
				i = f.left[i]
			} else {
				i = f.right[i]
			}
		}
		s += f.thr[i]
	}
	return s
}

// score is the model's score of x.
func (r *Reranker) score(x []float64) float64 {
	if r.forest != nil {
		return r.forest.score(x)
	}
	return r.model.Score(x)
}

// MaxDepth bounds the candidates per query a model is trained on and
// reranks (train -k): the engine fetches that many for every search.
const MaxDepth = 1000

// Depth is the number of candidates per query the model was trained on
// (0 when its file does not say): the engine reranks that many.
func (r *Reranker) Depth() int { return r.model.Training.Depth }

// Prepare analyses the query (its terms, bigrams, acronyms, citing
// sentences and windows) ahead of Rerank, which then takes the result.
func (r *Reranker) Prepare(query string) {
	if r.queries != nil {
		r.queries.get(query)
	}
}

// Default returns a reranker with the built-in model of the default
// pipeline.
func Default() (*Reranker, error) {
	m, err := DefaultModel()
	if err != nil {
		return nil, err
	}
	return New(m), nil
}

// DefaultFor returns a reranker with the built-in model for the
// retrievers names (DefaultModelFor).
func DefaultFor(names []string) (*Reranker, error) {
	m, err := DefaultModelFor(names)
	if err != nil {
		return nil, err
	}
	return New(m), nil
}

// Model returns the reranker's model.
func (r *Reranker) Model() *Model { return r.model }

// Name returns rerank.NameLearned.
func (r *Reranker) Name() string { return rerank.NameLearned }

// Rerank orders cands by the model's score, best first (ties keep the
// fused order), and returns the scores. It fails only when ctx is done.
// When no candidate was returned by any of the retrievers the model was
// trained with, the order is still the model's but a warning says its
// provenance features were all missing.
func (r *Reranker) Rerank(ctx context.Context, query string, cands []rerank.Candidate) (rerank.Outcome, error) {
	if err := ctx.Err(); err != nil {
		return rerank.Outcome{}, err
	}
	if len(cands) == 0 {
		return rerank.Outcome{Candidates: cands, Scores: []float64{}}, nil
	}
	x := &extractor{retrievers: r.model.Retrievers, cache: r.cache, queries: r.queries}
	xs := x.features(query, cands)
	if err := ctx.Err(); err != nil {
		return rerank.Outcome{}, err
	}
	scores := make([]float64, len(cands))
	split(len(xs), func(idx iter.Seq[int]) {
		for i := range idx {
			scores[i] = r.score(xs[i])
		}
	})
	order := Order(scores)
	out := rerank.Outcome{Candidates: make([]rerank.Candidate, len(cands)), Scores: make([]float64, len(cands))}
	for i, j := range order {
		out.Candidates[i] = cands[j]
		out.Scores[i] = scores[j]
	}
	if !r.anySource(cands) {
		out.Warnings = append(out.Warnings, fmt.Sprintf("the learned reranker was trained on candidates from %v, and none of these candidates came from them: its ranking may be poor", r.model.Retrievers))
	}
	return out, nil
}

// CheckRetrievers returns an error wrapping ErrRetrievers, naming both
// sets, when names (the retrievers whose fused list a query reranks)
// are not the retrievers the model was trained with, in any order.
func (r *Reranker) CheckRetrievers(names []string) error {
	a, b := slices.Clone(names), slices.Clone(r.model.Retrievers)
	slices.Sort(a)
	slices.Sort(b)
	if slices.Equal(slices.Compact(a), slices.Compact(b)) {
		return nil
	}
	return fmt.Errorf("%w: the learned reranker's model was trained on candidates of %s, and this search fuses %s: use those retrievers, or train a model for these (citefind train --self, or citefind train --bench … --retrievers %s)",
		ErrRetrievers, strings.Join(r.model.Retrievers, ","), strings.Join(names, ","), strings.Join(names, ","))
}

func (r *Reranker) anySource(cands []rerank.Candidate) bool {
	for _, c := range cands {
		for _, name := range r.model.Retrievers {
			if _, ok := c.Sources[name]; ok {
				return true
			}
		}
	}
	return false
}

// Order returns the indexes of scores sorted by decreasing score; equal
// scores keep their input order.
func Order(scores []float64) []int {
	idx := make([]int, len(scores))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return scores[idx[a]] > scores[idx[b]] })
	return idx
}
