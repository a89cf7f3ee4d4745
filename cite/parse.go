package cite

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
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
	// ErrLimit is a document over one of its Limits (see LimitError).
	ErrLimit = errors.New("document over a limit")
)

// Limits bound what one document may ask of ParseContext and Resolve; a
// document over one is a *LimitError, found without parsing the rest. The
// zero value has no limits; each field's 0 means no limit.
type Limits struct {
	// MaxCitations is the most cited IDs a document may hold: each ID of a
	// placeholder, of a resolved anchor or of a numbered citation counts
	// (a secondary source too), at each place it is cited.
	MaxCitations int
	// MaxQuotes is the most quotes ([[cite:ID "quoted words"]]) a document
	// may hold; each is checked against its paper.
	MaxQuotes int
	// MaxQuoteChars is the most characters of one quote.
	MaxQuoteChars int
}

// MaxSyntaxErrors is the most *SyntaxError an ErrorList of Parse lists;
// one more error after them says how many were left out.
const MaxSyntaxErrors = 100

// LimitError is a document that asks for more than its Limits allow.
type LimitError struct {
	// What is counted, and where: "cited IDs in one document", "quotes in
	// one document", "characters in one quote".
	What  string
	Limit int
	// Line, Col is where the limit is passed (Col counts characters from
	// 1).
	Line, Col int
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%d:%d: more than %d %s, the limit", e.Line, e.Col, e.Limit, e.What)
}

// Unwrap returns ErrLimit.
func (e *LimitError) Unwrap() error { return ErrLimit }

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

