package citefind

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"strconv"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/internal/progress"
	"github.com/citefind/citefind/retrieve/sparse"
)

// metaGeneration is the index metadata key holding the store generation an
// index was built from.
const metaGeneration = "store_generation"

// BuildOptions configure BuildIndexes.
type BuildOptions struct {
	Progress io.Writer           // progress display; nil means none
	Force    bool                // rebuild even when the index is up to date
	Sparse   sparse.BuildOptions // BM25 index options; zero value = defaults
}

// BuildReport says which indexes were (re)built.
type BuildReport struct {
	SparseBuilt bool
	Sparse      sparse.BuildStats
	Generation  int64
}

// IndexState tells whether the BM25 index at dir matches the store.
func IndexState(ctx context.Context, dir string, st *corpus.Store) (upToDate bool, docs int, err error) {
	gen, err := st.Generation(ctx)
	if err != nil {
		return false, 0, err
	}
	r, err := sparse.Open(filepath.Join(dir, SparseDir), sparse.Options{})
	if err != nil {
		return false, 0, nil
	}
	defer r.Close()
	v, _ := r.Meta(metaGeneration)
	return v == strconv.FormatInt(gen, 10), r.Count(), nil
}

// BuildIndexes (re)builds the derived indexes of the database folder dir
// from the store when they are missing or older than the store. A build is
// written aside and swapped in only when complete, so an interrupted build
// leaves the previous index (or none) in place.
func BuildIndexes(ctx context.Context, dir string, st *corpus.Store, opts BuildOptions) (BuildReport, error) {
	var rep BuildReport
	gen, err := st.Generation(ctx)
	if err != nil {
		return rep, err
	}
	rep.Generation = gen
	if !opts.Force {
		ok, _, err := IndexState(ctx, dir, st)
		if err != nil {
			return rep, err
		}
		if ok {
			return rep, nil
		}
	}
	n, err := st.Count(ctx)
	if err != nil {
		return rep, err
	}
	var bar *progress.Bar
	if opts.Progress != nil {
		bar = progress.New(opts.Progress, "bm25 index", int64(n), "papers")
	}
	seq := func(yield func(corpus.Paper, error) bool) {
		stop := errors.New("stop")
		err := st.Each(ctx, func(p corpus.Paper) error {
			if !yield(p, nil) {
				return stop
			}
			return nil
		})
		if err != nil && !errors.Is(err, stop) {
			yield(corpus.Paper{}, err)
		}
	}
	next, stopPull := iter.Pull2(iter.Seq2[corpus.Paper, error](seq))
	defer stopPull()
	bo := opts.Sparse
	bo.Meta = map[string]string{metaGeneration: strconv.FormatInt(gen, 10)}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return rep, fmt.Errorf("create database folder: %w", err)
	}
	stats, err := sparse.Build(ctx, filepath.Join(dir, SparseDir), bo, func() (corpus.Paper, bool, error) {
		p, err, ok := next()
		if !ok {
			return corpus.Paper{}, false, nil
		}
		if err != nil {
			return corpus.Paper{}, false, err
		}
		return p, true, nil
	}, func(done int) { bar.Set(int64(done), 0) })
	bar.Done()
	if err != nil {
		return rep, fmt.Errorf("build bm25 index: %w", err)
	}
	rep.SparseBuilt = true
	rep.Sparse = stats
	return rep, nil
}
