// Package citefind holds the public types of citefind's query pipeline:
// the retriever and reranker names, QueryOptions, and the Result of a
// query (Hit, SourceRank, Picked, and the Stages evaluation reads). The
// work is done in packages of their own, in the order of the pipeline:
//
//	corpus/    the canonical paper store and the readers (BibTeX, JSONL, CSL-JSON)
//	db/        the database folder: layout, lock, status, pipeline configuration, backend
//	build/     ingest and index building (Ensure: what `citefind index` runs)
//	retrieve/  the Retriever and Backend contracts; sparse/ (BM25), dense/, local/
//	fuse/      fusion of ranked lists
//	rerank/, selector/  rerankers and the closed-world picker
//	engine/    the query pipeline: Search, one entry point
//	eval/      benchmarks, metrics, comparisons
//	cite/      [[cite:ID]] placeholders → citations and a bibliography
//	server/    HTTP API, MCP tools, web page
//
// Typical use (docs/architecture.md has the whole data flow):
//
//	_, err := build.Ensure(ctx, dir, build.EnsureOptions{Files: []string{"refs.bib"}})
//	e, err := engine.Open(ctx, dir, engine.Options{})
//	res, err := e.Search(ctx, "dense retrieval outperforms BM25 [12]", citefind.QueryOptions{K: 10})
package citefind
