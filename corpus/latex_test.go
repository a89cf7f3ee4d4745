package corpus_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/citefind/citefind/corpus"
)

func TestLaTeXToUnicode(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "Neural Networks", "Neural Networks"},
		{"empty", "", ""},
		{"acute braced group", `{\'e}cole`, "école"},
		{"acute braced arg", `Jos\'{e}`, "José"},
		{"acute bare", `Jos\'e`, "José"},
		{"acute double braced", `{\'{O}}scar`, "Óscar"},
		{"umlaut braced", `M\"{u}ller`, "Müller"},
		{"umlaut bare", `M\"uller`, "Müller"},
		{"umlaut group", `M{\"u}ller`, "Müller"},
		{"grave", "Cr\\`{e}me", "Crème"},
		{"circumflex", `h\^{o}tel \^o`, "hôtel ô"},
		{"tilde", `Espa\~{n}a \~n`, "España ñ"},
		{"macron", `\={a}`, "ā"},
		{"dot above", `\.{z}`, "ż"},
		{"breve", `Do\u{g}an`, "Doğan"},
		{"caron", `Ha\v{s}ek \v s`, "Hašek š"},
		{"double acute", `Erd\H{o}s`, "Erdős"},
		{"cedilla", `Gon\c{c}alves \c c`, "Gonçalves ç"},
		{"ring", `\r{a}ngstr\"{o}m`, "ångström"},
		{"ogonek", `\k{a}`, "ą"},
		{"dot below", `\d{s}`, "ṣ"},
		{"bar below", `\b{b}`, "ḇ"},
		{"dotless i", `Y{\i}lmaz`, "Yılmaz"},
		{"slash joins words", `{\VAX}\slash {\TeX} at`, "VAX/TeX at"},
		{"biblatex hyphen", `methodology\hyphen independent`, "methodology-independent"},
		{"emdash macro", `documents\emdash problems`, "documents—problems"},
		{"TUGboat's Dash", "{\\AmSTeX{}{\\Dash}``A very friendly product''}", "AmSTeX—“A very friendly product”"},
		{"enquote", `\enquote{Intention} und`, "“Intention” und"},
		{"enquote starred: inner quotes", `the string \enquote*{series} is`, "the string ‘series’ is"},
		{"mkbibquote", `\mkbibquote{x} y`, "“x” y"},
		{"kern and its dimension", `DVI\kern-.15em to`, "DVIto"},
		{"spaces inside math", `for $ 5 \times 7 $ dots`, "for 5 × 7 dots"},
		{"accent on dotless i", `Mart\'{\i}n`, "Martín"},
		{"accent on bare dotless i", `Mart\'\i n`, "Martín"},
		{"accent on i", `Mart\'{i}n`, "Martín"},
		{"sharp s forms", `Stra\ss e, Stra{\ss}e, Stra\ss{}e`, "Straße, Straße, Straße"},
		{"special letters", `\o \O \ae \AE \oe \OE \aa \AA \l \L`, "øØæÆœŒåÅłŁ"},
		{"special letter with empty group", `Bj\o{}rn J\o rgensen`, "Bjørn Jørgensen"},
		{"barred l", `\L{}ukasz Kie\l{}basa`, "Łukasz Kiełbasa"},
		{"escapes", `R\&D 50\% \$5 \#1 a\_b \{x\}`, "R&D 50% $5 #1 a_b {x}"},
		{"dashes", "1990--2000 and---so", "1990–2000 and—so"},
		{"single hyphen", "state-of-the-art", "state-of-the-art"},
		{"tie", "Fig.~3", "Fig. 3"},
		{"text dashes", `a\textendash b\textemdash{}c`, "a–b—c"},
		{"times", `3\texttimes{}4`, "3×4"},
		{"quote right", `Wobbrock\textquoteright{}s`, "Wobbrock’s"},
		{"tex quotes", "``quoted''", "“quoted”"},
		{"emph", `\emph{very} \textit{it} \textbf{bf} \textsc{sc}`, "very it bf sc"},
		{"url", `\url{http://example.org/a_b}`, "http://example.org/a_b"},
		{"protected capitals", "{BERT}: Pre-training of {{Deep}} Transformers", "BERT: Pre-training of Deep Transformers"},
		{"declarations", `{\em emphasised} and {\bf bold}`, "emphasised and bold"},
		{"unknown command with arg", `\foo{bar} baz`, "bar baz"},
		{"spaces before an argument", `the \protect \textsf  {amsrefs} code, \emph {very}`, "the amsrefs code, very"},
		{"no-argument command before a group", `\MF {fonts}`, "MF fonts"},
		{"unknown command without arg", `the \LaTeX\ way and \log n`, "the LaTeX way and log n"},
		{"math greek", `An $\epsilon$-greedy $\alpha$ policy`, "An ε-greedy α policy"},
		{"math keeps text", `Top-$k$ retrieval in $O(n \log n)$ time`, "Top-k retrieval in O(n log n) time"},
		{"math frac", `$\frac{1}{2}$ approximation`, "1/2 approximation"},
		{"math symbols", `$a \leq b \times c$`, "a ≤ b × c"},
		{"money", "costs $15 billion, and $10 more", "costs $15 billion, and $10 more"},
		{"lone dollar", "a $ sign", "a $ sign"},
		{"whitespace collapse", "  Deep\n\t\t  Learning  ", "Deep Learning"},
		{"nbsp collapsed", "a\u00a0\u00a0b", "a b"},
		{"NFC", "e\u0301cole", "école"},
		{"empty accent group", `\^{}`, "^"},
		{"unbalanced braces", "a } b { c", "a b c"},
		{"trailing backslash", `abc\`, "abc"},
		{"accent at end", `abc\'`, "abc'"},
		{"href", `\href{http://x.org}{the site}`, "the site"},
		{"nested accents", `\'{\"o}`, "ö\u0301"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, corpus.LaTeXToUnicode(tc.in))
		})
	}
}
