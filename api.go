package citefind

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/rerank"
	"github.com/citefind/citefind/selector"
)

// Retriever names: the query variants a pipeline runs in parallel and
// fuses (QueryOptions.Retrievers, a database's pipeline).
const (
	// RetrieverBM25 is BM25 over the cleaned query text.
	RetrieverBM25 = "bm25"
	// RetrieverRM3 is BM25 over the query expanded by pseudo-relevance
	// feedback (RM3, see sparse.RM3).
	RetrieverRM3 = "rm3"
	// RetrieverCiting is BM25 over each sentence of the query that holds
	// a citation marker, the lists fused by RRF: for paragraph-long
	// contexts, the sentences around the citations.
	RetrieverCiting = "citing"
	// RetrieverDense is the embedding index (the database's embedder).
	RetrieverDense = "dense"
)

// SourceFused names, in a reranked Hit's Sources, the hit's fused rank
// and score (its Score is then the reranker's).
const SourceFused = "fused"

// RetrieverNames lists every retriever name, in pipeline order.
var RetrieverNames = []string{RetrieverBM25, RetrieverRM3, RetrieverCiting, RetrieverDense}

// RerankerNames lists the rerankers (QueryOptions.Rerank).
var RerankerNames = []string{rerank.NameNone, rerank.NameLearned, rerank.NameLLM}

// CheckRetrievers fails on a name not in RetrieverNames.
func CheckRetrievers(names []string) error {
	for _, r := range names {
		if !slices.Contains(RetrieverNames, r) {
			return fmt.Errorf("unknown retriever %q (available: %s)", r, strings.Join(RetrieverNames, ", "))
		}
	}
	return nil
}

// CheckReranker fails on a name not in RerankerNames ("" is none).
func CheckReranker(name string) error {
	if name != "" && !slices.Contains(RerankerNames, name) {
		return fmt.Errorf("unknown reranker %q (available: %s)", name, strings.Join(RerankerNames, ", "))
	}
	return nil
}

// QueryOptions configure one query. The zero value runs the database's
// pipeline and returns 10 hits.
type QueryOptions struct {
	// K is the number of hits to return; 0 means 10.
	K int
	// Retrievers overrides the pipeline's retrievers (RetrieverNames);
	// nil means the database's. With several, their lists are fused and
	// Hit.Score is the fused score.
	Retrievers []string
	// Raw searches the text as given, without removing citation markers.
	Raw bool
	// Rerank names the reranker applied to the fused candidates
	// (RerankerNames): "" means the pipeline's (none unless configured).
	Rerank string
	// Pick chooses the one paper to cite among the hits (Result.Picked).
	// Without an LLM picker it is the top-ranked candidate, marked as a
	// fallback.
	Pick bool
}

// SourceRank is one retriever's view of a hit.
type SourceRank struct {
	Rank  int     `json:"rank"`  // 1-based
	Score float64 `json:"score"` // the retriever's own score, higher is better
}

// Hit is one candidate paper of a Result, best first. Score is the last
// stage's score: the reranker's when one reordered the hits (Sources then
// also holds the reranker's and the fused rank and score), else the fused
// score (one retriever: its own score).
type Hit struct {
	ID string `json:"id"`
	// Key is the key the user's file gave the paper (a BibTeX citation
	// key, a CSL-JSON id), when it differs from ID; Aliases are all of
	// them. Either works wherever an ID does ([[cite:KEY]], the API).
	Key     string                `json:"key,omitempty"`
	Aliases []string              `json:"aliases,omitempty"`
	Title   string                `json:"title"`
	Year    int                   `json:"year,omitempty"`
	Authors []string              `json:"authors"`
	Venue   string                `json:"venue,omitempty"`
	DOI     string                `json:"doi,omitempty"`
	Rank    int                   `json:"rank"`
	Score   float64               `json:"score"`
	Sources map[string]SourceRank `json:"sources"`
}

// Picked is the paper chosen to cite (Result.Picked): always one of the
// hits, with whether the top-rank fallback was used and why.
type Picked = selector.Pick

// Result is the answer to one query, in the JSON shape of `query --json`,
// with what each stage of the pipeline produced (Stages, not in JSON).
type Result struct {
	Query    string   `json:"query"`
	Cleaned  string   `json:"cleaned"`
	Hits     []Hit    `json:"hits"`
	Picked   *Picked  `json:"picked"`
	Warnings []string `json:"warnings,omitempty"`
	Stages   Stages   `json:"-"`
}

// Stages is what each stage of the pipeline produced for one query, for
// evaluation: the same search that made Result.Hits.
type Stages struct {
	// Retrievers holds each retriever's own list, best first, as deep as
	// the pipeline asked (at least the fusion depth).
	Retrievers map[string][]corpus.Hit
	// Candidates are the fused candidates with their metadata, best
	// first: the reranker's input.
	Candidates []rerank.Candidate
	// Reranker is the reranker that ran ("" or "none": none).
	Reranker string
	// Reranked is the reranker's order of Candidates, best first, with
	// its scores (nil without a reranker, or when it fell back).
	Reranked []corpus.Hit
	// Durations holds how long each stage took: each retriever by name,
	// and "fused" (retrieval and fusion, the retrievers run in
	// parallel), "reranked", "picked".
	Durations map[string]time.Duration
}