// lineIndex converts byte offsets to line:column. Columns count
// characters, which takes counting the runes from the start of the line:
// pos remembers where it last counted, so that positions asked in
// increasing order (as the parser asks them) cost O(n) in all, however
// long the line.
type lineIndex struct {
	text   string
	starts []int
	// The last position counted: byte offset, its line (0-based) and its
	// column (0-based, in characters).
	lastOff, lastLine, lastCol int
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

// line returns the 0-based line of byte offset off.
func (li *lineIndex) line(off int) int {
	return sort.Search(len(li.starts), func(i int) bool { return li.starts[i] > off }) - 1
}

func (li *lineIndex) pos(off int) (line, col int) {
	l := li.line(off)
	from, c := li.starts[l], 0
	if l == li.lastLine && off >= li.lastOff {
		from, c = li.lastOff, li.lastCol
	}
	c += utf8.RuneCountInString(li.text[from:off])
	li.lastOff, li.lastLine, li.lastCol = off, l, c
	return l + 1, c + 1
}

// ranges is a sorted list of non-overlapping byte ranges [start, end).
type ranges [][2]int

// find returns the range holding off.
func (rs ranges) find(off int) ([2]int, bool) {
	i := sort.Search(len(rs), func(i int) bool { return rs[i][1] > off })
	if i < len(rs) && rs[i][0] <= off {
		return rs[i], true
	}
	return [2]int{}, false
}

// finder returns the first occurrence of a string at or after a byte
// offset. Asked with increasing offsets it searches each part of the
// document once; asked with a smaller offset it searches again.
type finder struct {
	doc, pat string
	from     int // offset of the last question
	at       int // the answer: the first occurrence at or after from, or -1
}

func newFinder(doc, pat string) *finder { return &finder{doc: doc, pat: pat, from: -1} }

func (f *finder) next(off int) int {
	if f.from >= 0 && off >= f.from && (f.at < 0 || f.at >= off) {
		f.from = off
		return f.at
	}
	f.from = off
	f.at = strings.Index(f.doc[off:], f.pat)
	if f.at >= 0 {
		f.at += off
	}
	return f.at
}

// closers finds the closer of a placeholder: the first "]]" (or "⟧") on
// the placeholder's line that is outside double quotes, counted from the
// placeholder's body. For each line it lists once where the quotes and the
// closers are, and where each closer's quotes are even or odd, so that a
// placeholder costs a binary search however many others share its line
// (searching the line from each one was quadratic).
type closers struct {
	doc   string
	li    *lineIndex
	line  int // the line listed, or -1
	start int // its first byte
	end   int // the offset of its "\n", or len(doc)
	// quotes are the offsets of '"' on the line.
	quotes []int
	// brackets[p] and lenticular[p] are the offsets of "]]" and "⟧" on
	// the line with an even (p = 0) or odd (p = 1) number of quotes before
	// them on the line.
	brackets, lenticular [2][]int
}

func newClosers(doc string, li *lineIndex) *closers {
	return &closers{doc: doc, li: li, line: -1}
}

// parity is the number of quotes on the listed line before off, mod 2.
func (c *closers) parity(off int) int {
	return sort.SearchInts(c.quotes, off) % 2
}

func (c *closers) list(l int) {
	c.line, c.start = l, c.li.starts[l]
	c.end = len(c.doc)
	if l+1 < len(c.li.starts) {
		c.end = c.li.starts[l+1] - 1
	}
	c.quotes = c.quotes[:0]
	for p := range 2 {
		c.brackets[p], c.lenticular[p] = c.brackets[p][:0], c.lenticular[p][:0]
	}
	text := c.doc[c.start:c.end]
	for j := 0; j < len(text); j++ {
		switch {
		case text[j] == '"':
			c.quotes = append(c.quotes, c.start+j)
		case strings.HasPrefix(text[j:], "]]"):
			p := len(c.quotes) % 2
			c.brackets[p] = append(c.brackets[p], c.start+j)
		case strings.HasPrefix(text[j:], "⟧"):
			p := len(c.quotes) % 2
			c.lenticular[p] = append(c.lenticular[p], c.start+j)
		}
	}
}

// find returns the offset of the closer of the placeholder whose body
// starts at body, or -1 and whether the line ends inside a quote.
func (c *closers) find(body int, closer string) (end int, inQuote bool) {
	if l := c.li.line(body); l != c.line {
		c.list(l)
	}
	p := c.parity(body)
	at := c.brackets[p]
	if closer == "⟧" {
		at = c.lenticular[p]
	}
	if i := sort.SearchInts(at, body); i < len(at) {
		return at[i], false
	}
	return -1, c.parity(c.end) != p
}

var (
	mapLineRe = regexp.MustCompile(`(?m)^[ \t]*\[(\d+)\]:[ \t]*cite:([^\n]*?)[ \t]*$`)
	// numberRe matches a number marker at the start of the text only: a
	// search through the rest of the document at each "[" was quadratic.
	numberRe  = regexp.MustCompile(`^\[(\d+(?:[ \t]*(?:[,;]|[-–—])[ \t]*\d+)*)\]`)
	numberSep = regexp.MustCompile(`[,;]`)
)

// Parse finds the citations of a Markdown or plain-text document. Text
// inside code spans (`…`) and fenced code blocks (``` or ~~~) is left
// alone. All malformed placeholders are reported together in an ErrorList
// of *SyntaxError (at most MaxSyntaxErrors of them, then a count of the
// rest); the citations found are returned with it. Parse takes time
// linear in the length of doc, whatever its lines hold.
func Parse(doc string) (*Document, error) {
	return ParseContext(context.Background(), doc, Limits{})
}

// ctxCheckBytes is how many bytes ParseContext scans between looks at its
// context.
const ctxCheckBytes = 1 << 16

// ParseContext is Parse within limits; it stops with ctx's error when ctx
// ends, and with a *LimitError (no ErrorList) as soon as doc is found over
// a limit.
func ParseContext(ctx context.Context, doc string, limits Limits) (*Document, error) {
	d := &Document{Text: doc, Numbers: map[int][]Item{}, bibStart: -1, bibEnd: -1}
	p := &parser{doc: doc, li: newLineIndex(doc), limits: limits}
	p.closers = newClosers(doc, p.li)
	p.arrow, p.anchorClose, p.anchorOpen = newFinder(doc, "-->"), newFinder(doc, anchorClose), newFinder(doc, anchorOpen)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	code := codeRanges(doc)
	inCode := func(off int) (int, bool) {
		r, ok := code.find(off)
		return r[1], ok
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
		line, col := p.li.pos(m[4])
		items, perr := p.parseList(doc[m[4]:m[5]], m[4])
		if err != nil || perr != nil {
			if perr == nil {
				perr = &SyntaxError{Line: line, Col: col, Msg: "bad number"}
			}
			p.fail(perr)
			continue
		}
		if err := p.countQuotes(items); err != nil {
			return nil, err
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
	drop := ranges(d.drop)
	add := func(c Citation, err error) error {
		if err != nil {
			return p.fail(err)
		}
		if err := p.count(c); err != nil {
			return err
		}
		d.Citations = append(d.Citations, c)
		return nil
	}
	check := 0
	for i := 0; i < len(doc); {
		if i >= check {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			check = i + ctxCheckBytes
		}
		if end, c := inCode(i); c {
			i = end
			continue
		}
		if i == d.bibStart {
			i = d.bibEnd
			continue
		}
		if r, ok := drop.find(i); ok {
			i = r[1]
			continue
		}
		rest := doc[i:]
		var err error
		switch {
		case hasPrefixFold(rest, "[[cite:"):
			var c Citation
			var perr error
			c, i, perr = p.parsePlaceholder(i, len("[[cite:"), "]]")
			err = add(c, perr)
		case hasPrefixFold(rest, "⟦cite:"):
			var c Citation
			var perr error
			c, i, perr = p.parsePlaceholder(i, len("⟦cite:"), "⟧")
			err = add(c, perr)
		case strings.HasPrefix(rest, anchorOpen):
			var c Citation
			var perr error
			c, i, perr = p.parseAnchor(i)
			err = add(c, perr)
		case rest[0] == '[' && len(d.Numbers) > 0:
			if c, next, ok, perr := p.parseNumber(i, d.Numbers); ok {
				err = add(c, perr)
				i = next
			} else {
				i++
			}
		default:
			_, size := utf8.DecodeRuneInString(rest)
			i += size
		}
		if err != nil {
			return nil, err
		}
	}
	if len(p.errs) > 0 {
		if n := p.nerrs - len(p.errs); n > 0 {
			p.errs = append(p.errs, fmt.Errorf("%w: %d more malformed placeholders not listed", ErrSyntax, n))
		}
		return d, p.errs
	}
	return d, nil
}

// parser is the state of one ParseContext.
type parser struct {
	doc     string
	li      *lineIndex
	limits  Limits
	closers *closers
	// Finders of "-->", anchorClose and anchorOpen, for anchors.
	arrow, anchorClose, anchorOpen *finder
	errs                           ErrorList // the first MaxSyntaxErrors
	nerrs                          int       // all of them
	cited                          int       // cited IDs so far
	quotes                         int       // quotes so far
}

// fail records a syntax error; a *LimitError is returned to stop the parse.
func (p *parser) fail(err error) error {
	var le *LimitError
	if errors.As(err, &le) {
		return err
	}
	p.nerrs++
	if len(p.errs) < MaxSyntaxErrors {
		p.errs = append(p.errs, err)
	}
	return nil
}

// count adds c's IDs and quotes to those of the document, failing over a
// limit.
func (p *parser) count(c Citation) error {
	for _, it := range c.Items {
		if err := p.countID(it.Line, it.Col); err != nil {
			return err
		}
		if it.Secondary != "" {
			if err := p.countID(it.SecLine, it.SecCol); err != nil {
				return err
			}
		}
	}
	if c.Kind == KindNumber {
		return nil // its quotes are its map line's, counted there
	}
	return p.countQuotes(c.Items)
}

// countQuotes adds the quotes of items to those of the document, failing
// over a limit.
func (p *parser) countQuotes(items []Item) error {
	for _, it := range items {
		if it.Quote == "" {
			continue
		}
		p.quotes++
		if max := p.limits.MaxQuotes; max > 0 && p.quotes > max {
			return &LimitError{What: "quotes in one document", Limit: max, Line: it.Line, Col: it.Col}
		}
		if max := p.limits.MaxQuoteChars; max > 0 && utf8.RuneCountInString(it.Quote) > max {
			return &LimitError{What: "characters in one quote", Limit: max, Line: it.Line, Col: it.Col}
		}
	}
	return nil
}

func (p *parser) countID(line, col int) error {
	p.cited++
	if max := p.limits.MaxCitations; max > 0 && p.cited > max {
		return &LimitError{What: "cited IDs in one document", Limit: max, Line: line, Col: col}
	}
	return nil
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// parsePlaceholder parses the placeholder starting at doc[start]; the
// opener is open bytes long.
func (p *parser) parsePlaceholder(start, open int, closer string) (Citation, int, error) {
	doc := p.doc
	line, col := p.li.pos(start)
	body := start + open
	// The closer is the first one outside a quote.
	end, inQuote := p.closers.find(body, closer)
	if end < 0 {
		next := start + open
		if inQuote {
			return Citation{}, next, &SyntaxError{Line: line, Col: col, Msg: "unclosed placeholder: the quote is not closed before the end of the line"}
		}
		return Citation{}, next, &SyntaxError{Line: line, Col: col, Msg: fmt.Sprintf("unclosed placeholder: no %q before the end of the line", closer)}
	}
	items, err := p.parseList(doc[body:end], body)
	next := end + len(closer)
	if err != nil {
		return Citation{}, next, err
	}
	return Citation{Items: items, Start: start, End: next, Line: line, Col: col, Kind: KindPlaceholder, Raw: doc[start:next]}, next, nil
}

// parseAnchor parses "<!--cite:LIST-->rendered<!--/cite-->".
func (p *parser) parseAnchor(start int) (Citation, int, error) {
	doc := p.doc
	line, col := p.li.pos(start)
	body := start + len(anchorOpen)
	j := p.arrow.next(body)
	if j < 0 || strings.IndexByte(doc[body:j], '\n') >= 0 {
		return Citation{}, body, &SyntaxError{Line: line, Col: col, Msg: `unclosed citation anchor: no "-->"`}
	}
	items, err := p.parseList(doc[body:j], body)
	if err != nil {
		return Citation{}, j + 3, err
	}
	after := j + 3
	k := p.anchorClose.next(after)
	if o := p.anchorOpen.next(after); k < 0 || (o >= 0 && o+len(anchorOpen) <= k) {
		return Citation{}, after, &SyntaxError{Line: line, Col: col, Msg: "citation anchor without its closing " + anchorClose}
	}
	end := k + len(anchorClose)
	return Citation{Items: items, Start: start, End: end, Line: line, Col: col, Kind: KindAnchor, Raw: doc[start:end]}, end, nil
}

// parseNumber parses a bare "[1]", "[1, 3]", "[2–4]" marker of a draft.
// ok is false when doc[start:] is not such a marker.
func (p *parser) parseNumber(start int, numbers map[int][]Item) (Citation, int, bool, error) {
	doc := p.doc
	m := numberRe.FindStringSubmatchIndex(doc[start:])
	if m == nil {
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
	line, col := p.li.pos(start)
	var nums []int
	for _, part := range numberSep.Split(doc[start+1:end-1], -1) {
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
		// Ranges multiply what a short marker cites: count as they come.
		if max := p.limits.MaxCitations; max > 0 && p.cited+len(nums) > max {
			return Citation{}, end, true, &LimitError{What: "cited IDs in one document", Limit: max, Line: line, Col: col}
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
		if max := p.limits.MaxCitations; max > 0 && p.cited+len(items) > max {
			return Citation{}, end, true, &LimitError{What: "cited IDs in one document", Limit: max, Line: line, Col: col}
		}
	}
	return Citation{Items: items, Start: start, End: end, Line: line, Col: col, Kind: KindNumber, Raw: doc[start:end]}, end, true, nil
}

// parseList parses the item list s, which starts at doc offset off.
func (p *parser) parseList(s string, off int) ([]Item, error) {
	li := p.li
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
// spans, sorted.
func codeRanges(doc string) ranges {
	var out ranges
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
	// exactly n backticks. The runs are listed first, with the runs of
	// each length in order, so that finding the closing run is a step
	// along its length's list rather than a scan of the rest of the text.
	for _, ts := range textSpans {
		s := doc[ts[0]:ts[1]]
		type run struct{ at, n int }
		var runs []run
		byLen := map[int][]int{} // run length → indexes in runs
		for i := 0; i < len(s); {
			if s[i] != '`' {
				i++
				continue
			}
			n := 0
			for i+n < len(s) && s[i+n] == '`' {
				n++
			}
			byLen[n] = append(byLen[n], len(runs))
			runs = append(runs, run{i, n})
			i += n
		}
		next := map[int]int{} // run length → position in byLen[n] of the next candidate
		i := 0                // text before i is done
		for k, r := range runs {
			if r.at < i {
				continue
			}
			list := byLen[r.n]
			j := next[r.n]
			for j < len(list) && list[j] <= k {
				j++
			}
			next[r.n] = j
			if j == len(list) {
				i = r.at + r.n
				continue
			}
			closing := runs[list[j]]
			end := closing.at + closing.n
			out = append(out, [2]int{ts[0] + r.at, ts[0] + end})
			i = end
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
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
