package weaviate_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/retrieve"
	"github.com/citefind/citefind/retrieve/sparse"
)

// A small synthetic collection: Zipfian words, most real English (so the
// stemmer folds inflections), some pseudo-words, stop words mixed in.
var words = strings.Fields(`retrieval retrieve retrieved model models learning learned neural network
networks query queries document documents ranking ranked search searching user users evaluation
evaluate data dataset method methods approach results performance system systems information
relevance feedback propose proposed paper papers task training trained representation embedding
embeddings semantic language text word words sentence citation citations recommendation graph node
knowledge entity attention transformer pretrained benchmark experiments improve improved effective
efficient large scale study analysis framework novel baseline accuracy precision recall metric
collection corpus index indexing term terms frequency weighting probabilistic distribution sparse
dense vector similarity score scoring loss optimization gradient algorithm context session click
behavior interaction visual image video social web page link summarization question answer
conversational dialogue domain transfer multilingual topic cluster classification supervised
reinforcement policy reward bias fairness privacy robust adversarial noise temporal stream product
item collaborative filtering matrix factorization sequential recurrent convolutional layer deep
encoder decoder memory latency distributed scalable`)

var stop = strings.Fields(`the of and a to in is for that with on as by this we are from an be at it which`)

type gen struct{ r *rand.Rand }

func (g gen) word() string {
	x := g.r.Float64()
	switch {
	case x < 0.25:
		return stop[g.r.IntN(len(stop))]
	case x < 0.9:
		i := int(float64(len(words)) * g.r.Float64() * g.r.Float64() * g.r.Float64())
		return words[i]
	default:
		return fmt.Sprintf("zq%dx", g.r.IntN(400))
	}
}

func (g gen) text(n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = g.word()
	}
	return strings.Join(ws, " ")
}

// testPapers returns n deterministic papers (records with DOIs).
func testPapers(n int, seed uint64) []corpus.Record {
	g := gen{rand.New(rand.NewPCG(seed, 7))}
	recs := make([]corpus.Record, n)
	for i := range recs {
		p := corpus.Paper{
			Type:     "article-journal",
			Title:    g.text(4 + g.r.IntN(8)),
			Abstract: g.text(30 + g.r.IntN(120)),
			Authors:  []corpus.Author{{Family: fmt.Sprintf("Author%d", g.r.IntN(50)), Given: "A."}},
			Year:     1990 + g.r.IntN(35),
			DOI:      fmt.Sprintf("10.9999/t%d.%04d", seed, i),
			Venue:    "Journal of Tests",
		}
		if i%3 == 0 {
			p.Keywords = []string{g.text(2), g.text(1)}
		}
		if i%17 == 0 {
			p.Abstract = "" // some papers have only a title
		}
		p.ID = corpus.PaperID(p)
		recs[i] = corpus.Record{Paper: p, Key: fmt.Sprintf("k%d", i), File: "test.bib", Line: i + 1, Ref: fmt.Sprintf("k%d", i)}
	}
	return recs
}

// testQueries returns n queries: spans of the papers' text plus noise.
func testQueries(recs []corpus.Record, n int, seed uint64) []string {
	g := gen{rand.New(rand.NewPCG(seed, 11))}
	out := make([]string, n)
	for i := range out {
		p := recs[g.r.IntN(len(recs))].Paper
		ws := strings.Fields(p.Title + " " + p.Abstract)
		start := g.r.IntN(max(1, len(ws)-8))
		span := ws[start:min(len(ws), start+3+g.r.IntN(12))]
		out[i] = strings.Join(span, " ") + " " + g.text(1+g.r.IntN(4))
	}
	return out
}

// newStore makes a store holding recs.
func newStore(t *testing.T, recs []corpus.Record) *corpus.Store {
	t.Helper()
	st, err := corpus.OpenStore(t.Context(), filepath.Join(t.TempDir(), "store.db"))
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	_, err = st.Ingest(t.Context(), recs)
	require.NoError(t, err)
	return st
}

// pipelineBM25 are the BM25 settings citefind ships (engine defaults).
var pipelineBM25 = retrieve.BM25Params{K1: 2, B: 0.75, FieldWeights: map[string]float64{sparse.FieldText: 1, sparse.FieldTitle: 0.25}}

// localIndex builds the local BM25 index of the store's papers.
func localIndex(t *testing.T, st *corpus.Store) *sparse.Retriever {
	t.Helper()
	ctx := t.Context()
	var papers []corpus.Paper
	require.NoError(t, st.Each(ctx, func(p corpus.Paper) error { papers = append(papers, p); return nil }))
	dir := filepath.Join(t.TempDir(), "sparse")
	i := 0
	_, err := sparse.Build(ctx, dir, sparse.BuildOptions{}, func() (corpus.Paper, bool, error) {
		if i == len(papers) {
			return corpus.Paper{}, false, nil
		}
		i++
		return papers[i-1], true, nil
	}, nil)
	require.NoError(t, err)
	r, err := sparse.Open(dir, sparse.Options{K1: pipelineBM25.K1, B: pipelineBM25.B, K3: 1, FieldWeights: pipelineBM25.FieldWeights})
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	return r
}

// weightedQuery is the query as the engine weighs it (k3 = 1).
func weightedQuery(t *testing.T, q string) []retrieve.Term {
	t.Helper()
	ts, err := sparse.QueryTerms(q, 1)
	require.NoError(t, err)
	return ts
}

var _ = context.Background
