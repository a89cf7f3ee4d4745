package sparse

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/citefind/citefind/corpus"
)

// RM3 defaults, those of Anserini's BM25+RM3 baseline.
const (
	DefaultFbDocs     = 10
	DefaultFbTerms    = 10
	DefaultOrigWeight = 0.5
	// maxDFRatio drops expansion terms found in more than this share of
	// papers (Anserini's RM3 term filter).
	maxDFRatio = 0.1
)

// RM3 is pseudo-relevance feedback over BM25 (relevance model 3): it
// retrieves FbDocs papers for the query, builds a term distribution from
// them (each paper's term frequencies normalised by its length, weighted
// by its BM25 score), keeps the FbTerms heaviest terms, mixes them with
// the original query terms (OrigWeight on the original), and retrieves
// again with the expanded query. Terms are filtered as Anserini does:
// 2–20 characters of [a-z0-9], not all digits, in at most 10% of papers.
type RM3 struct {
	// Index is the BM25 index: a *Retriever, or any backend
	// (retrieve.Backend satisfies TermSearcher).
	Index TermSearcher
	// K3 saturates the original query's term frequencies as
	// Options.K3 does (0: none).
	K3 float64
	// Docs returns the text of the given papers (title, abstract and
	// keywords); papers it does not return add nothing to the model.
	Docs func(ctx context.Context, ids []string) (map[string]string, error)
	// FbDocs, FbTerms and OrigWeight default (when 0) to DefaultFbDocs,
	// DefaultFbTerms and DefaultOrigWeight.
	FbDocs     int
	FbTerms    int
	OrigWeight float64
}

// TermSearcher is the BM25 side that RM3 needs.
type TermSearcher interface {
	// BM25 returns up to k papers for weighted analysed terms, best first.
	BM25(ctx context.Context, terms []Term, k int) ([]corpus.Hit, error)
	// DocFreqs returns how many papers hold each analysed term in their
	// text, and the number of papers.
	DocFreqs(ctx context.Context, terms []string) (map[string]int, int, error)
}

// Retrieve returns the top k papers for the expanded query.
func (m *RM3) Retrieve(ctx context.Context, query string, k int) ([]corpus.Hit, error) {
	terms, err := m.Expand(ctx, query)
	if err != nil {
		return nil, err
	}
	return m.Index.BM25(ctx, terms, k)
}

// Expand returns the expanded, weighted query (weights sum to 1).
func (m *RM3) Expand(ctx context.Context, query string) ([]Term, error) {
	fbDocs := m.FbDocs
	if fbDocs <= 0 {
		fbDocs = DefaultFbDocs
	}
	qt, err := QueryTerms(query, m.K3)
	if err != nil {
		return nil, err
	}
	hits, err := m.Index.BM25(ctx, qt, fbDocs)
	if err != nil {
		return nil, err
	}
	return m.ExpandFrom(ctx, query, hits)
}

// ExpandFrom is Expand with the BM25 hits of query already retrieved
// (best first; the first FbDocs are used).
func (m *RM3) ExpandFrom(ctx context.Context, query string, hits []corpus.Hit) ([]Term, error) {
	fbDocs, fbTerms, lambda := m.FbDocs, m.FbTerms, m.OrigWeight
	if fbDocs <= 0 {
		fbDocs = DefaultFbDocs
	}
	if fbTerms <= 0 {
		fbTerms = DefaultFbTerms
	}
	if lambda <= 0 || lambda > 1 {
		lambda = DefaultOrigWeight
	}
	orig, err := QueryTerms(query, m.K3)
	if err != nil || len(orig) == 0 || len(hits) == 0 {
		return orig, err
	}
	hits = hits[:min(len(hits), fbDocs)]
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	texts, err := m.Docs(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("sparse: rm3: feedback papers: %w", err)
	}
	fb := map[string]float64{}
	for _, h := range hits {
		toks := Analyze(texts[h.ID])
		if len(toks) == 0 {
			continue
		}
		w := h.Score / float64(len(toks))
		for _, t := range toks {
			fb[t] += w
		}
	}
	type tw struct {
		t string
		w float64
	}
	cands := make([]tw, 0, len(fb))
	for t, w := range fb {
		if expansionTerm(t) {
			cands = append(cands, tw{t, w})
		}
	}
	slices.SortFunc(cands, func(a, b tw) int {
		if c := cmp.Compare(b.w, a.w); c != 0 {
			return c
		}
		return strings.Compare(a.t, b.t)
	})
	// Document frequencies are asked in chunks, best candidates first,
	// until FbTerms terms are kept: one round trip for most queries.
	var kept []tw
	var sum float64
	for start := 0; start < len(cands) && len(kept) < fbTerms; {
		end := min(len(cands), start+2*(fbTerms-len(kept)))
		terms := make([]string, 0, end-start)
		for _, c := range cands[start:end] {
			terms = append(terms, c.t)
		}
		df, n, err := m.Index.DocFreqs(ctx, terms)
		if err != nil {
			return nil, fmt.Errorf("sparse: rm3: document frequencies: %w", err)
		}
		maxDF := int(maxDFRatio * float64(n))
		for _, c := range cands[start:end] {
			if len(kept) == fbTerms {
				break
			}
			if d, ok := df[c.t]; ok && d > maxDF {
				continue
			}
			kept = append(kept, c)
			sum += c.w
		}
		start = end
	}
	var osum float64
	for _, t := range orig {
		osum += t.Weight
	}
	weights := make(map[string]float64, len(orig)+len(kept))
	order := make([]string, 0, len(orig)+len(kept))
	add := func(t string, w float64) {
		if _, ok := weights[t]; !ok {
			order = append(order, t)
		}
		weights[t] += w
	}
	for _, t := range orig {
		add(t.Text, lambda*t.Weight/osum)
	}
	for _, c := range kept {
		add(c.t, (1-lambda)*c.w/sum)
	}
	out := make([]Term, len(order))
	for i, t := range order {
		out[i] = Term{Text: t, Weight: weights[t]}
	}
	return out, nil
}

// expansionTerm reports whether t may expand a query: 2–20 characters of
// [a-z0-9], not all digits.
func expansionTerm(t string) bool {
	if len(t) < 2 || len(t) > 20 {
		return false
	}
	digits := true
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case c >= '0' && c <= '9':
		case c >= 'a' && c <= 'z':
			digits = false
		default:
			return false
		}
	}
	return !digits
}
