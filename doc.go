// Package citefind wires citefind's stages together: ingest files into the
// canonical store (corpus), build the derived search indexes
// (retrieve/sparse), and answer queries through them.
//
// A database is a folder:
//
//	DIR/papers.sqlite   the canonical store (corpus.Store)
//	DIR/bm25.bleve/     the BM25 index, derived from the store, rebuilt when stale
//
// Typical use:
//
//	st, _ := corpus.OpenStore(ctx, filepath.Join(dir, citefind.StoreFile))
//	sum, _ := citefind.Ingest(ctx, st, []string{"refs.bib"}, citefind.IngestOptions{})
//	_, _ = citefind.BuildIndexes(ctx, dir, st, citefind.BuildOptions{})
//	e, _ := citefind.Open(ctx, dir, citefind.EngineOptions{})
//	res, _ := e.Query(ctx, "dense retrieval outperforms BM25 [12]", citefind.QueryOptions{K: 10})
package citefind
