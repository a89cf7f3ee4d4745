package learned_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/fuse"
	"github.com/citefind/citefind/rerank"
	"github.com/citefind/citefind/rerank/learned"
)

var _ rerank.Reranker = (*learned.Reranker)(nil)

var topics = []string{"neural ranking models", "query expansion relevance feedback", "click models user behaviour",
	"learning to rank gradient boosting", "dense passage retrieval", "citation recommendation context"}

// synth returns a synthetic dataset: for each query, n candidates fused
// from bm25 and dense; the relevant candidates have the query's topic in
// their title, but are ranked low by bm25, so a reranker that reads the
// titles beats the fused order.
func synth(nq, n int, seed uint64) *learned.Dataset {
	rng := rand.New(rand.NewPCG(seed, 7))
	d := &learned.Dataset{Version: learned.DatasetVersion, Bench: "synth", Depth: n, Retrievers: []string{"bm25", "dense"}}
	for qi := range nq {
		topic := topics[qi%len(topics)]
		q := learned.Query{Set: "contexts", ID: fmt.Sprint(qi), Group: fmt.Sprintf("paper%d", qi%10),
			Text: "Recent work on " + topic + " [12] improved results."}
		var cands []rerank.Candidate
		for j := range n {
			id := fmt.Sprintf("q%dc%d", qi, j)
			title := "A study of " + topics[rng.IntN(len(topics))] + " in other settings"
			if j%7 == 5 {
				title = "Advances in " + topic
				q.Relevant = append(q.Relevant, id)
			} else if j%7 == 6 {
				title = "On " + topics[(qi+1)%len(topics)]
			}
			c := rerank.Candidate{ID: id, Title: title, Abstract: "We study " + title + ".", Year: 2000 + j%20,
				Authors: []string{"Ada Lovelace"}, Rank: j + 1, Score: float64(n - j),
				Sources: map[string]fuse.Source{"bm25": {Rank: j + 1, Score: float64(n-j) + rng.Float64()}}}
			if j%3 == 0 {
				c.Sources["dense"] = fuse.Source{Rank: j/3 + 1, Score: 1 - float64(j)/float64(n)}
			}
			cands = append(cands, c)
		}
		d.Add(q, cands)
	}
	return d
}

func smallParams() learned.Params {
	p := learned.DefaultParams()
	p.Trees, p.MinLeaf, p.LearningRate = 30, 5, 0.2
	return p
}

func trainSynth(t *testing.T, p learned.Params) (*learned.Dataset, *learned.Model) {
	t.Helper()
	d := synth(40, 20, 1)
	s, err := d.Samples(t.Context(), d.Retrievers)
	require.NoError(t, err)
	m, err := learned.Train(t.Context(), d, s, nil, p, learned.Provenance{Bench: "synth"})
	require.NoError(t, err)
	return d, m
}

func TestFeatureNames(t *testing.T) {
	names := learned.FeatureNames([]string{"bm25", "dense", "rm3"})
	assert.Equal(t, "bm25.found", names[0])
	assert.Contains(t, names, "rm3.rrank")
	assert.Contains(t, names, "title.idfcov")
	seen := map[string]bool{}
	for _, n := range names {
		assert.False(t, seen[n], "duplicate feature %s", n)
		seen[n] = true
	}
}

func TestFeatures(t *testing.T) {
	cands := []rerank.Candidate{
		{ID: "a", Title: "Dense passage retrieval for open-domain QA", Authors: []string{"Vladimir Karpukhin"},
			Year: 2020, Rank: 1, Score: 1, Sources: map[string]fuse.Source{"bm25": {Rank: 1, Score: 12}, "dense": {Rank: 3, Score: 0.8}}},
		{ID: "b", Title: "Something else entirely", Abstract: "No overlap.", Rank: 2, Score: 0.5,
			Sources: map[string]fuse.Source{"bm25": {Rank: 2, Score: 6}}},
	}
	rs := []string{"bm25", "dense"}
	names := learned.FeatureNames(rs)
	xs := learned.Features("Karpukhin et al. [3] use dense passage retrieval with DPR.", cands, rs)
	require.Len(t, xs, 2)
	get := func(i int, name string) float64 {
		for f, n := range names {
			if n == name {
				return xs[i][f]
			}
		}
		t.Fatalf("no feature %s", name)
		return 0
	}
	for _, x := range xs {
		assert.Len(t, x, len(names))
	}
	tests := []struct {
		name string
		cand int
		feat string
		want float64
	}{
		{"retrieved by dense", 0, "dense.found", 1},
		{"not retrieved by dense", 1, "dense.found", 0},
		{"dense reciprocal rank", 0, "dense.rrank", 1.0 / 3},
		{"dense rank over the list length", 0, "dense.rank", 3.0 / 2},
		{"missing rank", 1, "dense.rrank", 0},
		{"bm25 score min-max", 1, "bm25.minmax", 0},
		{"bm25 score as a share of the best", 1, "bm25.ratio", 0.5},
		{"bm25 z-score", 0, "bm25.z", 1},
		{"fused rank over the list length", 1, "fused.rank", 1},
		{"share of the retrievers", 0, "fused.frac", 1},
		{"share of the retrievers, one", 1, "fused.frac", 0.5},
		{"author in query", 0, "author.any", 1},
		{"first author", 0, "author.first", 1},
		{"no author match", 1, "author.any", 0},
		{"title terms in the query", 0, "title.qfrac", 3.0 / 6},
		{"no title overlap", 1, "title.cov", 0},
		{"title BM25, the best", 0, "title.bm25", 1},
		{"title BM25, none", 1, "title.bm25", 0},
		{"acronym of the query in the title", 0, "acro.title", 0},
		{"the newest dated candidate", 0, "year.pct", 0},
		{"no year", 1, "year.has", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.InDelta(t, tc.want, get(tc.cand, tc.feat), 1e-9)
		})
	}
	assert.Equal(t, xs, learned.Features("Karpukhin et al. [3] use dense passage retrieval with DPR.", cands, rs), "deterministic")
}

