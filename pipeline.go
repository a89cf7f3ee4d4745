package citefind

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/ollama/ollama/api"

	"github.com/citefind/citefind/internal/llm"
	"github.com/citefind/citefind/rerank"
	"github.com/citefind/citefind/selector"
)

// Picked is the paper chosen to cite (Result.Picked): always one of the
// hits, with whether the top-rank fallback was used and why.
type Picked = selector.Pick

// RerankDepth is how many fused candidates a reranker reorders (at least
// the number of hits asked for).
const RerankDepth = 100

// RerankerNames lists the rerankers Query accepts.
var RerankerNames = []string{rerank.NameNone, rerank.NameLearned, rerank.NameLLM}

// LearnedLoader loads the learned reranker from a model file ("" means
// the model that ships with citefind). It is set by the package that
// implements the learned reranker; nil means it is not built in.
var LearnedLoader func(path string) (rerank.Reranker, error)

// Reranker returns the named reranker, created on first use.
func (e *Engine) Reranker(name string) (rerank.Reranker, error) {
	if name == "" {
		name = rerank.NameNone
	}
	e.rerankMu.Lock()
	defer e.rerankMu.Unlock()
	if r, ok := e.rerankers[name]; ok {
		return r, nil
	}
	var r rerank.Reranker
	switch name {
	case rerank.NameNone:
		r = rerank.None{}
	case rerank.NameLearned:
		if LearnedLoader == nil {
			return nil, fmt.Errorf("the learned reranker is not built into this binary")
		}
		var err error
		if r, err = LearnedLoader(e.opts.RerankModel); err != nil {
			return nil, err
		}
	case rerank.NameLLM:
		client, err := e.ollama()
		if err != nil {
			return nil, err
		}
		if r, err = rerank.NewLLM(client, rerank.LLMOptions{Model: llm.Model(e.opts.LLM)}); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("unknown reranker %q (available: %s)", name, strings.Join(RerankerNames, ", "))
	}
	if e.rerankers == nil {
		e.rerankers = map[string]rerank.Reranker{}
	}
	e.rerankers[name] = r
	return r, nil
}

func (e *Engine) ollama() (*api.Client, error) {
	if e.opts.Ollama != nil {
		return e.opts.Ollama, nil
	}
	c, err := api.ClientFromEnvironment()
	if err != nil {
		return nil, fmt.Errorf("Ollama client (OLLAMA_HOST): %w", err)
	}
	return c, nil
}

// Picker returns the picker: the LLM picker when a chat model is
// configured (EngineOptions.LLM or $CITEFIND_LLM), else the top rank.
func (e *Engine) Picker() (selector.Picker, error) {
	e.rerankMu.Lock()
	defer e.rerankMu.Unlock()
	if e.pickerVal != nil {
		return e.pickerVal, nil
	}
	if e.opts.LLM == "" && os.Getenv(llm.EnvModel) == "" {
		e.pickerVal = selector.TopRank{}
		return e.pickerVal, nil
	}
	client, err := e.ollama()
	if err != nil {
		return nil, err
	}
	p, err := selector.New(client, selector.Options{Model: llm.Model(e.opts.LLM)})
	if err != nil {
		return nil, err
	}
	e.pickerVal = p
	return p, nil
}

// Ranked runs retrieval, fusion and the reranker named by opts.Rerank, and
// returns up to opts.K candidates (default 10) best first, the cleaned
// text and warnings. The reranker reorders the top RerankDepth fused
// candidates; a reranker failure returns the fused order with a warning.
func (e *Engine) Ranked(ctx context.Context, text string, opts QueryOptions) ([]rerank.Candidate, string, []string, error) {
	k := opts.K
	if k <= 0 {
		k = 10
	}
	rr, err := e.Reranker(opts.Rerank)
	if err != nil {
		return nil, "", nil, err
	}
	o := opts
	if rr.Name() != rerank.NameNone {
		o.K = max(k, RerankDepth)
	}
	cands, cleaned, warnings, err := e.Candidates(ctx, text, o)
	if err != nil {
		return nil, cleaned, nil, err
	}
	if rr.Name() != rerank.NameNone && len(cands) > 1 {
		out, err := rr.Rerank(ctx, cleaned, cands)
		if err != nil {
			return nil, cleaned, nil, fmt.Errorf("rerank: %w", err)
		}
		warnings = append(warnings, out.Warnings...)
		if len(out.Candidates) == len(cands) {
			cands = out.Candidates
		} else {
			warnings = append(warnings, fmt.Sprintf("the %s reranker returned %d of %d candidates; kept the fused order", rr.Name(), len(out.Candidates), len(cands)))
		}
	}
	if len(cands) > k {
		cands = cands[:k]
	}
	return cands, cleaned, warnings, nil
}

// Query answers one query with paper metadata attached: retrieval,
// fusion, the reranker and, with opts.Pick, the picker.
func (e *Engine) Query(ctx context.Context, text string, opts QueryOptions) (*Result, error) {
	cands, cleaned, warnings, err := e.Ranked(ctx, text, opts)
	if err != nil {
		return nil, err
	}
	res := &Result{Query: text, Cleaned: cleaned, Hits: []ResultHit{}, Warnings: warnings}
	for i, c := range cands {
		rh := ResultHit{
			ID: c.ID, Title: c.Title, Year: c.Year, Venue: c.Venue, DOI: c.DOI,
			Rank: i + 1, Score: c.Score, Authors: c.Authors,
			Sources: make(map[string]SourceRank, len(c.Sources)),
		}
		for name, src := range c.Sources {
			rh.Sources[name] = SourceRank{Rank: src.Rank, Score: src.Score}
		}
		res.Hits = append(res.Hits, rh)
	}
	if opts.Pick && len(cands) > 0 {
		p, err := e.Picker()
		if err != nil {
			return nil, err
		}
		pick, err := p.Pick(ctx, cleaned, cands)
		if err != nil {
			return nil, fmt.Errorf("pick: %w", err)
		}
		res.Picked = &pick
		if pick.Fallback {
			res.Warnings = append(res.Warnings, "picked the top-ranked candidate: "+pick.Reason)
		}
	}
	return res, nil
}
