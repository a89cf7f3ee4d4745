package cite

import (
	"context"
	"fmt"
	"sort"
	"strings"

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

// Options configure Resolve. The zero value is APA in Markdown, strict.
type Options struct {
	Style  Style  // "" means APA
	Format Format // Markdown (default) or Text
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
	Kind      string // "missing-metadata", "quote", "not-retrieved", "unknown-id"
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
}

type edit struct {
	start, end int
	text       string
}

// Resolve turns the citations of doc into in-text citations and a
// bibliography. All IDs are fetched with one lk.GetMany call. Citations
// are numbered by first appearance; a paper cited twice in one citation
// counts once. Markdown output keeps each citation's placeholder in an
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
	bib := NewBibliography(opts.Style, opts.Format, order)
	res.Bibliography = bib
	for _, p := range order {
		res.Cited = append(res.Cited, p.ID)
	}
	md := opts.Format == Markdown
	var edits []edit
	for i, c := range d.Citations {
		if err := checkCtx(ctx, i); err != nil {
			return nil, err
		}
		if !usable(c) {
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
		var cs []cite
		dup := map[string]bool{}
		for _, it := range c.Items {
			p := papers[it.ID]
			key := p.ID
			var sec *corpus.Paper
			if it.Secondary != "" {
				s := papers[it.Secondary]
				sec = &s
				key += "|" + s.ID
			}
			if dup[key] {
				continue
			}
			dup[key] = true
			cs = append(cs, cite{p: typoPaper(p), sec: typoSec(sec)})
		}
		text := bib.inText(cs)
		if md {
			text = anchorOpen + serializeItems(c.Items) + "-->" + text + anchorClose
		}
		edits = append(edits, edit{c.Start, c.End, text})
	}
	for _, r := range d.drop {
		edits = append(edits, edit{r[0], r[1], ""})
	}
	block := bib.block(md)
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

// checkCtx returns ctx's error at every 256th citation i.
func checkCtx(ctx context.Context, i int) error {
	if i%256 == 0 {
		return ctx.Err()
	}
	return nil
}

func typoSec(p *corpus.Paper) *corpus.Paper {
	if p == nil {
		return nil
	}
	q := typoPaper(*p)
	return &q
}

// block renders the bibliography section; in Markdown with its markers and
// the number→ID map.
func (b *Bibliography) block(md bool) string {
	var s strings.Builder
	if md {
		s.WriteString(bibStart + "\n## " + b.Heading() + "\n\n")
	} else {
		s.WriteString(b.Heading() + "\n\n")
	}
	for _, e := range b.Entries {
		s.WriteString(e + "\n\n")
	}
	if !md {
		return strings.TrimRight(s.String(), "\n")
	}
	s.WriteString(mapOpen + "\n")
	ids := make([]string, len(b.Papers))
	for _, p := range b.Papers {
		ids[b.num[p.ID]-1] = p.ID
	}
	for i, id := range ids {
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
			edits = append(edits, edit{c.Start, c.End, "[[cite:" + serializeItems(c.Items) + "]]"})
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
