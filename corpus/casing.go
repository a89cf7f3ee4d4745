package corpus

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Rich text of BibTeX values on their way to CSL-JSON.
//
// LaTeXToCSL converts a value like LaTeXToUnicode but keeps, as markers
// (private-use characters, never in its input), what CSL-JSON needs: the
// groups that protect case ({BERT}, {\"U}ber), formatting (\emph, \textbf,
// \textsc, \textsuperscript, \textsubscript, {\em …}, and the <i> <b> <sup>
// <sub> tags of ACM exports) and math. sentenceCase works on the markers;
// renderCSL turns them into CSL-JSON's HTML-like markup.

// Markers.
const (
	mProtOpen       = '\uE000'
	mProtClose      = '\uE001'
	mItalicOpen     = '\uE002'
	mItalicClose    = '\uE003'
	mBoldOpen       = '\uE004'
	mBoldClose      = '\uE005'
	mSmallCapsOpen  = '\uE006'
	mSmallCapsClose = '\uE007'
	mSupOpen        = '\uE008'
	mSupClose       = '\uE009'
	mSubOpen        = '\uE00A'
	mSubClose       = '\uE00B'
	mMathOpen       = '\uE00C'
	mMathClose      = '\uE00D'
	mFirst, mLast   = mProtOpen, mMathClose

	// mNBSP stands for a tie (~) until the text is final: finishText
	// would collapse a real no-break space.
	mNBSP = '\uE00E'
	// mQuoteOpen and mQuoteClose are a ` and a ' that may pair into a
	// quotation (“…”); unpaired, they are ‘ and ’.
	mQuoteOpen  = '\uE00F'
	mQuoteClose = '\uE010'
)

// isRichPlaceholder reports whether r is one of the placeholders
// latexToCSL resolves before returning.
func isRichPlaceholder(r rune) bool { return r == mNBSP || r == mQuoteOpen || r == mQuoteClose }

// pairQuotes resolves the quote placeholders: a close pairs with the
// nearest open before it.
func pairQuotes(s string) string {
	rs := []rune(s)
	var open []int
	for i, r := range rs {
		switch r {
		case mQuoteOpen:
			open = append(open, i)
		case mQuoteClose:
			if n := len(open); n > 0 {
				rs[open[n-1]], rs[i] = '“', '”'
				open = open[:n-1]
			} else {
				rs[i] = '’'
			}
		}
	}
	for _, i := range open {
		rs[i] = '‘'
	}
	return string(rs)
}

func isMarker(r rune) bool { return r >= mFirst && r <= mLast }

// markerOpens reports whether marker r opens a span.
func markerOpens(r rune) bool { return (r-mFirst)%2 == 0 }

// markerNocase reports whether the span marker r opens keeps its case.
func markerNocase(r rune) bool {
	switch r {
	case mProtOpen, mSmallCapsOpen, mSupOpen, mSubOpen, mMathOpen:
		return true
	}
	return false
}

// LaTeXToCSL converts a BibTeX value to marked rich text (see above);
// renderCSL or plainText of markers give the final forms.
func latexToCSL(s string) string {
	if strings.ContainsFunc(s, func(r rune) bool { return isMarker(r) || isRichPlaceholder(r) }) {
		s = strings.Map(func(r rune) rune {
			if isMarker(r) || isRichPlaceholder(r) {
				return -1
			}
			return r
		}, s)
	}
	l := latexConv{rich: true, out: make([]byte, 0, len(s)+16)}
	l.run(s)
	if l.inMath > 0 {
		l.out = utf8.AppendRune(l.out, mMathClose)
	}
	for i := len(l.kinds) - 1; i >= 0; i-- {
		l.closeMarkers(l.kinds[i])
	}
	out := finishText(l.out)
	if strings.ContainsRune(out, mNBSP) {
		out = strings.ReplaceAll(out, string(mNBSP), "\u00a0")
	}
	if strings.ContainsRune(out, mQuoteOpen) {
		out = pairQuotes(out)
	}
	return out
}

