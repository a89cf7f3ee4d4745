package corpus

// BibTeX input.
//
// The reader accepts BibTeX as real files are written: entries
// @type{key, field = value, …} and @type(key, …) with case-insensitive type
// and field names and any whitespace (including TABs and line breaks)
// between tokens; values in {braces} (nested to any depth), "quotes"
// (braces inside allowed), bare numbers, @string macro names and the
// month macros jan … dec, joined with #; @string, @preamble and @comment
// (both @comment{…} and @comment to the end of the line). Text outside
// entries is a comment. Values are converted from LaTeX and HTML to plain
// Unicode text (LaTeXToUnicode). A bad entry is reported as a *ParseError
// and reading resumes at the next line that starts with "@".

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
)

// BibTeXConversion names the version of the BibTeX reading and conversion:
// change it whenever a .bib file is read into different records or items
// than before, so that ingest re-reads .bib files it has seen (their
// fingerprint includes it). 2026-11-28: xdata, cascading crossref, the
// children of a parent with an undefined macro, Latin-1 files, spaces
// before a command's argument. 2026-11-29: ACM exports of small
// capitals ("<b>A</b>Ssessing" → "Assessing").
const BibTeXConversion = "2026-11-29"

// readCheckEvery is how many records a reader handles between two checks of
// its context.
const readCheckEvery = 1000

// ReadBibTeX reads BibTeX from r, which it reads into memory at once, and
// calls emit for each good entry and onErr for each bad one; name is the
// file name used in records and errors.
//
// Each emitted Record has Item = the entry as a CSL-JSON item, Paper =
// PaperFromItem(Item) with Paper.ID = PaperID(Paper), Key = the citation
// key, File = name, Line = the 1-based line of the entry's "@", and Kind =
// the entry type lower-cased ("inproceedings").
//
// The item is what pandoc makes of the entry (`pandoc -f bibtex -t
// csljson`), every standard BibTeX and BibLaTeX field mapped to its CSL
// variable, titles of English entries in sentence case keeping {protected}
// words, with the differences listed in docs/bibtex.md; see also bibcsl.go.
// In short, types: article → article-journal; inproceedings, conference →
// paper-conference; book, proceedings, collection, manual → book; inbook,
// incollection → chapter; phdthesis, mastersthesis, thesis → thesis (genre
// "PhD thesis", "Master’s thesis" unless type says otherwise); techreport,
// report → report; unpublished → manuscript (speech with an event);
// dataset, software, patent, … → theirs; misc, online, electronic, www with
// an arXiv id or eprint → article; other online, electronic, www →
// webpage; misc with a URL (or a URL in howpublished, "\url{…}", when there
// is no url field) but no venue, DOI or arXiv id → webpage; any other →
// article. The DOI is the doi field as written, else a DOI in the url
// (https://doi.org/…, https://dl.acm.org/doi/…); the arXiv id (eprint with
// archivePrefix or eprinttype arXiv or neither, the arxiv or arxivid
// fields, an arxiv.org url, "arXiv:…" in the journal, DBLP's journal CoRR
// with volume abs/…) goes in the non-standard "arxiv" key. Text goes
// through the LaTeX conversion of LaTeXToUnicode, keeping \emph, \textbf,
// \textsc, \textsuperscript, \textsubscript as CSL markup; HTML entities
// (&amp; &#8217; …) are decoded and HTML tags dropped, but for <i> <em> <b>
// <strong> <sup> <sub>, kept as CSL markup, since ACM Digital Library
// exports carry them. A repeated field counts once (the first).
//
// An entry with a crossref field inherits the fields of the entry of the
// same file that it names, before or after it (inheritCrossref: BibTeX's
// and biblatex's data inheritance, the parent's DOI and URL excepted); a
// parent with a crossref of its own takes its parent's fields first
// (biblatex's cascading crossref). The records still come in file order.
// A crossref that names no entry of the file, the entry itself or a chain
// leading back gives the record a Warning (ErrCrossref); a parent that
// uses an undefined macro is an error, not stored, but its children take
// its other fields, with a Warning.
//
// An entry with an xdata field (biblatex) takes the fields it lacks from
// the @xdata entries of the same file that the field names, in the order
// named, an @xdata entry's own xdata field resolved first (inheritXData);
// xdata is resolved before crossref, so a crossref parent passes on what
// it took. A name that is no @xdata entry of the file, a circular chain
// and biber's granular references inside a field (author =
// {xdata=key-author-1}) are not inherited or resolved, and an @xdata
// entry that uses an undefined macro gives only its other fields: each
// gives the record a Warning (ErrXData).
//
// Names (author, editor, translator, bookauthor, director) are split on
// "and" outside braces (any case); each is "First von Last", "von Last,
// First" or "von Last, Jr, First" (particles in dropping-particle, Jr in
// suffix, "d’" or "al-" elided onto the family name in
// non-dropping-particle); a name wholly in braces ({World Health
// Organization}) is a literal; "others" is dropped.
//
// Errors, reported as ParseError{File: name, Line: the entry's line} and
// wrapping ErrSyntax, ErrUndefinedMacro or ErrNoTitle: an entry or a value
// that is not terminated (at the end of the file, or where a line starting
// with "@type{" begins the next entry), a missing citation key, a field
// without "=", a missing "," between fields, an undefined @string macro
// in a field the conversion reads (the entry is skipped, not kept with the
// macro name; in a field it does not read, the macro is ignored), an entry
// without a title. After an error, reading resumes at the next line starting with
// "@", so every other entry is still read.
//
// An @string value may be at most 64 KiB and a "#"-concatenated field
// value at most 4 MiB (ErrSyntax beyond), so that a small file cannot
// build huge strings. A file that is not UTF-8 and holds no UTF-8 character
// is read as Windows-1252 (Latin-1), and a record gets a Warning
// (ErrLatin1) for each of its lines with such a character; in other files
// invalid UTF-8 is replaced by U+FFFD, with a Warning (ErrInvalidUTF8) for
// each line concerned (decodeBibText; in text between entries nothing is
// stored, so nothing is said). So
// does a record whose doi field is not a valid DOI (ErrInvalidDOI), whose
// arXiv id is not one (ErrInvalidArXiv) or whose key is not a safe ID
// (ErrUnsafeKey, see checkRecord). emit's
// error stops reading and is returned as is; read errors and a cancelled
// ctx (checked every 1000 entries) are returned wrapped.
func ReadBibTeX(ctx context.Context, r io.Reader, name string, emit func(Record) error, onErr func(*ParseError)) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	return readBibTeX(ctx, data, name, nil, nil, emit, onErr)
}

