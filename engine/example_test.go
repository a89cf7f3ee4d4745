package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/citefind/citefind"
	"github.com/citefind/citefind/build"
	"github.com/citefind/citefind/engine"
)

// Index the shipped sample corpus, then ask for the paper a sentence with
// a missing citation should cite. The database's pipeline (BM25 with its
// RM3 and citing-sentence variants, fused) answers; every hit says what
// each retriever thought of it.
func ExampleEngine_Search() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "citefind")
	defer os.RemoveAll(dir)
	if _, err := build.Ensure(ctx, dir, build.EnsureOptions{Files: []string{filepath.Join("..", "sample", "papers.bib")}}); err != nil {
		panic(err)
	}
	e, err := engine.Open(ctx, dir, engine.Options{})
	if err != nil {
		panic(err)
	}
	defer e.Close()
	res, err := e.Search(ctx, "We merge the BM25 and dense rankings with reciprocal rank fusion [CITATION].", citefind.QueryOptions{K: 2})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Cleaned)
	for _, h := range res.Hits {
		fmt.Printf("%d. %s (%d) bm25 #%d\n", h.Rank, h.Title, h.Year, h.Sources["bm25"].Rank)
	}
	fmt.Println(e.Pipeline().Retrievers)
	// Output:
	// We merge the BM25 and dense rankings with reciprocal rank fusion.
	// 1. Reciprocal rank fusion outperforms Condorcet and individual rank learning methods (2009) bm25 #1
	// 2. The probabilistic relevance framework: BM25 and beyond (2009) bm25 #2
	// [bm25 rm3 citing]
}
