package csl

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/citefind/citefind/internal/nodejs"

	"github.com/dop251/goja"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCaseMappingKeepsLoneSurrogates: String.prototype's case mappings
// keep a lone surrogate, so that a character outside the BMP cut in two
// and joined again comes back whole (as in V8), and map everything else
// as goja does.
func TestCaseMappingKeepsLoneSurrogates(t *testing.T) {
	vm := newVM()
	for js, want := range map[string]string{
		`var w = "🍕 means"; w.slice(0, 1).toUpperCase() + w.slice(1)`:                     "🍕 means",
		`var w = "𝒜b"; w.slice(0, 1).toLocaleUpperCase(["en-US"]) + w.slice(1)`:           "𝒜b",
		`var w = "x🍕Y"; w.slice(0, 2).toLowerCase() + w.slice(2).toLocaleLowerCase()`:     "x🍕y",
		`var w = "ab🍕cd"; w.slice(0, 3).toUpperCase() + w.slice(3).toUpperCase()`:         "AB🍕CD",
		`"\ud83c".toUpperCase() + "\udf55".toLowerCase()`:                                 "🍕",
		`"\udf55a\ud83c".toUpperCase().length`:                                            "3",
		`"straße İstanbul ΣΑΣ".toUpperCase() + " " + "ΣΑΣ ΌΣ".toLowerCase()`:              "STRASSE İSTANBUL ΣΑΣ σας ός",
		`"🍕 whole pairs".toUpperCase()`:                                                   "🍕 WHOLE PAIRS",
		`String.prototype.toUpperCase.call(12) + String.prototype.toLowerCase.call(true)`: "12true",
		`Object.getOwnPropertyDescriptor(String.prototype, "toUpperCase").enumerable`:     "false",
	} {
		v, err := vm.RunString(js)
		require.NoError(t, err, js)
		assert.Equal(t, want, v.String(), js)
	}
	_, err := vm.RunString(`String.prototype.toUpperCase.call(null)`)
	assert.ErrorContains(t, err, "TypeError")
}

// TestLocaleCaseMapping: toLocaleUpperCase and toLocaleLowerCase follow
// a Turkish, Azerbaijani, Greek or Lithuanian first locale as V8 does
// (every expected value is what Node.js 20.20.2, ICU 78.2, prints), keep
// the default mapping for any other, and throw what V8 throws for a tag
// that is not well formed; citeproc-js catches that and calls
// toUpperCase.
func TestLocaleCaseMapping(t *testing.T) {
	vm := newVM()
	for js, want := range map[string]string{
		`"istanbul ıb İI".toLocaleUpperCase("tr")`:                                                  "İSTANBUL IB İI",
		`"Iİıi".toLocaleLowerCase("tr")`:                                                            "ıiıi",
		`"Iİıi".toLocaleUpperCase("tr")`:                                                            "IİIİ",
		`"Iİıi".toLocaleLowerCase("az")`:                                                            "ıiıi",
		`"I\u0307".toLocaleLowerCase("tr")`:                                                         "i",
		`"istanbul".toLocaleUpperCase(["tr", "en-US"])`:                                             "İSTANBUL",
		`"istanbul".toLocaleUpperCase(["en", "tr"])`:                                                "ISTANBUL",
		`"istanbul".toLocaleUpperCase("tr-TR")`:                                                     "İSTANBUL",
		`"istanbul".toLocaleUpperCase("TR")`:                                                        "İSTANBUL",
		`"istanbul".toLocaleUpperCase("az-Latn")`:                                                   "İSTANBUL",
		`"istanbul".toLocaleUpperCase("tr-u-co-phonebk")`:                                           "İSTANBUL",
		`"istanbul".toLocaleUpperCase("original")`:                                                  "ISTANBUL",
		`"istanbul".toLocaleUpperCase(["original", "en-US"])`:                                       "ISTANBUL",
		`"istanbul".toLocaleUpperCase()`:                                                            "ISTANBUL",
		`"istanbul".toLocaleUpperCase([])`:                                                          "ISTANBUL",
		`"Iİıi".toLocaleLowerCase("en")`:                                                            "ii̇ıi",
		`"straße".toLocaleUpperCase("tr")`:                                                          "STRASSE",
		`"ΆΛΦΑ άλφα".toLocaleUpperCase("el")`:                                                       "ΑΛΦΑ ΑΛΦΑ",
		`"άυλος, Μαΐου, προϊόν".toLocaleUpperCase("el-GR")`:                                         "ΑΫΛΟΣ, ΜΑΪΟΥ, ΠΡΟΪΟΝ",
		`"ή η ανάκτηση ή όχι; ήταν".toLocaleUpperCase(["el", "en-US"])`:                             "Ή Η ΑΝΑΚΤΗΣΗ Ή ΟΧΙ; ΗΤΑΝ",
		`"ᾠδὴ Ἀθῆναι".toLocaleUpperCase("el")`:                                                      "ΩΙΔΗ ΑΘΗΝΑΙ",
		`"ΆΛΦΑ άλφα".toLocaleUpperCase("en")`:                                                       "ΆΛΦΑ ΆΛΦΑ",
		`"ΆΛΦΑ".toLocaleLowerCase("el")`:                                                            "άλφα",
		`"Ìi\u0307 I\u0301".toLocaleLowerCase("lt")`:                                                "i\u0307\u0300i\u0307 i\u0307\u0301",
		`"i\u0307 j\u0323\u0307".toLocaleUpperCase("lt")`:                                           "I J\u0323",
		`var w = "i🍕i"; w.slice(0, 2).toLocaleUpperCase("tr") + w.slice(2).toLocaleUpperCase("tr")`: "İ🍕İ",
		`String.prototype.toLocaleUpperCase.call(12, "tr")`:                                         "12",
	} {
		v, err := vm.RunString(js)
		require.NoError(t, err, js)
		assert.Equal(t, want, v.String(), js)
	}
	for js, want := range map[string]string{
		`"x".toLocaleUpperCase("")`:      "RangeError",
		`"x".toLocaleUpperCase("a b")`:   "RangeError",
		`"x".toLocaleLowerCase("x-foo")`: "RangeError",
		`"x".toLocaleUpperCase(null)`:    "TypeError",
	} {
		_, err := vm.RunString(js)
		assert.ErrorContains(t, err, want, js)
	}
}

