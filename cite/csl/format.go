package csl

import (
	"html"
	"regexp"
	"strings"
)

// Fragment is a piece of citeproc-js output (its "html" format): an in-text
// citation or a bibliography entry. Text, Markdown and HTML turn it into
// output that never carries live markup from the item's data: citeproc-js
// escapes the data's text, and the conversion keeps only the tags the
// engine itself produces; only http(s) URLs (DOIs included, as
// https://doi.org/…) become links.
type Fragment string

// node is a parsed fragment: a text run or a known tag with children.
type node struct {
	tag   string // "" for text; i, b, sup, sub, sc, div-CLASS, span (other styling, dropped)
	text  string
	kids  []*node
	class string
}

// known tags: those citeproc-js's html format writes.
var tagRe = regexp.MustCompile(`^<(/?)(i|em|b|sup|sub|span|div|a)(\s[^<>]*)?>`)

var classRe = regexp.MustCompile(`class="([a-z-]+)"`)

// parse turns citeproc-js HTML into a tree; anything that is not one of the
// engine's tags stays text.
func (f Fragment) parse() *node {
	root := &node{tag: "root"}
	stack := []*node{root}
	s := string(f)
	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			top := stack[len(stack)-1]
			top.kids = append(top.kids, &node{text: html.UnescapeString(text.String())})
			text.Reset()
		}
	}
	for i := 0; i < len(s); {
		if s[i] != '<' {
			j := strings.IndexByte(s[i:], '<')
			if j < 0 {
				j = len(s) - i
			}
			text.WriteString(s[i : i+j])
			i += j
			continue
		}
		m := tagRe.FindStringSubmatch(s[i:])
		if m == nil {
			text.WriteByte('<')
			i++
			continue
		}
		flush()
		closing, name, attrs := m[1] == "/", m[2], m[3]
		if name == "em" {
			name = "i"
		}
		if closing {
			// Pop to the matching tag.
			for k := len(stack) - 1; k > 0; k-- {
				if stack[k].tag == name || (name == "span" && stack[k].tag == "sc") || (name == "div" && strings.HasPrefix(stack[k].tag, "div")) {
					stack = stack[:k]
					break
				}
			}
		} else {
			n := &node{tag: name}
			switch name {
			case "span":
				if strings.Contains(attrs, "small-caps") {
					n.tag = "sc"
				}
			case "div":
				if cm := classRe.FindStringSubmatch(attrs); cm != nil {
					n.class = cm[1]
				}
			}
			top := stack[len(stack)-1]
			top.kids = append(top.kids, n)
			stack = append(stack, n)
		}
		i += len(m[0])
	}
	flush()
	return root
}

// nbspRe is the "\u00a0 " citeproc-js's html escape makes of two spaces.
const nbspPair = "\u00a0 "

// Text is the fragment as plain text: no markup; a numbered entry's label
// and body are joined by a space. A superscript of letters keeps its
// superscript characters (supLetters): citeproc-js writes the locales'
// ordinal indicators (es-ES "3.ª", fr-FR "3ᵉ", "1ʳᵉ") and any such letter in
// the data as <sup> around the plain letter, which would read "3.a",
// "3e" in plain text. Digits stay digits here (a superscript label of a
// bibliography entry, m<sup>2</sup> in a title); InlineText, for in-text
// citations, writes them as superscripts too.
func (f Fragment) Text() string {
	return f.text(func(s string) string {
		if sup, ok := SuperscriptLetters(s); ok {
			return sup
		}
		return s
	})
}

// InlineText is Text for a citation that stands in running text: every
// superscript is written as one (InlineSuperscript), digits included. A
// style's superscript citation numbers (nature, AMA: "work<sup>1</sup>")
// would otherwise join the word or number before them in plain text:
// "work1", and "21" for two citations written next to each other.
func (f Fragment) InlineText() string { return oneSpace(f.text(InlineSuperscript)) }

// spacesRe is a run of two or more spaces.
var spacesRe = regexp.MustCompile(`  +`)

// oneSpace writes each run of spaces of plain-text output as one:
// citeproc-js (and so Zotero) prints two where a given name starts with
// a small letter ("Doe,  jane", "schraefel,  m. c."), which HTML and
// Markdown do not show and plain text does.
func oneSpace(s string) string { return spacesRe.ReplaceAllString(s, " ") }

