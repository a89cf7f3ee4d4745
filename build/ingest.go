package build

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/internal/progress"
)

// DefaultBatchSize is the number of records stored per transaction.
const DefaultBatchSize = 2000

// IngestOptions configure Ingest. The zero value ingests every record of
// every file it has not seen before, quietly.
type IngestOptions struct {
	// Keep filters records (e.g. a benchmark's indexing rules); nil keeps
	// all. A dropped record is counted under its reason in
	// IngestSummary.Filtered, never silently.
	Keep func(corpus.Record) (keep bool, reason string)
	// BatchSize is the number of records per store transaction;
	// 0 means DefaultBatchSize.
	BatchSize int
	// Progress receives the progress display; nil means none.
	Progress io.Writer
	// OnError is called for every bad record or unreadable file as it is
	// found (e.g. to print "FILE:LINE: cause"); it may be nil.
	OnError func(error)
	// OnWarning is called for every problem that did not stop a record
	// from being stored, as it is found: a record's *corpus.Warning
	// (invalid UTF-8, an invalid DOI, a key that is not a safe ID), a
	// corpus.KeyConflict (a key already naming another paper, with both
	// FILE:LINE), and an input folder without supported files
	// (ErrNoInput). It may be nil.
	OnWarning func(error)
	// Force re-reads files the store has already ingested unchanged.
	Force bool
}

// IngestSummary says what Ingest did.
type IngestSummary struct {
	Files          int            // input files read
	FilesUnchanged int            // input files skipped: ingested before with the same content
	FilesIgnored   int            // files in folders without a supported extension
	Read           int            // records read successfully
	Added          int            // new papers stored
	Merged         int            // records that matched a stored paper (duplicates merged)
	Updated        int            // of the merged, those that filled missing fields
	AliasConflicts int            // record keys already naming another paper (the first kept)
	Unchanged      int            // records of changed files stored before as they are
	Changed        int            // records stored before whose content changed: their papers updated
	Withdrawn      int            // records gone from changed files: their papers updated
	Removed        int            // papers removed because no record of them was left
	Filtered       map[string]int // records dropped by IngestOptions.Keep, by reason
	Errors         []error        // bad records (*corpus.ParseError) and unreadable files, in order
	// Warnings are the problems reported through IngestOptions.OnWarning,
	// in order.
	Warnings []error
	// EmptyInputs are the input folders (or files) that gave no file to
	// read: empty, or without a supported extension.
	EmptyInputs []string
	Duration    time.Duration
}

// ErrNoInput means an input folder holds no file Ingest can read.
var ErrNoInput = errors.New("no supported files")

// ErrMissingInput means an input path does not exist (or cannot be
// read); Ensure refuses to start.
var ErrMissingInput = errors.New("input not found")

func (s *IngestSummary) add(st corpus.IngestStats) {
	s.Added += st.Added
	s.Merged += st.Merged
	s.Updated += st.Updated
	s.AliasConflicts += st.AliasConflicts
	s.Unchanged += st.Unchanged
	s.Changed += st.Changed
	s.Withdrawn += st.Withdrawn
	s.Removed += st.Removed
}

// Skipped is the number of records and files skipped because of errors.
func (s IngestSummary) Skipped() int { return len(s.Errors) }

// SkipReasons groups the errors by cause (the message without FILE:LINE).
func (s IngestSummary) SkipReasons() map[string]int {
	out := map[string]int{}
	for _, err := range s.Errors {
		var pe *corpus.ParseError
		if errors.As(err, &pe) {
			out[pe.Err.Error()]++
		} else {
			out[err.Error()]++
		}
	}
	return out
}

func (fb *fileBatch) source() corpus.Source {
	return corpus.Source{Path: fb.path, Size: fb.size, ModTime: fb.modTime, SHA256: fb.sum}
}

type inputFile struct {
	path string
	size int64
}

// bibPaths returns the BibTeX files among the inputs, in order.
func bibPaths(infos []inputFile) []string {
	var out []string
	for _, in := range infos {
		if corpus.IsBibTeX(in.path) {
			out = append(out, in.path)
		}
	}
	return out
}

// CollectFiles expands paths into the input files to read: a file is taken
// as given (an unsupported extension is an error naming it), a folder is
// walked and its files with a supported extension are taken, in lexical
// order. A file named twice (given twice, or also inside a folder given)
// is taken once, where it first appears. ignored counts the other files
// found in folders.
func CollectFiles(paths []string) (files []string, ignored int, err error) {
	files, ignored, _, err = collectFiles(paths)
	return files, ignored, err
}

