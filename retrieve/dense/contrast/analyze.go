package contrast

import (
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	porterstemmer "github.com/blevesearch/go-porterstemmer"
)

// stopWords is the English stop word list of the BM25 index's analyzer
// (bleve's "stop_en", the Snowball list), loaded once; read-only.
var stopWords = sync.OnceValue(func() map[string]bool {
	m := analysis.NewTokenMap()
	if err := m.LoadBytes(en.EnglishStopWords); err != nil {
		panic("contrast: bleve's English stop words: " + err.Error()) // a constant of bleve
	}
	return m
})

// maxStemCache bounds a tokenizer's cache of stems.
const maxStemCache = 1 << 18

// tokenizer turns text into terms the way the BM25 index's analyzer does,
// in a fraction of its time: words are the runs of Unicode letters and
// digits, lower-cased; English stop words (bleve's list) and the "s" of
// possessives are dropped; the others are stemmed with the Porter stemmer
// that analyzer uses. (Unicode word segmentation is not applied, so
// tokens with inner punctuation, such as "3.5" or "e-mail", come apart.)
// Stems are cached by surface form. A tokenizer is not safe for
// concurrent use.
type tokenizer struct {
	stop  map[string]bool
	stems map[string]string
	buf   []byte
}

func newTokenizer() *tokenizer {
	return &tokenizer{stop: stopWords(), stems: map[string]string{}}
}

// terms appends the terms of text to dst.
func (z *tokenizer) terms(text string, dst []string) []string {
	z.buf = z.buf[:0]
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case 'a' <= c && c <= 'z' || '0' <= c && c <= '9':
				z.buf = append(z.buf, c)
			case 'A' <= c && c <= 'Z':
				z.buf = append(z.buf, c+'a'-'A')
			default:
				dst = z.flush(dst)
			}
			continue
		}
		r, n := utf8.DecodeRuneInString(text[i:])
		i += n
		if unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) {
			z.buf = utf8.AppendRune(z.buf, unicode.ToLower(r))
		} else {
			dst = z.flush(dst)
		}
	}
	return z.flush(dst)
}

// flush ends the word in z.buf.
func (z *tokenizer) flush(dst []string) []string {
	if len(z.buf) == 0 {
		return dst
	}
	w := z.buf
	z.buf = z.buf[:0]
	if s, ok := z.stems[string(w)]; ok {
		if s != "" {
			dst = append(dst, s)
		}
		return dst
	}
	surface := string(w)
	stem := ""
	if !z.stop[surface] && surface != "s" {
		stem = string(porterstemmer.StemWithoutLowerCasing([]rune(surface)))
	}
	if len(z.stems) >= maxStemCache {
		clear(z.stems)
	}
	z.stems[surface] = stem
	if stem != "" {
		dst = append(dst, stem)
	}
	return dst
}