// TestFeaturesAreScaleFree checks what makes a model transfer between
// collections: scaling every retriever's scores and the fused scores,
// or shifting every year, changes no feature.
func TestFeaturesAreScaleFree(t *testing.T) {
	d := synth(1, 30, 7)
	rs := d.Retrievers
	cands := d.Candidates(0)
	want := learned.Features(d.Queries[0].Text, cands, rs)
	scaled := d.Candidates(0)
	for i := range scaled {
		scaled[i].Score *= 37
		scaled[i].Year += 100
		src := map[string]fuse.Source{}
		for name, s := range scaled[i].Sources {
			src[name] = fuse.Source{Rank: s.Rank, Score: s.Score * 9.5}
		}
		scaled[i].Sources = src
	}
	got := learned.Features(d.Queries[0].Text, scaled, rs)
	require.Len(t, got, len(want))
	for i := range want {
		assert.InDeltaSlice(t, want[i], got[i], 1e-9, "candidate %d", i)
	}
}

func TestTrainLearnsAndIsDeterministic(t *testing.T) {
	for _, kind := range []string{learned.KindLambdaMART, learned.KindLinear} {
		t.Run(kind, func(t *testing.T) {
			p := smallParams()
			p.Kind = kind
			d, m := trainSynth(t, p)
			_, m2 := trainSynth(t, p)
			assert.Equal(t, m, m2, "same data and seed, same model")
			assert.Equal(t, 40, m.Training.Queries)

			// On fresh queries, the relevant candidates move to the top.
			test := synth(6, 20, 99)
			r := learned.New(m)
			for i := range test.Queries {
				out, err := r.Rerank(t.Context(), test.Queries[i].Text, test.Candidates(i))
				require.NoError(t, err)
				require.Len(t, out.Candidates, 20)
				assert.Contains(t, test.Queries[i].Relevant, out.Candidates[0].ID)
				for k := 1; k < len(out.Scores); k++ {
					assert.GreaterOrEqual(t, out.Scores[k-1], out.Scores[k])
				}
			}
			_ = d
		})
	}
}

// TestBagAveragesSeeds: a bagged model scores the mean of the models
// trained with its seeds.
func TestBagAveragesSeeds(t *testing.T) {
	p := smallParams()
	d, m1 := trainSynth(t, p)
	p.Seed = 2
	_, m2 := trainSynth(t, p)
	p.Seed, p.Bag = 1, 2
	_, bag := trainSynth(t, p)
	require.Len(t, bag.Trees, 2*p.Trees)
	assert.Equal(t, 2, bag.Params.Bag)
	s, err := d.Samples(t.Context(), d.Retrievers)
	require.NoError(t, err)
	for _, x := range s[0].X {
		assert.InDelta(t, (m1.Score(x)+m2.Score(x))/2, bag.Score(x), 1e-12)
	}
	_, again := trainSynth(t, p)
	assert.Equal(t, bag, again, "deterministic")
}

