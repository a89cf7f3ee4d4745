package csl_test

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/dop251/goja"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/cite/csl"
	"github.com/citefind/citefind/internal/nodejs"
)

// TestICUCaseMappingMatchesNode maps strings with toUpperCase and
// toLowerCase, and with toLocaleUpperCase and toLocaleLowerCase for each
// language with a mapping of its own (Greek, Lithuanian, Turkish,
// Azerbaijani), in citefind's runtime, and
// requires exactly what V8 with ICU returns on Node.js: Greek words with
// and without accents, breathings, dialytika and iota subscripts;
// Lithuanian i and j with accents above and below; Turkish and
// Azerbaijani i; generated strings of every Greek letter, those
// diacritics, case-ignorable marks and spaces; and, as text the mapping
// was not written against, every title and name with a letter outside
// ASCII among the records TestLocaleCompareICU reads (ACM-CR, SciFact,
// ScisummNet: α-synuclein, β-cells, accented names). Skips without node
// (scripts/install-test-deps.sh installs it).
func TestICUCaseMappingMatchesNode(t *testing.T) {
	if raceEnabled {
		t.Skip("one goroutine driving goja, which the race detector slows about tenfold: make test runs it without -race, in its second pass (LONG_TESTS)")
	}
	if nodejs.Path() == "" {
		t.Skip("node is not installed (scripts/install-test-deps.sh installs nodejs): the comparison with ICU needs it")
	}
	strs := []string{
		"άυλος", "Μαΐου", "προϊόν", "ή", "Ή", "ή η", "Η ή", "ήταν", "ἀλήθεια", "ᾠδή", "ᾳ", "Ἀθῆναι",
		"νεράιδα", "Αΐδης", "καΐκι", "ΐ", "ΰ", "ή\u0301", "η\u0301", "α\u0301υ", "α\u0301\u0308υ", "ά\u0345",
		"Παπαδόπουλος", "Ελληνική Δημοκρατία", "ή'", "'ή", "ή·", "ήα", "αή", "ευχαριστώ", "ϓ ϔ ϐ ϑ ϕ ϖ ϰ ϱ ϲ ϳ ϵ",
		"ᾼ ῌ ῼ ᾈ ᾯ ῤ ῥ Ῥ", "Ω\u2126", "ΐά", "άι", "άϊ", "όυ", "ό\u0308υ", "εΰ", "i\u0307", "i\u0323\u0307",
		"j\u0307\u0301", "į\u0307", "I\u0301", "J\u0303", "Į\u0300", "Ì", "Í", "Ĩ", "I\u0323\u0301",
		"I\u0323a\u0301", "Įa", "istanbul Işık İnci", "I\u0307", "i\u0307\u0307", "ɨ\u0307",
	}
	fromRecords, withGreek := 0, 0
	for _, s := range collationStrings(t) {
		if strings.IndexFunc(s, func(c rune) bool { return c >= 0x80 && unicode.IsLetter(c) }) >= 0 {
			r, n := utf8.DecodeRuneInString(s)
			strs = append(strs, s, string(unicode.ToUpper(r))+s[n:])
			fromRecords += 2
			if strings.IndexFunc(s, func(c rune) bool { return unicode.Is(unicode.Greek, c) }) >= 0 {
				withGreek += 2
			}
		}
	}
	rng := rand.New(rand.NewSource(20261208))
	var pool []rune
	for c := rune(0x370); c <= 0x3FF; c++ {
		pool = append(pool, c)
	}
	for c := rune(0x1F00); c <= 0x1FFF; c++ {
		pool = append(pool, c)
	}
	pool = append(pool, []rune("\u0300\u0301\u0302\u0303\u0304\u0306\u0307\u0308\u0311\u0313\u0314\u0323\u0328\u0342\u0343\u0344\u0345\u0301\u0308\u0307  '’·:.\u00ad-1aIJĮÌÍĨijįɨіİı\u2126ʰ")...)
	for range 30000 {
		w := make([]rune, 1+rng.Intn(8))
		for j := range w {
			w[j] = pool[rng.Intn(len(pool))]
		}
		strs = append(strs, string(w))
	}
	ops := []string{"toUpperCase()", "toLowerCase()"}
	for _, lang := range []string{"el", "lt", "tr", "az"} {
		ops = append(ops, fmt.Sprintf("toLocaleUpperCase(%q)", lang), fmt.Sprintf("toLocaleLowerCase(%q)", lang))
	}
	script := `(function (strs, ops) { return strs.map(function (s) { return ops.map(function (op) { return eval("s." + op); }); }); })`
	var icu [][]string
	require.NoError(t, nodejs.Run(t.Context(), `const a = JSON.parse(require("fs").readFileSync(0, "utf8")); process.stdout.write(JSON.stringify((`+script+`)(a.strs, a.ops)));`,
		map[string]any{"strs": strs, "ops": ops}, &icu))
	var p csl.Program
	vm, _, err := p.NewRuntime()
	require.NoError(t, err)
	f, err := vm.RunString(script)
	require.NoError(t, err)
	call, _ := goja.AssertFunction(f)
	v, err := call(nil, vm.ToValue(strs), vm.ToValue(ops))
	require.NoError(t, err)
	var got [][]string
	require.NoError(t, vm.ExportTo(v, &got))
	differ := map[string]int{}
	var bad []string
	for i, s := range strs {
		for k, op := range ops {
			if got[i][k] != icu[i][k] {
				differ[op]++
				if len(bad) < 20 {
					bad = append(bad, fmt.Sprintf("%q.%s: citefind %q, ICU %q", s, op, got[i][k], icu[i][k]))
				}
			}
		}
	}
	assert.Empty(t, bad, "strings mapped otherwise than ICU (per method: %v; the first 20)", differ)
	t.Logf("%d strings (%d from records, %d of them with a Greek letter), %d methods", len(strs), fromRecords, withGreek, len(ops))
}
