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
}

// ReadFileWith is ReadFile with options.
func ReadFileWith(ctx context.Context, path string, opts ReadOptions, emit func(Record) error, onErr func(*ParseError)) error {
	if IsBibTeX(path) && len(opts.Macros) > 0 {
		data, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("read input: %w", err)
		}
		return readBibTeX(ctx, data, path, opts.Macros, withRefs(emit), onErr)
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
	p := bibParser{ctx: ctx, data: data, name: "", lnLine: 1, macros: map[string]string{}, macrosOnly: true}
	if err := p.parse(); err != nil {
		return nil, err
	}
	return p.macros, nil
}

// SharedMacros returns the @string macros defined by the BibTeX files
// among paths, read in order as BibTeX reads the files of one
// \bibliography: a later file's definition of a name replaces an earlier
// one. Files that cannot be read are skipped (reading them reports it);
// only a cancelled ctx is an error.
func SharedMacros(ctx context.Context, paths []string) (Macros, error) {
	var all Macros
	for _, p := range paths {
		if !IsBibTeX(p) {
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		m, err := FileMacros(ctx, data)
		if err != nil {
			return nil, err
		}
		if len(m) > 0 && all == nil {
			all = Macros{}
		}
		for k, v := range m {
			all[k] = v
		}
	}
	return all, nil
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
