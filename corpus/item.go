package corpus

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Items.
//
// A record's CSL-JSON item is kept as it was read: a CSL-JSON or JSON
// Lines item byte for byte (compacted: white space between tokens
// removed, invalid UTF-8 replaced by U+FFFD), a BibTeX entry as the item
// BibTeXToCSL makes of it. Every CSL variable, name part (particles,
// suffixes), date form (ranges, seasons, circa, literals) and unknown key
// survives. The Paper that retrieval uses is derived from an item by
// PaperFromItem, and a paper made of several records has the item
// MergeItems makes of theirs.

// jsonMember is one top-level member of a JSON object.
type jsonMember struct {
	key    string // decoded
	rawKey []byte // as written, with its quotes
	val    []byte // as written
}

var errNotObject = errors.New("not a JSON object")

// objectMembers splits a valid JSON object into its members, in order.
func objectMembers(b []byte) ([]jsonMember, error) {
	ms := make([]jsonMember, 0, min(max(len(b)/48, 2), 32))
	err := eachMember(b, func(key, rawKey, val []byte) error {
		m := jsonMember{rawKey: rawKey, val: val}
		if bytes.IndexByte(rawKey, '\\') >= 0 {
			var k string
			if err := json.Unmarshal(rawKey, &k); err != nil {
				return fmt.Errorf("%w: %w", ErrSyntax, err)
			}
			m.key = k
		} else {
			m.key = string(key)
		}
		ms = append(ms, m)
		return nil
	})
	return ms, err
}

// eachMember calls fn for each top-level member of a valid JSON object, in
// order, with its key (without quotes, escapes not decoded), the key as
// written and the value as written. It allocates nothing.
func eachMember(b []byte, fn func(key, rawKey, val []byte) error) error {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return errNotObject
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return nil
	}
	for i < len(b) {
		if b[i] != '"' {
			return fmt.Errorf("%w: want a key at offset %d", ErrSyntax, i)
		}
		end, err := skipValue(b, i)
		if err != nil {
			return err
		}
		rawKey := b[i:end]
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return fmt.Errorf("%w: want ':' at offset %d", ErrSyntax, i)
		}
		i = skipSpace(b, i+1)
		end, err = skipValue(b, i)
		if err != nil {
			return err
		}
		if err := fn(rawKey[1:len(rawKey)-1], rawKey, b[i:end]); err != nil {
			return err
		}
		i = skipSpace(b, end)
		if i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
			continue
		}
		if i < len(b) && b[i] == '}' {
			return nil
		}
		return fmt.Errorf("%w: want ',' or '}' at offset %d", ErrSyntax, i)
	}
	return fmt.Errorf("%w: unterminated object", ErrSyntax)
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the offset after the JSON value starting at b[i].
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, fmt.Errorf("%w: want a value", ErrSyntax)
	}
	switch b[i] {
	case '"':
		for j := i + 1; j < len(b); j++ {
			switch b[j] {
			case '\\':
				j++
			case '"':
				return j + 1, nil
			}
		}
		return 0, fmt.Errorf("%w: unterminated string", ErrSyntax)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, err := skipValue(b, j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, fmt.Errorf("%w: unterminated value", ErrSyntax)
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
		j++
	}
	if j == i {
		return 0, fmt.Errorf("%w: want a value at offset %d", ErrSyntax, i)
	}
	return j, nil
}

// appendObject writes members as a compact JSON object.
func appendObject(dst []byte, ms []jsonMember) []byte {
	dst = append(dst, '{')
	for i, m := range ms {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, m.rawKey...)
		dst = append(dst, ':')
		dst = append(dst, m.val...)
	}
	return append(dst, '}')
}

// emptyJSON reports whether a value holds nothing: null, "", [] or {}.
func emptyJSON(v []byte) bool {
	switch string(v) {
	case "null", `""`, "[]", "{}":
		return true
	}
	return false
}

