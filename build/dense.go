package build

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
	"github.com/citefind/citefind/db"
	"github.com/citefind/citefind/internal/atomicfile"
	"github.com/citefind/citefind/internal/progress"
	"github.com/citefind/citefind/retrieve/dense"
	"github.com/citefind/citefind/retrieve/dense/lsa"
	"github.com/citefind/citefind/retrieve/local"
)

// DenseReport says what Indexes did to the dense index.
type DenseReport struct {
	Embedder  string           // the spec in force (recorded in the store)
	Built     bool             // rebuilt
	Removed   bool             // a dense index was removed (embedder none)
	Reason    string           // why it was rebuilt; "" when up to date or none
	Stats     dense.BuildStats // when built
	TrainTime time.Duration    // builtin: LSA training time, part of the build (0 when the model was kept)
	// Trained is true when the builtin model was (re)trained for this
	// build, false when the saved model was kept and the changed papers
	// folded into it.
	Trained bool
	// Leftovers is the number of files of killed runs removed.
	Leftovers int
	// Sidecar is true when the index was up to date but had no usable
	// sidecar (dense.SidecarName), and one was written.
	Sidecar bool
	// ModelReason says why the builtin model was trained or kept, e.g.
	// "12 of 108682 papers changed since it was trained".
	ModelReason string
}

// Store meta keys of the builtin model: its identity, and the store
// generation and paper count it was trained at.
const (
	metaLSAModel = "lsa_model"
	metaLSAGen   = "lsa_generation"
	metaLSADocs  = "lsa_docs"
)

