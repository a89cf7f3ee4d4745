package csl

import (
	"testing"

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
