package corpus

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Author is one creator of a paper, shaped like a CSL-JSON name: either a
// family/given pair or a literal (corporate or unparsable) name.
type Author struct {
	Family  string `json:"family,omitempty"`
	Given   string `json:"given,omitempty"`
	Literal string `json:"literal,omitempty"`
}

// Name returns the display form: "Given Family", or the literal.
func (a Author) Name() string {
	if a.Literal != "" {
		return a.Literal
	}
	return strings.TrimSpace(a.Given + " " + a.Family)
}

// Paper is the canonical record of one paper, shaped like a CSL-JSON item.
// Its JSON form is CSL-JSON (see MarshalJSON); ArXiv travels as the
// non-standard "arxiv" key that CSL processors ignore.
type Paper struct {
	ID        string   // stable ID, see PaperID
	Type      string   // CSL type: article-journal, paper-conference, book, chapter, thesis, webpage, article, report, dataset, software, …
	Title     string   // plain Unicode text, no markup
	Authors   []Author // in byline order
	Year      int      // publication year; 0 when unknown
	Venue     string   // CSL container-title: journal or proceedings name
	DOI       string   // as written, case kept (see CleanDOI); empty when unknown. PaperID uses NormalizeDOI's form
	URL       string   //
	Abstract  string   //
	Keywords  []string // each trimmed; CSL-JSON joins them with ", ", so a keyword holds no "," or ";"
	ArXiv     string   // arXiv id without version, e.g. "1706.03762"
	Publisher string
	Volume    string
	Issue     string
	Pages     string
}

// Hit is one ranked search result: a paper ID and its score, higher is
// better. Scores are only comparable within one ranked list.
type Hit struct {
	ID    string
	Score float64
}

// cslPaper is the CSL-JSON wire form of Paper.
type cslPaper struct {
	ID        string   `json:"id"`
	Type      string   `json:"type,omitempty"`
	Title     string   `json:"title,omitempty"`
	Author    []Author `json:"author,omitempty"`
	Issued    *cslDate `json:"issued,omitempty"`
	Container string   `json:"container-title,omitempty"`
	DOI       string   `json:"DOI,omitempty"`
	URL       string   `json:"URL,omitempty"`
	Abstract  string   `json:"abstract,omitempty"`
	Keyword   string   `json:"keyword,omitempty"`
	ArXiv     string   `json:"arxiv,omitempty"`
	Publisher string   `json:"publisher,omitempty"`
	Volume    string   `json:"volume,omitempty"`
	Issue     string   `json:"issue,omitempty"`
	Page      string   `json:"page,omitempty"`
}

type cslDate struct {
	DateParts [][]json.Number `json:"date-parts,omitempty"`
	Literal   string          `json:"literal,omitempty"`
	Raw       string          `json:"raw,omitempty"`
}

// MarshalJSON writes the paper as a CSL-JSON item.
func (p Paper) MarshalJSON() ([]byte, error) {
	c := cslPaper{
		ID: p.ID, Type: p.Type, Title: p.Title, Author: p.Authors,
		Container: p.Venue, DOI: p.DOI, URL: p.URL, Abstract: p.Abstract,
		Keyword: strings.Join(p.Keywords, ", "), ArXiv: p.ArXiv,
		Publisher: p.Publisher, Volume: p.Volume, Issue: p.Issue, Page: p.Pages,
	}
	if p.Year != 0 {
		c.Issued = &cslDate{DateParts: [][]json.Number{{json.Number(fmt.Sprint(p.Year))}}}
	}
	return json.Marshal(c)
}

// UnmarshalJSON reads a CSL-JSON item (see PaperFromItem). The item's
// "id" is kept in ID as given; callers that ingest records compute the
// stable ID with PaperID.
func (p *Paper) UnmarshalJSON(b []byte) error {
	q, err := PaperFromItem(b)
	if err != nil {
		return err
	}
	*p = q
	return nil
}

