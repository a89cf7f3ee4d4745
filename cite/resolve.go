package cite

import (
	"context"
	"fmt"
	"html"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/citefind/citefind/cite/csl"
	"github.com/citefind/citefind/corpus"
)

// Lookup fetches papers by ID or alias in one batch; unknown ones are
// absent from the map. *corpus.Store satisfies it.
type Lookup interface {
	GetMany(ctx context.Context, idsOrAliases []string) (map[string]corpus.Paper, error)
}

// DefaultQuoteThreshold is the normalised edit similarity, in [0, 1], that
// a quote must reach against some passage of the paper's title or abstract.
const DefaultQuoteThreshold = 0.8

// Options configure Resolve. The zero value is APA in Markdown, strict,
// rendered by a new csl.Engine.
type Options struct {
	Style  Style  // a CSL style name or .csl path; "" means APA
	Format Format // Markdown (default), Text or HTML
	// Engine renders with citeproc-js; nil means a new engine for this
	// call (a server keeps one: it holds the warm processors and the
	// cache).
	Engine *csl.Engine
	// Items gives each cited paper's CSL-JSON item; nil means PaperItems.
	Items ItemSource
	// Lenient leaves placeholders naming unknown IDs in place, marked with
	// "⚠", instead of failing.
	Lenient bool
	// Candidates, when not nil, is the set of paper IDs an earlier search
	// returned; cited papers outside it are flagged as not retrieved.
	Candidates map[string]bool
	// QuoteThreshold overrides DefaultQuoteThreshold when > 0.
	QuoteThreshold float64
	// Limits bound what the document may ask (a *LimitError when it asks
	// more); the zero value has no limits.
	Limits Limits
}

// Warning is something the writer should look at; resolution went on.
type Warning struct {
	Line, Col int
	ID        string
	Kind      string // "missing-metadata", "quote", "not-retrieved", "unknown-id", "no-printed-form", "footnote-label"
	Msg       string
}

func (w Warning) String() string {
	return fmt.Sprintf("%d:%d: %s: %s", w.Line, w.Col, w.ID, w.Msg)
}

// UnknownID is a cited ID that is not in the store, where it was cited.
type UnknownID struct {
	ID        string
	Line, Col int
}

// UnknownIDError lists every unknown ID of a document.
type UnknownIDError struct{ IDs []UnknownID }

func (e *UnknownIDError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d unknown paper ID(s):", len(e.IDs))
	for _, u := range e.IDs {
		fmt.Fprintf(&b, "\n  %d:%d: %s", u.Line, u.Col, u.ID)
	}
	return b.String()
}

// Unwrap returns ErrUnknownID.
func (e *UnknownIDError) Unwrap() error { return ErrUnknownID }

// Result is a resolved document.
type Result struct {
	Text         string
	Bibliography *Bibliography // nil when the document cites nothing
	Warnings     []Warning
	Unknown      []UnknownID // with Lenient: the IDs left unresolved
	// Cited are the cited paper IDs in order of first citation.
	Cited []string
	// Notes are a note style's footnotes, in Format, in order: the
	// citation k is the mark of note k in Text ("[^cite-k]" in
	// Markdown, a superscript k in text and HTML), and the notes stand
	// before the bibliography.
	Notes []string
}

type edit struct {
	start, end int
	text       string
}

