// Package local is the default backend (retrieve.Backend): the search
// indexes inside the database folder, a bleve BM25 index (retrieve/sparse)
// and a chromem-go dense index (retrieve/dense), with the paper store as
// the source of metadata. It registers the URL scheme "local".
//
//	b, err := retrieve.OpenBackend(ctx, "local", retrieve.Env{Dir: dir, Store: st, BM25: params})
//	hits, err := b.BM25(ctx, terms, 100)
//
// Opening never fails because an index is missing or unreadable: Stats
// says so (Indexes), and a query of that index fails with the reason. An
// open Backend keeps the indexes it opened, so an `index` run that renames
// a new index into place does not change its answers.
package local

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/retrieve"
	"github.com/citefind/citefind/retrieve/dense"
	"github.com/citefind/citefind/retrieve/sparse"
)

// Scheme is the backend's URL scheme.
const Scheme = "local"

// Folders of the database folder that the backend owns.
const (
	SparseDir = "bm25.bleve" // the BM25 index
	// DenseDir is the dense (embedding) index, present only when the
	// database records an embedder other than none.
	DenseDir = "dense"
)

// Index metadata keys (in the BM25 index and the dense index header).
const (
	// MetaGeneration holds the store generation an index was built from.
	MetaGeneration = "store_generation"
	// MetaEmbedder holds the embedder spec of the dense index.
	MetaEmbedder = "embedder"
)

func init() { retrieve.Register(Scheme, open) }

func open(ctx context.Context, u *url.URL, env retrieve.Env) (retrieve.Backend, error) {
	if u.Host != "" || (u.Path != "" && u.Path != "/") || u.Opaque != "" {
		return nil, fmt.Errorf("local backend: the URL is %q, want just \"local\"", u.String())
	}
	if env.Dir == "" {
		return nil, errors.New("local backend: no database folder")
	}
	return Open(env.Dir, env.Store, env.BM25), nil
}

// Backend is the local backend. It is safe for concurrent use.
type Backend struct {
	dir    string
	store  *corpus.Store
	bm25   *sparse.Retriever
	bm25Er error

	denseOnce sync.Once
	dense     *dense.Retriever
	denseErr  error
}

var _ retrieve.Backend = (*Backend)(nil)

// Open opens the indexes of the database folder dir. st is the store the
// papers' metadata come from (nil: Papers fails). A missing or unreadable
// BM25 index is not an error here: Stats reports it and BM25 fails with it.
// The dense index is loaded on the first Vector query.
func Open(dir string, st *corpus.Store, p retrieve.BM25Params) *Backend {
	b := &Backend{dir: dir, store: st}
	b.bm25, b.bm25Er = OpenSparse(filepath.Join(dir, SparseDir), sparse.Options{K1: p.K1, B: p.B, FieldWeights: p.FieldWeights})
	return b
}

// Name returns "local".
func (b *Backend) Name() string { return Scheme }

// Dir returns the database folder.
func (b *Backend) Dir() string { return b.dir }

// BM25 ranks by the BM25 index.
func (b *Backend) BM25(ctx context.Context, terms []retrieve.Term, k int) ([]corpus.Hit, error) {
	if b.bm25Er != nil {
		return nil, b.sparseErr()
	}
	return b.bm25.RetrieveTerms(ctx, terms, k)
}

// DocFreqs reads document frequencies off the BM25 index.
func (b *Backend) DocFreqs(ctx context.Context, terms []string) (map[string]int, int, error) {
	if b.bm25Er != nil {
		return nil, 0, b.sparseErr()
	}
	return b.bm25.DocFreqs(ctx, terms)
}

func (b *Backend) sparseErr() error {
	if errors.Is(b.bm25Er, os.ErrNotExist) {
		return fmt.Errorf("the BM25 index of %s is missing: %w", b.dir, b.bm25Er)
	}
	return fmt.Errorf("the BM25 index of %s cannot be opened: %w", b.dir, b.bm25Er)
}

// Vector scans the dense index, loading it on first use.
func (b *Backend) Vector(ctx context.Context, vec []float32, k int) ([]corpus.Hit, error) {
	r, err := b.loadDense()
	if err != nil {
		return nil, err
	}
	return r.RetrieveVector(ctx, vec, k)
}

// LoadDense loads the dense index now (it is otherwise loaded by the first
// Vector query) and returns why it cannot be, or nil.
func (b *Backend) LoadDense() error {
	_, err := b.loadDense()
	return err
}

func (b *Backend) loadDense() (*dense.Retriever, error) {
	b.denseOnce.Do(func() {
		path := filepath.Join(b.dir, DenseDir)
		if _, err := dense.Stat(path); errors.Is(err, dense.ErrNoIndex) {
			b.denseErr = fmt.Errorf("%w: %v", retrieve.ErrNoVectors, err)
			return
		}
		b.dense, b.denseErr = dense.Open(path, nil)
	})
	return b.dense, b.denseErr
}

