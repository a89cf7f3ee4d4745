package cite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/citefind/citefind/cite/csl"
	"github.com/citefind/citefind/corpus"
)

// Style names a CSL style: a name that a csl.Resolver finds (apa, nature,
// acm-sig-proceedings, …) or a path to a .csl file.
type Style string

// The short names citefind has always accepted; each is rendered by the
// CSL style of the same name (mla, chicago and harvard stand for
// modern-language-association, chicago-author-date and
// harvard-cite-them-right). They are built into the binary.
const (
	APA       Style = "apa"
	IEEE      Style = "ieee"
	MLA       Style = "mla"
	Chicago   Style = "chicago"
	Harvard   Style = "harvard"
	Vancouver Style = "vancouver"
)

// Styles lists the built-in styles in a stable order.
var Styles = []Style{APA, IEEE, MLA, Chicago, Harvard, Vancouver}

// ResolveStyle resolves a style name or .csl path with eng. Its errors
// wrap ErrUnknownStyle and the csl error (csl.ErrUnknownStyle with near
// matches, csl.ErrBadStyle naming the file, csl.ErrMissingLocale).
func ResolveStyle(eng *csl.Engine, name Style) (*csl.Style, error) {
	if name == "" {
		name = APA
	}
	st, err := eng.Style(string(name))
	if err != nil {
		return nil, styleError{err}
	}
	return st, nil
}

// styleError reads as the csl error and is also ErrUnknownStyle.
type styleError struct{ err error }

func (e styleError) Error() string   { return e.err.Error() }
func (e styleError) Unwrap() []error { return []error{ErrUnknownStyle, e.err} }

// IsStyleError reports whether err is about the style rather than the
// draft: an unknown name, a malformed .csl, a missing locale.
func IsStyleError(err error) bool {
	return errors.Is(err, ErrUnknownStyle) || errors.Is(err, csl.ErrUnknownStyle) ||
		errors.Is(err, csl.ErrBadStyle) || errors.Is(err, csl.ErrMissingLocale)
}

// Format is an output format.
type Format int

// Output formats.
const (
	Markdown Format = iota // *italics*, <URL>, escaped metadata, invisible anchors that make resolution repeatable
	Text                   // plain text, no markup: a final rendering
	HTML                   // sanitised HTML fragments, with the same invisible anchors as Markdown
)

// ParseFormat maps "md"/"markdown", "text"/"txt"/"plain" and "html".
func ParseFormat(name string) (Format, error) {
	switch strings.ToLower(name) {
	case "md", "markdown":
		return Markdown, nil
	case "text", "txt", "plain":
		return Text, nil
	case "html", "htm":
		return HTML, nil
	}
	return 0, fmt.Errorf("unknown format %q (want md, text or html)", name)
}

// String is the format's name as ParseFormat takes it.
func (f Format) String() string {
	switch f {
	case Text:
		return "text"
	case HTML:
		return "html"
	}
	return "md"
}

// renderCitation is render for an in-text citation: in plain text a
// superscript citation is written in superscript characters
// (csl.Fragment.InlineText), not as digits joined to the word before it.
func (f Format) renderCitation(fr csl.Fragment) string {
	if f == Text {
		return fr.InlineText()
	}
	return f.render(fr)
}

// noteMark is the mark of footnote n in running text: "[^cite-n]" in
// Markdown (a footnote reference, its text in the bibliography block),
// a linked superscript in HTML, a superscript number in text.
func (f Format) noteMark(n int) string {
	switch f {
	case Text:
		return csl.InlineSuperscript(strconv.Itoa(n))
	case HTML:
		return fmt.Sprintf(`<sup><a href="#cite-fn-%d" id="cite-fnref-%d" role="doc-noteref">%d</a></sup>`, n, n, n)
	}
	return fmt.Sprintf("[^cite-%d]", n)
}

// render turns a fragment (a bibliography entry) into the format; in
// plain text with the superscripts and subscripts of digits in Unicode's
// characters (csl.Fragment.EntryText).
func (f Format) render(fr csl.Fragment) string {
	switch f {
	case Text:
		return fr.EntryText()
	case HTML:
		return fr.HTML()
	}
	return fr.Markdown()
}

