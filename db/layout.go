package db

import (
	"os"
	"path/filepath"

	"github.com/citefind/citefind/retrieve/local"
)

// Files and folders inside a database folder.
const (
	StoreFile = "papers.sqlite" // the canonical store (corpus.Store)
	// SparseDir and DenseDir are the local backend's indexes.
	SparseDir = local.SparseDir
	DenseDir  = local.DenseDir
	// LSAModelFile is the builtin embedder's model, trained on the
	// database's own papers.
	LSAModelFile = "lsa.model"
	// ContrastModelFile is the contrast embedder's model, trained on
	// the database's own papers (package contrast).
	ContrastModelFile = "contrast.model"
	// EmbeddingCacheFile caches paper embeddings by (model, text).
	EmbeddingCacheFile = "embeddings.sqlite"
	// PipelineFile is the database's pipeline configuration (Pipeline).
	PipelineFile = "pipeline.json"
	// LegacyFusionFile is PipelineFile's name before format 2; it is
	// still read when there is no PipelineFile.
	LegacyFusionFile = "fusion.json"
	// LearnedModelFile is the learned reranker's model trained on the
	// database's own papers (citefind train --self); when present, it
	// is the model of --rerank learned on this database.
	LearnedModelFile = "learned-model.json"
	// LockFile is the write lock.
	LockFile = "lock"
)

// Env overrides the default database folder.
const Env = "CITEFIND_DB"

// DefaultDir returns the database folder used when --db is not given:
// $CITEFIND_DB, else $XDG_DATA_HOME/citefind, else ~/.local/share/citefind.
func DefaultDir() string {
	if d := os.Getenv(Env); d != "" {
		return d
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "citefind")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "share", "citefind")
	}
	return ".citefind"
}