// Papers looks the papers up in the store by their IDs.
func (b *Backend) Papers(ctx context.Context, ids []string) (map[string]corpus.Paper, error) {
	if b.store == nil {
		return nil, errors.New("local backend: no paper store")
	}
	return b.store.GetByID(ctx, ids)
}

// Stats describes the BM25 index opened and the dense index on disk.
func (b *Backend) Stats(ctx context.Context) (retrieve.Stats, error) {
	s := retrieve.Stats{Generation: -1, VectorGeneration: -1, Embedder: "none"}
	bs := retrieve.IndexStats{Name: "bm25", Generation: -1}
	switch {
	case b.bm25Er == nil:
		bs.Exists, bs.Docs = true, b.bm25.Count()
		if v, err := b.bm25.Meta(MetaGeneration); err == nil {
			if g, err := strconv.ParseInt(v, 10, 64); err == nil {
				bs.Generation = g
			}
		}
		s.Papers, s.Generation = bs.Docs, bs.Generation
	case errors.Is(b.bm25Er, os.ErrNotExist):
	default:
		bs.Exists, bs.Error = true, b.bm25Er.Error()
	}
	s.Indexes = append(s.Indexes, bs)
	ds := DenseInfo(b.dir)
	if ds.Exists {
		s.Indexes = append(s.Indexes, ds.IndexStats)
		if ds.Error == "" {
			s.Vectors, s.VectorGeneration, s.Dim = ds.Docs, ds.Generation, ds.Header.Dim
			s.Embedder, s.VectorModel = ds.Header.Meta[MetaEmbedder], ds.Header.Model
		}
	}
	return s, nil
}

// Close releases the indexes (not the store).
func (b *Backend) Close() error {
	if b.bm25 != nil {
		return b.bm25.Close()
	}
	return nil
}

// SparseInfo describes the BM25 index of a database folder.
type SparseIndexInfo struct {
	Exists     bool  // the folder is there
	OpenErr    error // why it cannot be opened, when it exists
	Docs       int   // documents, when it opens
	Generation int64 // store generation it was built from; -1 unknown
	Fields     []string
}

// SparseInfo opens the BM25 index of dir, if any, and describes it.
func SparseInfo(dir string) SparseIndexInfo {
	info := SparseIndexInfo{Generation: -1}
	path := filepath.Join(dir, SparseDir)
	if _, err := os.Stat(path); err != nil {
		return info
	}
	info.Exists = true
	r, err := OpenSparse(path, sparse.Options{})
	if err != nil {
		info.OpenErr = err
		return info
	}
	defer r.Close()
	info.Docs = r.Count()
	info.Fields = r.Fields()
	if v, err := r.Meta(MetaGeneration); err == nil {
		if g, err := strconv.ParseInt(v, 10, 64); err == nil {
			info.Generation = g
		}
	}
	return info
}

// DenseIndexInfo describes the dense index of a database folder.
type DenseIndexInfo struct {
	retrieve.IndexStats
	Header dense.Header // when it could be read
	Err    error        // the error reading it, wrapping dense.ErrNoIndex when there is none
}

// DenseInfo reads the header of the dense index of dir, without loading
// the vectors.
func DenseInfo(dir string) DenseIndexInfo {
	d := DenseIndexInfo{IndexStats: retrieve.IndexStats{Name: "dense", Generation: -1}}
	h, err := dense.Stat(filepath.Join(dir, DenseDir))
	d.Header, d.Err = h, err
	switch {
	case err == nil:
		d.Exists, d.Docs = true, h.Docs
		if g, err := strconv.ParseInt(h.Meta[MetaGeneration], 10, 64); err == nil {
			d.Generation = g
		}
	case errors.Is(err, dense.ErrNoIndex) && !strings.Contains(err.Error(), "bad header"):
	default:
		d.Exists, d.Error = true, err.Error()
	}
	return d
}

// OpenSparse opens a BM25 index, retrying for a moment when the folder is
// missing: an update renames the new index into place, and for an instant
// between two renames there is none.
func OpenSparse(path string, o sparse.Options) (*sparse.Retriever, error) {
	var err error
	for range 20 {
		var r *sparse.Retriever
		if r, err = sparse.Open(path, o); err == nil || !errors.Is(err, os.ErrNotExist) {
			return r, err
		}
		if m, _ := filepath.Glob(path + ".*-*"); len(m) == 0 {
			return nil, err // no update in progress (no PATH.tmp-* or PATH.old-*): none will appear
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil, err
}
