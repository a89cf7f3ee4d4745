package cite

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/citefind/citefind/corpus"
)

// splitParticle splits a family name into its lower-case particle
// ("van der") and the rest ("Berg").
func splitParticle(family string) (particle, rest string) {
	words := strings.Fields(family)
	i := 0
	for i < len(words)-1 {
		r, _ := utf8.DecodeRuneInString(words[i])
		if !unicode.IsLower(r) {
			break
		}
		i++
	}
	return strings.Join(words[:i], " "), strings.Join(words[i:], " ")
}

// initials abbreviates given names: "María José" → "M. J." with sep " "
// and dot "."; "Jean-Luc" → "J.-L."; vancouver style (dot "", sep "") →
// "MJ", "JL".
func initials(given, dot, sep string) string {
	var parts []string
	for _, w := range strings.Fields(given) {
		var hy []string
		for k, h := range strings.Split(w, "-") {
			r, _ := utf8.DecodeRuneInString(h)
			if r == utf8.RuneError || (k > 0 && unicode.IsLower(r)) {
				continue
			}
			hy = append(hy, string(unicode.ToUpper(r))+dot)
		}
		if dot == "" {
			parts = append(parts, strings.Join(hy, ""))
		} else {
			parts = append(parts, strings.Join(hy, "-"))
		}
	}
	return strings.Join(parts, sep)
}

// familyOf is the name shown in citations: family or literal.
func familyOf(a corpus.Author) string {
	if a.Literal != "" {
		return a.Literal
	}
	if a.Family == "" {
		return a.Given
	}
	return a.Family
}

// sortKey folds s for sorting: diacritics and punctuation removed, lower case.
func sortKey(s string) string {
	s = strings.NewReplacer("Ø", "O", "ø", "o", "Ł", "L", "ł", "l", "Æ", "AE", "æ", "ae", "ß", "ss", "Đ", "D", "đ", "d").Replace(s)
	s = norm.NFKD.String(s)
	var b strings.Builder
	for _, r := range s {
		switch {
		case unicode.Is(unicode.Mn, r):
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(unicode.ToLower(r))
		case unicode.IsSpace(r) || r == ',':
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// Title case as CSL processors apply it to English titles: every word
// capitalised except short function words that are not first or after a
// colon; words with capitals inside are left alone.
var stopWords = map[string]bool{
	"a": true, "an": true, "and": true, "as": true, "at": true, "but": true, "by": true, "down": true,
	"for": true, "from": true, "in": true, "into": true, "nor": true, "of": true, "on": true, "onto": true,
	"or": true, "over": true, "so": true, "the": true, "till": true, "to": true, "up": true, "via": true,
	"with": true, "yet": true, "vs": true, "v": true, "per": true, "than": true,
}

func titleCase(s string) string {
	words := strings.Split(s, " ")
	first := true
	for i, w := range words {
		if w == "" {
			continue
		}
		parts := strings.Split(w, "-")
		for j, p := range parts {
			core := strings.TrimFunc(p, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
			lower := strings.ToLower(core)
			if core == "" || core != lower {
				continue // has capitals already, or no letters
			}
			if !first && j == 0 && stopWords[lower] {
				continue
			}
			r, size := utf8.DecodeRuneInString(core)
			k := strings.Index(p, core)
			parts[j] = p[:k] + string(unicode.ToUpper(r)) + core[size:] + p[k+len(core):]
		}
		words[i] = strings.Join(parts, "-")
		first = strings.HasSuffix(w, ":") || strings.HasSuffix(w, "?") || strings.HasSuffix(w, "!")
	}
	return strings.Join(words, " ")
}

// pageRange formats a page range: "full", "minimal", "minimal-two",
// "chicago".
func pageRange(pages, format string) string {
	pages = strings.ReplaceAll(pages, "--", "–")
	lo, hi, ok := strings.Cut(pages, "–")
	if !ok {
		lo, hi, ok = strings.Cut(pages, "-")
	}
	if !ok {
		return pages
	}
	lo, hi = strings.TrimSpace(lo), strings.TrimSpace(hi)
	if !allDigits(lo) || !allDigits(hi) {
		return lo + "–" + hi
	}
	strip := func(keep int) string {
		if len(lo) != len(hi) {
			// 98–102 or 1–10: nothing can be dropped. (pandoc 2.17's
			// citeproc drops digits position by position and prints
			// 1–10 as "1–0"; citefind does not copy that bug.)
			return hi
		}
		i := 0
		for i < len(lo) && i < len(hi) && lo[i] == hi[i] {
			i++
		}
		rest := hi[i:]
		if rest == "" {
			rest = hi
		}
		if len(rest) < keep {
			rest = hi[max(0, len(hi)-keep):]
		}
		return rest
	}
	switch format {
	case "minimal":
		return lo + "–" + strip(1)
	case "minimal-two":
		return lo + "–" + strip(2)
	case "chicago":
		if len(lo) < 3 || len(lo) != len(hi) || strings.HasSuffix(lo, "00") {
			return lo + "–" + hi
		}
		if lo[len(lo)-2] == '0' {
			return lo + "–" + strip(1)
		}
		return lo + "–" + strip(2)
	}
	return lo + "–" + hi
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// typo applies the typography CSL processors apply to text: straight
// apostrophes become ’.
func typo(s string) string { return strings.ReplaceAll(s, "'", "’") }

// typoPaper applies typo to the text fields of p.
func typoPaper(p corpus.Paper) corpus.Paper {
	p.Title = typo(p.Title)
	p.Venue = typo(p.Venue)
	p.Publisher = typo(p.Publisher)
	as := make([]corpus.Author, len(p.Authors))
	for i, a := range p.Authors {
		as[i] = corpus.Author{Family: typo(a.Family), Given: typo(a.Given), Literal: typo(a.Literal)}
	}
	p.Authors = as
	return p
}
