package corpus_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/corpus"
)

// readResult is what a reader emitted and reported for one input.
type readResult struct {
	recs []corpus.Record
	errs []*corpus.ParseError
}

func (r readResult) keys() []string {
	var ks []string
	for _, rec := range r.recs {
		ks = append(ks, rec.Key)
	}
	return ks
}

func (r readResult) errLines() []int {
	var ls []int
	for _, e := range r.errs {
		ls = append(ls, e.Line)
	}
	return ls
}

func (r readResult) byKey(t *testing.T, key string) corpus.Record {
	t.Helper()
	for _, rec := range r.recs {
		if rec.Key == key {
			return rec
		}
	}
	require.Failf(t, "record not found", "key %q", key)
	return corpus.Record{}
}

func fixture(name string) string { return filepath.Join("testdata", "readers", name) }

// readFixture reads testdata/readers/name with ReadFile.
func readFixture(t *testing.T, name string) readResult {
	t.Helper()
	var res readResult
	err := corpus.ReadFile(t.Context(), fixture(name), func(r corpus.Record) error {
		res.recs = append(res.recs, r)
		return nil
	}, func(pe *corpus.ParseError) { res.errs = append(res.errs, pe) })
	require.NoError(t, err)
	return res
}

func TestReadFile(t *testing.T) {
	tests := []struct {
		name      string
		file      string
		wantKeys  []string
		wantLines []int   // lines of the records
		errLines  []int   // lines of the ParseErrors
		errIs     []error // their causes
	}{
		{
			name: "ACM DL export", file: "acm.bib",
			wantKeys:  []string{"10.1145/3397271.3402425", "10.1145/3130348.3130351", "10.5555/1234567.1234568"},
			wantLines: []int{1, 19, 37},
		},
		{
			name: "jasist tab-aligned", file: "jasist.bib",
			wantKeys: []string{"10.5555/1869347.1869357"}, wantLines: []int{2},
		},
		{
			name: "Google Scholar and DBLP", file: "scholar.bib",
			wantKeys:  []string{"devlin2019bert", "vaswani2017attention", "DBLP:journals/corr/abs-2004-04906", "ludwig:web", "tr1"},
			wantLines: []int{11, 22, 29, 40, 47},
		},
		{
			name: "broken entry in the middle", file: "broken_middle.bib",
			wantKeys:  []string{"good1", "good2", "good3", "good4"},
			wantLines: []int{1, 7, 19, 25},
			errLines:  []int{13}, errIs: []error{corpus.ErrSyntax},
		},
		{
			name: "truncated file", file: "truncated.bib",
			wantKeys: []string{"t1", "t2"}, wantLines: []int{1, 6},
			errLines: []int{11}, errIs: []error{corpus.ErrSyntax},
		},
		{
			name: "every kind of error", file: "errors.bib",
			wantKeys: []string{"ok1", "ok2"}, wantLines: []int{1, 30},
			errLines: []int{3, 5, 10, 15, 20, 25},
			errIs: []error{
				corpus.ErrSyntax,         // missing key
				corpus.ErrSyntax,         // field without '='
				corpus.ErrUndefinedMacro, // jacm
				corpus.ErrNoTitle,        //
				corpus.ErrSyntax,         // unterminated quoted value
				corpus.ErrSyntax,         // missing ','
			},
		},
		{
			name: "JSON Lines with bad lines", file: "papers.jsonl",
			wantKeys: []string{"vaswani2017", "hinton2020", "42"}, wantLines: []int{1, 3, 9},
			errLines: []int{4, 5, 6, 7, 8},
			errIs:    []error{corpus.ErrSyntax, corpus.ErrNoTitle, corpus.ErrSyntax, corpus.ErrBadField, corpus.ErrBadField},
		},
		{
			name: "CSL-JSON array with bad elements", file: "papers.json",
			wantKeys: []string{"a1", "a4"}, wantLines: []int{2, 17},
			errLines: []int{8, 12}, errIs: []error{corpus.ErrBadField, corpus.ErrNoTitle},
		},
		{
			name: "CSL-JSON array broken by a syntax error", file: "broken_array.json",
			wantKeys: []string{"b1"}, wantLines: []int{2},
			errLines: []int{3}, errIs: []error{corpus.ErrSyntax},
		},
		{
			name: "CSL-JSON single object", file: "single.json",
			wantKeys: []string{"solo"}, wantLines: []int{1},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := readFixture(t, tc.file)
			assert.Equal(t, tc.wantKeys, res.keys())
			var lines []int
			for _, r := range res.recs {
				lines = append(lines, r.Line)
				assert.Equal(t, fixture(tc.file), r.File)
				assert.NotEmpty(t, r.Paper.ID)
				assert.Equal(t, corpus.PaperID(r.Paper), r.Paper.ID)
				assert.NotEmpty(t, r.Paper.Title)
			}
			assert.Equal(t, tc.wantLines, lines)
			assert.Equal(t, tc.errLines, res.errLines(), "errors: %v", res.errs)
			for i, e := range res.errs {
				assert.Equal(t, fixture(tc.file), e.File)
				if i < len(tc.errIs) {
					assert.ErrorIs(t, e, tc.errIs[i], "error %d: %v", i, e)
				}
			}
		})
	}
}

func TestReadFileUnknownExtension(t *testing.T) {
	called := false
	err := corpus.ReadFile(t.Context(), fixture("notes.txt"),
		func(corpus.Record) error { called = true; return nil },
		func(*corpus.ParseError) { called = true })
	require.ErrorIs(t, err, corpus.ErrUnknownFormat)
	assert.Contains(t, err.Error(), "notes.txt")
	for _, ext := range corpus.Extensions() {
		assert.Contains(t, err.Error(), ext)
	}
	assert.False(t, called)
}

func TestReadFileMissing(t *testing.T) {
	for _, name := range []string{"missing.bib", "missing.jsonl", "missing.json"} {
		t.Run(name, func(t *testing.T) {
			err := corpus.ReadFile(t.Context(), fixture(name), func(corpus.Record) error { return nil }, nil)
			require.ErrorIs(t, err, os.ErrNotExist)
		})
	}
}

func TestReadFileExtensionCase(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "UPPER.BIB")
	require.NoError(t, os.WriteFile(path, []byte("@article{k, title={T}}"), 0o644))
	n := 0
	require.NoError(t, corpus.ReadFile(t.Context(), path, func(corpus.Record) error { n++; return nil }, nil))
	assert.Equal(t, 1, n)
}

func TestExtensions(t *testing.T) {
	assert.ElementsMatch(t, []string{".bib", ".bibtex", ".json", ".jsonl", ".ndjson"}, corpus.Extensions())
}

func TestReadFileContextCanceled(t *testing.T) {
	for _, name := range []string{"acm.bib", "papers.jsonl", "papers.json"} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			err := corpus.ReadFile(ctx, fixture(name), func(corpus.Record) error { return nil }, nil)
			require.ErrorIs(t, err, context.Canceled)
		})
	}
}
