package corpus

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the pure-Go "sqlite" driver
)

// schemaVersion is stored in PRAGMA user_version. OpenStore creates the
// schema in a file whose user_version is 0, migrates versions 1 and 2, and
// refuses files with a newer version (ErrSchemaVersion).
const schemaVersion = 3

// schemaSQL is the store's schema, version 3.
//
//	papers          one row per paper.
//	  id            stable ID (PaperID): "10.1145/…", "arxiv:…" or "h:…"
//	  fingerprint   Fingerprint of the merged paper; indexed, used to merge
//	                a record without DOI or arXiv id into a known paper
//	  title, year   copies of the JSON fields, for SQL-side filtering
//	  json          the Paper as CSL-JSON (Paper.MarshalJSON), the source of truth
//	  updated_gen   generation of the Ingest that inserted or last changed the row
//	aliases         other names of a paper: record keys (BibTeX citation
//	                keys, CSL ids) and the "h:" IDs of absorbed papers.
//	  alias         as written, case-sensitive (primary key)
//	  fold          foldKey(alias): normalised DOI, "arxiv:" id, or lower case;
//	                indexed, for case-insensitive lookup
//	  id            the paper; ON DELETE/UPDATE CASCADE
//	files           every input file records came from, in the order first
//	                seen: seq is the file's precedence; path is NULL for a
//	                batch of records given without a file
//	records         every stored input record, the paper's contributions:
//	  file, ref     files.seq and Record.Ref (primary key)
//	  line, key     where it starts and its own key
//	  id            the paper it belongs to
//	  own           the record's own PaperID
//	  stamp         SHA-256 of the file content it was read from ("" unknown)
//	  json          the record's normalised Paper as CSL-JSON
//	removed         tombstones: IDs removed (or absorbed into another paper)
//	                and the generation that removed them, for incremental
//	                index updates; cleared when the ID is stored again
//	sources         input files fully ingested: path, size, mtime (Unix ns),
//	                sha256 (hex), records, ingested_at (Unix ns)
//	meta            free key/value settings (SetMeta), e.g. the embedder
//	generation      a single row: the store's generation counter
//
// Usage tracking (version 3, RecordUsage; not part of the generation):
//
//	searches        one row per distinct search behind a resolved draft:
//	  id            SearchID: SHA-256 (hex) of the query text and hit IDs
//	  query         the query text
//	  hits          how many hits it returned
//	  first_seen    when a draft first recorded it (Unix ns)
//	search_hits     its hits: search, rank (1-based, best first), paper ID
//	drafts          one row per resolved draft:
//	  id            the caller's key (cite: SHA-256 of the draft's file
//	                path, or of its normalised content when read from stdin)
//	  name          file path(s) or "-"
//	  content       SHA-256 (hex) of the normalised placeholder content
//	  first_resolved, resolved_at   Unix ns
//	draft_citations the papers a draft cites: draft, paper, ord (order of
//	                first citation)
//	draft_searches  the searches behind a draft
//
// Paper IDs in the usage tables are not foreign keys: usage survives a
// paper's removal. Searches no draft links to any more are deleted.
const schemaSQL = `
CREATE TABLE papers (
	id          TEXT PRIMARY KEY,
	fingerprint TEXT NOT NULL,
	title       TEXT NOT NULL,
	year        INTEGER NOT NULL,
	json        TEXT NOT NULL,
	updated_gen INTEGER NOT NULL
);
CREATE INDEX papers_fingerprint ON papers(fingerprint);
CREATE INDEX papers_updated_gen ON papers(updated_gen);
CREATE TABLE aliases (
	alias TEXT PRIMARY KEY,
	fold  TEXT NOT NULL,
	id    TEXT NOT NULL REFERENCES papers(id) ON DELETE CASCADE ON UPDATE CASCADE
) WITHOUT ROWID;
CREATE INDEX aliases_fold ON aliases(fold);
CREATE INDEX aliases_id ON aliases(id);
CREATE TABLE removed (
	id  TEXT PRIMARY KEY,
	gen INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX removed_gen ON removed(gen);
CREATE TABLE sources (
	path        TEXT PRIMARY KEY,
	size        INTEGER NOT NULL,
	mtime       INTEGER NOT NULL,
	sha256      TEXT NOT NULL,
	records     INTEGER NOT NULL,
	ingested_at INTEGER NOT NULL
);
CREATE TABLE meta (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE generation (n INTEGER NOT NULL);
INSERT INTO generation (n) VALUES (0);
` + schemaV2SQL + schemaV3SQL

// schemaV3SQL is what version 3 added to version 2: usage tracking.
const schemaV3SQL = `
CREATE TABLE searches (
	id         TEXT PRIMARY KEY,
	query      TEXT NOT NULL,
	hits       INTEGER NOT NULL,
	first_seen INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE search_hits (
	search TEXT NOT NULL REFERENCES searches(id) ON DELETE CASCADE,
	rank   INTEGER NOT NULL,
	paper  TEXT NOT NULL,
	PRIMARY KEY (search, rank)
) WITHOUT ROWID;
CREATE INDEX search_hits_paper ON search_hits(paper);
CREATE TABLE drafts (
	id             TEXT PRIMARY KEY,
	name           TEXT NOT NULL,
	content        TEXT NOT NULL,
	first_resolved INTEGER NOT NULL,
	resolved_at    INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE draft_citations (
	draft TEXT NOT NULL REFERENCES drafts(id) ON DELETE CASCADE,
	paper TEXT NOT NULL,
	ord   INTEGER NOT NULL,
	PRIMARY KEY (draft, paper)
) WITHOUT ROWID;
CREATE INDEX draft_citations_paper ON draft_citations(paper);
CREATE TABLE draft_searches (
	draft  TEXT NOT NULL REFERENCES drafts(id) ON DELETE CASCADE,
	search TEXT NOT NULL REFERENCES searches(id) ON DELETE CASCADE,
	PRIMARY KEY (draft, search)
) WITHOUT ROWID;
CREATE INDEX draft_searches_search ON draft_searches(search);
`

// schemaV2SQL is what version 2 added to version 1 (which had a
// record_sources table of (file, line) → id, key instead).
const schemaV2SQL = `
CREATE TABLE files (
	seq  INTEGER PRIMARY KEY,
	path TEXT UNIQUE
);
CREATE TABLE records (
	file  INTEGER NOT NULL,
	ref   TEXT NOT NULL,
	line  INTEGER NOT NULL,
	key   TEXT NOT NULL,
	id    TEXT NOT NULL,
	own   TEXT NOT NULL,
	stamp TEXT NOT NULL,
	json  TEXT NOT NULL,
	PRIMARY KEY (file, ref)
);
CREATE INDEX records_id ON records(id);
`

// migrateV1SQL turns a version 1 store into version 2. Version 1 kept no
// record contents, so each remembered record gets the merged paper as its
// content (stamp "": unknown), and papers without any get one record in a
// file-less batch. Nothing is lost; a changed file later replaces its
// legacy records with what it holds then.
const migrateV1SQL = schemaV2SQL + `
INSERT INTO files (path) SELECT DISTINCT file FROM record_sources ORDER BY file;
INSERT INTO records (file, ref, line, key, id, own, stamp, json)
	SELECT f.seq, '@' || rs.line, rs.line, rs.key, rs.id, rs.id, '', p.json
	FROM record_sources rs JOIN files f ON f.path = rs.file JOIN papers p ON p.id = rs.id;
INSERT INTO files (path) VALUES (NULL);
INSERT INTO records (file, ref, line, key, id, own, stamp, json)
	SELECT (SELECT max(seq) FROM files), '#' || p.id, 0, '', p.id, p.id, '', p.json
	FROM papers p WHERE NOT EXISTS (SELECT 1 FROM record_sources rs WHERE rs.id = p.id);
DROP TABLE record_sources;
`