// EntryText is Text for a bibliography entry in plain-text output: a
// superscript or subscript of digits and signs is also written in
// superscript or subscript characters ("m<sup>2</sup>" → "m²",
// "CO<sub>2</sub>" → "CO₂", "10<sup>-5</sup>" → "10⁻⁵", which Text
// writes "m2", "CO2" and "10-5"); any other stays as Text writes it; a
// run of spaces is one (oneSpace), as InlineText's.
func (f Fragment) EntryText() string {
	return oneSpace(f.textWith(func(s string) string {
		if sup, ok := SuperscriptLetters(s); ok {
			return sup
		}
		if sup, ok := mapAll(s, supOthers); ok {
			return sup
		}
		return s
	}, func(s string) string {
		sub, _ := mapAll(s, subOthers)
		return sub
	}))
}

// mapAll returns s with every character replaced by its form in m, when
// all have one; else s and false.
func mapAll(s string, m map[rune]rune) (string, bool) {
	if s == "" {
		return s, false
	}
	var b strings.Builder
	for _, r := range s {
		x, ok := m[r]
		if !ok {
			return s, false
		}
		b.WriteRune(x)
	}
	return b.String(), true
}

// text is the plain text of f, with each <sup>'s text written by sup.
func (f Fragment) text(sup func(string) string) string {
	return f.textWith(sup, func(s string) string { return s })
}

// textWith is the plain text of f, with each <sup>'s and <sub>'s text
// written by sup and sub.
func (f Fragment) textWith(sup, sub func(string) string) string {
	var b strings.Builder
	var walk func(n *node)
	walk = func(n *node) {
		if n.tag == "" {
			b.WriteString(strings.ReplaceAll(n.text, nbspPair, "  "))
			return
		}
		switch n.tag {
		case "sup":
			b.WriteString(sup(n.plain()))
			return
		case "sub":
			b.WriteString(sub(n.plain()))
			return
		}
		for _, k := range n.kids {
			walk(k)
		}
		if n.tag == "div" && n.class == "csl-left-margin" {
			b.WriteString(" ")
		}
	}
	walk(f.parse())
	return cleanSpace(b.String())
}

// NoPrintedForm is what citeproc-js writes for a citation, or a numbered
// bibliography entry, of an item the style prints nothing for (Zotero
// shows the same); noPrintedFormShort is its other form.
const (
	NoPrintedForm      = "[CSL STYLE ERROR: reference with no printed form.]"
	noPrintedFormShort = "[NO_PRINTED_FORM]"
)

// PrintsNothing reports whether the fragment shows nothing of its item:
// it is empty apart from a numbered entry's label (its csl-left-margin
// block), or it is citeproc-js's NoPrintedForm.
func (f Fragment) PrintsNothing() bool {
	s := string(f)
	if strings.Contains(s, NoPrintedForm) || strings.Contains(s, noPrintedFormShort) {
		return true
	}
	var walk func(n *node) bool // whether n shows any text
	walk = func(n *node) bool {
		if n.tag == "" {
			return strings.TrimSpace(n.text) != "" // TrimSpace takes no-break spaces too
		}
		if n.tag == "div" && n.class == "csl-left-margin" {
			return false
		}
		for _, k := range n.kids {
			if walk(k) {
				return true
			}
		}
		return false
	}
	return !walk(f.parse())
}

// Superscript reports whether the whole fragment is superscript: a
// superscript style's in-text citation ("<sup>1,2</sup>"), which follows
// its word without a space.
func (f Fragment) Superscript() bool {
	some := false
	for _, k := range f.parse().kids {
		switch {
		case k.tag == "sup":
			some = true
		case k.tag == "" && strings.TrimSpace(k.text) == "":
		default:
			return false
		}
	}
	return some
}

// plain is the text under n, without markup.
func (n *node) plain() string {
	if n.tag == "" {
		return n.text
	}
	var b strings.Builder
	for _, k := range n.kids {
		b.WriteString(k.plain())
	}
	return b.String()
}

