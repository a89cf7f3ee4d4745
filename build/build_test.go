package build_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/build"
	"github.com/citefind/citefind/db"
)

func samplePath() string { return filepath.Join("..", "sample", "papers.bib") }

func TestEnsure(t *testing.T) {
	ctx := t.Context()
	dir := filepath.Join(t.TempDir(), "db")
	var news int
	opts := build.EnsureOptions{Files: []string{samplePath()}, Collection: "sample", OnNew: func() { news++ }}

	rep, err := build.Ensure(ctx, dir, opts)
	require.NoError(t, err)
	assert.True(t, rep.New)
	assert.Equal(t, 1, news)
	assert.Equal(t, 30, rep.Papers)
	assert.Equal(t, 30, rep.Ingest.Added)
	assert.Equal(t, 1, rep.Ingest.Files)
	assert.True(t, rep.Build.SparseBuilt)
	assert.Equal(t, "no index yet", rep.Build.Reason)
	assert.Empty(t, rep.PipelineWarning)
	assert.FileExists(t, filepath.Join(dir, db.PipelineFile))

	// Again: the file is unchanged, nothing is rebuilt.
	rep, err = build.Ensure(ctx, dir, opts)
	require.NoError(t, err)
	assert.False(t, rep.New)
	assert.Equal(t, 1, rep.Ingest.FilesUnchanged)
	assert.False(t, rep.Build.SparseBuilt || rep.Build.SparseUpdated)
	assert.Equal(t, 30, rep.Papers)

	// Another collection is refused; no collection (a user's index run)
	// is accepted.
	_, err = build.Ensure(ctx, dir, build.EnsureOptions{Collection: "acm-cr"})
	require.ErrorIs(t, err, build.ErrOtherCollection)
	assert.Contains(t, err.Error(), `collection "sample"`)
	_, err = build.Ensure(ctx, dir, build.EnsureOptions{})
	require.NoError(t, err)
}

func TestEnsureReportsBadInput(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	bad := filepath.Join(t.TempDir(), "bad.bib")
	require.NoError(t, os.WriteFile(bad, []byte("@article{ok, title={A title}, year={2020}}\n@article{broken, title={Unclosed\n"), 0o644))
	var seen []error
	rep, err := build.Ensure(ctx, dir, build.EnsureOptions{Files: []string{bad, filepath.Join(dir, "missing.bib")}, OnError: func(err error) { seen = append(seen, err) }})
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Papers, "the good record is stored")
	assert.Len(t, rep.Ingest.Errors, 2, "the bad record and the missing file")
	assert.Equal(t, rep.Ingest.Errors, seen)
	assert.Contains(t, rep.Ingest.Errors[0].Error(), "missing.bib")
	assert.Contains(t, rep.Ingest.Errors[1].Error(), "bad.bib:2")
}
