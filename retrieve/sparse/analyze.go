package sparse

import (
	"fmt"
	"sync"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/registry"
)

// AnalyzerName is the bleve analyzer used for every field at index time
// and for query text at search time: bleve's "en" analyzer (unicode word
// tokenizer, English possessive filter, lower case, English stop words,
// Porter stemmer).
const AnalyzerName = en.AnalyzerName

// analyzer returns the shared, immutable "en" analyzer. bleve analyzers are
// stateless and safe for concurrent use (bleve's analysis queue runs them
// from several goroutines).
var analyzer = sync.OnceValues(func() (analysis.Analyzer, error) {
	a, err := registry.NewCache().AnalyzerNamed(AnalyzerName)
	if err != nil {
		return nil, fmt.Errorf("sparse: analyzer %q: %w", AnalyzerName, err)
	}
	return a, nil
})

// Analyze returns the terms of text as they are indexed and searched: the
// output of the "en" analyzer, in text order, with repeats. Stop words are
// dropped, so a stop-word-only text gives no terms.
func Analyze(text string) []string {
	a, err := analyzer()
	if err != nil || text == "" {
		return nil
	}
	toks := a.Analyze([]byte(text))
	out := make([]string, len(toks))
	for i, t := range toks {
		out[i] = string(t.Term)
	}
	return out
}

// queryTerm is one distinct analyzed query term with its query frequency.
type queryTerm struct {
	term []byte
	qtf  float64
}

// analyzeQuery returns the distinct analyzed terms of q with their
// frequencies, in first-occurrence order (a fixed order keeps the floating
// point summation, and so tie-breaking, deterministic).
func analyzeQuery(q string) ([]queryTerm, error) {
	a, err := analyzer()
	if err != nil {
		return nil, err
	}
	toks := a.Analyze([]byte(q))
	out := make([]queryTerm, 0, len(toks))
	pos := make(map[string]int, len(toks))
	for _, t := range toks {
		if i, ok := pos[string(t.Term)]; ok {
			out[i].qtf++
			continue
		}
		pos[string(t.Term)] = len(out)
		out = append(out, queryTerm{term: append([]byte(nil), t.Term...), qtf: 1})
	}
	return out, nil
}
