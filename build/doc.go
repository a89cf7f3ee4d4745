// Package build fills a citefind database: it ingests BibTeX, JSON Lines
// and CSL-JSON files into the canonical store (Ingest), brings the search
// indexes of the local backend up to date with the store, incrementally
// and crash-safely (Indexes: the BM25 index, and the dense index with its
// embedder, the builtin LSA model trained on the database's own papers),
// and writes the database's pipeline. Ensure does all three, holding the
// database's write lock: it is what `citefind index`, benchmark databases
// of `citefind eval` and the tests' sample database run.
//
//	rep, err := build.Ensure(ctx, dir, build.EnsureOptions{Files: []string{"refs.bib"}})
//	fmt.Println(rep.Papers, "papers;", len(rep.Ingest.Errors), "bad records")
package build