// Store is the canonical paper store: one SQLite file holding one Paper per
// stable ID, the aliases that name papers, where each record came from,
// which input files were ingested, and a generation counter that derived
// search indexes compare against to detect staleness.
//
// Wherever a method accepts an ID it also accepts an alias; see Resolve for
// the lookup order. A Store is safe for concurrent use; writes are
// serialised (one writer), reads run concurrently with them (WAL).
type Store struct {
	db *sql.DB
	mu sync.Mutex // serialises writers
}

// IngestStats counts what one Ingest did.
type IngestStats struct {
	Read           int // records given
	Added          int // records that became a new paper
	Merged         int // records that matched an existing paper (same ID or fingerprint)
	Updated        int // of the merged, how many filled a gap of the paper
	Skipped        int // records with neither DOI, arXiv id nor title: nothing to identify them by
	Aliases        int // new aliases stored
	AliasConflicts int // record keys already naming a different paper (the first one is kept)
	Unchanged      int // records stored before with the same content: nothing to do
	Changed        int // records stored before whose content or key changed
	Withdrawn      int // records gone from a changed file (FinishSource)
	Recomputed     int // papers recomputed from their records with a different result
	Removed        int // papers removed because no record of them was left
}

// RecordSource is one input record of a paper: where it was read and its key.
type RecordSource struct {
	File string
	Line int // 1-based
	Key  string
}

// OpenStore opens the store in the SQLite file at path, creating the file
// and its schema when they don't exist. The connection uses WAL journaling
// with synchronous=NORMAL, a 10 s busy timeout, foreign keys and a page
// cache of up to 64 MiB per connection. path must not contain '?';
// ":memory:" is not supported (each connection would see its own database).
func OpenStore(ctx context.Context, path string) (*Store, error) {
	if path == "" || path == ":memory:" || strings.ContainsRune(path, '?') {
		return nil, fmt.Errorf("open store %q: invalid path", path)
	}
	dsn := path + "?_busy_timeout=10000&_journal_mode=WAL&_synchronous=NORMAL&_foreign_keys=1&_txlock=immediate" +
		"&_pragma=cache_size(-65536)&_pragma=temp_store(MEMORY)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	db.SetMaxIdleConns(4)
	s := &Store{db: db}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	return s, nil
}

func (s *Store) migrate(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var v int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	switch {
	case v == schemaVersion:
		return nil
	case v > schemaVersion:
		return fmt.Errorf("%w: file has %d, this build knows %d", ErrSchemaVersion, v, schemaVersion)
	}
	script := schemaSQL
	switch v {
	case 1:
		script = migrateV1SQL + schemaV3SQL
	case 2:
		script = schemaV3SQL
	}
	if _, err := tx.ExecContext(ctx, script); err != nil {
		return fmt.Errorf("create schema (from version %d): %w", v, err)
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", schemaVersion)); err != nil {
		return fmt.Errorf("set schema version: %w", err)
	}
	return tx.Commit()
}

// Close closes the store's database.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, _ = s.db.Exec("PRAGMA optimize")
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("close store: %w", err)
	}
	return nil
}

// foldKey is the case-insensitive form of an ID or alias: the normalised
// DOI when s looks like one (also "doi:…" and resolver URLs), else "arxiv:"
// and the normalised arXiv id, else s trimmed and lower-cased.
func foldKey(s string) string {
	s = strings.TrimSpace(s)
	if d := NormalizeDOI(s); d != "" {
		return d
	}
	if a := NormalizeArXiv(s); a != "" {
		return "arxiv:" + a
	}
	return strings.ToLower(s)
}

// looksLikeID reports whether a folded key has the shape of a paper ID.
func looksLikeID(f string) bool {
	return strings.HasPrefix(f, "10.") || strings.HasPrefix(f, "arxiv:") || strings.HasPrefix(f, "h:")
}

// normalizePaper puts p into the form its JSON round trip gives, so what
// Ingest stores is what Get returns.
func normalizePaper(p *Paper) {
	p.DOI = NormalizeDOI(p.DOI)
	p.ArXiv = NormalizeArXiv(p.ArXiv)
	if len(p.Keywords) > 0 {
		var ks []string
		for _, k := range p.Keywords {
			ks = append(ks, SplitKeywords(k)...)
		}
		p.Keywords = ks
	}
	if len(p.Authors) == 0 {
		p.Authors = nil
	}
}

// storedPaper is the CSL-JSON that Paper.MarshalJSON writes, for decoding
// the store's own JSON in one pass; Paper.UnmarshalJSON, which accepts any
// CSL-JSON, is several times slower. A test checks that every Paper field
// survives the store.
type storedPaper struct {
	Type   string   `json:"type"`
	Title  string   `json:"title"`
	Author []Author `json:"author"`
	Issued *struct {
		DateParts [][]int `json:"date-parts"`
	} `json:"issued"`
	Container string `json:"container-title"`
	DOI       string `json:"DOI"`
	URL       string `json:"URL"`
	Abstract  string `json:"abstract"`
	Keyword   string `json:"keyword"`
	ArXiv     string `json:"arxiv"`
	Publisher string `json:"publisher"`
	Volume    string `json:"volume"`
	Issue     string `json:"issue"`
	Page      string `json:"page"`
}

// decodePaper decodes a paper's stored JSON; id is its ID.
func decodePaper(id, js string) (Paper, error) {
	var sp storedPaper
	if err := json.Unmarshal([]byte(js), &sp); err != nil {
		// Not the form MarshalJSON writes: take the general decoder.
		var p Paper
		if err := json.Unmarshal([]byte(js), &p); err != nil {
			return Paper{}, fmt.Errorf("decode paper %s: %w", id, err)
		}
		p.ID = id
		return p, nil
	}
	p := Paper{
		ID: id, Type: sp.Type, Title: sp.Title, Authors: sp.Author, Venue: sp.Container,
		DOI: sp.DOI, URL: sp.URL, Abstract: sp.Abstract, Keywords: SplitKeywords(sp.Keyword),
		ArXiv: sp.ArXiv, Publisher: sp.Publisher, Volume: sp.Volume, Issue: sp.Issue, Pages: sp.Page,
	}
	if sp.Issued != nil && len(sp.Issued.DateParts) > 0 && len(sp.Issued.DateParts[0]) > 0 {
		p.Year = sp.Issued.DateParts[0][0]
	}
	return p, nil
}

func generation(ctx context.Context, q queryer) (int64, error) {
	var n int64
	if err := q.QueryRowContext(ctx, "SELECT n FROM generation").Scan(&n); err != nil {
		return 0, fmt.Errorf("read generation: %w", err)
	}
	return n, nil
}

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
//   - A new or changed record gets its stable ID from PaperID
//     (Record.Paper.ID is recomputed) and is matched against the store: by
//     ID; else, for a record without DOI and arXiv id, by an absorbed "h:"
//     ID or by fingerprint when exactly one paper has it. A matched paper is
//     completed with Merge (empty fields filled, nothing overwritten); an
//     unmatched one is inserted. A new paper with DOI or arXiv id absorbs
//     the paper "h:"+its fingerprint if that exists and no other paper has
//     the fingerprint; the absorbed ID becomes an alias.
//   - Precedence: records are ordered by file (in the order files were first
//     ingested), then line. When a paper gains a record that precedes one it
//     has, or one of its records changes or is withdrawn, the paper is
//     recomputed from its records: the first record wins a conflicting
//     field, later ones fill gaps (Merge), so the result is what ingesting
//     the records afresh in that order gives. A paper left without records
//     is removed. If the recomputed paper's ID would differ (say its only
//     DOI record went), the paper is removed and its records are matched
//     again one by one.
//   - The record's Key becomes an alias of its paper unless it is empty,
//     equal to the ID, or (case-insensitively for DOI-like keys) already
//     names a different paper, which counts as an AliasConflict. A
//     recomputed paper drops the key aliases no record of it has any more.
//
// DOI, arXiv id and keywords are stored normalised (NormalizeDOI,
// NormalizeArXiv, SplitKeywords), the form the CSL-JSON round trip gives.
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

