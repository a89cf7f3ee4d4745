package db

import (
	"context"
	"fmt"

	"github.com/citefind/citefind/retrieve"
)

// Status says whether a database's store and the indexes of its backend
// agree.
type Status struct {
	DB              string        `json:"db"`
	StorePapers     int           `json:"store_papers"`
	StoreGeneration int64         `json:"store_generation"`
	Backend         string        `json:"backend"`
	Indexes         []IndexStatus `json:"indexes"`
	// Detail is what the backend says of itself (nodes, shards, …).
	Detail []string `json:"detail,omitempty"`
	// WriterPID is the pid of a citefind holding the write lock, 0 if none.
	WriterPID int      `json:"writer_pid,omitempty"`
	Agree     bool     `json:"agree"`
	Problems  []string `json:"problems,omitempty"`
	Fix       string   `json:"fix,omitempty"` // the command that brings them into agreement
	// Pipeline is the database's query pipeline file (nil: none, the
	// built-in one is used); PipelineError says why it could not be read.
	Pipeline      *Pipeline `json:"pipeline,omitempty"`
	PipelineError string    `json:"pipeline_error,omitempty"`
	// Embedder is the embedder spec the database records.
	Embedder string `json:"embedder"`
	// VectorModel is the identity of the model that made the dense
	// index's vectors, as the backend records it ("" when unknown), and
	// EmbedderModel that of the embedder's model saved in the database
	// folder (trained embedders only).
	VectorModel   string `json:"vector_model,omitempty"`
	EmbedderModel string `json:"embedder_model,omitempty"`
}

// IndexStatus is one index of the backend in a Status.
type IndexStatus struct {
	Name       string `json:"name"`
	Exists     bool   `json:"exists"`
	Docs       int    `json:"docs"`
	Generation int64  `json:"generation"` // store generation it was built from; -1 unknown
	Error      string `json:"error,omitempty"`
	UpToDate   bool   `json:"up_to_date"`
}

// ReadStatus reports on the database in dir without changing it. The store
// and an index agree when the index was built from the store's current
// generation and (BM25) holds one document per paper.
func ReadStatus(ctx context.Context, dir string) (Status, error) {
	s := Status{DB: dir}
	d, err := Open(ctx, dir)
	if err != nil {
		return s, err
	}
	defer d.Close()
	st := d.Store
	if s.StoreGeneration, err = st.Generation(ctx); err != nil {
		return s, err
	}
	if s.StorePapers, err = st.Count(ctx); err != nil {
		return s, err
	}
	if s.Embedder, err = d.Embedder(ctx); err != nil {
		return s, err
	}
	if pid, ok := WriterActive(dir); ok {
		s.WriterPID = pid
		if pid == 0 {
			s.WriterPID = -1
		}
	}
	if s.Backend, err = d.Backend(ctx); err != nil {
		return s, err
	}
	var bs retrieve.Stats
	b, err := d.OpenBackend(ctx, "", retrieve.BM25Params{})
	if err == nil {
		bs, err = b.Stats(ctx)
		b.Close()
	}
	if err != nil {
		s.Problems = append(s.Problems, fmt.Sprintf("backend %s: %v", s.Backend, err))
	}
	s.Detail = bs.Detail
	bm25, _ := bs.Index("bm25")
	is := IndexStatus{Name: "bm25", Exists: bm25.Exists, Docs: bm25.Docs, Generation: bm25.Generation, Error: bm25.Error}
	switch {
	case err != nil:
	case !bm25.Exists:
		s.Problems = append(s.Problems, "bm25: no index")
	case bm25.Error != "":
		s.Problems = append(s.Problems, "bm25: cannot be opened: "+bm25.Error)
	case bm25.Generation != s.StoreGeneration:
		s.Problems = append(s.Problems, fmt.Sprintf("bm25: built from store generation %d, the store is at %d", bm25.Generation, s.StoreGeneration))
	case bm25.Docs != s.StorePapers:
		s.Problems = append(s.Problems, fmt.Sprintf("bm25: %d documents for %d papers", bm25.Docs, s.StorePapers))
	default:
		is.UpToDate = true
	}
	s.Indexes = append(s.Indexes, is)
	s.VectorModel = bs.VectorModel
	var modelErr error
	if TrainedInFolder(s.Embedder) {
		s.EmbedderModel, modelErr = ModelFileID(dir, s.Embedder)
	}
	if s.Embedder != EmbedderNone {
		dn, _ := bs.Index("dense")
		ds := IndexStatus{Name: "dense", Exists: dn.Exists, Docs: dn.Docs, Generation: dn.Generation, Error: dn.Error}
		switch {
		case err != nil:
		case !dn.Exists:
			s.Problems = append(s.Problems, fmt.Sprintf("dense: no index (embedder %s)", s.Embedder))
		case dn.Error != "":
			s.Problems = append(s.Problems, "dense: cannot be read: "+dn.Error)
		case dn.Generation != s.StoreGeneration:
			s.Problems = append(s.Problems, fmt.Sprintf("dense: built from store generation %d, the store is at %d", dn.Generation, s.StoreGeneration))
		case modelErr != nil:
			// Queries embed with this model: without it they cannot.
			s.Problems = append(s.Problems, fmt.Sprintf("dense: the %s embedder's model: %v", s.Embedder, modelErr))
		case s.VectorModel != "" && s.EmbedderModel != "" && s.VectorModel != s.EmbedderModel:
			s.Problems = append(s.Problems, fmt.Sprintf("dense: vectors of model %s, the database's %s model is %s", s.VectorModel, s.Embedder, s.EmbedderModel))
		default:
			// Papers without title and abstract are not embedded, so
			// the dense index may hold fewer documents than the store.
			ds.UpToDate = true
		}
		s.Indexes = append(s.Indexes, ds)
	}
	if s.Pipeline, err = ReadPipeline(dir); err != nil {
		s.PipelineError = err.Error()
	}
	s.Agree = len(s.Problems) == 0
	if !s.Agree {
		s.Fix = fmt.Sprintf("citefind index --db %s", dir)
		if bm25.Error == "" && bm25.Generation == s.StoreGeneration {
			s.Fix += " --force"
		}
	}
	return s, nil
}
