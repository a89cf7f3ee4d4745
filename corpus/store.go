package corpus

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the pure-Go "sqlite" driver
)

// schemaVersion is stored in PRAGMA user_version. OpenStore creates the
// schema in a file whose user_version is 0 and refuses files with a newer
// version (ErrSchemaVersion).
const schemaVersion = 1

// schemaSQL is the store's schema, version 1.
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
//	record_sources  where each input record came from: (file, line) → paper
//	                id and the record's key; ON DELETE/UPDATE CASCADE
//	removed         tombstones: IDs removed (or absorbed into another paper)
//	                and the generation that removed them, for incremental
//	                index updates; cleared when the ID is stored again
//	sources         input files fully ingested: path, size, mtime (Unix ns),
//	                sha256 (hex), records, ingested_at (Unix ns)
//	meta            free key/value settings (SetMeta), e.g. the embedder
//	generation      a single row: the store's generation counter
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
CREATE TABLE record_sources (
	file TEXT NOT NULL,
	line INTEGER NOT NULL,
	id   TEXT NOT NULL REFERENCES papers(id) ON DELETE CASCADE ON UPDATE CASCADE,
	key  TEXT NOT NULL,
	PRIMARY KEY (file, line)
) WITHOUT ROWID;
CREATE INDEX record_sources_id ON record_sources(id);
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
	if _, err := tx.ExecContext(ctx, schemaSQL); err != nil {
		return fmt.Errorf("create schema: %w", err)
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

// Ingest stores a batch of records in one transaction; when it fails or ctx
// is cancelled, nothing of the batch is stored.
//
// Each record's paper gets its stable ID from PaperID (Record.Paper.ID is
// recomputed) and is matched against the store: by ID; else, for a record
// without DOI and arXiv id, by an absorbed "h:" ID or by fingerprint when
// exactly one paper has it. A matched paper is completed with Merge (empty
// fields filled, nothing overwritten); an unmatched one is inserted. A new
// paper with DOI or arXiv id absorbs the paper "h:"+its fingerprint if that
// exists and no other paper has the fingerprint, so the result does not
// depend on whether the bare or the DOI record came first; the absorbed ID
// becomes an alias. The record's Key becomes an alias of its paper unless it
// is empty, equal to the ID, or (case-insensitively for DOI-like keys)
// already names a different paper, which counts as an AliasConflict. The
// record's File and Line are remembered (RecordSources).
//
// DOI, arXiv id and keywords are stored normalised (NormalizeDOI,
// NormalizeArXiv, SplitKeywords), the form the CSL-JSON round trip gives.
// The generation is bumped when a paper or alias was added or changed.
func (s *Store) Ingest(ctx context.Context, recs []Record) (IngestStats, error) {
	st, err := s.ingest(ctx, recs)
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

func (s *Store) ingest(ctx context.Context, recs []Record) (IngestStats, error) {
	if len(recs) == 0 {
		if err := ctx.Err(); err != nil {
			return IngestStats{}, fmt.Errorf("ingest: %w", err)
		}
		return IngestStats{}, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return IngestStats{}, fmt.Errorf("ingest: begin: %w", err)
	}
	defer tx.Rollback()
	gen, err := generation(ctx, tx)
	if err != nil {
		return IngestStats{}, fmt.Errorf("ingest: %w", err)
	}
	in := &ingester{ctx: ctx, tx: tx, gen: gen + 1}
	defer in.close()
	if err := in.prepare(); err != nil {
		return IngestStats{}, fmt.Errorf("ingest: %w", err)
	}
	in.st.Read = len(recs)
	irs := make([]inRecord, 0, len(recs))
	for i := range recs {
		p := recs[i].Paper
		normalizePaper(&p)
		ir := inRecord{r: &recs[i], p: p, bare: p.DOI == "" && p.ArXiv == ""}
		if ir.bare && NormalizeTitle(p.Title) == "" {
			in.st.Skipped++
			continue
		}
		ir.p.ID = PaperID(p)
		ir.fp = Fingerprint(ir.p)
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
		if err := in.add(&irs[i]); err != nil {
			return IngestStats{}, fmt.Errorf("ingest %s:%d: %w", irs[i].r.File, irs[i].r.Line, err)
		}
	}
	if in.changed {
		if _, err := tx.ExecContext(ctx, "UPDATE generation SET n = ?", in.gen); err != nil {
			return IngestStats{}, fmt.Errorf("ingest: bump generation: %w", err)
		}
		if _, err := tx.ExecContext(ctx,
			"DELETE FROM removed WHERE id IN (SELECT id FROM papers WHERE updated_gen = ?)", in.gen); err != nil {
			return IngestStats{}, fmt.Errorf("ingest: clear tombstones: %w", err)
		}
	}
	if err := ctx.Err(); err != nil {
		return IngestStats{}, fmt.Errorf("ingest: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return IngestStats{}, fmt.Errorf("ingest: commit: %w", err)
	}
	return in.st, nil
}

// ingester holds the prepared statements and per-batch state of one Ingest.
// Before the records are handled, prefetch reads in three queries what the
// store knows about the batch's IDs, keys and fingerprints; the caches
// below then answer most lookups, and stay exact because every write of
// the batch updates them. What they don't cover falls back to a query in
// the transaction.
type ingester struct {
	ctx     context.Context
	tx      *sql.Tx
	gen     int64
	st      IngestStats
	changed bool

	papers     map[string]*cachedPaper // stored papers by ID
	paperKnown map[string]bool         // IDs whose absence from papers means not stored
	aliases    map[string]string       // alias → paper ID; "" = no such alias
	byFP       map[string][]string     // fingerprint → IDs of the papers having it, complete

	getPaper, byFingerprint                    *sql.Stmt
	insPaper, updPaper, renamePaper, tombstone *sql.Stmt
	getAlias, insAlias, insSource              *sql.Stmt
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
		{&in.insSource, "INSERT INTO record_sources (file, line, id, key) VALUES (?, ?, ?, ?) " +
			"ON CONFLICT (file, line) DO UPDATE SET id = excluded.id, key = excluded.key"},
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
		in.tombstone, in.getAlias, in.insAlias, in.insSource,
	} {
		if st != nil {
			st.Close()
		}
	}
}

// prefetch loads what the store knows about the batch: the papers with the
// records' IDs, the "h:" IDs DOI records may absorb and the IDs DOI-like
// keys fold to; the aliases named by keys and IDs; and the papers having
// the records' fingerprints.
func (in *ingester) prefetch(recs []inRecord) error {
	var ids, names, fps []string
	for i := range recs {
		ir := &recs[i]
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
	if r := ir.r; r.File != "" {
		if _, err := in.insSource.ExecContext(in.ctx, r.File, r.Line, id, r.Key); err != nil {
			return fmt.Errorf("store record source: %w", err)
		}
	}
	return in.addAlias(ir.r.Key, id)
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
		query = resolveCTE + "\nSELECT b.k, b.id, p.json FROM best b JOIN papers p ON p.id = b.id"
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
// Resolve), with their aliases and record sources, in one transaction. It
// returns how many papers it deleted; unknown ids are ignored.
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
		"SELECT file, line, key FROM record_sources WHERE id = ? ORDER BY file, line", v[0])
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
