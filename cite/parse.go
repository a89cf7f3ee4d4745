package cite

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Placeholder grammar (see doc.go):
//
//	placeholder = "[[cite:" list "]]" | "⟦cite:" list "⟧"
//	list        = item { "," item }
//	item        = id [ "|" id ] [ quote ]
//	quote       = '"' { any character but '"' } '"'
//	id          = one or more characters other than white space , | " [ ] ⟦ ⟧
//
// "cite" is matched case-insensitively; white space around ids, separators
// and quotes is allowed; a placeholder lies on one line.

// Citation is one citation in a document: a placeholder, a citation
// resolved by an earlier run (an anchor), or a draft's bare number marker.
type Citation struct {
	Items      []Item
	Start, End int    // byte offsets of the whole citation in the document
	Line, Col  int    // 1-based position of its first character; Col counts characters
	Kind       Kind   // how it was written
	Raw        string // the text of the citation as written
}

// Kind says how a citation was written.
type Kind int

// Kinds of citation.
const (
	KindPlaceholder Kind = iota // [[cite:…]] or ⟦cite:…⟧
	KindAnchor                  // <!--cite:…-->rendered<!--/cite--> from an earlier run
	KindNumber                  // a bare [n] of a draft with a number→ID map
)

// Item is one cited paper of a citation.
type Item struct {
	ID        string // as written: a paper ID or alias
	Secondary string // the source it is cited in ("as cited in"), or ""
	Quote     string // quoted words to verify against the paper, or ""
	Line, Col int    // position of ID
	// SecLine, SecCol is the position of Secondary.
	SecLine, SecCol int
}

// SyntaxError is a malformed placeholder at a position (Col counts
// characters from 1).
type SyntaxError struct {
	Line, Col int
	Msg       string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("%d:%d: %s", e.Line, e.Col, e.Msg) }
func (e *SyntaxError) Unwrap() error { return ErrSyntax }

// ErrorList is several errors, reported together.
type ErrorList []error

func (l ErrorList) Error() string {
	var b strings.Builder
	for i, e := range l {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Unwrap returns the errors, for errors.Is and errors.As.
func (l ErrorList) Unwrap() []error { return l }

// Sentinel errors.
var (
	// ErrSyntax is a malformed placeholder (see SyntaxError).
	ErrSyntax = errors.New("malformed placeholder")
	// ErrUnknownID is a cited ID or alias that is not in the store (see UnknownIDError).
	ErrUnknownID = errors.New("unknown paper ID")
	// ErrUnknownStyle is a style name that is not one of Styles.
	ErrUnknownStyle = errors.New("unknown citation style")
)

// Markers of resolved output.
const (
	anchorOpen  = "<!--cite:"
	anchorClose = "<!--/cite-->"
	bibStart    = "<!-- citefind:bibliography -->"
	bibEnd      = "<!-- /citefind:bibliography -->"
	mapOpen     = "<!-- citefind:map"
)

// Document is a parsed document: its citations in order, the regions that
// are not text (code, the bibliography block, map lines), and the draft's
// number→placeholder map.
type Document struct {
	Text      string
	Citations []Citation
	// Numbers maps a draft's citation number to the items it stands for,
	// from "[n]: cite:…" lines.
	Numbers map[int][]Item
	// bib is the byte range of an existing bibliography block, or -1.
	bibStart, bibEnd int
	// drop are byte ranges removed from the output (map lines outside the
	// bibliography block).
	drop [][2]int
}

// lineIndex converts byte offsets to line:column.
type lineIndex struct {
	text   string
	starts []int
}

func newLineIndex(s string) *lineIndex {
	li := &lineIndex{text: s, starts: []int{0}}
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			li.starts = append(li.starts, i+1)
		}
	}
	return li
}