// withCtxErr makes sure an error caused by cancelling ctx says so: after a
// cancellation database/sql may report only that the transaction is done.
func withCtxErr(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("%w: %w", cerr, err)
	}
	return err
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
		p := r.Paper
		normalizePaper(&p)
		ir := inRecord{r: r, p: p, bare: p.DOI == "" && p.ArXiv == "", line: r.Line, key: r.Key}
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
		js, err := ir.p.MarshalJSON()
		if err != nil {
			return IngestStats{}, fmt.Errorf("ingest: encode record: %w", err)
		}
		ir.js = string(js)
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

// ingester holds the prepared statements and per-batch state of one Ingest.
// Before the records are handled, prefetch reads in a few queries what the
// store knows about the batch's records, IDs, keys and fingerprints; the
// caches below then answer most lookups, and stay exact because every write
// of the batch updates them. What they don't cover falls back to a query in
// the transaction.
type ingester struct {
	ctx     context.Context
	tx      *sql.Tx
	gen     int64
	stamp   string // stamp of the records of this batch
	st      IngestStats
	changed bool

	papers     map[string]*cachedPaper // stored papers by ID
	paperKnown map[string]bool         // IDs whose absence from papers means not stored
	aliases    map[string]string       // alias → paper ID; "" = no such alias
	byFP       map[string][]string     // fingerprint → IDs of the papers having it, complete
	files      map[string]int64        // file path → files.seq
	stored     map[recKey]*storedRec   // the batch's records as stored before it
	dirty      map[string]bool         // papers to recompute from their records

	getPaper, byFingerprint                    *sql.Stmt
	insPaper, updPaper, renamePaper, tombstone *sql.Stmt
	getAlias, insAlias, putRecord, touchRecord *sql.Stmt
	laterRecord, recordsOf, delPaper           *sql.Stmt
	dropAliases, renameRecords                 *sql.Stmt
}

// recKey names a stored record.
type recKey struct {
	file int64
	ref  string
}

// storedRec is a record as stored.
type storedRec struct {
	line       int
	key, id    string
	stamp, js  string
	seenInThis bool
}

// cachedPaper is a stored paper; its JSON is decoded on first use.
type cachedPaper struct {
	p   Paper
	js  string // CSL-JSON while not decoded
	fp  string // the fingerprint column
	dec bool
}

// inRecord is a Record prepared for ingest.
type inRecord struct {
	r    *Record
	p    Paper // normalised, with ID
	fp   string
	bare bool // no DOI and no arXiv id
	file int64
	ref  string
	line int
	key  string
	js   string // p as CSL-JSON
}

func (in *ingester) prepare() error {
	stmts := []struct {
		dst **sql.Stmt
		sql string
	}{
		{&in.getPaper, "SELECT fingerprint, json FROM papers WHERE id = ?"},
		{&in.byFingerprint, "SELECT id FROM papers WHERE fingerprint = ?"},
		{&in.insPaper, "INSERT INTO papers (fingerprint, title, year, json, updated_gen, id) VALUES (?, ?, ?, ?, ?, ?)"},
		{&in.updPaper, "UPDATE papers SET fingerprint = ?, title = ?, year = ?, json = ?, updated_gen = ? WHERE id = ?"},
		{&in.renamePaper, "UPDATE papers SET fingerprint = ?, title = ?, year = ?, json = ?, updated_gen = ?, id = ? WHERE id = ?"},
		{&in.tombstone, "INSERT INTO removed (id, gen) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET gen = excluded.gen"},
		{&in.getAlias, "SELECT id FROM aliases WHERE alias = ?"},
		{&in.insAlias, "INSERT INTO aliases (alias, fold, id) VALUES (?, ?, ?)"},
		{&in.putRecord, "INSERT INTO records (file, ref, line, key, id, own, stamp, json) VALUES (?, ?, ?, ?, ?, ?, ?, ?) " +
			"ON CONFLICT (file, ref) DO UPDATE SET line = excluded.line, key = excluded.key, id = excluded.id, " +
			"own = excluded.own, stamp = excluded.stamp, json = excluded.json"},
		{&in.touchRecord, "UPDATE records SET line = ?, stamp = ? WHERE file = ? AND ref = ?"},
		{&in.laterRecord, "SELECT 1 FROM records WHERE id = ? AND (file > ? OR (file = ? AND line > ?)) LIMIT 1"},
		{&in.recordsOf, "SELECT file, ref, line, key, own, json FROM records WHERE id = ? ORDER BY file, line, rowid"},
		{&in.delPaper, "DELETE FROM papers WHERE id = ?"},
		{&in.dropAliases, "DELETE FROM aliases WHERE id = ?1 AND alias NOT LIKE 'h:%' AND alias NOT IN (SELECT key FROM records WHERE id = ?1)"},
		{&in.renameRecords, "UPDATE records SET id = ? WHERE id = ?"},
	}
	for _, st := range stmts {
		p, err := in.tx.PrepareContext(in.ctx, st.sql)
		if err != nil {
			return fmt.Errorf("prepare %q: %w", st.sql, err)
		}
		*st.dst = p
	}
	return nil
}

func (in *ingester) close() {
	for _, st := range []*sql.Stmt{
		in.getPaper, in.byFingerprint, in.insPaper, in.updPaper, in.renamePaper,
		in.tombstone, in.getAlias, in.insAlias, in.putRecord, in.touchRecord,
		in.laterRecord, in.recordsOf, in.delPaper, in.dropAliases, in.renameRecords,
	} {
		if st != nil {
			st.Close()
		}
	}
	in.getPaper, in.byFingerprint, in.insPaper, in.updPaper, in.renamePaper = nil, nil, nil, nil, nil
	in.tombstone, in.getAlias, in.insAlias, in.putRecord, in.touchRecord = nil, nil, nil, nil, nil
	in.laterRecord, in.recordsOf, in.delPaper, in.dropAliases, in.renameRecords = nil, nil, nil, nil, nil
}

// fileSeq returns the files.seq of path, adding the file when new. All
// records without a file in one batch share one new seq.
func (in *ingester) fileSeq(path string) (int64, error) {
	if seq, ok := in.files[path]; ok {
		return seq, nil
	}
	var seq int64
	if path != "" {
		err := in.tx.QueryRowContext(in.ctx, "SELECT seq FROM files WHERE path = ?", path).Scan(&seq)
		switch {
		case err == nil:
			in.files[path] = seq
			return seq, nil
		case !errors.Is(err, sql.ErrNoRows):
			return 0, fmt.Errorf("look up file %s: %w", path, err)
		}
	}
	var arg any
	if path != "" {
		arg = path
	}
	res, err := in.tx.ExecContext(in.ctx, "INSERT INTO files (path) VALUES (?)", arg)
	if err != nil {
		return 0, fmt.Errorf("add file %s: %w", path, err)
	}
	if seq, err = res.LastInsertId(); err != nil {
		return 0, fmt.Errorf("add file %s: %w", path, err)
	}
	in.files[path] = seq
	return seq, nil
}

