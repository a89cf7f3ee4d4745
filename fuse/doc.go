// Package fuse runs several retrievers in parallel and fuses their ranked
// lists into one, keeping what each retriever said about every paper.
//
// # Usage
//
//	res, err := fuse.Search(ctx, query, []fuse.Named{
//		{Name: "bm25", Retriever: bm25, Weight: 1},
//		{Name: "dense", Retriever: dense, Weight: 0.3, Timeout: 2 * time.Second},
//	}, fuse.Options{Method: fuse.RRF, Depth: 100, K: 10, AllowPartial: true})
//	if err != nil {
//		return err // ErrAllFailed, ErrNoRetrievers, ErrInvalidOptions, ctx.Err()
//	}
//	for _, w := range res.Warnings {
//		log.Print(w) // "retriever dense: missed its deadline of 2s"
//	}
//	for i, h := range res.Hits { // best first
//		fmt.Println(i+1, h.ID, h.Score, h.Sources["bm25"].Rank, h.Sources["dense"].Rank)
//	}
//
// Fuse does the fusion alone, on lists already retrieved (for evaluation
// and tests):
//
//	hits, err := fuse.Fuse(map[string][]corpus.Hit{"bm25": a, "dense": b},
//		map[string]float64{"dense": 0.3}, fuse.Options{Method: fuse.MinMax})
//
// # Methods
//
// Options.Method picks one of three weighted fusions; in each, a paper
// missing from a list gets nothing from it:
//
//	RRF     Σ_r w_r / (k + rank_r)                       k = Options.RankConstant (60)
//	MaxNorm Σ_r w_r · score_r / max_r                    lists with negative scores: as MinMax
//	MinMax  Σ_r w_r · (score_r − min_r) / (max_r − min_r) all-equal scores: 1
//
// RRF needs no score calibration, but with one strong and one weak
// retriever equal weights can lose recall: in our measurements plain RRF
// of BM25 and a weak embedder lowered recall@10, only fusions weighted
// towards BM25 avoided the loss, and a MinMax interpolation with weight
// 0.3 on the cosine gained about +0.01.
//
// # Provenance and order
//
// Each Hit keeps every retriever's rank (1-based) and raw score in
// Sources, and how many retrievers returned it in Count. A paper returned
// twice by one retriever counts once, at its best position; a paper
// returned by several retrievers is one Hit. A retriever of weight 0 (a
// Shadow, or weight 0 in Fuse's map) is only recorded in Sources: it
// cannot add, remove or reorder hits. Results are best first; equal fused
// scores are ordered by best rank in any weighted list, then by ID, so
// the order is the same on every run whatever the goroutine scheduling.
//
// # Failures
//
// Each retriever gets its own deadline (Named.Timeout or
// Options.Timeout). By default (strict) the first retriever to fail —
// error, missed deadline or panic — cancels the others and Search returns
// an error wrapping its Failure. With Options.AllowPartial the others'
// hits are fused and the failure is reported in Result.Failures and
// Result.Warnings ("retriever NAME: …"); a failure is never dropped
// silently, and when all retrievers fail (all but Shadows) Search returns
// ErrAllFailed.
package fuse
