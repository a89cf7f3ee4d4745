package corpus

import (
	"net/url"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Safe IDs.
//
// Every paper ID and alias the store holds matches one grammar, so that it
// can be written in a [[cite:ID]] placeholder, an HTML comment anchor, a
// URL path and a JSON string without escaping or breaking them:
//
//	id      = segment *( "/" segment )     ; at most MaxIDLen bytes
//	segment = 1*char, but not "." or ".."  ; no empty segment: no leading,
//	                                       ; trailing or doubled "/"
//	char    = letter / mark / digit        ; Unicode categories L, M, N
//	        / "-" / "." / "_" / "~" / ":" / ";" / "(" / ")" / "+" / "="
//	        / "*" / "'" / "!" / "@" / "$" / "&"
//	        / "%" HEXDIG HEXDIG            ; a percent-escape
//
// Left out, so never in an ID: white space and control characters, the
// placeholder's delimiters , | " [ ] ⟦ ⟧ (and every other non-letter
// symbol outside ASCII), < > (HTML, and the "-->" that ends an anchor),
// { } \ # ? ` ^ and a "%" that does not start an escape.
//
// EscapeID maps any string into the grammar; it is the identity on strings
// already in it. IDs from DOIs are lower-case (NormalizeDOI), and escapes
// written by EscapeID use lower-case hex digits, so that lower-casing an
// escaped string gives the escape of the lower-cased string.

// MaxIDLen is the longest paper ID or alias in bytes. A DOI whose ID would
// be longer is not used as an ID; a longer record key is not kept as an
// alias.
const MaxIDLen = 512

// IDPattern is the safe-ID grammar as a regular expression (RE2 syntax,
// anchored), for callers that validate IDs outside Go or in a regexp
// engine; ValidID is the same test in Go and also enforces MaxIDLen.
const IDPattern = `^` + idSegRe + `(?:/` + idSegRe + `)*$`

const (
	idCharRe   = `(?:[\p{L}\p{M}\p{N}\-._~:;()+=*'!@$&]|%[0-9A-Fa-f]{2})`
	idNoDotRe  = `(?:[\p{L}\p{M}\p{N}\-_~:;()+=*'!@$&]|%[0-9A-Fa-f]{2})`
	idSegRe    = `(?:` + idCharRe + `{3,}|` + idNoDotRe + idCharRe + `?|\.` + idNoDotRe + `)`
	idPunctSet = "-._~:;()+=*'!@$&"
)

var idPatternRe = regexp.MustCompile(IDPattern)

// idChar reports whether r may appear in an ID as itself.
func idChar(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' ||
			strings.IndexByte(idPunctSet, byte(r)) >= 0
	}
	return r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsNumber(r))
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// ValidID reports whether s is a safe ID: in the grammar above and at
// most MaxIDLen bytes. Every paper ID and alias of the store is one.
func ValidID(s string) bool {
	if s == "" || len(s) > MaxIDLen {
		return false
	}
	segStart := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '/':
			if !validSegment(s[segStart:i]) {
				return false
			}
			segStart = i + 1
			i++
			continue
		case c == '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return false
			}
			i += 3
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if !idChar(r) {
			return false
		}
		i += n
	}
	return validSegment(s[segStart:])
}

func validSegment(seg string) bool { return seg != "" && seg != "." && seg != ".." }

// EscapeID returns s in the safe-ID grammar: every byte of a character
// outside it is percent-encoded (lower-case hex: "a,b" → "a%2cb", "a b" →
// "a%20b"), as is a "%" that does not start an escape, the "/" that would
// make a leading, trailing or empty segment ("/a" → "%2fa"), and the dots
// of a "." or ".." segment ("x/../y" → "x/%2e%2e/y"). Escapes already in s
// are kept. It is the identity on safe IDs, and idempotent. The result may
// be longer than MaxIDLen; "" stays "".
func EscapeID(s string) string {
	if s == "" || ValidID(s) || (len(s) > MaxIDLen && idPatternRe.MatchString(s)) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	esc := func(c byte) {
		const hex = "0123456789abcdef"
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	// Escape character by character, keeping literal slashes; then fix
	// the segments.
	var segs []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '/':
			segs = append(segs, b.String())
			b.Reset()
			i++
			continue
		case c == '%':
			if i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
				b.WriteString(s[i : i+3])
				i += 3
			} else {
				esc(c)
				i++
			}
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if idChar(r) {
			b.WriteString(s[i : i+n])
		} else {
			for k := range n {
				esc(s[i+k])
			}
		}
		i += n
	}
	segs = append(segs, b.String())
	out := make([]string, 0, len(segs))
	pending := ""
	for i, seg := range segs {
		seg = pending + seg
		pending = ""
		last := i == len(segs)-1
		switch {
		case seg == "" && !last:
			pending = "%2f" // the slash after an empty segment
			continue
		case seg == "" && last:
			// A trailing slash (out is not empty: a non-empty s without
			// slashes escapes to a non-empty segment).
			out[len(out)-1] += "%2f"
			continue
		case seg == "." || seg == "..":
			seg = strings.Repeat("%2e", len(seg))
		}
		out = append(out, seg)
	}
	return strings.Join(out, "/")
}

var doiPrefixRe = regexp.MustCompile(`(?i)^(?:https?://(?:dx\.)?doi\.org/|doi:\s*|https?://doi\.acm\.org/)`)

// CleanDOI returns the DOI in s as written, case kept, without a resolver
// prefix (https://doi.org/, http://dx.doi.org/, doi:), percent-escapes of a
// resolver URL decoded, and trimmed; or "" when s holds no valid DOI. A
// valid DOI is "10.", a registrant code of digits (and dots), "/", and a
// suffix of any characters but white space and control characters; its
// ID (NormalizeDOI) must fit in MaxIDLen. This is the form a paper's DOI
// is shown and cited in.
func CleanDOI(s string) string {
	s = strings.TrimSpace(s)
	if loc := doiPrefixRe.FindStringIndex(s); loc != nil {
		rest := strings.TrimSpace(s[loc[1]:])
		if strings.HasPrefix(strings.ToLower(s), "http") && strings.IndexByte(rest, '%') >= 0 {
			if u, err := url.PathUnescape(rest); err == nil {
				rest = u
			}
		}
		s = rest
	}
	if !validDOI(s) || len(EscapeID(strings.ToLower(s))) > MaxIDLen {
		return ""
	}
	return s
}

// validDOI checks the DOI syntax described at CleanDOI.
func validDOI(s string) bool {
	if !strings.HasPrefix(s, "10.") {
		return false
	}
	slash := strings.IndexByte(s, '/')
	if slash < 4 || slash == len(s)-1 {
		return false
	}
	reg := s[3:slash]
	if reg[0] == '.' || reg[len(reg)-1] == '.' {
		return false
	}
	for i := 0; i < len(reg); i++ {
		if c := reg[i]; (c < '0' || c > '9') && c != '.' {
			return false
		}
	}
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s[slash+1:] {
		if unicode.IsSpace(r) || unicode.IsControl(r) || r == utf8.RuneError || r == '\u2028' || r == '\u2029' {
			return false
		}
	}
	return true
}

// NormalizeDOI returns the form a DOI takes in paper IDs: CleanDOI's,
// lower-cased (DOIs are case-insensitive) and escaped into the safe-ID
// grammar (EscapeID: "10.5555/A,B" → "10.5555/a%2cb"). It returns "" when s
// holds no valid DOI (see CleanDOI). It is idempotent.
func NormalizeDOI(s string) string {
	d := CleanDOI(s)
	if d == "" {
		return ""
	}
	return EscapeID(strings.ToLower(d))
}