// supLetters are the superscript forms of the letters citeproc-js writes
// as <sup> (its CSL.SUPERSCRIPTS, read backwards): the ordinal indicators
// ª and º for a and o, as the locales write them, and modifier letters
// for the rest (Unicode has none for q, C, F, Q, S, V, X, Y, Z).
var supLetters = map[rune]rune{
	'a': 'ª', 'o': 'º', 'b': 'ᵇ', 'd': 'ᵈ', 'e': 'ᵉ', 'g': 'ᵍ', 'h': 'ʰ', 'i': 'ⁱ', 'j': 'ʲ',
	'k': 'ᵏ', 'l': 'ˡ', 'm': 'ᵐ', 'n': 'ⁿ', 'p': 'ᵖ', 'r': 'ʳ', 's': 'ˢ', 't': 'ᵗ', 'u': 'ᵘ',
	'v': 'ᵛ', 'w': 'ʷ', 'x': 'ˣ', 'y': 'ʸ',
	'A': 'ᴬ', 'B': 'ᴮ', 'D': 'ᴰ', 'E': 'ᴱ', 'G': 'ᴳ', 'H': 'ᴴ', 'I': 'ᴵ', 'J': 'ᴶ', 'K': 'ᴷ',
	'L': 'ᴸ', 'M': 'ᴹ', 'N': 'ᴺ', 'O': 'ᴼ', 'P': 'ᴾ', 'R': 'ᴿ', 'T': 'ᵀ', 'U': 'ᵁ', 'W': 'ᵂ',
}

// SuperscriptLetters returns s in superscript characters when s is
// letters that all have one (supLetters), as Text prints a <sup>; else s
// and false.
func SuperscriptLetters(s string) (string, bool) { return mapAll(s, supLetters) }

// supOthers are the superscript forms of the characters other than
// letters that a superscript citation can hold: digits, signs and
// parentheses.
var supOthers = map[rune]rune{
	'0': '⁰', '1': '¹', '2': '²', '3': '³', '4': '⁴', '5': '⁵', '6': '⁶', '7': '⁷', '8': '⁸', '9': '⁹',
	'+': '⁺', '-': '⁻', '−': '⁻', '=': '⁼', '(': '⁽', ')': '⁾',
}

// subOthers are the subscript forms of digits, signs and parentheses.
var subOthers = map[rune]rune{
	'0': '₀', '1': '₁', '2': '₂', '3': '₃', '4': '₄', '5': '₅', '6': '₆', '7': '₇', '8': '₈', '9': '₉',
	'+': '₊', '-': '₋', '−': '₋', '=': '₌', '(': '₍', ')': '₎',
}

// InlineSuperscript writes s, the text of a superscript in running text,
// in superscript characters: digits, + − = ( ) and the letters that have
// one (supLetters); the commas, semicolons, periods, dashes and spaces
// between them are kept as they are ("1,3–5" → "¹,³–⁵"), since Unicode has
// no superscript comma and a reader takes them for the superscript's
// own. A superscript with any other character, or with no character that
// has a superscript form, is written "^(s)", as pandoc's plain text
// writes it ("^(q)", "^(Fig. 2)").
func InlineSuperscript(s string) string {
	if strings.TrimSpace(s) == "" {
		return s
	}
	var b strings.Builder
	some := false
	for _, r := range s {
		if sup, ok := supLetters[r]; ok {
			b.WriteRune(sup)
			some = true
			continue
		}
		if sup, ok := supOthers[r]; ok {
			b.WriteRune(sup)
			some = true
			continue
		}
		if !strings.ContainsRune(",;.–— \u00a0", r) {
			return "^(" + s + ")"
		}
		b.WriteRune(r)
	}
	if !some {
		return "^(" + s + ")"
	}
	return b.String()
}

var spaceRunRe = regexp.MustCompile(`[ \t]*\n[ \t\n]*`)

// cleanSpace trims and turns the line breaks of the HTML layout into
// spaces.
func cleanSpace(s string) string {
	return strings.TrimSpace(spaceRunRe.ReplaceAllString(s, " "))
}

// urlRe finds http(s) URLs in text; trailing punctuation is trimmed off.
var urlRe = regexp.MustCompile(`https?://[^\s<>"]+`)

// trimURL drops sentence punctuation after a URL and an unbalanced ")".
func trimURL(u string) string {
	for len(u) > 0 {
		c := u[len(u)-1]
		if strings.IndexByte(".,;:!?'", c) >= 0 {
			u = u[:len(u)-1]
			continue
		}
		if c == ')' && strings.Count(u, "(") < strings.Count(u, ")") {
			u = u[:len(u)-1]
			continue
		}
		break
	}
	return u
}

// splitURLs splits text into runs, marking the http(s) URLs.
func splitURLs(s string, emit func(part string, isURL bool)) {
	for {
		loc := urlRe.FindStringIndex(s)
		if loc == nil {
			if s != "" {
				emit(s, false)
			}
			return
		}
		u := trimURL(s[loc[0]:loc[1]])
		if loc[0] > 0 {
			emit(s[:loc[0]], false)
		}
		if len(u) <= len("https://") {
			emit(u, false)
		} else {
			emit(u, true)
		}
		s = s[loc[0]+len(u):]
	}
}

