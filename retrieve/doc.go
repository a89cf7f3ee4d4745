// Package retrieve holds the contracts every retriever and index backend
// shares, and query cleaning:
//
//   - Retriever (and RetrieverFunc): a ranked list of paper hits for a
//     query, best first; fuse runs several in parallel and eval scores
//     them.
//   - Backend: where a database's search indexes live (BM25, vectors,
//     paper lookup, statistics). Backends register themselves by URL
//     scheme (Register, OpenBackend): retrieve/local is the default, the
//     bleve and chromem-go indexes in the database folder.
//   - Clean turns a masked-citation excerpt into query text: citation
//     markers, author-year citations, LaTeX \cite commands and URLs go,
//     the prose stays; CitingSentences finds the sentences that carried
//     a citation.
//
// Retrievers live in retrieve/sparse (BM25, RM3) and retrieve/dense.
//
//	q := retrieve.Clean("BM25 [12, 14–16] and its variants (Robertson et al., 2009) remain strong [CITATION].")
//	// q == "BM25 and its variants remain strong."
//	b, err := retrieve.OpenBackend(ctx, "local", retrieve.Env{Dir: dir, Store: st})
package retrieve