func yearFromCSLDate(v json.RawMessage) (int, error) {
	// Fast path: {"date-parts":[[YYYY…
	if const_ := `{"date-parts":[[`; len(v) > len(const_)+4 && string(v[:len(const_)]) == const_ {
		y, n := 0, 0
		for _, c := range v[len(const_):] {
			if c < '0' || c > '9' {
				break
			}
			y = y*10 + int(c-'0')
			n++
		}
		if n > 0 && n < 6 {
			if c := v[len(const_)+n]; c == ',' || c == ']' {
				return y, nil
			}
		}
	}
	var d cslDate
	if err := json.Unmarshal(v, &d); err != nil {
		// date-parts given as strings, e.g. [["2020"]]
		var ds struct {
			DateParts [][]any `json:"date-parts"`
		}
		if err2 := json.Unmarshal(v, &ds); err2 != nil {
			return 0, err
		}
		if len(ds.DateParts) > 0 && len(ds.DateParts[0]) > 0 {
			var y int
			if _, err := fmt.Sscan(fmt.Sprint(ds.DateParts[0][0]), &y); err != nil {
				return 0, fmt.Errorf("bad year %v", ds.DateParts[0][0])
			}
			return y, nil
		}
		return 0, nil
	}
	if len(d.DateParts) > 0 && len(d.DateParts[0]) > 0 {
		n, err := d.DateParts[0][0].Int64()
		if err != nil {
			return 0, fmt.Errorf("bad year %q", d.DateParts[0][0])
		}
		return int(n), nil
	}
	for _, s := range []string{d.Raw, d.Literal} {
		if m := yearRe.FindString(s); m != "" {
			var y int
			fmt.Sscan(m, &y)
			return y, nil
		}
	}
	return 0, nil
}

var yearRe = regexp.MustCompile(`\b(1[5-9]\d\d|20\d\d)\b`)

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// SplitKeywords splits a keyword field on commas and semicolons and trims
// each keyword; empty keywords are dropped.
func SplitKeywords(s string) []string {
	var out []string
	for _, k := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ';' }) {
		if k = strings.TrimSpace(k); k != "" {
			out = append(out, k)
		}
	}
	return out
}

var (
	arxivNewRe = regexp.MustCompile(`(?i)^(?:arxiv:)?(\d{4}\.\d{4,5})(?:v\d+)?$`)
	arxivOldRe = regexp.MustCompile(`(?i)^(?:arxiv:)?([a-z\-]+(?:\.[a-z]{2})?/\d{7})(?:v\d+)?$`)
	arxivURLRe = regexp.MustCompile(`(?i)arxiv\.org/(?:abs|pdf)/([^\s?#]+?)(?:\.pdf)?$`)
)

// NormalizeArXiv returns an arXiv identifier without version and without
// "arXiv:" or URL prefix ("2004.04906", "cs/0112017"), or "" when s is not
// one.
func NormalizeArXiv(s string) string {
	s = strings.TrimSpace(s)
	if m := arxivURLRe.FindStringSubmatch(s); m != nil {
		s = m[1]
	}
	if m := arxivNewRe.FindStringSubmatch(s); m != nil {
		return m[1]
	}
	if m := arxivOldRe.FindStringSubmatch(s); m != nil {
		return strings.ToLower(m[1])
	}
	return ""
}

// NormalizeTitle folds a title for matching: Unicode NFKD with combining
// marks removed, lower case, every run of non-letters/digits collapsed to
// one space, trimmed.
func NormalizeTitle(s string) string {
	s = norm.NFKD.String(s)
	var b strings.Builder
	space := false
	for _, r := range s {
		switch {
		case unicode.Is(unicode.Mn, r):
			continue
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(unicode.ToLower(r))
		default:
			space = true
		}
	}
	return b.String()
}

// Fingerprint is the hash key of a paper without DOI or arXiv id: the first
// 12 hex digits of SHA-256 over normalised title, year and the first
// author's normalised family name, joined by "|".
func Fingerprint(p Paper) string {
	family := ""
	if len(p.Authors) > 0 {
		a := p.Authors[0]
		family = a.Family
		if family == "" {
			family = a.Literal
		}
	}
	year := ""
	if p.Year != 0 {
		year = fmt.Sprint(p.Year)
	}
	sum := sha256.Sum256([]byte(NormalizeTitle(p.Title) + "|" + year + "|" + NormalizeTitle(family)))
	return hex.EncodeToString(sum[:6])
}

// PaperID computes the stable ID of a paper: its normalised DOI when it has
// one ("10.1145/3397271.3401032"), else "arxiv:" + its arXiv id without
// version ("arxiv:1706.03762"), else "h:" + Fingerprint ("h:3f2a9c01b2de").
// The same bibliographic facts give the same ID on every run and machine.
func PaperID(p Paper) string {
	if d := NormalizeDOI(p.DOI); d != "" {
		return d
	}
	if a := NormalizeArXiv(p.ArXiv); a != "" {
		return "arxiv:" + a
	}
	return "h:" + Fingerprint(p)
}

