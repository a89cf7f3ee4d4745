package corpus

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
)

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
	// retry are the keys that named a paper waiting to be recomputed when
	// their record claimed them: decided once the batch is settled (that
	// paper may lose its records and go).
	retry []aliasRetry

	getPaper, byFingerprint                    *sql.Stmt
	insPaper, updPaper, renamePaper, tombstone *sql.Stmt
	getAlias, insAlias, putRecord, touchRecord *sql.Stmt
	laterRecord, recordsOf, delPaper           *sql.Stmt
	delAlias, renameRecords, otherRecord       *sql.Stmt
}

// aliasRetry is a key addAlias put off.
type aliasRetry struct {
	key, id string
	ir      *inRecord
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

// cachedPaper is a stored paper; its item is decoded on first use.
type cachedPaper struct {
	p   Paper
	js  string // its CSL-JSON item
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
	js   string // the record's CSL-JSON item (its own "id")
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
		{&in.delAlias, "DELETE FROM aliases WHERE alias = ?"},
		{&in.renameRecords, "UPDATE records SET id = ? WHERE id = ?"},
		{&in.otherRecord, "SELECT COALESCE(f.path, ''), r.line FROM records r JOIN files f ON f.seq = r.file " +
			"WHERE r.id = ? ORDER BY (r.key = ?) DESC, r.file, r.line LIMIT 1"},
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
		in.laterRecord, in.recordsOf, in.delPaper, in.delAlias, in.renameRecords, in.otherRecord,
	} {
		if st != nil {
			st.Close()
		}
	}
	in.getPaper, in.byFingerprint, in.insPaper, in.updPaper, in.renamePaper = nil, nil, nil, nil, nil
	in.tombstone, in.getAlias, in.insAlias, in.putRecord, in.touchRecord = nil, nil, nil, nil, nil
	in.laterRecord, in.recordsOf, in.delPaper = nil, nil, nil
	in.delAlias, in.renameRecords, in.otherRecord = nil, nil, nil
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
			names = append(names, EscapeID(k))
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
		c.p, c.dec = p, true
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

// write stores paper p with its item (whose "id" is p.ID): inserted when
// oldID is "", else replacing the row of oldID (whose fingerprint was
// oldFP). fp is p's fingerprint, or "" to compute it.
func (in *ingester) write(p Paper, js json.RawMessage, fp, oldID, oldFP string) error {
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
	in.papers[p.ID] = &cachedPaper{p: p, js: string(js), fp: fp, dec: true}
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
		curItem := in.papers[cur.ID].js
		merged, err := MergeItems(json.RawMessage(curItem), json.RawMessage(ir.js))
		if err != nil {
			return err
		}
		if string(merged) != curItem {
			p, err := decodePaper(cur.ID, string(merged))
			if err != nil {
				return err
			}
			in.st.Updated++
			if err := in.write(p, merged, "", cur.ID, curFP); err != nil {
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
			item, err := ItemWithID(json.RawMessage(ir.js), ir.p.ID)
			if err != nil {
				return err
			}
			if err := in.write(ir.p, item, ir.fp, "", ""); err != nil {
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
	return in.addAlias(ir.key, id, ir)
}

// retryAliases adds the aliases put off while papers were dirty, now
// that the batch is settled: to the paper their record belongs to now.
func (in *ingester) retryAliases() error {
	retry := in.retry
	in.retry = nil
	for _, r := range retry {
		var id string
		switch err := in.tx.QueryRowContext(in.ctx, "SELECT id FROM records WHERE file = ? AND ref = ?", r.ir.file, r.ir.ref).Scan(&id); {
		case errors.Is(err, sql.ErrNoRows):
			continue // withdrawn meanwhile
		case err != nil:
			return fmt.Errorf("retry alias %q: %w", r.key, err)
		}
		if err := in.addAlias(r.key, id, r.ir); err != nil {
			return err
		}
	}
	return nil // nothing is dirty any more: addAlias put nothing off
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
	_, curFP, ok, err := in.load(id)
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
	if ok && want == id {
		items := make([]json.RawMessage, len(recs))
		for i, r := range recs {
			items[i] = json.RawMessage(r.js)
		}
		merged, err := MergeItems(items...)
		if err != nil {
			return err
		}
		if merged, err = ItemWithID(merged, id); err != nil {
			return err
		}
		if err := in.dropStaleAliases(id); err != nil {
			return err
		}
		if string(merged) == in.papers[id].js {
			return nil
		}
		p, err := decodePaper(id, string(merged))
		if err != nil {
			return err
		}
		in.st.Recomputed++
		return in.write(p, merged, "", id, curFP)
	}
	ps := make([]Paper, len(recs))
	for i, r := range recs {
		if ps[i], err = decodePaper(r.own, r.js); err != nil {
			return err
		}
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
	item, err := MergeItems(json.RawMessage(in.papers[hid].js), json.RawMessage(ir.js))
	if err != nil {
		return false, err
	}
	if item, err = ItemWithID(item, ir.p.ID); err != nil {
		return false, err
	}
	merged, err := decodePaper(ir.p.ID, string(item))
	if err != nil {
		return false, err
	}
	_ = old
	if err := in.write(merged, item, "", hid, oldFP); err != nil {
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
	return true, in.addAlias(hid, merged.ID, nil)
}

// addAlias makes key (escaped, EscapeID) an alias of paper id; see
// IngestSource for the rules. ir is the record the key comes from, for
// reporting a conflict (nil for an absorbed ID).
func (in *ingester) addAlias(key, id string, ir *inRecord) error {
	if key == "" {
		return nil
	}
	alias := EscapeID(key)
	if alias == id || len(alias) > MaxIDLen {
		return nil // too long: the reader warned (ErrUnsafeKey)
	}
	t, err := in.alias(alias)
	if err != nil {
		return err
	}
	if t != "" {
		switch {
		case t == id:
		case in.dirty[t] && ir != nil:
			in.retry = append(in.retry, aliasRetry{key, id, ir})
		default:
			return in.conflict(key, id, t, ir)
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
		if ok && in.dirty[f] && ir != nil {
			in.retry = append(in.retry, aliasRetry{key, id, ir})
			return nil
		}
		if ok {
			return in.conflict(key, id, f, ir) // the key is another paper's ID
		}
	}
	if _, err := in.insAlias.ExecContext(in.ctx, alias, f, id); err != nil {
		return fmt.Errorf("store alias %q: %w", alias, err)
	}
	in.aliases[alias] = id
	in.st.Aliases++
	in.changed = true
	return nil
}

// conflict counts a key of a record of paper id that already names paper
// other, and records where (KeyConflict).
func (in *ingester) conflict(key, id, other string, ir *inRecord) error {
	in.st.AliasConflicts++
	if ir == nil {
		return nil
	}
	kc := KeyConflict{Key: key, File: ir.r.File, Line: ir.line, Paper: id, Other: other}
	switch err := in.otherRecord.QueryRowContext(in.ctx, other, key).Scan(&kc.OtherFile, &kc.OtherLine); {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return fmt.Errorf("locate key %q: %w", key, err)
	}
	in.st.KeyConflicts = append(in.st.KeyConflicts, kc)
	return nil
}

// dropStaleAliases deletes the key aliases of paper id that no record of
// it has any more (absorbed "h:" IDs stay).
func (in *ingester) dropStaleAliases(id string) error {
	keep := map[string]bool{}
	err := queryRows(in.ctx, in.tx, "SELECT key FROM records WHERE id = ?", func(rows *sql.Rows) error {
		var k string
		if err := rows.Scan(&k); err != nil {
			return err
		}
		keep[EscapeID(k)] = true
		return nil
	}, id)
	if err != nil {
		return fmt.Errorf("drop aliases: %w", err)
	}
	var drop []string
	err = queryRows(in.ctx, in.tx, "SELECT alias FROM aliases WHERE id = ? AND alias NOT LIKE 'h:%'", func(rows *sql.Rows) error {
		var a string
		if err := rows.Scan(&a); err != nil {
			return err
		}
		if !keep[a] {
			drop = append(drop, a)
		}
		return nil
	}, id)
	if err != nil {
		return fmt.Errorf("drop aliases: %w", err)
	}
	for _, a := range drop {
		if _, err := in.delAlias.ExecContext(in.ctx, a); err != nil {
			return fmt.Errorf("drop alias %q: %w", a, err)
		}
		delete(in.aliases, a)
		in.changed = true
	}
	return nil
}