// mdEscaper escapes Markdown's inline syntax characters in text.
var mdEscaper = strings.NewReplacer(`\`, `\\`, "`", "\\`", `*`, `\*`, `_`, `\_`, `<`, `\<`, `>`, `\>`, `~`, `\~`, `|`, `\|`)

// entityRe is an HTML character reference that Markdown would decode.
var entityRe = regexp.MustCompile(`&(#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);`)

func mdText(s string) string {
	s = mdEscaper.Replace(strings.ReplaceAll(s, nbspPair, "  "))
	return entityRe.ReplaceAllString(s, `\&$1;`)
}

// linkRe finds "]" where Markdown would start a link's destination or
// reference.
var linkRe = regexp.MustCompile(`(^|[^\\])(\\\\)*\](\(|\[|:)`)

// Markdown is the fragment as Markdown: italics *…*, bold **…**,
// superscripts as <sup>, http(s) URLs as <autolinks>; every other
// character of Markdown syntax in the text is escaped, so titles such as
// "<img src=x onerror=…>" or "[x](javascript:…)" stay text.
func (f Fragment) Markdown() string {
	var walk func(n *node) string
	walk = func(n *node) string {
		var b strings.Builder
		switch n.tag {
		case "":
			splitURLs(n.text, func(part string, isURL bool) {
				if isURL {
					b.WriteString("<" + strings.NewReplacer(" ", "%20", "<", "%3C", ">", "%3E").Replace(part) + ">")
				} else {
					b.WriteString(mdText(part))
				}
			})
			return b.String()
		case "i", "b":
			mark := "*"
			if n.tag == "b" {
				mark = "**"
			}
			for _, k := range n.kids {
				b.WriteString(walk(k))
			}
			content := b.String()
			lead := content[:len(content)-len(strings.TrimLeft(content, " "))]
			trail := content[len(strings.TrimRight(content, " ")):]
			if core := strings.TrimSpace(content); core != "" {
				return lead + mark + core + mark + trail
			}
			return content
		case "sup", "sub":
			b.WriteString("<" + n.tag + ">")
			for _, k := range n.kids {
				b.WriteString(walk(k))
			}
			b.WriteString("</" + n.tag + ">")
			return b.String()
		}
		for _, k := range n.kids {
			b.WriteString(walk(k))
		}
		if n.tag == "div" && n.class == "csl-left-margin" {
			b.WriteString(" ")
		}
		return b.String()
	}
	s := cleanSpace(walk(f.parse()))
	s = linkRe.ReplaceAllStringFunc(s, func(m string) string {
		i := strings.LastIndexByte(m, ']')
		return m[:i] + `\` + m[i:]
	})
	// A fragment must not open a block: heading, quote, list, rule.
	if strings.HasPrefix(s, "#") || strings.HasPrefix(s, "+ ") || strings.HasPrefix(s, "- ") || strings.HasPrefix(s, "=") {
		s = `\` + s
	}
	return s
}

// HTML is the fragment as safe HTML: only the engine's own tags (<i>, <b>,
// <sup>, <sub>, small caps, the layout <div>s with their csl-* classes)
// are kept, every text is escaped, and http(s) URLs become links.
func (f Fragment) HTML() string {
	var b strings.Builder
	var walk func(n *node)
	walk = func(n *node) {
		switch n.tag {
		case "":
			splitURLs(n.text, func(part string, isURL bool) {
				e := html.EscapeString(part)
				if isURL {
					b.WriteString(`<a href="` + e + `">` + e + `</a>`)
				} else {
					b.WriteString(e)
				}
			})
			return
		case "root", "span", "a":
			for _, k := range n.kids {
				walk(k)
			}
			return
		case "sc":
			b.WriteString(`<span style="font-variant:small-caps">`)
		case "div":
			if n.class == "csl-entry" || n.class == "csl-bib-body" {
				// The caller wraps entries itself.
				for _, k := range n.kids {
					walk(k)
				}
				return
			}
			b.WriteString(`<div class="` + html.EscapeString(n.class) + `">`)
		default:
			b.WriteString("<" + n.tag + ">")
		}
		for _, k := range n.kids {
			walk(k)
		}
		switch n.tag {
		case "sc":
			b.WriteString("</span>")
		case "div":
			b.WriteString("</div>")
		default:
			b.WriteString("</" + n.tag + ">")
		}
	}
	walk(f.parse())
	return strings.TrimSpace(spaceRunRe.ReplaceAllString(b.String(), ""))
}
