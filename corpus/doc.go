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
// The store keeps every record it is given, and a paper is the merge of its
// records in precedence order (file first ingested, then line): the first
// record wins a conflicting field, later ones fill gaps. When a file changes,
// IngestSource applies its changed and new records and FinishSource withdraws
// the ones it no longer holds; the papers concerned are recomputed, a paper
// left without records is removed, and each change bumps the generation that
// derived indexes catch up with (EachSince, RemovedSince). Records given
// again unchanged change nothing. A file no longer given is not a deletion;
// Remove is.
//
// corpus is a leaf: it imports nothing else from citefind.
package corpus