// ItemSource gives the CSL-JSON item of each paper by paper ID, with
// "id" set to the paper ID. The store's lossless items will be one;
// PaperItems derives them from corpus.Paper.
type ItemSource interface {
	CSLItems(ctx context.Context, papers []corpus.Paper) (map[string]json.RawMessage, error)
}

// ItemLookup gives papers' full CSL-JSON items by ID, with "id" set to the
// paper ID: the store's lossless items (corpus.Store.Items).
type ItemLookup interface {
	Items(ctx context.Context, ids []string) (map[string]json.RawMessage, error)
}

// StoreItems is the ItemSource over a store's lossless items: every CSL
// variable the user's records held (editors, places, genres, dates with
// ranges, …), the abstract left out (no style prints it). A paper the
// lookup has no item for falls back to PaperItem. Resolve uses it when its
// Lookup is also an ItemLookup (corpus.Store is both).
type StoreItems struct{ Lookup ItemLookup }

// CSLItems implements ItemSource.
func (s StoreItems) CSLItems(ctx context.Context, papers []corpus.Paper) (map[string]json.RawMessage, error) {
	ids := make([]string, len(papers))
	for i, p := range papers {
		ids[i] = p.ID
	}
	items, err := s.Lookup.Items(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]json.RawMessage, len(papers))
	for _, p := range papers {
		raw, ok := items[p.ID]
		if !ok {
			if raw, err = PaperItem(p); err != nil {
				return nil, fmt.Errorf("paper %s: %w", p.ID, err)
			}
			out[p.ID] = raw
			continue
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, fmt.Errorf("the item of paper %s: %w", p.ID, err)
		}
		delete(m, "abstract")
		b, err := json.Marshal(m)
		if err != nil {
			return nil, fmt.Errorf("the item of paper %s: %w", p.ID, err)
		}
		out[p.ID] = b
	}
	return out, nil
}

// PaperItems is the ItemSource that renders each paper's own JSON
// (corpus.Paper.MarshalJSON), the abstract left out, with a CSL type
// guessed when the paper has none.
type PaperItems struct{}

// CSLItems implements ItemSource.
func (PaperItems) CSLItems(_ context.Context, papers []corpus.Paper) (map[string]json.RawMessage, error) {
	out := make(map[string]json.RawMessage, len(papers))
	for _, p := range papers {
		b, err := PaperItem(p)
		if err != nil {
			return nil, fmt.Errorf("paper %s: %w", p.ID, err)
		}
		out[p.ID] = b
	}
	return out, nil
}

// PaperItem is a paper's CSL-JSON item for rendering.
func PaperItem(p corpus.Paper) (json.RawMessage, error) {
	p.Abstract = ""
	p.Keywords = nil
	if p.Type == "" {
		switch {
		case p.ArXiv != "":
			p.Type = "article"
		case p.Venue != "":
			p.Type = "article-journal"
		default:
			p.Type = "book"
		}
	}
	return json.Marshal(p)
}

// Bibliography is the formatted reference list of a set of cited papers.
type Bibliography struct {
	Style   *csl.Style
	Format  Format
	Papers  []corpus.Paper // in the style's bibliography order
	Entries []string       // formatted in Format, same order, with their labels ("[1] ", "1. ")
	// Fragments are the entries as the engine rendered them, for other
	// formats (Render).
	Fragments []csl.Fragment
	// ids are the cited paper IDs in order of first citation: the number
	// map of Markdown output.
	ids []string
	// notes are a note style's footnotes (Result.Notes), written before
	// the entries.
	notes []string
}

// Heading is the style's title for the reference list.
func (b *Bibliography) Heading() string { return b.Style.Heading() }

// Render returns the entries in another format.
func (b *Bibliography) Render(f Format) []string {
	out := make([]string, len(b.Fragments))
	for i, fr := range b.Fragments {
		out[i] = f.render(fr)
	}
	return out
}

// StyleName is the name the style was resolved under ("apa", "nature"),
// its short name when it has one.
func (b *Bibliography) StyleName() string { return csl.ShortName(b.Style.Name) }
