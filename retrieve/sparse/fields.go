package sparse

import "github.com/citefind/citefind/corpus"

// FieldValue returns the text Build indexes in field f of p (FieldText is
// title, abstract and keywords joined by newlines; keywords are joined
// with ". "), "" for an unknown field. Analyze(FieldValue(p, f)) is the
// exact token list, and its length the exact field length, that BM25
// scores p's field f with: a remote backend that stores these tokens ranks
// as this package does.
func FieldValue(p *corpus.Paper, f string) string { return fieldValue(p, f) }

// KnownFields returns every field Build can index, in the order Retrieve
// sums their scores (FieldText, FieldTitle, FieldAbstract, FieldKeywords).
func KnownFields() []string { return knownFields() }

// WeightQuery returns the distinct analyzed terms of query in
// first-occurrence order, each weighted by its frequency in the query,
// saturated by k3 when k3 > 0 (qtf·(k3+1)/(k3+qtf)): the weighted query
// that Retriever.Retrieve scores with Options.K3 = k3, without an index.
func WeightQuery(query string, k3 float64) ([]Term, error) {
	terms, err := analyzeQuery(query)
	if err != nil {
		return nil, err
	}
	out := make([]Term, len(terms))
	for i, t := range terms {
		w := t.qtf
		if k3 > 0 {
			w = w * (k3 + 1) / (k3 + w)
		}
		out[i] = Term{Text: string(t.term), Weight: w}
	}
	return out, nil
}
