package citefind

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/internal/progress"
	"github.com/citefind/citefind/retrieve/dense"
	"github.com/citefind/citefind/retrieve/dense/lsa"
)

// Embedder specs accepted by BuildOptions.Embedder (`index --embedder`).
const (
	// EmbedderNone builds no dense index (the default for now: on ACM-CR
	// no dense setting measured so far beats BM25 alone).
	EmbedderNone = "none"
	// EmbedderBuiltin is LSA (package lsa) trained on the database's own
	// papers: BuiltinDim dimensions, plain fold-in, no server, no download.
	EmbedderBuiltin = "builtin"
	// EmbedderOllamaPrefix starts an Ollama embedder spec, "ollama:MODEL"
	// (e.g. "ollama:nomic-embed-text"); the server is OLLAMA_HOST.
	EmbedderOllamaPrefix = "ollama:"
)

// BuiltinDim is the number of dimensions of the builtin LSA embedder.
const BuiltinDim = 512

// metaEmbedder is the store meta key (and dense index header meta key)
// holding the embedder spec.
const metaEmbedder = "embedder"

// ParseEmbedder checks an embedder spec (none, builtin or ollama:MODEL) and
// returns it normalised. "" is none.
func ParseEmbedder(spec string) (string, error) {
	spec = strings.TrimSpace(spec)
	switch {
	case spec == "" || spec == EmbedderNone:
		return EmbedderNone, nil
	case spec == EmbedderBuiltin:
		return spec, nil
	case strings.HasPrefix(spec, EmbedderOllamaPrefix):
		if strings.TrimSpace(strings.TrimPrefix(spec, EmbedderOllamaPrefix)) == "" {
			return "", fmt.Errorf("embedder %q: no model after %q", spec, EmbedderOllamaPrefix)
		}
		return spec, nil
	}
	return "", fmt.Errorf("unknown embedder %q (want none, builtin or ollama:MODEL)", spec)
}

// RecordedEmbedder returns the embedder spec the store records (set by
// BuildIndexes), EmbedderNone when none was ever recorded.
func RecordedEmbedder(ctx context.Context, st *corpus.Store) (string, error) {
	v, err := st.Meta(ctx, metaEmbedder)
	if err != nil {
		return "", err
	}
	return ParseEmbedder(v)
}

// DenseReport says what BuildIndexes did to the dense index.
type DenseReport struct {
	Embedder  string           // the spec in force (recorded in the store)
	Built     bool             // rebuilt
	Removed   bool             // a dense index was removed (embedder none)
	Reason    string           // why it was rebuilt; "" when up to date or none
	Stats     dense.BuildStats // when built
	TrainTime time.Duration    // builtin: LSA training time, part of the build
}

// openEmbedder returns the embedder of spec for querying an existing
// dense index of dir: the saved LSA model for builtin.
func openEmbedder(dir, spec string) (dense.Embedder, error) {
	switch {
	case spec == EmbedderBuiltin:
		f, err := os.Open(filepath.Join(dir, LSAModelFile))
		if err != nil {
			return nil, fmt.Errorf("open the builtin embedder's model: %w", err)
		}
		defer f.Close()
		m, err := lsa.Load(f)
		if err != nil {
			return nil, fmt.Errorf("load %s: %w", LSAModelFile, err)
		}
		return m, nil
	case strings.HasPrefix(spec, EmbedderOllamaPrefix):
		return dense.NewOllama(dense.OllamaOptions{Model: strings.TrimPrefix(spec, EmbedderOllamaPrefix)})
	}
	return nil, fmt.Errorf("no dense embedder (%q)", spec)
}

