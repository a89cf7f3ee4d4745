package corpus

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// RecordSource is one input record of a paper: where it was read, its
// key and its CSL-JSON item as read.
type RecordSource struct {
	File string
	Line int // 1-based
	Key  string
	// Item is the record's CSL-JSON item as read (a BibTeX entry's as
	// converted), compacted, with its own "id": a CSL-JSON item comes
	// back as it was given.
	Item json.RawMessage
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
		"SELECT f.path, r.line, r.key, r.json FROM records r JOIN files f ON f.seq = r.file "+
			"WHERE r.id = ? AND f.path IS NOT NULL ORDER BY f.path, r.line", v[0])
	if err != nil {
		return nil, fmt.Errorf("record sources of %q: %w", idOrAlias, err)
	}
	defer rows.Close()
	var out []RecordSource
	for rows.Next() {
		var rs RecordSource
		var js string
		if err := rows.Scan(&rs.File, &rs.Line, &rs.Key, &js); err != nil {
			return nil, fmt.Errorf("record sources of %q: %w", idOrAlias, err)
		}
		rs.Item = json.RawMessage(js)
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
