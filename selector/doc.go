// Package selector is the closed-world picker: given a query and the
// (reranked) candidate papers, it chooses the one paper to cite, and it
// can only ever choose one of the candidates.
//
// LLM asks an Ollama chat model (structured output: a reasoning field,
// then the chosen candidate's ID, title and year) and maps the answer
// back to a candidate by ID, then by exact normalised title, then by
// fuzzy title (similarity >= 0.9, year as the tie-break). When nothing
// maps, or the model fails, the top-ranked candidate is returned. TopRank
// is the picker without a model. Every Pick says whether the fallback was
// used and why, and whether the raw answer named a paper that is not a
// candidate (NamedNonCandidate), which Tally turns into the hallucination
// figures of an evaluation.
//
//	p, err := selector.New(nil, selector.Options{Model: "qwen2.5:3b"})
//	...
//	pick, err := p.Pick(ctx, query, outcome.Candidates)
//	if pick.Fallback {
//		log.Printf("picker fell back to the top rank: %s", pick.Reason)
//	}
package selector