// buildDense brings the dense index of dir up to date for the embedder
// spec: it is rebuilt from the whole store when missing or unreadable,
// built from another store generation or another embedder, or with
// opts.Force. For builtin, the LSA model is retrained on all the papers
// first (so any store change retrains it; an incremental fold-in of new
// papers into an old model is left for later) and saved atomically to
// LSAModelFile before the index is built. Embedder none removes a dense
// index and model left by an earlier embedder.
func buildDense(ctx context.Context, dir string, st *corpus.Store, gen int64, spec string, opts BuildOptions) (DenseReport, error) {
	rep := DenseReport{Embedder: spec}
	path := filepath.Join(dir, DenseDir)
	if spec == EmbedderNone {
		_, errDir := os.Stat(path)
		_, errModel := os.Stat(filepath.Join(dir, LSAModelFile))
		if errDir == nil || errModel == nil {
			if err := os.RemoveAll(path); err != nil {
				return rep, fmt.Errorf("remove the dense index: %w", err)
			}
			if err := os.Remove(filepath.Join(dir, LSAModelFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return rep, fmt.Errorf("remove the builtin embedder's model: %w", err)
			}
			rep.Removed = true
		}
		return rep, nil
	}
	h, err := dense.Stat(path)
	gs := strconv.FormatInt(gen, 10)
	switch {
	case opts.Force:
		rep.Reason = "--force"
	case errors.Is(err, dense.ErrNoIndex):
		rep.Reason = "no index yet"
	case err != nil:
		rep.Reason = fmt.Sprintf("index unreadable (%v)", err)
	case h.Meta[metaEmbedder] != spec:
		rep.Reason = fmt.Sprintf("embedder changed from %q", h.Meta[metaEmbedder])
	case h.Meta[metaGeneration] != gs:
		rep.Reason = fmt.Sprintf("store changed since generation %s", h.Meta[metaGeneration])
	default:
		return rep, nil
	}
	n, err := st.Count(ctx)
	if err != nil {
		return rep, err
	}
	var emb dense.Embedder
	prepare := func(p corpus.Paper) corpus.Paper { return p }
	if spec == EmbedderBuiltin {
		start := time.Now()
		m, err := trainLSA(ctx, st, n, opts)
		if err != nil {
			return rep, fmt.Errorf("train the builtin embedder: %w", err)
		}
		if err := saveModel(filepath.Join(dir, LSAModelFile), m); err != nil {
			return rep, err
		}
		rep.TrainTime = time.Since(start)
		emb = m
		// Embed what LSA was trained and measured on (lsa.Text: title,
		// abstract and keywords) rather than dense.PaperText's title and
		// abstract: fold the keywords into the abstract of the copy that
		// is embedded.
		prepare = func(p corpus.Paper) corpus.Paper {
			if len(p.Keywords) > 0 {
				p.Abstract = strings.TrimSpace(p.Abstract + "\n" + strings.Join(p.Keywords, ". "))
			}
			return p
		}
	} else {
		if emb, err = openEmbedder(dir, spec); err != nil {
			return rep, err
		}
	}
	cache, err := dense.OpenCache(filepath.Join(dir, EmbeddingCacheFile))
	if err != nil {
		return rep, fmt.Errorf("open the embedding cache: %w", err)
	}
	defer cache.Close()
	var bar *progress.Bar
	if opts.Progress != nil {
		bar = progress.New(opts.Progress, "dense index", int64(n), "papers")
	}
	next, stop := papers(func(fn func(corpus.Paper) error) error {
		return st.Each(ctx, func(p corpus.Paper) error { return fn(prepare(p)) })
	})
	defer stop()
	stats, err := dense.Build(ctx, path, dense.BuildOptions{
		Embedder: emb, Cache: cache,
		Meta: map[string]string{metaGeneration: gs, metaEmbedder: spec},
	}, next, func(done int) { bar.Set(int64(done), 0) })
	bar.Done()
	if err != nil {
		return rep, fmt.Errorf("build dense index: %w", err)
	}
	rep.Built = true
	rep.Stats = stats
	rep.Stats.Duration += rep.TrainTime
	return rep, nil
}

// trainLSA trains the builtin embedder on every paper of the store.
func trainLSA(ctx context.Context, st *corpus.Store, n int, opts BuildOptions) (*lsa.Model, error) {
	var walkErr error
	stopWalk := errors.New("stop")
	texts := iter.Seq[string](func(yield func(string) bool) {
		err := st.Each(ctx, func(p corpus.Paper) error {
			if !yield(lsa.Text(p)) {
				return stopWalk
			}
			return nil
		})
		if err != nil && !errors.Is(err, stopWalk) {
			walkErr = err
		}
	})
	var bars = map[string]*progress.Bar{}
	prog := func(stage string, done, total int) {
		if opts.Progress == nil {
			return
		}
		label, unit, tot := "lsa analyze", "papers", int64(n)
		switch stage {
		case "analyze":
		case "svd":
			label, unit, tot = "lsa svd", "steps", int64(total)
		default:
			return
		}
		b := bars[label]
		if b == nil {
			if label == "lsa svd" {
				bars["lsa analyze"].Done()
			}
			b = progress.New(opts.Progress, label, tot, unit)
			bars[label] = b
		}
		b.Set(int64(done), 0)
	}
	m, err := lsa.Train(ctx, texts, lsa.Options{Dim: BuiltinDim, Fold: lsa.FoldPlain}, prog)
	bars["lsa analyze"].Done()
	bars["lsa svd"].Done()
	if walkErr != nil {
		return nil, walkErr
	}
	return m, err
}

// saveModel writes m to path atomically: a temp file in the same folder,
// synced, renamed into place.
func saveModel(path string, m *lsa.Model) error {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("save the builtin embedder's model: %w", err)
	}
	tmp := f.Name()
	err = m.Save(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("save the builtin embedder's model: %w", err)
	}
	return nil
}

// DenseInfo describes the dense index of dir: its header, or the error
// reading it (wrapping dense.ErrNoIndex when there is none).
func DenseInfo(dir string) (dense.Header, error) {
	return dense.Stat(filepath.Join(dir, DenseDir))
}