// BenchmarkLocaleCaseMapping: one toLocaleLowerCase call as citeproc-js
// makes it (CSL.toLocaleLowerCase: a word and the item's language list),
// for an English and a Turkish list; ns/op is per call.
func BenchmarkLocaleCaseMapping(b *testing.B) {
	for _, langs := range []string{`["en-US"]`, `["tr", "en-US"]`} {
		b.Run(langs, func(b *testing.B) {
			vm := newVM()
			f, err := vm.RunString(`(function (n) { var arr = ` + langs + `, s = ""; for (var i = 0; i < n; i++) { s = "Information".toLocaleLowerCase(arr); } return s; })`)
			require.NoError(b, err)
			call, _ := goja.AssertFunction(f)
			b.ResetTimer()
			_, err = call(nil, vm.ToValue(b.N))
			require.NoError(b, err)
		})
	}
}

// TestICUCaseMappingMatchesNode maps thousands of strings — Greek words
// with and without accents, breathings, dialytika and iota subscripts,
// Lithuanian i and j with accents above and below, Turkish and
// Azerbaijani i, and generated strings of every Greek letter, those
// diacritics, case-ignorable marks and spaces — with toLocaleUpperCase
// and toLocaleLowerCase for each language that has its own mapping, and
// requires exactly what V8 with ICU returns on Node.js. Skips without node
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
	require.NoError(t, nodejs.Run(t.Context(), `let b = ""; process.stdin.on("data", d => b += d).on("end", () => { const a = JSON.parse(b); process.stdout.write(JSON.stringify((`+script+`)(a.strs, a.ops))); });`,
		map[string]any{"strs": strs, "ops": ops}, &icu))
	vm := newVM()
	f, err := vm.RunString(script)
	require.NoError(t, err)
	call, _ := goja.AssertFunction(f)
	v, err := call(nil, vm.ToValue(strs), vm.ToValue(ops))
	require.NoError(t, err)
	var got [][]string
	require.NoError(t, vm.ExportTo(v, &got))
	newer, differ := 0, map[string]int{}
	var bad []string
	for i, s := range strs {
		if got[i][0] != icu[i][0] || got[i][1] != icu[i][1] {
			newer++ // a character Go's Unicode tables do not case yet
			continue
		}
		for k, op := range ops[2:] {
			if got[i][k+2] != icu[i][k+2] {
				differ[op]++
				if len(bad) < 20 {
					bad = append(bad, fmt.Sprintf("%q.%s: citefind %q, ICU %q", s, op, got[i][k+2], icu[i][k+2]))
				}
			}
		}
	}
	assert.Empty(t, bad, "strings mapped otherwise than ICU (per method: %v; the first 20)", differ)
	assert.Less(t, newer, len(strs)/100, "strings whose default mapping differs from Node.js's")
	t.Logf("%d strings, %d methods; %d skipped (default mapping of a newer Unicode)", len(strs), len(ops), newer)
}
