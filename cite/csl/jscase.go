package csl

import (
	"strings"

	"github.com/dop251/goja"
	"golang.org/x/text/cases"
	"golang.org/x/text/language"
)

// installCaseMapping replaces String.prototype.toUpperCase, toLowerCase,
// toLocaleUpperCase and toLocaleLowerCase of vm by versions that keep a
// lone UTF-16 surrogate as it is, as V8 and SpiderMonkey do. goja's own
// map the string through Go's UTF-8, where a lone surrogate becomes
// U+FFFD. citeproc-js capitalises a word (_capitalise, for
// text-case="title" and "capitalize-first"/"-all") by matching its first
// character with a regular expression that, on goja, takes only the high
// surrogate of a character outside the Basic Multilingual Plane, and
// upper-cases that: a word that starts with an emoji (🍕) or a
// mathematical letter (𝒜) came out as "��" in MLA, Chicago and every
// style that title-cases (found on an ACM-CR record, 2026-11-29; Node.js
// prints the character). Text without a lone surrogate goes to goja's
// function unchanged; with one, each run between lone surrogates does.
//
// toLocaleUpperCase and toLocaleLowerCase also follow their locale
// argument where it asks for a language with case rules of its own in
// ICU — Turkish and Azerbaijani (i ↔ İ, ı ↔ I), Greek upper case (no
// accents) and Lithuanian (the dot above i) — as V8 and SpiderMonkey do;
// goja ignores the argument. citeproc-js passes the item's language
// first (CSL.toLocaleUpperCase, for text-case and capitalisation), so a
// Turkish title in upper case gave "ISTANBUL" where Zotero prints
// "İSTANBUL" (the CSL test suite's textcase_LocaleUnicode, which
// citeproc-js passes on Node.js), and a Greek one "ΙΣΤΟΡΊΑ" for
// "ΙΣΤΟΡΙΑ". See requestedLanguage and icucase.go.
func installCaseMapping(vm *goja.Runtime) {
	proto := vm.Get("String").ToObject(vm).Get("prototype").ToObject(vm)
	for _, name := range []string{"toUpperCase", "toLowerCase", "toLocaleUpperCase", "toLocaleLowerCase"} {
		orig, ok := goja.AssertFunction(proto.Get(name))
		if !ok {
			panic("csl: String.prototype." + name + " is not a function") // a fresh runtime has it
		}
		f := func(call goja.FunctionCall) goja.Value {
			if goja.IsUndefined(call.This) || goja.IsNull(call.This) {
				panic(vm.NewTypeError("String.prototype." + name + " called on null or undefined"))
			}
			s, _ := call.This.ToString().(goja.String)
			var mapping func(string) string // the language's own, instead of orig
			var prepare func(string) string // the language's own, before orig
			if strings.HasPrefix(name, "toLocale") {
				upper := name == "toLocaleUpperCase"
				switch requestedLanguage(vm, call.Argument(0)) {
				case "tr":
					mapping = caser(language.Turkish, upper)
				case "az":
					mapping = caser(language.Azerbaijani, upper)
				case "el":
					if upper {
						prepare = greekUpperPrepare
					}
				case "lt":
					if upper {
						prepare = lithuanianUpperPrepare
					} else {
						prepare = lithuanianLowerPrepare
					}
				}
			}
			if s == nil {
				return mustCall(orig, call.This)
			}
			switch {
			case mapping != nil:
				return keepLoneSurrogates(s, func(part goja.String) goja.Value { return vm.ToValue(mapping(part.String())) })
			case prepare != nil:
				return keepLoneSurrogates(s, func(part goja.String) goja.Value {
					p := part.String()
					if q := prepare(p); q != p {
						return mustCall(orig, vm.ToValue(q))
					}
					return mustCall(orig, part)
				})
			}
			return keepLoneSurrogates(s, func(part goja.String) goja.Value { return mustCall(orig, part) })
		}
		// Same property attributes as the built-in method (writable,
		// configurable, not enumerable).
		if err := proto.DefineDataProperty(name, vm.ToValue(f), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE); err != nil {
			panic(err) // a fresh runtime's String.prototype accepts it
		}
	}
}

