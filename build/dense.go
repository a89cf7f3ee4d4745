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
	"github.com/citefind/citefind/retrieve/dense/contrast"
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
	// Skipped says why the database got no dense index although it asked
	// for the default embedder (too few papers to train it on).
	Skipped string
}

// trainedKind is an embedder citefind trains on the database's own papers
// and saves in its folder: builtin (LSA) or contrast.
type trainedKind struct {
	spec string // the embedder spec
	name string // in messages: "the builtin embedder"
	file string // model file in the database folder
	// Store meta keys: the model's identity, and the store generation and
	// paper count it was trained at.
	metaModel, metaGen, metaDocs string
	id                           func(path string) (string, error)
	load                         func(path string) (dense.Embedder, error)
	train                        func(ctx context.Context, st *corpus.Store, n int, opts Options) (dense.Embedder, error)
	save                         func(path string, m dense.Embedder) error
	// outdated, when set, says why the saved model must be retrained
	// although the store has not changed (it was trained with earlier
	// defaults), or "".
	outdated func(path string) string
}

// trainedKinds are the embedders trained on the database's papers, by spec.
var trainedKinds = map[string]*trainedKind{
	db.EmbedderBuiltin: {
		spec: db.EmbedderBuiltin, name: "the builtin embedder", file: db.LSAModelFile,
		metaModel: "lsa_model", metaGen: "lsa_generation", metaDocs: "lsa_docs",
		id:    lsa.ModelID,
		load:  func(path string) (dense.Embedder, error) { return db.LoadLSAModel(path) },
		train: trainLSA,
		save: func(path string, m dense.Embedder) error {
			return atomicfile.Write(path, 0o644, func(f *os.File) error { return m.(*lsa.Model).Save(f) })
		},
	},
	db.EmbedderContrast: {
		spec: db.EmbedderContrast, name: "the contrast embedder", file: db.ContrastModelFile,
		metaModel: "contrast_model", metaGen: "contrast_generation", metaDocs: "contrast_docs",
		id: contrast.ModelID,
		load: func(path string) (dense.Embedder, error) {
			return db.OpenEmbedder(filepath.Dir(path), db.EmbedderContrast)
		},
		train: trainContrast,
		save:  func(path string, m dense.Embedder) error { return contrast.SaveFile(path, m.(*contrast.Model)) },
		outdated: func(path string) string {
			spec, err := contrast.FileSpec(path)
			if err != nil || spec == contrast.DefaultSpec {
				return "" // an unreadable model is noticed elsewhere
			}
			return fmt.Sprintf("the contrast embedder's model was trained with earlier defaults (%s, now %s)", spec, contrast.DefaultSpec)
		},
	},
}