// stripMarkers removes the markers: the plain text.
func stripMarkers(s string) string {
	if !strings.ContainsFunc(s, isMarker) {
		return s
	}
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if isMarker(r) {
			return -1
		}
		return r
	}, s))
}

// renderCSL turns markers into CSL-JSON markup: <i>, <b>, <sup>, <sub>,
// <span style="font-variant:small-caps;">; protection and math marks are
// dropped (as pandoc writes CSL-JSON). Empty spans are left out.
func renderCSL(s string) string {
	if !strings.ContainsFunc(s, isMarker) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for _, r := range s {
		switch r {
		case mItalicOpen:
			b.WriteString("<i>")
		case mItalicClose:
			b.WriteString("</i>")
		case mBoldOpen:
			b.WriteString("<b>")
		case mBoldClose:
			b.WriteString("</b>")
		case mSmallCapsOpen:
			b.WriteString(`<span style="font-variant:small-caps;">`)
		case mSmallCapsClose:
			b.WriteString("</span>")
		case mSupOpen:
			b.WriteString("<sup>")
		case mSupClose:
			b.WriteString("</sup>")
		case mSubOpen:
			b.WriteString("<sub>")
		case mSubClose:
			b.WriteString("</sub>")
		case mProtOpen, mProtClose, mMathOpen, mMathClose:
		default:
			b.WriteRune(r)
		}
	}
	out := b.String()
	for _, e := range []string{"<i></i>", "<b></b>", "<sup></sup>", "<sub></sub>", `<span style="font-variant:small-caps;"></span>`} {
		out = strings.ReplaceAll(out, e, "")
	}
	return strings.TrimSpace(out)
}

// caseState is where a case transformation is in its text, as in
// citeproc (the CSL processor pandoc uses).
type caseState uint8

const (
	csStart caseState = iota
	csStartSentence
	csAfterWordEnd
	csAfterWordChar
	csAfterSentenceEnd
	csBeforeLastWord
)