// prefetch loads what the store knows about the batch: the stored versions
// of its records; the papers with the records' IDs, the "h:" IDs DOI
// records may absorb and the IDs DOI-like keys fold to; the aliases named
// by keys and IDs; and the papers having the records' fingerprints.
func (in *ingester) prefetch(recs []inRecord) error {
	var ids, names, fps []string
	refs := map[int64][]string{}
	for i := range recs {
		ir := &recs[i]
		refs[ir.file] = append(refs[ir.file], ir.ref)
		ids = append(ids, ir.p.ID)
		names = append(names, ir.p.ID)
		fps = append(fps, ir.fp)
		if !ir.bare {
			ids = append(ids, "h:"+ir.fp)
		}
		if k := ir.r.Key; k != "" {
			names = append(names, k)
			if f := foldKey(k); looksLikeID(f) {
				ids = append(ids, f)
			}
		}
	}
	in.stored = map[recKey]*storedRec{}
	for file, rs := range refs {
		js, err := json.Marshal(rs)
		if err != nil {
			return err
		}
		rows, err := in.tx.QueryContext(in.ctx, "SELECT ref, line, key, id, stamp, json FROM records "+
			"WHERE file = ? AND ref IN (SELECT value FROM json_each(?))", file, string(js))
		if err != nil {
			return fmt.Errorf("prefetch records: %w", err)
		}
		for rows.Next() {
			var ref string
			sr := &storedRec{}
			if err := rows.Scan(&ref, &sr.line, &sr.key, &sr.id, &sr.stamp, &sr.js); err != nil {
				rows.Close()
				return fmt.Errorf("prefetch records: %w", err)
			}
			in.stored[recKey{file, ref}] = sr
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("prefetch records: %w", err)
		}
	}
	in.papers = make(map[string]*cachedPaper, len(ids))
	in.paperKnown = make(map[string]bool, len(ids))
	in.aliases = make(map[string]string, len(names))
	in.byFP = make(map[string][]string, len(fps))
	for _, id := range ids {
		in.paperKnown[id] = true
	}
	for _, n := range names {
		in.aliases[n] = ""
	}
	for _, fp := range fps {
		in.byFP[fp] = nil
	}
	err := in.queryEach("SELECT id, fingerprint, json FROM papers WHERE id IN (SELECT value FROM json_each(?))", ids,
		func(a, b, c string) { in.papers[a] = &cachedPaper{fp: b, js: c} })
	if err != nil {
		return fmt.Errorf("prefetch papers: %w", err)
	}
	err = in.queryEach("SELECT alias, id, '' FROM aliases WHERE alias IN (SELECT value FROM json_each(?))", names,
		func(a, b, _ string) { in.aliases[a] = b })
	if err != nil {
		return fmt.Errorf("prefetch aliases: %w", err)
	}
	err = in.queryEach("SELECT fingerprint, id, '' FROM papers WHERE fingerprint IN (SELECT value FROM json_each(?))", fps,
		func(a, b, _ string) { in.byFP[a] = append(in.byFP[a], b) })
	if err != nil {
		return fmt.Errorf("prefetch fingerprints: %w", err)
	}
	return nil
}

// record handles one record of the batch: unchanged ones only get their
// line and stamp updated; changed and new ones are added (add), and the
// paper a changed one belonged to is recomputed at the end of the batch.
func (in *ingester) record(ir *inRecord) error {
	k := recKey{ir.file, ir.ref}
	if sr := in.stored[k]; sr != nil {
		if sr.js == ir.js && sr.key == ir.key {
			in.st.Unchanged++
			if sr.line != ir.line || sr.stamp != in.stamp {
				if _, err := in.touchRecord.ExecContext(in.ctx, ir.line, in.stamp, ir.file, ir.ref); err != nil {
					return fmt.Errorf("update record: %w", err)
				}
				if sr.line != ir.line {
					in.dirty[sr.id] = true // its precedence may have changed
				}
				sr.line, sr.stamp = ir.line, in.stamp
			}
			return nil
		}
		in.st.Changed++
		in.dirty[sr.id] = true
		sr.js, sr.key, sr.line, sr.stamp = ir.js, ir.key, ir.line, in.stamp
	}
	return in.add(ir)
}

// queryEach runs a query taking a JSON array of strings and returning
// three text columns, calling fn for each row.
func (in *ingester) queryEach(query string, arg []string, fn func(a, b, c string)) error {
	js, err := json.Marshal(arg)
	if err != nil {
		return err
	}
	rows, err := in.tx.QueryContext(in.ctx, query, string(js))
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var a, b, c string
		if err := rows.Scan(&a, &b, &c); err != nil {
			return err
		}
		fn(a, b, c)
	}
	return rows.Err()
}

// load returns the stored paper with this exact ID and its fingerprint.
func (in *ingester) load(id string) (Paper, string, bool, error) {
	c, ok := in.papers[id]
	if !ok {
		if in.paperKnown[id] {
			return Paper{}, "", false, nil
		}
		var fp, js string
		switch err := in.getPaper.QueryRowContext(in.ctx, id).Scan(&fp, &js); {
		case errors.Is(err, sql.ErrNoRows):
			in.paperKnown[id] = true
			return Paper{}, "", false, nil
		case err != nil:
			return Paper{}, "", false, fmt.Errorf("load %s: %w", id, err)
		}
		c = &cachedPaper{fp: fp, js: js}
		in.papers[id] = c
		in.paperKnown[id] = true
	}
	if !c.dec {
		p, err := decodePaper(id, c.js)
		if err != nil {
			return Paper{}, "", false, err
		}
		c.p, c.js, c.dec = p, "", true
	}
	return c.p, c.fp, true, nil
}

// exists reports whether a paper has this exact ID.
func (in *ingester) exists(id string) (bool, error) {
	if _, ok := in.papers[id]; ok {
		return true, nil
	}
	if in.paperKnown[id] {
		return false, nil
	}
	_, _, ok, err := in.load(id)
	return ok, err
}

// alias returns the paper ID the alias names, or "".
func (in *ingester) alias(a string) (string, error) {
	if id, ok := in.aliases[a]; ok {
		return id, nil
	}
	var id string
	switch err := in.getAlias.QueryRowContext(in.ctx, a).Scan(&id); {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return "", fmt.Errorf("look up alias %q: %w", a, err)
	}
	in.aliases[a] = id
	return id, nil
}

