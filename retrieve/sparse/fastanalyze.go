package sparse

import (
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/registry"
)

// The terms of bleve's "en" analyzer without its token streams.
//
// Analyze is called on every reranked candidate's title and abstract, and
// most of its cost in bleve's analyzer is the Unicode word segmenter and a
// token per word. Most scientific text is ASCII, and for ASCII the
// segmenter's rules (Unicode's word boundaries, UAX #29) are few, so
// appendTerms segments ASCII itself and gives the rest to bleve:
//
//   - The text is cut into chunks at runs of ASCII white space that are
//     followed by an ASCII character, a letter or punctuation (or the end).
//     UAX #29 breaks on both sides of such a run, and nothing after it can
//     attach to the space before it (WB4 attaches only Extend and Format
//     characters, which are neither letters nor punctuation), so each chunk
//     segments as it would inside the whole text.
//   - An all-ASCII chunk is segmented by the rules below; any other chunk
//     goes through bleve's analyzer whole (the same tokenizer and filters).
//   - Text that is not valid UTF-8 goes to bleve whole (its segmenter
//     stops at the first invalid byte; the index was built that way).
//   - ASCII words then go through the same filters as bleve's: the
//     English possessive ('s) is cut, the word lower-cased, dropped when
//     it is a stop word, and stemmed (the cached Porter stemmer).
//
// TestFastAnalyzeIsBleveEn checks the result against bleve's analyzer on
// fixed and generated texts, and on every title and abstract of the
// benchmark collections when they are present.

// ASCII word-break classes of UAX #29 (white space never reaches them).
const (
	wbOther      = iota
	wbLetter     // ALetter: A–Z, a–z
	wbNumeric    // 0–9
	wbMidLetter  // ':'
	wbMidNum     // ',' ';'
	wbMidNumLetQ // '.' and the apostrophe (MidNumLet, Single_Quote)
	wbExtendNum  // '_' (ExtendNumLet)
)

var wbClass = func() (c [128]uint8) {
	for b := 'a'; b <= 'z'; b++ {
		c[b], c[b-'a'+'A'] = wbLetter, wbLetter
	}
	for b := '0'; b <= '9'; b++ {
		c[b] = wbNumeric
	}
	c[':'] = wbMidLetter
	c[','], c[';'] = wbMidNum, wbMidNum
	c['.'], c['\''] = wbMidNumLetQ, wbMidNumLetQ
	c['_'] = wbExtendNum
	return c
}()

func isASCIISpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\v' || b == '\f'
}

// asciiJoined reports whether UAX #29 keeps s[i-1] and s[i] in one word
// (0 < i < len(s), s all ASCII without white space).
func asciiJoined(s string, i int) bool {
	a, b := wbClass[s[i-1]], wbClass[s[i]]
	class := func(k int) uint8 {
		if k < 0 || k >= len(s) {
			return wbOther
		}
		return wbClass[s[k]]
	}
	switch {
	case a == wbLetter && b == wbLetter: // WB5
		return true
	case a == wbLetter && (b == wbMidLetter || b == wbMidNumLetQ) && class(i+1) == wbLetter: // WB6
		return true
	case (a == wbMidLetter || a == wbMidNumLetQ) && b == wbLetter && class(i-2) == wbLetter: // WB7
		return true
	case (a == wbNumeric || a == wbLetter) && (b == wbNumeric || b == wbLetter): // WB8, WB9, WB10
		return true
	case (a == wbMidNum || a == wbMidNumLetQ) && b == wbNumeric && class(i-2) == wbNumeric: // WB11
		return true
	case a == wbNumeric && (b == wbMidNum || b == wbMidNumLetQ) && class(i+1) == wbNumeric: // WB12
		return true
	case (a == wbLetter || a == wbNumeric || a == wbExtendNum) && b == wbExtendNum: // WB13a
		return true
	case a == wbExtendNum && (b == wbLetter || b == wbNumeric): // WB13b
		return true
	}
	return false
}

// fastAnalyzer holds what appendTerms needs besides bleve's analyzer.
type fastAnalyzer struct {
	bleve analysis.Analyzer
	stop  analysis.TokenMap
	stems *cachedPorter
}

var fast = sync.OnceValues(func() (*fastAnalyzer, error) {
	a, err := analyzer()
	if err != nil {
		return nil, err
	}
	stop, err := registry.NewCache().TokenMapNamed(en.StopName)
	if err != nil {
		return nil, err
	}
	return &fastAnalyzer{bleve: a, stop: stop, stems: stemCache}, nil
})

// appendTerms appends the terms of text, as bleve's "en" analyzer gives
// them, to out.
func (f *fastAnalyzer) appendTerms(out []string, text string) []string {
	if !utf8.ValidString(text) {
		// bleve's segmenter stops at the first invalid byte; chunks
		// would go on: the whole text goes to bleve, as it always did
		for _, t := range f.bleve.Analyze([]byte(text)) {
			out = append(out, string(t.Term))
		}
		return out
	}
	var buf [64]byte
	for i := 0; i < len(text); {
		for i < len(text) && isASCIISpace(text[i]) {
			i++
		}
		if i == len(text) {
			break
		}
		// the chunk text[i:j]: up to white space followed by something
		// that starts a chunk of its own
		j, ascii := i, true
		for j < len(text) {
			c := text[j]
			if c >= utf8.RuneSelf {
				ascii = false
				j++
				continue
			}
			if !isASCIISpace(c) {
				j++
				continue
			}
			k := j
			for k < len(text) && isASCIISpace(text[k]) {
				k++
			}
			if k == len(text) || text[k] < utf8.RuneSelf {
				break
			}
			if r, _ := utf8.DecodeRuneInString(text[k:]); unicode.IsLetter(r) || unicode.IsPunct(r) {
				break
			}
			ascii = false
			j = k
		}
		chunk := text[i:j]
		i = j
		if !ascii {
			for _, t := range f.bleve.Analyze([]byte(chunk)) {
				out = append(out, string(t.Term))
			}
			continue
		}
		for s := 0; s < len(chunk); {
			e := s + 1
			for e < len(chunk) && asciiJoined(chunk, e) {
				e++
			}
			word := chunk[s:e]
			s = e
			if !hasWordChar(word) {
				continue
			}
			if n := len(word); n >= 3 && (word[n-1] == 's' || word[n-1] == 'S') && word[n-2] == '\'' {
				word = word[:n-2]
			}
			if t, ok := f.term(word, buf[:0]); ok {
				out = append(out, t)
			}
		}
	}
	return out
}

// hasWordChar reports whether an ASCII segment is a word (bleve keeps
// segments with a letter, a digit or an underscore).
func hasWordChar(s string) bool {
	for k := 0; k < len(s); k++ {
		if c := wbClass[s[k]]; c == wbLetter || c == wbNumeric || c == wbExtendNum {
			return true
		}
	}
	return false
}

// term lower-cases an ASCII word and stems it; ok is false for a stop
// word.
func (f *fastAnalyzer) term(word string, buf []byte) (string, bool) {
	for k := 0; k < len(word); k++ {
		c := word[k]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf = append(buf, c)
	}
	if f.stop[string(buf)] {
		return "", false
	}
	return f.stems.stem(buf), true
}
