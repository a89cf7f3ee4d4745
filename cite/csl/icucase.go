package csl

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// The language-specific case mappings of ICU that V8 and SpiderMonkey
// (Node.js, Chrome, and Firefox, on which Zotero runs citeproc-js) apply
// in toLocaleUpperCase and toLocaleLowerCase and that goja does not:
// Greek upper case, which drops the accents, and Lithuanian, which keeps
// or drops the dot above an i. Each prepare function below rewrites only
// what the language changes; the default mapping (goja's, as for any
// language) then maps the whole string. The behaviour followed is ICU 78's
// as Node.js 20 shows it, checked character by character
// (TestICUCaseMappingMatchesNode); golang.org/x/text/cases has mappings
// for both languages that differ from ICU's (Greek: ΐ, ή as a word, an
// accent before ι or υ).

// Flags of a Greek letter or of a diacritic that follows one.
const (
	grUpperMask          = 0x3FF // the capital's code point
	grVowel              = 1 << 12
	grYpogegrammeni      = 1 << 13 // iota subscript: a capital iota after the letter
	grAccent             = 1 << 14 // acute, grave, circumflex (tonos, oxia, varia, perispomeni)
	grDialytika          = 1 << 15 // precomposed in the letter
	grCombiningDialytika = 1 << 16 // a combining U+0308 after it
	grOtherDiacritic     = 1 << 17 // breathings, macron, breve: dropped
)

// greekLetters holds, for U+0370–U+03FF (index 0–0x8F) and U+1F00–U+1FFF
// (0x90–0x18F), the capital a Greek letter maps to and the flags of its
// diacritics, derived from its canonical decomposition; 0 for what is
// not a Greek letter.
var greekLetters = sync.OnceValue(func() *[0x190]uint32 {
	var t [0x190]uint32
	for i := range t {
		c := rune(0x370 + i)
		if i >= 0x90 {
			c = rune(0x1F00 + i - 0x90)
		}
		t[i] = deriveGreekLetter(c)
	}
	return &t
})

func deriveGreekLetter(c rune) uint32 {
	if !unicode.Is(unicode.Greek, c) || !unicode.IsLetter(c) {
		return 0
	}
	d := []rune(norm.NFD.String(string(c)))
	upper := unicode.ToUpper(d[0])
	if upper < 0x370 || upper > grUpperMask {
		return 0
	}
	data := uint32(upper)
	switch upper {
	case 'Α', 'Ε', 'Η', 'Ι', 'Ο', 'Υ', 'Ω':
		data |= grVowel
	}
	for _, m := range d[1:] {
		switch f := greekDiacritic(m); f {
		case grCombiningDialytika:
			data |= grDialytika // precomposed
		default:
			data |= f
		}
	}
	return data
}

// greekLetter returns the data of c: its capital and flags, or 0.
func greekLetter(c rune) uint32 {
	switch {
	case c >= 0x370 && c <= 0x3FF:
		return greekLetters()[c-0x370]
	case c >= 0x1F00 && c <= 0x1FFF:
		return greekLetters()[c-0x1F00+0x90]
	case c == 0x2126: // Ω, the ohm sign
		return 'Ω' | grVowel
	}
	return 0
}

// greekDiacritic returns the flags of a combining mark that ICU takes as
// part of the Greek letter before it, or 0.
func greekDiacritic(c rune) uint32 {
	switch c {
	case 0x300, 0x301, 0x302, 0x303, 0x311, 0x342:
		return grAccent
	case 0x304, 0x306, 0x313, 0x314, 0x343:
		return grOtherDiacritic
	case 0x308:
		return grCombiningDialytika
	case 0x344:
		return grCombiningDialytika | grAccent
	case 0x345:
		return grYpogegrammeni
	}
	return 0
}

// caseIgnorable and cased are Unicode's Case_Ignorable and Cased
// properties, as the word-boundary conditions of case mapping read them
// (a character that is both counts as case-ignorable, as in ICU).
func caseIgnorable(c rune) bool {
	switch c {
	case '\'', '.', ':', 0xB7, 0x387, 0x55F, 0x5F4, 0x2018, 0x2019, 0x2024, 0x2027, 0xFE13, 0xFE52, 0xFE55, 0xFF07, 0xFF0E, 0xFF1A:
		return true
	}
	return unicode.In(c, unicode.Mn, unicode.Me, unicode.Cf, unicode.Lm, unicode.Sk)
}

func cased(c rune) bool {
	return unicode.IsUpper(c) || unicode.IsLower(c) || unicode.IsTitle(c) ||
		unicode.In(c, unicode.Other_Lowercase, unicode.Other_Uppercase)
}

// followedByCased reports whether the first character of rs that is not
// case-ignorable is cased.
func followedByCased(rs []rune) bool {
	for _, c := range rs {
		if !caseIgnorable(c) {
			return cased(c)
		}
	}
	return false
}

