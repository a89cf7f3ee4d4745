package retrieve

import (
	"context"

	"github.com/citefind/citefind/corpus"
)

// Retriever returns up to k hits for query, best first, with k > 0. Scores
// are the retriever's own (higher is better) and only comparable within
// one list. Implementations honour ctx.
type Retriever interface {
	Retrieve(ctx context.Context, query string, k int) ([]corpus.Hit, error)
}

// RetrieverFunc adapts a function to Retriever.
type RetrieverFunc func(ctx context.Context, query string, k int) ([]corpus.Hit, error)

// Retrieve calls f.
func (f RetrieverFunc) Retrieve(ctx context.Context, query string, k int) ([]corpus.Hit, error) {
	return f(ctx, query, k)
}
