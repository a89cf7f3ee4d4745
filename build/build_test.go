package build_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/build"
	"github.com/citefind/citefind/corpus"
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
	rep, err := build.Ensure(ctx, dir, build.EnsureOptions{Files: []string{bad}, OnError: func(err error) { seen = append(seen, err) }})
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Papers, "the good record is stored")
	require.Len(t, rep.Ingest.Errors, 1, "the bad record")
	assert.Equal(t, rep.Ingest.Errors, seen)
	assert.Contains(t, rep.Ingest.Errors[0].Error(), "bad.bib:2")
}

// A missing input is an error before anything is created: no database
// folder, no empty store.
func TestEnsureRefusesMissingInput(t *testing.T) {
	ctx := t.Context()
	dir := filepath.Join(t.TempDir(), "db")
	good := filepath.Join(t.TempDir(), "good.bib")
	require.NoError(t, os.WriteFile(good, []byte("@article{ok, title={A title}, year={2020}}\n"), 0o644))
	missing := filepath.Join(t.TempDir(), "missing.bib")
	_, err := build.Ensure(ctx, dir, build.EnsureOptions{Files: []string{good, missing}})
	require.ErrorIs(t, err, build.ErrMissingInput)
	assert.Contains(t, err.Error(), missing)
	assert.NoDirExists(t, dir)
}

// Warnings: problems that do not stop a record from being stored are
// reported with FILE:LINE, and a folder without supported files too.
func TestEnsureWarnings(t *testing.T) {
	ctx := t.Context()
	in := t.TempDir()
	a := filepath.Join(in, "a.bib")
	b := filepath.Join(in, "b.bib")
	require.NoError(t, os.WriteFile(a, []byte("@article{smith2020, title={First paper}, doi={10.1/one}}\n\n"+
		"@article{latin1, title={Caf\xe9 society}, year={2020}}\n"+
		"@article{baddoi, title={Bad DOI}, doi={10.1145/12 34}}\n"+
		"@article{odd|key, title={Odd key}, year={2001}}\n"+
		"@misc{badarxiv, title={Bad arXiv}, eprint={2101.1}, archivePrefix={arXiv}}\n"), 0o644))
	require.NoError(t, os.WriteFile(b, []byte("% another file\n@article{smith2020, title={Second paper}, doi={10.1/two}}\n"), 0o644))
	empty := filepath.Join(t.TempDir(), "empty")
	require.NoError(t, os.Mkdir(empty, 0o755))
	notes := filepath.Join(t.TempDir(), "notes")
	require.NoError(t, os.Mkdir(notes, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(notes, "readme.txt"), []byte("x"), 0o644))

	var warned []string
	rep, err := build.Ensure(ctx, filepath.Join(t.TempDir(), "db"), build.EnsureOptions{
		Files:     []string{a, b, empty, notes},
		OnWarning: func(err error) { warned = append(warned, err.Error()) },
	})
	require.NoError(t, err)
	assert.Equal(t, 6, rep.Papers, "every record is stored")
	assert.Empty(t, rep.Ingest.Errors)
	assert.Equal(t, []string{empty, notes}, rep.Ingest.EmptyInputs)
	require.Len(t, rep.Ingest.Warnings, len(warned))
	want := []string{
		empty + ": warning: no supported files in this folder",
		notes + ": warning: no supported files in this folder",
		a + ":3: warning: not UTF-8: read as Latin-1 (Windows-1252)",
		a + `:4: warning: invalid DOI "10.1145/12 34"`,
		a + `:5: warning: key "odd|key": it has characters that cannot appear in an ID; use it as "odd%7ckey"`,
		a + `:6: warning: invalid arXiv id "2101.1"`,
		b + `:2: warning: duplicate key "smith2020": it already names paper 10.1/one (` + a + `:1)`,
	}
	require.Len(t, warned, len(want), "%q", warned)
	for i, w := range want {
		assert.True(t, strings.HasPrefix(warned[i], w), "warning %d: got %q, want prefix %q", i, warned[i], w)
	}
	for _, w := range rep.Ingest.Warnings[2:6] {
		var cw *corpus.Warning
		require.ErrorAs(t, w, &cw)
	}
	assert.ErrorIs(t, rep.Ingest.Warnings[0], build.ErrNoInput)
	assert.ErrorIs(t, rep.Ingest.Warnings[2], corpus.ErrLatin1)
	assert.ErrorIs(t, rep.Ingest.Warnings[3], corpus.ErrInvalidDOI)
	assert.ErrorIs(t, rep.Ingest.Warnings[4], corpus.ErrUnsafeKey)
	assert.ErrorIs(t, rep.Ingest.Warnings[5], corpus.ErrInvalidArXiv)
	assert.ErrorIs(t, rep.Ingest.Warnings[6], corpus.ErrDuplicateKey)
}