// greekUpperPrepare rewrites each Greek letter of s, with the Greek
// diacritics that follow it, into the capitals ICU's Greek upper case
// gives: accents and breathings dropped; a dialytika kept (Ϊ, Ϋ) and
// added to an ι or υ after a vowel that lost its accent (άυλος → ΑΫΛΟΣ,
// which keeps the diphthong apart); the disjunctive ή, as a word of its
// own, keeps its tonos (Ή); an iota subscript becomes a capital Ι after
// the letter. Everything else is left for the default mapping.
func greekUpperPrepare(s string) string {
	i := strings.IndexFunc(s, func(c rune) bool { return greekLetter(c) != 0 })
	if i < 0 {
		return s
	}
	const (
		afterCased                 = 1
		afterVowelCombiningAccent  = 2
		afterVowelPrecomposedAccnt = 4
	)
	rs := []rune(s)
	var b strings.Builder
	b.Grow(len(s) + 8)
	state := 0
	for i := 0; i < len(rs); {
		c := rs[i]
		next := i + 1
		nextState := 0
		if caseIgnorable(c) {
			nextState |= state & afterCased
		} else if cased(c) {
			nextState |= afterCased
		}
		data := greekLetter(c)
		if data == 0 {
			b.WriteRune(c)
			i, state = next, nextState
			continue
		}
		upper := rune(data & grUpperMask)
		if data&grVowel != 0 && state&(afterVowelCombiningAccent|afterVowelPrecomposedAccnt) != 0 && (upper == 'Ι' || upper == 'Υ') {
			if state&afterVowelPrecomposedAccnt != 0 {
				data |= grDialytika
			} else {
				data |= grCombiningDialytika
			}
		}
		ypogegrammeni := 0
		if data&grYpogegrammeni != 0 {
			ypogegrammeni = 1
		}
		precomposedAccent := data&grAccent != 0
		for ; next < len(rs); next++ {
			f := greekDiacritic(rs[next])
			if f == 0 {
				break
			}
			data |= f
			if f&grYpogegrammeni != 0 {
				ypogegrammeni++
			}
		}
		if data&(grVowel|grAccent|grDialytika) == grVowel|grAccent {
			if precomposedAccent {
				nextState |= afterVowelPrecomposedAccnt
			} else {
				nextState |= afterVowelCombiningAccent
			}
		}
		addTonos := false
		if upper == 'Η' && data&grAccent != 0 && ypogegrammeni == 0 && state&afterCased == 0 && !followedByCased(rs[next:]) {
			// the disjunctive ή ("or") keeps its tonos
			if precomposedAccent {
				upper = 'Ή'
			} else {
				addTonos = true
			}
		} else if data&grDialytika != 0 {
			switch upper {
			case 'Ι':
				upper, data = 'Ϊ', data&^(grDialytika|grCombiningDialytika)
			case 'Υ':
				upper, data = 'Ϋ', data&^(grDialytika|grCombiningDialytika)
			}
		}
		b.WriteRune(upper)
		if data&(grDialytika|grCombiningDialytika) != 0 {
			b.WriteRune(0x308)
		}
		if addTonos {
			b.WriteRune(0x301)
		}
		for ; ypogegrammeni > 0; ypogegrammeni-- {
			b.WriteRune('Ι')
		}
		i, state = next, nextState
	}
	return b.String()
}

// combiningClass returns the canonical combining class of c.
func combiningClass(c rune) uint8 {
	var buf [utf8.UTFMax]byte
	n := utf8.EncodeRune(buf[:], c)
	return norm.NFD.Properties(buf[:n]).CCC()
}

// lithuanianLowerPrepare writes, as ICU's Lithuanian lower case does, I,
// J and Į as i̇, j̇, į̇ (with U+0307, the dot above) where an accent above
// follows (before any base character), and Ì, Í, Ĩ as i̇̀, i̇́, i̇̃: the dot
// stays visible under the accent. The default lower case does the rest.
func lithuanianLowerPrepare(s string) string {
	if !strings.ContainsAny(s, "IJĮÌÍĨ") {
		return s
	}
	rs := []rune(s)
	var b strings.Builder
	b.Grow(len(s) + 4)
	for i, c := range rs {
		switch c {
		case 'I', 'J', 'Į':
			b.WriteRune(unicode.ToLower(c))
			if moreAbove(rs[i+1:]) {
				b.WriteRune(0x307)
			}
		case 'Ì':
			b.WriteString("i\u0307\u0300")
		case 'Í':
			b.WriteString("i\u0307\u0301")
		case 'Ĩ':
			b.WriteString("i\u0307\u0303")
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}

// moreAbove reports whether rs starts with combining marks of which one
// is an accent above (combining class 230), none of class 0 before it.
func moreAbove(rs []rune) bool {
	for _, c := range rs {
		switch combiningClass(c) {
		case 230:
			return true
		case 0:
			return false
		}
	}
	return false
}

// lithuanianUpperPrepare drops, as ICU's Lithuanian upper case does, a
// U+0307 (dot above) that follows a soft-dotted letter (i, j, į, …) with
// only other combining marks between: the capital has no dot to keep.
func lithuanianUpperPrepare(s string) string {
	if !strings.ContainsRune(s, 0x307) {
		return s
	}
	rs := []rune(s)
	var b strings.Builder
	b.Grow(len(s))
	for i, c := range rs {
		if c == 0x307 && afterSoftDotted(rs[:i]) {
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

// afterSoftDotted reports whether rs ends with a soft-dotted letter
// followed only by combining marks of classes other than 0 and 230.
func afterSoftDotted(rs []rune) bool {
	for i := len(rs) - 1; i >= 0; i-- {
		c := rs[i]
		if unicode.Is(unicode.Soft_Dotted, c) {
			return true
		}
		if cc := combiningClass(c); cc == 0 || cc == 230 {
			return false
		}
	}
	return false
}