// Resolve turns the citations of doc into in-text citations and a
// bibliography. All IDs are fetched with one lk.GetMany call. Citations
// are numbered by first appearance; a paper cited twice in one citation
// counts once, and citations written next to each other are one
// (joinAdjacent); a superscript citation takes the spaces before it
// ("work¹"). Markdown output keeps each citation's placeholder in an
// invisible anchor and a number→ID map in the bibliography block, so
// resolving the output again changes nothing, and resolving after editing
// renumbers the whole document. A document without citations is returned
// unchanged. Resolve stops with ctx's error when ctx ends.
func Resolve(ctx context.Context, doc string, lk Lookup, opts Options) (*Result, error) {
	if opts.Style == "" {
		opts.Style = APA
	}
	d, err := ParseContext(ctx, doc, opts.Limits)
	if err != nil {
		return nil, err
	}
	d.Citations = joinAdjacent(doc, d.Citations)
	res := &Result{Text: doc}
	if len(d.Citations) == 0 && d.bibStart < 0 {
		return res, nil
	}
	var asked []string
	seen := map[string]bool{}
	for _, c := range d.Citations {
		for _, it := range c.Items {
			for _, id := range []string{it.ID, it.Secondary} {
				if id != "" && !seen[id] {
					seen[id] = true
					asked = append(asked, id)
				}
			}
		}
	}
	papers, err := lk.GetMany(ctx, asked)
	if err != nil {
		return nil, fmt.Errorf("look up cited papers: %w", err)
	}
	for _, c := range d.Citations {
		for _, it := range c.Items {
			if _, ok := papers[it.ID]; !ok {
				res.Unknown = append(res.Unknown, UnknownID{ID: it.ID, Line: it.Line, Col: it.Col})
			}
			if _, ok := papers[it.Secondary]; it.Secondary != "" && !ok {
				res.Unknown = append(res.Unknown, UnknownID{ID: it.Secondary, Line: it.SecLine, Col: it.SecCol})
			}
		}
	}
	if len(res.Unknown) > 0 && !opts.Lenient {
		return nil, &UnknownIDError{IDs: res.Unknown}
	}
	// Order by first appearance.
	var order []corpus.Paper
	idx := map[string]int{}
	add := func(p corpus.Paper) {
		if _, ok := idx[p.ID]; !ok {
			idx[p.ID] = len(order)
			order = append(order, p)
		}
	}
	usable := func(c Citation) bool {
		for _, it := range c.Items {
			if _, ok := papers[it.ID]; !ok {
				return false
			}
			if _, ok := papers[it.Secondary]; it.Secondary != "" && !ok {
				return false
			}
		}
		return true
	}
	threshold := opts.QuoteThreshold
	if threshold <= 0 {
		threshold = DefaultQuoteThreshold
	}
	warned := map[string]bool{}
	sims := map[string]float64{} // quote similarity by paper and quote
	for i, c := range d.Citations {
		if err := checkCtx(ctx, i); err != nil {
			return nil, err
		}
		if !usable(c) {
			continue
		}
		for _, it := range c.Items {
			p := papers[it.ID]
			add(p)
			if it.Secondary != "" {
				add(papers[it.Secondary])
			}
			if it.Quote != "" {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				key := p.ID + "\x00" + it.Quote // numbered citations repeat their map line's quote
				sim, ok := sims[key]
				if !ok {
					sim = QuoteSimilarity(it.Quote, p)
					sims[key] = sim
				}
				if sim < threshold {
					res.Warnings = append(res.Warnings, Warning{Line: it.Line, Col: it.Col, ID: p.ID, Kind: "quote",
						Msg: fmt.Sprintf("quote %q does not match the paper's title or abstract (similarity %.2f < %.2f)", it.Quote, sim, threshold)})
				}
			}
			for _, q := range []string{it.ID, it.Secondary} {
				if q == "" {
					continue
				}
				qp := papers[q]
				if opts.Candidates != nil && !opts.Candidates[qp.ID] && !warned["nr"+qp.ID] {
					warned["nr"+qp.ID] = true
					res.Warnings = append(res.Warnings, Warning{Line: it.Line, Col: it.Col, ID: qp.ID, Kind: "not-retrieved",
						Msg: "not among the session's search candidates"})
				}
				if !warned["md"+qp.ID] {
					warned["md"+qp.ID] = true
					var miss []string
					if len(qp.Authors) == 0 {
						miss = append(miss, "no author: cited by its title")
					}
					if qp.Year == 0 {
						miss = append(miss, "no year: cited as n.d.")
					}
					if len(miss) > 0 {
						res.Warnings = append(res.Warnings, Warning{Line: it.Line, Col: it.Col, ID: qp.ID, Kind: "missing-metadata",
							Msg: fmt.Sprintf("%q has %s", qp.Title, strings.Join(miss, "; "))})
					}
				}
			}
		}
	}
	for _, u := range res.Unknown {
		res.Warnings = append(res.Warnings, Warning{Line: u.Line, Col: u.Col, ID: u.ID, Kind: "unknown-id", Msg: "not in the store: placeholder left in place"})
	}
	eng := opts.Engine
	if eng == nil {
		eng = csl.New(csl.Options{})
	}
	st, err := ResolveStyle(eng, opts.Style)
	if err != nil {
		return nil, err
	}
	src := opts.Items
	if src == nil {
		if il, ok := lk.(ItemLookup); ok {
			src = StoreItems{Lookup: il}
		} else {
			src = PaperItems{}
		}
	}
	itemJSON, err := src.CSLItems(ctx, order)
	if err != nil {
		return nil, fmt.Errorf("CSL items: %w", err)
	}
	cdoc := csl.Document{}
	for _, p := range order {
		j, ok := itemJSON[p.ID]
		if !ok {
			return nil, fmt.Errorf("CSL items: no item for paper %s", p.ID)
		}
		cdoc.Items = append(cdoc.Items, csl.Item{ID: p.ID, JSON: j})
		res.Cited = append(res.Cited, p.ID)
	}
	// One engine citation per usable citation; a secondary source ("as
	// cited in") is a citation of its own right after, spliced into the
	// primary's suffix.
	type secRef struct {
		marker  string
		cluster int
	}
	// A note style's citations are footnotes, numbered in order (a
	// secondary source's citation is in its primary's note), except a
	// citation written in a footnote of the document's own, which is
	// that note's text.
	isNote := st.Class == "note"
	noteOf := make([]int, len(d.Citations)) // footnote number, or 0
	notes := 0
	footMemo := map[int]bool{}
	clusterOf := make([]int, len(d.Citations))
	var secs [][]secRef // per engine citation
	for ci, c := range d.Citations {
		clusterOf[ci] = -1
		if err := checkCtx(ctx, ci); err != nil {
			return nil, err
		}
		if !usable(c) {
			continue
		}
		var items []csl.CiteItem
		var refs []secRef
		var secClusters []csl.Citation
		dup := map[string]bool{}
		for _, it := range c.Items {
			p := papers[it.ID]
			key := p.ID
			if it.Secondary != "" {
				key += "|" + papers[it.Secondary].ID
			}
			if dup[key] {
				continue
			}
			dup[key] = true
			item := csl.CiteItem{ID: p.ID}
			if it.Secondary != "" {
				marker := fmt.Sprintf("zzcitefindsec%dzz", len(cdoc.Citations)+1+len(secClusters))
				item.Suffix = ", as cited in " + marker
				refs = append(refs, secRef{marker: marker, cluster: len(cdoc.Citations) + 1 + len(secClusters)})
				secClusters = append(secClusters, csl.Citation{Items: []csl.CiteItem{{ID: papers[it.Secondary].ID}}})
			}
			items = append(items, item)
		}
		noteIndex := 0
		if isNote {
			notes++
			noteIndex = notes
			if !inFootnote(doc, c.Start, footMemo) {
				noteOf[ci] = notes
			}
		}
		clusterOf[ci] = len(cdoc.Citations)
		cdoc.Citations = append(cdoc.Citations, csl.Citation{ID: fmt.Sprintf("c%d", len(cdoc.Citations)), Items: items, NoteIndex: noteIndex})
		secs = append(secs, refs)
		for _, sc := range secClusters {
			sc.NoteIndex = noteIndex
			sc.ID = fmt.Sprintf("c%d", len(cdoc.Citations))
			cdoc.Citations = append(cdoc.Citations, sc)
			secs = append(secs, nil)
		}
	}
	out := &csl.Rendered{}
	if len(cdoc.Items) > 0 {
		if out, err = eng.Render(ctx, st, cdoc); err != nil {
			return nil, fmt.Errorf("render citations: %w", err)
		}
	}
	// Splice secondary sources into their primaries.
	rendered := make([]csl.Fragment, len(out.Citations))
	copy(rendered, out.Citations)
	pre, suf := st.CitationAffixes()
	for i, refs := range secs {
		for _, r := range refs {
			inner := string(out.Citations[r.cluster])
			if pre != "" || suf != "" {
				if strings.HasPrefix(inner, pre) && strings.HasSuffix(inner, suf) && len(inner) >= len(pre)+len(suf) {
					inner = inner[len(pre) : len(inner)-len(suf)]
				}
			}
			rendered[i] = csl.Fragment(strings.Replace(string(rendered[i]), r.marker, inner, 1))
		}
	}
	bib := &Bibliography{Style: st, Format: opts.Format, ids: res.Cited}
	byID := map[string]corpus.Paper{}
	for _, p := range order {
		byID[p.ID] = p
	}
	for _, e := range out.Entries {
		bib.Papers = append(bib.Papers, byID[e.ID])
		bib.Fragments = append(bib.Fragments, e.Text)
		bib.Entries = append(bib.Entries, opts.Format.render(e.Text))
	}
	res.Bibliography = bib
	res.Warnings = append(res.Warnings, noPrintedForm(d, clusterOf, out, st.Name, papers)...)
	anchored := opts.Format != Text
	var edits []edit
	for ci, c := range d.Citations {
		if clusterOf[ci] < 0 {
			text := c.Raw
			if c.Kind != KindPlaceholder {
				text = "[[cite:" + serializeItems(c.Items) + "]]"
			}
			if !strings.HasSuffix(doc[:c.Start], "⚠") {
				text = "⚠" + text
			}
			edits = append(edits, edit{c.Start, c.End, text})
			continue
		}
		fr := rendered[clusterOf[ci]]
		text := opts.Format.renderCitation(fr)
		isMark := fr.Superscript()
		if n := noteOf[ci]; n > 0 {
			res.Notes = append(res.Notes, opts.Format.render(fr))
			text, isMark = opts.Format.noteMark(len(res.Notes)), true
		}
		// A superscript citation follows its word without a space
		// ("work¹", as pandoc writes it): the spaces before it are taken,
		// and its anchor remembers that with a space before its list,
		// so that a style that is not superscript gives one back.
		start := c.Start
		prevEnd := -1
		if ci > 0 {
			prevEnd = d.Citations[ci-1].End
		}
		sp := spacesBefore(doc, c.Start, prevEnd)
		took := c.tookSpace()
		before := ""
		switch {
		case isMark:
			if sp < c.Start {
				start, took = sp, true
			}
		case took:
			if sp == c.Start && c.Start > 0 && !isSpace(doc[c.Start-1]) {
				before = " "
			}
			took = false
		}
		// A footnote mark follows the punctuation after it ("work.¹", as
		// the Chicago Manual and pandoc put it): the punctuation goes
		// into the anchor, before the mark, and comes back out after
		// the citation in a style without notes. Not after a mark that
		// only spaces part from the one before it ("work [[cite:a]]
		// [[cite:b]], then"): that one keeps its spaces (²³ would read as
		// 23), and the punctuation would land between them ("work¹ ,²");
		// it stays after both ("work¹ ², then"), as pandoc leaves it.
		end, after := c.End, ""
		moved := movedPunct(c)
		spacedFromPrev := ci > 0 && prevEnd < c.Start && strings.Trim(doc[prevEnd:c.Start], " \t") == ""
		switch {
		case noteOf[ci] > 0 && moved != "":
			text = moved + text
		case noteOf[ci] > 0 && punctRun(doc[c.End:]) > 0 && !spacedFromPrev:
			n := punctRun(doc[c.End:])
			text = doc[c.End:c.End+n] + text
			end += n
		default:
			after = moved
		}
		if anchored {
			list := serializeItems(c.Items)
			if took {
				list = " " + list
			}
			text = anchorOpen + list + "-->" + text + anchorClose
		}
		edits = append(edits, edit{start, end, before + text + after})
	}
	for _, r := range d.drop {
		edits = append(edits, edit{r[0], r[1], ""})
	}
	bib.notes = res.Notes
	if len(res.Notes) > 0 && opts.Format == Markdown {
		res.Warnings = append(res.Warnings, ownNoteLabels(doc, d, len(res.Notes))...)
	}
	block := bib.block(opts.Format)
	if d.bibStart >= 0 {
		edits = append(edits, edit{d.bibStart, d.bibEnd, block})
	}
	text := applyEdits(doc, edits)
	if d.bibStart < 0 && len(order) > 0 {
		text = strings.TrimRight(text, "\n") + "\n\n" + block + "\n"
	}
	res.Text = text
	return res, nil
}