// Merge fills the empty fields of dst from src and returns the number of
// fields it filled. Non-empty fields of dst are never overwritten, so a
// later record with more fields completes a paper without changing what
// was already known. ID is not touched.
func Merge(dst *Paper, src Paper) int {
	n := 0
	fill := func(d *string, s string) {
		if *d == "" && s != "" {
			*d = s
			n++
		}
	}
	fill(&dst.Type, src.Type)
	fill(&dst.Title, src.Title)
	fill(&dst.Venue, src.Venue)
	fill(&dst.DOI, src.DOI)
	fill(&dst.URL, src.URL)
	fill(&dst.Abstract, src.Abstract)
	fill(&dst.ArXiv, src.ArXiv)
	fill(&dst.Publisher, src.Publisher)
	fill(&dst.Volume, src.Volume)
	fill(&dst.Issue, src.Issue)
	fill(&dst.Pages, src.Pages)
	if dst.Year == 0 && src.Year != 0 {
		dst.Year = src.Year
		n++
	}
	if len(dst.Authors) == 0 && len(src.Authors) > 0 {
		dst.Authors = append([]Author(nil), src.Authors...)
		n++
	}
	if len(dst.Keywords) == 0 && len(src.Keywords) > 0 {
		dst.Keywords = append([]string(nil), src.Keywords...)
		n++
	}
	return n
}

// Record is one paper as read from a source file, before it is stored.
type Record struct {
	Paper Paper // Paper.ID is already the stable ID (PaperID)
	// Item is the record's CSL-JSON item as read (a BibTeX entry's as
	// converted), which the store keeps; Paper is PaperFromItem(Item). nil
	// for a record made in code: its item is then Paper's CSL-JSON form
	// (Paper.MarshalJSON) with Key as its "id".
	Item json.RawMessage
	Key  string // the record's own key (BibTeX citation key, CSL-JSON id); kept as an alias
	File string // source file as given on the command line
	Line int    // 1-based line where the record starts
	Kind string // source entry type as written (BibTeX "inproceedings", CSL "paper-conference")
	// Ref names the record within its file, so that when the file changes
	// the store can tell a changed record from a new one: the Key, "Key#2"
	// for the second record with that key, "#N" for the Nth keyless
	// record. ReadFile sets it; when empty the store uses "@"+Line.
	Ref string
	// Warnings are problems that did not stop the record from being
	// read: invalid UTF-8 (replaced by U+FFFD), a DOI that is not valid
	// (the paper is identified without it), a key that is not a safe ID.
	Warnings []*Warning
}

// Warning is a problem with a record that is stored anyway. Its message
// has the form "FILE:LINE: warning: cause".
type Warning struct {
	File string
	Line int
	Err  error
}

func (w *Warning) Error() string { return fmt.Sprintf("%s:%d: warning: %v", w.File, w.Line, w.Err) }
func (w *Warning) Unwrap() error { return w.Err }

// checkRecord adds the warnings about a read record's DOI and arXiv id (as
// written in its file; rawArXiv only when given as one) and key.
func checkRecord(r *Record, rawDOI, rawArXiv string) {
	if d := strings.TrimSpace(rawDOI); d != "" && CleanDOI(d) == "" {
		r.Warnings = append(r.Warnings, &Warning{File: r.File, Line: r.Line,
			Err: fmt.Errorf("%w %q (want 10.NNNN/suffix without white space); the paper is identified without it", ErrInvalidDOI, d)})
	}
	if a := strings.TrimSpace(rawArXiv); a != "" && NormalizeArXiv(a) == "" {
		r.Warnings = append(r.Warnings, &Warning{File: r.File, Line: r.Line,
			Err: fmt.Errorf("%w %q (want 2004.04906 or cs/0112017, with or without version); the paper is identified without it", ErrInvalidArXiv, a)})
	}
	if r.Key != "" && !ValidID(r.Key) {
		if a := EscapeID(r.Key); len(a) <= MaxIDLen {
			r.Warnings = append(r.Warnings, &Warning{File: r.File, Line: r.Line,
				Err: fmt.Errorf("%w %q: it has characters that cannot appear in an ID; use it as %q", ErrUnsafeKey, r.Key, a)})
		} else {
			r.Warnings = append(r.Warnings, &Warning{File: r.File, Line: r.Line,
				Err: fmt.Errorf("%w: %.40q… is longer than %d bytes; it is not kept as an alias", ErrUnsafeKey, r.Key, MaxIDLen)})
		}
	}
}

// invalidUTF8Lines returns the lines of data (the first being first)
// that hold invalid UTF-8, ascending.
func invalidUTF8Lines(data []byte, first int) []int {
	var lines []int
	line := first
	for i := 0; i < len(data); {
		c := data[i]
		if c == '\n' {
			line++
			i++
			continue
		}
		if c < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n == 1 && (len(lines) == 0 || lines[len(lines)-1] != line) {
			lines = append(lines, line)
		}
		i += n
	}
	return lines
}

// ParseError is a bad record in an input file. Its message has the form
// "FILE:LINE: cause". Readers report it and go on with the next record.
type ParseError struct {
	File string
	Line int
	Err  error
}

func (e *ParseError) Error() string { return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err) }
func (e *ParseError) Unwrap() error { return e.Err }
