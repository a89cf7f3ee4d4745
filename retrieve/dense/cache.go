package dense

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"sync"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Cache stores embeddings keyed by (embedder model id, SHA-256 of the exact
// text embedded), so re-indexing unchanged papers with the same embedder
// embeds nothing.
//
// It is one SQLite file (modernc.org/sqlite, WAL journal) with one table:
//
//	embedding(model TEXT, hash BLOB(32), vec BLOB, PRIMARY KEY(model, hash))
//
// where vec is the vector as little-endian float32s, as the embedder
// returned it (not normalised). Each Put is one transaction, so a crash or
// a torn write loses at most the batch being written and never leaves a
// partial row behind; a vec whose length is not a multiple of 4 is treated
// as a miss all the same. The cache only grows: delete the file to reclaim
// space. It is safe for concurrent use, also by several processes.
type Cache struct {
	mu sync.RWMutex
	db *sql.DB
}

// OpenCache opens the cache file at path, creating it when missing.
// path must not contain '?'.
func OpenCache(path string) (*Cache, error) {
	if path == "" || path == ":memory:" || strings.ContainsRune(path, '?') {
		return nil, fmt.Errorf("open embedding cache %q: invalid path", path)
	}
	dsn := "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open embedding cache %s: %w", path, err)
	}
	const schema = `CREATE TABLE IF NOT EXISTS embedding (
		model TEXT NOT NULL,
		hash  BLOB NOT NULL,
		vec   BLOB NOT NULL,
		PRIMARY KEY (model, hash)
	)`
	if _, err := db.Exec(schema); err != nil {
		db.Close()
		return nil, fmt.Errorf("open embedding cache %s: %w", path, err)
	}
	return &Cache{db: db}, nil
}

// Close closes the file. Later calls fail with ErrClosed.
func (c *Cache) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.db == nil {
		return nil
	}
	err := c.db.Close()
	c.db = nil
	return err
}

// textKey is the cache key of a text.
func textKey(text string) []byte {
	sum := sha256.Sum256([]byte(text))
	return sum[:]
}

// Get returns the cached vector of each text embedded by model, in order,
// with nil where there is none.
func (c *Cache) Get(ctx context.Context, model string, texts []string) ([][]float32, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.db == nil {
		return nil, fmt.Errorf("embedding cache get: %w", ErrClosed)
	}
	out := make([][]float32, len(texts))
	if len(texts) == 0 {
		return out, nil
	}
	conn, err := c.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("embedding cache get: %w", err)
	}
	defer conn.Close()
	st, err := conn.PrepareContext(ctx, "SELECT vec FROM embedding WHERE model = ? AND hash = ?")
	if err != nil {
		return nil, fmt.Errorf("embedding cache get: %w", err)
	}
	defer st.Close()
	for i, t := range texts {
		var b []byte
		err := st.QueryRowContext(ctx, model, textKey(t)).Scan(&b)
		switch {
		case err == sql.ErrNoRows:
			continue
		case err != nil:
			return nil, fmt.Errorf("embedding cache get: %w", err)
		}
		out[i] = decodeVec(b)
	}
	return out, nil
}

// Put stores the vector of each text embedded by model, replacing what was
// there, in one transaction. texts and vecs have the same length.
func (c *Cache) Put(ctx context.Context, model string, texts []string, vecs [][]float32) error {
	if len(texts) != len(vecs) {
		return fmt.Errorf("embedding cache put: %d texts, %d vectors", len(texts), len(vecs))
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.db == nil {
		return fmt.Errorf("embedding cache put: %w", ErrClosed)
	}
	if len(texts) == 0 {
		return nil
	}
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("embedding cache put: %w", err)
	}
	defer tx.Rollback()
	st, err := tx.PrepareContext(ctx, "INSERT OR REPLACE INTO embedding (model, hash, vec) VALUES (?, ?, ?)")
	if err != nil {
		return fmt.Errorf("embedding cache put: %w", err)
	}
	defer st.Close()
	for i, t := range texts {
		if _, err := st.ExecContext(ctx, model, textKey(t), encodeVec(vecs[i])); err != nil {
			return fmt.Errorf("embedding cache put: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("embedding cache put: %w", err)
	}
	return nil
}

// Len returns the number of vectors cached for model.
func (c *Cache) Len(ctx context.Context, model string) (int, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.db == nil {
		return 0, fmt.Errorf("embedding cache len: %w", ErrClosed)
	}
	var n int
	if err := c.db.QueryRowContext(ctx, "SELECT count(*) FROM embedding WHERE model = ?", model).Scan(&n); err != nil {
		return 0, fmt.Errorf("embedding cache len: %w", err)
	}
	return n, nil
}

func encodeVec(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// decodeVec returns nil for a blob that cannot be a vector.
func decodeVec(b []byte) []float32 {
	if len(b) == 0 || len(b)%4 != 0 {
		return nil
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}
