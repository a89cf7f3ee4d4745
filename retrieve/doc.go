// Package retrieve holds what every retriever shares: query cleaning.
// Retrievers live in retrieve/sparse and retrieve/dense.
//
// Clean turns a masked-citation excerpt into query text: citation markers,
// author-year citations, LaTeX \cite commands and URLs go, the prose stays.
//
//	q := retrieve.Clean("BM25 [12, 14–16] and its variants (Robertson et al., 2009) remain strong [CITATION].")
//	// q == "BM25 and its variants remain strong."
package retrieve
