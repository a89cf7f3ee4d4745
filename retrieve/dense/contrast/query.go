package contrast

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/citefind/citefind/retrieve"
	"github.com/citefind/citefind/retrieve/dense"
)

// QueryVector returns the vector to search a dense index with for a query
// given as written, citation markers included: the normalised mean of the
// embeddings of its cleaned text (retrieve.Clean) and of its citing
// sentences (retrieve.CitingSentences, joined), so that a paragraph-long
// context weighs the sentences around its citations more; when the text
// has no citing sentence, or is nothing else, it is the cleaned text's
// embedding. Search with dense.Retriever.RetrieveVector. It works with any
// embedder (EmbedQuery when it has one); a zero vector means no term of
// the query is known.
//
// On ACM-CR's paragraph contexts this raised the default model's R@10
// alone from .372 to .379, and fused with BM25 (weight 0.5) from +.007 to
// +.023 (docs/dense.md).
func QueryVector(ctx context.Context, emb dense.Embedder, raw string) ([]float32, error) {
	cleaned := retrieve.Clean(raw)
	texts := []string{cleaned}
	if cs := retrieve.CitingSentences(raw); len(cs) > 0 {
		if c := strings.Join(cs, " "); c != cleaned {
			texts = append(texts, c)
		}
	}
	vecs := make([][]float32, 0, len(texts))
	if qe, ok := emb.(dense.QueryEmbedder); ok {
		for _, t := range texts {
			v, err := qe.EmbedQuery(ctx, t)
			if err != nil {
				return nil, fmt.Errorf("query vector: %w", err)
			}
			vecs = append(vecs, v)
		}
	} else {
		var err error
		if vecs, err = emb.Embed(ctx, texts); err != nil {
			return nil, fmt.Errorf("query vector: %w", err)
		}
		if len(vecs) != len(texts) {
			return nil, fmt.Errorf("query vector: %w: got %d vectors for %d texts", dense.ErrEmbedder, len(vecs), len(texts))
		}
	}
	if len(vecs) == 1 {
		return vecs[0], nil
	}
	out := make([]float32, len(vecs[0]))
	for _, v := range vecs {
		if len(v) != len(out) {
			return nil, fmt.Errorf("query vector: %w: vectors of dimension %d and %d", dense.ErrEmbedder, len(out), len(v))
		}
		// each part counts alike, whatever the embedder's norms
		var ss float64
		for _, x := range v {
			ss += float64(x) * float64(x)
		}
		if ss == 0 {
			continue
		}
		inv := float32(1 / math.Sqrt(ss))
		for k, x := range v {
			out[k] += x * inv
		}
	}
	normalize(out)
	return out, nil
}
