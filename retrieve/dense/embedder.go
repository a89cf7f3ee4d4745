package dense

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"strconv"
	"strings"
	"unicode"
)

// Embedder turns texts into vectors. Build embeds papers with it and the
// Retriever embeds queries with the same one.
type Embedder interface {
	// Model is the stable id of the model and of every setting that
	// changes its vectors, e.g. "ollama:nomic-embed-text" or "hash-256".
	// It keys the embedding Cache and is recorded with the index, which
	// Open refuses to use with another id.
	Model() string
	// Dim is the vector length. 0 means not known yet (an Ollama model
	// before its first reply); once known it is fixed.
	Dim() int
	// Embed returns one vector per text, in order. Vectors need not be
	// normalised. Failures wrap ErrEmbedder.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// QueryEmbedder is implemented by embedders whose model embeds queries
// differently from documents (e.g. nomic-embed-text's "search_query: "
// prefix). The Retriever embeds queries with EmbedQuery when the embedder
// has it, and with Embed otherwise.
type QueryEmbedder interface {
	Embedder
	EmbedQuery(ctx context.Context, text string) ([]float32, error)
}

// QueryBatchEmbedder is a QueryEmbedder that embeds several queries in one
// call (one request to a server), as QueryVector needs for a paragraph
// and its citing sentences.
type QueryBatchEmbedder interface {
	QueryEmbedder
	EmbedQueries(ctx context.Context, texts []string) ([][]float32, error)
}

// DefaultHashDim is the dimension of a HashEmbedder with Dims 0.
const DefaultHashDim = 256

// HashEmbedder is a deterministic, offline embedder: signed feature
// hashing of the text's lower-cased words (Unicode letters and digits)
// and of its word bigrams into Dims dimensions, with sublinear (1 + ln tf)
// weights, L2-normalised.
//
// It is a LEXICAL hash, not a semantic model: two texts are close only
// when they share words, so as a retriever it is a blunt bag-of-words
// cosine, weaker than BM25. It exists for tests across the project and as
// the no-model fallback ("builtin"); it needs no network and no weights.
// A text without words gets the zero vector. The zero value is ready to
// use (256 dimensions, Model "hash-256"). Safe for concurrent use.
type HashEmbedder struct {
	Dims int // vector length; 0 means DefaultHashDim
}

func (h HashEmbedder) dims() int {
	if h.Dims <= 0 {
		return DefaultHashDim
	}
	return h.Dims
}

// Model returns "hash-<Dims>", e.g. "hash-256".
func (h HashEmbedder) Model() string { return "hash-" + strconv.Itoa(h.dims()) }

// Dim returns Dims (DefaultHashDim when 0).
func (h HashEmbedder) Dim() int { return h.dims() }

// Embed hashes each text; it fails only when ctx is done.
func (h HashEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, embedErr("hash embed", err)
			}
		}
		out[i] = h.embed(t)
	}
	return out, nil
}

func (h HashEmbedder) embed(text string) []float32 {
	d := h.dims()
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	tf := make(map[string]int, 2*len(words))
	for i, w := range words {
		tf[w]++
		if i > 0 {
			tf[words[i-1]+" "+w]++
		}
	}
	acc := make([]float64, d)
	for term, n := range tf {
		f := fnv.New64a()
		f.Write([]byte(term))
		x := f.Sum64()
		w := 1 + math.Log(float64(n))
		if strings.IndexByte(term, ' ') >= 0 {
			w *= 0.5 // bigrams count half
		}
		if x>>63 == 1 {
			w = -w
		}
		acc[x%uint64(d)] += w
	}
	v := make([]float32, d)
	var ss float64
	for _, a := range acc {
		ss += a * a
	}
	if ss == 0 {
		return v
	}
	inv := 1 / math.Sqrt(ss)
	for i, a := range acc {
		v[i] = float32(a * inv)
	}
	return v
}

// normalize scales v to unit length in place, accumulating in float64,
// and reports false (leaving v alone) for a zero or non-finite vector.
func normalize(v []float32) bool {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	if ss == 0 || math.IsNaN(ss) || math.IsInf(ss, 0) {
		return false
	}
	inv := 1 / math.Sqrt(ss)
	for i, x := range v {
		v[i] = float32(float64(x) * inv)
	}
	return true
}

// checkVectors validates an embedder's reply to n texts: n vectors, all of
// length dim (when dim > 0) and of one length.
func checkVectors(vecs [][]float32, n, dim int) error {
	if len(vecs) != n {
		return fmt.Errorf("%w: got %d vectors for %d texts", ErrEmbedder, len(vecs), n)
	}
	for i, v := range vecs {
		if dim == 0 {
			dim = len(v)
		}
		if len(v) != dim || dim == 0 {
			return fmt.Errorf("%w: vector %d has dimension %d, want %d", ErrEmbedder, i, len(v), dim)
		}
	}
	return nil
}
