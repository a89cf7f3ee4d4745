package citefind

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/retrieve/dense"
)

// Status says whether a database folder's store and indexes agree.
type Status struct {
	DB              string        `json:"db"`
	StorePapers     int           `json:"store_papers"`
	StoreGeneration int64         `json:"store_generation"`
	Indexes         []IndexStatus `json:"indexes"`
	// WriterPID is the pid of a citefind holding the write lock, 0 if none.
	WriterPID int      `json:"writer_pid,omitempty"`
	Agree     bool     `json:"agree"`
	Problems  []string `json:"problems,omitempty"`
	Fix       string   `json:"fix,omitempty"` // the command that brings them into agreement
	// Fusion is the database's default retrieval pipeline (nil: bm25
	// alone); FusionError says why it could not be read.
	Fusion      *FusionConfig `json:"fusion,omitempty"`
	FusionError string        `json:"fusion_error,omitempty"`
}

// IndexStatus is one derived index in a Status.
type IndexStatus struct {
	Name       string `json:"name"`
	Exists     bool   `json:"exists"`
	Docs       int    `json:"docs"`
	Generation int64  `json:"generation"` // store generation it was built from; -1 unknown
	Error      string `json:"error,omitempty"`
	UpToDate   bool   `json:"up_to_date"`
}

// DBStatus reports on the database folder dir without changing it. The
// store and an index agree when the index was built from the store's
// current generation and holds one document per paper.
func DBStatus(ctx context.Context, dir string) (Status, error) {
	s := Status{DB: dir}
	storePath := filepath.Join(dir, StoreFile)
	if _, err := os.Stat(storePath); err != nil {
		return s, fmt.Errorf("%w at %s (run `citefind index --db %s FILES` first)", ErrNoDatabase, dir, dir)
	}
	st, err := corpus.OpenStore(ctx, storePath)
	if err != nil {
		return s, err
	}
	defer st.Close()
	if s.StoreGeneration, err = st.Generation(ctx); err != nil {
		return s, err
	}
	if s.StorePapers, err = st.Count(ctx); err != nil {
		return s, err
	}
	if pid, ok := WriterActive(dir); ok {
		s.WriterPID = pid
		if pid == 0 {
			s.WriterPID = -1
		}
	}
	info := SparseInfo(dir)
	is := IndexStatus{Name: "bm25", Exists: info.Exists, Docs: info.Docs, Generation: info.Generation}
	switch {
	case !info.Exists:
		s.Problems = append(s.Problems, "bm25: no index")
	case info.OpenErr != nil:
		is.Error = info.OpenErr.Error()
		s.Problems = append(s.Problems, "bm25: cannot be opened: "+is.Error)
	case info.Generation != s.StoreGeneration:
		s.Problems = append(s.Problems, fmt.Sprintf("bm25: built from store generation %d, the store is at %d", info.Generation, s.StoreGeneration))
	case info.Docs != s.StorePapers:
		s.Problems = append(s.Problems, fmt.Sprintf("bm25: %d documents for %d papers", info.Docs, s.StorePapers))
	default:
		is.UpToDate = true
	}
	s.Indexes = append(s.Indexes, is)
	if spec, err := RecordedEmbedder(ctx, st); err == nil && spec != EmbedderNone {
		ds := IndexStatus{Name: "dense", Generation: -1}
		h, err := DenseInfo(dir)
		if err == nil {
			ds.Exists, ds.Docs = true, h.Docs
			if g, err := strconv.ParseInt(h.Meta[metaGeneration], 10, 64); err == nil {
				ds.Generation = g
			}
		}
		switch {
		case errors.Is(err, dense.ErrNoIndex) && !strings.Contains(err.Error(), "bad header"):
			s.Problems = append(s.Problems, fmt.Sprintf("dense: no index (embedder %s)", spec))
		case err != nil:
			ds.Exists, ds.Error = true, err.Error()
			s.Problems = append(s.Problems, "dense: cannot be read: "+ds.Error)
		case ds.Generation != s.StoreGeneration:
			s.Problems = append(s.Problems, fmt.Sprintf("dense: built from store generation %d, the store is at %d", ds.Generation, s.StoreGeneration))
		default:
			// Papers without title and abstract are not embedded, so
			// the dense index may hold fewer documents than the store.
			ds.UpToDate = true
		}
		s.Indexes = append(s.Indexes, ds)
	}
	if s.Fusion, err = ReadFusionConfig(dir); err != nil {
		s.FusionError = err.Error()
	}
	s.Agree = len(s.Problems) == 0
	if !s.Agree {
		s.Fix = fmt.Sprintf("citefind index --db %s", dir)
		if info.OpenErr == nil && info.Generation == s.StoreGeneration {
			s.Fix += " --force"
		}
	}
	return s, nil
}