// tookSpace reports whether c is an anchor of an earlier run that took
// the spaces before it (a superscript citation or a footnote mark): its
// list starts with a space. Resolve and Normalize give the space back.
func (c Citation) tookSpace() bool { return strings.HasPrefix(c.Raw, anchorOpen+" ") }

// notePunct is the punctuation a footnote mark is put after, all of a
// run of it ("true?!¹", "so….²", as pandoc does).
const notePunct = ".,;:!?…"

// punctRun is the length in bytes of the run of notePunct that s starts
// with.
func punctRun(s string) int {
	n := 0
	for n < len(s) {
		r, size := utf8.DecodeRuneInString(s[n:])
		if !strings.ContainsRune(notePunct, r) {
			break
		}
		n += size
	}
	return n
}

// movedPunct is the punctuation an earlier run moved into anchor c
// before its footnote mark ("<!--cite: a-->.[^cite-1]<!--/cite-->", in
// HTML `.<sup><a href="#cite-fn-1"…`), or "".
func movedPunct(c Citation) string {
	if !strings.HasPrefix(c.Raw, anchorOpen) {
		return ""
	}
	i := strings.Index(c.Raw, "-->") + 3
	if i < 3 {
		return ""
	}
	n := punctRun(c.Raw[i:])
	if rest := c.Raw[i+n:]; n == 0 || !strings.HasPrefix(rest, "[^cite-") && !strings.HasPrefix(rest, `<sup><a href="#cite-fn-`) {
		return ""
	}
	return c.Raw[i : i+n]
}