// BibTeX files indexed together share their @string macros, whatever
// their order (here the strings file comes after the references), and a
// changed macro re-reads the files that may use it.
func TestIngestSharedMacros(t *testing.T) {
	ctx := t.Context()
	in := t.TempDir()
	refs := filepath.Join(in, "refs.bib")
	strs := filepath.Join(in, "strings.bib")
	require.NoError(t, os.WriteFile(refs, []byte("@article{a, title={Deep nets}, journal=pami, year=2020}\n@article{b, title={Other}, journal={J}, year=2021}\n"), 0o644))
	require.NoError(t, os.WriteFile(strs, []byte("@string{pami = {IEEE Trans. PAMI}}\n"), 0o644))
	st, err := corpus.OpenStore(ctx, filepath.Join(t.TempDir(), "papers.sqlite"))
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	venue := func() string {
		t.Helper()
		v := "(no paper)"
		require.NoError(t, st.Each(ctx, func(p corpus.Paper) error {
			if p.Title == "Deep nets" {
				v = p.Venue
			}
			return nil
		}))
		return v
	}

	sum, err := build.Ingest(ctx, st, []string{in}, build.IngestOptions{})
	require.NoError(t, err)
	assert.Empty(t, sum.Errors)
	assert.Equal(t, 2, sum.Read)
	assert.Equal(t, "IEEE Trans. PAMI", venue())

	// Unchanged: nothing re-read.
	sum, err = build.Ingest(ctx, st, []string{in}, build.IngestOptions{})
	require.NoError(t, err)
	assert.Equal(t, 2, sum.FilesUnchanged)

	// The macro changes: refs.bib is read again although its bytes did not change.
	require.NoError(t, os.WriteFile(strs, []byte("@string{pami = {IEEE Transactions on Pattern Analysis}}\n"), 0o644))
	sum, err = build.Ingest(ctx, st, []string{in}, build.IngestOptions{})
	require.NoError(t, err)
	assert.Equal(t, 0, sum.FilesUnchanged)
	assert.Empty(t, sum.Errors)
	assert.Equal(t, "IEEE Transactions on Pattern Analysis", venue())

	// A file read before strings.bib defines the macro differently: the
	// value stays strings.bib's (the later file), but refs.bib is read
	// again, and its entry is warned with both values.
	abbrev := filepath.Join(in, "abbrev.bib")
	require.NoError(t, os.WriteFile(abbrev, []byte("@string{pami = {PAMI}}\n"), 0o644))
	sum, err = build.Ingest(ctx, st, []string{in}, build.IngestOptions{})
	require.NoError(t, err)
	assert.Empty(t, sum.Errors)
	assert.Equal(t, 2, sum.Read, "refs.bib is read again: the conflict changes its entry's warnings")
	require.Len(t, sum.Warnings, 1)
	assert.ErrorIs(t, sum.Warnings[0], corpus.ErrMacroConflict)
	assert.Contains(t, sum.Warnings[0].Error(), `refs.bib:1: warning: @string macro defined differently by the .bib files read together: "pami": `)
	assert.Equal(t, "IEEE Transactions on Pattern Analysis", venue())

	// refs.bib alone: the macro is undefined, the error names file and line.
	st2, err := corpus.OpenStore(ctx, filepath.Join(t.TempDir(), "papers.sqlite"))
	require.NoError(t, err)
	t.Cleanup(func() { st2.Close() })
	sum, err = build.Ingest(ctx, st2, []string{refs}, build.IngestOptions{})
	require.NoError(t, err)
	require.Len(t, sum.Errors, 1)
	assert.ErrorIs(t, sum.Errors[0], corpus.ErrUndefinedMacro)
	assert.Contains(t, sum.Errors[0].Error(), "refs.bib:1")
}

