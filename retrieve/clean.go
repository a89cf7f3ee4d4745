package retrieve

import (
	"regexp"
	"strings"
)

// Patterns used by Clean. Go's regexp (RE2) has no look-around, so some
// decisions are made in code (see cleanGroup).
var (
	// LaTeX citation commands: \cite, \citep, \citet, \citeauthor, \parencite,
	// \textcite, \autocite, \nocite …, with optional [pre][post] notes and
	// an optional leading ~ (non-breaking space).
	latexCiteRe = regexp.MustCompile(`~?\\[a-zA-Z]*cite[a-zA-Z]*\*?(?:\s*\[[^\[\]]*\])*\s*\{[^{}]*\}`)

	// URLs; the last character is not sentence punctuation, so "see
	// https://x.org." keeps its full stop.
	urlRe = regexp.MustCompile(`(?i)\b(?:https?://|ftp://|www\.)[^\s<>"]*[^\s<>".,;:!?)\]'}]`)

	// Numeric bracket markers "[12]", "[3-5]", "[12, 14–16]", "[1;2]", and
	// the placeholders "[CITATION]", "[CITATIONS]", "[CIT]" (ScisummNet's
	// masked citation sentences), "[?]", chained like
	// "[1]–[3]" or "[1][2]". Numbers start with 1-9: "[0, 1]" is an interval.
	numMarker   = `\[\s*[1-9]\d*(?:\s*[-‐‑‒–—−]\s*[1-9]\d*)?(?:\s*[,;]\s*[1-9]\d*(?:\s*[-‐‑‒–—−]\s*[1-9]\d*)?)*\s*\]`
	placeholder = `\[(?:CITATIONS?|Citations?|citations?|CITS?|Cits?|\?+)\]`
	marker      = `(?:` + numMarker + `|` + placeholder + `)`
	markerRe    = regexp.MustCompile(marker + `(?:\s*[-‐‑‒–—−,;]?\s*` + marker + `)*`)

	// Innermost parenthesised or bracketed groups, inspected by cleanGroup.
	groupRe = regexp.MustCompile(`[(\[][^()\[\]]*[)\]]`)

	// Author-year citations, one per ";"-separated part of a group.
	surname = `\p{Lu}[\p{L}'’\-]*\p{Ll}[\p{L}'’\-]*`
	name    = `(?:(?:van|von|de|der|den|del|della|di|da|du|le|la|dos|das|ten|ter|St\.)\s+)*` + surname + `(?:\s+` + surname + `)?`
	authors = name + `(?:(?:\s*,\s*(?:and\s+|&\s*)?|\s+(?:and|&)\s+)` + name + `)*(?:,?\s+et\.?\s+al\.?)?`
	year    = `(?:(?:1[89]|20)\d\d[a-z]?|n\.d\.|in\s+press|forthcoming)`
	years   = year + `(?:\s*,\s*` + year + `)*`
	locator = `(?:\s*,\s*(?:p|pp|ch|chap|sec|Sec|Ch)\.\s*\d+(?:\s*[-–—]\s*\d+)?)?`
	oneCite = authors + `\s*,?\s*` + years + locator
	citeRe  = regexp.MustCompile(`^` + oneCite + `(?:\s*,\s*` + oneCite + `)*$`)

	// Words that introduce or close a citation inside a group: "(e.g., …)",
	// "(see also …)", "(…, among others)".
	citePrefixRe = regexp.MustCompile(`^(?i:\s*(?:e\.\s?g\.|i\.\s?e\.|see\s+also|see|cf\.|for\s+example|for\s+instance|as\s+in|following|also|and|or)[\s,:]*)+`)
	citeSuffixRe = regexp.MustCompile(`(?i)[\s,]*(?:among\s+others|inter\s+alia|and\s+others)\.?\s*$`)

	// Groups holding only a year or years: the "(2020)" of "Smith (2020)".
	yearGroupRe = regexp.MustCompile(`\(\s*` + years + `\s*\)`)

	// "et al." after a surname; the full stop survives when it also ends a
	// sentence (end of text, or a capital follows).
	etAlEndRe   = regexp.MustCompile(`\s+et\.?\s+al\.\s*$`)
	etAlCapRe   = regexp.MustCompile(`\s+et\.?\s+al\.(\s+\p{Lu})`)
	etAlRe      = regexp.MustCompile(`\s+et\.?\s+al(?:\.|\b)`)
	monthLikeRe = regexp.MustCompile(`^(?i:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|spring|summer|fall|autumn|winter)\.?$`)

	// Groups left empty or holding only connectives: "()", "[ ]",
	// "(e.g., )", "(see )", "(, )".
	emptyGroupRe = regexp.MustCompile(`(?i)[(\[](?:[\s,;:.]|e\.g\.|i\.e\.|see|also|cf\.|for\s+example|for\s+instance|and|or)*[)\]]`)

	spaceRe        = regexp.MustCompile(`[\s\p{Zs}]+`)
	spaceBeforeRe  = regexp.MustCompile(` +([,;:!?)\]]|\.$|\.[^.])`) // not before "..."
	spaceAfterRe   = regexp.MustCompile(`([(\[]) +`)
	repeatPunctRe  = regexp.MustCompile(`([,;:])(?:\s*[,;:])+`)
	punctBeforeEnd = regexp.MustCompile(`[,;:]+\s*([.!?])`)
	leadingPunctRe = regexp.MustCompile(`^[\s,;:]+`)
)

