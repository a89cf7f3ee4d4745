// Package sampledb builds a citefind database from the shipped sample
// corpus (sample/papers.bib, 30 papers, two of them given abstracts by
// server/testdata/abstracts.jsonl) for the tests of the server packages.
//
// Usage:
//
//	eng := sampledb.Open(t) // closed when the test ends
package sampledb

import (
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind"
	"github.com/citefind/citefind/corpus"
)

// Papers is the number of papers in the sample corpus.
const Papers = 30

// Path returns the absolute path of sample/papers.bib.
func Path(t testing.TB) string {
	_, file, _, ok := runtime.Caller(0)
	require.True(t, ok)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "sample", "papers.bib")
}

// Abstracts returns the path of server/testdata/abstracts.jsonl: the
// same records as two sample papers, with abstracts (fixture text), which
// ingest merges into them.
func Abstracts(t testing.TB) string {
	return filepath.Join(filepath.Dir(Path(t)), "..", "server", "testdata", "abstracts.jsonl")
}

// Build indexes the sample corpus, with the abstracts of Abstracts, into
// a new folder and returns it.
func Build(t testing.TB) string {
	t.Helper()
	ctx := t.Context()
	db := t.TempDir()
	st, err := corpus.OpenStore(ctx, filepath.Join(db, citefind.StoreFile))
	require.NoError(t, err)
	sum, err := citefind.Ingest(ctx, st, []string{Path(t), Abstracts(t)}, citefind.IngestOptions{})
	require.NoError(t, err)
	require.Empty(t, sum.Errors)
	_, err = citefind.BuildIndexes(ctx, db, st, citefind.BuildOptions{})
	require.NoError(t, err)
	require.NoError(t, st.Close())
	return db
}

// Open builds the sample database and opens an engine over it, closed
// when the test ends.
func Open(t testing.TB) *citefind.Engine {
	t.Helper()
	eng, err := citefind.Open(t.Context(), Build(t), citefind.EngineOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { eng.Close() })
	return eng
}