// A file named twice — given twice, or also inside a folder given — is
// read once, where it first appears.
func TestCollectFilesOnce(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.bib"), filepath.Join(dir, "b.jsonl")
	require.NoError(t, os.WriteFile(a, []byte("@article{a, title={Alpha}, year=2020}\n"), 0o644))
	require.NoError(t, os.WriteFile(b, []byte(`{"id":"b","type":"article","title":"Beta"}`+"\n"), 0o644))
	files, ignored, err := build.CollectFiles([]string{b, a, dir, filepath.Join(dir, ".", "a.bib"), a})
	require.NoError(t, err)
	assert.Equal(t, []string{b, a}, files)
	assert.Zero(t, ignored)

	st, err := corpus.OpenStore(t.Context(), filepath.Join(t.TempDir(), "papers.sqlite"))
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	sum, err := build.Ingest(t.Context(), st, []string{a, a, dir}, build.IngestOptions{})
	require.NoError(t, err)
	assert.Equal(t, 2, sum.Files, "a.bib and b.jsonl, each once")
	assert.Equal(t, 2, sum.Read)
}

// TestIngestRereadsAfterConversionChange: a .bib file ingested by a
// citefind whose BibTeX conversion was different (its fingerprint lacks
// corpus.BibTeXConversion: before 2026-11-28 it was the file's SHA-256
// alone) is read again once, so that the database gets what the reader
// makes of it now; then it is unchanged again. A CSL-JSON file, kept as
// written, is not.
func TestIngestRereadsAfterConversionChange(t *testing.T) {
	ctx := t.Context()
	in := t.TempDir()
	bib, js := filepath.Join(in, "refs.bib"), filepath.Join(in, "items.json")
	require.NoError(t, os.WriteFile(bib, []byte("@article{a, title = {Stra\xdfe}, year = 2000}\n"), 0o644))
	require.NoError(t, os.WriteFile(js, []byte(`[{"id":"b","type":"book","title":"Other"}]`), 0o644))
	st, err := corpus.OpenStore(ctx, filepath.Join(t.TempDir(), "papers.sqlite"))
	require.NoError(t, err)
	defer st.Close()

	sum, err := build.Ingest(ctx, st, []string{in}, build.IngestOptions{})
	require.NoError(t, err)
	assert.Equal(t, 2, sum.Read)
	sum, err = build.Ingest(ctx, st, []string{in}, build.IngestOptions{})
	require.NoError(t, err)
	assert.Equal(t, 2, sum.FilesUnchanged)

	// As an older citefind recorded the .bib file.
	data, err := os.ReadFile(bib)
	require.NoError(t, err)
	fi, err := os.Stat(bib)
	require.NoError(t, err)
	old := sha256.Sum256(data)
	require.NoError(t, st.MarkSource(ctx, bib, fi.Size(), fi.ModTime(), hex.EncodeToString(old[:]), 1))
	sum, err = build.Ingest(ctx, st, []string{in}, build.IngestOptions{})
	require.NoError(t, err)
	assert.Equal(t, 1, sum.FilesUnchanged, "items.json only")
	assert.Equal(t, 1, sum.Read, "refs.bib is read again")
	sum, err = build.Ingest(ctx, st, []string{in}, build.IngestOptions{})
	require.NoError(t, err)
	assert.Equal(t, 2, sum.FilesUnchanged)
}