// noteLabelRe is a Markdown footnote label of the form citefind gives a
// note style's notes ("[^cite-3]").
var noteLabelRe = regexp.MustCompile(`\[\^cite-(\d+)\]`)

// ownNoteLabels warns of each footnote label "[^cite-N]" of the
// document's own (outside citefind's anchors and bibliography block)
// with N at most notes, the number of citefind's notes: Markdown
// renderers would join it to citefind's note N.
func ownNoteLabels(doc string, d *Document, notes int) []Warning {
	var ws []Warning
	var li *lineIndex
	for _, m := range noteLabelRe.FindAllStringSubmatchIndex(doc, -1) {
		if d.bibStart >= 0 && m[0] >= d.bibStart && m[0] < d.bibEnd {
			continue
		}
		if n, err := strconv.Atoi(doc[m[2]:m[3]]); err != nil || n < 1 || n > notes {
			continue // no note of citefind's has that number
		}
		inside := false
		for _, c := range d.Citations {
			if m[0] >= c.Start && m[0] < c.End {
				inside = true
				break
			}
		}
		if inside {
			continue
		}
		if li == nil {
			li = newLineIndex(doc)
		}
		line, col := li.pos(m[0])
		label := doc[m[0]:m[1]]
		ws = append(ws, Warning{Line: line, Col: col, ID: label, Kind: "footnote-label",
			Msg: "the draft's own footnote label " + label + " is one citefind gives this note style's notes; Markdown renderers will mix the two: rename it"})
	}
	return ws
}

