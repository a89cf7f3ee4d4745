// Package corpus holds citefind's shared value types and its canonical
// paper store.
//
// A Paper is a CSL-JSON shaped bibliographic record with a stable ID
// (PaperID): the normalised DOI when there is one, else "arxiv:" and the
// arXiv id without version, else "h:" and a short hash of normalised title,
// year and first author family name. Readers turn BibTeX, JSON Lines and
// CSL-JSON files into Records; the Store keeps one Paper per ID in SQLite and
// remembers each record's own key as an alias of its paper.
//
//	p := corpus.Paper{Title: "Attention Is All You Need", Year: 2017, ArXiv: "1706.03762v5"}
//	id := corpus.PaperID(p) // "arxiv:1706.03762"
//
// corpus is a leaf: it imports nothing else from citefind.
package corpus