// collectFiles is CollectFiles that also returns the folders that gave no
// file to read.
func collectFiles(paths []string) (files []string, ignored int, empty []string, err error) {
	exts := corpus.Extensions()
	supported := func(p string) bool { return slices.Contains(exts, strings.ToLower(filepath.Ext(p))) }
	var errs []error
	taken := map[string]bool{}
	take := func(p string) {
		key := filepath.Clean(p)
		if abs, err := filepath.Abs(p); err == nil {
			key = abs
		}
		if !taken[key] {
			taken[key] = true
			files = append(files, p)
		}
	}
	for _, p := range paths {
		fi, statErr := os.Stat(p)
		if statErr != nil {
			errs = append(errs, fmt.Errorf("input %s: %w", p, statErr))
			continue
		}
		if !fi.IsDir() {
			if !supported(p) {
				errs = append(errs, fmt.Errorf("%s: %w (supported: %s)", p, corpus.ErrUnknownFormat, strings.Join(exts, " ")))
				continue
			}
			take(p)
			continue
		}
		found := false
		walkErr := filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				return nil
			}
			if supported(path) {
				found = true
				take(path)
			} else {
				ignored++
			}
			return nil
		})
		if walkErr != nil {
			errs = append(errs, fmt.Errorf("walk %s: %w", p, walkErr))
		} else if !found {
			empty = append(empty, p)
		}
	}
	return files, ignored, empty, errors.Join(errs...)
}

// CheckInputs returns an error wrapping ErrMissingInput that names every
// path that does not exist or cannot be read, or nil.
func CheckInputs(paths []string) error {
	var errs []error
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			errs = append(errs, fmt.Errorf("%w: %s: %w", ErrMissingInput, p, err))
		}
	}
	return errors.Join(errs...)
}

// fileBatch is the records of one input file, handed from the reader to the
// store writer.
type fileBatch struct {
	path    string
	size    int64
	modTime time.Time
	sum     string
	recs    []corpus.Record
	errs    []error
	last    bool // the file's final batch: mark it seen once stored
	// unchanged: the file was ingested before with the same content.
	unchanged bool
	records   int     // records read from the file so far
	bad       bool    // the file had bad records: not marked seen, so they are reported again next run
	warns     []error // entries skipped as no reference (corpus.ErrNotReference), reported as warnings
}

