package fuse_test

import (
	"context"
	"fmt"
	"time"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/fuse"
	"github.com/citefind/citefind/retrieve"
)

func ExampleSearch() {
	bm25 := retrieve.RetrieverFunc(func(ctx context.Context, query string, k int) ([]corpus.Hit, error) {
		return []corpus.Hit{{ID: "10.1/dpr", Score: 12.1}, {ID: "10.1/bm25", Score: 9.8}}, nil
	})
	dense := retrieve.RetrieverFunc(func(ctx context.Context, query string, k int) ([]corpus.Hit, error) {
		<-ctx.Done() // the embedding server does not answer
		return nil, ctx.Err()
	})
	res, err := fuse.Search(context.Background(), "dense passage retrieval", []fuse.Named{
		{Name: "bm25", Retriever: bm25},
		{Name: "dense", Retriever: dense, Weight: 0.3, Timeout: 50 * time.Millisecond},
	}, fuse.Options{K: 10, AllowPartial: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	for i, h := range res.Hits {
		fmt.Printf("%d %s %.4f bm25 rank %d\n", i+1, h.ID, h.Score, h.Sources["bm25"].Rank)
	}
	fmt.Println(res.Warnings)
	// Output:
	// 1 10.1/dpr 0.0164 bm25 rank 1
	// 2 10.1/bm25 0.0161 bm25 rank 2
	// [retriever dense: missed its deadline of 50ms]
}

func ExampleFuse() {
	lists := map[string][]corpus.Hit{
		"bm25":  {{ID: "a", Score: 10}, {ID: "b", Score: 5}, {ID: "c", Score: 2}},
		"dense": {{ID: "b", Score: 0.9}, {ID: "d", Score: 0.5}, {ID: "a", Score: 0.1}},
	}
	// 0.7·minmax(bm25) + 0.3·minmax(dense)
	hits, err := fuse.Fuse(lists, map[string]float64{"bm25": 0.7, "dense": 0.3}, fuse.Options{Method: fuse.MinMax})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, h := range hits {
		fmt.Printf("%s %.4f %d\n", h.ID, h.Score, h.Count)
	}
	// Output:
	// a 0.7000 2
	// b 0.5625 2
	// d 0.1500 1
	// c 0.0000 1
}
