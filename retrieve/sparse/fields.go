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
