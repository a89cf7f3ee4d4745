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

	"github.com/citefind/citefind/build"
	"github.com/citefind/citefind/engine"
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
	db := t.TempDir()
	rep, err := build.Ensure(t.Context(), db, build.EnsureOptions{Files: []string{Path(t), Abstracts(t)}})
	require.NoError(t, err)
	require.Empty(t, rep.Ingest.Errors)
	return db
}

// Open builds the sample database and opens an engine over it, closed
// when the test ends.
func Open(t testing.TB) *engine.Engine {
	t.Helper()
	eng, err := engine.Open(t.Context(), Build(t), engine.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { eng.Close() })
	return eng
}
