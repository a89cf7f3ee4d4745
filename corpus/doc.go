// Package corpus holds citefind's shared value types and its canonical
// paper store.
//
// Every record keeps its full CSL-JSON item, losslessly: a CSL-JSON or
// JSON Lines item as it was given (every variable, name part, date form and
// unknown key), a BibTeX entry as the item pandoc would make of it
// (docs/bibtex.md). A Paper is what retrieval needs of an item
// (PaperFromItem), with a stable ID (PaperID): the normalised DOI when
// there is one, else "arxiv:" and the arXiv id without version, else "h:"
// and a short hash of normalised title, year and first author family name.
// Every ID and alias is a safe ID (ValidID, IDPattern): it fits a
// [[cite:ID]] placeholder and a URL path as it is. Readers turn BibTeX,
// JSON Lines and CSL-JSON files into Records; the Store keeps one paper per
// ID in SQLite, its CSL-JSON item (Items) the merge of its records' items,
// and remembers each record's own key as an alias of its paper.
//
//	p := corpus.Paper{Title: "Attention Is All You Need", Year: 2017, ArXiv: "1706.03762v5"}
//	id := corpus.PaperID(p) // "arxiv:1706.03762"
//
// The store keeps every record it is given, and a paper is the merge of its
// records' items in precedence order (file first ingested, then line): the
// first record wins a conflicting variable, later ones fill gaps. When a file changes,
// IngestSource applies its changed and new records and FinishSource withdraws
// the ones it no longer holds; the papers concerned are recomputed, a paper
// left without records is removed, and each change bumps the generation that
// derived indexes catch up with (EachSince, RemovedSince). Records given
// again unchanged change nothing. A file no longer given is not a deletion;
// Remove is.
//
// corpus is a leaf: it imports nothing else from citefind.
package corpus
