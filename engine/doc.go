// Package engine is citefind's query pipeline: the database's retrievers
// run in parallel over its backend (BM25 and its query variants, the
// embedding index), their lists are fused, a reranker reorders the fused
// candidates and a closed-world picker chooses the one to cite. Search is
// the one entry point; its Result carries the hits and, in Stages, what
// each stage produced, which evaluation reads, so that eval measures what
// query answers.
//
//	e, err := engine.Open(ctx, dir, engine.Options{})
//	defer e.Close()
//	res, err := e.Search(ctx, "dense retrieval outperforms BM25 [12]", citefind.QueryOptions{K: 10})
//	for _, h := range res.Hits {
//		fmt.Println(h.Rank, h.ID, h.Title)
//	}
package engine