// readBibTeX reads the BibTeX in data. shared are @string macros defined
// outside the file (ReadOptions.Macros); the file's own definitions
// replace them from where they stand. conflicts are the shared names the
// files define differently (ReadOptions.Conflicts).
func readBibTeX(ctx context.Context, data []byte, name string, shared Macros, conflicts map[string]MacroConflict, emit func(Record) error, onErr func(*ParseError)) error {
	data, bad, badErr := decodeBibText(data)
	p := bibParser{
		ctx: ctx, data: data, name: name, emit: emit, onErr: onErr,
		lnLine: 1, macros: map[string]string{}, shared: shared, conflicts: conflicts, badLines: bad, badErr: badErr,
		crossref: inheritFieldRe.Match(data),
	}
	if err := p.parse(); err != nil {
		return err
	}
	return p.resolveCrossrefs()
}

// decodeBibText returns the text of a BibTeX file as UTF-8, without a
// byte order mark, the lines that were not UTF-8 and what was done to them
// (the Warning's cause). A file that is not UTF-8 and holds no multi-byte
// UTF-8 sequence at all is an 8-bit file (Latin-1, as older .bib files
// are, e.g. jurabib's German examples): it is read as Windows-1252 (a
// superset of Latin-1's printable characters), ErrLatin1. Otherwise, a
// UTF-8 file with some bad bytes, those bytes become U+FFFD,
// ErrInvalidUTF8.
func decodeBibText(data []byte) ([]byte, []int, error) {
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	if utf8.Valid(data) {
		return data, nil, nil
	}
	bad := invalidUTF8Lines(data, 1)
	if !hasMultibyteUTF8(data) {
		if text, err := charmap.Windows1252.NewDecoder().Bytes(data); err == nil {
			return text, bad, ErrLatin1
		}
	}
	return bytes.ToValidUTF8(data, []byte("\uFFFD")), bad, ErrInvalidUTF8
}

