package corpus

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Macros are BibTeX @string macros: lower-cased name → value as written
// (braces and LaTeX kept, other macros already expanded).
type Macros map[string]string

// Digest is a SHA-256 (hex) of the macros, the same for the same names
// and values in any order; "" when there are none.
func (m Macros) Digest() string {
	if len(m) == 0 {
		return ""
	}
	h := sha256.New()
	for _, k := range slices.Sorted(maps.Keys(m)) {
		fmt.Fprintf(h, "%d:%s%d:%s", len(k), k, len(m[k]), m[k])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// ReadOptions change how ReadFileWith reads a file.
type ReadOptions struct {
	// Macros are @string macros defined outside a BibTeX file, which its
	// entries may use: BibTeX reads the files of \bibliography{abbrev,refs}
	// as one text, so refs.bib may use the macros of abbrev.bib (IEEE's
	// IEEEabrv.bib is such a file). The file's own @string definitions
	// replace them from where they stand. Other formats ignore them.
	Macros Macros
	// Conflicts are the names among Macros that the files read together
	// define differently (SharedMacros): an entry that takes such a macro
	// from Macros gets a Warning (ErrMacroConflict) naming both values.
	Conflicts map[string]MacroConflict
}

// MacroDef is one file's definition of a macro.
type MacroDef struct {
	File, Value string
}

// MacroConflict is a macro that BibTeX files read together define
// differently (IEEEabrv.bib and IEEEfull.bib, both given): the entries of
// the other files get the value of the file given last, as BibTeX gives
// them, which may not be the one their author meant.
type MacroConflict struct {
	Name   string
	Used   MacroDef   // the definition entries get: the last file's
	Others []MacroDef // earlier files' different values, in file order
}

func (c MacroConflict) String() string {
	var others []string
	for _, o := range c.Others {
		others = append(others, fmt.Sprintf("%s has %q", o.File, collapseSpace(o.Value)))
	}
	return fmt.Sprintf("%q: %s has %q, %s; the entry has %s's (the file given last wins, as in BibTeX)",
		c.Name, c.Used.File, collapseSpace(c.Used.Value), strings.Join(others, ", "), c.Used.File)
}

// ReadFileWith is ReadFile with options.
func ReadFileWith(ctx context.Context, path string, opts ReadOptions, emit func(Record) error, onErr func(*ParseError)) error {
	if IsBibTeX(path) && len(opts.Macros) > 0 {
		data, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("read input: %w", err)
		}
		return readBibTeX(ctx, data, path, opts.Macros, opts.Conflicts, withRefs(emit), onErr)
	}
	return ReadFile(ctx, path, emit, onErr)
}

// IsBibTeX reports whether ReadFile reads path as BibTeX (.bib, .bibtex in
// any case).
func IsBibTeX(path string) bool {
	ext := strings.ToLower(filepath.Ext(path))
	return ext == ".bib" || ext == ".bibtex"
}

// FileMacros returns the @string macros the BibTeX in data defines, as
// ReadBibTeX would have them at the end of the file (a later definition
// of a name replaces an earlier one). Bad definitions and entries are
// skipped silently: reading the file reports them.
func FileMacros(ctx context.Context, data []byte) (Macros, error) {
	if !hasStringDef(data) {
		return nil, nil
	}
	data, _, _ = decodeBibText(data) // as readBibTeX reads the file
	p := bibParser{ctx: ctx, data: data, name: "", lnLine: 1, macros: map[string]string{}, macrosOnly: true}
	if err := p.parse(); err != nil {
		return nil, err
	}
	return p.macros, nil
}

// Shared are the @string macros of the BibTeX files read together, and
// the names among them that the files define differently. For gives the
// options to read one of the files with.
type Shared struct {
	Macros    Macros                   // each name's last definition
	Conflicts map[string]MacroConflict // names defined with different values

	defs  map[string][]MacroDef // names defined by several files: each definition, in file order
	files map[string][]string   // file → the names it defines that other files define too
}

// Digest is a SHA-256 (hex) of the macros and of every definition of a
// name that several files define, "" when there are no macros: a file's
// fingerprint includes it, so that a changed macro, or a new conflict
// that changes an entry's warnings, re-reads the files that may use it.
func (s Shared) Digest() string {
	d := s.Macros.Digest()
	if d == "" || len(s.Conflicts) == 0 {
		return d
	}
	h := sha256.New()
	h.Write([]byte(d))
	for _, k := range slices.Sorted(maps.Keys(s.defs)) {
		for _, o := range s.defs[k] {
			fmt.Fprintf(h, "%d:%s%d:%s%d:%s", len(k), k, len(o.File), o.File, len(o.Value), o.Value)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// For returns the options to read path, one of the files the macros were
// collected from, with: the file's own definitions are read where they
// stand, so a name it defines takes, before that, the other files'
// definition (the last of them), as in the text BibTeX reads; a name
// only the file defines keeps its own value, for an entry above its
// definition.
func (s Shared) For(path string) ReadOptions {
	names := s.files[path]
	if len(names) == 0 {
		return ReadOptions{Macros: s.Macros, Conflicts: s.Conflicts}
	}
	m, cs := maps.Clone(s.Macros), maps.Clone(s.Conflicts)
	for _, name := range names {
		others := slices.DeleteFunc(slices.Clone(s.defs[name]), func(d MacroDef) bool { return d.File == path })
		if len(others) == 0 {
			continue
		}
		m[name] = others[len(others)-1].Value
		if c, ok := conflictOf(name, others); ok {
			if cs == nil {
				cs = map[string]MacroConflict{}
			}
			cs[name] = c
		} else {
			delete(cs, name)
		}
	}
	return ReadOptions{Macros: m, Conflicts: cs}
}

// conflictOf returns the conflict among a name's definitions ds (in file
// order; the last is used), if they differ.
func conflictOf(name string, ds []MacroDef) (MacroConflict, bool) {
	// BibTeX reads any run of white space in a value as one space:
	// values that differ only there are the same.
	same := func(a, b string) bool { return collapseSpace(a) == collapseSpace(b) }
	used := ds[len(ds)-1]
	var others []MacroDef
	for _, d := range ds[:len(ds)-1] {
		if !same(d.Value, used.Value) && !slices.ContainsFunc(others, func(o MacroDef) bool { return o.File == d.File && same(o.Value, d.Value) }) {
			others = append(others, d)
		}
	}
	return MacroConflict{Name: name, Used: used, Others: others}, len(others) > 0
}

// SharedMacros returns the @string macros defined by the BibTeX files
// among paths, read in order as BibTeX reads the files of one
// \bibliography: a later file's definition of a name replaces an earlier
// one, and a name defined with different values is a conflict. Files
// that cannot be read are skipped (reading them reports it); only a
// cancelled ctx is an error.
func SharedMacros(ctx context.Context, paths []string) (Shared, error) {
	var sh Shared
	defs := map[string][]MacroDef{} // every file's value of each name, in file order
	read := map[string]bool{}
	for _, p := range paths {
		if !IsBibTeX(p) || read[p] {
			continue // a file given twice defines its macros once
		}
		read[p] = true
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		m, err := FileMacros(ctx, data)
		if err != nil {
			return Shared{}, err
		}
		if len(m) > 0 && sh.Macros == nil {
			sh.Macros = Macros{}
		}
		for k, v := range m {
			sh.Macros[k] = v
			defs[k] = append(defs[k], MacroDef{File: p, Value: v})
		}
	}
	for k, ds := range defs {
		if len(ds) < 2 {
			continue
		}
		if sh.defs == nil {
			sh.defs, sh.files = map[string][]MacroDef{}, map[string][]string{}
		}
		sh.defs[k] = ds
		for _, d := range ds {
			if !slices.Contains(sh.files[d.File], k) {
				sh.files[d.File] = append(sh.files[d.File], k)
			}
		}
		if c, ok := conflictOf(k, ds); ok {
			if sh.Conflicts == nil {
				sh.Conflicts = map[string]MacroConflict{}
			}
			sh.Conflicts[k] = c
		}
	}
	return sh, nil
}

// hasStringDef reports whether data may hold an @string definition: an
// "@string" in any case, spaces allowed before its brace. A quick scan
// that spares files without one (most exports) the parse.
func hasStringDef(data []byte) bool {
	for i := 0; ; {
		j := bytes.IndexByte(data[i:], '@')
		if j < 0 {
			return false
		}
		i += j + 1
		if len(data)-i >= 6 && bytes.EqualFold(data[i:i+6], []byte("string")) {
			return true
		}
	}
}
