package atomicfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/internal/atomicfile"
)

func TestWrite(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name    string
		old     string // "" means no file before
		fn      func(f *os.File) error
		want    string
		wantErr error
	}{
		{name: "new file", fn: write("hello"), want: "hello"},
		{name: "replace", old: "old", fn: write("new"), want: "new"},
		{name: "failure keeps the old content", old: "old", fn: func(f *os.File) error {
			_, _ = f.WriteString("partial")
			return boom
		}, want: "old", wantErr: boom},
		{name: "WriteAt", fn: func(f *os.File) error {
			if _, err := f.WriteString("xxxx-data"); err != nil {
				return err
			}
			_, err := f.WriteAt([]byte("head"), 0)
			return err
		}, want: "head-data"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "f.json")
			if tc.old != "" {
				require.NoError(t, os.WriteFile(path, []byte(tc.old), 0o644))
			}
			err := atomicfile.Write(path, 0o644, tc.fn)
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				assert.Contains(t, err.Error(), path)
			} else {
				require.NoError(t, err)
			}
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(b))
			left, err := atomicfile.Leftovers(path)
			require.NoError(t, err)
			assert.Empty(t, left, "no temporary file is left behind")
		})
	}
}

func write(s string) func(f *os.File) error {
	return func(f *os.File) error { _, err := f.WriteString(s); return err }
}

func TestRemoveLeftovers(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "model.bin")
	require.NoError(t, atomicfile.WriteFile(path, []byte("ok"), 0o644))
	for _, n := range []string{"model.bin.tmp-aa", "model.bin.tmp-bb", "other.tmp-cc"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), nil, 0o644))
	}
	n, err := atomicfile.RemoveLeftovers(path)
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	_, err = os.Stat(filepath.Join(dir, "other.tmp-cc"))
	assert.NoError(t, err, "another target's temporary file stays")
	b, _ := os.ReadFile(path)
	assert.Equal(t, "ok", string(b))
}

func TestWriteMissingFolder(t *testing.T) {
	err := atomicfile.WriteFile(filepath.Join(t.TempDir(), "no", "such", "f"), []byte("x"), 0o644)
	require.ErrorIs(t, err, os.ErrNotExist)
}
