package learned_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/rerank/learned"
)

func TestCheckRetrievers(t *testing.T) {
	_, m := trainSynth(t, smallParams())
	r := learned.New(m)
	tests := []struct {
		name  string
		names []string
		ok    bool
	}{
		{"same", []string{"bm25", "dense"}, true},
		{"same, other order", []string{"dense", "bm25"}, true},
		{"one missing", []string{"bm25"}, false},
		{"one more", []string{"bm25", "dense", "rm3"}, false},
		{"other", []string{"rm3", "citing"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := r.CheckRetrievers(tc.names)
			if tc.ok {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, learned.ErrRetrievers)
			assert.Contains(t, err.Error(), "bm25,dense")
			assert.Contains(t, err.Error(), strings.Join(tc.names, ","))
		})
	}
}

func TestMerge(t *testing.T) {
	a, b := synth(4, 5, 1), synth(3, 5, 2)
	a.Bench, b.Bench = "one", "two"
	b.Queries[0].Group = ""
	m, err := learned.Merge(a, b)
	require.NoError(t, err)
	require.Len(t, m.Queries, 7)
	assert.Equal(t, "one+two", m.Bench)
	assert.Equal(t, "one:contexts", m.Queries[0].Set)
	assert.Equal(t, "two", m.Queries[4].Collection)
	assert.Equal(t, "two/"+b.Queries[0].ID, m.Queries[4].Group, "a query without a group is its own group")
	// Papers of the two collections never share an ID, and judgements
	// follow their papers.
	assert.Len(t, m.Papers, len(a.Papers)+len(b.Papers))
	for i, q := range m.Queries {
		for _, id := range q.Relevant {
			assert.True(t, slices.ContainsFunc(q.Cands, func(c learned.Cand) bool { return c.ID == id }), "query %d", i)
		}
	}
	// The features of a merged query are those of the original.
	sa, err := a.Samples(t.Context(), a.Retrievers)
	require.NoError(t, err)
	sm, err := m.Samples(t.Context(), m.Retrievers)
	require.NoError(t, err)
	assert.Equal(t, sa[2], sm[2])

	learned.Balance(m, sm)
	assert.InDelta(t, 7.0/(2*4), sm[0].Weight, 1e-12)
	assert.InDelta(t, 7.0/(2*3), sm[6].Weight, 1e-12)

	c := synth(2, 5, 3)
	c.Retrievers = []string{"bm25"}
	_, err = learned.Merge(a, c)
	require.ErrorIs(t, err, learned.ErrInvalidDataset)
	c = synth(2, 5, 3)
	c.Retrievers = []string{"dense", "bm25"}
	_, err = learned.Merge(a, c)
	require.NoError(t, err, "the same retrievers in another order")
	c.Depth = 7
	_, err = learned.Merge(a, c)
	require.ErrorIs(t, err, learned.ErrInvalidDataset)
	_, err = learned.Merge()
	require.ErrorIs(t, err, learned.ErrInvalidDataset)
}

// TestDropFeatures checks that a model never splits on a dropped
// feature, by name or by prefix.
func TestDropFeatures(t *testing.T) {
	p := smallParams()
	p.Drop = []string{"title.", "all.idfcov", "dense."}
	_, m := trainSynth(t, p)
	used := map[string]bool{}
	for _, tr := range m.Trees {
		for _, n := range tr.Nodes {
			if n.Feature >= 0 {
				used[m.Features[n.Feature]] = true
			}
		}
	}
	require.NotEmpty(t, used)
	for f := range used {
		assert.False(t, strings.HasPrefix(f, "title.") || strings.HasPrefix(f, "dense.") || f == "all.idfcov", "split on dropped %s", f)
	}
	p.Drop = learned.FeatureNames([]string{"bm25", "dense"})
	d := synth(5, 10, 1)
	s, err := d.Samples(t.Context(), d.Retrievers)
	require.NoError(t, err)
	_, err = learned.Train(t.Context(), d, s, nil, p, learned.Provenance{})
	require.Error(t, err, "every feature dropped")
}