// hasMultibyteUTF8 reports whether data holds a valid UTF-8 sequence of
// two bytes or more.
func hasMultibyteUTF8(data []byte) bool {
	for i := 0; i < len(data); {
		if data[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRune(data[i:])
		if r != utf8.RuneError || n > 1 {
			return true
		}
		i += n
	}
	return false
}

// nonReferenceTypes are the entry types (lower case) that hold data for
// the bibliography tools, not a work: what each is.
var nonReferenceTypes = map[string]string{
	"set":            "a biblatex entry set (its members are read as entries of their own)",
	"xdata":          "biblatex field data for other entries (given to the entries whose xdata field names it)",
	"ieeetranbstctl": "IEEEtran.bst's style options",
	"control":        "a bibliography style's control entry (REVTeX)",
}

// bibMonths are the predefined month macros.
var bibMonths = map[string]string{
	"jan": "January", "feb": "February", "mar": "March", "apr": "April",
	"may": "May", "jun": "June", "jul": "July", "aug": "August",
	"sep": "September", "oct": "October", "nov": "November", "dec": "December",
}

type bibEntry struct {
	typ, key  string
	line      int
	fields    []bibField // in order; the first of a repeated field
	undefined string     // first undefined macro used, if any
	undefIn   string     // the field it was used in
	conflicts []string   // shared macros used that the files define differently, each once
	// undefFields are the fields (read ones) whose value used an
	// undefined macro; undefHits counts such uses while reading.
	undefFields []string
	undefHits   int
}

type bibParser struct {
	ctx    context.Context
	data   []byte
	name   string
	emit   func(Record) error
	onErr  func(*ParseError)
	pos    int
	lnPos  int // lineAt cache: data[:lnPos] holds lnLine-1 newlines
	lnLine int
	macros map[string]string // lower-cased @string name → raw value
	shared Macros            // macros of the other files read with this one, looked up after macros
	// conflicts are the names in shared that the files read together
	// define differently (ReadOptions.Conflicts).
	conflicts map[string]MacroConflict
	// derived are the file's own macros whose value used such names:
	// macro → the conflicting names, which its users are warned of.
	derived map[string][]string
	seen    int    // entries handled, for context checks
	buf     []byte // scratch for concatenated values
	e       bibEntry
	// badLines are the lines that were not UTF-8, ascending, not yet
	// reported; badErr is what was done to them (decodeBibText).
	badLines []int
	badErr   error
	itemBuf  []byte // scratch for building items
	// macrosOnly: only @string definitions are wanted (FileMacros):
	// entries are parsed (to find where they end) but not converted, and
	// nothing is reported.
	macrosOnly bool
	// crossref: the file has crossref or xdata fields, so entries are
	// kept (pending, by lower-cased key in keys; @xdata entries in xdata)
	// and turned into records when the whole file has been read
	// (resolveCrossrefs).
	crossref bool
	pending  []pendingEntry
	keys     map[string]int
	xdata    map[string]*xdataEntry
}

// xdataEntry is an @xdata entry kept for the entries that name it, and
// how far its own xdata field is resolved.
type xdataEntry struct {
	e     bibEntry
	state int        // xdataNew, xdataActive (being resolved) or xdataDone
	warns []*Warning // from resolving its own xdata field, passed to its users
}

const (
	xdataNew = iota
	xdataActive
	xdataDone
)

// pendingEntry is an entry kept until the end of its file, and the line
// where it ends.
type pendingEntry struct {
	e   bibEntry
	end int
	// skipped: the entry is an error (an undefined macro), reported
	// already; it is kept only for the entries whose crossref names it.
	skipped bool
}

// inheritFieldRe finds a crossref or xdata field anywhere in a file.
var inheritFieldRe = regexp.MustCompile(`(?i)\b(crossref|xdata)\s*=`)

// lineAt returns the 1-based line of data[off]. Offsets are mostly asked
// in increasing order, so it counts newlines from the previous answer.
func (p *bibParser) lineAt(off int) int {
	if off < p.lnPos {
		p.lnPos, p.lnLine = 0, 1
	}
	p.lnLine += bytes.Count(p.data[p.lnPos:off], []byte{'\n'})
	p.lnPos = off
	return p.lnLine
}

func (p *bibParser) report(line int, err error) {
	if p.onErr != nil {
		p.onErr(&ParseError{File: p.name, Line: line, Err: err})
	}
}

// tick counts one entry and checks the context every readCheckEvery entries.
func (p *bibParser) tick() error {
	p.seen++
	if p.seen%readCheckEvery == 0 {
		if err := p.ctx.Err(); err != nil {
			return fmt.Errorf("read %s: %w", p.name, err)
		}
	}
	return nil
}

func (p *bibParser) parse() error {
	if err := p.ctx.Err(); err != nil {
		return fmt.Errorf("read %s: %w", p.name, err)
	}
	data := p.data
	for p.pos < len(data) {
		i := bytes.IndexByte(data[p.pos:], '@')
		if i < 0 {
			break
		}
		at := p.pos + i
		j := at + 1
		for j < len(data) && isTypeByte(data[j]) {
			j++
		}
		p.pos = j
		if j == at+1 {
			continue // a lone "@" in comment text
		}
		typ := lowerASCII(data[at+1 : j])
		k := p.skipWS(j)
		if typ == "comment" {
			p.pos = p.skipComment(k)
			continue
		}
		if k >= len(data) || (data[k] != '{' && data[k] != '(') {
			if p.atLineStart(at) {
				if err := p.tick(); err != nil {
					return err
				}
				p.report(p.lineAt(at), fmt.Errorf("%w: @%s without '{'", ErrSyntax, typ))
				p.pos = p.resync(j)
			}
			continue // else "@" in comment text, e.g. an e-mail address
		}
		var err error
		switch typ {
		case "preamble":
			p.preamble(at, k)
		case "string":
			p.stringDef(at, k)
		default:
			if err = p.tick(); err != nil {
				return err
			}
			err = p.entry(at, typ, k)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// fail reports an error in the entry starting at line and resumes reading
// at the next line starting with "@" at or after pos.
func (p *bibParser) fail(line, pos int, err error) {
	p.report(line, err)
	p.pos = p.resync(pos)
}

// resync returns the offset of the first "@" that is the first non-blank
// character of its line, at or after pos (len(data) if none).
func (p *bibParser) resync(pos int) int {
	data := p.data
	for pos < len(data) {
		if p.atLineStart(pos) {
			q := pos
			for q < len(data) && (data[q] == ' ' || data[q] == '\t') {
				q++
			}
			if q < len(data) && data[q] == '@' {
				return q
			}
		}
		nl := bytes.IndexByte(data[pos:], '\n')
		if nl < 0 {
			return len(data)
		}
		pos += nl + 1
	}
	return len(data)
}

// atLineStart reports whether only blanks precede data[pos] on its line.
func (p *bibParser) atLineStart(pos int) bool {
	for pos > 0 {
		switch p.data[pos-1] {
		case ' ', '\t':
			pos--
		case '\n':
			return true
		default:
			return false
		}
	}
	return true
}

// entryStartAt reports whether an entry "@type{" or "@type(" begins at
// data[pos] (which must be "@").
func (p *bibParser) entryStartAt(pos int) bool {
	data := p.data
	j := pos + 1
	for j < len(data) && isTypeByte(data[j]) {
		j++
	}
	if j == pos+1 {
		return false
	}
	for j < len(data) && (data[j] == ' ' || data[j] == '\t') {
		j++
	}
	return j < len(data) && (data[j] == '{' || data[j] == '(')
}

func (p *bibParser) skipWS(i int) int {
	for i < len(p.data) && isSpaceByte(p.data[i]) {
		i++
	}
	return i
}

// skipComment skips "@comment{…}" (balanced braces) or, in any other
// form or when the braces do not balance before a line that starts with
// "@type{", the rest of the line.
func (p *bibParser) skipComment(k int) int {
	if k < len(p.data) && p.data[k] == '{' {
		if end, _, err := p.braced(k); err == nil {
			return end + 1
		}
	}
	if nl := bytes.IndexByte(p.data[k:], '\n'); nl >= 0 {
		return k + nl + 1
	}
	return len(p.data)
}

// preamble skips "@preamble{…}" or "@preamble(…)".
func (p *bibParser) preamble(at, k int) {
	data := p.data
	if data[k] == '{' {
		end, next, err := p.braced(k)
		if err != nil {
			p.fail(p.lineAt(at), next, fmt.Errorf("%w: unterminated @preamble", ErrSyntax))
			return
		}
		p.pos = end + 1
		return
	}
	depth := 0
	for i := k + 1; i < len(data); i++ {
		switch data[i] {
		case '{':
			depth++
		case '}':
			depth--
		case ')':
			if depth <= 0 {
				p.pos = i + 1
				return
			}
		case '\n':
			if i+1 < len(data) && data[i+1] == '@' && p.entryStartAt(i+1) {
				p.fail(p.lineAt(at), i+1, fmt.Errorf("%w: unterminated @preamble", ErrSyntax))
				return
			}
		}
	}
	p.fail(p.lineAt(at), len(data), fmt.Errorf("%w: unterminated @preamble", ErrSyntax))
}

// stringDef reads "@string{name = value, …}" and defines the macros.
func (p *bibParser) stringDef(at, k int) {
	data := p.data
	closer := closerOf(data[k])
	line := p.lineAt(at)
	pos := k + 1
	for {
		pos = p.skipWS(pos)
		if pos >= len(data) {
			p.fail(line, pos, fmt.Errorf("%w: unterminated @string", ErrSyntax))
			return
		}
		if data[pos] == closer {
			p.pos = pos + 1
			return
		}
		if data[pos] == ',' {
			pos++
			continue
		}
		ns := pos
		for pos < len(data) && isNameByte(data[pos]) {
			pos++
		}
		if pos == ns {
			p.fail(line, pos, fmt.Errorf("%w: unexpected %q in @string", ErrSyntax, data[pos]))
			return
		}
		nameB := data[ns:pos]
		name := lowerASCII(nameB)
		pos = p.skipWS(pos)
		if pos >= len(data) || data[pos] != '=' {
			p.fail(line, pos, fmt.Errorf("%w: @string %q without '='", ErrSyntax, name))
			return
		}
		p.e.undefined, p.e.conflicts = "", nil
		val, next, err := p.value(p.skipWS(pos+1), true, nameB)
		// The conflicting shared macros the value used pass to the entries
		// that use this macro (p.e is the entry read before: not its).
		used := p.e.conflicts
		p.e.conflicts = nil
		if err != nil {
			p.fail(line, next, err)
			return
		}
		if p.e.undefined != "" {
			p.fail(line, next, fmt.Errorf("%w %q in @string %q", ErrUndefinedMacro, p.e.undefined, name))
			return
		}
		if len(val) > maxMacroLen {
			p.fail(line, next, fmt.Errorf("%w: @string %q longer than %d bytes", ErrSyntax, name, maxMacroLen))
			return
		}
		p.macros[name] = val
		if len(used) > 0 {
			if p.derived == nil {
				p.derived = map[string][]string{}
			}
			p.derived[name] = used
		} else {
			delete(p.derived, name)
		}
		pos = next
	}
}

// entry reads the entry "@typ{" whose "@" is at data[at] and whose "{" or
// "(" is at data[k]. It returns only emit's error.
func (p *bibParser) entry(at int, typ string, k int) error {
	data := p.data
	closer := closerOf(data[k])
	e := &p.e
	*e = bibEntry{typ: typ, line: p.lineAt(at), fields: e.fields[:0]}
	unterminated := func() error {
		return fmt.Errorf("%w: entry not terminated: missing closing %q", ErrSyntax, closer)
	}

	// Citation key: up to ",", blank or the closer; in "@type(" form a ")"
	// inside the key is allowed when it closes a "(" of the key.
	pos := p.skipWS(k + 1)
	ks, parens := pos, 0
key:
	for ; pos < len(data); pos++ {
		switch c := data[pos]; c {
		case ',', ' ', '\t', '\n', '\r', '{', '}', '"', '=', '#':
			break key
		case '(':
			parens++
		case ')':
			if closer == ')' {
				if parens == 0 {
					break key
				}
				parens--
			}
		}
	}
	e.key = string(data[ks:pos])
	pos = p.skipWS(pos)
	switch {
	case pos >= len(data):
		p.fail(e.line, pos, unterminated())
		return nil
	case data[pos] == '=' || (e.key == "" && (data[pos] == ',' || data[pos] == closer)):
		p.fail(e.line, pos, fmt.Errorf("%w: missing citation key", ErrSyntax))
		return nil
	case data[pos] == closer:
		pos++
		p.pos = pos
		return p.finish()
	case data[pos] == '@' && p.entryStartAt(pos):
		p.fail(e.line, pos, unterminated())
		return nil
	case data[pos] != ',':
		p.fail(e.line, pos, fmt.Errorf("%w: missing ',' after citation key %q", ErrSyntax, e.key))
		return nil
	}
	pos++

	for {
		pos = p.skipWS(pos)
		if pos >= len(data) {
			p.fail(e.line, pos, unterminated())
			return nil
		}
		c := data[pos]
		if c == closer {
			pos++
			break
		}
		if c == ',' {
			pos++
			continue
		}
		if c == '@' && p.entryStartAt(pos) {
			p.fail(e.line, pos, unterminated())
			return nil
		}
		ns := pos
		for pos < len(data) && isNameByte(data[pos]) {
			pos++
		}
		if pos == ns {
			p.fail(e.line, pos, fmt.Errorf("%w: unexpected %q where a field name should be", ErrSyntax, c))
			return nil
		}
		nameB := data[ns:pos]
		pos = p.skipWS(pos)
		if pos >= len(data) || data[pos] != '=' {
			p.fail(e.line, pos, fmt.Errorf("%w: field %q without '='", ErrSyntax, lowerASCII(nameB)))
			return nil
		}
		fname := mappedField(nameB)
		want := fname != "" && !e.hasField(fname)
		hits := e.undefHits
		val, next, err := p.value(p.skipWS(pos+1), want, nameB)
		if err != nil {
			p.fail(e.line, next, err)
			return nil
		}
		if e.undefined != "" && e.undefIn == "" {
			e.undefIn = lowerASCII(nameB)
		}
		if want {
			e.fields = append(e.fields, bibField{fname, val})
			if e.undefHits > hits {
				e.undefFields = append(e.undefFields, fname)
			}
		}
		pos = p.skipWS(next)
		if pos >= len(data) {
			p.fail(e.line, pos, unterminated())
			return nil
		}
		switch c := data[pos]; {
		case c == ',':
			pos++
			continue
		case c == closer:
			pos++
		case c == '@' && p.entryStartAt(pos):
			p.fail(e.line, pos, unterminated())
			return nil
		default:
			p.fail(e.line, pos, fmt.Errorf("%w: missing ',' after field %q", ErrSyntax, lowerASCII(nameB)))
			return nil
		}
		break
	}
	p.pos = pos
	return p.finish()
}

// finish turns the entry just read into a record and emits it, or reports
// why it cannot; in a file with crossref fields it keeps the entry for
// resolveCrossrefs.
func (p *bibParser) finish() error {
	if p.macrosOnly {
		return nil
	}
	e := &p.e
	if what, ok := nonReferenceTypes[e.typ]; ok {
		if e.typ == "xdata" && p.crossref {
			p.keepXData(e)
		}
		p.report(e.line, fmt.Errorf("%w: @%s is %s; skipped", ErrNotReference, e.typ, what))
		return nil
	}
	skipped := e.undefined != ""
	if skipped {
		p.report(e.line, fmt.Errorf("%w %q in field %q", ErrUndefinedMacro, e.undefined, e.undefIn))
		if !p.crossref {
			return nil
		}
		// Not stored, but kept for the entries whose crossref names it:
		// they take its other fields.
	}
	if p.crossref {
		kept := *e
		kept.fields = slices.Clone(e.fields)
		kept.conflicts = slices.Clone(e.conflicts)
		kept.undefFields = slices.Clone(e.undefFields)
		if p.keys == nil {
			p.keys = map[string]int{}
		}
		if k := strings.ToLower(e.key); k != "" {
			if _, dup := p.keys[k]; !dup {
				p.keys[k] = len(p.pending)
			}
		}
		p.pending = append(p.pending, pendingEntry{kept, p.lineAt(p.pos), skipped})
		return nil
	}
	end := 0
	if len(p.badLines) > 0 {
		end = p.lineAt(p.pos)
	}
	return p.record(e, end)
}

// keepXData keeps the @xdata entry e for the entries that name it (the
// first of a repeated key).
func (p *bibParser) keepXData(e *bibEntry) {
	k := strings.ToLower(e.key)
	if k == "" {
		return
	}
	if p.xdata == nil {
		p.xdata = map[string]*xdataEntry{}
	}
	if _, dup := p.xdata[k]; dup {
		return
	}
	kept := *e
	kept.fields = slices.Clone(e.fields)
	kept.conflicts = slices.Clone(e.conflicts)
	kept.undefFields = slices.Clone(e.undefFields)
	p.xdata[k] = &xdataEntry{e: kept}
}

// inheritXData adds to e the fields it lacks from the @xdata entries its
// xdata field names, in order, each resolved first (recursively), and
// returns the warnings: names that are no @xdata entry of the file,
// circular chains, @xdata entries with an undefined macro (each not
// inherited), and those of the @xdata entries e inherits from.
func (p *bibParser) inheritXData(e *bibEntry) []*Warning {
	var warns []*Warning
	warn := func(line int, format string, args ...any) {
		warns = append(warns, &Warning{File: p.name, Line: line, Err: fmt.Errorf("%w "+format, append([]any{ErrXData}, args...)...)})
	}
	for _, ref := range strings.Split(plainValue(e.get("xdata")), ",") {
		ref = strings.TrimSpace(ref)
		if ref == "" {
			continue
		}
		x, ok := p.xdata[strings.ToLower(ref)]
		if !ok {
			if j, other := p.keys[strings.ToLower(ref)]; other {
				o := &p.pending[j].e
				warn(e.line, "%q names the @%s entry of line %d, not an @xdata entry; nothing inherited from it", ref, o.typ, o.line)
			} else {
				warn(e.line, "%q: no @xdata entry with that key in this file; nothing inherited from it", ref)
			}
			continue
		}
		switch x.state {
		case xdataActive:
			warn(e.line, "%q is circular (the @xdata entry of line %d names, through its xdata field, the entry that names it); nothing inherited from it again", ref, x.e.line)
			continue
		case xdataNew:
			x.state = xdataActive
			x.warns = p.inheritXData(&x.e)
			x.state = xdataDone
		}
		for _, w := range x.warns {
			if !slices.Contains(warns, w) {
				warns = append(warns, w)
			}
		}
		if x.e.undefined != "" {
			warn(e.line, "%q: the @xdata entry of line %d uses the undefined @string macro %q in field %q; its other fields are inherited", ref, x.e.line, x.e.undefined, x.e.undefIn)
		}
		for _, f := range x.e.fields {
			if f.name != "xdata" && !e.hasField(f.name) && !slices.Contains(x.e.undefFields, f.name) {
				e.fields = append(e.fields, f)
			}
		}
		for _, c := range x.e.conflicts {
			if !slices.Contains(e.conflicts, c) {
				e.conflicts = append(e.conflicts, c)
			}
		}
	}
	return warns
}

// bibNameFields are the fields the conversion reads as name lists.
var bibNameFields = map[string]bool{"author": true, "bookauthor": true, "editor": true, "translator": true, "director": true}

// granularXData warns of biber's granular xdata references in e's fields
// (author = {Smith, Jo and xdata=key-author-2}): not resolved, such a name
// is left out (it reads as biblatex's extended name form without a
// family or given name) and any other field is read as written.
func (p *bibParser) granularXData(e *bibEntry) []*Warning {
	var warns []*Warning
	for _, f := range e.fields {
		if f.name == "xdata" || !strings.Contains(strings.ToLower(f.val), "xdata=") {
			continue
		}
		what := "the field is read as written"
		if bibNameFields[f.name] {
			what = "the name is left out"
		}
		warns = append(warns, &Warning{File: p.name, Line: e.line, Err: fmt.Errorf(
			"%w reference inside field %q (biber's granular xdata=KEY-FIELD) is not resolved; %s", ErrXData, f.name, what)})
	}
	return warns
}

// resolveCrossrefs gives each kept entry the fields it inherits from the
// @xdata entries its xdata field names (inheritXData), then from the
// entry its crossref names (inheritCrossref; that entry's own crossref
// first), and emits the records in file order. An entry whose crossref
// names no entry of the file, itself, or a chain leading back to it keeps
// the fields it has, with a Warning (ErrCrossref).
func (p *bibParser) resolveCrossrefs() error {
	warns := make([][]*Warning, len(p.pending))
	for i := range p.pending {
		e := &p.pending[i].e
		if e.hasField("xdata") {
			warns[i] = p.inheritXData(e)
		}
		warns[i] = append(warns[i], p.granularXData(e)...)
	}
	// Crossref: a parent whose own crossref names a grandparent takes
	// its fields first (cascading, as biber and pandoc do).
	state := make([]uint8, len(p.pending)) // 0 new, 1 resolving, 2 done
	var resolve func(i int)
	resolve = func(i int) {
		state[i] = 1
		defer func() { state[i] = 2 }()
		e := &p.pending[i].e
		ref := strings.TrimSpace(plainValue(e.get("crossref")))
		if ref == "" {
			return
		}
		warn := func(format string, args ...any) {
			warns[i] = append(warns[i], &Warning{File: p.name, Line: e.line,
				Err: fmt.Errorf("%w %q"+format, append([]any{ErrCrossref, ref}, args...)...)})
		}
		j, ok := p.keys[strings.ToLower(ref)]
		switch {
		case !ok:
			warn(": no entry with that key in this file; the entry keeps its own fields only")
		case j == i:
			warn(" names the entry itself; the entry keeps its own fields only")
		case state[j] == 1:
			warn(" is circular (the entry of line %d leads back to this one through crossref); nothing inherited from it", p.pending[j].e.line)
		default:
			if state[j] == 0 {
				resolve(j)
			}
			parent := &p.pending[j].e
			if p.pending[j].skipped {
				warn(": the entry of line %d is not stored (it uses the undefined @string macro %q in field %q); this entry takes its other fields",
					parent.line, parent.undefined, parent.undefIn)
			}
			inheritCrossref(e, parent)
		}
	}
	for i := range p.pending {
		if state[i] == 0 {
			resolve(i)
		}
	}
	for i := range p.pending {
		pe := &p.pending[i]
		if pe.skipped {
			continue // reported when read
		}
		if err := p.record(&pe.e, pe.end, warns[i]...); err != nil {
			return err
		}
	}
	return nil
}

// record turns entry e into a record and emits it with warns among its
// warnings, or reports why it cannot; end is the line where e ends
// (needed only when lines with invalid UTF-8 remain).
func (p *bibParser) record(e *bibEntry, end int, warns ...*Warning) error {
	p.itemBuf = e.csl(p.itemBuf)
	item := bytes.Clone(p.itemBuf)
	paper, err := PaperFromItem(item)
	if err != nil {
		p.report(e.line, fmt.Errorf("%w: %w", ErrBadField, err))
		return nil
	}
	if paper.Title == "" {
		p.report(e.line, ErrNoTitle)
		return nil
	}
	paper.ID = PaperID(paper)
	if p.emit == nil {
		return nil
	}
	rec := Record{Paper: paper, Item: item, Key: e.key, File: p.name, Line: e.line, Kind: e.typ}
	for len(p.badLines) > 0 && p.badLines[0] < e.line {
		p.badLines = p.badLines[1:] // in text between entries: nothing of it is stored
	}
	rec.Warnings = append(rec.Warnings, warns...)
	for _, name := range e.conflicts {
		rec.Warnings = append(rec.Warnings, &Warning{File: p.name, Line: e.line,
			Err: fmt.Errorf("%w %s", ErrMacroConflict, p.conflicts[name])})
	}
	if len(p.badLines) > 0 {
		for len(p.badLines) > 0 && p.badLines[0] <= end {
			rec.Warnings = append(rec.Warnings, &Warning{File: p.name, Line: p.badLines[0], Err: p.badErr})
			p.badLines = p.badLines[1:]
		}
	}
	arxiv := firstNonEmpty(e.get("arxiv"), e.get("arxivid"))
	if pre := strings.ToLower(plainValue(firstNonEmpty(e.get("archiveprefix"), e.get("eprinttype")))); pre == "arxiv" && arxiv == "" {
		arxiv = e.get("eprint")
	}
	checkRecord(&rec, plainValue(e.get("doi")), plainValue(arxiv))
	return p.emit(rec)
}

// value reads a field value starting at data[pos]: parts in braces, in
// quotes, numbers or macro names, joined by "#". It returns the raw value
// (inner braces and LaTeX kept; built only when want is set) and the
// offset after it. On error the offset is where to resynchronise. An
// undefined macro is recorded in p.e.undefined, not returned as an error.
func (p *bibParser) value(pos int, want bool, fieldName []byte) (string, int, error) {
	data := p.data
	field := func() string { return lowerASCII(fieldName) }
	var single string
	parts := 0
	p.buf = p.buf[:0]
	add := func(b []byte) {
		if !want {
			return
		}
		if parts == 0 {
			single = string(b)
		} else {
			if parts == 1 {
				p.buf = append(p.buf[:0], single...)
			}
			p.buf = append(p.buf, b...)
		}
		parts++
	}
	for {
		if pos >= len(data) {
			return "", pos, fmt.Errorf("%w: entry not terminated: field %q has no value", ErrSyntax, field())
		}
		switch c := data[pos]; {
		case c == '{':
			end, next, err := p.braced(pos)
			if err != nil {
				return "", next, fmt.Errorf("%w: unterminated {value} of field %q", ErrSyntax, field())
			}
			add(data[pos+1 : end])
			pos = end + 1
		case c == '"':
			end, next, err := p.quoted(pos)
			if err != nil {
				return "", next, fmt.Errorf("%w: field %q: %w", ErrSyntax, field(), err)
			}
			add(data[pos+1 : end])
			pos = end + 1
		case isNameByte(c):
			ns := pos
			for pos < len(data) && isNameByte(data[pos]) {
				pos++
			}
			tok := data[ns:pos]
			if c >= '0' && c <= '9' {
				add(tok) // a number (or anything starting with a digit)
				break
			}
			name := lowerASCII(tok)
			v, ok := p.macros[name]
			if ok && want {
				for _, c := range p.derived[name] {
					if !slices.Contains(p.e.conflicts, c) {
						p.e.conflicts = append(p.e.conflicts, c)
					}
				}
			}
			if !ok {
				v, ok = p.shared[name]
				if _, c := p.conflicts[name]; ok && c && want && !slices.Contains(p.e.conflicts, name) {
					p.e.conflicts = append(p.e.conflicts, name)
				}
			}
			if !ok {
				v, ok = bibMonths[name]
			}
			if !ok {
				// Only in a field the conversion reads: an undefined macro
				// in one it ignores (Beebe's acknowledgement = ack-bnb)
				// loses nothing.
				if want {
					if p.e.undefined == "" {
						p.e.undefined = name
					}
					p.e.undefHits++
				}
				break
			}
			add([]byte(v))
		default:
			return "", pos, fmt.Errorf("%w: field %q has no value", ErrSyntax, field())
		}
		if len(single)+len(p.buf) > maxValueLen {
			return "", pos, fmt.Errorf("%w: value of field %q longer than %d bytes", ErrSyntax, field(), maxValueLen)
		}
		q := p.skipWS(pos)
		if q < len(data) && data[q] == '#' {
			pos = p.skipWS(q + 1)
			continue
		}
		if parts > 1 {
			return string(p.buf), pos, nil
		}
		return single, pos, nil
	}
}

// Limits on values built from macros, so that a small file cannot make
// the reader build huge strings (@string{a = a # a} repeated).
const (
	maxMacroLen = 64 << 10 // bytes of one @string value
	maxValueLen = 4 << 20  // bytes of one field value made by "#" concatenation
)

var errUnterminated = errors.New("unterminated")

// braced finds the "}" matching the "{" at data[pos]. A line that starts with "@type{" ends the search: the value was not
// terminated and the next entry begins there (this also keeps reading
// linear in the file size). On error, next is where to resynchronise.
func (p *bibParser) braced(pos int) (end, next int, err error) {
	data := p.data
	depth := 0
	for i := pos; i < len(data); i++ {
		switch data[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i, i + 1, nil
			}
		case '\n':
			if i+1 < len(data) && data[i+1] == '@' && p.entryStartAt(i+1) {
				return 0, i + 1, errUnterminated
			}
		}
	}
	return 0, len(data), errUnterminated
}

// quoted finds the closing quote of the quoted value at data[pos]. Braces
// inside must balance; a quote inside braces or after a backslash (\"o)
// does not close the value.
func (p *bibParser) quoted(pos int) (end, next int, err error) {
	data := p.data
	depth := 0
	for i := pos + 1; i < len(data); i++ {
		switch data[i] {
		case '\\':
			if i+1 < len(data) && (data[i+1] == '"' || data[i+1] == '\\') {
				i++
			}
		case '{':
			depth++
		case '}':
			depth--
			if depth < 0 {
				return 0, i, errors.New("unterminated quoted value: a '}' comes before the closing '\"'")
			}
		case '"':
			if depth == 0 {
				return i, i + 1, nil
			}
		case '\n':
			if i+1 < len(data) && data[i+1] == '@' && p.entryStartAt(i+1) {
				return 0, i + 1, errors.New("unterminated quoted value")
			}
		}
	}
	return 0, len(data), errors.New("unterminated quoted value")
}

func closerOf(open byte) byte {
	if open == '(' {
		return ')'
	}
	return '}'
}

// isTypeByte reports whether c may appear in an entry type.
func isTypeByte(c byte) bool {
	return isLetter(c) || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// isNameByte reports whether c may appear in a field name, macro name or
// bare value: anything printable but BibTeX's special characters.
func isNameByte(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\v', '\f', '"', '#', '%', '\'', '(', ')', ',', '=', '{', '}', '@':
		return false
	}
	return c > ' ' && c != 0x7f
}

// lowerASCII returns b as a string with ASCII letters lower-cased.
func lowerASCII(b []byte) string {
	for _, c := range b {
		if 'A' <= c && c <= 'Z' {
			return strings.ToLower(string(b))
		}
	}
	return string(b)
}

// arxiv finds the entry's arXiv id.
func (e *bibEntry) arxiv(url, venue, volume string) string {
	if eprint := e.get("eprint"); eprint != "" {
		prefix := strings.ToLower(plainValue(firstNonEmpty(e.get("archiveprefix"), e.get("eprinttype"))))
		if prefix == "" || prefix == "arxiv" {
			if a := NormalizeArXiv(plainValue(eprint)); a != "" {
				return a
			}
		}
	}
	for _, s := range []string{e.get("arxiv"), e.get("arxivid")} {
		if s != "" {
			if a := NormalizeArXiv(plainValue(s)); a != "" {
				return a
			}
		}
	}
	if strings.Contains(strings.ToLower(url), "arxiv.org/") {
		if a := NormalizeArXiv(url); a != "" {
			return a
		}
	}
	if i := strings.Index(strings.ToLower(venue), "arxiv:"); i >= 0 {
		rest := venue[i:]
		if j := strings.IndexAny(rest, " ,;"); j >= 0 {
			rest = rest[:j]
		}
		if a := NormalizeArXiv(rest); a != "" {
			return a
		}
	}
	if venue == "CoRR" && strings.HasPrefix(volume, "abs/") {
		return NormalizeArXiv(volume[len("abs/"):])
	}
	return ""
}

// howPublishedURL is the URL of a misc entry's howpublished field, the
// classic BibTeX way to cite a web page ("\url{https://…}" or a bare URL);
// "" when it holds anything else.
func howPublishedURL(v string) string {
	u := plainValue(v)
	if strings.ContainsAny(u, " \t") {
		return ""
	}
	if l := strings.ToLower(u); strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://") {
		return u
	}
	return ""
}

// plainValue cleans a value that is not prose (URL, DOI, eprint): braces
// removed, \_ \% \& \# \$ \~ unescaped, a \url or other command name
// dropped, whitespace collapsed.
func plainValue(s string) string {
	if strings.IndexByte(s, '{') < 0 && strings.IndexByte(s, '}') < 0 && strings.IndexByte(s, '\\') < 0 {
		return collapseSpace(s)
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '{', '}':
			continue
		case '\\':
			if i+1 >= len(s) {
				continue
			}
			n := s[i+1]
			if !isLetter(n) {
				b = append(b, n)
				i++
				continue
			}
			j := i + 1
			for j < len(s) && isLetter(s[j]) {
				j++
			}
			if s[i+1:j] == "textasciitilde" {
				b = append(b, '~')
			} else if s[i+1:j] == "textunderscore" {
				b = append(b, '_')
			}
			i = j - 1
			continue
		}
		b = append(b, c)
	}
	return collapseSpace(string(b))
}

// doiFromURL returns the DOI (as written, see CleanDOI) in a resolver URL (https://doi.org/10.…) or a
// publisher URL with a /doi/ path (https://dl.acm.org/doi/abs/10.…), or "".
func doiFromURL(u string) string {
	if d := CleanDOI(u); d != "" {
		return d
	}
	i := strings.Index(u, "/doi/")
	if i < 0 {
		return ""
	}
	rest := u[i+len("/doi/"):]
	j := strings.Index(rest, "10.")
	if j < 0 || strings.Count(rest[:j], "/") > 1 {
		return ""
	}
	rest = rest[j:]
	if k := strings.IndexAny(rest, "?#"); k >= 0 {
		rest = rest[:k]
	}
	if strings.IndexByte(rest, '%') >= 0 {
		if d, err := url.PathUnescape(rest); err == nil {
			rest = d
		}
	}
	return CleanDOI(rest)
}

// parseYear returns the first 4-digit number in s, or 0.
func parseYear(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			continue
		}
		j := i
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j-i == 4 {
			return int(s[i]-'0')*1000 + int(s[i+1]-'0')*100 + int(s[i+2]-'0')*10 + int(s[i+3]-'0')
		}
		i = j
	}
	return 0
}