// compactItem validates and compacts one CSL-JSON item. Invalid UTF-8 is
// replaced by U+FFFD first (fixed reports it).
func compactItem(b []byte) (item json.RawMessage, fixed bool, err error) {
	if !utf8.Valid(b) {
		b = bytes.ToValidUTF8(b, []byte("\uFFFD"))
		fixed = true
	}
	var buf bytes.Buffer
	buf.Grow(len(b))
	if err := json.Compact(&buf, b); err != nil {
		return nil, fixed, err
	}
	return buf.Bytes(), fixed, nil
}

// MergeItems merges the CSL-JSON items of one paper's records, given in
// precedence order, into one item: the first item as it is, then every
// top-level variable it lacks (absent, or null, "", [] or {}) taken whole
// from the first later item that has it, appended in the order met. A
// variable is never merged part by part (an author list, a date is taken
// from one item). The "id" is the first item's; see ItemWithID. A single
// item comes back unchanged.
func MergeItems(items ...json.RawMessage) (json.RawMessage, error) {
	switch len(items) {
	case 0:
		return json.RawMessage("{}"), nil
	case 1:
		return items[0], nil
	}
	merged, err := objectMembers(items[0])
	if err != nil {
		return nil, fmt.Errorf("merge items: %w", err)
	}
	pos := make(map[string]int, len(merged))
	for i, m := range merged {
		pos[m.key] = i
	}
	for _, it := range items[1:] {
		ms, err := objectMembers(it)
		if err != nil {
			return nil, fmt.Errorf("merge items: %w", err)
		}
		for _, m := range ms {
			if emptyJSON(m.val) {
				continue
			}
			i, ok := pos[m.key]
			switch {
			case !ok:
				pos[m.key] = len(merged)
				merged = append(merged, m)
			case emptyJSON(merged[i].val):
				merged[i].val = m.val
			}
		}
	}
	return appendObject(make([]byte, 0, len(items[0])+64), merged), nil
}

// ItemWithID returns item with its "id" set to id (in place when it has
// one, else first).
func ItemWithID(item json.RawMessage, id string) (json.RawMessage, error) {
	ms, err := objectMembers(item)
	if err != nil {
		return nil, fmt.Errorf("set item id: %w", err)
	}
	val := appendJSONString(nil, id)
	for i := range ms {
		if ms[i].key == "id" {
			if bytes.Equal(ms[i].val, val) {
				return item, nil
			}
			ms[i].val = val
			return appendObject(make([]byte, 0, len(item)+len(id)), ms), nil
		}
	}
	ms = append([]jsonMember{{key: "id", rawKey: []byte(`"id"`), val: val}}, ms...)
	return appendObject(make([]byte, 0, len(item)+len(id)+8), ms), nil
}

