package corpus

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// ReadJSONL reads JSON Lines from r: one CSL-JSON item per line, blank
// lines ignored. It calls emit for each good item and onErr for each bad
// line; name is the file name used in records and errors.
//
// Each emitted Record has Item = the item as read (compacted, see
// PaperFromItem), Paper = PaperFromItem(Item) with Paper.ID =
// PaperID(Paper), Key = the item's "id", File = name, Line = the 1-based
// line, and Kind = the item's "type" lower-cased. Invalid UTF-8 is
// replaced by U+FFFD with a Warning (ErrInvalidUTF8); an invalid DOI
// (ErrInvalidDOI) or arXiv id (ErrInvalidArXiv) or a key that is not a
// safe ID (ErrUnsafeKey) gets one too. A line that is
// not valid JSON or not an object (ErrSyntax), has a string field of the
// wrong JSON type or bad author/issued/keyword values (ErrBadField), or has
// no title (ErrNoTitle) is reported as a *ParseError with its line, and
// reading goes on with the next line. Lines may be of any length.
//
// emit's error stops reading and is returned as is; read errors and a
// cancelled ctx (checked every 1000 lines) are returned wrapped.
func ReadJSONL(ctx context.Context, r io.Reader, name string, emit func(Record) error, onErr func(*ParseError)) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	br := bufio.NewReaderSize(r, 64<<10)
	var long []byte
	for line := 1; ; line++ {
		if line%readCheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("read %s: %w", name, err)
			}
		}
		b, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long[:0], b...)
			for errors.Is(err, bufio.ErrBufferFull) {
				b, err = br.ReadSlice('\n')
				long = append(long, b...)
			}
			b = long
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("read %s: %w", name, err)
		}
		if line == 1 {
			b = bytes.TrimPrefix(b, []byte("\uFEFF"))
		}
		if t := bytes.TrimSpace(b); len(t) > 0 {
			rec, perr := cslRecord(t, name, line)
			if perr != nil {
				if onErr != nil {
					onErr(perr)
				}
			} else if emit != nil {
				if eerr := emit(rec); eerr != nil {
					return eerr
				}
			}
		}
		if err != nil { // io.EOF
			return nil
		}
	}
}

// ReadCSLJSON reads a CSL-JSON file from r: an array of items, or a single
// item object (also several objects one after another). Records and
// per-item errors are as for ReadJSONL, Line being the line where the
// item starts. One bad item is reported and the others are still read; a
// JSON syntax error that breaks the array itself is reported (ErrSyntax,
// with its line) and ends the file, keeping the items before it.
func ReadCSLJSON(ctx context.Context, r io.Reader, name string, emit func(Record) error, onErr func(*ParseError)) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	lines := lineCounter{data: data, line: 1}
	report := func(off int, err error) {
		if onErr != nil {
			onErr(&ParseError{File: name, Line: lines.at(off), Err: err})
		}
	}
	syntax := func(off int, err error) {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			off = int(se.Offset) - 1
		}
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			err = errors.New("unexpected end of JSON input")
		}
		report(max(off, 0), fmt.Errorf("%w: %w", ErrSyntax, err))
	}

	dec := json.NewDecoder(bytes.NewReader(data))
	start := skipJSONSpace(data, 0)
	if start >= len(data) {
		return nil // empty file
	}
	array := data[start] == '['
	if array {
		if _, err := dec.Token(); err != nil {
			syntax(start, err)
			return nil
		}
	} else if data[start] != '{' {
		report(start, fmt.Errorf("%w: want a JSON array of CSL-JSON items or one item object", ErrSyntax))
		return nil
	}
	for n := 1; dec.More(); n++ {
		if n%readCheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("read %s: %w", name, err)
			}
		}
		off := skipJSONSpace(data, int(dec.InputOffset()))
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			syntax(off, err)
			return nil
		}
		rec, perr := cslRecord(raw, name, lines.at(off))
		if perr != nil {
			if onErr != nil {
				onErr(perr)
			}
			continue
		}
		if emit != nil {
			if err := emit(rec); err != nil {
				return err
			}
		}
	}
	if array {
		off := skipJSONSpace(data, int(dec.InputOffset()))
		if _, err := dec.Token(); err != nil {
			syntax(off, err)
			return nil
		}
	}
	if off := skipJSONSpace(data, int(dec.InputOffset())); off < len(data) {
		report(off, fmt.Errorf("%w: unexpected data after the JSON value", ErrSyntax))
	}
	return nil
}

