package eval

// An internal test: lineReader and readLines are unexported.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type numbered struct {
	n    int
	line string
}

func collectLines(r io.Reader, name string) ([]numbered, error) {
	var got []numbered
	lr := newLineReader(r, name)
	for n, line := range lr.Lines() {
		got = append(got, numbered{n, string(line)})
	}
	return got, lr.Err()
}

func TestLineReader(t *testing.T) {
	errBoom := errors.New("boom")
	long := strings.Repeat("x", 2<<20) // over the 1 MiB the old qrels scanners allowed
	tests := []struct {
		name    string
		in      io.Reader
		want    []numbered
		wantErr string // "" for none
	}{
		{
			name: "empty",
			in:   strings.NewReader(""),
		},
		{
			name: "LF",
			in:   strings.NewReader("a\nb c\n"),
			want: []numbered{{1, "a"}, {2, "b c"}},
		},
		{
			name: "BOM on line 1 only",
			in:   strings.NewReader("\ufeffa\n\ufeffb\n"),
			want: []numbered{{1, "a"}, {2, "\ufeffb"}},
		},
		{
			name: "BOM alone on line 1 is a blank line",
			in:   strings.NewReader("\ufeff\r\nb\r\n"),
			want: []numbered{{2, "b"}},
		},
		{
			name: "CRLF and stray trailing CRs",
			in:   strings.NewReader("a\r\nb\r\r\nc\rd\r\n"),
			want: []numbered{{1, "a"}, {2, "b"}, {3, "c\rd"}},
		},
		{
			name: "blank lines counted, not yielded",
			in:   strings.NewReader("\n  \t\n a \n\r\n\nb\n\n"),
			want: []numbered{{3, " a "}, {6, "b"}},
		},
		{
			name: "last line without newline",
			in:   strings.NewReader("a\nb"),
			want: []numbered{{1, "a"}, {2, "b"}},
		},
		{
			name: "last line without newline, CR kept off",
			in:   strings.NewReader("a\r\nb\r"),
			want: []numbered{{1, "a"}, {2, "b"}},
		},
		{
			name: "long line",
			in:   strings.NewReader("a\n" + long + "\nb\n"),
			want: []numbered{{1, "a"}, {2, long}, {3, "b"}},
		},
		{
			name:    "read error after a full line",
			in:      io.MultiReader(strings.NewReader("a\nb\n"), iotest.ErrReader(errBoom)),
			want:    []numbered{{1, "a"}, {2, "b"}},
			wantErr: "f.txt:3: boom",
		},
		{
			name:    "read error inside a line",
			in:      io.MultiReader(strings.NewReader("a\nb"), iotest.ErrReader(errBoom)),
			want:    []numbered{{1, "a"}},
			wantErr: "f.txt:2: boom",
		},
		{
			name: "one byte at a time",
			in:   iotest.OneByteReader(strings.NewReader("\ufeffa\r\n\nb")),
			want: []numbered{{1, "a"}, {3, "b"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := collectLines(tc.in, "f.txt")
			assert.Equal(t, tc.want, got)
			if tc.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, errBoom)
			assert.EqualError(t, err, tc.wantErr)
		})
	}
}

func TestLineReaderStop(t *testing.T) {
	lr := newLineReader(strings.NewReader("a\nb\nc\n"), "f.txt")
	for n, line := range lr.Lines() {
		assert.Equal(t, 1, n)
		assert.Equal(t, "a", string(line))
		break
	}
	assert.NoError(t, lr.Err())
}

func TestReadLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.txt")
	require.NoError(t, os.WriteFile(path, []byte("\ufeffok\r\nbad 2\n\nok\nbad 5"), 0o644))
	errBad := errors.New("bad")
	var seen []numbered
	err := readLines(path, func(n int, line []byte) error {
		seen = append(seen, numbered{n, string(line)})
		if strings.HasPrefix(string(line), "bad") {
			return fmt.Errorf("%w line %q", errBad, line)
		}
		return nil
	})
	// every line is read, bad ones reported with PATH:LINE, in file order
	assert.Equal(t, []numbered{{1, "ok"}, {2, "bad 2"}, {4, "ok"}, {5, "bad 5"}}, seen)
	require.ErrorIs(t, err, errBad)
	assert.EqualError(t, err, path+`:2: bad line "bad 2"`+"\n"+path+`:5: bad line "bad 5"`)

	require.NoError(t, readLines(path, func(int, []byte) error { return nil }))
	require.ErrorIs(t, readLines(filepath.Join(t.TempDir(), "missing"), nil), os.ErrNotExist)
}
