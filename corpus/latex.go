package corpus

import (
	"bytes"
	"html"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// LaTeXToUnicode turns the LaTeX markup found in BibTeX field values into
// plain Unicode text, NFC-normalised, with every run of whitespace collapsed
// to one space and the ends trimmed. It never fails: what it does not
// understand is kept as text.
//
// Supported:
//   - accents in every common form: {\'e}, \'{e}, \'e, {\'{O}}, \"{o}, \"o,
//     \` \^ \~ \= \. and the letter accents \u \v \H \c \r \k \d \b \t
//     (e.g. \u{g}, \v s, \c{c}); on \i and \j they give the dotted letter
//     (\'{\i} → í);
//   - special letters \ss ß, \o ø, \O Ø, \ae æ, \AE Æ, \oe œ, \OE Œ, \aa å,
//     \AA Å, \l ł, \L Ł, \i ı, \j ȷ, \dh ð, \th þ, \ng ŋ, … also as {\ss}
//     or \ss{};
//   - escapes \& \% \$ \# \_ \{ \} and text symbols (\textendash,
//     \textemdash, \texttimes ×, \textquoteright ’, \ldots …, …);
//   - "--" → en dash, "---" → em dash, a pair of backquotes → “, a pair of
//     apostrophes → ”, and "~" (tie) → a plain space (not U+00A0, so that
//     search treats it like any space);
//   - formatting commands (\emph{x}, \textit{x}, \textbf{x}, \textsc{x},
//     \url{x}, \mathrm{x}, …) and declarations ({\em x}, {\bf x}) keep only
//     their text; protective braces ({BERT}, {{Deep}}) are removed;
//   - math $…$: the content is kept, Greek letters and common symbols
//     become Unicode (\epsilon → ε, \alpha → α, \leq → ≤, \times → ×),
//     \frac{a}{b} → a/b, other commands lose their backslash (\log → log).
//     A "$" that looks like money ("$15 billion", "$1's") is kept as is.
//
// An unknown command followed by a {group} is dropped and the group's text
// kept (\foo{bar} → bar); an unknown command without an argument keeps its
// name without the backslash (\LaTeX → LaTeX).
func LaTeXToUnicode(s string) string {
	if plainText(s) {
		return s
	}
	var l latexConv
	l.out = make([]byte, 0, len(s)+8)
	l.run(s)
	return finishText(l.out)
}

// plainText reports whether s needs no conversion at all: no LaTeX special
// characters, no "--" and no pair of backquotes or apostrophes, single spaces only, no leading or
// trailing space, and ASCII (which is always NFC).
func plainText(s string) bool {
	prev := byte(' ')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\\', '{', '}', '$', '~', '`':
			return false
		case '-', '\'':
			if prev == c {
				return false
			}
		case ' ':
			if prev == ' ' {
				return false
			}
		case '\t', '\n', '\r', '\v', '\f':
			return false
		default:
			if c >= utf8.RuneSelf {
				return false
			}
		}
		prev = c
	}
	return prev != ' ' || len(s) == 0
}

// finishText collapses whitespace runs (any Unicode space) into one ASCII
// space, trims both ends and NFC-normalises non-ASCII text.
func finishText(b []byte) string {
	out := make([]byte, 0, len(b))
	space := false
	ascii := true
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			i++
			if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' {
				space = true
				continue
			}
			if space && len(out) > 0 {
				out = append(out, ' ')
			}
			space = false
			out = append(out, c)
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if unicode.IsSpace(r) {
			space = true
			i += n
			continue
		}
		if space && len(out) > 0 {
			out = append(out, ' ')
		}
		space = false
		ascii = false
		if r == utf8.RuneError && n == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, b[i:i+n]...)
		}
		i += n
	}
	if ascii {
		return string(out)
	}
	return norm.NFC.String(string(out))
}

// collapseSpace collapses whitespace like finishText, without any other
// conversion; it is used for values that are not LaTeX text (URLs, DOIs).
func collapseSpace(s string) string {
	if plainSpace(s) {
		return s
	}
	return finishText([]byte(s))
}

func plainSpace(s string) bool {
	prev := byte(' ')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' && prev == ' ':
			return false
		case c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' || c >= utf8.RuneSelf:
			return false
		}
		prev = c
	}
	return prev != ' ' || len(s) == 0
}

// HTML in ACM Digital Library exports: titles and abstracts carry HTML
// entities (&amp;, &lt;, &gt;, &nbsp;, numeric ones) and simple inline tags
// (<i>, <em>, <sup>, <sub>, <b>, <u>, <p>, <a href=…>, …). htmlTagRe only
// matches a fixed list of tag names, so that text such as "k<n and m>2" is
// never taken for a tag.
var htmlTagRe = regexp.MustCompile(`(?i)</?(?:a|abbr|b|big|bold|br|cite|code|div|em|emphasis|equationsource|font|h[1-6]|hr|i|inline|inlineequation|italic|li|literal|mml:[a-z]+|ol|p|pre|s|sc|scp|small|span|strike|strong|sub|subscript|sup|superscript|tex|tt|u|ul|underline)(?:\s[^<>]*)?/?>`)

// stripHTML removes simple HTML tags and decodes HTML entities.
func stripHTML(s string) string {
	if strings.IndexByte(s, '<') >= 0 {
		s = htmlTagRe.ReplaceAllString(s, "")
	}
	return decodeEntities(s)
}

// decodeEntities decodes HTML entities (&amp; → &).
func decodeEntities(s string) string {
	if strings.IndexByte(s, '&') >= 0 {
		s = html.UnescapeString(s)
	}
	return s
}

// accentMarks maps a LaTeX accent command to its combining character.
var accentMarks = map[string]rune{
	"'": '\u0301', "`": '\u0300', "^": '\u0302', "\"": '\u0308', "~": '\u0303',
	"=": '\u0304', ".": '\u0307', "u": '\u0306', "v": '\u030C', "H": '\u030B',
	"c": '\u0327', "r": '\u030A', "k": '\u0328', "d": '\u0323', "b": '\u0331',
	"t": '\u0361',
}

// latexLetters maps control words that are letters to their Unicode
// letter. The space after them is swallowed, as LaTeX does
// ("Bj\o rn" → "Bjørn").
var latexLetters = map[string]string{
	"ss": "ß", "SS": "SS", "o": "ø", "O": "Ø", "ae": "æ", "AE": "Æ", "oe": "œ", "OE": "Œ",
	"aa": "å", "AA": "Å", "l": "ł", "L": "Ł", "i": "ı", "j": "ȷ", "dh": "ð", "DH": "Ð",
	"th": "þ", "TH": "Þ", "ng": "ŋ", "NG": "Ŋ", "dj": "đ", "DJ": "Đ",
}

// latexSymbols maps other control words to the text they produce; the
// space after them is kept, except after the \text… ones (as LaTeX does;
// the math symbols and names like \LaTeX read better with it).
var latexSymbols = map[string]string{
	// text symbols
	"textendash": "–", "textemdash": "—", "texttimes": "×", "textquoteright": "’",
	"textquoteleft": "‘", "textquotedblleft": "“", "textquotedblright": "”",
	"textquotedbl": "\"", "textregistered": "®", "texttrademark": "™", "textcopyright": "©",
	"copyright": "©", "textdegree": "°", "textbullet": "•", "textellipsis": "…",
	"ldots": "…", "dots": "…", "cdots": "⋯", "textasciitilde": "~", "textbackslash": "\\",
	"textunderscore": "_", "textbar": "|", "textless": "<", "textgreater": ">",
	"textperiodcentered": "·", "textmu": "µ", "textpm": "±", "textdiv": "÷",
	"textonehalf": "½", "textsection": "§", "S": "§", "P": "¶", "dag": "†", "ddag": "‡",
	"euro": "€", "texteuro": "€", "pounds": "£", "textsterling": "£", "yen": "¥",
	"textexclamdown": "¡", "textquestiondown": "¿", "guillemotleft": "«",
	"guillemotright": "»", "LaTeX": "LaTeX", "TeX": "TeX", "BibTeX": "BibTeX",
	"slash": "/", "textslash": "/", "space": " ", "quad": " ", "qquad": " ",
	"emdash": "—", "endash": "–", "hyphen": "-", // biblatex's \hyphen, common \emdash
	"Dash": "—", // TUGboat's and Beebe's bibliographies' spaced em dash

	"newline": " ", "par": " ", "linebreak": " ", "hfill": " ",
	// math
	"times": "×", "cdot": "·", "pm": "±", "mp": "∓", "div": "÷", "leq": "≤", "le": "≤",
	"leqslant": "≤", "geq": "≥", "ge": "≥", "geqslant": "≥", "neq": "≠", "ne": "≠",
	"approx": "≈", "sim": "∼", "simeq": "≃", "equiv": "≡", "propto": "∝", "infty": "∞",
	"in": "∈", "notin": "∉", "subset": "⊂", "subseteq": "⊆", "supset": "⊃", "cup": "∪",
	"cap": "∩", "emptyset": "∅", "forall": "∀", "exists": "∃", "neg": "¬", "wedge": "∧",
	"vee": "∨", "to": "→", "rightarrow": "→", "leftarrow": "←", "Rightarrow": "⇒",
	"Leftarrow": "⇐", "leftrightarrow": "↔", "mapsto": "↦", "uparrow": "↑",
	"downarrow": "↓", "partial": "∂", "nabla": "∇", "sum": "∑", "prod": "∏", "int": "∫",
	"sqrt": "√", "ell": "ℓ", "circ": "∘", "bullet": "•", "star": "⋆", "ast": "∗",
	"langle": "⟨", "rangle": "⟩", "lfloor": "⌊", "rfloor": "⌋", "lceil": "⌈", "rceil": "⌉",
	"prime": "′", "degree": "°", "mid": "|", "vert": "|", "lbrace": "{", "rbrace": "}",
	"hbar": "ℏ", "aleph": "ℵ", "rhd": "⊳", "lhd": "⊲",
	// Greek
	"alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "eps": "ε",
	"varepsilon": "ε", "zeta": "ζ", "eta": "η", "theta": "θ", "vartheta": "ϑ", "iota": "ι",
	"kappa": "κ", "lambda": "λ", "mu": "μ", "nu": "ν", "xi": "ξ", "pi": "π", "varpi": "ϖ",
	"rho": "ρ", "varrho": "ϱ", "sigma": "σ", "varsigma": "ς", "tau": "τ", "upsilon": "υ",
	"phi": "φ", "varphi": "φ", "chi": "χ", "psi": "ψ", "omega": "ω",
	"Gamma": "Γ", "Delta": "Δ", "Theta": "Θ", "Lambda": "Λ", "Xi": "Ξ", "Pi": "Π",
	"Sigma": "Σ", "Upsilon": "Υ", "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω",
}

// latexSkips are spacing commands followed by a dimension; both are
// dropped.
var latexSkips = map[string]bool{"kern": true, "mkern": true, "hskip": true, "mskip": true, "vskip": true}

// dimensionRe matches a TeX dimension at the start of a string.
var dimensionRe = regexp.MustCompile(`^[-+]?(?:\d+\.?\d*|\.\d+) ?(?:em|ex|pt|mu|cm|mm|in|sp|bp|pc|dd|cc)`)

// joinsWords are the latexSymbols that join the words around them: the
// space after them is swallowed, as LaTeX does ("A\slash B" → "A/B",
// "a\hyphen b" → "a-b").
var joinsWords = map[string]bool{"slash": true, "hyphen": true, "emdash": true, "endash": true, "Dash": true}

// latexDeclarations are commands that produce nothing themselves (font
// switches, math sizing); they are dropped with the space after them.
var latexDeclarations = map[string]bool{
	"em": true, "it": true, "bf": true, "sc": true, "rm": true, "tt": true, "sf": true,
	"sl": true, "up": true, "cal": true, "bfseries": true, "itshape": true, "scshape": true,
	"mdseries": true, "upshape": true, "slshape": true, "rmfamily": true, "sffamily": true,
	"ttfamily": true, "normalfont": true, "tiny": true, "scriptsize": true,
	"footnotesize": true, "small": true, "normalsize": true, "large": true, "Large": true,
	"LARGE": true, "huge": true, "Huge": true, "relax": true, "protect": true,
	"displaystyle": true, "textstyle": true, "scriptstyle": true, "left": true,
	"right": true, "big": true, "Big": true, "bigl": true, "bigr": true, "Bigl": true,
	"Bigr": true, "limits": true, "nolimits": true, "boldmath": true, "unboldmath": true,
	"noindent": true, "nobreak": true, "allowbreak": true, "xspace": true, "null": true,
	"ignorespaces": true, "unskip": true,
}

// latexDropArg are commands whose first {argument} is not text: it is
// dropped with the command (\href{url}{text} → text).
var latexDropArg = map[string]bool{
	"href": true, "noopsort": true, "hspace": true, "vspace": true, "label": true,
	"color": true,
}

// groupCloser is text to write when the {group} opened at depth closes
// (the "/" of \frac{a}{b}, the closing quote of \enquote{x}).
type groupCloser struct {
	depth int
	text  string
	cut   int // if > 0, cut the output back to length cut-1 (a dropped argument)
}

type latexConv struct {
	out     []byte
	depth   int           // current brace depth
	accents []rune        // combining marks waiting for their letter, outermost first
	accDeps []int         // brace depth of each waiting accent's {argument}, -1 for none
	closers []groupCloser // text due when a group closes
	inMath  int           // length of the "$" or "$$" that opened the current math span; 0 outside

	// Rich mode (LaTeXToCSL) writes markers (see casing.go) for the
	// groups that protect case, formatting commands and math.
	rich         bool
	kinds        []uint8 // per open group: its markers (gProt, gItalic, …)
	argPending   bool    // the next "{" is a command's argument, not a protecting group
	argKind      uint8   // the markers of that argument
	singleQuotes int     // `single quotes open
}

// nextIsAlnum reports whether s[i:] starts with a letter or digit.
func nextIsAlnum(s string, i int) bool {
	if i >= len(s) {
		return false
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

func (l *latexConv) run(s string) {
	for i := 0; i < len(s); {
		c := s[i]
		switch c {
		case '\\':
			i = l.command(s, i)
		case '{':
			l.depth++
			if l.rich {
				k := uint8(gProt)
				if l.argPending {
					k, l.argPending = l.argKind, false
				}
				l.openGroup(k)
			}
			i++
		case '}':
			l.closeGroup()
			i++
		case '$':
			i = l.dollar(s, i)
		case '~':
			if l.rich {
				l.emitString(string(mNBSP))
			} else {
				l.emitString(" ")
			}
			i++

		case '-':
			switch {
			case strings.HasPrefix(s[i:], "---"):
				l.emitString("—")
				i += 3
			case strings.HasPrefix(s[i:], "--"):
				l.emitString("–")
				i += 2
			default:
				l.emitByte('-')
				i++
			}
		case '`':
			switch {
			case strings.HasPrefix(s[i:], "``"):
				l.emitString("“")
				i += 2
			case l.rich:
				// `x' is a quotation, which CSL-JSON writes with double
				// quotes (the processor alternates them), as pandoc does;
				// latexToCSL pairs the marks.
				l.emitString(string(mQuoteOpen))
				l.singleQuotes++
				i++
			default:
				l.emitString("‘")
				i++
			}
		case '\'':
			switch {
			case strings.HasPrefix(s[i:], "''"):
				l.emitString("”")
				i += 2
			case l.rich && l.singleQuotes > 0 && !nextIsAlnum(s, i+1):
				l.emitString(string(mQuoteClose))
				l.singleQuotes--
				i++
			case l.rich:
				l.emitString("’")
				i++
			default:
				l.emitByte('\'')
				i++
			}
		default:
			if c < utf8.RuneSelf {
				if isSpaceByte(c) && len(l.accents) > 0 {
					// "\'{ e}": the accent waits for the letter.
					l.out = append(l.out, ' ')
				} else {
					l.emitByte(c)
				}
				i++
				continue
			}
			r, n := utf8.DecodeRuneInString(s[i:])
			l.emitRune(r)
			i += n
		}
	}
}

// closeGroup handles "}": it writes the closers due (\frac's "/") and
// ends accent arguments that got no letter ("\^{}" gives "^").
func (l *latexConv) closeGroup() {
	if n := len(l.closers); n > 0 && l.closers[n-1].depth == l.depth {
		c := l.closers[n-1]
		l.closers = l.closers[:n-1]
		if c.cut > 0 && c.cut-1 <= len(l.out) {
			l.out = l.out[:c.cut-1]
		}
		l.out = append(l.out, c.text...)
	}
	for n := len(l.accents); n > 0 && (l.accDeps[n-1] == l.depth || l.accDeps[n-1] < 0); n-- {
		if l.accDeps[n-1] == l.depth {
			if name := accentName(l.accents[n-1]); !isLetter(name[0]) {
				l.out = append(l.out, name...)
			}
		}
		l.accents, l.accDeps = l.accents[:n-1], l.accDeps[:n-1]
	}
	if l.depth > 0 {
		l.depth--
	}
	if l.rich && len(l.kinds) > 0 {
		k := l.kinds[len(l.kinds)-1]
		l.kinds = l.kinds[:len(l.kinds)-1]
		l.closeMarkers(k)
	}
}

// accentName returns the LaTeX command of a combining mark.
func accentName(mark rune) string {
	for k, v := range accentMarks {
		if v == mark {
			return k
		}
	}
	return "?"
}

// dollar handles "$" at s[i]: the start or end of a math span, or money.
func (l *latexConv) dollar(s string, i int) int {
	if l.inMath > 0 {
		n := l.inMath
		l.inMath = 0
		// Spaces inside math are not text: "$ 5 \times 7 $" is "5 × 7".
		l.out = bytes.TrimRight(l.out, " \t\n\r")
		if l.rich {
			l.out = utf8.AppendRune(l.out, mMathClose)
		}
		if n == 2 && strings.HasPrefix(s[i:], "$$") {
			return i + 2
		}
		return i + 1
	}
	if strings.HasPrefix(s[i:], "$$") {
		if strings.Contains(s[i+2:], "$$") {
			l.inMath = 2
			if l.rich {
				l.out = utf8.AppendRune(l.out, mMathOpen)
			}
		}
		return i + 2
	}
	end := -1
	for j := i + 1; j < len(s); j++ {
		if s[j] == '$' && s[j-1] != '\\' {
			end = j
			break
		}
	}
	if end < 0 || looksLikeMoney(s[i+1:end]) {
		l.emitByte('$')
		return i + 1
	}
	l.inMath = 1
	if l.rich {
		l.out = utf8.AppendRune(l.out, mMathOpen)
	}
	return skipSpaces(s, i+1)
}

// looksLikeMoney reports whether the text between two dollar signs is
// rather prose between two amounts of money ("$5 and $10", "$1's easy,
// cheap … $") than math: it starts with a digit and contains a space, or
// it is very long.
func looksLikeMoney(span string) bool {
	if span == "" {
		return true
	}
	if span[0] >= '0' && span[0] <= '9' {
		return strings.ContainsAny(span, " \t\n") || len(span) > 20
	}
	return len(span) > 300
}

// command handles a backslash at s[i] and returns the index after it.
func (l *latexConv) command(s string, i int) int {
	j := i + 1
	if j >= len(s) {
		return j // lone trailing backslash
	}
	c := s[j]
	if !isLetter(c) {
		// control symbol
		sym := s[j : j+1]
		if _, ok := accentMarks[sym]; ok {
			return l.accent(s, j+1, sym)
		}
		switch c {
		case '&', '%', '$', '#', '_', '{', '}':
			l.emitByte(c)
		case '\\', ' ', '\t', '\n', '\r', ',', ';', ':', '!', '>':
			l.emitString(" ")
		case '-', '/', '@', '(', ')', '[', ']':
			// hyphenation hint, italic correction, math delimiters: nothing
		default:
			if c >= utf8.RuneSelf {
				r, n := utf8.DecodeRuneInString(s[j:])
				l.emitRune(r)
				return j + n
			}
			l.emitByte(c)
		}
		return j + 1
	}
	for j < len(s) && isLetter(s[j]) {
		j++
	}
	name := s[i+1 : j]
	if _, ok := accentMarks[name]; ok {
		return l.accent(s, j, name) // \u{g}, \v s, \c{c}
	}
	if letter, ok := latexLetters[name]; ok {
		l.emitString(letter)
		return skipSpaces(s, j)
	}
	if sym, ok := latexSymbols[name]; ok {
		l.emitString(sym)
		if strings.HasPrefix(name, "text") || joinsWords[name] {
			return skipSpaces(s, j) // "\textendash b" → "–b", as LaTeX does
		}
		return j
	}
	if latexDeclarations[name] {
		if l.rich {
			l.declare(name)
		}
		return skipSpaces(s, j)
	}
	if latexSkips[name] {
		// \kern-.15em, \hskip 2pt: the command and its dimension
		k := skipSpaces(s, j)
		if m := dimensionRe.FindStringIndex(s[k:]); m != nil {
			return skipSpaces(s, k+m[1])
		}
		return skipSpaces(s, j)
	}
	if latexDropArg[name] {
		if k := skipSpaces(s, j); k < len(s) && s[k] == '{' {
			// The group's text is written, then cut when it closes.
			l.closers = append(l.closers, groupCloser{depth: l.depth + 1, cut: len(l.out) + 1})
			l.argPending, l.argKind = l.rich, 0
			return k
		}
		return j
	}
	star := j < len(s) && s[j] == '*' && j+1 < len(s) && s[j+1] == '{' // \enquote*{x}
	if star {
		j++
	}
	if k := skipSpaces(s, j); k > j && k < len(s) && s[k] == '{' && takesTextArg(name) {
		j = k // "\textsf {amsrefs}": TeX skips the spaces before an argument
	}
	if j < len(s) && s[j] == '{' {
		switch name {
		case "frac", "dfrac", "tfrac":
			l.closers = append(l.closers, groupCloser{depth: l.depth + 1, text: "/"})
		case "enquote", "mkbibquote":
			open, closeQ := "“", "”"
			if star {
				open, closeQ = "‘", "’" // the inner quotation marks
			}
			l.emitString(open)
			l.closers = append(l.closers, groupCloser{depth: l.depth + 1, text: closeQ})
		default:
			if argMarkers[name] == 0 && !star && strings.HasPrefix(s[j:], "{}") {
				// An unknown macro with an empty group is a logo or word
				// (\AmSTeX{}, \MF{}): its name, as without the group.
				l.emitString(name)
				return j + 2
			}
		}
		if l.rich {
			l.argPending, l.argKind = true, argMarkers[name]
		}
		// \emph{x}, \textbf{x}, \url{x}, \mathcal{O}, unknown \foo{x}: keep x.
		return j
	}
	l.emitString(name)
	return j
}

// accent handles the accent command sym whose argument starts at s[j].
func (l *latexConv) accent(s string, j int, sym string) int {
	mark := accentMarks[sym]
	k := j
	if isLetter(sym[0]) || (k < len(s) && (s[k] == ' ' || s[k] == '\t')) {
		k = skipSpaces(s, k)
	}
	switch {
	case k >= len(s) || s[k] == '}':
		// No argument: the symbol forms stand for themselves ("\^").
		if !isLetter(sym[0]) {
			l.emitString(sym)
		}
		return k
	case s[k] == '{':
		l.depth++
		if l.rich {
			l.openGroup(0)
		}
		l.accents = append(l.accents, mark)
		l.accDeps = append(l.accDeps, l.depth)
		return k + 1
	default:
		l.accents = append(l.accents, mark)
		l.accDeps = append(l.accDeps, -1)
		return k
	}
}

func (l *latexConv) emitString(t string) {
	if len(l.accents) > 0 && t != "" {
		r, n := utf8.DecodeRuneInString(t)
		l.emitRune(r)
		l.out = append(l.out, t[n:]...)
		return
	}
	l.out = append(l.out, t...)
}

func (l *latexConv) emitByte(c byte) {
	if len(l.accents) > 0 {
		l.emitRune(rune(c))
		return
	}
	l.out = append(l.out, c)
}

// emitRune writes r followed by the combining marks of the accents waiting
// for a letter, innermost first. An accent with a {group} argument applies
// to the group's first character only.
func (l *latexConv) emitRune(r rune) {
	if len(l.accents) == 0 {
		l.out = utf8.AppendRune(l.out, r)
		return
	}
	switch r {
	case 'ı': // \'{\i} → í
		r = 'i'
	case 'ȷ':
		r = 'j'
	}
	l.out = utf8.AppendRune(l.out, r)
	for n := len(l.accents) - 1; n >= 0; n-- {
		l.out = utf8.AppendRune(l.out, l.accents[n])
	}
	l.accents, l.accDeps = l.accents[:0], l.accDeps[:0]
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isSpaceByte(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func skipSpaces(s string, i int) int {
	for i < len(s) && isSpaceByte(s[i]) {
		i++
	}
	return i
}

// Group markers of rich mode: what a {group} stands for.
const (
	gProt      = 1 << iota // a protecting group: its case is kept
	gItalic                // \emph{…}, \textit{…}, {\em …}
	gBold                  // \textbf{…}, {\bf …}
	gSmallCaps             // \textsc{…}, {\sc …}
	gSup                   // \textsuperscript{…}
	gSub                   // \textsubscript{…}
	gURL                   // \url{…}: kept as written, like math
)

// textArgCommands are commands that print their argument as text (a font
// or box) and are not in argMarkers.
var textArgCommands = map[string]bool{
	"textsf": true, "texttt": true, "textrm": true, "textup": true, "textmd": true, "textnormal": true,
	"mbox": true, "hbox": true, "underline": true, "uline": true,
}

// takesTextArg reports whether the command name takes an argument whose
// text is kept, so that spaces between it and its "{" are skipped.
func takesTextArg(name string) bool {
	switch name {
	case "enquote", "mkbibquote", "frac", "dfrac", "tfrac":
		return true
	}
	return argMarkers[name] != 0 || textArgCommands[name]
}

// argMarkers are the formatting commands whose {argument} rich mode marks.
var argMarkers = map[string]uint8{
	"emph": gItalic, "textit": gItalic, "textsl": gItalic, "mathit": gItalic,
	"mkbibemph": gItalic, "mkbibitalic": gItalic, "mkbibbold": gBold,
	"textbf": gBold, "mathbf": gBold, "textsc": gSmallCaps,
	"textsuperscript": gSup, "textsubscript": gSub, "url": gURL,
}

// markerPairs maps a group kind to its open and close markers.
var markerPairs = [...]struct {
	kind        uint8
	open, close rune
}{
	{gProt, mProtOpen, mProtClose}, {gItalic, mItalicOpen, mItalicClose},
	{gBold, mBoldOpen, mBoldClose}, {gSmallCaps, mSmallCapsOpen, mSmallCapsClose},
	{gSup, mSupOpen, mSupClose}, {gSub, mSubOpen, mSubClose}, {gURL, mMathOpen, mMathClose},
}

func (l *latexConv) openGroup(k uint8) {
	l.kinds = append(l.kinds, k)
	for _, m := range markerPairs {
		if k&m.kind != 0 {
			l.out = utf8.AppendRune(l.out, m.open)
		}
	}
}

func (l *latexConv) closeMarkers(k uint8) {
	for i := len(markerPairs) - 1; i >= 0; i-- {
		if m := markerPairs[i]; k&m.kind != 0 {
			l.out = utf8.AppendRune(l.out, m.close)
		}
	}
}

// declare applies a font declaration ({\em …}, {\bf …}) to the innermost
// group; outside a group it has no effect.
func (l *latexConv) declare(name string) {
	var k uint8
	switch name {
	case "em", "it", "sl", "itshape", "slshape":
		k = gItalic
	case "bf", "bfseries":
		k = gBold
	case "sc", "scshape":
		k = gSmallCaps
	default:
		return
	}
	if len(l.kinds) == 0 || l.kinds[len(l.kinds)-1]&k != 0 {
		return
	}
	l.kinds[len(l.kinds)-1] |= k
	for _, m := range markerPairs {
		if m.kind == k {
			l.out = utf8.AppendRune(l.out, m.open)
		}
	}
}
