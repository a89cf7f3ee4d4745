package citefind

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/citefind/citefind/corpus"
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
	s.Agree = len(s.Problems) == 0
	if !s.Agree {
		s.Fix = fmt.Sprintf("citefind index --db %s", dir)
		if info.OpenErr == nil && info.Generation == s.StoreGeneration {
			s.Fix += " --force"
		}
	}
	return s, nil
}