func (li *lineIndex) pos(off int) (line, col int) {
	lo, hi := 0, len(li.starts)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if li.starts[mid] <= off {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo + 1, utf8.RuneCountInString(li.text[li.starts[lo]:off]) + 1
}

var (
	mapLineRe = regexp.MustCompile(`(?m)^[ \t]*\[(\d+)\]:[ \t]*cite:([^\n]*?)[ \t]*$`)
	numberRe  = regexp.MustCompile(`\[(\d+(?:[ \t]*(?:[,;]|[-–—])[ \t]*\d+)*)\]`)
)

// Parse finds the citations of a Markdown or plain-text document. Text
// inside code spans (`…`) and fenced code blocks (``` or ~~~) is left
// alone. All malformed placeholders are reported together in an ErrorList
// of *SyntaxError; the citations found are returned with it.
func Parse(doc string) (*Document, error) {
	d := &Document{Text: doc, Numbers: map[int][]Item{}, bibStart: -1, bibEnd: -1}
	li := newLineIndex(doc)
	var errs ErrorList
	code := codeRanges(doc)
	inCode := func(off int) (int, bool) {
		for _, r := range code {
			if off >= r[0] && off < r[1] {
				return r[1], true
			}
		}
		return 0, false
	}
	// The bibliography block of an earlier run, and map lines.
	if i := strings.Index(doc, bibStart); i >= 0 {
		if _, c := inCode(i); !c {
			if j := strings.Index(doc[i:], bibEnd); j >= 0 {
				d.bibStart, d.bibEnd = i, i+j+len(bibEnd)
			}
		}
	}
	for _, m := range mapLineRe.FindAllStringSubmatchIndex(doc, -1) {
		if _, c := inCode(m[0]); c {
			continue
		}
		n, err := strconv.Atoi(doc[m[2]:m[3]])
		line, col := li.pos(m[4])
		items, perr := parseList(doc[m[4]:m[5]], m[4], li)
		if err != nil || perr != nil {
			if perr == nil {
				perr = &SyntaxError{Line: line, Col: col, Msg: "bad number"}
			}
			errs = append(errs, perr)
			continue
		}
		d.Numbers[n] = items
		if !(m[0] >= d.bibStart && m[1] <= d.bibEnd) {
			end := m[1]
			if end < len(doc) && doc[end] == '\n' {
				end++
			}
			d.drop = append(d.drop, [2]int{m[0], end})
		}
	}
	for i := 0; i < len(doc); {
		if end, c := inCode(i); c {
			i = end
			continue
		}
		if i == d.bibStart {
			i = d.bibEnd
			continue
		}
		if inDrop(d.drop, i) {
			i++
			continue
		}
		rest := doc[i:]
		switch {
		case hasPrefixFold(rest, "[[cite:"):
			c, next, err := parsePlaceholder(doc, i, len("[[cite:"), "]]", li)
			if err != nil {
				errs = append(errs, err)
			} else {
				d.Citations = append(d.Citations, c)
			}
			i = next
		case hasPrefixFold(rest, "⟦cite:"):
			c, next, err := parsePlaceholder(doc, i, len("⟦cite:"), "⟧", li)
			if err != nil {
				errs = append(errs, err)
			} else {
				d.Citations = append(d.Citations, c)
			}
			i = next
		case strings.HasPrefix(rest, anchorOpen):
			c, next, err := parseAnchor(doc, i, li)
			if err != nil {
				errs = append(errs, err)
			} else {
				d.Citations = append(d.Citations, c)
			}
			i = next
		case rest[0] == '[' && len(d.Numbers) > 0:
			if c, next, ok, err := parseNumber(doc, i, d.Numbers, li); ok {
				if err != nil {
					errs = append(errs, err)
				} else {
					d.Citations = append(d.Citations, c)
				}
				i = next
			} else {
				i++
			}
		default:
			_, size := utf8.DecodeRuneInString(rest)
			i += size
		}
	}
	if len(errs) > 0 {
		return d, errs
	}
	return d, nil
}

func inDrop(drop [][2]int, off int) bool {
	for _, r := range drop {
		if off >= r[0] && off < r[1] {
			return true
		}
	}
	return false
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// parsePlaceholder parses the placeholder starting at doc[start]; the
// opener is open bytes long.
func parsePlaceholder(doc string, start, open int, closer string, li *lineIndex) (Citation, int, error) {
	line, col := li.pos(start)
	eol := strings.IndexByte(doc[start:], '\n')
	if eol < 0 {
		eol = len(doc)
	} else {
		eol += start
	}
	body := start + open
	// The closer is the first one outside a quote.
	end := -1
	inQuote := false
	for j := body; j < eol; j++ {
		if doc[j] == '"' {
			inQuote = !inQuote
			continue
		}
		if !inQuote && strings.HasPrefix(doc[j:], closer) {
			end = j
			break
		}
	}
	if end < 0 {
		next := start + open
		if inQuote {
			return Citation{}, next, &SyntaxError{Line: line, Col: col, Msg: "unclosed placeholder: the quote is not closed before the end of the line"}
		}
		return Citation{}, next, &SyntaxError{Line: line, Col: col, Msg: fmt.Sprintf("unclosed placeholder: no %q before the end of the line", closer)}
	}
	items, err := parseList(doc[body:end], body, li)
	next := end + len(closer)
	if err != nil {
		return Citation{}, next, err
	}
	return Citation{Items: items, Start: start, End: next, Line: line, Col: col, Kind: KindPlaceholder, Raw: doc[start:next]}, next, nil
}

// parseAnchor parses "<!--cite:LIST-->rendered<!--/cite-->".
func parseAnchor(doc string, start int, li *lineIndex) (Citation, int, error) {
	line, col := li.pos(start)
	body := start + len(anchorOpen)
	j := strings.Index(doc[body:], "-->")
	if j < 0 || strings.IndexByte(doc[body:body+j], '\n') >= 0 {
		return Citation{}, body, &SyntaxError{Line: line, Col: col, Msg: `unclosed citation anchor: no "-->"`}
	}
	items, err := parseList(doc[body:body+j], body, li)
	if err != nil {
		return Citation{}, body + j + 3, err
	}
	after := body + j + 3
	k := strings.Index(doc[after:], anchorClose)
	if k < 0 || strings.Contains(doc[after:after+k], anchorOpen) {
		return Citation{}, after, &SyntaxError{Line: line, Col: col, Msg: "citation anchor without its closing " + anchorClose}
	}
	end := after + k + len(anchorClose)
	return Citation{Items: items, Start: start, End: end, Line: line, Col: col, Kind: KindAnchor, Raw: doc[start:end]}, end, nil
}

// parseNumber parses a bare "[1]", "[1, 3]", "[2–4]" marker of a draft.
// ok is false when doc[start:] is not such a marker.
func parseNumber(doc string, start int, numbers map[int][]Item, li *lineIndex) (Citation, int, bool, error) {
	m := numberRe.FindStringSubmatchIndex(doc[start:])
	if m == nil || m[0] != 0 {
		return Citation{}, 0, false, nil
	}
	end := start + m[1]
	if start > 0 {
		r, _ := utf8.DecodeLastRuneInString(doc[:start])
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == ']' || r == '[' || r == '\\' {
			return Citation{}, 0, false, nil
		}
	}
	if end < len(doc) && strings.ContainsRune("([:", rune(doc[end])) {
		return Citation{}, 0, false, nil
	}
	line, col := li.pos(start)
	var nums []int
	for _, part := range regexp.MustCompile(`[,;]`).Split(doc[start+1:end-1], -1) {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(strings.NewReplacer("–", "-", "—", "-").Replace(part), "-")
		a, _ := strconv.Atoi(strings.TrimSpace(lo))
		b := a
		if isRange {
			b, _ = strconv.Atoi(strings.TrimSpace(hi))
		}
		if b < a || b-a > 1000 {
			return Citation{}, end, true, &SyntaxError{Line: line, Col: col, Msg: fmt.Sprintf("bad number range %q", part)}
		}
		for n := a; n <= b; n++ {
			nums = append(nums, n)
		}
	}
	var items []Item
	for _, n := range nums {
		its, ok := numbers[n]
		if !ok {
			return Citation{}, end, true, &SyntaxError{Line: line, Col: col, Msg: fmt.Sprintf("[%d] has no entry in the draft's number map (\"[%d]: cite:ID\")", n, n)}
		}
		for _, it := range its {
			it.Line, it.Col = line, col
			items = append(items, it)
		}
	}
	return Citation{Items: items, Start: start, End: end, Line: line, Col: col, Kind: KindNumber, Raw: doc[start:end]}, end, true, nil
}

// parseList parses the item list s, which starts at doc offset off.
func parseList(s string, off int, li *lineIndex) ([]Item, error) {
	var items []Item
	i := 0
	errAt := func(j int, msg string) error {
		line, col := li.pos(off + j)
		return &SyntaxError{Line: line, Col: col, Msg: msg}
	}
	skipWS := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
	}
	readID := func(what string) (string, int, error) {
		skipWS()
		j := i
		for i < len(s) {
			r, size := utf8.DecodeRuneInString(s[i:])
			if unicode.IsSpace(r) || strings.ContainsRune(`,|"[]⟦⟧`, r) {
				break
			}
			i += size
		}
		if i == j {
			switch {
			case j >= len(s):
				return "", j, errAt(j, "empty "+what)
			case strings.ContainsRune(",|", rune(s[j])):
				return "", j, errAt(j, fmt.Sprintf("empty %s before %q (stray separator)", what, s[j]))
			default:
				r, _ := utf8.DecodeRuneInString(s[j:])
				return "", j, errAt(j, fmt.Sprintf("unexpected %q where %s was expected", r, what))
			}
		}
		return s[j:i], j, nil
	}
	for {
		id, at, err := readID("ID")
		if err != nil {
			return nil, err
		}
		line, col := li.pos(off + at)
		it := Item{ID: id, Line: line, Col: col}
		skipWS()
		if i < len(s) && s[i] == '|' {
			i++
			var sat int
			if it.Secondary, sat, err = readID("secondary-source ID after \"|\""); err != nil {
				return nil, err
			}
			it.SecLine, it.SecCol = li.pos(off + sat)
			skipWS()
			if i < len(s) && s[i] == '|' {
				return nil, errAt(i, `stray "|": a citation names one primary and one secondary source`)
			}
		}
		if i < len(s) && s[i] == '"' {
			q := strings.IndexByte(s[i+1:], '"')
			if q < 0 {
				return nil, errAt(i, "unclosed quote")
			}
			it.Quote = strings.TrimSpace(s[i+1 : i+1+q])
			if it.Quote == "" {
				return nil, errAt(i, "empty quote")
			}
			i += q + 2
			skipWS()
		}
		items = append(items, it)
		if i >= len(s) {
			return items, nil
		}
		if s[i] != ',' {
			r, _ := utf8.DecodeRuneInString(s[i:])
			return nil, errAt(i, fmt.Sprintf("unexpected %q: separate IDs with \",\"", r))
		}
		i++
		skipWS()
		if i >= len(s) {
			return nil, errAt(i-1, `stray "," at the end of the list`)
		}
	}
}

// codeRanges returns the byte ranges of fenced code blocks and inline code
// spans.
func codeRanges(doc string) [][2]int {
	var out [][2]int
	// Fenced blocks, line by line.
	off := 0
	fence := ""
	fenceStart := 0
	var textSpans [][2]int
	textStart := 0
	for off <= len(doc) {
		eol := strings.IndexByte(doc[off:], '\n')
		next := len(doc) + 1
		line := doc[off:]
		if eol >= 0 {
			line = doc[off : off+eol]
			next = off + eol + 1
		}
		trim := strings.TrimLeft(line, " ")
		indent := len(line) - len(trim)
		if fence == "" {
			if indent <= 3 && (strings.HasPrefix(trim, "```") || strings.HasPrefix(trim, "~~~")) {
				ch := trim[0]
				n := 0
				for n < len(trim) && trim[n] == ch {
					n++
				}
				fence = strings.Repeat(string(ch), n)
				fenceStart = off
				textSpans = append(textSpans, [2]int{textStart, off})
			}
		} else if indent <= 3 && strings.HasPrefix(trim, fence) && strings.Trim(trim, string(fence[0])+" \t") == "" {
			out = append(out, [2]int{fenceStart, min(next, len(doc))})
			fence = ""
			textStart = min(next, len(doc))
		}
		off = next
	}
	if fence != "" {
		out = append(out, [2]int{fenceStart, len(doc)})
	} else {
		textSpans = append(textSpans, [2]int{textStart, len(doc)})
	}
	// Inline code spans in text: a run of n backticks up to the next run of
	// exactly n backticks.
	for _, ts := range textSpans {
		s := doc[ts[0]:ts[1]]
		for i := 0; i < len(s); {
			if s[i] != '`' {
				i++
				continue
			}
			n := 0
			for i+n < len(s) && s[i+n] == '`' {
				n++
			}
			j := i + n
			found := -1
			for j < len(s) {
				if s[j] != '`' {
					j++
					continue
				}
				m := 0
				for j+m < len(s) && s[j+m] == '`' {
					m++
				}
				if m == n {
					found = j + m
					break
				}
				j += m
			}
			if found < 0 {
				i += n
				continue
			}
			out = append(out, [2]int{ts[0] + i, ts[0] + found})
			i = found
		}
	}
	return out
}

// serializeItems writes items in placeholder syntax, for anchors.
func serializeItems(items []Item) string {
	var parts []string
	for _, it := range items {
		s := it.ID
		if it.Secondary != "" {
			s += "|" + it.Secondary
		}
		if it.Quote != "" {
			s += ` "` + strings.ReplaceAll(it.Quote, "-->", "--\u200b>") + `"`
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ",")
}
