package corpus

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// IngestStats counts what one Ingest did.
type IngestStats struct {
	Read           int // records given
	Added          int // records that became a new paper
	Merged         int // records that matched an existing paper (same ID or fingerprint)
	Updated        int // of the merged, how many filled a gap of the paper
	Skipped        int // records with neither DOI, arXiv id nor title: nothing to identify them by
	Aliases        int // new aliases stored
	AliasConflicts int // record keys already naming a different paper (the first one is kept)
	// KeyConflicts says where each alias conflict of a record read from
	// a file was: the key, the record and the paper it keeps naming.
	KeyConflicts []KeyConflict
	Unchanged    int // records stored before with the same content: nothing to do
	Changed      int // records stored before whose content or key changed
	Withdrawn    int // records gone from a changed file (FinishSource)
	Recomputed   int // papers recomputed from their records with a different result
	Removed      int // papers removed because no record of them was left
}

// KeyConflict is a record key that already named another paper: the key
// keeps naming that paper, and the record's paper does not get it as an
// alias.
type KeyConflict struct {
	Key       string // as written
	File      string // the record's file
	Line      int    // and line
	Paper     string // the ID of the record's paper
	Other     string // the ID of the paper the key names
	OtherFile string // where the other paper's record with this key (else its first record) was read; "" when unknown
	OtherLine int
}

// Error describes the conflict as "FILE:LINE: warning: duplicate key …".
func (k KeyConflict) Error() string {
	where := ""
	if k.OtherFile != "" {
		where = fmt.Sprintf(" (%s:%d)", k.OtherFile, k.OtherLine)
	}
	return fmt.Sprintf("%s:%d: warning: %v %q: it already names paper %s%s, and keeps naming it; this record's paper %s is not reachable by it",
		k.File, k.Line, ErrDuplicateKey, k.Key, k.Other, where, k.Paper)
}

// Unwrap returns ErrDuplicateKey.
func (k KeyConflict) Unwrap() error { return ErrDuplicateKey }

// checkEvery is how many records Ingest handles between ctx checks.
const checkEvery = 256

// Source is one version of an input file: its path and what identifies its
// content.
type Source struct {
	Path    string
	Size    int64
	ModTime time.Time
	SHA256  string // hex; identifies this version of the file
}

// Ingest stores a batch of records in one transaction; when it fails or ctx
// is cancelled, nothing of the batch is stored. It is IngestSource without
// a source version: records are not stamped, and FinishSource withdraws
// them when their file is next finished.
func (s *Store) Ingest(ctx context.Context, recs []Record) (IngestStats, error) {
	st, err := s.ingest(ctx, "", recs)
	return st, withCtxErr(ctx, err)
}

// IngestSource stores a batch of records read from the version src of one
// file (every record's File is src.Path) in one transaction; when it fails
// or ctx is cancelled, nothing of the batch is stored. A file is ingested
// in batches and then finished with FinishSource.
//
// # How records become papers
//
// The store keeps every record it is given (its normalised content, its
// file, Ref, line and key) and which paper it belongs to; a paper is the
// merge of its records. A record is named by its file and Ref (Record.Ref;
// "@"+Line when empty, the batch position for records without a file).
//
//   - A record already stored with the same content and key changes nothing
//     (its line and stamp are updated).
//   - A new or changed record gets its stable ID from PaperID of its item's
//     Paper and is matched against the store: by ID; else, for a record
//     without DOI and arXiv id, by an absorbed "h:" ID or by fingerprint
//     when exactly one paper has it. A matched paper's item is completed
//     with the record's (MergeItems: variables it lacks filled, nothing
//     overwritten); an unmatched one is inserted. A new paper with DOI or arXiv id absorbs
//     the paper "h:"+its fingerprint if that exists and no other paper has
//     the fingerprint; the absorbed ID becomes an alias.
//   - Precedence: records are ordered by file (in the order files were first
//     ingested), then line. When a paper gains a record that precedes one it
//     has, or one of its records changes or is withdrawn, the paper is
//     recomputed from its records: the first record wins a conflicting
//     variable, later ones fill gaps (MergeItems), so the result is what ingesting
//     the records afresh in that order gives. A paper left without records
//     is removed. If the recomputed paper's ID would differ (say its only
//     DOI record went), the paper is removed and its records are matched
//     again one by one.
//   - The record's Key becomes an alias of its paper unless it is empty,
//     equal to the ID, or (case-insensitively for DOI-like keys) already
//     names a different paper, which counts as an AliasConflict (and, for
//     a record read from a file, a KeyConflict saying where). A
//     recomputed paper drops the key aliases no record of it has any more.
//
// Each record's CSL-JSON item is stored as given (Record.Item, compacted;
// a record without one stores its Paper's CSL-JSON form, Key as its id),
// and its Paper is PaperFromItem of it. A paper's item is the merge of its
// records' items in precedence order (MergeItems: the first record's item,
// completed with the variables it lacks from the later ones, each variable
// taken whole from one record) with "id" set to the paper ID; its Paper is
// PaperFromItem of that (Store.Items gives the items, RecordSources the
// records' items as read). Keys become aliases in their safe-ID form
// (EscapeID); a key longer than MaxIDLen when escaped is not kept.
// The generation is bumped when a paper or alias was added, changed or
// removed; every changed paper gets the new generation (EachSince) and
// every removed one a tombstone (RemovedSince).
func (s *Store) IngestSource(ctx context.Context, src Source, recs []Record) (IngestStats, error) {
	for i := range recs {
		if recs[i].File != src.Path {
			return IngestStats{}, fmt.Errorf("ingest source %s: record %d is from %q", src.Path, i, recs[i].File)
		}
	}
	stamp := src.SHA256
	if stamp == "" {
		stamp = "-" // a source without checksum still stamps its records
	}
	st, err := s.ingest(ctx, strings.ToLower(stamp), recs)
	return st, withCtxErr(ctx, err)
}