func TestRerankKeepsEveryCandidate(t *testing.T) {
	_, m := trainSynth(t, smallParams())
	d := synth(1, 20, 5)
	cands := d.Candidates(0)
	out, err := learned.New(m).Rerank(t.Context(), d.Queries[0].Text, cands)
	require.NoError(t, err)
	var in, got []string
	for i := range cands {
		in = append(in, cands[i].ID)
		got = append(got, out.Candidates[i].ID)
	}
	assert.ElementsMatch(t, in, got)
	assert.Empty(t, out.Warnings)

	t.Run("Empty", func(t *testing.T) {
		out, err := learned.New(m).Rerank(t.Context(), "q", nil)
		require.NoError(t, err)
		assert.Empty(t, out.Candidates)
	})
	t.Run("NoKnownRetriever", func(t *testing.T) {
		c := []rerank.Candidate{{ID: "x", Title: "t", Sources: map[string]fuse.Source{"other": {Rank: 1}}}}
		out, err := learned.New(m).Rerank(t.Context(), "q", c)
		require.NoError(t, err)
		assert.Len(t, out.Candidates, 1)
		assert.NotEmpty(t, out.Warnings)
	})
	t.Run("NonFiniteScores", func(t *testing.T) {
		c := []rerank.Candidate{
			{ID: "x", Title: "a", Score: math.NaN(), Sources: map[string]fuse.Source{"bm25": {Rank: 1, Score: math.Inf(1)}}},
			{ID: "y", Title: "b", Score: 1, Sources: map[string]fuse.Source{"bm25": {Rank: 2, Score: 1}}},
		}
		for _, x := range learned.Features("a b", c, m.Retrievers) {
			for _, v := range x {
				assert.False(t, math.IsNaN(v) || math.IsInf(v, 0))
			}
		}
		out, err := learned.New(m).Rerank(t.Context(), "a b", c)
		require.NoError(t, err)
		assert.Len(t, out.Candidates, 2)
	})
	t.Run("ContextCanceled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err := learned.New(m).Rerank(ctx, "q", cands)
		require.ErrorIs(t, err, context.Canceled)
	})
}

func TestSaveLoad(t *testing.T) {
	_, m := trainSynth(t, smallParams())
	dir := t.TempDir()
	path := filepath.Join(dir, "m.json")
	require.NoError(t, m.Save(path))
	got, err := learned.LoadModel(path)
	require.NoError(t, err)
	assert.Equal(t, m.Trees, got.Trees)
	assert.Equal(t, m.Features, got.Features)
	r, err := learned.Load(path)
	require.NoError(t, err)
	assert.Equal(t, m.Trees, r.Model().Trees)

	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(s), 0o644))
		return p
	}
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	tests := []struct {
		name string
		path string
	}{
		{"not JSON", write("a.json", "nope")},
		{"wrong format", write("b.json", `{"format":"x","version":1}`)},
		{"wrong version", write("c.json", `{"format":"citefind-learned-reranker","version":99}`)},
		{"feature mismatch", write("d.json", `{"format":"citefind-learned-reranker","version":2,"feature_set":"transfer-2","retrievers":["bm25"],"features":["x"],"params":{"kind":"lambdamart"}}`)},
		{"no trees", write("e.json", string(replaceTrees(b, `"trees": []`)))},
		{"bad child", write("f.json", string(replaceTrees(b, `"trees": [{"nodes":[{"f":0,"t":1,"l":0,"r":0}]}]`)))},
		{"unknown field", write("g.json", `{"format":"citefind-learned-reranker","version":2,"extra":1}`)},
		{"huge depth", write("h.json", regexp.MustCompile(`"depth": *[0-9]+`).ReplaceAllString(string(b), `"depth": 100000000`))},
		{"negative depth", write("i.json", regexp.MustCompile(`"depth": *[0-9]+`).ReplaceAllString(string(b), `"depth": -5`))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := learned.LoadModel(tc.path)
			require.ErrorIs(t, err, learned.ErrInvalidModel)
			assert.Contains(t, err.Error(), tc.path)
		})
	}
	t.Run("another feature set", func(t *testing.T) {
		// A model of format 1 (feature set v1, like the model shipped
		// before) is refused with both feature sets named.
		old := strings.Replace(string(b), `"version": 2`, `"version": 1`, 1)
		old = strings.Replace(old, `"feature_set": "transfer-2",`, "", 1)
		path := write("v1.json", old)
		_, err := learned.LoadModel(path)
		require.ErrorIs(t, err, learned.ErrFeatureSet)
		require.ErrorIs(t, err, learned.ErrInvalidModel)
		assert.Contains(t, err.Error(), `feature set "v1"`)
		assert.Contains(t, err.Error(), `feature set "transfer-2"`)
		assert.Contains(t, err.Error(), path)
	})
	t.Run("missing file", func(t *testing.T) {
		_, err := learned.LoadModel(filepath.Join(dir, "none.json"))
		require.ErrorIs(t, err, os.ErrNotExist)
	})
}

