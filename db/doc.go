// Package db is a citefind database: a folder holding the canonical paper
// store and what is derived from it.
//
//	DIR/papers.sqlite      the canonical store (corpus.Store)
//	DIR/pipeline.json      the query pipeline (Pipeline): retrievers, fusion, weights, reranker
//	DIR/bm25.bleve/        the local backend's BM25 index
//	DIR/dense/             the local backend's dense index (with an embedder)
//	DIR/lsa.model          the builtin embedder, trained on the database's papers
//	DIR/embeddings.sqlite  embeddings cached by (model, text)
//	DIR/lock               the write lock (Lock)
//
// DB couples the folder and its store; it records the embedder and the
// backend that holds the search indexes ("local", or a remote URL). Every
// path that creates a database writes its pipeline (EnsurePipeline) and
// every path that answers from one reads it (QueryPipeline), so query,
// eval, serve and mcp answer the same text with the same list. ReadStatus
// says whether the store and the indexes agree.
//
//	d, err := db.Open(ctx, dir)
//	defer d.Close()
//	p, warnings, err := d.QueryPipeline(ctx)
package db
