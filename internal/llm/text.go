package llm

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"
)

// CleanText collapses every run of white space (newlines included) in s
// to one space and trims it, so that a title or abstract cannot break the
// layout of a prompt.
func CleanText(s string) string { return cleanPrefix(s, -1) }

// cleanPrefix is CleanText that stops once the result holds limit runes
// (limit < 0: no limit).
func cleanPrefix(s string, limit int) string {
	var b strings.Builder
	if limit < 0 {
		b.Grow(len(s))
	} else {
		b.Grow(min(len(s), 4*limit))
	}
	space := false
	n := 0
	for _, r := range s {
		if n == limit {
			break
		}
		if unicode.IsSpace(r) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
			n++
			if n == limit {
				break
			}
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// TruncateText cleans s (CleanText) and cuts it to at most n runes, at a
// word boundary when one lies in the last fifth, ending with "…" when it
// cut. n <= 0 returns "".
func TruncateText(s string, n int) string {
	if n <= 0 {
		return ""
	}
	// One rune more than n tells whether s is longer than n.
	s = cleanPrefix(s, n+1)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	cut, i := 0, 0
	for pos := range s {
		if i == n-1 { // leave room for the ellipsis
			cut = pos
			break
		}
		i++
	}
	t := s[:cut]
	if s[cut] == ' ' {
		// t ends at a word boundary already.
	} else if sp := strings.LastIndexByte(t, ' '); sp > 0 && utf8.RuneCountInString(t[sp:]) <= n/5 {
		t = t[:sp]
	}
	return strings.TrimRight(t, " ,;:.-") + "…"
}

// maxJSONStarts bounds how many opening brackets ExtractJSON tries.
const maxJSONStarts = 256

// ExtractJSON finds a JSON value in a model's reply, which may be bare
// JSON, JSON inside a Markdown code fence, or JSON inside prose. It tries,
// in order: the whole trimmed reply; the body of each ``` fence; then
// every "{" and afterwards every "[" from the left, decoding one value
// from there. It returns the first value that accept approves (nil accepts
// any value). Objects are tried before arrays so that a bracketed word in
// prose ("see [1]") does not hide the object after it.
func ExtractJSON(reply string, accept func(json.RawMessage) bool) (json.RawMessage, bool) {
	ok := func(raw []byte) bool {
		return json.Valid(raw) && (accept == nil || accept(raw))
	}
	s := strings.TrimSpace(strings.TrimPrefix(reply, "\uFEFF"))
	if s == "" {
		return nil, false
	}
	if ok([]byte(s)) {
		return json.RawMessage(s), true
	}
	rest := s
	for {
		i := strings.Index(rest, "```")
		if i < 0 {
			break
		}
		body := rest[i+3:]
		// Skip the info string ("json") up to the end of the line.
		if nl := strings.IndexByte(body, '\n'); nl >= 0 && !strings.ContainsAny(body[:nl], "{[") {
			body = body[nl+1:]
		}
		end := strings.Index(body, "```")
		if end < 0 {
			end = len(body)
		}
		if b := strings.TrimSpace(body[:end]); ok([]byte(b)) {
			return json.RawMessage(b), true
		}
		if end == len(body) {
			break
		}
		rest = body[end+3:]
	}
	for _, open := range []byte{'{', '['} {
		tries := 0
		for i := 0; i < len(s) && tries < maxJSONStarts; i++ {
			if s[i] != open {
				continue
			}
			tries++
			dec := json.NewDecoder(strings.NewReader(s[i:]))
			var raw json.RawMessage
			if dec.Decode(&raw) == nil && ok(raw) {
				return bytes.Clone(raw), true
			}
		}
	}
	return nil, false
}
