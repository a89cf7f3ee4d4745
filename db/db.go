package db

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/retrieve"
)

// ErrNoDatabase means the database folder has no store (or, for queries,
// no index) yet.
var ErrNoDatabase = errors.New("no citefind database")

// Store meta keys the database keeps.
const (
	metaEmbedder   = "embedder"
	metaBackend    = "backend"
	metaCollection = "bench"
)

// DB is an open database: its folder and its canonical store.
type DB struct {
	Dir   string
	Store *corpus.Store
}

// Open opens the database in dir; it fails with ErrNoDatabase when dir
// holds no store.
func Open(ctx context.Context, dir string) (*DB, error) {
	path := filepath.Join(dir, StoreFile)
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("%w at %s (run `citefind index --db %s FILES` first)", ErrNoDatabase, dir, dir)
	}
	st, err := corpus.OpenStore(ctx, path)
	if err != nil {
		return nil, err
	}
	return &DB{Dir: dir, Store: st}, nil
}

// Create opens the database in dir, creating the folder and an empty
// store when they do not exist.
func Create(ctx context.Context, dir string) (*DB, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create database folder: %w", err)
	}
	st, err := corpus.OpenStore(ctx, filepath.Join(dir, StoreFile))
	if err != nil {
		return nil, err
	}
	return &DB{Dir: dir, Store: st}, nil
}

// Close closes the store.
func (d *DB) Close() error { return d.Store.Close() }

// EmbedderRecorded reports whether the database records an embedder spec:
// false for a database whose indexes were never built, or built while
// the default embedder could not train (too few papers).
func (d *DB) EmbedderRecorded(ctx context.Context) (bool, error) {
	v, err := d.Store.Meta(ctx, metaEmbedder)
	return v != "", err
}

// Embedder returns the embedder spec the database records (set when its
// indexes are built), EmbedderNone when none was ever recorded.
func (d *DB) Embedder(ctx context.Context) (string, error) {
	v, err := d.Store.Meta(ctx, metaEmbedder)
	if err != nil {
		return "", err
	}
	return ParseEmbedder(v)
}

// SetEmbedder records the embedder spec.
func (d *DB) SetEmbedder(ctx context.Context, spec string) error {
	if cur, _ := d.Store.Meta(ctx, metaEmbedder); cur == spec {
		return nil
	}
	return d.Store.SetMeta(ctx, metaEmbedder, spec)
}

// Backend returns the URL of the backend that holds the database's search
// indexes: "local" unless index --backend recorded another one.
func (d *DB) Backend(ctx context.Context) (string, error) {
	v, err := d.Store.Meta(ctx, metaBackend)
	if err != nil {
		return "", err
	}
	if v == "" {
		return "local", nil
	}
	return v, nil
}

// SetBackend records the backend URL (checked with
// retrieve.ParseBackendURL).
func (d *DB) SetBackend(ctx context.Context, url string) error {
	u, err := retrieve.ParseBackendURL(url)
	if err != nil {
		return err
	}
	s := u.String()
	if u.Scheme == "local" {
		s = "local"
	}
	if cur, _ := d.Backend(ctx); cur == s {
		return nil
	}
	return d.Store.SetMeta(ctx, metaBackend, s)
}

// Collection returns what a benchmark database was built from (e.g.
// "acm-cr"), "" for a database of the user's own papers.
func (d *DB) Collection(ctx context.Context) (string, error) {
	return d.Store.Meta(ctx, metaCollection)
}

// SetCollection records what a benchmark database is built from.
func (d *DB) SetCollection(ctx context.Context, id string) error {
	return d.Store.SetMeta(ctx, metaCollection, id)
}

// OpenBackend opens the database's backend (or url when not "") with the
// BM25 parameters p.
func (d *DB) OpenBackend(ctx context.Context, url string, p retrieve.BM25Params) (retrieve.Backend, error) {
	if url == "" {
		var err error
		if url, err = d.Backend(ctx); err != nil {
			return nil, err
		}
	}
	return retrieve.OpenBackend(ctx, url, retrieve.Env{Dir: d.Dir, Store: d.Store, BM25: p})
}
