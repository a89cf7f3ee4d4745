package build

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/db"
	"github.com/citefind/citefind/internal/progress"
	"github.com/citefind/citefind/retrieve"
	"github.com/citefind/citefind/retrieve/dense/contrast"
	"github.com/citefind/citefind/retrieve/local"
	"github.com/citefind/citefind/retrieve/sparse"
)

// DefaultRebuildFraction is Options.RebuildFraction's default.
const DefaultRebuildFraction = 0.2

// DefaultRetrainFraction is Options.RetrainFraction's default: the
// builtin LSA model is retrained once more than 10% of the papers it was
// trained on were added, changed or removed. Until then new papers are
// folded into it: embedded with its vocabulary and idf, so words new to
// the collection are not seen by the dense side (BM25 sees them) and the
// latent dimensions reflect the collection as it was. 10% bounds that
// drift while keeping the usual small updates (a few files, hundreds of
// papers) at one embedding each instead of a 40 s retraining and a full
// re-embedding.
const DefaultRetrainFraction = 0.1

// Options configure Indexes.
type Options struct {
	Progress io.Writer           // progress display; nil means none
	Force    bool                // rebuild even when the index is up to date
	Sparse   sparse.BuildOptions // BM25 index options; zero value = defaults
	// RebuildFraction: when more papers than this fraction of the
	// index's documents changed or went since the index was built, the
	// index is rebuilt instead of updated. 0 means DefaultRebuildFraction.
	RebuildFraction float64
	// RetrainFraction: when more papers than this fraction of those the
	// builtin LSA model was trained on were added, changed or removed
	// since, the model is retrained; below it they are folded into the
	// saved model. 0 means DefaultRetrainFraction. Force always retrains.
	RetrainFraction float64
	// Embedder is the embedder spec of the dense index (ParseEmbedder:
	// none, builtin, contrast, ollama:MODEL). "" means the one the store
	// records, and for a database that records none yet (a new one)
	// db.DefaultEmbedder on the local backend, none on a remote one. The
	// spec used is recorded in the store, for queries and later runs;
	// when the default embedder cannot be trained (too few papers) the
	// database gets no dense index, DenseReport.Skipped says why, and
	// nothing is recorded, so that a later run tries again.
	Embedder string
}

// Report says what Indexes did to each index.
type Report struct {
	SparseBuilt   bool              // rebuilt from scratch
	SparseUpdated bool              // updated in place (incrementally)
	Sparse        sparse.BuildStats // when built
	Update        sparse.UpdateStats
	Reason        string // why the index was rebuilt or updated; "" when up to date
	Leftovers     int    // temp folders of killed builds removed
	Generation    int64  // the store generation the index now matches
	Dense         DenseReport
	// Backend is the backend URL when the search index is remote (""
	// for the local backend); Remote says what its sync did.
	Backend string
	Remote  *retrieve.SyncReport
}

// Indexes brings the derived indexes of the database d up to date with
// its store. Call it holding the database lock (db.Lock).
//
// The BM25 index is left alone when it was built from the store's current
// generation. When it is older, the papers changed and removed since its
// generation (corpus.Store.EachSince, RemovedSince) are applied to it with
// sparse.Update, unless they are more than RebuildFraction of its
// documents; it is rebuilt from the whole store when that is cheaper, when
// it is missing or unreadable, when it was built with other fields, or with
// Force. Both ways write aside and rename into place when complete, so an
// interrupted run leaves the previous index (and its generation), and the
// next run applies the changes again. Leftover temp folders of killed runs
// are removed first.
//
// Then the dense index is brought up to date for opts.Embedder (see
// buildDense), and the embedder spec recorded in the store.
func Indexes(ctx context.Context, d *db.DB, opts Options) (Report, error) {
	spec := opts.Embedder
	recorded, err := d.EmbedderRecorded(ctx)
	if err != nil {
		return Report{}, err
	}
	if spec == "" {
		if spec, err = d.Embedder(ctx); err != nil {
			return Report{}, err
		}
	}
	spec, err = db.ParseEmbedder(spec)
	if err != nil {
		return Report{}, err
	}
	url, err := d.Backend(ctx)
	if err != nil {
		return Report{}, err
	}
	if url != local.Scheme {
		return syncRemote(ctx, d, url, spec, opts)
	}
	auto := opts.Embedder == "" && !recorded
	if auto {
		spec = db.DefaultEmbedder
	}
	rep, err := buildSparseIndex(ctx, d.Dir, d.Store, opts)
	if err != nil {
		return rep, err
	}
	rep.Dense, err = buildDense(ctx, d.Dir, d.Store, rep.Generation, spec, opts)
	if auto && errors.Is(err, contrast.ErrTooSmall) {
		why := err.Error()
		if rep.Dense, err = buildDense(ctx, d.Dir, d.Store, rep.Generation, db.EmbedderNone, opts); err != nil {
			return rep, err
		}
		rep.Dense.Skipped = fmt.Sprintf("the default embedder (%s) was not trained: %s", spec, why)
		return rep, nil
	}
	if err != nil {
		return rep, err
	}
	if err := d.SetEmbedder(ctx, spec); err != nil {
		return rep, err
	}
	return rep, nil
}