// sentenceCase converts marked text to sentence case as pandoc does for
// the titles of English BibTeX entries: a capitalised word ("Learning",
// "A") is lower-cased, except at the start and after sentence-ending
// punctuation (. ? ! :) and a space, where a lower-case or capitalised
// word is capitalised; words in other case (BERT, iPhone, 3D) and text in
// protecting groups, small capitals, superscripts, subscripts and math
// are kept. As in pandoc, the last word of the text, when it is plain text
// without "-" or "/" and follows a space or starts a sentence, is
// lower-cased even after a colon ("Deep learning: overview").
func sentenceCase(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	st := csStart
	// The last word: a trailing run of plain characters at top level.
	lastStart := lastPlainWord(s)
	depth := 0      // open marker spans
	nocase := 0     // of which keep their case
	var held []byte // text of the nocase span being passed, for the state
	math := 0
	for i := 0; i < len(s); {
		if i == lastStart && depth == 0 {
			if st == csAfterWordEnd || st == csStartSentence || st == csStart {
				st = csBeforeLastWord
			}
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if isMarker(r) {
			b.WriteRune(r)
			i += n
			if markerOpens(r) {
				depth++
				if r == mMathOpen {
					math++
				}
				if markerNocase(r) {
					nocase++
				}
				continue
			}
			if depth > 0 {
				depth--
			}
			if r == mMathClose && math > 0 {
				math--
			}
			if (r == mProtClose || r == mSmallCapsClose || r == mSupClose || r == mSubClose || r == mMathClose) && nocase > 0 {
				nocase--
				if nocase == 0 {
					// The whole span's text (without spaces and math)
					// moves the state, as pandoc does.
					st = nextState(st, lastRuneOf(held))
					held = held[:0]
				}
			}
			continue
		}
		if nocase > 0 {
			if math == 0 && !unicode.IsSpace(r) {
				held = append(held, s[i:i+n]...)
			}
			b.WriteString(s[i : i+n])
			i += n
			continue
		}
		// A chunk: a run of letters and digits, a run of spaces, or one
		// other character.
		j := i + n
		switch {
		case isAlnum(r):
			for j < len(s) {
				r2, n2 := utf8.DecodeRuneInString(s[j:])
				if !isAlnum(r2) || (j == lastStart && depth == 0) {
					break
				}
				j += n2
			}
		case unicode.IsSpace(r):
			for j < len(s) {
				r2, n2 := utf8.DecodeRuneInString(s[j:])
				if !unicode.IsSpace(r2) {
					break
				}
				j += n2
			}
		}
		chunk := s[i:j]
		last, _ := utf8.DecodeLastRuneInString(chunk)
		before := st
		st = nextState(st, last)
		if isAlnum(r) {
			chunk = sentenceCaseWord(before, chunk)
		}
		b.WriteString(chunk)
		i = j
	}
	return b.String()
}

// lastPlainWord returns the offset where the last element of s starts
// when that element is a plain word (pandoc's rule, see sentenceCase), or
// -1: a non-empty run of characters other than spaces and markers ending
// s, preceded by something, holding no "-", "/", "–" or "—", and outside
// every marked span.
func lastPlainWord(s string) int {
	end := len(s)
	i := end
	for i > 0 {
		r, n := utf8.DecodeLastRuneInString(s[:i])
		if unicode.IsSpace(r) || isMarker(r) {
			break
		}
		if r == '-' || r == '/' || r == '–' || r == '—' {
			return -1
		}
		i -= n
	}
	if i == end || i == 0 {
		return -1
	}
	// Outside every span: the markers before i must be balanced.
	depth := 0
	for _, r := range s[:i] {
		if isMarker(r) {
			if markerOpens(r) {
				depth++
			} else if depth > 0 {
				depth--
			}
		}
	}
	if depth != 0 {
		return -1
	}
	return i
}

func lastRuneOf(b []byte) rune {
	if len(b) == 0 {
		return utf8.RuneError
	}
	r, _ := utf8.DecodeLastRune(b)
	return r
}

// nextState is the state after a chunk ending in c (RuneError: an empty
// chunk, no change).
func nextState(st caseState, c rune) caseState {
	switch {
	case c == utf8.RuneError:
		return st
	case c == '.' || c == '?' || c == '!' || c == ':':
		return csAfterSentenceEnd
	case isAlnum(c):
		return csAfterWordChar
	case unicode.IsSpace(c) && st == csAfterSentenceEnd:
		return csStartSentence
	case unicode.IsSpace(c) || c == '-' || c == '/' || c == '–' || c == '—':
		return csAfterWordEnd
	}
	return st
}

// isAlnum is Haskell's isAlphaNum: a letter or a number.
func isAlnum(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }

func isUpperRune(r rune) bool { return unicode.IsUpper(r) || unicode.IsTitle(r) }

// sentenceCaseWord is citeproc's withSentenceCase for one word.
func sentenceCaseWord(st caseState, w string) string {
	start := st == csStart || st == csStartSentence
	first, n := utf8.DecodeRuneInString(w)
	rest := w[n:]
	allLowerRest := !strings.ContainsFunc(rest, func(r rune) bool { return !unicode.IsLower(r) })
	capitalized := isUpperRune(first) && allLowerRest
	allLower := unicode.IsLower(first) && allLowerRest
	switch {
	case capitalized && !start:
		return strings.ToLower(w)
	case (capitalized || allLower) && start:
		l := strings.ToLower(w)
		f, n := utf8.DecodeRuneInString(l)
		return string(unicode.ToUpper(f)) + l[n:]
	}
	return w
}

// splitTopColon returns the marked text before the first ":" outside
// every marked span and quotation (“…”), and whether there is one.
func splitTopColon(s string) (string, bool) {
	depth := 0
	for i, r := range s {
		switch {
		case r == '“':
			depth++
		case r == '”':
			if depth > 0 {
				depth--
			}
		case isMarker(r):
			if markerOpens(r) {
				depth++
			} else if depth > 0 {
				depth--
			}
		case r == ':' && depth == 0:
			return s[:i], true
		}
	}
	return s, false
}