// Ingest reads paths (files or folders) into the store. Bad records are
// reported through OnError and in the summary, skipped, and everything else
// is still stored. Each batch is one transaction (corpus.Store.IngestSource),
// and a file is finished (corpus.Store.FinishSource: records gone from a
// changed file withdrawn, the file marked as seen) only after all its
// records are stored, so an interrupted ingest loses nothing: the next run
// reads the unfinished files again, and records already stored as they are
// change nothing. A file with bad records is not finished: its good records
// are stored, nothing of its earlier version is withdrawn, and it is read
// (and its errors reported) again next time. A file missing from paths is
// not a deletion; see corpus.Store.Remove. Reading and storing run
// concurrently.
func Ingest(ctx context.Context, st *corpus.Store, paths []string, opts IngestOptions) (IngestSummary, error) {
	start := time.Now()
	sum := IngestSummary{Filtered: map[string]int{}}
	report := func(err error) {
		sum.Errors = append(sum.Errors, err)
		if opts.OnError != nil {
			opts.OnError(err)
		}
	}
	warn := func(err error) {
		sum.Warnings = append(sum.Warnings, err)
		if opts.OnWarning != nil {
			opts.OnWarning(err)
		}
	}
	files, ignored, empty, err := collectFiles(paths)
	sum.FilesIgnored = ignored
	if err != nil {
		for _, e := range unjoin(err) {
			report(e)
		}
	}
	for _, p := range empty {
		sum.EmptyInputs = append(sum.EmptyInputs, p)
		warn(fmt.Errorf("%s: warning: %w in this folder (supported: %s)", p, ErrNoInput, strings.Join(corpus.Extensions(), " ")))
	}
	batchSize := opts.BatchSize
	if batchSize <= 0 {
		batchSize = DefaultBatchSize
	}
	var total int64
	infos := make([]inputFile, 0, len(files))
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			report(fmt.Errorf("input %s: %w", f, err))
			continue
		}
		infos = append(infos, inputFile{f, fi.Size()})
		total += fi.Size()
	}
	var bar *progress.Bar
	if opts.Progress != nil {
		bar = progress.New(opts.Progress, "ingest", total>>10, "KiB")
	}

	// BibTeX files read together share their @string macros, as the files
	// of one \bibliography do (an abbreviations file beside the
	// references). A .bib file's fingerprint then covers the macros too,
	// so that changing a macro re-reads the files that may use it.
	var shared corpus.Shared
	if bibs := bibPaths(infos); len(bibs) > 1 {
		var err error
		if shared, err = corpus.SharedMacros(ctx, bibs); err != nil {
			return sum, err
		}
	}
	macroSum := shared.Digest()

	ch := make(chan fileBatch, 4)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { // reader
		defer close(ch)
		for _, in := range infos {
			b, err := os.ReadFile(in.path)
			if err != nil {
				ch <- fileBatch{path: in.path, errs: []error{fmt.Errorf("read %s: %w", in.path, err)}}
				continue
			}
			h := sha256.New()
			h.Write(b)
			bib := corpus.IsBibTeX(in.path)
			if bib {
				// A citefind whose BibTeX conversion changed re-reads the
				// file once, so that a database gets what it reads now.
				h.Write([]byte("\x00BibTeX conversion " + corpus.BibTeXConversion))
			}
			if bib && macroSum != "" {
				h.Write([]byte("\x00@string macros of the .bib files read with it: " + macroSum))
			}
			fb := fileBatch{path: in.path, size: int64(len(b)), sum: hex.EncodeToString(h.Sum(nil))}
			if fi, err := os.Stat(in.path); err == nil {
				fb.modTime = fi.ModTime()
			}
			if !opts.Force {
				seen, err := st.SourceSeen(gctx, in.path, fb.size, fb.modTime, fb.sum)
				if err != nil {
					return fmt.Errorf("check source %s: %w", in.path, err)
				}
				if seen {
					fb.last, fb.unchanged = true, true
					select {
					case ch <- fb:
					case <-gctx.Done():
						return gctx.Err()
					}
					continue
				}
			}
			send := func() error {
				select {
				case ch <- fb:
				case <-gctx.Done():
					return gctx.Err()
				}
				fb = fileBatch{path: fb.path, size: fb.size, modTime: fb.modTime, sum: fb.sum, records: fb.records, bad: fb.bad}
				return nil
			}
			var opts corpus.ReadOptions
			if bib {
				opts = shared.For(in.path)
			}
			err = corpus.ReadFileWith(gctx, in.path, opts, func(r corpus.Record) error {
				fb.recs = append(fb.recs, r)
				fb.records++
				if len(fb.recs) >= batchSize {
					return send()
				}
				return nil
			}, func(pe *corpus.ParseError) {
				if errors.Is(pe, corpus.ErrNotReference) {
					// Not a bad record: the file is complete without it.
					fb.warns = append(fb.warns, &corpus.Warning{File: pe.File, Line: pe.Line, Err: pe.Err})
					return
				}
				fb.errs = append(fb.errs, pe)
				fb.bad = true
			})
			if err != nil {
				if gctx.Err() != nil {
					return gctx.Err()
				}
				fb.errs = append(fb.errs, fmt.Errorf("read %s: %w", in.path, err))
				fb.bad = true
			}
			fb.last = true
			if err := send(); err != nil {
				return err
			}
		}
		return nil
	})
	g.Go(func() error { // writer
		for fb := range ch {
			for _, e := range fb.errs {
				report(e)
			}
			for _, w := range fb.warns {
				warn(w)
			}
			if fb.unchanged {
				sum.FilesUnchanged++
				bar.Add(fb.size >> 10)
				continue
			}
			var keep []corpus.Record
			if opts.Keep == nil {
				keep = fb.recs
			} else {
				for _, r := range fb.recs {
					if ok, why := opts.Keep(r); ok {
						keep = append(keep, r)
					} else {
						sum.Filtered[why]++
					}
				}
			}
			sum.Read += len(fb.recs)
			for _, r := range fb.recs {
				for _, w := range r.Warnings {
					warn(w)
				}
			}
			if len(keep) > 0 {
				st1, err := st.IngestSource(gctx, fb.source(), keep)
				if err != nil {
					return fmt.Errorf("store records of %s: %w", fb.path, err)
				}
				sum.add(st1)
				for _, kc := range st1.KeyConflicts {
					warn(kc)
				}
			}
			if fb.last {
				if fb.sum != "" { // "" when the file could not be read
					sum.Files++
				}
				if fb.sum != "" && !fb.bad {
					st1, err := st.FinishSource(gctx, fb.source(), fb.records)
					if err != nil {
						return fmt.Errorf("finish %s: %w", fb.path, err)
					}
					sum.add(st1)
				}
				bar.Add(fb.size >> 10)
			}
		}
		return nil
	})
	err = g.Wait()
	bar.Done()
	sum.Duration = time.Since(start)
	if err != nil {
		return sum, err
	}
	return sum, nil
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