// withKeywords folds a paper's keywords into its abstract: the trained
// embedders embed title, abstract and keywords (lsa.Text, contrast.Text),
// what they were trained and measured on, rather than dense.PaperText's
// title and abstract.
func withKeywords(p corpus.Paper) corpus.Paper {
	if len(p.Keywords) > 0 {
		p.Abstract = strings.TrimSpace(p.Abstract + "\n" + strings.Join(p.Keywords, ". "))
	}
	return p
}

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
	kind := trainedKinds[spec]
	// Model files of trained embedders other than spec are left over
	// from an earlier embedder: remove them.
	for _, k := range trainedKinds {
		if k == kind {
			continue
		}
		err := os.Remove(filepath.Join(dir, k.file))
		if err == nil {
			rep.Removed = spec == db.EmbedderNone
		} else if !errors.Is(err, os.ErrNotExist) {
			return rep, fmt.Errorf("remove %s's model: %w", k.name, err)
		}
	}
	if spec == db.EmbedderNone {
		if _, err := os.Stat(path); err == nil {
			if err := os.RemoveAll(path); err != nil {
				return rep, fmt.Errorf("remove the dense index: %w", err)
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
	case kind != nil && !modelIs(kind, filepath.Join(dir, kind.file), h.Model):
		rep.Reason = kind.name + "'s model is not the one the index was built with"
	case kind != nil && kind.outdated != nil && kind.outdated(filepath.Join(dir, kind.file)) != "":
		rep.Reason = kind.outdated(filepath.Join(dir, kind.file))
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
	if kind != nil {
		if emb, err = trainedModel(ctx, dir, kind, st, gen, n, opts, &rep); err != nil {
			return rep, err
		}
		prepare = withKeywords
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
// files next to the trained embedders' model files.
func removeDenseLeftovers(dir string) (int, error) {
	n, err := dense.RemoveLeftovers(filepath.Join(dir, local.DenseDir))
	if err != nil {
		return n, err
	}
	for _, k := range trainedKinds {
		m, err := atomicfile.RemoveLeftovers(filepath.Join(dir, k.file))
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// modelIs reports whether the model file of kind at path has identity id.
func modelIs(kind *trainedKind, path, id string) bool {
	got, err := kind.id(path)
	return err == nil && got == id
}

// trainedModel returns the model of a trained embedder to build the index
// with: the saved one when it can be kept (see buildDense), else one
// trained on the whole store, saved and recorded in the store. It fills
// rep's Trained, ModelReason and TrainTime.
func trainedModel(ctx context.Context, dir string, kind *trainedKind, st *corpus.Store, gen int64, n int, opts Options, rep *DenseReport) (dense.Embedder, error) {
	modelPath := filepath.Join(dir, kind.file)
	var m dense.Embedder
	var why string
	if opts.Force {
		why = "--force"
	} else if m, why = keepModel(ctx, kind, modelPath, st, opts); m != nil {
		rep.ModelReason = why
		return m, nil
	}
	start := time.Now()
	m, err := kind.train(ctx, st, n, opts)
	if err != nil {
		return nil, fmt.Errorf("train %s on the database's %d papers: %w", kind.name, n, err)
	}
	if err := kind.save(modelPath, m); err != nil {
		return nil, fmt.Errorf("save %s's model: %w", kind.name, err)
	}
	for _, kv := range [][2]string{
		{kind.metaModel, m.Model()}, {kind.metaGen, strconv.FormatInt(gen, 10)}, {kind.metaDocs, strconv.Itoa(n)},
	} {
		if err := st.SetMeta(ctx, kv[0], kv[1]); err != nil {
			return nil, fmt.Errorf("record %s's model: %w", kind.name, err)
		}
	}
	rep.TrainTime = time.Since(start)
	rep.Trained = true
	rep.ModelReason = why
	return m, nil
}

// keepModel loads the saved model when it may be kept, and says why it
// was kept or why not (then the model is nil).
func keepModel(ctx context.Context, kind *trainedKind, path string, st *corpus.Store, opts Options) (dense.Embedder, string) {
	id, err := kind.id(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, "no model yet"
	}
	if err != nil {
		return nil, fmt.Sprintf("model unreadable (%v)", err)
	}
	var meta [3]string
	for i, k := range []string{kind.metaModel, kind.metaGen, kind.metaDocs} {
		if meta[i], err = st.Meta(ctx, k); err != nil {
			return nil, fmt.Sprintf("store unreadable (%v)", err)
		}
	}
	trainedGen, errGen := strconv.ParseInt(meta[1], 10, 64)
	trainedDocs, errDocs := strconv.Atoi(meta[2])
	if meta[0] != id || errGen != nil || errDocs != nil {
		return nil, "the store does not record when the model was trained"
	}
	if kind.outdated != nil {
		if why := kind.outdated(path); why != "" {
			return nil, why
		}
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
	m, err := kind.load(path)
	if err != nil {
		return nil, fmt.Sprintf("model unreadable (%v)", err)
	}
	return m, fmt.Sprintf("%d of %d papers changed since it was trained", drift, trainedDocs)
}

// storeSeq returns the papers of st as a sequence for a trainer, each
// mapped by f, and a function giving the error that ended the walk (nil
// when it ended because the trainer stopped, or at the last paper).
func storeSeq[T any](ctx context.Context, st *corpus.Store, f func(corpus.Paper) T) (iter.Seq[T], func() error) {
	var walkErr error
	stopWalk := errors.New("stop")
	seq := func(yield func(T) bool) {
		err := st.Each(ctx, func(p corpus.Paper) error {
			if !yield(f(p)) {
				return stopWalk
			}
			return nil
		})
		if err != nil && !errors.Is(err, stopWalk) {
			walkErr = err
		}
	}
	return seq, func() error { return walkErr }
}

// trainLSA trains the builtin embedder on every paper of the store.
func trainLSA(ctx context.Context, st *corpus.Store, n int, opts Options) (dense.Embedder, error) {
	texts, walkErr := storeSeq(ctx, st, lsa.Text)
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
	if err := walkErr(); err != nil {
		return nil, err
	}
	if err != nil {
		return nil, err
	}
	return m, nil
}

// trainContrast trains the contrast embedder (default options) on every
// paper of the store, with a progress bar per stage.
func trainContrast(ctx context.Context, st *corpus.Store, n int, opts Options) (dense.Embedder, error) {
	papers, walkErr := storeSeq(ctx, st, func(p corpus.Paper) corpus.Paper { return p })
	var analyze, train *progress.Bar
	prog := func(p contrast.Progress) {
		if opts.Progress == nil {
			return
		}
		switch p.Stage {
		case "analyze":
			if analyze == nil {
				analyze = progress.New(opts.Progress, "contrast analyze", int64(n), "papers")
			}
			analyze.Set(int64(p.Papers), 0)
		case "train":
			if train == nil {
				analyze.Done()
				train = progress.New(opts.Progress, "contrast train", int64(p.Epochs*p.Steps), "steps")
			}
			train.Set(int64((p.Epoch-1)*p.Steps+p.Step), 0)
		}
	}
	m, err := contrast.Train(ctx, papers, contrast.Options{}, prog)
	analyze.Done()
	train.Done()
	if err := walkErr(); err != nil {
		return nil, err
	}
	if err != nil {
		return nil, err
	}
	return m, nil
}
