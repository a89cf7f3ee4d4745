package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/citefind/citefind/build"
	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/db"
	"github.com/citefind/citefind/retrieve"
)

type indexCmd struct{ env }

func (c *indexCmd) Name() string { return "index" }
func (c *indexCmd) Synopsis() string {
	return "ingest BibTeX / JSONL / CSL-JSON files or folders and build the search indexes"
}

const indexUsage = `Usage: citefind index [--db DIR] [--embedder none|builtin|contrast|ollama:MODEL] [--backend URL] [--keep-going] [--force] [--quiet] [--wait DURATION] PATH...

Reads every PATH (a file, or a folder walked for .bib .bibtex .jsonl .ndjson
.json files) into the paper store of DIR, then brings the BM25 index up to
date: the papers changed since it was built are applied to it, or it is
rebuilt when many changed. Files ingested before with the same content are
skipped (a .bib file is read once more after an upgrade that changed how
citefind converts BibTeX); in a changed file, changed records update their papers and records
no longer there are withdrawn (a paper left with none is removed). A file
not given is not a deletion: use citefind remove. With no PATH, only brings
the indexes up to date with the store. The .bib files of one run share their
@string macros, as BibTeX's \bibliography{abbrev,refs} does: index an
abbreviations file together with the files that use it. When two of them
define a macro differently (IEEEabrv.bib and IEEEfull.bib), the entries of
the other files get the value of the file given last, with a warning that
names both.

A file named twice (also inside a folder given) is read once. A killed run
loses nothing: run it again. One process writes a database at a
time; another one waits up to --wait for it, then gives up.

Bad records are reported as FILE:LINE: cause and skipped; everything else is
stored. Problems that do not stop a record from being stored are reported as
FILE:LINE: warning: cause: a .bib file that is not UTF-8 (read as Latin-1
when it holds no UTF-8 at all, else each invalid byte replaced by U+FFFD), a DOI that is
not valid, a key that cannot be used in [[cite:KEY]] as written, a key that
already names another paper (with the FILE:LINE of both). Entries that are
no reference (biblatex's @set and @xdata, @IEEEtranBSTCTL, REVTeX's
@control) are skipped with a warning, not as errors; the fields of an
@xdata entry go to the entries of its file whose xdata field names it, and
an xdata or crossref key that names no entry of the file is a warning. A PATH that does not
exist is an error before anything is created; a folder without supported files
is a warning. The run ends with a summary and exits with status 1 when anything
was skipped or a folder held no supported file, unless --keep-going.

--embedder also builds a dense (embedding) index, for query --retrievers
bm25,dense: contrast is an embedder trained contrastively on the
database's own papers (768 dimensions, offline, about a minute for 100,000
papers on 2 cores; needs at least 32 papers with an abstract; see
docs/dense.md); builtin is LSA trained the same way (512 dimensions,
cheaper, weaker). Both keep their saved model across small changes (new and
changed papers are embedded with it) and retrain it when over 10% of its
papers changed, or with --force; ollama:MODEL embeds with an Ollama server (OLLAMA_HOST), e.g.
ollama:nomic-embed-text. Embeddings are cached in DIR/embeddings.sqlite. The
database records the embedder and queries use the same one; a later index
without --embedder keeps it. A new database gets contrast (measured to
help on every collection of the evaluation suite, docs/benchmarks.md) when
it has enough papers to train it on, else no dense index until a later run
can; --embedder none removes one and keeps it away.

--backend puts the search index elsewhere: weaviate://HOST:PORT[,HOST:PORT…]
/COLLECTION[?shards=N&replicas=R] sends the papers (citefind's analysed text, and
vectors from the embedder) to a Weaviate server or cluster, in batches that
follow the store (adds, changes, removals; a killed run resumes). The store
stays in DIR, the canonical record. The database records the backend, so
query, eval, serve, mcp, status and remove use it; --backend local goes back
to the indexes in DIR. Name several nodes of a cluster and requests move to
the next node when one fails, and slow reads are also sent to it (hedge=3s).
A node that fails in the middle of a write can keep papers without some of
their index entries: the sync says so and the next one writes those papers
again; --force writes every paper again, on every replica. docs/scale.md has
the details.`