// footnoteDefRe is the start of a Markdown footnote's text ("[^1]: ").
var footnoteDefRe = regexp.MustCompile(`^ {0,3}\[\^[^\]\s]+\]:`)

// inFootnote reports whether doc[off] is in a footnote of the
// document's own: on the line that opens it ("[^1]: See [[cite:a]].") or
// on an indented line of it after that (blank lines between allowed). A
// note style's citation there is the note's text, not a note of its own,
// as in pandoc. memo holds the answers found for line starts, so that a
// document's lines are read once however many citations it has.
func inFootnote(doc string, off int, memo map[int]bool) bool {
	start := strings.LastIndexByte(doc[:off], '\n') + 1
	if nl := strings.IndexByte(doc[off:], '\n'); nl >= 0 {
		off += nl // the whole line: a citation that opens it is on no blank line
	} else {
		off = len(doc)
	}
	var seen []int
	answer := func(v bool) bool {
		for _, l := range seen {
			memo[l] = v
		}
		return v
	}
	for {
		if v, ok := memo[start]; ok {
			return answer(v)
		}
		seen = append(seen, start)
		line := doc[start:off]
		if footnoteDefRe.MatchString(line) {
			return answer(true)
		}
		if !strings.HasPrefix(line, "    ") && !strings.HasPrefix(line, "\t") && strings.TrimSpace(line) != "" {
			return answer(false)
		}
		if start == 0 {
			return answer(false)
		}
		// The line before, whole.
		off = start - 1
		start = strings.LastIndexByte(doc[:off], '\n') + 1
	}
}

