package csl

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"strings"
)

// dist is filled by `make citeproc` (scripts/fetch-csl.sh): citeproc-js,
// the default styles, the en-US locale and their NOTICE. Only README.md is
// committed, so a checkout that skipped the fetch still compiles and
// answers with ErrNotFetched.
//
//go:embed dist
var dist embed.FS

// fetchHint is what to do when dist/ is empty.
const fetchHint = "run `make citeproc` (make build, make test and make demo do it first)"

// citeprocSource returns citeproc_commonjs.js.
func citeprocSource() (string, error) {
	b, err := dist.ReadFile("dist/citeproc_commonjs.js")
	if err != nil {
		return "", fmt.Errorf("%w: citeproc-js is not embedded in this build: %s", ErrNotFetched, fetchHint)
	}
	return string(b), nil
}

// embeddedStyle returns a default style's XML by file name ("apa.csl").
func embeddedStyle(file string) ([]byte, bool) {
	b, err := dist.ReadFile("dist/styles/" + file)
	return b, err == nil
}

// embeddedStyleNames lists the embedded styles' file names without ".csl".
func embeddedStyleNames() []string {
	es, err := fs.ReadDir(dist, "dist/styles")
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range es {
		if n, ok := strings.CutSuffix(e.Name(), ".csl"); ok {
			out = append(out, n)
		}
	}
	return out
}

// embeddedLocale returns locales-LANG.xml if it is embedded (en-US).
func embeddedLocale(lang string) ([]byte, bool) {
	b, err := dist.ReadFile("dist/locales/locales-" + lang + ".xml")
	return b, err == nil
}

// Notice returns the licence and attribution text of the embedded
// citeproc-js, styles and locale (CC BY-SA 3.0 asks for it), or
// ErrNotFetched.
func Notice() (string, error) {
	b, err := dist.ReadFile("dist/NOTICE")
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%w: %s", ErrNotFetched, fetchHint)
	}
	return string(b), err
}