func (c *indexCmd) Run(ctx context.Context, args []string) error {
	fs := newFlagSet(c.env, "index", indexUsage)
	dbDir := dbFlag(fs)
	keepGoing := fs.Bool("keep-going", false, "exit 0 even when bad records were skipped")
	force := fs.Bool("force", false, "re-read unchanged files and rebuild the indexes")
	quiet := fs.Bool("quiet", false, "no progress display")
	wait := waitFlag(fs)
	embedder := fs.String("embedder", "", "dense embedder: none, builtin, contrast or ollama:MODEL (default: the one the database records, else none)")
	backend := fs.String("backend", "", "`URL` of the search index: local, or weaviate://HOST:PORT[,HOST:PORT…]/COLLECTION[?shards=N&replicas=R] (default: the one the database records, else local)")
	paths, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if *embedder != "" {
		if _, err := db.ParseEmbedder(*embedder); err != nil {
			return usageErr("index: --embedder: %v", err)
		}
	}
	if *backend != "" {
		u, err := retrieve.ParseBackendURL(*backend)
		if err != nil {
			return usageErr("index: --backend: %v", err)
		}
		if !slices.Contains(retrieve.Backends(), u.Scheme) {
			return usageErr("index: --backend: unknown backend %q (available: %s)", u.Scheme, strings.Join(retrieve.Backends(), ", "))
		}
	}
	var prog io.Writer = c.stderr
	if *quiet {
		prog = nil
	}
	rep, err := build.Ensure(ctx, *dbDir, build.EnsureOptions{
		Files: paths, Embedder: *embedder, Backend: *backend, Force: *force, Progress: prog, Wait: *wait,
		OnWait:    waitingFor(c.env, *dbDir, *wait),
		OnError:   func(err error) { fmt.Fprintln(c.stderr, err) },
		OnWarning: func(err error) { fmt.Fprintln(c.stderr, err) },
	})
	if err != nil {
		return err
	}
	if rep.PipelineWarning != "" {
		fmt.Fprintln(c.stderr, "warning:", rep.PipelineWarning)
	}
	printIngestSummary(c.stdout, *dbDir, rep.Ingest, rep.Build, rep.Papers)
	if n := rep.Ingest.Skipped(); n > 0 && !*keepGoing {
		return fmt.Errorf("%s skipped (listed above); fix them, or pass --keep-going to accept", plural(n, "bad record or file"))
	}
	if e := rep.Ingest.EmptyInputs; len(e) > 0 && !*keepGoing {
		return fmt.Errorf("%s: no supported file (%s) to read; check the path, or pass --keep-going to accept", strings.Join(e, ", "), strings.Join(corpus.Extensions(), " "))
	}
	return nil
}

