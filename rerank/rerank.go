// Package rerank reorders fused candidates before a paper is picked.
//
// A Reranker takes the query and the fused candidate list and returns a
// permutation of it. Implementations: None (the fused order), the learned
// reranker (rerank/learned) and the listwise LLM reranker (LLM, through
// Ollama chat). A reranker never adds or drops a candidate: whatever goes
// wrong, the caller gets every input candidate back exactly once.
package rerank

import (
	"context"

	"github.com/citefind/citefind/fuse"
)

// Names accepted by --rerank.
const (
	NameNone    = "none"
	NameLearned = "learned"
	NameLLM     = "llm"
)

// Candidate is one fused hit with the paper's metadata, as offered to a
// reranker and a picker.
type Candidate struct {
	ID       string
	Title    string
	Abstract string
	Authors  []string // display names, byline order
	Year     int      // 0 when unknown
	Venue    string
	DOI      string
	Keywords []string
	// Rank is the 1-based fused rank; Score the fused score.
	Rank  int
	Score float64
	// Sources holds every retriever's (or query variant's) rank and score
	// for this paper, keyed by retriever name; see fuse.Hit.
	Sources map[string]fuse.Source
}

// Outcome is what a reranker returns.
type Outcome struct {
	// Candidates is a permutation of the input candidates, best first.
	Candidates []Candidate
	// Scores, when not nil, are the reranker's scores, parallel to
	// Candidates (higher is better).
	Scores []float64
	// Fallback is true when the reranker failed and Candidates is the
	// input order; Warnings says why.
	Fallback bool
	Warnings []string
	// Unknown counts the IDs a model named that were not candidates
	// (ignored when ordering); 0 for rerankers without a model.
	Unknown int
}

// Reranker reorders candidates. query is the text as the user gave it,
// citation markers included (a reranker may read where they are and
// cleans what it needs). Rerank returns an error only when ctx is
// cancelled by the caller or the input is unusable; a model failure or a
// missed deadline returns the input order with Fallback set and a warning.
// Implementations are safe for concurrent use.
type Reranker interface {
	Name() string
	Rerank(ctx context.Context, query string, cands []Candidate) (Outcome, error)
}

// RetrieverBound is implemented by rerankers made for the lists of
// particular retrievers (the learned reranker, whose features include
// each retriever's rank and score). CheckRetrievers returns an error,
// saying why, when a search fusing the named retrievers cannot be
// reranked by it; callers check before reranking.
type RetrieverBound interface {
	CheckRetrievers(names []string) error
}

// Preparer is implemented by rerankers that can do the query's share of
// their work before the candidates are known. The engine calls Prepare in
// a goroutine when a reranked search starts, so that this work overlaps
// retrieval and the candidates' lookup; Rerank gives the same result
// whether Prepare was called or not, before or while it runs.
type Preparer interface {
	Prepare(query string)
}

// DepthBound is implemented by rerankers made for a given number of
// candidates (the learned reranker: its features are normalised over the
// candidates of a query, as many as its model was trained on). Depth is
// how many of the fused candidates the caller should hand to Rerank; 0
// means any number.
type DepthBound interface {
	Depth() int
}

// None keeps the fused order.
type None struct{}

// Name returns NameNone.
func (None) Name() string { return NameNone }

// Rerank returns cands unchanged.
func (None) Rerank(ctx context.Context, query string, cands []Candidate) (Outcome, error) {
	if err := ctx.Err(); err != nil {
		return Outcome{}, err
	}
	return Outcome{Candidates: cands}, nil
}
