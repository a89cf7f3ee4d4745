package corpus

import (
	"context"
	"fmt"
)

// schemaVersion is stored in PRAGMA user_version. OpenStore creates the
// schema in a file whose user_version is 0, migrates versions 1 to 3, and
// refuses files with a newer version (ErrSchemaVersion).
const schemaVersion = 4

// schemaSQL is the store's schema, version 4 (its tables are version 3's;
// version 4 changed what the json columns hold, see migrateV3SQL).
//
//	papers          one row per paper.
//	  id            stable ID (PaperID): "10.1145/…", "arxiv:…" or "h:…"
//	  fingerprint   Fingerprint of the merged paper; indexed, used to merge
//	                a record without DOI or arXiv id into a known paper
//	  title, year   copies of the paper's fields, for SQL-side filtering
//	  json          the paper's CSL-JSON item: its records' items merged
//	                (MergeItems) with "id" set to the paper's ID; the Paper
//	                is PaperFromItem of it
//	  updated_gen   generation of the Ingest that inserted or last changed the row
//	aliases         other names of a paper: record keys (BibTeX citation
//	                keys, CSL ids) and the "h:" IDs of absorbed papers.
//	  alias         EscapeID of the key as written, case-sensitive (primary key)
//	  fold          foldKey(key): normalised DOI, "arxiv:" id, or lower case;
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
//	  json          the record's CSL-JSON item as read (Record.Item), own
//	                "id" kept
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

// migrateV3SQL turns a version 3 store into version 4. Version 3 kept each
// record's and paper's normalised Paper as CSL-JSON, version 4 keeps the
// items as read: the old JSON is a valid item and is read as before, and
// forgetting which files were ingested makes the next index read every
// file again, which replaces each record's JSON by its full item (a
// changed record) and recomputes the papers.
const migrateV3SQL = `DELETE FROM sources;`

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
		script = migrateV1SQL + schemaV3SQL + migrateV3SQL
	case 2:
		script = schemaV3SQL + migrateV3SQL
	case 3:
		script = migrateV3SQL
	}
	if _, err := tx.ExecContext(ctx, script); err != nil {
		return fmt.Errorf("create schema (from version %d): %w", v, err)
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", schemaVersion)); err != nil {
		return fmt.Errorf("set schema version: %w", err)
	}
	return tx.Commit()
}