// withFingerprint returns the IDs of the papers having fingerprint fp.
func (in *ingester) withFingerprint(fp string) ([]string, error) {
	if ids, ok := in.byFP[fp]; ok {
		return ids, nil
	}
	rows, err := in.byFingerprint.QueryContext(in.ctx, fp)
	if err != nil {
		return nil, fmt.Errorf("look up fingerprint %s: %w", fp, err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("look up fingerprint %s: %w", fp, err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("look up fingerprint %s: %w", fp, err)
	}
	in.byFP[fp] = ids
	return ids, nil
}

// moveFP updates byFP for paper oldID with fingerprint oldFP becoming
// paper newID with newFP; an empty old or new side is left out.
func (in *ingester) moveFP(oldID, oldFP, newID, newFP string) {
	if oldID == newID && oldFP == newFP {
		return
	}
	if ids, ok := in.byFP[oldFP]; ok && oldID != "" {
		out := ids[:0:0]
		for _, id := range ids {
			if id != oldID {
				out = append(out, id)
			}
		}
		in.byFP[oldFP] = out
	}
	if ids, ok := in.byFP[newFP]; ok && newID != "" {
		in.byFP[newFP] = append(ids, newID)
	}
}

// write stores p: inserted when oldID is "", else replacing the row of
// oldID (whose fingerprint was oldFP). fp is p's fingerprint, or "" to
// compute it.
func (in *ingester) write(p Paper, fp, oldID, oldFP string) error {
	js, err := p.MarshalJSON()
	if err != nil {
		return fmt.Errorf("encode paper %s: %w", p.ID, err)
	}
	if fp == "" {
		fp = Fingerprint(p)
	}
	args := []any{fp, p.Title, p.Year, string(js), in.gen, p.ID}
	stmt := in.insPaper
	switch {
	case oldID == p.ID:
		stmt = in.updPaper
	case oldID != "":
		stmt = in.renamePaper
		args = append(args, oldID)
	}
	if _, err := stmt.ExecContext(in.ctx, args...); err != nil {
		return fmt.Errorf("store paper %s: %w", p.ID, err)
	}
	if oldID != "" && oldID != p.ID {
		delete(in.papers, oldID)
		in.paperKnown[oldID] = true
		if _, err := in.renameRecords.ExecContext(in.ctx, p.ID, oldID); err != nil {
			return fmt.Errorf("move records of %s: %w", oldID, err)
		}
		if in.dirty[oldID] {
			delete(in.dirty, oldID)
			in.dirty[p.ID] = true
		}
		for _, sr := range in.stored {
			if sr.id == oldID {
				sr.id = p.ID
			}
		}
	}
	in.papers[p.ID] = &cachedPaper{p: p, fp: fp, dec: true}
	in.paperKnown[p.ID] = true
	in.moveFP(oldID, oldFP, p.ID, fp)
	in.changed = true
	return nil
}

// match finds the stored paper a record belongs to.
func (in *ingester) match(ir *inRecord) (Paper, string, bool, error) {
	p, fp, ok, err := in.load(ir.p.ID)
	if err != nil || ok || !ir.bare {
		return p, fp, ok, err
	}
	// An "h:" ID absorbed into a DOI paper lives on as its alias.
	target, err := in.alias(ir.p.ID)
	if err != nil {
		return Paper{}, "", false, err
	}
	if target == "" {
		ids, err := in.withFingerprint(ir.fp)
		if err != nil {
			return Paper{}, "", false, err
		}
		if len(ids) != 1 {
			return Paper{}, "", false, nil
		}
		target = ids[0]
	}
	return in.load(target)
}

func (in *ingester) add(ir *inRecord) error {
	cur, curFP, found, err := in.match(ir)
	if err != nil {
		return err
	}
	id := ir.p.ID
	switch {
	case found:
		in.st.Merged++
		if Merge(&cur, ir.p) > 0 {
			in.st.Updated++
			if err := in.write(cur, "", cur.ID, curFP); err != nil {
				return err
			}
		}
		id = cur.ID
		// The record must win the conflicts with the paper's later records:
		// recompute the paper when it has any.
		var one int
		switch err := in.laterRecord.QueryRowContext(in.ctx, id, ir.file, ir.file, ir.line).Scan(&one); {
		case err == nil:
			in.dirty[id] = true
		case !errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("record precedence: %w", err)
		}
	default:
		absorbed, err := in.absorb(ir)
		if err != nil {
			return err
		}
		if !absorbed {
			if err := in.write(ir.p, ir.fp, "", ""); err != nil {
				return err
			}
			in.st.Added++
			if !ir.bare {
				// A new ID that an earlier record used as its key: the ID
				// now shadows that alias.
				if t, err := in.alias(id); err != nil {
					return err
				} else if t != "" {
					in.st.AliasConflicts++
				}
			}
		}
	}
	if _, err := in.putRecord.ExecContext(in.ctx, ir.file, ir.ref, ir.line, ir.key, id, ir.p.ID, in.stamp, ir.js); err != nil {
		return fmt.Errorf("store record: %w", err)
	}
	return in.addAlias(ir.key, id)
}

// settle recomputes the dirty papers until none is left.
func (in *ingester) settle() error {
	for round := 0; len(in.dirty) > 0; round++ {
		if round == 8 {
			return fmt.Errorf("internal error: papers still changing after %d rounds of recomputing", round)
		}
		ids := make([]string, 0, len(in.dirty))
		for id := range in.dirty {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		clear(in.dirty)
		for i, id := range ids {
			if i%checkEvery == 0 {
				if err := in.ctx.Err(); err != nil {
					return err
				}
			}
			if err := in.recompute(id); err != nil {
				return fmt.Errorf("recompute %s: %w", id, err)
			}
		}
	}
	return nil
}

// storedRecord is a row of the records table.
type storedRecord struct {
	file          int64
	ref, key, own string
	line          int
	js            string
}

// recompute sets paper id to the merge of its records in precedence
// order; see IngestSource.
func (in *ingester) recompute(id string) error {
	rows, err := in.recordsOf.QueryContext(in.ctx, id)
	if err != nil {
		return err
	}
	var recs []storedRecord
	for rows.Next() {
		var r storedRecord
		if err := rows.Scan(&r.file, &r.ref, &r.line, &r.key, &r.own, &r.js); err != nil {
			rows.Close()
			return err
		}
		recs = append(recs, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	cur, curFP, ok, err := in.load(id)
	if err != nil {
		return err
	}
	if len(recs) == 0 {
		if ok {
			in.st.Removed++
			return in.deletePaper(id, curFP)
		}
		return nil
	}
	want := recs[0].own
	for _, r := range recs {
		if !strings.HasPrefix(r.own, "h:") {
			want = r.own
			break
		}
	}
	ps := make([]Paper, len(recs))
	for i, r := range recs {
		if ps[i], err = decodePaper(r.own, r.js); err != nil {
			return err
		}
	}
	if ok && want == id {
		merged := ps[0]
		for _, p := range ps[1:] {
			Merge(&merged, p)
		}
		merged.ID = id
		res, err := in.dropAliases.ExecContext(in.ctx, id)
		if err != nil {
			return fmt.Errorf("drop aliases: %w", err)
		}
		if n, _ := res.RowsAffected(); n > 0 {
			in.changed = true
			for a, t := range in.aliases {
				if t == id {
					delete(in.aliases, a)
				}
			}
		}
		a, err := merged.MarshalJSON()
		if err != nil {
			return err
		}
		b, err := cur.MarshalJSON()
		if err != nil {
			return err
		}
		if string(a) == string(b) {
			return nil
		}
		in.st.Recomputed++
		return in.write(merged, "", id, curFP)
	}
	// The paper's identity changed: remove it and match its records again,
	// in precedence order.
	if ok {
		if err := in.deletePaper(id, curFP); err != nil {
			return err
		}
	}
	in.st.Recomputed++
	for i, r := range recs {
		p := ps[i]
		p.ID = r.own
		ir := inRecord{r: &Record{Paper: p, Key: r.key, Line: r.line}, p: p, fp: Fingerprint(p),
			bare: p.DOI == "" && p.ArXiv == "", file: r.file, ref: r.ref, line: r.line, key: r.key, js: r.js}
		stamp := in.stamp
		if err := in.tx.QueryRowContext(in.ctx, "SELECT stamp FROM records WHERE file = ? AND ref = ?", r.file, r.ref).Scan(&in.stamp); err != nil {
			in.stamp = stamp
			return fmt.Errorf("re-add record: %w", err)
		}
		err := in.add(&ir)
		in.stamp = stamp
		if err != nil {
			return err
		}
	}
	return nil
}

// deletePaper deletes paper id (its aliases follow, ON DELETE CASCADE),
// leaving a tombstone. Its records are left for the caller.
func (in *ingester) deletePaper(id, fp string) error {
	if _, err := in.delPaper.ExecContext(in.ctx, id); err != nil {
		return fmt.Errorf("delete paper %s: %w", id, err)
	}
	if _, err := in.tombstone.ExecContext(in.ctx, id, in.gen); err != nil {
		return fmt.Errorf("tombstone %s: %w", id, err)
	}
	delete(in.papers, id)
	in.paperKnown[id] = true
	for a, t := range in.aliases {
		if t == id {
			in.aliases[a] = ""
		}
	}
	in.moveFP(id, fp, "", "")
	in.changed = true
	return nil
}

// absorb turns the bare paper "h:"+fingerprint into the record's new DOI
// or arXiv paper, when that bare paper exists and no other paper has the
// fingerprint.
func (in *ingester) absorb(ir *inRecord) (bool, error) {
	if ir.bare {
		return false, nil
	}
	hid := "h:" + ir.fp
	old, oldFP, ok, err := in.load(hid)
	if err != nil || !ok {
		return false, err
	}
	ids, err := in.withFingerprint(ir.fp)
	if err != nil {
		return false, err
	}
	for _, id := range ids {
		if id != hid {
			return false, nil // ambiguous: leave both alone
		}
	}
	merged := old
	Merge(&merged, ir.p)
	merged.ID = ir.p.ID
	if err := in.write(merged, "", hid, oldFP); err != nil {
		return false, err
	}
	if _, err := in.tombstone.ExecContext(in.ctx, hid, in.gen); err != nil {
		return false, fmt.Errorf("tombstone %s: %w", hid, err)
	}
	// Aliases of the absorbed paper followed it (ON UPDATE CASCADE).
	for a, id := range in.aliases {
		if id == hid {
			in.aliases[a] = merged.ID
		}
	}
	in.st.Merged++
	in.st.Updated++
	return true, in.addAlias(hid, merged.ID)
}

// addAlias makes key an alias of paper id; see Ingest for the rules.
func (in *ingester) addAlias(key, id string) error {
	if key == "" || key == id {
		return nil
	}
	t, err := in.alias(key)
	if err != nil {
		return err
	}
	if t != "" {
		if t != id {
			in.st.AliasConflicts++
		}
		return nil
	}
	f := foldKey(key)
	if looksLikeID(f) {
		if f == id {
			return nil // resolves case-insensitively already
		}
		ok, err := in.exists(f)
		if err != nil {
			return err
		}
		if ok {
			in.st.AliasConflicts++ // the key is another paper's ID
			return nil
		}
	}
	if _, err := in.insAlias.ExecContext(in.ctx, key, f, id); err != nil {
		return fmt.Errorf("store alias %q: %w", key, err)
	}
	in.aliases[key] = id
	in.st.Aliases++
	in.changed = true
	return nil
}

// queryer is what lookups need from *sql.DB and *sql.Tx.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// resolveCTE resolves the asked keys given as ?1, a JSON array of
// [asked, foldKey(asked)] pairs, to the table best(k, id): the candidates
// of the lowest priority found. A key with two rows is ambiguous.
const resolveCTE = `
WITH q(k, f) AS MATERIALIZED (
	SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?1)
),
c(k, id, pri) AS (
	SELECT q.k, p.id, 1 FROM q JOIN papers p ON p.id = q.k
	UNION ALL SELECT q.k, a.id, 2 FROM q JOIN aliases a ON a.alias = q.k
	UNION ALL SELECT q.k, p.id, 3 FROM q JOIN papers p ON p.id = q.f
	UNION ALL SELECT q.k, a.id, 4 FROM q JOIN aliases a ON a.fold = q.f
),
ranked(k, id, pri, best) AS (
	SELECT k, id, pri, min(pri) OVER (PARTITION BY k) FROM c
),
best(k, id) AS (
	SELECT DISTINCT k, id FROM ranked WHERE pri = best
)`

// lookup resolves asked keys in one query. It returns, per resolved key,
// the paper ID and (withJSON) its CSL-JSON; ambiguous keys map to "".
func lookup(ctx context.Context, q queryer, asked []string, withJSON bool) (map[string][2]string, error) {
	out := make(map[string][2]string, len(asked))
	if len(asked) == 0 {
		return out, nil
	}
	seen := make(map[string]bool, len(asked))
	pairs := make([][2]string, 0, len(asked))
	for _, a := range asked {
		if !seen[a] {
			seen[a] = true
			pairs = append(pairs, [2]string{a, foldKey(a)})
		}
	}
	arg, err := json.Marshal(pairs)
	if err != nil {
		return nil, err
	}
	query := resolveCTE + "\nSELECT k, id, '' FROM best"
	if withJSON {
		// CROSS JOIN keeps best as the outer loop: SQLite 3.54's planner
		// otherwise scans all of papers against a bloom filter of best
		// (about 200 ms per lookup on ACM-CR's 108k papers, against 0.5 ms).
		query = resolveCTE + "\nSELECT b.k, b.id, p.json FROM best b CROSS JOIN papers p ON p.id = b.id"
	}
	rows, err := q.QueryContext(ctx, query, string(arg))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var k, id, js string
		if err := rows.Scan(&k, &id, &js); err != nil {
			return nil, err
		}
		if prev, dup := out[k]; dup && prev[0] != id {
			out[k] = [2]string{}
			continue
		}
		out[k] = [2]string{id, js}
	}
	return out, rows.Err()
}

// Resolve maps each asked ID or alias to its paper's ID, in one query.
// Lookup order, first hit wins: a paper ID as given; an alias as given
// (case-sensitive); then case-insensitively (DOIs also with "doi:" or
// resolver URL prefix, arXiv ids with "arXiv:" prefix or version): a paper
// ID, then an alias — where several papers' aliases match, the key is
// ambiguous and left out. Unknown keys are absent from the map.
func (s *Store) Resolve(ctx context.Context, idsOrAliases []string) (map[string]string, error) {
	res, err := lookup(ctx, s.db, idsOrAliases, false)
	if err != nil {
		return nil, fmt.Errorf("resolve: %w", err)
	}
	out := make(map[string]string, len(res))
	for k, v := range res {
		if v[0] != "" {
			out[k] = v[0]
		}
	}
	return out, nil
}

// Get returns the paper with this ID or alias (resolved as by Resolve). It
// returns an error wrapping ErrNotFound or ErrAmbiguous when there is no
// such paper or no single one.
func (s *Store) Get(ctx context.Context, idOrAlias string) (Paper, error) {
	res, err := lookup(ctx, s.db, []string{idOrAlias}, true)
	if err != nil {
		return Paper{}, fmt.Errorf("get %q: %w", idOrAlias, err)
	}
	v, ok := res[idOrAlias]
	switch {
	case !ok:
		return Paper{}, fmt.Errorf("get %q: %w", idOrAlias, ErrNotFound)
	case v[0] == "":
		return Paper{}, fmt.Errorf("get %q: %w", idOrAlias, ErrAmbiguous)
	}
	return decodePaper(v[0], v[1])
}

// GetMany returns the papers for the asked IDs or aliases, in one query,
// keyed by the ids as asked. Unknown and ambiguous ones are absent.
func (s *Store) GetMany(ctx context.Context, idsOrAliases []string) (map[string]Paper, error) {
	res, err := lookup(ctx, s.db, idsOrAliases, true)
	if err != nil {
		return nil, fmt.Errorf("get many: %w", err)
	}
	out := make(map[string]Paper, len(res))
	byID := make(map[string]Paper, len(res))
	for k, v := range res {
		if v[0] == "" {
			continue
		}
		p, ok := byID[v[0]]
		if !ok {
			if p, err = decodePaper(v[0], v[1]); err != nil {
				return nil, fmt.Errorf("get many: %w", err)
			}
			byID[v[0]] = p
		}
		out[k] = p
	}
	return out, nil
}

// Count returns the number of papers.
func (s *Store) Count(ctx context.Context) (int, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM papers").Scan(&n); err != nil {
		return 0, fmt.Errorf("count papers: %w", err)
	}
	return n, nil
}

// Each calls fn for every paper in ID order, streaming them from the
// database. It stops at the first error from fn and returns it.
func (s *Store) Each(ctx context.Context, fn func(Paper) error) error {
	return s.each(ctx, "SELECT id, json FROM papers ORDER BY id", fn)
}

// EachSince calls fn, in ID order, for every paper inserted or changed by
// an Ingest after generation gen. Together with RemovedSince it lets an
// index built at gen catch up with the store.
func (s *Store) EachSince(ctx context.Context, gen int64, fn func(Paper) error) error {
	return s.each(ctx, "SELECT id, json FROM papers WHERE updated_gen > ? ORDER BY id", fn, gen)
}

func (s *Store) each(ctx context.Context, query string, fn func(Paper) error, args ...any) error {
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("each paper: %w", err)
	}
	defer rows.Close()
	for n := 0; rows.Next(); n++ {
		if n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("each paper: %w", err)
			}
		}
		var id, js string
		if err := rows.Scan(&id, &js); err != nil {
			return fmt.Errorf("each paper: %w", err)
		}
		p, err := decodePaper(id, js)
		if err != nil {
			return fmt.Errorf("each paper: %w", err)
		}
		if err := fn(p); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("each paper: %w", err)
	}
	return nil
}