// Clean strips citation markers and other noise from a masked-citation excerpt before retrieval.
//
// It removes numeric bracket markers ("[12]", "[12, 14–16]", "[3-5]",
// "[1,2,3]", with any dash) and the placeholders "[CITATION]",
// "[CITATIONS]", "[CIT]" and "[?]"; author-year parentheticals ("(Smith et al.,
// 2020)", "(Smith and Jones, 2019; Doe, 2020a)", "(e.g., Smith 2020)",
// "(see Smith et al. 2020)"), and the citation parts of mixed groups
// ("(BM25; Robertson et al., 2009)" → "(BM25)"); LaTeX \cite commands; and
// URLs. In inline citations ("Smith et al. (2020) show") the year group and
// "et al." go but the surname stays ("Smith show"): a name is ordinary text
// to BM25, and the corpus does not index authors, so it costs little.
// Groups left empty ("()", "(e.g., )") are removed, whitespace is collapsed
// and stray punctuation (" ,", " .", ", .") is tidied.
//
// Ordinary parenthesised text ("(BM25)", "(see Section 3)"), intervals
// ("[0, 1]", "[−1, 1]") and years in prose ("in 2020 we") are kept. A group
// holding only years ("(2020)", "(2019, 2020a)") is always taken for a
// citation. Month or season names with a year ("(March 2020)") are kept.
//
// Clean is idempotent (Clean(Clean(s)) == Clean(s)), never lengthens its
// input, and drops invalid UTF-8.
func Clean(text string) string {
	s := strings.ToValidUTF8(text, "")
	// Removing one thing can expose another ("(see [3])" → "(see )" → ""),
	// so repeat until nothing changes. This ends: a pass that changes s
	// either shortens it or only turns other whitespace into spaces.
	for {
		next := cleanPass(s)
		if next == s {
			break
		}
		s = next
	}
	return s
}

func cleanPass(s string) string {
	s = latexCiteRe.ReplaceAllString(s, " ")
	s = urlRe.ReplaceAllString(s, " ")
	s = markerRe.ReplaceAllString(s, " ")
	s = groupRe.ReplaceAllStringFunc(s, cleanGroup)
	s = yearGroupRe.ReplaceAllString(s, " ")
	s = etAlEndRe.ReplaceAllString(s, ".")
	s = etAlCapRe.ReplaceAllString(s, ".$1")
	s = etAlRe.ReplaceAllString(s, "")
	s = emptyGroupRe.ReplaceAllString(s, " ")
	return tidy(s)
}

// cleanGroup removes a parenthesised or bracketed group that holds only
// author-year citations, or the citation parts of a group that mixes them
// with other text. Any other group is returned unchanged.
func cleanGroup(g string) string {
	open, close := g[0], g[len(g)-1]
	if (open == '(') != (close == ')') {
		return g // "(…]" or "[…)": not a group
	}
	inner := g[1 : len(g)-1]
	parts := strings.Split(inner, ";")
	var kept []string
	cites := 0
	for _, p := range parts {
		if isCitation(p) {
			cites++
			continue
		}
		kept = append(kept, p)
	}
	if cites == 0 {
		return g
	}
	allFiller := true
	for _, p := range kept {
		if strings.TrimSpace(citePrefixRe.ReplaceAllString(p, "")) != "" {
			allFiller = false
		}
	}
	if allFiller {
		return " "
	}
	return string(open) + strings.Join(kept, ";") + string(close)
}

// isCitation reports whether one ";"-separated part of a group is an
// author-year citation, possibly introduced by "e.g.," or "see".
func isCitation(p string) bool {
	p = citePrefixRe.ReplaceAllString(p, "")
	p = citeSuffixRe.ReplaceAllString(p, "")
	p = strings.TrimSpace(p)
	if p == "" || !citeRe.MatchString(p) {
		return false
	}
	// "(March 2020)" is a date, not "March, 2020".
	first := strings.FieldsFunc(p, func(r rune) bool { return r == ' ' || r == ',' })[0]
	return !monthLikeRe.MatchString(first)
}

// tidy collapses whitespace and removes the punctuation left dangling by
// the removals.
func tidy(s string) string {
	s = spaceRe.ReplaceAllString(s, " ")
	s = spaceBeforeRe.ReplaceAllString(s, "$1")
	s = spaceAfterRe.ReplaceAllString(s, "$1")
	s = repeatPunctRe.ReplaceAllString(s, "$1")
	s = punctBeforeEnd.ReplaceAllString(s, "$1")
	s = leadingPunctRe.ReplaceAllString(s, "")
	return strings.TrimSpace(s)
}