// skipJSONSpace returns the offset of the first byte at or after off that
// is not JSON whitespace or a comma.
func skipJSONSpace(data []byte, off int) int {
	for off < len(data) {
		switch data[off] {
		case ' ', '\t', '\n', '\r', ',':
			off++
		default:
			return off
		}
	}
	return off
}

// lineCounter maps byte offsets, asked in increasing order, to 1-based
// line numbers.
type lineCounter struct {
	data []byte
	off  int // data[:off] holds line-1 newlines
	line int
}

func (c *lineCounter) at(off int) int {
	off = min(off, len(c.data))
	if off < c.off {
		c.off, c.line = 0, 1
	}
	c.line += bytes.Count(c.data[c.off:off], []byte{'\n'})
	c.off = off
	return c.line
}

// cslStringFields are the CSL-JSON fields that Paper.UnmarshalJSON reads
// as strings (numbers are accepted too).
var cslStringFields = []string{
	"id", "type", "title", "container-title", "DOI", "doi", "URL", "url",
	"abstract", "arxiv", "publisher", "volume", "issue", "number", "page",
}

// cslRecord decodes one CSL-JSON item into a Record, keeping the item.
func cslRecord(b []byte, name string, line int) (Record, *ParseError) {
	fail := func(err error) (Record, *ParseError) {
		return Record{}, &ParseError{File: name, Line: line, Err: err}
	}
	item, fixed, cerr := compactItem(b)
	if cerr != nil {
		return fail(fmt.Errorf("%w: %w", ErrSyntax, cerr))
	}
	ms, err := objectMembers(item)
	if err != nil {
		what := "null"
		if item[0] != 'n' {
			what = jsonKind(item[0])
		}
		return fail(fmt.Errorf("%w: not a JSON object but %s", ErrSyntax, what))
	}
	raw := make(map[string]json.RawMessage, len(ms))
	for _, m := range ms {
		raw[m.key] = m.val
	}
	for _, k := range cslStringFields {
		v, ok := raw[k]
		if !ok {
			continue
		}
		switch t := v; {
		case len(t) == 0, t[0] == '"', t[0] == '-', t[0] >= '0' && t[0] <= '9', string(t) == "null":
		default:
			return fail(fmt.Errorf("%w: %q must be a string, not %s", ErrBadField, k, jsonKind(t[0])))
		}
	}
	for _, k := range []string{"author", "issued", "keyword"} {
		v, ok := raw[k]
		if !ok {
			continue
		}
		t := v
		if len(t) == 0 || string(t) == "null" {
			continue
		}
		switch {
		case k == "author" && t[0] != '[':
			return fail(fmt.Errorf("%w: %q must be an array of names, not %s", ErrBadField, k, jsonKind(t[0])))
		case k == "issued" && t[0] != '{':
			return fail(fmt.Errorf("%w: %q must be a date object, not %s", ErrBadField, k, jsonKind(t[0])))
		case k == "keyword" && t[0] != '"' && t[0] != '[':
			return fail(fmt.Errorf("%w: %q must be a string or an array, not %s", ErrBadField, k, jsonKind(t[0])))
		}
	}
	p, err := PaperFromItem(item)
	if err != nil {
		return fail(fmt.Errorf("%w: %w", ErrBadField, err))
	}
	if p.Title == "" {
		return fail(ErrNoTitle)
	}
	key := p.ID
	p.ID = PaperID(p)
	rec := Record{Paper: p, Item: item, Key: key, File: name, Line: line, Kind: strings.ToLower(p.Type)}
	if fixed {
		for _, l := range invalidUTF8Lines(b, line) {
			rec.Warnings = append(rec.Warnings, &Warning{File: name, Line: l, Err: ErrInvalidUTF8})
		}
	}
	var doi string
	for _, k := range []string{"DOI", "doi"} {
		if v, ok := raw[k]; ok {
			if doi, _ = jsonString(v, k); doi != "" {
				break
			}
		}
	}
	var arxiv string
	if v, ok := raw["arxiv"]; ok {
		arxiv, _ = jsonString(v, "arxiv")
	}
	checkRecord(&rec, doi, arxiv)
	return rec, nil
}

func jsonKind(c byte) string {
	switch c {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case '"':
		return "a string"
	case 'n':
		return "null"
	}
	return "a number"
}
