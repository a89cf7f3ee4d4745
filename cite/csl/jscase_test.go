package csl

import (
	"testing"

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