// buildSparseIndex is Indexes for the BM25 index.
func buildSparseIndex(ctx context.Context, dir string, st *corpus.Store, opts Options) (Report, error) {
	var rep Report
	gen, err := st.Generation(ctx)
	if err != nil {
		return rep, err
	}
	rep.Generation = gen
	path := filepath.Join(dir, local.SparseDir)
	if rep.Leftovers, err = sparse.RemoveLeftovers(path); err != nil {
		return rep, err
	}
	info := local.SparseInfo(dir)
	wantFields := opts.Sparse.Fields
	if len(wantFields) == 0 {
		wantFields = sparse.DefaultFields()
	}
	switch {
	case opts.Force:
		rep.Reason = "--force"
	case !info.Exists:
		rep.Reason = "no index yet"
	case info.OpenErr != nil:
		rep.Reason = fmt.Sprintf("index unreadable (%v)", info.OpenErr)
	case !sameFields(info.Fields, wantFields):
		rep.Reason = "index has other fields"
	case info.Generation == gen:
		return rep, nil
	case info.Generation < 0 || info.Generation > gen:
		rep.Reason = fmt.Sprintf("index generation %d does not belong to this store (at %d)", info.Generation, gen)
	default:
		changed, err := st.CountChangedSince(ctx, info.Generation)
		if err != nil {
			return rep, err
		}
		removed, err := st.RemovedSince(ctx, info.Generation)
		if err != nil {
			return rep, err
		}
		frac := opts.RebuildFraction
		if frac <= 0 {
			frac = DefaultRebuildFraction
		}
		n := changed + len(removed)
		if float64(n) > frac*float64(info.Docs) {
			rep.Reason = fmt.Sprintf("%d of %d papers changed: rebuilding is cheaper", n, info.Docs)
			break
		}
		rep.Reason = fmt.Sprintf("%d papers changed or added, %d removed since generation %d", changed, len(removed), info.Generation)
		us, err := updateSparse(ctx, path, st, info.Generation, gen, removed, changed, opts)
		if err == nil {
			rep.SparseUpdated = true
			rep.Update = us
			return rep, nil
		}
		if !errors.Is(err, sparse.ErrNeedsRebuild) && !errors.Is(err, sparse.ErrNotIndex) {
			return rep, fmt.Errorf("update bm25 index: %w", err)
		}
		rep.Reason = fmt.Sprintf("index cannot be updated (%v)", err)
	}
	stats, err := buildSparse(ctx, path, st, gen, opts)
	if err != nil {
		return rep, fmt.Errorf("build bm25 index: %w", err)
	}
	rep.SparseBuilt = true
	rep.Sparse = stats
	return rep, nil
}

func sameFields(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// papers turns a store walk into a pull iterator for sparse.Build/Update.
func papers(walk func(fn func(corpus.Paper) error) error) (next func() (corpus.Paper, bool, error), stop func()) {
	seq := func(yield func(corpus.Paper, error) bool) {
		stopErr := errors.New("stop")
		err := walk(func(p corpus.Paper) error {
			if !yield(p, nil) {
				return stopErr
			}
			return nil
		})
		if err != nil && !errors.Is(err, stopErr) {
			yield(corpus.Paper{}, err)
		}
	}
	pull, stopPull := iter.Pull2(iter.Seq2[corpus.Paper, error](seq))
	return func() (corpus.Paper, bool, error) {
		p, err, ok := pull()
		if !ok {
			return corpus.Paper{}, false, nil
		}
		if err != nil {
			return corpus.Paper{}, false, err
		}
		return p, true, nil
	}, stopPull
}

func buildSparse(ctx context.Context, path string, st *corpus.Store, gen int64, opts Options) (sparse.BuildStats, error) {
	n, err := st.Count(ctx)
	if err != nil {
		return sparse.BuildStats{}, err
	}
	var bar *progress.Bar
	if opts.Progress != nil {
		bar = progress.New(opts.Progress, "bm25 index", int64(n), "papers")
	}
	next, stop := papers(func(fn func(corpus.Paper) error) error { return st.Each(ctx, fn) })
	defer stop()
	bo := opts.Sparse
	bo.Meta = map[string]string{local.MetaGeneration: strconv.FormatInt(gen, 10)}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return sparse.BuildStats{}, fmt.Errorf("create database folder: %w", err)
	}
	stats, err := sparse.Build(ctx, path, bo, next, func(done int) { bar.Set(int64(done), 0) })
	bar.Done()
	return stats, err
}

func updateSparse(ctx context.Context, path string, st *corpus.Store, from, gen int64, removed []string, changed int, opts Options) (sparse.UpdateStats, error) {
	var bar *progress.Bar
	if opts.Progress != nil {
		bar = progress.New(opts.Progress, "bm25 update", int64(changed+len(removed)), "papers")
	}
	next, stop := papers(func(fn func(corpus.Paper) error) error { return st.EachSince(ctx, from, fn) })
	defer stop()
	us, err := sparse.Update(ctx, path, sparse.UpdateOptions{
		BatchSize: opts.Sparse.BatchSize,
		Meta:      map[string]string{local.MetaGeneration: strconv.FormatInt(gen, 10)},
	}, next, removed, func(done int) { bar.Set(int64(done), 0) })
	bar.Done()
	return us, err
}
