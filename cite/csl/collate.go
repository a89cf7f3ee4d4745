package csl

import (
	"errors"
	"strings"
	"unicode"

	"github.com/dop251/goja"
	"golang.org/x/text/collate"
	"golang.org/x/text/language"
	"golang.org/x/text/unicode/norm"
	"golang.org/x/text/width"
)

// citeproc-js sorts bibliographies and citations with
//
//	a.localeCompare(b, lang, {sensitivity: "base", ignorePunctuation: true, numeric: true})
//
// (CSL.getSortCompare), which in a browser, in Zotero and in Node.js is
// ICU's collation with those options: case and accents do not decide
// ("müller" = "muller", and the next sort key decides), spaces and
// punctuation are ignored ("smith, john" < "smith-jones", "o'brien" =
// "obrien"), and digits compare by their value ("part 2" < "part 10").
// goja's localeCompare ignores its locales and options arguments and
// compares at full strength with punctuation significant, so citefind's
// bibliographies were ordered unlike Zotero's wherever two sort keys
// differed only in those ways.
//
// newVM returns a goja runtime whose String.prototype.localeCompare
// honours them as ECMA-402 asks (localeCompare(that, locales, options) is
// new Intl.Collator(locales, options).compare(this, that)), with
// golang.org/x/text/collate for the collation. Every runtime that runs
// citeproc-js gets it: citefind's processors and the unpatched reference
// the CSL test suite runs, since it is the JavaScript host's part, not
// citeproc-js's. TestLocaleCompareICU compares it with Node.js's ICU.
func newVM() *goja.Runtime {
	vm := goja.New()
	c := &collators{vm: vm, m: map[collatorKey]*collate.Collator{}, tags: map[string]string{}}
	proto := vm.Get("String").ToObject(vm).Get("prototype").ToObject(vm)
	// Same property attributes as the built-in method (writable,
	// configurable, not enumerable).
	if err := proto.DefineDataProperty("localeCompare", vm.ToValue(c.localeCompare), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE); err != nil {
		panic(err) // a fresh runtime's String.prototype accepts it
	}
	installCaseMapping(vm)
	return vm
}

// collatorKey is what selects a collator: the locale and the options
// that change the comparison.
type collatorKey struct {
	tag         string
	sensitivity string // base, accent, case or variant
	numeric     bool   // done by numericKey, not by the collator
}

// collators keeps one collator per key for one runtime (a
// collate.Collator is not safe for concurrent use; a runtime is used by
// one goroutine at a time).
type collators struct {
	vm   *goja.Runtime
	m    map[collatorKey]*collate.Collator
	tags map[string]string // locale argument → tag; "" when malformed
}

func (c *collators) localeCompare(call goja.FunctionCall) goja.Value {
	vm := c.vm
	if goja.IsUndefined(call.This) || goja.IsNull(call.This) {
		panic(vm.NewTypeError("String.prototype.localeCompare called on null or undefined"))
	}
	a, b := call.This.String(), call.Argument(0).String()
	key := collatorKey{tag: "und", sensitivity: "variant"}
	if loc := call.Argument(1); !goja.IsUndefined(loc) {
		// A string, or a list whose first entry is used (ECMA-402 takes
		// the first supported one; every tag is supported here).
		if obj, ok := loc.(*goja.Object); ok && obj.ClassName() == "Array" {
			loc = obj.Get("0")
		}
		if loc != nil && !goja.IsUndefined(loc) {
			tag, ok := c.tag(loc.String())
			if !ok {
				panic(c.rangeError("Incorrect locale information provided: " + loc.String()))
			}
			key.tag = tag
		}
	}
	ignorePunct := false
	if opts, ok := call.Argument(2).(*goja.Object); ok {
		if v := opts.Get("sensitivity"); v != nil && !goja.IsUndefined(v) {
			switch s := v.String(); s {
			case "base", "accent", "case", "variant":
				key.sensitivity = s
			default:
				panic(c.rangeError("Value " + s + " out of range for Intl.Collator options property sensitivity"))
			}
		}
		if v := opts.Get("ignorePunctuation"); v != nil && !goja.IsUndefined(v) {
			ignorePunct = v.ToBoolean()
		}
		if v := opts.Get("numeric"); v != nil && !goja.IsUndefined(v) {
			key.numeric = v.ToBoolean()
		}
	}
	if ignorePunct {
		a, b = dropVariable(a), dropVariable(b)
	}
	if key.numeric {
		a, b = numericKey(a), numericKey(b)
	}
	// ICU (CLDR root) sorts U+FFFD, the replacement character of broken
	// text, after every other character; x/text's Unicode 6.2 tables put
	// it among the symbols. A code point of the last plane, which x/text
	// weighs after everything it knows, stands in for it (found on a
	// SciFact title, "copyright \ufffd 1996").
	if strings.ContainsRune(a, '\ufffd') || strings.ContainsRune(b, '\ufffd') {
		a, b = strings.ReplaceAll(a, "\ufffd", "\U0010fffd"), strings.ReplaceAll(b, "\ufffd", "\U0010fffd")
	}
	if key.sensitivity == "case" {
		// ICU's case level: accents and width do not count, case does.
		a, b = caseKey(a), caseKey(b)
	}
	return vm.ToValue(c.get(key).CompareString(a, b))
}