// replaceTrees swaps the "trees" array of a saved model for s.
func replaceTrees(model []byte, s string) []byte {
	str := string(model)
	i := indexOf(str, `"trees": [`)
	j := indexOf(str, `"linear"`)
	if j < 0 {
		j = len(str) - 2
		return []byte(str[:i] + s + "\n}")
	}
	return []byte(str[:i] + s + "," + str[j:])
}

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

func TestDefaultModel(t *testing.T) {
	r, err := learned.Default()
	require.NoError(t, err)
	m := r.Model()
	// make train: ACM-CR, SciFact and ScisummNet, the default pipeline's
	// candidates, this feature set.
	assert.Equal(t, "acm-cr+beir:scifact+beir:scisummnet", m.Training.Bench)
	assert.Equal(t, learned.FeatureSet, m.FeatureSet)
	assert.Equal(t, []string{"bm25", "citing", "dense"}, m.Retrievers)
	assert.NotEmpty(t, m.Retrievers)
	assert.Equal(t, rerank.NameLearned, r.Name())
}

func TestFoldsKeepGroupsTogether(t *testing.T) {
	groups := []string{"a", "b", "a", "c", "d", "e", "b", "f"}
	f := learned.Folds(groups, 3, 1)
	assert.Len(t, f, 6)
	assert.Equal(t, f, learned.Folds(groups, 3, 1), "deterministic")
	count := map[int]int{}
	for _, v := range f {
		count[v]++
	}
	assert.Equal(t, map[int]int{0: 2, 1: 2, 2: 2}, count)
}

func TestCrossValidateHoldsOutGroups(t *testing.T) {
	d := synth(40, 20, 3)
	s, err := d.Samples(t.Context(), d.Retrievers)
	require.NoError(t, err)
	cv, err := learned.CrossValidate(t.Context(), d, s, 5, smallParams(), 1, nil)
	require.NoError(t, err)
	require.Len(t, cv.Models, 5)
	for f, m := range cv.Models {
		held := 0
		for _, q := range d.Queries {
			if cv.Fold[q.Group] == f {
				held++
			}
		}
		assert.Equal(t, len(d.Queries)-held, m.Training.Queries, "fold %d trains on the other folds only", f)
	}
	for i := range d.Queries {
		assert.Len(t, cv.Orders[i], len(d.Queries[i].Cands))
	}
	_, err = learned.CrossValidate(t.Context(), d, s, 1, smallParams(), 1, nil)
	require.Error(t, err)
}

func TestDatasetSaveLoad(t *testing.T) {
	d := synth(3, 5, 1)
	path := filepath.Join(t.TempDir(), "d.json.gz")
	require.NoError(t, d.Save(path))
	got, err := learned.LoadDataset(path)
	require.NoError(t, err)
	assert.Equal(t, d.Queries, got.Queries)
	assert.Equal(t, d.Candidates(1), got.Candidates(1))
	_, err = learned.LoadDataset(filepath.Join(t.TempDir(), "none"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

var sink rerank.Outcome

// BenchmarkRerank100 measures the latency the learned reranker adds to a
// query: featurising and scoring 100 candidates with the built-in model.
func BenchmarkRerank100(b *testing.B) {
	r, err := learned.Default()
	require.NoError(b, err)
	d := synth(1, 100, 42)
	cands := d.Candidates(0)
	long := "We build on prior work in learning to rank and neural ranking models [12, 14], and compare with dense passage retrieval."
	for i := range cands {
		cands[i].Abstract = cands[i].Abstract + " " + long + " " + long + " " + long
		cands[i].Keywords = []string{"ranking", "retrieval"}
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		sink, _ = r.Rerank(ctx, long, cands)
	}
}

// TestDefaultModelFor: citefind ships a model for each default pipeline
// and picks the one trained on the search's retrievers, in any order.
func TestDefaultModelFor(t *testing.T) {
	def, err := learned.DefaultModel()
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"bm25", "citing", "dense"}, def.Retrievers, "the default pipeline with an embedder")
	sparse, err := learned.DefaultModelFor([]string{"citing", "rm3", "bm25"})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"bm25", "rm3", "citing"}, sparse.Retrievers, "the default pipeline without one")
	for _, names := range [][]string{{"dense", "bm25", "citing"}, {"bm25"}, nil} {
		m, err := learned.DefaultModelFor(names)
		require.NoError(t, err)
		assert.Same(t, def, m, "%v", names)
	}
	r, err := learned.DefaultFor([]string{"bm25", "rm3", "citing"})
	require.NoError(t, err)
	require.NoError(t, r.CheckRetrievers([]string{"rm3", "citing", "bm25"}))
	r, err = learned.DefaultFor([]string{"bm25"})
	require.NoError(t, err)
	require.ErrorIs(t, r.CheckRetrievers([]string{"bm25"}), learned.ErrRetrievers)
}
