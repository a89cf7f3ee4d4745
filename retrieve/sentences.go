package retrieve

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Sentences splits text into sentences: a sentence ends at ".", "!" or
// "?" (with closing quotes or brackets after it) followed by white space
// and an upper-case letter, a digit, "[" or "(". Abbreviations such as
// "et al.", "e.g.", "i.e.", "cf.", "Fig." and single capital initials
// do not end a sentence. Sentences are trimmed; empty ones are dropped.
func Sentences(text string) []string {
	var out []string
	start := 0
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		i += n
		if r != '.' && r != '!' && r != '?' {
			continue
		}
		end := i
		for end < len(text) && strings.ContainsRune(`"')]”’`, rune(text[end])) {
			end++
		}
		j := end
		for j < len(text) {
			r, n := utf8.DecodeRuneInString(text[j:])
			if !unicode.IsSpace(r) {
				break
			}
			j += n
		}
		if j == end || j == len(text) {
			continue
		}
		next, _ := utf8.DecodeRuneInString(text[j:])
		if !(unicode.IsUpper(next) || unicode.IsDigit(next) || next == '[' || next == '(') {
			continue
		}
		if r == '.' && abbreviation(text[start:i-1]) {
			continue
		}
		if s := strings.TrimSpace(text[start:end]); s != "" {
			out = append(out, s)
		}
		start, i = j, j
	}
	if s := strings.TrimSpace(text[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

var abbreviations = map[string]bool{
	"al": true, "e.g": true, "i.e": true, "cf": true, "fig": true, "figs": true, "eq": true, "eqs": true,
	"sec": true, "ref": true, "refs": true, "vs": true, "etc": true, "resp": true, "approx": true,
	"no": true, "vol": true, "pp": true, "ch": true, "tab": true, "dr": true, "mr": true, "ms": true, "prof": true,
}

// abbreviation reports whether before (the text up to a ".") ends with a
// word that a period after it does not end a sentence with.
func abbreviation(before string) bool {
	k := strings.LastIndexFunc(before, func(r rune) bool { return unicode.IsSpace(r) || r == '(' || r == '[' })
	w := strings.ToLower(before[k+1:])
	if abbreviations[w] {
		return true
	}
	// A single letter: an initial ("J. Smith") or "e.g" written "e. g".
	return utf8.RuneCountInString(w) == 1 && unicode.IsLetter([]rune(w)[0])
}

// CitingSentences returns the sentences of text that hold a citation
// marker (anything Clean removes besides white space), cleaned; nil when
// none does.
func CitingSentences(text string) []string {
	var out []string
	for _, s := range Sentences(text) {
		c := Clean(s)
		if c != strings.Join(strings.Fields(s), " ") && strings.TrimSpace(c) != "" {
			out = append(out, c)
		}
	}
	return out
}