// FinishSource ends the ingest of the version src of a file whose records
// were all given to IngestSource: the records of src.Path that this version
// no longer holds are withdrawn (their papers recomputed, see
// IngestSource), and the file is marked as ingested with this content
// (SourceSeen), all in one transaction. records is the number of records
// read from the file.
//
// A file that disappeared from the inputs is never withdrawn: removing
// papers is explicit (Remove). Callers that read a file with bad records
// should not finish it, so that nothing of the old version is withdrawn
// for a record that merely failed to parse, and the file is read again
// next time.
func (s *Store) FinishSource(ctx context.Context, src Source, records int) (IngestStats, error) {
	st, err := s.finishSource(ctx, src, records)
	return st, withCtxErr(ctx, err)
}

// begin starts a write transaction with an ingester at the next generation.
func (s *Store) begin(ctx context.Context, stamp string) (*ingester, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	gen, err := generation(ctx, tx)
	if err != nil {
		tx.Rollback()
		return nil, err
	}
	in := &ingester{ctx: ctx, tx: tx, gen: gen + 1, stamp: stamp,
		files: map[string]int64{}, dirty: map[string]bool{}}
	if err := in.prepare(); err != nil {
		in.close()
		tx.Rollback()
		return nil, err
	}
	return in, nil
}

// commit recomputes the dirty papers, bumps the generation when anything
// changed and commits.
func (in *ingester) commit() error {
	if err := in.settle(); err != nil {
		return err
	}
	if err := in.retryAliases(); err != nil {
		return err
	}
	if in.changed {
		if _, err := in.tx.ExecContext(in.ctx, "UPDATE generation SET n = ?", in.gen); err != nil {
			return fmt.Errorf("bump generation: %w", err)
		}
		if _, err := in.tx.ExecContext(in.ctx,
			"DELETE FROM removed WHERE id IN (SELECT id FROM papers WHERE updated_gen = ?)", in.gen); err != nil {
			return fmt.Errorf("clear tombstones: %w", err)
		}
	}
	if err := in.ctx.Err(); err != nil {
		return err
	}
	in.close()
	if err := in.tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

func (s *Store) ingest(ctx context.Context, stamp string, recs []Record) (IngestStats, error) {
	if len(recs) == 0 {
		if err := ctx.Err(); err != nil {
			return IngestStats{}, fmt.Errorf("ingest: %w", err)
		}
		return IngestStats{}, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	in, err := s.begin(ctx, stamp)
	if err != nil {
		return IngestStats{}, fmt.Errorf("ingest: %w", err)
	}
	defer in.tx.Rollback()
	defer in.close()
	in.st.Read = len(recs)
	irs := make([]inRecord, 0, len(recs))
	for i := range recs {
		r := &recs[i]
		var item json.RawMessage
		if r.Item != nil {
			c, _, err := compactItem(r.Item)
			if err != nil {
				return IngestStats{}, fmt.Errorf("ingest %s:%d: item: %w", r.File, r.Line, err)
			}
			item = c
		} else {
			p := r.Paper
			normalizePaper(&p)
			p.ID = r.Key
			js, err := p.MarshalJSON()
			if err != nil {
				return IngestStats{}, fmt.Errorf("ingest: encode record: %w", err)
			}
			item = js
		}
		p, err := PaperFromItem(item)
		if err != nil {
			return IngestStats{}, fmt.Errorf("ingest %s:%d: item: %w", r.File, r.Line, err)
		}
		ir := inRecord{r: r, p: p, bare: p.DOI == "" && p.ArXiv == "", line: r.Line, key: r.Key, js: string(item)}
		if ir.bare && NormalizeTitle(p.Title) == "" {
			in.st.Skipped++
			continue
		}
		ir.p.ID = PaperID(p)
		ir.fp = Fingerprint(ir.p)
		if ir.file, err = in.fileSeq(r.File); err != nil {
			return IngestStats{}, fmt.Errorf("ingest: %w", err)
		}
		switch {
		case r.File == "":
			ir.ref = "#" + strconv.Itoa(i)
		case r.Ref != "":
			ir.ref = r.Ref
		default:
			ir.ref = "@" + strconv.Itoa(r.Line)
		}
		irs = append(irs, ir)
	}
	if err := in.prefetch(irs); err != nil {
		return IngestStats{}, fmt.Errorf("ingest: %w", err)
	}
	for i := range irs {
		if i%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return IngestStats{}, fmt.Errorf("ingest: %w", err)
			}
		}
		if err := in.record(&irs[i]); err != nil {
			return IngestStats{}, fmt.Errorf("ingest %s:%d: %w", irs[i].r.File, irs[i].r.Line, err)
		}
	}
	if err := in.commit(); err != nil {
		return IngestStats{}, fmt.Errorf("ingest: %w", err)
	}
	return in.st, nil
}

