package lsa_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind"
	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/eval"
	"github.com/citefind/citefind/internal/datadir"
)

// measureEnv turns the ACM-CR measurement on; measureDBEnv names a folder
// that keeps the benchmark database between runs (built when missing).
const (
	measureEnv   = "CITEFIND_MEASURE"
	measureDBEnv = "CITEFIND_MEASURE_DB"
)

// acmcrDB returns the ACM-CR collection and a database folder holding its
// store and BM25 index, built with the shipped defaults as acmcr_test.go
// does. The folder is $CITEFIND_MEASURE_DB when set (reused when it already
// holds a store), else a temporary folder.
func acmcrDB(t *testing.T, ctx context.Context) (*eval.ACMCR, string) {
	t.Helper()
	dir := datadir.Bench("acm-cr")
	if _, err := os.Stat(filepath.Join(dir, "data", "acm-dl")); err != nil {
		t.Skipf("ACM-CR data not found at %s (set %s): %v", dir, datadir.Env, err)
	}
	a, err := eval.LoadACMCR(dir)
	require.NoError(t, err)
	db := os.Getenv(measureDBEnv)
	if db == "" {
		db = t.TempDir()
	}
	require.NoError(t, os.MkdirAll(db, 0o755))
	storePath := filepath.Join(db, citefind.StoreFile)
	_, statErr := os.Stat(storePath)
	st, err := corpus.OpenStore(ctx, storePath)
	require.NoError(t, err)
	defer st.Close()
	if statErr != nil {
		start := time.Now()
		sum, err := citefind.Ingest(ctx, st, a.BibFiles, citefind.IngestOptions{Keep: a.Keep})
		require.NoError(t, err)
		t.Logf("ingest: %d records read, %d merged, %s", sum.Read, sum.Merged, time.Since(start))
	}
	start := time.Now()
	rep, err := citefind.BuildIndexes(ctx, db, st, citefind.BuildOptions{})
	require.NoError(t, err)
	if rep.SparseBuilt {
		t.Logf("bm25 index built in %s", time.Since(start))
	}
	return a, db
}

func TestACMCRBuildDB(t *testing.T) {
	if os.Getenv(measureEnv) == "" {
		t.Skip("set " + measureEnv + "=1")
	}
	acmcrDB(t, t.Context())
}
