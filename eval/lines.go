package eval

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
)

// lineReader reads a benchmark file line by line, the way every loader in
// this package does: a UTF-8 byte-order mark is dropped from line 1, the
// line ending ("\n", "\r\n", and any further trailing "\r") is removed, and
// blank lines (white space only) are skipped but still counted. Lines may
// be of any length. A read error ends the lines; Err reports it as
// "NAME:LINE: cause", LINE being the line that could not be read.
//
//	lr := newLineReader(f, path)
//	for n, line := range lr.Lines() {
//		… // n is 1-based; line is the caller's to keep
//	}
//	if err := lr.Err(); err != nil { … }
type lineReader struct {
	br   *bufio.Reader
	name string
	err  error
}

func newLineReader(r io.Reader, name string) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 64<<10), name: name}
}

// Lines yields the non-blank lines with their 1-based numbers. It reads on
// from where it stopped, so call it once.
func (lr *lineReader) Lines() iter.Seq2[int, []byte] {
	return func(yield func(int, []byte) bool) {
		for n := 1; ; n++ {
			line, err := lr.br.ReadBytes('\n')
			if err != nil && err != io.EOF {
				lr.err = fmt.Errorf("%s:%d: %w", lr.name, n, err)
				return
			}
			if n == 1 {
				line = bytes.TrimPrefix(line, []byte("\ufeff"))
			}
			line = bytes.TrimRight(bytes.TrimSuffix(line, []byte("\n")), "\r")
			if len(bytes.TrimSpace(line)) > 0 && !yield(n, line) {
				return
			}
			if err == io.EOF {
				return
			}
		}
	}
}

// Err is the read error that ended Lines, nil at the end of the input.
func (lr *lineReader) Err() error { return lr.err }

// readLines calls fn for every non-blank line of the file at path (as read
// by lineReader) with its 1-based number. The whole file is read: fn's
// errors are collected as "PATH:LINE: cause" and returned together, a read
// error (which ends the file) last.
func readLines(path string, fn func(n int, line []byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var errs []error
	lr := newLineReader(f, path)
	for n, line := range lr.Lines() {
		if err := fn(n, line); err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: %w", path, n, err))
		}
	}
	return errors.Join(append(errs, lr.Err())...)
}
