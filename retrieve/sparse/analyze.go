package sparse

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
	"github.com/blevesearch/bleve/v2/registry"
	porterstemmer "github.com/blevesearch/go-porterstemmer"
)

// AnalyzerName is the bleve analyzer used for every field at index time
// and for query text at search time: bleve's "en" analyzer (unicode word
// tokenizer, English possessive filter, lower case, English stop words,
// Porter stemmer).
const AnalyzerName = en.AnalyzerName

// analyzer returns the shared analyzer of query and candidate texts:
// bleve's "en" analyzer (the index's) built from the same tokenizer and
// filters, with its Porter stemmer behind a cache of stems by surface
// form (the stemmer is a pure function; a reranked query stems the words
// of 100 candidates' titles and abstracts). Safe for concurrent use.
var analyzer = sync.OnceValues(func() (analysis.Analyzer, error) {
	c := registry.NewCache()
	tok, err := c.TokenizerNamed(unicode.Name)
	if err != nil {
		return nil, fmt.Errorf("sparse: analyzer %q: %w", AnalyzerName, err)
	}
	var filters []analysis.TokenFilter
	for _, name := range []string{en.PossessiveName, lowercase.Name, en.StopName} {
		f, err := c.TokenFilterNamed(name)
		if err != nil {
			return nil, fmt.Errorf("sparse: analyzer %q: %w", AnalyzerName, err)
		}
		filters = append(filters, f)
	}
	filters = append(filters, stemCache)
	return &analysis.DefaultAnalyzer{Tokenizer: tok, TokenFilters: filters}, nil
})

// maxStems bounds the stem cache (distinct surface forms).
const maxStems = 1 << 18

// stemCache is the stem cache of analyzer() and Analyze.
var stemCache = &cachedPorter{stems: map[string]string{}}

// cachedPorter is bleve's "stemmer_porter" token filter (the last filter
// of the "en" analyzer) with its stems cached by surface form.
type cachedPorter struct {
	mu    sync.RWMutex
	stems map[string]string
}

func (c *cachedPorter) Filter(input analysis.TokenStream) analysis.TokenStream {
	for _, t := range input {
		if t.KeyWord {
			continue
		}
		t.Term = []byte(c.stem(t.Term))
	}
	return input
}

// stem returns the Porter stem of a word (lower case already).
func (c *cachedPorter) stem(word []byte) string {
	c.mu.RLock()
	s, ok := c.stems[string(word)]
	c.mu.RUnlock()
	if ok {
		return s
	}
	s = string(analysis.BuildTermFromRunes(porterstemmer.StemWithoutLowerCasing(bytes.Runes(word))))
	c.mu.Lock()
	if len(c.stems) < maxStems {
		c.stems[string(word)] = s
	}
	c.mu.Unlock()
	return s
}

// Analyze returns the terms of text as they are indexed and searched: the
// output of the "en" analyzer, in text order, with repeats. Stop words are
// dropped, so a stop-word-only text gives no terms. ASCII text is
// segmented without bleve's token streams, 3–4× faster, with the same
// result (fastanalyze.go).
func Analyze(text string) []string {
	f, err := fast()
	if err != nil || text == "" {
		return nil
	}
	return f.appendTerms(make([]string, 0, len(text)/8), text)
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
