package fuse_test

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/fuse"
	"github.com/citefind/citefind/retrieve"
)

var _ retrieve.Retriever = retrieve.RetrieverFunc(nil)

// ranked returns hits for ids, best first, with scores n, n-1, …, 1.
func ranked(ids ...string) []corpus.Hit {
	hits := make([]corpus.Hit, len(ids))
	for i, id := range ids {
		hits[i] = corpus.Hit{ID: id, Score: float64(len(ids) - i)}
	}
	return hits
}

// scored returns hits from alternating ID, score pairs, in that order.
func scored(pairs ...any) []corpus.Hit {
	hits := make([]corpus.Hit, 0, len(pairs)/2)
	for i := 0; i < len(pairs); i += 2 {
		hits = append(hits, corpus.Hit{ID: pairs[i].(string), Score: pairs[i+1].(float64)})
	}
	return hits
}

// ids returns the IDs of hits in order.
func ids(hits []fuse.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

// scores returns ID → fused score.
func scores(hits []fuse.Hit) map[string]float64 {
	out := make(map[string]float64, len(hits))
	for _, h := range hits {
		out[h.ID] = h.Score
	}
	return out
}

func TestFuse(t *testing.T) {
	tests := []struct {
		name       string
		lists      map[string][]corpus.Hit
		weights    map[string]float64
		opts       fuse.Options
		wantIDs    []string
		wantScores map[string]float64
	}{
		{
			// k = 60.
			// a: 1/61 + 1/63 = 0.016393443 + 0.015873016 = 0.032266459
			// b: 1/62 + 1/61 = 0.016129032 + 0.016393443 = 0.032522475
			// c: 1/63 = 0.015873016 (bm25 rank 3)
			// d: 1/62 = 0.016129032 (dense rank 2)
			name:       "rrf default k",
			lists:      map[string][]corpus.Hit{"bm25": ranked("a", "b", "c"), "dense": ranked("b", "d", "a")},
			wantIDs:    []string{"b", "a", "d", "c"},
			wantScores: map[string]float64{"a": 1.0/61 + 1.0/63, "b": 1.0/62 + 1.0/61, "c": 1.0 / 63, "d": 1.0 / 62},
		},
		{
			// "" is RRF, explicit RRF is the same.
			name:    "rrf explicit method",
			lists:   map[string][]corpus.Hit{"bm25": ranked("a", "b", "c"), "dense": ranked("b", "d", "a")},
			opts:    fuse.Options{Method: fuse.RRF, RankConstant: 60},
			wantIDs: []string{"b", "a", "d", "c"},
		},
		{
			// k = 1: x (rank 1 once) beats y (rank 4 twice).
			// x: 1/(1+1) = 0.5; q: 0.5 (tie, best rank 1 both: ID order q < x)
			// y: 1/(1+4) + 1/(1+4) = 0.4
			name:       "rrf small k favours top ranks",
			lists:      map[string][]corpus.Hit{"bm25": ranked("x", "p", "r", "y"), "dense": ranked("q", "s", "t", "y")},
			opts:       fuse.Options{RankConstant: 1},
			wantIDs:    []string{"q", "x", "y", "p", "s", "r", "t"},
			wantScores: map[string]float64{"x": 0.5, "q": 0.5, "y": 0.4, "p": 1.0 / 3, "s": 1.0 / 3, "r": 0.25, "t": 0.25},
		},
		{
			// k = 60: y wins. y: 2/64 = 0.03125; x, q: 1/61 = 0.016393.
			name:    "rrf large k favours agreement",
			lists:   map[string][]corpus.Hit{"bm25": ranked("x", "p", "r", "y"), "dense": ranked("q", "s", "t", "y")},
			wantIDs: []string{"y", "q", "x", "p", "s", "r", "t"},
		},
		{
			// Unweighted: a: 1/61 + 1/62 = 0.032522; c: 1/61 = 0.016393; b: 1/62 = 0.016129.
			name:    "rrf unweighted",
			lists:   map[string][]corpus.Hit{"bm25": ranked("a", "b"), "dense": ranked("c", "a")},
			wantIDs: []string{"a", "c", "b"},
		},
		{
			// dense 0.3: a: 1/61 + 0.3/62 = 0.016393 + 0.004839 = 0.021232
			// b: 1/62 = 0.016129; c: 0.3/61 = 0.004918
			name:       "rrf weighted towards bm25",
			lists:      map[string][]corpus.Hit{"bm25": ranked("a", "b"), "dense": ranked("c", "a")},
			weights:    map[string]float64{"dense": 0.3},
			wantIDs:    []string{"a", "b", "c"},
			wantScores: map[string]float64{"a": 1.0/61 + 0.3/62, "b": 1.0 / 62, "c": 0.3 / 61},
		},
		{
			// bm25 missing from weights → 1. dense 3: a: 1/61 + 3/62 = 0.064780; c: 3/61 = 0.049180; b: 1/62.
			name:       "rrf weighted towards dense",
			lists:      map[string][]corpus.Hit{"bm25": ranked("a", "b"), "dense": ranked("c", "a")},
			weights:    map[string]float64{"dense": 3, "unused": 7},
			wantIDs:    []string{"a", "c", "b"},
			wantScores: map[string]float64{"a": 1.0/61 + 3.0/62, "c": 3.0 / 61, "b": 1.0 / 62},
		},
		{
			// bm25 max 10: a 1, b 0.5, c 0.25. dense max 0.8: b 1, d 0.5.
			// a 1; b 0.5 + 1 = 1.5; c 0.25; d 0.5.
			name:       "maxnorm",
			lists:      map[string][]corpus.Hit{"bm25": scored("a", 10.0, "b", 5.0, "c", 2.5), "dense": scored("b", 0.8, "d", 0.4)},
			opts:       fuse.Options{Method: fuse.MaxNorm},
			wantIDs:    []string{"b", "a", "d", "c"},
			wantScores: map[string]float64{"a": 1, "b": 1.5, "c": 0.25, "d": 0.5},
		},
		{
			// dense 0.3: a 1; b 0.5 + 0.3·1 = 0.8; c 0.25; d 0.3·0.5 = 0.15.
			name:       "maxnorm weighted",
			lists:      map[string][]corpus.Hit{"bm25": scored("a", 10.0, "b", 5.0, "c", 2.5), "dense": scored("b", 0.8, "d", 0.4)},
			weights:    map[string]float64{"dense": 0.3},
			opts:       fuse.Options{Method: fuse.MaxNorm},
			wantIDs:    []string{"a", "b", "c", "d"},
			wantScores: map[string]float64{"a": 1, "b": 0.8, "c": 0.25, "d": 0.15},
		},
		{
			// dense has a negative score: shifted by its min −0.5, range 1:
			// b (0.5+0.5)/1 = 1; e (0.1+0.5)/1 = 0.6; d 0.
			// a 1; b 0.5 + 1 = 1.5; c 0.25; e 0.6; d 0.
			name:       "maxnorm negative scores",
			lists:      map[string][]corpus.Hit{"bm25": scored("a", 10.0, "b", 5.0, "c", 2.5), "dense": scored("b", 0.5, "e", 0.1, "d", -0.5)},
			opts:       fuse.Options{Method: fuse.MaxNorm},
			wantIDs:    []string{"b", "a", "e", "c", "d"},
			wantScores: map[string]float64{"a": 1, "b": 1.5, "c": 0.25, "e": 0.6, "d": 0},
		},
		{
			// All dense scores 0: every one normalises to 1.
			name:       "maxnorm all zero",
			lists:      map[string][]corpus.Hit{"bm25": scored("a", 10.0, "b", 5.0), "dense": scored("b", 0.0, "d", 0.0)},
			opts:       fuse.Options{Method: fuse.MaxNorm},
			wantIDs:    []string{"b", "a", "d"},
			wantScores: map[string]float64{"a": 1, "b": 1.5, "d": 1},
		},
		{
			// bm25 min 2 max 10: a 1, b 3/8 = 0.375, c 0.
			// dense min 0.1 max 0.9: b 1, d 0.5, a 0.
			// a 1 + 0 = 1; b 1.375; c 0; d 0.5.
			name:       "minmax",
			lists:      map[string][]corpus.Hit{"bm25": scored("a", 10.0, "b", 5.0, "c", 2.0), "dense": scored("b", 0.9, "d", 0.5, "a", 0.1)},
			opts:       fuse.Options{Method: fuse.MinMax},
			wantIDs:    []string{"b", "a", "d", "c"},
			wantScores: map[string]float64{"a": 1, "b": 1.375, "c": 0, "d": 0.5},
		},
		{
			// Interpolation 0.7 / 0.3: a 0.7; b 0.7·0.375 + 0.3 = 0.5625;
			// d 0.3·0.5 = 0.15; c 0 (returned, so still a hit).
			name:       "minmax interpolation",
			lists:      map[string][]corpus.Hit{"bm25": scored("a", 10.0, "b", 5.0, "c", 2.0), "dense": scored("b", 0.9, "d", 0.5, "a", 0.1)},
			weights:    map[string]float64{"bm25": 0.7, "dense": 0.3},
			opts:       fuse.Options{Method: fuse.MinMax},
			wantIDs:    []string{"a", "b", "d", "c"},
			wantScores: map[string]float64{"a": 0.7, "b": 0.5625, "c": 0, "d": 0.15},
		},
		{
			// Equal scores normalise to 1: a 1, b 1, tie → best rank → a, b.
			name:       "minmax all equal",
			lists:      map[string][]corpus.Hit{"bm25": scored("b", 3.0, "a", 3.0)},
			opts:       fuse.Options{Method: fuse.MinMax},
			wantIDs:    []string{"b", "a"},
			wantScores: map[string]float64{"a": 1, "b": 1},
		},
		{
			// Finite min 2, max 4: +Inf → 1, b 1, c 0, NaN → 0, −Inf → 0.
			// Ties by rank: a (1) before b (2); c (3), d (4), e (5).
			name:  "minmax non-finite scores",
			lists: map[string][]corpus.Hit{"bm25": scored("a", math.Inf(1), "b", 4.0, "c", 2.0, "d", math.NaN(), "e", math.Inf(-1))},
			opts:  fuse.Options{Method: fuse.MinMax},

			wantIDs:    []string{"a", "b", "c", "d", "e"},
			wantScores: map[string]float64{"a": 1, "b": 1, "c": 0, "d": 0, "e": 0},
		},
		{
			// Second "a" is dropped, so b is rank 2 and c rank 3:
			// a 1/61, b 1/62, c 1/63.
			name:       "duplicate within a list keeps the first",
			lists:      map[string][]corpus.Hit{"bm25": scored("a", 3.0, "b", 2.0, "a", 9.0, "c", 1.0)},
			wantIDs:    []string{"a", "b", "c"},
			wantScores: map[string]float64{"a": 1.0 / 61, "b": 1.0 / 62, "c": 1.0 / 63},
		},
		{
			name:    "empty IDs are dropped",
			lists:   map[string][]corpus.Hit{"bm25": scored("", 5.0, "a", 3.0)},
			wantIDs: []string{"a"},
		},
		{
			// Depth 2 after dedup: a, b kept; c cut; f cut. (K 0 would mean 2.)
			name:    "lists are cut to depth after dedup",
			lists:   map[string][]corpus.Hit{"bm25": ranked("a", "a", "b", "c"), "dense": ranked("d", "e", "f")},
			opts:    fuse.Options{Depth: 2, K: 10},
			wantIDs: []string{"a", "d", "b", "e"},
		},
		{
			name:    "k limits the fused list",
			lists:   map[string][]corpus.Hit{"bm25": ranked("a", "b", "c"), "dense": ranked("b", "d", "a")},
			opts:    fuse.Options{K: 2},
			wantIDs: []string{"b", "a"},
		},
		{
			name:    "no lists",
			lists:   nil,
			wantIDs: []string{},
		},
		{
			name:    "empty lists",
			lists:   map[string][]corpus.Hit{"bm25": nil, "dense": {}},
			wantIDs: []string{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := fuse.Fuse(tc.lists, tc.weights, tc.opts)
			require.NoError(t, err)
			assert.Equal(t, tc.wantIDs, ids(got))
			for id, want := range tc.wantScores {
				assert.InDelta(t, want, scores(got)[id], 1e-12, "score of %s", id)
			}
		})
	}
}

func TestFuseProvenance(t *testing.T) {
	lists := map[string][]corpus.Hit{
		"bm25":  scored("a", 12.5, "b", 7.0, "a", 1.0),
		"dense": scored("b", 0.91, "c", 0.5),
	}
	got, err := fuse.Fuse(lists, nil, fuse.Options{})
	require.NoError(t, err)
	want := []fuse.Hit{
		// b: 1/62 + 1/61; a: 1/61; c: 1/62.
		{ID: "b", Score: 1.0/62 + 1.0/61, Count: 2, Sources: map[string]fuse.Source{
			"bm25": {Rank: 2, Score: 7}, "dense": {Rank: 1, Score: 0.91}}},
		{ID: "a", Score: 1.0 / 61, Count: 1, Sources: map[string]fuse.Source{"bm25": {Rank: 1, Score: 12.5}}},
		{ID: "c", Score: 1.0 / 62, Count: 1, Sources: map[string]fuse.Source{"dense": {Rank: 2, Score: 0.5}}},
	}
	require.Len(t, got, len(want))
	for i := range want {
		assert.Equal(t, want[i].ID, got[i].ID)
		assert.InDelta(t, want[i].Score, got[i].Score, 1e-15)
		assert.Equal(t, want[i].Sources, got[i].Sources)
		assert.Equal(t, want[i].Count, got[i].Count)
	}
}

// A retriever of weight 0 is an observer: it shows up in Sources but the
// IDs, scores and order are those of the weighted lists alone.
func TestFuseZeroWeight(t *testing.T) {
	// bm25: b and c tie under MinMax (both 0) and under MaxNorm ordering
	// by rank; dense would put c, z first if it counted.
	bm25 := scored("a", 2.0, "b", 1.0, "c", 1.0)
	dense := scored("c", 0.9, "z", 0.8, "b", 0.1)
	for _, m := range []fuse.Method{fuse.RRF, fuse.MaxNorm, fuse.MinMax} {
		t.Run(string(m), func(t *testing.T) {
			opts := fuse.Options{Method: m}
			alone, err := fuse.Fuse(map[string][]corpus.Hit{"bm25": bm25}, nil, opts)
			require.NoError(t, err)
			got, err := fuse.Fuse(map[string][]corpus.Hit{"bm25": bm25, "dense": dense}, map[string]float64{"dense": 0}, opts)
			require.NoError(t, err)
			assert.Equal(t, ids(alone), ids(got))
			assert.Equal(t, scores(alone), scores(got))
			require.Len(t, got, 3)
			c := got[2]
			assert.Equal(t, "c", c.ID)
			assert.Equal(t, map[string]fuse.Source{"bm25": {Rank: 3, Score: 1}, "dense": {Rank: 1, Score: 0.9}}, c.Sources)
			assert.Equal(t, 2, c.Count)
		})
	}
}

func TestFuseDeterministicTies(t *testing.T) {
	// Mirrored lists: a and j, b and i, … have equal RRF scores and equal
	// best ranks, so IDs decide; 1/61+1/70 > 1/62+1/69 > … orders pairs.
	lists := map[string][]corpus.Hit{
		"bm25":  ranked("a", "b", "c", "d", "e", "f", "g", "h", "i", "j"),
		"dense": ranked("j", "i", "h", "g", "f", "e", "d", "c", "b", "a"),
		"title": ranked("q"), // 1/61 alone: below every pair
	}
	want := []string{"a", "j", "b", "i", "c", "h", "d", "g", "e", "f", "q"}
	for range 100 {
		got, err := fuse.Fuse(lists, nil, fuse.Options{})
		require.NoError(t, err)
		require.Equal(t, want, ids(got))
	}

	// Many exact ties, many lists: the order never changes.
	rng := rand.New(rand.NewSource(7))
	big := map[string][]corpus.Hit{}
	for _, name := range []string{"r1", "r2", "r3", "r4", "r5", "r6"} {
		perm := rng.Perm(50)
		l := make([]corpus.Hit, len(perm))
		for i, p := range perm {
			l[i] = corpus.Hit{ID: string(rune('A'+p%26)) + string(rune('a'+p/26)), Score: float64(p % 3)}
		}
		big[name] = l
	}
	for _, m := range []fuse.Method{fuse.RRF, fuse.MaxNorm, fuse.MinMax} {
		first, err := fuse.Fuse(big, nil, fuse.Options{Method: m})
		require.NoError(t, err)
		for range 100 {
			got, err := fuse.Fuse(big, nil, fuse.Options{Method: m})
			require.NoError(t, err)
			require.Equal(t, first, got)
		}
	}
}

func TestFuseInvalid(t *testing.T) {
	lists := map[string][]corpus.Hit{"bm25": ranked("a")}
	tests := []struct {
		name    string
		lists   map[string][]corpus.Hit
		weights map[string]float64
		opts    fuse.Options
	}{
		{name: "unknown method", opts: fuse.Options{Method: "borda"}},
		{name: "negative rank constant", opts: fuse.Options{RankConstant: -1}},
		{name: "NaN rank constant", opts: fuse.Options{RankConstant: math.NaN()}},
		{name: "infinite rank constant", opts: fuse.Options{RankConstant: math.Inf(1)}},
		{name: "negative depth", opts: fuse.Options{Depth: -1}},
		{name: "negative k", opts: fuse.Options{K: -1}},
		{name: "negative limit", opts: fuse.Options{Limit: -1}},
		{name: "negative timeout", opts: fuse.Options{Timeout: -1}},
		{name: "negative weight", weights: map[string]float64{"bm25": -1}},
		{name: "NaN weight", weights: map[string]float64{"bm25": math.NaN()}},
		{name: "infinite weight", weights: map[string]float64{"bm25": math.Inf(1)}},
		{name: "empty name", lists: map[string][]corpus.Hit{"": ranked("a")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.lists
			if in == nil {
				in = lists
			}
			_, err := fuse.Fuse(in, tc.weights, tc.opts)
			require.ErrorIs(t, err, fuse.ErrInvalidOptions)
		})
	}
}

// The top K are the first K of the whole fused list, whatever K.
func TestFuseTopK(t *testing.T) {
	rng := rand.New(rand.NewSource(42))
	lists := map[string][]corpus.Hit{}
	for _, name := range []string{"bm25", "dense", "title"} {
		l := make([]corpus.Hit, 200)
		for i, p := range rng.Perm(300)[:200] {
			l[i] = corpus.Hit{ID: string(rune('A'+p%26)) + string(rune('a'+p/26)), Score: float64(rng.Intn(20))}
		}
		lists[name] = l
	}
	for _, m := range []fuse.Method{fuse.RRF, fuse.MaxNorm, fuse.MinMax} {
		all, err := fuse.Fuse(lists, nil, fuse.Options{Method: m, Depth: 200, K: 1000})
		require.NoError(t, err)
		require.Greater(t, len(all), 250)
		for _, k := range []int{1, 2, 3, 10, 50, 60, 61, 62, 63, 64, 65, 100, len(all) - 1, len(all)} {
			got, err := fuse.Fuse(lists, nil, fuse.Options{Method: m, Depth: 200, K: k})
			require.NoError(t, err)
			assert.Equal(t, all[:k], got, "%s K=%d", m, k)
		}
	}
}

// TestFuseNormDepth: with NormDepth, the fused scores of the top hits do
// not depend on how deep the lists go.
func TestFuseNormDepth(t *testing.T) {
	mk := func(n int, prefix string, step float64) []corpus.Hit {
		hits := make([]corpus.Hit, n)
		for i := range hits {
			hits[i] = corpus.Hit{ID: fmt.Sprintf("%s%03d", prefix, i), Score: 100 - step*float64(i)}
		}
		return hits
	}
	lists := map[string][]corpus.Hit{"a": mk(200, "p", 0.5), "b": mk(200, "p", 0.3)}
	for _, m := range []fuse.Method{fuse.MinMax, fuse.MaxNorm} {
		shallow, err := fuse.Fuse(lists, nil, fuse.Options{Method: m, Depth: 100, K: 10, NormDepth: 100})
		require.NoError(t, err)
		deep, err := fuse.Fuse(lists, nil, fuse.Options{Method: m, Depth: 200, K: 10, NormDepth: 100})
		require.NoError(t, err)
		assert.Equal(t, shallow, deep, string(m))
		whole, err := fuse.Fuse(lists, nil, fuse.Options{Method: m, Depth: 200, K: 10})
		require.NoError(t, err)
		if m == fuse.MinMax {
			assert.NotEqual(t, shallow[1].Score, whole[1].Score, "without NormDepth the deeper list moves the minimum")
		}
	}
	_, err := fuse.Fuse(lists, nil, fuse.Options{NormDepth: -1})
	require.ErrorIs(t, err, fuse.ErrInvalidOptions)
}
