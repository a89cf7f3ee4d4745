package build

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/db"
)

// EnsureOptions configure Ensure. The zero value ingests nothing and
// brings the indexes and pipeline of an existing or new database up to
// date, waiting db.DefaultLockWait for another writer.
type EnsureOptions struct {
	// Files are the files and folders to ingest (see Ingest).
	Files []string
	// Keep filters records (e.g. a benchmark's indexing rules); nil keeps
	// all. See IngestOptions.Keep.
	Keep func(corpus.Record) (keep bool, reason string)
	// Collection, when not "", names what a benchmark database holds
	// (e.g. "acm-cr"): it is recorded in a new database, and a database
	// that records another collection is refused (ErrOtherCollection).
	Collection string
	// Embedder is the embedder spec (db.ParseEmbedder); "" keeps the one
	// the database records (none for a new database).
	Embedder string
	// Backend is the URL of the backend that holds the search index
	// ("local", or e.g. weaviate://HOST:PORT/COLLECTION, see
	// retrieve.Backends); "" keeps the one the database records (local
	// for a new database). The database records it for later commands.
	Backend string
	// Force re-reads unchanged files and rebuilds every index.
	Force bool
	// Progress receives the progress display; nil means none.
	Progress io.Writer
	// OnError is called for every bad record or unreadable file (e.g. to
	// print "FILE:LINE: cause"); nil ignores them (they are in the
	// report).
	OnError func(error)
	// OnWarning is called for every warning (see IngestOptions.OnWarning);
	// nil ignores them (they are in the report).
	OnWarning func(error)
	// Wait is how long to wait for another writer of the database; 0
	// means db.DefaultLockWait, negative tries once.
	Wait time.Duration
	// OnWait is called once when another process holds the lock, with its
	// pid (0 when unknown).
	OnWait func(pid int)
	// OnNew is called when the database held no paper before this run
	// (e.g. to say that a benchmark database is being built once).
	OnNew func()
}

// EnsureReport says what Ensure did.
type EnsureReport struct {
	Ingest IngestSummary
	Build  Report
	// PipelineWarning says why the pipeline file was replaced ("" when it
	// was not, or was written for the first time).
	PipelineWarning string
	// Papers is the number of papers in the store afterwards.
	Papers int
	// New is true when the database held no paper before.
	New bool
}

// ErrOtherCollection: the database holds another collection than the one
// EnsureOptions.Collection names.
var ErrOtherCollection = fmt.Errorf("the database holds another collection")

// Ensure makes the database in dir hold opts.Files, with up-to-date indexes
// and a pipeline file: it takes the write lock, creates the database when
// needed, ingests the files (unchanged ones are skipped, so a completed
// run costs little and an interrupted one is completed), brings the
// indexes up to date (Indexes) and writes the pipeline of the database's
// embedder when it has none (db.DB.EnsurePipeline). It is what `index`,
// `eval` (benchmark databases) and the sample database of the tests run.
//
// An input path that does not exist is an error (wrapping
// ErrMissingInput, naming every such path) before anything is created or
// read.
func Ensure(ctx context.Context, dir string, opts EnsureOptions) (EnsureReport, error) {
	var rep EnsureReport
	if err := CheckInputs(opts.Files); err != nil {
		return rep, err
	}
	wait := opts.Wait
	if wait == 0 {
		wait = db.DefaultLockWait
	}
	lock, err := db.Lock(ctx, dir, wait, opts.OnWait)
	if err != nil {
		return rep, err
	}
	defer lock.Unlock()
	d, err := db.Create(ctx, dir)
	if err != nil {
		return rep, err
	}
	defer d.Close()
	n, err := d.Store.Count(ctx)
	if err != nil {
		return rep, err
	}
	rep.New = n == 0
	if opts.Collection != "" {
		cur, err := d.Collection(ctx)
		if err != nil {
			return rep, err
		}
		switch {
		case n == 0:
			if err := d.SetCollection(ctx, opts.Collection); err != nil {
				return rep, err
			}
		case cur != opts.Collection:
			what := fmt.Sprintf("collection %q", cur)
			if cur == "" {
				what = "papers indexed with `citefind index`"
			}
			return rep, fmt.Errorf("%w: %s holds %s, not %s; pass another --db (or evaluate it as it is: --db without --corpus)", ErrOtherCollection, dir, what, opts.Collection)
		}
	}
	if rep.New && opts.OnNew != nil {
		opts.OnNew()
	}
	if opts.Backend != "" {
		if err := d.SetBackend(ctx, opts.Backend); err != nil {
			return rep, err
		}
	}
	if rep.Ingest, err = Ingest(ctx, d.Store, opts.Files, IngestOptions{Keep: opts.Keep, Progress: opts.Progress, Force: opts.Force, OnError: opts.OnError, OnWarning: opts.OnWarning}); err != nil {
		return rep, err
	}
	if rep.Build, err = Indexes(ctx, d, Options{Progress: opts.Progress, Force: opts.Force, Embedder: opts.Embedder}); err != nil {
		return rep, err
	}
	if rep.PipelineWarning, err = d.EnsurePipeline(ctx); err != nil {
		return rep, err
	}
	rep.Papers, err = d.Store.Count(ctx)
	return rep, err
}
