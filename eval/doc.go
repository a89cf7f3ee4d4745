// Package eval runs citation-retrieval benchmarks and scores them the way
// trec_eval does.
//
// It holds the benchmark loaders (ACM-CR's TREC topics and qrels, the
// generic JSON Lines query format), the per-query metrics (recall@K,
// nDCG@K with binary gains, MRR@K, accuracy@1), the runner that sends every
// query of a topic set to a Retriever, and the writers for TREC run files,
// Markdown tables and the JSON report of `citefind eval --json`.
//
//	acm, err := eval.LoadACMCR(datadir.Bench("acm-cr"))   // both topic sets
//	if err != nil { … }
//	// index the records of acm.BibFiles for which acm.Keep(rec) is true, then:
//	var results []*eval.Result
//	for _, set := range acm.Sets {
//		res, err := eval.Run(ctx, set, retriever, eval.Options{
//			Bench: "acm-cr", Stage: "bm25", K: 100,
//			Resolve: resolve, // qrels DOIs → paper IDs (the store's aliases)
//		})
//		if err != nil { … } // only cancellation ends a run early
//		results = append(results, res)
//	}
//	eval.WriteMarkdown(os.Stdout, results)
//	eval.WriteJSON(os.Stdout, results)
//
// # Conventions
//
// Metric values are in [0, 1] and macro-averaged over the queries of a topic
// set. A query whose retrieval fails is scored zero and kept (like
// `trec_eval -c`, which averages over every judged query). Relevant papers
// missing from the collection stay in the recall denominator; Result.Missing
// says how many there were. ACM-CR's duplicate contexts topic 340982510 is
// kept as two queries, "340982510" and "340982510#2", both judged by the
// merged qrels of that id.
package eval
