// Package eval runs citation-retrieval benchmarks, scores them the way
// trec_eval does, compares runs with paired significance tests and draws
// the figures of the reports.
//
// It holds the benchmark loaders (ACM-CR's TREC topics and qrels, the
// generic JSON Lines query format, the BEIR layout — corpus.jsonl,
// queries.jsonl, qrels/SPLIT.tsv, as the SciFact and ScisummNet
// development sets ship — and the native files of CiteME, LitSearch and
// ScholarGym), the matching of gold papers to a collection
// (MatchGold: by ID or alias, DOI, arXiv id or normalised title), the
// per-query metrics (recall@K, nDCG@K with binary gains, MRR@K,
// accuracy@1), the runner that sends every query of a topic set to each
// stage of the pipeline (a named Retriever: "bm25" today; dense, fused,
// reranked and picked stages are added the same way), the paired
// statistics (randomisation test, bootstrap intervals), saved runs
// (RunFile, read back for comparisons), TREC run files, recall@K and
// win/loss figures (gonum/plot, PNG and SVG) and the Markdown and JSON
// reports of `citefind eval`. For the learned reranker it makes the
// candidate datasets (CandidateDataset, SelfDataset for self-training),
// cross-validates within a collection (CrossValidate) and checks transfer
// across collections (LeaveOneCollectionOut, ScoreOrders).
//
//	acm, err := eval.LoadACMCR(datadir.Bench("acm-cr"))   // both topic sets
//	if err != nil { … }
//	// index the records of acm.BibFiles for which acm.Keep(rec) is true, then:
//	var results []*eval.Result
//	for _, set := range acm.Sets {
//		res, err := eval.RunStages(ctx, set, []eval.Stage{{Name: "bm25", Retriever: engine}}, eval.Options{
//			Bench: "acm-cr", K: 100,
//			Resolve: resolve, // qrels DOIs → paper IDs (the store's aliases)
//		})
//		if err != nil { … } // only cancellation ends a run early
//		results = append(results, res...)
//	}
//	eval.WriteMarkdown(os.Stdout, results)
//	eval.WriteJSON(os.Stdout, results)
//
// Benchmarks without a collection of their own name their gold papers in
// TopicSet.Gold; build a Catalog of the collection and resolve with
// MatchGold:
//
//	set, err := eval.LoadCiteME(path, "test")
//	cat, err := eval.BuildCatalog(ctx, store)
//	res, err := eval.Run(ctx, *set, engine, eval.Options{ResolveGold: eval.MatchGold(*set, cat, resolve)})
//	fmt.Printf("coverage %.1f%%\n", 100*res.Coverage())
//
// A BEIR collection brings its corpus: ingest its papers (the corpus ids
// become aliases), then judge by those ids:
//
//	b, err := eval.LoadBEIR(dir, eval.BEIROptions{Split: "test"}) // ScisummNet: "keep_for_gold", or Sample: 2000
//	f, _ := os.Open(b.CorpusPath)
//	n, err := eval.ConvertBEIRCorpus(ctx, f, b.CorpusPath, out, onErr) // CSL JSON Lines for Ingest
//	res, err := eval.Run(ctx, b.Set, engine, eval.Options{Bench: b.Name, Resolve: resolve})
//
// Two runs (or two stages) are compared query by query:
//
//	cs, err := eval.CompareResults(baseline, candidate, "textbook", "tuned", nil, eval.StatOptions{})
//	// cs[i].Diff, cs[i].CILow, cs[i].CIHigh, cs[i].P per metric
//
// # Conventions
//
// Metric values are in [0, 1] and macro-averaged over the queries of a topic
// set. A query whose retrieval fails is scored zero and kept (like
// `trec_eval -c`, which averages over every judged query). Relevant papers
// missing from the collection stay in the recall denominator; Result.Missing
// says how many there were and Result.Coverage the share found. A gold
// paper that several papers of the collection satisfy (CiteME's alternative
// titles, one paper under two DOIs) is one relevant item: the first of them
// in the ranking counts, later ones are non-relevant hits that keep their
// ranks. ACM-CR's duplicate contexts topic 340982510 is kept as two queries,
// "340982510" and "340982510#2", both judged by the merged qrels of that id.
//
// Statistics are deterministic: the randomisation test draws its sign
// flips and the bootstrap its resamples from PCG generators with a fixed
// seed (StatOptions). The p-value is (hits + 1) / (permutations + 1).
package eval