// tag returns the collation tag of a locale argument: false when it is
// malformed (a RangeError); a well-formed tag x/text does not know ("gx")
// gets the root collation, as ICU gives it. Parsed once per string.
func (c *collators) tag(loc string) (string, bool) {
	if t, ok := c.tags[loc]; ok {
		return t, t != ""
	}
	t, err := language.Parse(loc)
	var unknown interface{ Subtag() string }
	tag := t.String()
	if err != nil && !errors.As(err, &unknown) || strings.Contains(loc, "_") {
		tag = ""
	}
	c.tags[loc] = tag
	return tag, tag != ""
}

// rangeError is a JavaScript RangeError, which ECMA-402 throws for a
// malformed locale or option.
func (c *collators) rangeError(msg string) *goja.Object {
	ctor, _ := goja.AssertConstructor(c.vm.Get("RangeError"))
	o, err := ctor(nil, c.vm.ToValue(msg))
	if err != nil {
		panic(err)
	}
	return o
}

func (c *collators) get(k collatorKey) *collate.Collator {
	if col, ok := c.m[k]; ok {
		return col
	}
	t := language.Make(k.tag)
	var opts []collate.Option
	switch k.sensitivity {
	case "base": // ICU primary strength: case, accents and width ignored
		opts = append(opts, collate.Loose)
	case "accent": // secondary strength: case and width ignored
		opts = append(opts, collate.IgnoreCase, collate.IgnoreWidth)
	case "case": // primary strength with the case level: see caseKey
		opts = append(opts, collate.IgnoreDiacritics)
	}
	col := collate.New(t, opts...)
	c.m[k] = col
	return col
}

// dropVariable removes what ICU's ignorePunctuation ignores: its
// "variable" characters, by default (maxVariable punct) spaces and
// punctuation — every character of the Unicode categories P and Z, and
// the white-space controls (tab, line feed, vertical tab, form feed,
// carriage return, next line); symbols ($, +, `, ^) still count.
// golang.org/x/text's own alternate=shifted ignores every character, so
// the characters are removed here instead, each run replaced by U+0000
// (ignorable at every level), which keeps digits on either side apart:
// with numeric collation "1.10" is 1 then 10, as in ICU, not 110.
// (Checked against Node.js's ICU over every code point:
// TestLocaleCompareICU.)
func dropVariable(s string) string {
	i := strings.IndexFunc(s, isVariable)
	if i < 0 {
		return s
	}
	var sb strings.Builder
	sb.Grow(len(s))
	sb.WriteString(s[:i])
	prev := false
	for _, r := range s[i:] {
		if isVariable(r) {
			if !prev {
				sb.WriteByte(0)
			}
			prev = true
			continue
		}
		prev = false
		sb.WriteRune(r)
	}
	return sb.String()
}

func isVariable(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', 0x85:
		return true
	case 0x180A, 0x1CD3: // punctuation ICU ignores at every level anyway
		return true
	}
	return unicode.IsPunct(r) || unicode.Is(unicode.Z, r)
}

// numericKey rewrites every run of decimal digits (any script) so that
// comparing the result without numeric collation orders the runs by their
// value, as ICU's numeric collation does: leading zeros dropped ("0" for
// a run of zeros), then the number of digits, encoded so that more digits
// sort after fewer, then the digits in ASCII. "2" < "10" becomes "12" <
// "210". golang.org/x/text's collate.Numeric is not used: it sorts a run
// of zeros as if it were absent ("a0x" after "a1"; ICU: before).
func numericKey(s string) string {
	if strings.IndexFunc(s, unicode.IsDigit) < 0 {
		return s
	}
	var sb strings.Builder
	sb.Grow(len(s) + 4)
	var run []byte
	flush := func() {
		if run == nil {
			return
		}
		i := 0
		for i < len(run)-1 && run[i] == '0' {
			i++
		}
		d := run[i:]
		for n := len(d); ; n -= 8 {
			if n <= 8 {
				sb.WriteByte(byte('0' + n))
				break
			}
			sb.WriteByte('9')
		}
		sb.Write(d)
		run = nil
	}
	for _, r := range s {
		if v, ok := digitValue(r); ok {
			if run == nil {
				run = []byte{}
			}
			run = append(run, byte('0'+v))
			continue
		}
		flush()
		sb.WriteRune(r)
	}
	flush()
	return sb.String()
}

// digitValue is the value of a decimal digit of any script: Unicode
// encodes each script's digits 0–9 as one ascending run, and every range
// of the Nd table is made of such runs.
func digitValue(r rune) (int, bool) {
	if r >= '0' && r <= '9' {
		return int(r - '0'), true
	}
	if r < 0x80 || !unicode.IsDigit(r) {
		return 0, false
	}
	for _, rg := range unicode.Nd.R16 {
		if r >= rune(rg.Lo) && r <= rune(rg.Hi) {
			return int(r-rune(rg.Lo)) % 10, true
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if r >= rune(rg.Lo) && r <= rune(rg.Hi) {
			return int(r-rune(rg.Lo)) % 10, true
		}
	}
	return 0, false
}

// caseKey folds s for sensitivity "case": accents (combining marks after
// canonical decomposition) removed and widths folded, so that what the
// collator, ignoring only diacritics, still sees at the tertiary level is
// mostly case — ICU's strength 1 with its case level.
func caseKey(s string) string {
	var sb strings.Builder
	for _, r := range norm.NFD.String(width.Fold.String(s)) {
		if !unicode.Is(unicode.Mn, r) {
			sb.WriteRune(r)
		}
	}
	return sb.String()
}