// CountChangedSince returns how many papers EachSince(gen) would yield.
func (s *Store) CountChangedSince(ctx context.Context, gen int64) (int, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM papers WHERE updated_gen > ?", gen).Scan(&n); err != nil {
		return 0, fmt.Errorf("count changed since %d: %w", gen, err)
	}
	return n, nil
}

// RemovedSince returns, sorted, the IDs removed after generation gen
// (by Remove, or absorbed into another paper by Ingest) and not stored
// again since.
func (s *Store) RemovedSince(ctx context.Context, gen int64) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT id FROM removed WHERE gen > ? ORDER BY id", gen)
	if err != nil {
		return nil, fmt.Errorf("removed since %d: %w", gen, err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("removed since %d: %w", gen, err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("removed since %d: %w", gen, err)
	}
	return ids, nil
}

// Generation returns the store's generation: a counter bumped by every
// Ingest and Remove that changed a paper or alias. An index records the
// generation it was built from; a different current value means it is
// stale. A new store is at generation 0.
func (s *Store) Generation(ctx context.Context) (int64, error) {
	return generation(ctx, s.db)
}

// Remove deletes the papers with these IDs or aliases (resolved as by
// Resolve), with their aliases and records, in one transaction. It
// returns how many papers it deleted; unknown ids are ignored. A removed
// paper comes back only when a file holding it is read again: changed, or
// with --force (IngestSource treats its records as new).
func (s *Store) Remove(ctx context.Context, ids ...string) (int, error) {
	n, err := s.remove(ctx, ids)
	return n, withCtxErr(ctx, err)
}

func (s *Store) remove(ctx context.Context, ids []string) (int, error) {
	if len(ids) == 0 {
		if err := ctx.Err(); err != nil {
			return 0, fmt.Errorf("remove: %w", err)
		}
		return 0, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("remove: begin: %w", err)
	}
	defer tx.Rollback()
	res, err := lookup(ctx, tx, ids, false)
	if err != nil {
		return 0, fmt.Errorf("remove: %w", err)
	}
	var del []string
	for _, v := range res {
		if v[0] != "" {
			del = append(del, v[0])
		}
	}
	if len(del) == 0 {
		return 0, nil
	}
	arg, err := json.Marshal(del)
	if err != nil {
		return 0, fmt.Errorf("remove: %w", err)
	}
	gen, err := generation(ctx, tx)
	if err != nil {
		return 0, fmt.Errorf("remove: %w", err)
	}
	gen++
	if _, err := tx.ExecContext(ctx, `INSERT INTO removed (id, gen)
		SELECT id, ? FROM papers WHERE id IN (SELECT value FROM json_each(?))
		ON CONFLICT (id) DO UPDATE SET gen = excluded.gen`, gen, string(arg)); err != nil {
		return 0, fmt.Errorf("remove: tombstones: %w", err)
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM records WHERE id IN (SELECT value FROM json_each(?))", string(arg)); err != nil {
		return 0, fmt.Errorf("remove: records: %w", err)
	}
	r, err := tx.ExecContext(ctx, "DELETE FROM papers WHERE id IN (SELECT value FROM json_each(?))", string(arg))
	if err != nil {
		return 0, fmt.Errorf("remove: %w", err)
	}
	n, err := r.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("remove: %w", err)
	}
	if n > 0 {
		if _, err := tx.ExecContext(ctx, "UPDATE generation SET n = ?", gen); err != nil {
			return 0, fmt.Errorf("remove: bump generation: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("remove: commit: %w", err)
	}
	return int(n), nil
}

// RecordSources returns where the records of a paper (ID or alias) were
// read, ordered by file and line. It returns an error wrapping ErrNotFound
// when there is no such paper.
func (s *Store) RecordSources(ctx context.Context, idOrAlias string) ([]RecordSource, error) {
	res, err := lookup(ctx, s.db, []string{idOrAlias}, false)
	if err != nil {
		return nil, fmt.Errorf("record sources of %q: %w", idOrAlias, err)
	}
	v, ok := res[idOrAlias]
	switch {
	case !ok:
		return nil, fmt.Errorf("record sources of %q: %w", idOrAlias, ErrNotFound)
	case v[0] == "":
		return nil, fmt.Errorf("record sources of %q: %w", idOrAlias, ErrAmbiguous)
	}
	rows, err := s.db.QueryContext(ctx,
		"SELECT f.path, r.line, r.key FROM records r JOIN files f ON f.seq = r.file "+
			"WHERE r.id = ? AND f.path IS NOT NULL ORDER BY f.path, r.line", v[0])
	if err != nil {
		return nil, fmt.Errorf("record sources of %q: %w", idOrAlias, err)
	}
	defer rows.Close()
	var out []RecordSource
	for rows.Next() {
		var rs RecordSource
		if err := rows.Scan(&rs.File, &rs.Line, &rs.Key); err != nil {
			return nil, fmt.Errorf("record sources of %q: %w", idOrAlias, err)
		}
		out = append(out, rs)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("record sources of %q: %w", idOrAlias, err)
	}
	return out, nil
}

// SourceSeen reports whether the file at path was fully ingested before
// (MarkSource) with this exact content: same size and SHA-256. When
// sha256hex is empty it compares size and modification time instead.
func (s *Store) SourceSeen(ctx context.Context, path string, size int64, modTime time.Time, sha256hex string) (bool, error) {
	var (
		sz, mt int64
		sum    string
	)
	err := s.db.QueryRowContext(ctx, "SELECT size, mtime, sha256 FROM sources WHERE path = ?", path).Scan(&sz, &mt, &sum)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("source %s: %w", path, err)
	}
	if sz != size {
		return false, nil
	}
	if sha256hex == "" {
		return mt == modTime.UnixNano(), nil
	}
	return strings.EqualFold(sum, sha256hex), nil
}

// MarkSource records that the file at path, with this size, modification
// time and SHA-256 (hex), was fully ingested as records records.
func (s *Store) MarkSource(ctx context.Context, path string, size int64, modTime time.Time, sha256hex string, records int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err := s.db.ExecContext(ctx, `INSERT INTO sources (path, size, mtime, sha256, records, ingested_at)
		VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (path) DO UPDATE SET size = excluded.size, mtime = excluded.mtime,
			sha256 = excluded.sha256, records = excluded.records, ingested_at = excluded.ingested_at`,
		path, size, modTime.UnixNano(), strings.ToLower(sha256hex), records, time.Now().UnixNano())
	if err != nil {
		return fmt.Errorf("mark source %s: %w", path, err)
	}
	return nil
}

// Meta returns the value of a setting, or "" when it was never set.
func (s *Store) Meta(ctx context.Context, key string) (string, error) {
	var v string
	err := s.db.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = ?", key).Scan(&v)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("meta %q: %w", key, err)
	}
	return v, nil
}