// spacesBefore returns where the spaces and tabs right before doc[end:]
// start, when a word or punctuation stands before them on the same line
// and not the end of the citation before (prev): "work [[cite:a]]" gives
// the offset of the space; a citation at the start of a line, after
// another citation or with no space before it gives end.
func spacesBefore(doc string, end, prev int) int {
	i := end
	for i > 0 && (doc[i-1] == ' ' || doc[i-1] == '\t') {
		i--
	}
	if i == end || i == 0 || doc[i-1] == '\n' || doc[i-1] == '\r' || i == prev {
		return end
	}
	return i
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

// joinAdjacent makes citations written next to each other, with nothing
// between them ("[[cite:a]][[cite:b]]", or two anchors of an earlier
// run), one citation of all their items, as "[[cite:a,b]]" is: the style
// then prints them as one citation ("[1], [2]", "(Smith, 2020; Doe,
// 2022)", collapsed ranges "[1]–[3]"), where two would run together
// ("[2][1]", "(Smith, 2020)(Doe, 2022)", and a superscript style's "²¹",
// which reads as citation 21). Citations with anything between them,
// even a space, stay apart.
func joinAdjacent(doc string, cs []Citation) []Citation {
	var out []Citation
	for _, c := range cs {
		if n := len(out); n > 0 && out[n-1].End == c.Start {
			last := &out[n-1]
			last.Items = append(append([]Item(nil), last.Items...), c.Items...)
			last.End = c.End
			last.Raw = doc[last.Start:last.End]
			if c.Kind != KindPlaceholder {
				last.Kind = c.Kind // not only placeholders: rewritten from Items when left in place
			}
			continue
		}
		out = append(out, c)
	}
	return out
}

// noPrintedForm warns about the papers the style prints nothing for:
// citations that came out as citeproc-js's NoPrintedForm, and cited
// papers whose bibliography entry is missing or empty (a style may leave
// a type out of its bibliography, or need a field the record lacks).
// Each warning is at the paper's first citation.
func noPrintedForm(d *Document, clusterOf []int, out *csl.Rendered, style string, papers map[string]corpus.Paper) []Warning {
	var ws []Warning
	type pos struct{ line, col int }
	first := map[string]pos{}
	var order []string
	for ci, c := range d.Citations {
		if clusterOf[ci] < 0 {
			continue
		}
		for _, it := range c.Items {
			for _, q := range []struct {
				id        string
				line, col int
			}{{it.ID, it.Line, it.Col}, {it.Secondary, it.SecLine, it.SecCol}} {
				if q.id == "" {
					continue
				}
				id := papers[q.id].ID
				if _, ok := first[id]; !ok {
					first[id] = pos{q.line, q.col}
					order = append(order, id)
				}
			}
		}
		if clusterOf[ci] < len(out.Citations) && out.Citations[clusterOf[ci]].PrintsNothing() {
			ids := make([]string, len(c.Items))
			for i, it := range c.Items {
				ids[i] = papers[it.ID].ID
			}
			ws = append(ws, Warning{Line: c.Items[0].Line, Col: c.Items[0].Col, ID: strings.Join(ids, ","), Kind: "no-printed-form",
				Msg: fmt.Sprintf("style %s prints nothing for this citation: citeproc-js wrote %q (the record lacks every field the style cites it by)", style, csl.NoPrintedForm)})
		}
	}
	if !out.HasBibliography {
		return ws
	}
	printed := map[string]bool{}
	for _, e := range out.Entries {
		if !e.Text.PrintsNothing() {
			printed[e.ID] = true
		}
	}
	for _, id := range order {
		if !printed[id] {
			p := first[id]
			ws = append(ws, Warning{Line: p.line, Col: p.col, ID: id, Kind: "no-printed-form",
				Msg: fmt.Sprintf("style %s prints no bibliography entry for it (the style leaves its type out, or the record lacks the fields the entry needs)", style)})
		}
	}
	return ws
}

// checkCtx returns ctx's error at every 256th citation i.
func checkCtx(ctx context.Context, i int) error {
	if i%256 == 0 {
		return ctx.Err()
	}
	return nil
}

// block renders the bibliography section; in Markdown and HTML with its
// markers and the number→ID map.
func (b *Bibliography) block(f Format) string {
	var s strings.Builder
	switch f {
	case Text:
		if len(b.notes) > 0 {
			s.WriteString("Notes\n\n")
			for i, n := range b.notes {
				fmt.Fprintf(&s, "%d. %s\n\n", i+1, n)
			}
		}
		s.WriteString(b.Heading() + "\n\n")
		for _, e := range b.Entries {
			s.WriteString(e + "\n\n")
		}
		return strings.TrimRight(s.String(), "\n")
	case HTML:
		s.WriteString(bibStart + "\n")
		if len(b.notes) > 0 {
			s.WriteString("<section class=\"footnotes\" role=\"doc-endnotes\">\n<ol>\n")
			for i, n := range b.notes {
				fmt.Fprintf(&s, "<li id=\"cite-fn-%d\">%s <a href=\"#cite-fnref-%d\" role=\"doc-backlink\">↩︎</a></li>\n", i+1, n, i+1)
			}
			s.WriteString("</ol>\n</section>\n")
		}
		s.WriteString("<h2>" + html.EscapeString(b.Heading()) + "</h2>\n<div class=\"csl-bib-body\">\n")
		for _, e := range b.Entries {
			s.WriteString(`<div class="csl-entry">` + e + "</div>\n")
		}
		s.WriteString("</div>\n")
	default:
		s.WriteString(bibStart + "\n")
		for i, n := range b.notes {
			fmt.Fprintf(&s, "[^cite-%d]: %s\n\n", i+1, n)
		}
		s.WriteString("## " + b.Heading() + "\n\n")
		for _, e := range b.Entries {
			s.WriteString(e + "\n\n")
		}
	}
	s.WriteString(mapOpen + "\n")
	for i, id := range b.ids {
		fmt.Fprintf(&s, "[%d]: cite:%s\n", i+1, id)
	}
	s.WriteString("-->\n" + bibEnd)
	return s.String()
}

// Normalize rewrites a draft's citations — resolved anchors and bare [n]
// numbers of its own number→ID map — back into placeholders, and removes
// its bibliography block and map, so that drafts can be combined.
func Normalize(draft string) (string, error) {
	d, err := Parse(draft)
	if err != nil {
		return "", err
	}
	var edits []edit
	for _, c := range d.Citations {
		if c.Kind != KindPlaceholder {
			// The space a superscript citation took (Resolve) comes back,
			// and the punctuation a footnote mark was put after.
			text := "[[cite:" + serializeItems(c.Items) + "]]" + movedPunct(c)
			if c.tookSpace() && c.Start > 0 && !isSpace(draft[c.Start-1]) {
				text = " " + text
			}
			edits = append(edits, edit{c.Start, c.End, text})
		}
	}
	for _, r := range d.drop {
		edits = append(edits, edit{r[0], r[1], ""})
	}
	if d.bibStart >= 0 {
		edits = append(edits, edit{d.bibStart, d.bibEnd, ""})
	}
	return strings.TrimRight(applyEdits(draft, edits), "\n \t"), nil
}

// Merge combines drafts that each carry their own citation numbering (and
// "[n]: cite:ID" map) into one document of placeholders, in order, separated
// by blank lines. Resolve the result for one numbering and one
// bibliography. Errors name the draft (1-based).
func Merge(drafts []string) (string, error) {
	var parts []string
	for i, dr := range drafts {
		s, err := Normalize(dr)
		if err != nil {
			return "", fmt.Errorf("draft %d: %w", i+1, err)
		}
		if s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "\n\n") + "\n", nil
}

// applyEdits replaces the byte ranges of edits in s by their texts, in
// order of position; an edit overlapping an earlier one is skipped.
func applyEdits(s string, edits []edit) string {
	sort.Slice(edits, func(i, j int) bool { return edits[i].start < edits[j].start })
	var b strings.Builder
	last := 0
	for _, e := range edits {
		if e.start < last {
			continue
		}
		b.WriteString(s[last:e.start])
		b.WriteString(e.text)
		last = e.end
	}
	b.WriteString(s[last:])
	return b.String()
}
