package eval

import (
	"context"
	"slices"

	"github.com/citefind/citefind"
	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/rerank"
)

// Stage names of a pipeline run besides the retrievers' own.
const (
	StageFused    = "fused"    // the fused candidates, before reranking
	StageReranked = "reranked" // the reranker's order
	StagePicked   = "picked"   // the picker's choice first, then the rest
)

// PipelineStages returns the stages a pipeline run reports, in pipeline
// order: each retriever, StageFused when several run, StageReranked with
// a reranker, StagePicked with the picker.
func PipelineStages(retrievers []string, reranked, picked bool) []string {
	out := slices.Clone(retrievers)
	if len(retrievers) > 1 {
		out = append(out, StageFused)
	}
	if reranked {
		out = append(out, StageReranked)
	}
	if picked {
		out = append(out, StagePicked)
	}
	return out
}

// StageLists reads every stage's ranking of one query off the pipeline's
// Result: each retriever's own list, the fused candidates, the reranked
// order (the fused one when the reranker kept it) and the pick first. A
// stage's latency is the time from the start of the search to the end of
// that stage (a retriever's: its own run).
func StageLists(r *citefind.Result) map[string]StageList {
	st := r.Stages
	out := make(map[string]StageList, len(st.Retrievers)+3)
	for name, hits := range st.Retrievers {
		out[name] = StageList{Hits: hits, Latency: st.Durations[name]}
	}
	fused := st.Durations[StageFused]
	out[StageFused] = StageList{Hits: candidateHits(st.Candidates), Latency: fused}
	if st.Reranker != "" && st.Reranker != rerank.NameNone {
		hits := st.Reranked
		if hits == nil {
			hits = rankHits(st.Candidates)
		}
		out[StageReranked] = StageList{Hits: hits, Latency: fused + st.Durations[StageReranked]}
	}
	if r.Picked != nil {
		picked := []corpus.Hit{{ID: r.Picked.ID, Score: float64(len(r.Hits) + 1)}}
		for i, h := range r.Hits {
			if h.ID != r.Picked.ID {
				picked = append(picked, corpus.Hit{ID: h.ID, Score: float64(len(r.Hits) - i)})
			}
		}
		out[StagePicked] = StageList{Hits: picked, Latency: fused + st.Durations[StageReranked] + st.Durations[StagePicked]}
	}
	return out
}

func candidateHits(cs []rerank.Candidate) []corpus.Hit {
	out := make([]corpus.Hit, len(cs))
	for i, c := range cs {
		out[i] = corpus.Hit{ID: c.ID, Score: c.Score}
	}
	return out
}

// rankHits scores a list by its order (len−i).
func rankHits(cs []rerank.Candidate) []corpus.Hit {
	out := make([]corpus.Hit, len(cs))
	for i, c := range cs {
		out[i] = corpus.Hit{ID: c.ID, Score: float64(len(cs) - i)}
	}
	return out
}

// SearchFunc answers one query through the whole pipeline, k hits deep
// (engine.Engine.Search with the run's options).
type SearchFunc func(ctx context.Context, text string, k int) (*citefind.Result, error)

// RunPipeline runs every query of set once through search and scores each
// of the named stages (see PipelineStages) from the query's Result, as
// RunMulti does. Then (optional) is called with every query's Result
// before it is scored, e.g. to rerank the candidates with a
// cross-validated model or to tally the picker, and may add stages.
func RunPipeline(ctx context.Context, set TopicSet, stages []string, search SearchFunc, then func(q Query, r *citefind.Result, lists map[string]StageList) error, opts Options) ([]*Result, error) {
	return RunMulti(ctx, set, stages, func(ctx context.Context, q Query, k int) (map[string]StageList, error) {
		r, err := search(ctx, q.Text, k)
		if err != nil {
			return nil, err
		}
		lists := StageLists(r)
		if then != nil {
			if err := then(q, r, lists); err != nil {
				return nil, err
			}
		}
		return lists, nil
	}, opts)
}
