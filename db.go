package citefind

import (
	"os"
	"path/filepath"
)

// Files and folders inside a database folder.
const (
	StoreFile = "papers.sqlite" // canonical store
	SparseDir = "bm25.bleve"    // BM25 index
	// DenseDir is the dense (embedding) index, present only when the
	// database records an embedder other than none (index --embedder).
	DenseDir = "dense"
	// LSAModelFile is the builtin embedder's model, trained on the
	// database's own papers.
	LSAModelFile = "lsa.model"
	// EmbeddingCacheFile caches paper embeddings by (model, text).
	EmbeddingCacheFile = "embeddings.sqlite"
)

// DBEnv overrides the default database folder.
const DBEnv = "CITEFIND_DB"

// DefaultDBDir returns the database folder used when --db is not given:
// $CITEFIND_DB, else $XDG_DATA_HOME/citefind, else ~/.local/share/citefind.
func DefaultDBDir() string {
	if d := os.Getenv(DBEnv); d != "" {
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