func printIngestSummary(w io.Writer, dir string, sum build.IngestSummary, rep build.Report, total int) {
	if rep.Leftovers > 0 {
		fmt.Fprintf(w, "removed %d unfinished index folder(s) left by an interrupted run\n", rep.Leftovers)
	}
	if rep.Dense.Leftovers > 0 {
		fmt.Fprintf(w, "removed %d unfinished dense index or model file(s) left by an interrupted run\n", rep.Dense.Leftovers)
	}
	fmt.Fprintf(w, "index summary for %s\n", dir)
	fmt.Fprintf(w, "  files read:        %d (%d unchanged and skipped, %d in folders ignored: not a supported format)\n", sum.Files, sum.FilesUnchanged, sum.FilesIgnored)
	fmt.Fprintf(w, "  records read:      %d\n", sum.Read)
	fmt.Fprintf(w, "  papers stored:     %d new, %d in the store\n", sum.Added, total)
	fmt.Fprintf(w, "  duplicates merged: %d (%d filled missing fields)\n", sum.Merged, sum.Updated)
	if sum.Unchanged+sum.Changed+sum.Withdrawn+sum.Removed > 0 {
		fmt.Fprintf(w, "  changed files:     %d records unchanged, %d changed, %d withdrawn; %d papers removed (no record left)\n",
			sum.Unchanged, sum.Changed, sum.Withdrawn, sum.Removed)
	}
	if sum.AliasConflicts > 0 {
		fmt.Fprintf(w, "  key conflicts:     %d record keys already named another paper (first kept; listed above)\n", sum.AliasConflicts)
	}
	notRef, conflicts := 0, 0
	for _, err := range sum.Warnings {
		switch {
		case errors.Is(err, corpus.ErrNotReference):
			notRef++
		case errors.Is(err, corpus.ErrMacroConflict):
			conflicts++
		}
	}
	if n := len(sum.Warnings) - notRef; n > 0 {
		fmt.Fprintf(w, "  warnings:          %d (listed above; the records were stored)\n", n)
	}
	if notRef > 0 {
		fmt.Fprintf(w, "  not references:    %d entries skipped (@set, @xdata, style control entries; listed above)\n", notRef)
	}
	if len(sum.Filtered) > 0 {
		fmt.Fprintf(w, "  filtered out:      %d\n", sumMap(sum.Filtered))
		writeReasons(w, sum.Filtered)
	}
	fmt.Fprintf(w, "  skipped (errors):  %d\n", sum.Skipped())
	writeReasons(w, sum.SkipReasons())
	if conflicts > 0 {
		who := fmt.Sprintf("%d entries use", conflicts)
		if conflicts == 1 {
			who = "1 entry uses"
		}
		fmt.Fprintf(w, "  (%s a @string macro that the .bib files define differently, with the value of the file given last; give only the file you mean)\n", who)
	}
	if slices.ContainsFunc(sum.Errors, func(err error) bool { return errors.Is(err, corpus.ErrUndefinedMacro) }) {
		fmt.Fprintf(w, "  (an undefined @string macro may be defined in another .bib file: give that file in the same run, e.g. citefind index abbrev.bib refs.bib)\n")
	}
	switch {
	case rep.Remote != nil:
		r := rep.Remote
		fmt.Fprintf(w, "  search index:      %s: %d papers sent, %d removed; at store generation %d\n", rep.Backend, r.Sent, r.Removed, r.Generation)
		if r.Rewritten > 0 {
			fmt.Fprintf(w, "  written again:     %d papers an earlier sync wrote while a replica failed, so that every replica indexes them\n", r.Rewritten)
		}
		for _, warn := range r.Warnings {
			fmt.Fprintf(w, "    warning: %s\n", warn)
		}
	case rep.SparseBuilt:
		fmt.Fprintf(w, "  bm25 index:        rebuilt (%s), %d papers in %s (%.1f MiB)\n", rep.Reason, rep.Sparse.Docs, rep.Sparse.Duration.Round(1e7), float64(rep.Sparse.Bytes)/(1<<20))
	case rep.SparseUpdated:
		u := rep.Update
		fmt.Fprintf(w, "  bm25 index:        updated: %d added, %d replaced, %d deleted; %d papers, in %s\n", u.Added, u.Replaced, u.Deleted, u.Docs, u.Duration.Round(1e6))
	default:
		fmt.Fprintf(w, "  bm25 index:        up to date\n")
	}
	switch d := rep.Dense; {
	case rep.Remote != nil:
		if d.Embedder != "" && d.Embedder != db.EmbedderNone {
			fmt.Fprintf(w, "  vectors:           %s, sent with the papers", d.Embedder)
			if d.Trained {
				fmt.Fprintf(w, " (model trained: %s, in %s)", d.ModelReason, d.TrainTime.Round(1e7))
			}
			fmt.Fprintln(w)
		}
	case d.Built:
		s := d.Stats
		rate := 0.0
		if sec := (s.Duration - d.TrainTime).Seconds(); sec > 0 {
			rate = float64(s.Embedded+s.Cached) / sec
		}
		fmt.Fprintf(w, "  dense index:       rebuilt (%s) with %s, %d papers × %d dims in %s", d.Reason, d.Embedder, s.Docs, s.Dim, s.Duration.Round(1e7))
		switch {
		case d.Trained:
			fmt.Fprintf(w, " (model trained: %s, in %s)", d.ModelReason, d.TrainTime.Round(1e7))
		case d.ModelReason != "":
			fmt.Fprintf(w, " (model kept: %s)", d.ModelReason)
		}
		fmt.Fprintf(w, ", %d embedded, %d cached, %.0f papers/s, %.1f MiB\n", s.Embedded, s.Cached, rate, float64(s.Bytes)/(1<<20))
	case d.Skipped != "":
		fmt.Fprintf(w, "  dense index:       none: %s; the next index run tries again (--embedder none: never)\n", d.Skipped)
	case d.Removed:
		fmt.Fprintf(w, "  dense index:       removed (embedder none)\n")
	case d.Embedder == db.EmbedderNone:
		// Databases made before contrast became the default record none.
		fmt.Fprintf(w, "  dense index:       none (embedder none: BM25 only; --embedder contrast adds the trained embedder, docs/dense.md)\n")
	case d.Embedder != "" && d.Embedder != db.EmbedderNone:
		if d.Sidecar {
			fmt.Fprintf(w, "  dense index:       up to date (%s); fast-load sidecar written\n", d.Embedder)
		} else {
			fmt.Fprintf(w, "  dense index:       up to date (%s)\n", d.Embedder)
		}
	}
	fmt.Fprintf(w, "  time:              %s ingest\n", sum.Duration.Round(1e7))
}

func sumMap(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func writeReasons(w io.Writer, m map[string]int) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	for _, k := range keys {
		fmt.Fprintf(w, "    %6d × %s\n", m[k], strings.TrimSpace(k))
	}
}