func TestWeightsScaleTheLoss(t *testing.T) {
	// Weighting every query by 2 is the same model as halving L2 and
	// the leaf-size floor… not exactly; but weights of 1 are the default.
	d := synth(20, 10, 4)
	s, err := d.Samples(t.Context(), d.Retrievers)
	require.NoError(t, err)
	m1, err := learned.Train(t.Context(), d, s, nil, smallParams(), learned.Provenance{})
	require.NoError(t, err)
	for i := range s {
		s[i].Weight = 1
	}
	m2, err := learned.Train(t.Context(), d, s, nil, smallParams(), learned.Provenance{})
	require.NoError(t, err)
	assert.Equal(t, m1.Trees, m2.Trees, "weight 1 is the default")
	for i := range s {
		s[i].Weight = 0.01
		if i%2 == 0 {
			s[i].Weight = 5
		}
	}
	m3, err := learned.Train(t.Context(), d, s, nil, smallParams(), learned.Provenance{})
	require.NoError(t, err)
	assert.NotEqual(t, m1.Trees, m3.Trees, "weights change the fit")
}

func TestPseudoQueries(t *testing.T) {
	var papers []learned.PseudoPaper
	for i := range 60 {
		papers = append(papers, learned.PseudoPaper{ID: fmt.Sprintf("p%02d", i), Paper: learned.Paper{
			Title: fmt.Sprintf("Learning to rank citations number yq%03d with boosted trees", i),
			Abstract: fmt.Sprintf("We study citation recommendation for scientific writing in setting xq%03d. "+
				"Our method ranks candidate papers with gradient boosted regression trees over many features. "+
				"Experiments on two benchmarks show large gains over strong lexical baselines.", i),
			Keywords: []string{"learning to rank", fmt.Sprintf("topic %d", i), "citations"},
		}})
	}
	papers = append(papers, learned.PseudoPaper{ID: "short", Paper: learned.Paper{Title: "Short"}})
	o := learned.PseudoOptions{N: 30, Seed: 3}
	qs := learned.PseudoQueries(papers, o)
	require.Len(t, qs, 30)
	assert.Equal(t, qs, learned.PseudoQueries(papers, o), "deterministic")
	assert.NotEqual(t, qs, learned.PseudoQueries(papers, learned.PseudoOptions{N: 30, Seed: 4}), "the seed chooses")
	kinds := map[string]int{}
	byID := map[string]learned.PseudoPaper{}
	for _, p := range papers {
		byID[p.ID] = p
	}
	for _, q := range qs {
		kinds[q.Kind]++
		p := byID[q.PaperID]
		require.NotEqual(t, "short", q.PaperID, "a paper without a usable title or abstract gives no query")
		switch q.Kind {
		case learned.PseudoSentence:
			assert.NotContains(t, q.Text, "xq", "the rarest words (here one of a single paper) are dropped first")
			assert.Less(t, len(strings.Fields(q.Text)), 12, "words are dropped: the query is not the sentence verbatim")
			assert.Less(t, len(q.Paper.Abstract), len(p.Abstract), "the sentence leaves the abstract the features see")
			assert.Equal(t, p.Title, q.Paper.Title)
		case learned.PseudoTitle:
			assert.NotEqual(t, p.Title, q.Text)
			assert.NotContains(t, q.Text, "yq", "the rarest words go first")
			assert.Equal(t, p.Abstract, q.Paper.Abstract)
		case learned.PseudoKeywords:
			assert.Empty(t, q.Paper.Keywords, "the keywords leave the paper the features see")
		}
		assert.GreaterOrEqual(t, len(strings.Fields(q.Text)), 3)
	}
	assert.Len(t, kinds, 3, "every kind is used: %v", kinds)
	assert.True(t, learned.Eligible(papers[0].Paper))
	assert.False(t, learned.Eligible(papers[len(papers)-1].Paper))
}