// buildDense brings the dense index of dir up to date for the embedder
// spec. The index is rebuilt (from the whole store, with the embedding
// cache) when it is missing or unreadable, built from another store
// generation, another embedder or (builtin) another model than the saved
// one, or with opts.Force. Embedder none removes a dense index and model
// left by an earlier embedder.
//
// For builtin, the saved LSA model is kept across store changes: papers
// added or changed since it was trained are folded into it (embedded with
// its vocabulary and idf; the cache holds every other paper's vector, so
// only they are embedded). It is retrained on the whole store, and saved
// atomically to db.LSAModelFile before the index is built, with opts.Force,
// when it is missing or unreadable, when the store does not record it as
// the model it trained, or when more papers than opts.RetrainFraction of
// those it was trained on were added, changed or removed since (see
// DefaultRetrainFraction). The store records the model's identity and the
// generation and size it was trained at (after the model file is saved;
// a run killed in between retrains, to the same model when the store is
// unchanged, since training is deterministic).
func buildDense(ctx context.Context, dir string, st *corpus.Store, gen int64, spec string, opts Options) (DenseReport, error) {
	rep := DenseReport{Embedder: spec}
	path := filepath.Join(dir, local.DenseDir)
	modelPath := filepath.Join(dir, db.LSAModelFile)
	if spec == db.EmbedderNone {
		_, errDir := os.Stat(path)
		_, errModel := os.Stat(modelPath)
		if errDir == nil || errModel == nil {
			if err := os.RemoveAll(path); err != nil {
				return rep, fmt.Errorf("remove the dense index: %w", err)
			}
			if err := os.Remove(modelPath); err != nil && !errors.Is(err, os.ErrNotExist) {
				return rep, fmt.Errorf("remove the builtin embedder's model: %w", err)
			}
			rep.Removed = true
		}
		return rep, nil
	}
	n, err := removeDenseLeftovers(dir)
	if err != nil {
		return rep, err
	}
	rep.Leftovers = n
	h, err := dense.Stat(path)
	gs := strconv.FormatInt(gen, 10)
	switch {
	case opts.Force:
		rep.Reason = "--force"
	case errors.Is(err, dense.ErrNoIndex):
		rep.Reason = "no index yet"
	case err != nil:
		rep.Reason = fmt.Sprintf("index unreadable (%v)", err)
	case h.Meta[local.MetaEmbedder] != spec:
		rep.Reason = fmt.Sprintf("embedder changed from %q", h.Meta[local.MetaEmbedder])
	case spec == db.EmbedderBuiltin && !modelIs(modelPath, h.Model):
		rep.Reason = "the builtin model is not the one the index was built with"
	case h.Meta[local.MetaGeneration] != gs:
		rep.Reason = fmt.Sprintf("store changed since generation %s", h.Meta[local.MetaGeneration])
	default:
		// Up to date. An index built before sidecars existed (or whose
		// sidecar was lost) gets one: a read of the export, no embedding.
		if rep.Sidecar, err = dense.EnsureSidecar(ctx, path); err != nil {
			return rep, err
		}
		return rep, nil
	}
	n, err = st.Count(ctx)
	if err != nil {
		return rep, err
	}
	var emb dense.Embedder
	prepare := func(p corpus.Paper) corpus.Paper { return p }
	if spec == db.EmbedderBuiltin {
		m, err := builtinModel(ctx, dir, st, gen, n, opts, &rep)
		if err != nil {
			return rep, err
		}
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
		if emb, err = db.OpenEmbedder(dir, spec); err != nil {
			return rep, err
		}
	}
	cache, err := dense.OpenCache(filepath.Join(dir, db.EmbeddingCacheFile))
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
		Meta: map[string]string{local.MetaGeneration: gs, local.MetaEmbedder: spec},
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

// removeDenseLeftovers removes the files killed runs left: unreferenced
// exports and temporary headers in the dense folder, temporary model
// files next to db.LSAModelFile.
func removeDenseLeftovers(dir string) (int, error) {
	n, err := dense.RemoveLeftovers(filepath.Join(dir, local.DenseDir))
	if err != nil {
		return n, err
	}
	m, err := atomicfile.RemoveLeftovers(filepath.Join(dir, db.LSAModelFile))
	return n + m, err
}

// modelIs reports whether the model file at path has identity id.
func modelIs(path, id string) bool {
	got, err := lsa.ModelID(path)
	return err == nil && got == id
}

// builtinModel returns the LSA model to build the index with: the saved
// one when it can be kept (see buildDense), else one trained on the whole
// store, saved and recorded in the store. It fills rep's Trained,
// ModelReason and TrainTime.
func builtinModel(ctx context.Context, dir string, st *corpus.Store, gen int64, n int, opts Options, rep *DenseReport) (*lsa.Model, error) {
	modelPath := filepath.Join(dir, db.LSAModelFile)
	var m *lsa.Model
	var why string
	if opts.Force {
		why = "--force"
	} else if m, why = keepModel(ctx, modelPath, st, opts); m != nil {
		rep.ModelReason = why
		return m, nil
	}
	start := time.Now()
	m, err := trainLSA(ctx, st, n, opts)
	if err != nil {
		return nil, fmt.Errorf("train the builtin embedder: %w", err)
	}
	if err := saveModel(modelPath, m); err != nil {
		return nil, err
	}
	for _, kv := range [][2]string{
		{metaLSAModel, m.Model()}, {metaLSAGen, strconv.FormatInt(gen, 10)}, {metaLSADocs, strconv.Itoa(n)},
	} {
		if err := st.SetMeta(ctx, kv[0], kv[1]); err != nil {
			return nil, fmt.Errorf("record the builtin embedder's model: %w", err)
		}
	}
	rep.TrainTime = time.Since(start)
	rep.Trained = true
	rep.ModelReason = why
	return m, nil
}

// keepModel loads the saved model when it may be kept, and says why it
// was kept or why not (then the model is nil).
func keepModel(ctx context.Context, path string, st *corpus.Store, opts Options) (*lsa.Model, string) {
	id, err := lsa.ModelID(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, "no model yet"
	}
	if err != nil {
		return nil, fmt.Sprintf("model unreadable (%v)", err)
	}
	var meta [3]string
	for i, k := range []string{metaLSAModel, metaLSAGen, metaLSADocs} {
		if meta[i], err = st.Meta(ctx, k); err != nil {
			return nil, fmt.Sprintf("store unreadable (%v)", err)
		}
	}
	trainedGen, errGen := strconv.ParseInt(meta[1], 10, 64)
	trainedDocs, errDocs := strconv.Atoi(meta[2])
	if meta[0] != id || errGen != nil || errDocs != nil {
		return nil, "the store does not record when the model was trained"
	}
	changed, err := st.CountChangedSince(ctx, trainedGen)
	if err != nil {
		return nil, fmt.Sprintf("store unreadable (%v)", err)
	}
	removed, err := st.RemovedSince(ctx, trainedGen)
	if err != nil {
		return nil, fmt.Sprintf("store unreadable (%v)", err)
	}
	frac := opts.RetrainFraction
	if frac <= 0 {
		frac = DefaultRetrainFraction
	}
	drift := changed + len(removed)
	if float64(drift) > frac*float64(trainedDocs) {
		return nil, fmt.Sprintf("%d of %d papers changed since it was trained (over %.0f%%)", drift, trainedDocs, 100*frac)
	}
	m, err := db.LoadLSAModel(path)
	if err != nil {
		return nil, fmt.Sprintf("model unreadable (%v)", err)
	}
	return m, fmt.Sprintf("%d of %d papers changed since it was trained", drift, trainedDocs)
}

// trainLSA trains the builtin embedder on every paper of the store.
func trainLSA(ctx context.Context, st *corpus.Store, n int, opts Options) (*lsa.Model, error) {
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
	m, err := lsa.Train(ctx, texts, lsa.Options{Dim: db.BuiltinDim, Fold: lsa.FoldPlain}, prog)
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
	if err := atomicfile.Write(path, 0o644, func(f *os.File) error { return m.Save(f) }); err != nil {
		return fmt.Errorf("save the builtin embedder's model: %w", err)
	}
	return nil
}