func (s *Store) finishSource(ctx context.Context, src Source, records int) (IngestStats, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	stamp := strings.ToLower(src.SHA256)
	if stamp == "" {
		stamp = "-"
	}
	in, err := s.begin(ctx, stamp)
	if err != nil {
		return IngestStats{}, fmt.Errorf("finish source %s: %w", src.Path, err)
	}
	defer in.tx.Rollback()
	defer in.close()
	var seq int64
	switch err := in.tx.QueryRowContext(ctx, "SELECT seq FROM files WHERE path = ?", src.Path).Scan(&seq); {
	case errors.Is(err, sql.ErrNoRows):
		seq = -1
	case err != nil:
		return IngestStats{}, fmt.Errorf("finish source %s: %w", src.Path, err)
	}
	if seq >= 0 {
		rows, err := in.tx.QueryContext(ctx, "SELECT ref, id FROM records WHERE file = ? AND stamp != ?", seq, stamp)
		if err != nil {
			return IngestStats{}, fmt.Errorf("finish source %s: %w", src.Path, err)
		}
		var refs, ids []string
		for rows.Next() {
			var ref, id string
			if err := rows.Scan(&ref, &id); err != nil {
				rows.Close()
				return IngestStats{}, fmt.Errorf("finish source %s: %w", src.Path, err)
			}
			refs = append(refs, ref)
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return IngestStats{}, fmt.Errorf("finish source %s: %w", src.Path, err)
		}
		for i, ref := range refs {
			if _, err := in.tx.ExecContext(ctx, "DELETE FROM records WHERE file = ? AND ref = ?", seq, ref); err != nil {
				return IngestStats{}, fmt.Errorf("finish source %s: withdraw %s: %w", src.Path, ref, err)
			}
			in.dirty[ids[i]] = true
			in.st.Withdrawn++
		}
	}
	if _, err := in.tx.ExecContext(ctx, `INSERT INTO sources (path, size, mtime, sha256, records, ingested_at)
		VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (path) DO UPDATE SET size = excluded.size, mtime = excluded.mtime,
			sha256 = excluded.sha256, records = excluded.records, ingested_at = excluded.ingested_at`,
		src.Path, src.Size, src.ModTime.UnixNano(), strings.ToLower(src.SHA256), records, time.Now().UnixNano()); err != nil {
		return IngestStats{}, fmt.Errorf("finish source %s: mark: %w", src.Path, err)
	}
	in.papers = map[string]*cachedPaper{}
	in.paperKnown = map[string]bool{}
	in.aliases = map[string]string{}
	in.byFP = map[string][]string{}
	if err := in.commit(); err != nil {
		return IngestStats{}, fmt.Errorf("finish source %s: %w", src.Path, err)
	}
	return in.st, nil
}
