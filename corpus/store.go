package corpus

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"

	_ "modernc.org/sqlite" // registers the pure-Go "sqlite" driver
)

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

// foldKey is the case-insensitive form of an ID or alias as asked or
// written: the normalised DOI when s looks like one (also "doi:…" and
// resolver URLs), else "arxiv:" and the normalised arXiv id, else s
// trimmed, lower-cased and escaped (EscapeID).
func foldKey(s string) string {
	s = strings.TrimSpace(s)
	if d := NormalizeDOI(s); d != "" {
		return d
	}
	if a := NormalizeArXiv(s); a != "" {
		return "arxiv:" + a
	}
	return EscapeID(strings.ToLower(s))
}

// looksLikeID reports whether a folded key has the shape of a paper ID.
func looksLikeID(f string) bool {
	return strings.HasPrefix(f, "10.") || strings.HasPrefix(f, "arxiv:") || strings.HasPrefix(f, "h:")
}

// normalizePaper puts p into the form its JSON round trip gives
// (Paper.MarshalJSON, then PaperFromItem).
func normalizePaper(p *Paper) {
	p.DOI = CleanDOI(p.DOI)
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

// decodePaper derives the Paper of a stored item; id is its ID.
func decodePaper(id, js string) (Paper, error) {
	p, err := PaperFromItem([]byte(js))
	if err != nil {
		return Paper{}, fmt.Errorf("decode paper %s: %w", id, err)
	}
	p.ID = id
	return p, nil
}

func generation(ctx context.Context, q queryer) (int64, error) {
	var n int64
	if err := q.QueryRowContext(ctx, "SELECT n FROM generation").Scan(&n); err != nil {
		return 0, fmt.Errorf("read generation: %w", err)
	}
	return n, nil
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

// queryer is what lookups need from *sql.DB and *sql.Tx.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Count returns the number of papers.
func (s *Store) Count(ctx context.Context) (int, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM papers").Scan(&n); err != nil {
		return 0, fmt.Errorf("count papers: %w", err)
	}
	return n, nil
}

// Generation returns the store's generation: a counter bumped by every
// Ingest and Remove that changed a paper or alias. An index records the
// generation it was built from; a different current value means it is
// stale. A new store is at generation 0.
func (s *Store) Generation(ctx context.Context) (int64, error) {
	return generation(ctx, s.db)
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