// keepLoneSurrogates applies f to s when s holds no lone surrogate, else
// to each run between lone surrogates, which stay as they are.
func keepLoneSurrogates(s goja.String, f func(goja.String) goja.Value) goja.Value {
	n := s.Length()
	var out goja.String
	start := 0
	for i := 0; i < n; i++ {
		c := s.CharAt(i)
		if c < 0xD800 || c > 0xDFFF {
			continue
		}
		if c <= 0xDBFF && i+1 < n {
			if d := s.CharAt(i + 1); d >= 0xDC00 && d <= 0xDFFF {
				i++ // a pair
				continue
			}
		}
		// a lone surrogate at i
		if out == nil {
			out = goja.StringFromUTF16(nil)
		}
		if start < i {
			out = out.Concat(f(s.Substring(start, i)).ToString().(goja.String))
		}
		out = out.Concat(goja.StringFromUTF16([]uint16{c}))
		start = i + 1
	}
	if out == nil {
		return f(s)
	}
	if start < n {
		out = out.Concat(f(s.Substring(start, n)).ToString().(goja.String))
	}
	return out
}

// mustCall calls f with this and no argument; its exception (none for a
// string) is thrown on.
func mustCall(f goja.Callable, this goja.Value) goja.Value {
	v, err := f(this)
	if err != nil {
		panic(err)
	}
	return v
}

// wellFormedTag reports whether tag is a structurally valid Unicode
// BCP 47 locale identifier closely enough for the checks ECMA-402 makes
// before it maps case: a language subtag of 2–3 or 5–8 letters, then
// subtags of 1–8 letters or digits; and returns its language subtag.
func wellFormedTag(tag string) (lang string, ok bool) {
	start := 0
	for i := 0; i <= len(tag); i++ {
		if i < len(tag) && tag[i] != '-' {
			c := tag[i] | 0x20
			switch {
			case c >= 'a' && c <= 'z':
			case tag[i] >= '0' && tag[i] <= '9' && start > 0:
			default:
				return "", false
			}
			continue
		}
		n := i - start
		if start == 0 {
			if n < 2 || n == 4 || n > 8 {
				return "", false
			}
			lang = tag[:i]
		} else if n < 1 || n > 8 {
			return "", false
		}
		start = i + 1
	}
	return lang, true
}

// requestedLanguage returns the language subtag, in lower case, of the
// first locale that String.prototype's toLocaleUpperCase or
// toLocaleLowerCase is asked for with arg, or "" for the default
// mapping. As in ECMA-402 and V8, only the first requested locale counts,
// by its language subtag; a string or array-like argument is read,
// undefined or an empty list means the default, null is a TypeError and
// a tag that is not well formed a RangeError (citeproc-js catches it and
// falls back to toUpperCase, as it does in browsers). The languages with
// a mapping of their own are those of ICU (V8's and SpiderMonkey's):
// Turkish and Azerbaijani (i ↔ İ, ı ↔ I; golang.org/x/text/cases, which
// maps them as ICU does), Greek upper case and Lithuanian (icucase.go).
func requestedLanguage(vm *goja.Runtime, arg goja.Value) string {
	var first goja.Value
	switch a := arg.(type) {
	case nil:
		return ""
	case *goja.Object:
		// an array (citeproc-js passes one) or another array-like object
		first = a.Get("0")
		if first == nil || goja.IsUndefined(first) || goja.IsNull(first) {
			if n := a.Get("length"); n == nil || n.ToInteger() <= 0 {
				return "" // an empty list
			}
			panic(vm.NewTypeError("Language ID should be string or object."))
		}
	default:
		if goja.IsUndefined(arg) {
			return ""
		}
		if goja.IsNull(arg) {
			panic(vm.NewTypeError("Cannot convert undefined or null to object"))
		}
		if _, ok := arg.Export().(string); !ok {
			return "" // a number or boolean: an empty list, as in V8
		}
		first = arg
	}
	lang, ok := wellFormedTag(first.String())
	if !ok {
		panic(newRangeError(vm, "Incorrect locale information provided"))
	}
	if len(lang) != 2 {
		return ""
	}
	return strings.ToLower(lang)
}

// caser returns x/text's upper- or lower-case mapping for tag.
func caser(tag language.Tag, upper bool) func(string) string {
	if upper {
		return cases.Upper(tag).String
	}
	return cases.Lower(tag).String
}

// newRangeError makes a JavaScript RangeError with message msg.
func newRangeError(vm *goja.Runtime, msg string) *goja.Object {
	e, err := vm.New(vm.Get("RangeError"), vm.ToValue(msg))
	if err != nil {
		panic(err) // a fresh runtime's RangeError constructs
	}
	return e
}