// appendJSONString appends s as a JSON string. Unlike encoding/json it
// does not escape <, > and &, which CSL markup uses.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				dst = append(dst, s[start:i]...)
				dst = append(dst, "\ufffd"...)
				i++
				start = i
				continue
			}
			if r == '\u2028' || r == '\u2029' {
				dst = append(dst, s[start:i]...)
				dst = append(dst, `\u202`...)
				dst = append(dst, hex[r&15])
				i += n
				start = i
				continue
			}
			i += n
			continue
		}
		if c >= 0x20 && c != '"' && c != '\\' {
			i++
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// jsonText is a CSL-JSON text variable: a string or a number (kept as
// written); null is "".
type jsonText string

func (t *jsonText) UnmarshalJSON(b []byte) error {
	switch {
	case len(b) == 0:
		return nil
	case b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*t = jsonText(s)
	case b[0] == '-' || b[0] >= '0' && b[0] <= '9':
		*t = jsonText(b)
	case string(b) == "null":
		*t = ""
	default:
		return fmt.Errorf("want a string, not %s", jsonKind(b[0]))
	}
	return nil
}

// itemName is a CSL-JSON name.
type itemName struct {
	Family              jsonText `json:"family"`
	Given               jsonText `json:"given"`
	Literal             jsonText `json:"literal"`
	DroppingParticle    jsonText `json:"dropping-particle"`
	NonDroppingParticle jsonText `json:"non-dropping-particle"`
	Suffix              jsonText `json:"suffix"`
}

// itemNames decodes a CSL-JSON name list.
func itemNames(v []byte) ([]itemName, error) {
	if v[0] != '[' {
		return nil, fmt.Errorf("want a list of names, not %s", jsonKind(v[0]))
	}
	var out []itemName
	i := skipSpace(v, 1)
	for i < len(v) && v[i] != ']' {
		end, err := skipValue(v, i)
		if err != nil {
			return nil, err
		}
		var n itemName
		err = eachMember(v[i:end], func(key, _, val []byte) error {
			var dst *jsonText
			switch string(key) {
			case "family":
				dst = &n.Family
			case "given":
				dst = &n.Given
			case "literal":
				dst = &n.Literal
			case "dropping-particle":
				dst = &n.DroppingParticle
			case "non-dropping-particle":
				dst = &n.NonDroppingParticle
			case "suffix":
				dst = &n.Suffix
			default:
				return nil
			}
			s, err := jsonString(val, string(key))
			if err != nil {
				return err
			}
			*dst = jsonText(s)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("want a name object: %w", err)
		}
		out = append(out, n)
		i = skipSpace(v, end)
		if i < len(v) && v[i] == ',' {
			i = skipSpace(v, i+1)
		}
	}
	return out, nil
}

// author folds a CSL name into an Author: the particles go before the
// family name ("van Beethoven") and the suffix after it ("Smith, Jr."),
// as BibTeX writes them.
func (n itemName) author() Author {
	a := Author{Given: string(n.Given), Literal: string(n.Literal)}
	var fam string
	for _, part := range nonEmpty(string(n.DroppingParticle), string(n.NonDroppingParticle), string(n.Family)) {
		// An elided particle (d’, dell’, l') joins the family name
		// without a space: d’Arc, dell’Orto.
		if fam != "" && !strings.HasSuffix(fam, "’") && !strings.HasSuffix(fam, "'") {
			fam += " "
		}
		fam += part
	}
	fam = strings.TrimSpace(fam)
	if n.Suffix != "" && fam != "" {
		fam += ", " + string(n.Suffix)
	}
	a.Family = fam
	return a
}

func nonEmpty(ss ...string) []string {
	out := ss[:0:0]
	for _, s := range ss {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// jsonString decodes a JSON text value: a string, a number (kept as
// written) or null (""); name is the variable, for errors.
func jsonString(v []byte, name string) (string, error) {
	switch {
	case len(v) == 0:
		return "", nil
	case v[0] == '"':
		if bytes.IndexByte(v, '\\') < 0 && utf8.Valid(v) {
			return string(v[1 : len(v)-1]), nil
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return "", fmt.Errorf("%s: %w", name, err)
		}
		return s, nil
	case v[0] == '-' || v[0] >= '0' && v[0] <= '9':
		var n json.Number
		if err := json.Unmarshal(v, &n); err != nil {
			return "", fmt.Errorf("%s: %w", name, err)
		}
		return string(v), nil
	case string(v) == "null":
		return "", nil
	}
	return "", fmt.Errorf("%s: want a string, not %s", name, jsonKind(v[0]))
}

// PaperFromItem derives the Paper of a CSL-JSON item, the record retrieval
// and the store's lookups work with:
//
//   - ID: the item's "id" as given (a string or number); readers and the
//     store replace it with the stable ID (PaperID).
//   - Type, Venue (container-title), URL, Publisher, Volume, Pages (page)
//     as given; Issue is "issue", else "number".
//   - Title, Abstract and Keywords (a string split by SplitKeywords, or a
//     list of them): CSL and HTML markup (<i>, <b>, <sup>, <span …>, …)
//     removed and HTML entities decoded; Venue and Publisher get entities
//     decoded. Title is trimmed.
//   - Authors: each CSL name folded (see below); Year: the first year of
//     "issued" (date-parts as numbers or strings, else a year in its
//     literal or raw form), 0 when unknown.
//   - DOI: CleanDOI of "DOI" (else "doi"): as written, case kept, without
//     resolver prefix; "" when not a valid DOI. ArXiv: NormalizeArXiv of the
//     non-standard "arxiv" key that citefind writes.
//
// A name's particles are put before its family name and its suffix after
// it, as BibTeX writes them ("Ludwig", "van Beethoven"; "John", "Smith,
// Jr."). Variable names are matched exactly; a repeated one counts last.
// It fails on an item that is not a JSON object, a text variable that is
// not a string or number, author not a list of name objects, issued not a
// date object, or keyword neither a string nor a list of strings. It does
// not validate the JSON of the variables it does not read: the readers and
// the store do (they compact every item).
func PaperFromItem(item []byte) (Paper, error) {
	// The variables, exact names (a key written with escapes is not
	// matched); a repeated one counts last, as in encoding/json.
	var f struct {
		id, typ, title, container, doi, doiLower, url, urlLower, abstract, arxiv []byte
		publisher, volume, issue, number, page, author, issued, keyword          []byte
	}
	err := eachMember(item, func(key, _, val []byte) error {
		switch string(key) {
		case "id":
			f.id = val
		case "type":
			f.typ = val
		case "title":
			f.title = val
		case "container-title":
			f.container = val
		case "DOI":
			f.doi = val
		case "doi":
			f.doiLower = val
		case "URL":
			f.url = val
		case "url":
			f.urlLower = val
		case "abstract":
			f.abstract = val
		case "arxiv":
			f.arxiv = val
		case "publisher":
			f.publisher = val
		case "volume":
			f.volume = val
		case "issue":
			f.issue = val
		case "number":
			f.number = val
		case "page":
			f.page = val
		case "author":
			f.author = val
		case "issued":
			f.issued = val
		case "keyword":
			f.keyword = val
		}
		return nil
	})
	if err != nil {
		return Paper{}, err
	}
	var errs []error
	str := func(v []byte, name string) string {
		s, err := jsonString(v, name)
		if err != nil {
			errs = append(errs, err)
		}
		return s
	}
	p := Paper{
		ID: str(f.id, "id"), Type: str(f.typ, "type"), Title: strings.TrimSpace(stripHTML(str(f.title, "title"))),
		Venue: decodeEntities(str(f.container, "container-title")), DOI: CleanDOI(str(f.doi, "DOI")), URL: str(f.url, "URL"),
		Abstract: stripHTML(str(f.abstract, "abstract")), ArXiv: NormalizeArXiv(str(f.arxiv, "arxiv")),
		Publisher: decodeEntities(str(f.publisher, "publisher")), Volume: str(f.volume, "volume"),
		Pages: str(f.page, "page"),
	}
	p.Issue = firstNonEmpty(str(f.issue, "issue"), str(f.number, "number"))
	if p.DOI == "" {
		p.DOI = CleanDOI(str(f.doiLower, "doi"))
	}
	if p.URL == "" {
		p.URL = str(f.urlLower, "url")
	}
	if len(errs) > 0 {
		return Paper{}, errs[0]
	}
	if t := f.author; len(t) > 0 && string(t) != "null" {
		names, err := itemNames(t)
		if err != nil {
			return Paper{}, fmt.Errorf("author: %w", err)
		}
		if len(names) > 0 {
			p.Authors = make([]Author, len(names))
			for i, n := range names {
				a := n.author()
				a.Family, a.Given, a.Literal = decodeEntities(a.Family), decodeEntities(a.Given), decodeEntities(a.Literal)
				p.Authors[i] = a
			}
		}
	}
	if t := f.issued; len(t) > 0 && string(t) != "null" {
		y, err := yearFromCSLDate(t)
		if err != nil {
			return Paper{}, fmt.Errorf("issued: %w", err)
		}
		p.Year = y
	}
	if t := f.keyword; len(t) > 0 && string(t) != "null" {
		var s string
		var list []string
		switch {
		case json.Unmarshal(t, &s) == nil:
			p.Keywords = SplitKeywords(stripHTML(s))
		case json.Unmarshal(t, &list) == nil:
			for _, k := range list {
				p.Keywords = append(p.Keywords, SplitKeywords(stripHTML(k))...)
			}
		default:
			return Paper{}, fmt.Errorf("keyword: want a string or a list of strings")
		}
	}
	return p, nil
}
