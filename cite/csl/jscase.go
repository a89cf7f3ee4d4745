package csl

import (
	"github.com/dop251/goja"
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
			if s == nil {
				return mustCall(orig, call.This)
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
