package csl

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors.
var (
	// ErrNotFetched is a build without the embedded citeproc-js, styles and
	// locale (cite/csl/dist is filled by `make citeproc`).
	ErrNotFetched = errors.New("citeproc-js not embedded")
	// ErrUnknownStyle is a style name found in no style folder (see
	// *UnknownStyleError for the near matches).
	ErrUnknownStyle = errors.New("unknown citation style")
	// ErrBadStyle is a style file that is not a usable CSL style: not XML,
	// not a <style>, a dependent style whose parent is missing, or one that
	// citeproc-js refuses.
	ErrBadStyle = errors.New("bad CSL style")
	// ErrMissingLocale is a locale a style needs that no locale folder has.
	ErrMissingLocale = errors.New("missing CSL locale")
	// ErrBadItem is a CSL-JSON item that is not valid JSON or that the
	// engine rejects (see *ItemError).
	ErrBadItem = errors.New("bad CSL-JSON item")
	// ErrEngine is a JavaScript exception or an interrupted run inside
	// citeproc-js (see *EngineError). The process goes on; the engine that
	// failed is discarded.
	ErrEngine = errors.New("citeproc-js failed")
)

// UnknownStyleError is a style name that resolves to no file, with the
// names that come closest.
type UnknownStyleError struct {
	Name     string
	Near     []string // best first; may be empty
	Searched []string // the folders looked in
}

func (e *UnknownStyleError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %q", ErrUnknownStyle, e.Name)
	if len(e.Near) > 0 {
		fmt.Fprintf(&b, "; did you mean %s?", strings.Join(e.Near, ", "))
	}
	if len(e.Searched) > 0 {
		fmt.Fprintf(&b, " (searched %s and the built-in styles; `citefind styles` lists them)", strings.Join(e.Searched, ", "))
	}
	return b.String()
}

// Unwrap returns ErrUnknownStyle.
func (e *UnknownStyleError) Unwrap() error { return ErrUnknownStyle }

// ItemError is a CSL-JSON item that could not be rendered.
type ItemError struct {
	ID    string
	Style string // the style's file, when the engine rejected the item
	Msg   string
}

func (e *ItemError) Error() string {
	if e.Style != "" {
		return fmt.Sprintf("item %q: %s (style %s)", e.ID, e.Msg, e.Style)
	}
	return fmt.Sprintf("item %q: %s", e.ID, e.Msg)
}

// Unwrap returns ErrBadItem.
func (e *ItemError) Unwrap() error { return ErrBadItem }

// EngineError is a failure inside citeproc-js: a JavaScript exception, a
// Go panic in a callback, or an interrupt (cancelled context).
type EngineError struct {
	Style string   // the style's file
	Op    string   // "load style", "render", …
	Items []string // the items being rendered, if any
	Msg   string
	Err   error // the context's error for an interrupt, else nil
}

func (e *EngineError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "citeproc-js: %s with style %s", e.Op, e.Style)
	if len(e.Items) > 0 {
		items := e.Items
		more := ""
		if len(items) > 5 {
			items, more = items[:5], fmt.Sprintf(" and %d more", len(e.Items)-5)
		}
		fmt.Fprintf(&b, " (items %s%s)", strings.Join(items, ", "), more)
	}
	b.WriteString(": " + e.Msg)
	return b.String()
}

// Unwrap returns ErrEngine and, for an interrupt, the context's error.
func (e *EngineError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrEngine, e.Err}
	}
	return []error{ErrEngine}
}
