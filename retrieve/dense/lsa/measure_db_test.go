package lsa_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/build"
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
	start := time.Now()
	rep, err := build.Ensure(ctx, db, build.EnsureOptions{Files: a.BibFiles, Keep: a.Keep, Collection: "acm-cr"})
	require.NoError(t, err)
	t.Logf("ingest: %d records read, %d merged; bm25 index built: %t; %s", rep.Ingest.Read, rep.Ingest.Merged, rep.Build.SparseBuilt, time.Since(start))
	return a, db
}

func TestACMCRBuildDB(t *testing.T) {
	if os.Getenv(measureEnv) == "" {
		t.Skip("set " + measureEnv + "=1")
	}
	acmcrDB(t, t.Context())
}