// SetMeta sets a setting. It does not change the generation.
func (s *Store) SetMeta(ctx context.Context, key, value string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err := s.db.ExecContext(ctx,
		"INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", key, value)
	if err != nil {
		return fmt.Errorf("set meta %q: %w", key, err)
	}
	return nil
}

// Search is one search behind a draft (usage tracking): its query text and
// the IDs of the papers it returned, best first.
type Search struct {
	// ID is SearchID(Query, Hits); RecordUsage computes it when empty.
	ID    string
	Query string
	// Hits are paper IDs, best first; a repeated ID counts at its first rank.
	Hits []string
	// FirstSeen is when a draft first recorded the search (set by Usage).
	FirstSeen time.Time
}

// SearchID identifies a search by its content: the SHA-256 (hex) of the
// query text and the hit IDs in order (repeats dropped), so the same
// search recorded twice is one search.
func SearchID(query string, hits []string) string {
	h := sha256.New()
	h.Write([]byte(query))
	for _, id := range dedupe(hits) {
		h.Write([]byte{0})
		h.Write([]byte(id))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// DraftUsage is what one resolved draft cited and the searches behind it.
type DraftUsage struct {
	// ID is the draft's key: recording a draft with the same ID again
	// replaces its citations and searches.
	ID string
	// Name says which draft it is (file paths, "-" for standard input).
	Name string
	// Content identifies the draft's content (a hash); informative.
	Content string
	// Cited are the cited paper IDs, in order of first citation.
	Cited []string
	// Searches are the searches behind the draft.
	Searches []Search
	// FirstResolved and ResolvedAt are set by Usage.
	FirstResolved, ResolvedAt time.Time
}

// Usage is every recorded draft and the searches behind them.
type Usage struct {
	Searches []Search     // by first seen, then ID
	Drafts   []DraftUsage // by first resolved, then ID; each with its searches
}

// RecordUsage records, in one transaction, a resolved draft's citations
// and the searches behind it, replacing what was recorded under the same
// draft ID before, so recording the same draft again changes nothing but
// its ResolvedAt. A search is stored once however many drafts link to it;
// searches no draft links to any more are deleted. Usage does not change
// the generation.
func (s *Store) RecordUsage(ctx context.Context, d DraftUsage) error {
	if d.ID == "" {
		return errors.New("record usage: draft has no ID")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.recordUsage(ctx, d)
	if err != nil {
		err = withCtxErr(ctx, fmt.Errorf("record usage of %s: %w", d.Name, err))
	}
	return err
}

func (s *Store) recordUsage(ctx context.Context, d DraftUsage) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback()
	now := time.Now().UnixNano()
	if _, err := tx.ExecContext(ctx, `INSERT INTO drafts (id, name, content, first_resolved, resolved_at)
		VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET name = excluded.name, content = excluded.content,
			resolved_at = excluded.resolved_at`, d.ID, d.Name, d.Content, now, now); err != nil {
		return err
	}
	for _, q := range []string{"DELETE FROM draft_citations WHERE draft = ?", "DELETE FROM draft_searches WHERE draft = ?"} {
		if _, err := tx.ExecContext(ctx, q, d.ID); err != nil {
			return err
		}
	}
	for i, id := range dedupe(d.Cited) {
		if _, err := tx.ExecContext(ctx, "INSERT INTO draft_citations (draft, paper, ord) VALUES (?, ?, ?)", d.ID, id, i+1); err != nil {
			return err
		}
	}
	for _, se := range d.Searches {
		hits := dedupe(se.Hits)
		id := se.ID
		if id == "" {
			id = SearchID(se.Query, hits)
		}
		r, err := tx.ExecContext(ctx, `INSERT INTO searches (id, query, hits, first_seen) VALUES (?, ?, ?, ?)
			ON CONFLICT (id) DO NOTHING`, id, se.Query, len(hits), now)
		if err != nil {
			return err
		}
		if n, err := r.RowsAffected(); err != nil {
			return err
		} else if n > 0 {
			for i, h := range hits {
				if _, err := tx.ExecContext(ctx, "INSERT INTO search_hits (search, rank, paper) VALUES (?, ?, ?)", id, i+1, h); err != nil {
					return err
				}
			}
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO draft_searches (draft, search) VALUES (?, ?) ON CONFLICT DO NOTHING", d.ID, id); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM searches WHERE id NOT IN (SELECT search FROM draft_searches)"); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// ForgetDraft deletes the usage record of the draft with this ID (and the
// searches no other draft links to). It reports whether there was one.
func (s *Store) ForgetDraft(ctx context.Context, id string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("forget draft: begin: %w", err)
	}
	defer tx.Rollback()
	r, err := tx.ExecContext(ctx, "DELETE FROM drafts WHERE id = ?", id)
	if err != nil {
		return false, fmt.Errorf("forget draft: %w", err)
	}
	n, err := r.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("forget draft: %w", err)
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM searches WHERE id NOT IN (SELECT search FROM draft_searches)"); err != nil {
		return false, fmt.Errorf("forget draft: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("forget draft: commit: %w", err)
	}
	return n > 0, nil
}

// Usage returns every recorded draft, with its citations and searches, and
// every search with its hits; see RecordUsage.
func (s *Store) Usage(ctx context.Context) (Usage, error) {
	u, err := s.usage(ctx)
	if err != nil {
		return Usage{}, fmt.Errorf("usage: %w", err)
	}
	return u, nil
}

func (s *Store) usage(ctx context.Context) (Usage, error) {
	var u Usage
	// One deferred (read) transaction, for a consistent view; BeginTx
	// would take the write lock (_txlock=immediate).
	tx, err := s.db.Conn(ctx)
	if err != nil {
		return u, err
	}
	defer tx.Close()
	if _, err := tx.ExecContext(ctx, "BEGIN DEFERRED"); err != nil {
		return u, err
	}
	defer tx.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
	byID := map[string]int{}
	err = queryRows(ctx, tx, "SELECT id, query, first_seen FROM searches ORDER BY first_seen, id", func(rows *sql.Rows) error {
		var se Search
		var ns int64
		if err := rows.Scan(&se.ID, &se.Query, &ns); err != nil {
			return err
		}
		se.FirstSeen = time.Unix(0, ns)
		byID[se.ID] = len(u.Searches)
		u.Searches = append(u.Searches, se)
		return nil
	})
	if err != nil {
		return u, err
	}
	err = queryRows(ctx, tx, "SELECT search, paper FROM search_hits ORDER BY search, rank", func(rows *sql.Rows) error {
		var sid, pid string
		if err := rows.Scan(&sid, &pid); err != nil {
			return err
		}
		if i, ok := byID[sid]; ok {
			u.Searches[i].Hits = append(u.Searches[i].Hits, pid)
		}
		return nil
	})
	if err != nil {
		return u, err
	}
	draftIdx := map[string]int{}
	err = queryRows(ctx, tx, "SELECT id, name, content, first_resolved, resolved_at FROM drafts ORDER BY first_resolved, id", func(rows *sql.Rows) error {
		var d DraftUsage
		var first, last int64
		if err := rows.Scan(&d.ID, &d.Name, &d.Content, &first, &last); err != nil {
			return err
		}
		d.FirstResolved, d.ResolvedAt = time.Unix(0, first), time.Unix(0, last)
		draftIdx[d.ID] = len(u.Drafts)
		u.Drafts = append(u.Drafts, d)
		return nil
	})
	if err != nil {
		return u, err
	}
	err = queryRows(ctx, tx, "SELECT draft, paper FROM draft_citations ORDER BY draft, ord", func(rows *sql.Rows) error {
		var did, pid string
		if err := rows.Scan(&did, &pid); err != nil {
			return err
		}
		if i, ok := draftIdx[did]; ok {
			u.Drafts[i].Cited = append(u.Drafts[i].Cited, pid)
		}
		return nil
	})
	if err != nil {
		return u, err
	}
	err = queryRows(ctx, tx, `SELECT ds.draft, ds.search FROM draft_searches ds JOIN searches se ON se.id = ds.search
		ORDER BY ds.draft, se.first_seen, se.id`, func(rows *sql.Rows) error {
		var did, sid string
		if err := rows.Scan(&did, &sid); err != nil {
			return err
		}
		i, ok := draftIdx[did]
		j, ok2 := byID[sid]
		if ok && ok2 {
			u.Drafts[i].Searches = append(u.Drafts[i].Searches, u.Searches[j])
		}
		return nil
	})
	return u, err
}

// queryRows runs a query and calls fn for each row.
func queryRows(ctx context.Context, q queryer, query string, fn func(*sql.Rows) error, args ...any) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// dedupe returns ids without empty and repeated ones, in order.
func dedupe(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if id != "" && !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}
