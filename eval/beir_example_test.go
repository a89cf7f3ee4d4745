package eval_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/eval"
)

// Load a BEIR collection: its judged queries, then its corpus as records
// whose keys (the corpus ids) are what the judgements name.
func ExampleLoadBEIR() {
	dir := filepath.Join("testdata", "beir", "tiny")
	b, err := eval.LoadBEIR(dir, eval.BEIROptions{Split: "test"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(b.Name, b.Set.Name, len(b.Set.Queries), "queries; unjudged", b.Set.Unjudged)
	fmt.Printf("%s: %q → %v\n", b.Set.Queries[0].ID, b.Set.Queries[0].Text, b.Set.Queries[0].Relevant)

	f, err := os.Open(b.CorpusPath)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	err = eval.ReadBEIRCorpus(context.Background(), f, b.CorpusPath, func(r corpus.Record) error {
		fmt.Printf("%s: %s\n", r.Key, r.Paper.Title)
		return nil
	}, func(pe *corpus.ParseError) { fmt.Println(pe) })
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// tiny test 4 queries; unjudged [q4]
	// q1: "Rank fusion [CIT] needs no calibration." → [d1]
	// d1: Reciprocal rank fusion outperforms Condorcet
	// d2: The probabilistic relevance framework: BM25 and beyond
	// 3: [3]
	// d4: Summary [d4]
	// d5: summary [d5]
}
