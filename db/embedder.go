package db

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/citefind/citefind/retrieve/dense"
	"github.com/citefind/citefind/retrieve/dense/contrast"
	"github.com/citefind/citefind/retrieve/dense/lsa"
)

// Embedder specs (`index --embedder`).
const (
	// EmbedderNone builds no dense index.
	EmbedderNone = "none"
	// EmbedderBuiltin is LSA (package lsa) trained on the database's own
	// papers: BuiltinDim dimensions, plain fold-in, no server, no download.
	EmbedderBuiltin = "builtin"
	// EmbedderContrast is an embedder trained contrastively on the
	// database's own papers (package contrast): a tf-idf projection to
	// 768 dimensions, no server, no download; far better alone than
	// builtin (docs/dense.md), costlier to train (about 2 minutes for
	// 100,000 papers on 2 cores).
	EmbedderContrast = "contrast"
	// EmbedderOllamaPrefix starts an Ollama embedder spec, "ollama:MODEL"
	// (e.g. "ollama:nomic-embed-text"); the server is OLLAMA_HOST.
	EmbedderOllamaPrefix = "ollama:"
)

// DefaultEmbedder is the embedder `index` builds for a database that
// records none yet: contrast, chosen on the evaluation suite (fused with
// BM25 and the citing variant it gains R@10 and nDCG@10 on every
// collection, held out; docs/benchmarks.md). A library too small to train
// it on gets no dense index, and the next index run tries again.
const DefaultEmbedder = EmbedderContrast

// BuiltinDim is the number of dimensions of the builtin LSA embedder.
const BuiltinDim = 512

// ParseEmbedder checks an embedder spec (none, builtin, contrast or ollama:MODEL) and
// returns it normalised. "" is none.
func ParseEmbedder(spec string) (string, error) {
	spec = strings.TrimSpace(spec)
	switch {
	case spec == "" || spec == EmbedderNone:
		return EmbedderNone, nil
	case TrainedInFolder(spec):
		return spec, nil
	case strings.HasPrefix(spec, EmbedderOllamaPrefix):
		if strings.TrimSpace(strings.TrimPrefix(spec, EmbedderOllamaPrefix)) == "" {
			return "", fmt.Errorf("embedder %q: no model after %q", spec, EmbedderOllamaPrefix)
		}
		return spec, nil
	}
	return "", fmt.Errorf("unknown embedder %q (want none, builtin, contrast or ollama:MODEL)", spec)
}

// TrainedInFolder reports whether spec names an embedder trained on the
// database's own papers, whose model lives in the database folder
// (builtin, contrast): it cannot be used without the folder.
func TrainedInFolder(spec string) bool {
	return spec == EmbedderBuiltin || spec == EmbedderContrast
}

// ModelFileID returns the identity (dense.Embedder's Model) of the model
// a trained embedder (TrainedInFolder) keeps in the database folder dir,
// read from the file's header and checksum without loading it.
func ModelFileID(dir, spec string) (string, error) {
	switch spec {
	case EmbedderBuiltin:
		return lsa.ModelID(filepath.Join(dir, LSAModelFile))
	case EmbedderContrast:
		return contrast.ModelID(filepath.Join(dir, ContrastModelFile))
	}
	return "", fmt.Errorf("embedder %s keeps no model in the database folder", spec)
}

// OpenEmbedder returns the embedder of spec for a database folder dir: the
// saved LSA model for builtin, the saved contrast model for contrast (one
// trained for another feature set than the defaults' or earlier defaults'
// is refused, naming both), an Ollama client for ollama:MODEL.
func OpenEmbedder(dir, spec string) (dense.Embedder, error) {
	switch {
	case spec == EmbedderBuiltin:
		return LoadLSAModel(filepath.Join(dir, LSAModelFile))
	case spec == EmbedderContrast:
		// a model of earlier defaults answers until index retrains it
		m, err := contrast.LoadFile(filepath.Join(dir, ContrastModelFile), contrast.DefaultSpec, contrast.EarlierDefaultSpec)
		if err != nil {
			return nil, fmt.Errorf("load the contrast embedder's model: %w", err)
		}
		return m, nil
	case strings.HasPrefix(spec, EmbedderOllamaPrefix):
		return dense.NewOllama(dense.OllamaOptions{Model: strings.TrimPrefix(spec, EmbedderOllamaPrefix)})
	}
	return nil, fmt.Errorf("no dense embedder (%q)", spec)
}

// LoadLSAModel reads the builtin embedder's model file.
func LoadLSAModel(path string) (*lsa.Model, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open the builtin embedder's model: %w", err)
	}
	defer f.Close()
	m, err := lsa.Load(f)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", filepath.Base(path), err)
	}
	return m, nil
}
