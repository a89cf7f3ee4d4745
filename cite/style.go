package cite

import (
	"fmt"
	"sort"
	"strings"

	"github.com/citefind/citefind/corpus"
)

// Style is a citation style.
type Style string

// The styles, named as on the command line. Each follows the CSL style of
// the same name in the citation-style-language-styles collection (see
// docs/cite.md for the file names and the measured agreement).
const (
	APA       Style = "apa"       // APA 7th edition (apa.csl)
	IEEE      Style = "ieee"      // IEEE (ieee.csl)
	MLA       Style = "mla"       // MLA 9th edition (modern-language-association.csl)
	Chicago   Style = "chicago"   // Chicago author-date 17th edition (chicago-author-date.csl)
	Harvard   Style = "harvard"   // Harvard, Cite Them Right (harvard-cite-them-right.csl)
	Vancouver Style = "vancouver" // Vancouver (vancouver.csl)
)

// Styles lists the styles in a stable order.
var Styles = []Style{APA, IEEE, MLA, Chicago, Harvard, Vancouver}

// CSLFile is the file name of the CSL style each Style follows.
func (s Style) CSLFile() string {
	switch s {
	case MLA:
		return "modern-language-association.csl"
	case Chicago:
		return "chicago-author-date.csl"
	case Harvard:
		return "harvard-cite-them-right.csl"
	}
	return string(s) + ".csl"
}

// ParseStyle returns the style with this name, or an error wrapping
// ErrUnknownStyle.
func ParseStyle(name string) (Style, error) {
	for _, s := range Styles {
		if strings.EqualFold(name, string(s)) {
			return s, nil
		}
	}
	return "", fmt.Errorf("%w %q (want one of apa, ieee, mla, chicago, harvard, vancouver)", ErrUnknownStyle, name)
}

// Numeric reports whether the style numbers its citations.
func (s Style) Numeric() bool { return s == IEEE || s == Vancouver }

// Format is an output format.
type Format int

// Output formats.
const (
	Markdown Format = iota // *italics*, <URL>, invisible anchors that make resolution repeatable
	Text                   // plain text, no markup: a final rendering
)

// ParseFormat maps "md"/"markdown" and "text"/"txt"/"plain".
func ParseFormat(name string) (Format, error) {
	switch strings.ToLower(name) {
	case "md", "markdown":
		return Markdown, nil
	case "text", "txt", "plain":
		return Text, nil
	}
	return 0, fmt.Errorf("unknown format %q (want md or text)", name)
}

// out writes markup for a format.
type out struct{ md bool }

func (o out) it(s string) string {
	if o.md && s != "" {
		return "*" + s + "*"
	}
	return s
}

func (o out) url(u string) string {
	if o.md {
		return "<" + u + ">"
	}
	return u
}

func (o out) link(text, u string) string {
	if o.md {
		return "[" + text + "](" + u + ")"
	}
	return text
}

// endsSentence reports whether s ends in . ? or ! (markup and closing
// quotes aside).
func endsSentence(s string) bool {
	s = strings.TrimRight(s, "*”’\"')]")
	return strings.HasSuffix(s, ".") || strings.HasSuffix(s, "?") || strings.HasSuffix(s, "!")
}

// period appends "." unless s already ends a sentence.
func period(s string) string {
	if s == "" || endsSentence(s) {
		return s
	}
	return s + "."
}

// entry is one bibliography entry being formatted.
type entry struct {
	p        corpus.Paper
	yearSuff string // disambiguation letter: "a", "b", or ""
	num      int    // citation number (numeric styles)
	namesN   int    // MLA: names to show before "et al." (0: the style's default)
	same     bool   // same authors as the entry before: MLA and Chicago print a dash
}

func (e entry) doiURL() string {
	if e.p.DOI != "" {
		return "https://doi.org/" + e.p.DOI
	}
	return ""
}

func isPreprint(p corpus.Paper) bool {
	return p.Type == "article" || p.Type == "post" || (p.ArXiv != "" && p.Type == "")
}

// kind groups CSL types into the shapes the styles format.
func kind(p corpus.Paper) string {
	switch p.Type {
	case "article-journal", "article-magazine", "article-newspaper", "review":
		return "journal"
	case "paper-conference":
		return "conference"
	case "book", "report", "thesis", "chapter", "webpage", "dataset", "software":
		if p.Type == "dataset" || p.Type == "software" {
			return "report"
		}
		return p.Type
	case "post-weblog", "post":
		return "webpage"
	}
	if isPreprint(p) {
		return "preprint"
	}
	if p.Venue != "" {
		return "journal"
	}
	return "book"
}

// Bibliography formats the entries of papers in the style's order, with
// their labels; cited gives the citation number of each paper ID for
// numeric styles.
func formatEntry(st Style, f Format, e entry) string {
	o := out{md: f == Markdown}
	var s string
	switch st {
	case APA:
		s = apaEntry(o, e)
	case IEEE:
		s = ieeeEntry(o, e)
	case MLA:
		s = mlaEntry(o, e)
	case Chicago:
		s = chicagoEntry(o, e)
	case Harvard:
		s = harvardEntry(o, e)
	case Vancouver:
		s = vancouverEntry(o, e)
	}
	return strings.TrimSpace(s)
}

// ---- APA 7 ----

func apaNames(as []corpus.Author) string {
	fmtOne := func(a corpus.Author) string {
		if a.Literal != "" || a.Given == "" {
			return familyOf(a)
		}
		return a.Family + ", " + initials(a.Given, ".", " ")
	}
	var ns []string
	for _, a := range as {
		ns = append(ns, fmtOne(a))
	}
	switch {
	case len(ns) == 1:
		return ns[0]
	case len(ns) == 2:
		return ns[0] + ", & " + ns[1]
	case len(ns) <= 20:
		return strings.Join(ns[:len(ns)-1], ", ") + ", & " + ns[len(ns)-1]
	}
	return strings.Join(ns[:19], ", ") + ", … " + ns[len(ns)-1]
}

func yearLabel(e entry, nd string) string {
	if e.p.Year == 0 {
		if e.yearSuff != "" {
			return nd + "-" + e.yearSuff
		}
		return nd
	}
	return fmt.Sprint(e.p.Year) + e.yearSuff
}

func apaEntry(o out, e entry) string {
	p := e.p
	k := kind(p)
	italicTitle := k == "book" || k == "thesis" || k == "report" || k == "webpage"
	title := p.Title
	if italicTitle {
		title = o.it(title)
	}
	date := "(" + yearLabel(e, "n.d.") + ")."
	var b []string
	if len(p.Authors) > 0 {
		b = append(b, period(apaNames(p.Authors)), date, period(title))
	} else {
		b = append(b, period(title), date)
	}
	switch k {
	case "journal", "conference":
		src := o.it(p.Venue)
		if p.Volume != "" {
			src += ", " + o.it(p.Volume)
			if p.Issue != "" {
				src += "(" + p.Issue + ")"
			}
		}
		if p.Pages != "" {
			src += ", " + pageRange(p.Pages, "full")
		}
		if src != "" {
			b = append(b, period(src))
		}
	case "preprint":
		if p.Venue != "" {
			b = append(b, "In "+o.it(p.Venue)+".")
		}
	case "chapter":
		src := "In " + o.it(p.Venue)
		if p.Pages != "" {
			src += " (pp. " + pageRange(p.Pages, "full") + ")"
		}
		b = append(b, period(src))
		if p.Publisher != "" {
			b = append(b, period(p.Publisher))
		}
	case "webpage":
		if p.Venue != "" {
			b = append(b, period(p.Venue))
		}
	default:
		if p.Publisher != "" {
			b = append(b, period(p.Publisher))
		}
	}
	if u := e.doiURL(); u != "" {
		b = append(b, o.url(u))
	} else if p.URL != "" {
		b = append(b, o.url(p.URL))
	}
	return strings.Join(b, " ")
}

// ---- IEEE ----

func ieeeNames(o out, as []corpus.Author) string {
	one := func(a corpus.Author) string {
		if a.Literal != "" || a.Given == "" {
			return familyOf(a)
		}
		return initials(a.Given, ".", " ") + " " + a.Family
	}
	if len(as) > 6 {
		return one(as[0]) + " " + o.it("et al.")
	}
	var ns []string
	for _, a := range as {
		ns = append(ns, one(a))
	}
	switch len(ns) {
	case 1:
		return ns[0]
	case 2:
		return ns[0] + " and " + ns[1]
	}
	return strings.Join(ns[:len(ns)-1], ", ") + ", and " + ns[len(ns)-1]
}

// quoted puts a title in quotes followed by sep (", "), moving a comma
// inside the quotes and dropping it after ? or !.
func quoted(title, punct string) string {
	if punct == "" {
		return "“" + title + "”"
	}
	if strings.HasSuffix(title, "?") || strings.HasSuffix(title, "!") {
		return "“" + title + "”"
	}
	return "“" + title + punct + "”"
}

func ieeeEntry(o out, e entry) string {
	p := e.p
	k := kind(p)
	var parts []string // joined with ", "
	head := ""
	if len(p.Authors) > 0 {
		head = ieeeNames(o, p.Authors) + ", "
	}
	year := ""
	if p.Year != 0 {
		year = fmt.Sprint(p.Year)
	}
	doi := ""
	if p.DOI != "" {
		doi = "doi: " + o.link(p.DOI, e.doiURL()) + "."
	}
	switch k {
	case "journal":
		s := head + quoted(p.Title, ",") + " " + o.it(p.Venue)
		parts = append(parts, s)
		if p.Volume != "" {
			parts = append(parts, "vol. "+p.Volume)
		}
		if p.Issue != "" {
			parts = append(parts, "no. "+p.Issue)
		}
		if p.Pages != "" {
			parts = append(parts, "pp. "+pageRange(p.Pages, "full"))
		}
		if year != "" {
			parts = append(parts, year)
		}
		s = strings.Join(parts, ", ")
		if doi != "" {
			return s + ", " + doi
		}
		return s + "."
	case "conference":
		s := head + quoted(p.Title, ",") + " in " + o.it(p.Venue)
		parts = append(parts, s)
		if year != "" {
			parts = append(parts, year)
		}
		if p.Pages != "" {
			parts = append(parts, "pp. "+pageRange(p.Pages, "full"))
		}
		s = period(strings.Join(parts, ", "))
		if doi != "" {
			s += " " + doi
		}
		return s
	case "preprint":
		s := head + quoted(p.Title, ",")
		if p.Venue != "" {
			s += " " + o.it(p.Venue) + "."
		}
		if year != "" {
			s += " " + year + "."
		}
		if p.URL != "" {
			s += " Available: " + o.url(p.URL)
		} else if doi != "" {
			s += " " + doi
		}
		return s
	case "book":
		s := head + o.it(p.Title) + "."
		var pub []string
		if p.Publisher != "" {
			pub = append(pub, p.Publisher)
		}
		if year != "" {
			pub = append(pub, year)
		}
		if len(pub) > 0 {
			s += " " + strings.Join(pub, ", ") + "."
		}
		if doi != "" {
			s += " " + doi
		}
		return s
	case "chapter":
		s := head + quoted(p.Title, ",") + " in " + o.it(p.Venue)
		parts = append(parts, s)
		if p.Publisher != "" {
			parts = append(parts, p.Publisher)
		}
		if year != "" {
			parts = append(parts, year)
		}
		if p.Pages != "" {
			parts = append(parts, "pp. "+pageRange(p.Pages, "full"))
		}
		s = period(strings.Join(parts, ", "))
		if doi != "" {
			s += " " + doi
		}
		return s
	case "webpage":
		s := head + quoted(p.Title, ",")
		var rest []string
		if p.Venue != "" {
			rest = append(rest, o.it(p.Venue))
		}
		if year != "" {
			rest = append(rest, year)
		}
		if len(rest) > 0 {
			s += " " + strings.Join(rest, ", ") + "."
		} else {
			s = strings.TrimSuffix(s, ",”") + "”."
		}
		if p.URL != "" {
			s += " " + o.url(p.URL)
		}
		return s
	default: // thesis, report
		s := head + quoted(p.Title, ",")
		var rest []string
		if p.Publisher != "" {
			rest = append(rest, p.Publisher)
		}
		if year != "" {
			rest = append(rest, year)
		}
		s += " " + strings.Join(rest, ", ") + "."
		if doi != "" {
			s += " " + doi
		}
		return s
	}
}

// ---- Vancouver ----

func vancouverNames(as []corpus.Author) string {
	var ns []string
	for i, a := range as {
		if i == 6 {
			ns = append(ns, "et al")
			break
		}
		if a.Literal != "" || a.Given == "" {
			ns = append(ns, familyOf(a))
			continue
		}
		ns = append(ns, a.Family+" "+initials(a.Given, "", ""))
	}
	return strings.Join(ns, ", ")
}

func vancouverEntry(o out, e entry) string {
	p := e.p
	k := kind(p)
	var b []string
	if len(p.Authors) > 0 {
		b = append(b, period(vancouverNames(p.Authors)))
	}
	title := p.Title
	if u := e.doiURL(); u != "" {
		title = o.link(title, u)
	}
	year := ""
	if p.Year != 0 {
		year = fmt.Sprint(p.Year)
	}
	pages := pageRange(p.Pages, "minimal")
	switch k {
	case "journal":
		b = append(b, period(title), period(p.Venue))
		src := year
		vi := p.Volume
		if p.Issue != "" {
			vi += "(" + p.Issue + ")"
		}
		if vi != "" {
			if src != "" {
				src += ";"
			}
			src += vi
		}
		if p.Pages != "" {
			src += ":" + pages
		}
		if src != "" {
			b = append(b, src+".")
		}
	case "conference", "chapter":
		b = append(b, period(title), period("In: "+p.Venue))
		switch {
		case p.Publisher != "" && year != "":
			b = append(b, p.Publisher+"; "+year+".")
		case p.Publisher != "":
			b = append(b, p.Publisher+".")
		case year != "":
			b = append(b, year+".")
		}
		if p.Pages != "" {
			b = append(b, "p. "+pages+".")
		}
	case "preprint", "webpage":
		b = append(b, title+" [Internet].")
		if p.Venue != "" {
			b = append(b, period(p.Venue))
		}
		if year != "" {
			b = append(b, year+".")
		}
		if p.URL != "" {
			b = append(b, "Available from: "+o.url(p.URL))
		}
		return strings.Join(b, " ")
	default:
		b = append(b, period(title))
		switch {
		case p.Publisher != "" && year != "":
			b = append(b, p.Publisher+"; "+year+".")
		case p.Publisher != "":
			b = append(b, p.Publisher+".")
		case year != "":
			b = append(b, year+".")
		}
	}
	return strings.Join(b, " ")
}

// ---- Harvard (Cite Them Right) ----

func harvardNames(o out, as []corpus.Author) string {
	one := func(a corpus.Author) string {
		if a.Literal != "" || a.Given == "" {
			return familyOf(a)
		}
		return a.Family + ", " + initials(a.Given, ".", "")
	}
	if len(as) >= 4 {
		return one(as[0]) + " " + o.it("et al.")
	}
	var ns []string
	for _, a := range as {
		ns = append(ns, one(a))
	}
	if len(ns) == 1 {
		return ns[0]
	}
	return strings.Join(ns[:len(ns)-1], ", ") + " and " + ns[len(ns)-1]
}

func harvardEntry(o out, e entry) string {
	p := e.p
	k := kind(p)
	year := "(" + yearLabel(e, "no date") + ")"
	var s string
	italic := k == "book" || k == "thesis" || k == "report" || k == "webpage"
	title := "‘" + p.Title + "’"
	if italic {
		title = o.it(p.Title)
	}
	if len(p.Authors) > 0 {
		s = harvardNames(o, p.Authors) + " " + year + " " + title
	} else {
		s = title + " " + year
	}
	var tail string
	switch k {
	case "journal":
		var parts []string
		parts = append(parts, o.it(p.Venue))
		if p.Volume != "" {
			vi := p.Volume
			if p.Issue != "" {
				vi += "(" + p.Issue + ")"
			}
			parts = append(parts, vi)
		}
		if p.Pages != "" {
			parts = append(parts, "pp. "+pageRange(p.Pages, "full"))
		}
		if len(p.Authors) > 0 {
			s += ", " + strings.Join(parts, ", ") + "."
		} else {
			s += " " + strings.Join(parts, ", ") + "."
		}
	case "conference":
		s += ", in " + o.it(p.Venue)
		if p.Publisher != "" {
			s += ". " + p.Publisher
		}
		if p.Pages != "" {
			s += ", pp. " + pageRange(p.Pages, "full")
		}
		s += "."
	case "preprint":
		if p.Venue != "" {
			s += ", " + o.it(p.Venue) + " [Preprint]."
		} else {
			s += " [Preprint]."
		}
	case "chapter":
		s += ", in " + o.it(p.Venue) + "."
		if p.Publisher != "" {
			s += " " + p.Publisher
		}
		if p.Pages != "" {
			s += ", pp. " + pageRange(p.Pages, "full")
		}
		s = period(s)
	case "webpage":
		if p.Venue != "" {
			s += ", " + o.it(p.Venue)
		}
		s += "."
	default:
		s += "."
		if p.Publisher != "" {
			s += " " + p.Publisher + "."
		}
	}
	if u := e.doiURL(); u != "" {
		tail = " Available at: " + o.url(u) + "."
	} else if p.URL != "" {
		tail = " Available at: " + o.url(p.URL) + "."
	}
	return s + tail
}

// ---- MLA 9 ----

func mlaNames(as []corpus.Author, show int) string {
	one := func(a corpus.Author, first bool) string {
		if a.Literal != "" || a.Given == "" {
			return familyOf(a)
		}
		if first {
			return a.Family + ", " + a.Given
		}
		return a.Given + " " + a.Family
	}
	switch {
	case len(as) == 1:
		return one(as[0], true)
	case len(as) == 2:
		return one(as[0], true) + ", and " + one(as[1], false)
	}
	if show <= 1 {
		return one(as[0], true) + ", et al"
	}
	var ns []string
	for i, a := range as {
		if i == show {
			return strings.Join(ns, ", ") + ", et al"
		}
		ns = append(ns, one(a, i == 0))
	}
	return strings.Join(ns[:len(ns)-1], ", ") + ", and " + ns[len(ns)-1]
}

func mlaEntry(o out, e entry) string {
	p := e.p
	k := kind(p)
	title := titleCase(p.Title)
	italic := k == "book" || k == "thesis" || k == "report" || (k == "webpage" && p.Venue == "")
	var b []string
	if len(p.Authors) > 0 {
		if e.same {
			b = append(b, "---.")
		} else {
			b = append(b, period(mlaNames(p.Authors, e.namesN)))
		}
	}
	if italic {
		b = append(b, period(o.it(title)))
	} else {
		b = append(b, quoted(title, "."))
	}
	var src []string
	year := ""
	if p.Year != 0 {
		year = fmt.Sprint(p.Year)
	}
	switch k {
	case "journal":
		src = append(src, o.it(p.Venue))
		if p.Volume != "" {
			src = append(src, "vol. "+p.Volume)
		}
		if p.Issue != "" {
			src = append(src, "no. "+p.Issue)
		}
		if year != "" {
			src = append(src, year)
		}
		if p.Pages != "" {
			src = append(src, "pp. "+pageRange(p.Pages, "minimal-two"))
		}
	case "conference", "chapter":
		src = append(src, o.it(p.Venue))
		if p.Publisher != "" {
			src = append(src, p.Publisher)
		}
		if year != "" {
			src = append(src, year)
		}
		if p.Pages != "" {
			src = append(src, "pp. "+pageRange(p.Pages, "minimal-two"))
		}
	case "preprint", "webpage":
		if p.Venue != "" {
			src = append(src, o.it(p.Venue))
		}
		if year != "" {
			src = append(src, year)
		}
	default:
		if p.Publisher != "" {
			src = append(src, p.Publisher)
		}
		if year != "" {
			src = append(src, year)
		}
	}
	if u := e.doiURL(); u != "" {
		src = append(src, o.url(u))
	} else if p.URL != "" {
		src = append(src, o.url(p.URL))
	}
	if len(src) > 0 {
		b = append(b, strings.Join(src, ", ")+".")
	}
	return strings.Join(b, " ")
}

// ---- Chicago author-date ----

func chicagoNames(as []corpus.Author) string {
	one := func(a corpus.Author, first bool) string {
		if a.Literal != "" || a.Given == "" {
			return familyOf(a)
		}
		if first {
			part, rest := splitParticle(a.Family)
			if part != "" {
				return rest + ", " + a.Given + " " + part
			}
			return a.Family + ", " + a.Given
		}
		return a.Given + " " + a.Family
	}
	var ns []string
	for i, a := range as {
		if len(as) > 10 && i == 7 {
			return strings.Join(ns, ", ") + ", et al"
		}
		ns = append(ns, one(a, i == 0))
	}
	switch len(ns) {
	case 1:
		return ns[0]
	case 2:
		return ns[0] + ", and " + ns[1]
	}
	return strings.Join(ns[:len(ns)-1], ", ") + ", and " + ns[len(ns)-1]
}

func chicagoEntry(o out, e entry) string {
	p := e.p
	k := kind(p)
	title := titleCase(p.Title)
	year := yearLabel(e, "n.d.")
	italic := k == "book"
	t := quoted(title, ".")
	if italic {
		t = period(o.it(title))
	}
	var b []string
	if len(p.Authors) > 0 {
		names := period(chicagoNames(p.Authors))
		if e.same {
			names = "———."
		}
		b = append(b, names, period(year), t)
	} else {
		b = append(b, t, period(year))
	}
	switch k {
	case "journal":
		s := o.it(p.Venue)
		if p.Volume != "" {
			s += " " + p.Volume
		}
		if p.Issue != "" {
			s += " (" + p.Issue + ")"
		}
		if p.Pages != "" {
			s += ": " + pageRange(p.Pages, "chicago")
		}
		b = append(b, period(s))
	case "conference", "chapter":
		s := "In " + o.it(p.Venue)
		if p.Pages != "" {
			s += ", " + pageRange(p.Pages, "chicago")
		}
		b = append(b, period(s))
		if p.Publisher != "" {
			b = append(b, period(p.Publisher))
		}
	case "preprint":
		if p.Venue != "" {
			b = append(b, period(o.it(p.Venue)))
		}
	case "webpage":
		if p.Venue != "" {
			b = append(b, period(p.Venue))
		}
		if p.Year != 0 {
			b = append(b, fmt.Sprint(p.Year)+".")
		}
	default:
		if p.Publisher != "" {
			b = append(b, period(p.Publisher))
		}
	}
	if u := e.doiURL(); u != "" {
		b = append(b, o.url(u)+".")
	} else if p.URL != "" {
		b = append(b, o.url(p.URL)+".")
	}
	return strings.Join(b, " ")
}

// ---- ordering, disambiguation, substitution ----

// authorSortKey is the sort key of a paper's author list (or its title
// when it has none). Chicago sorts a particle after the name ("Berg, … van
// der"); the others sort it first.
func authorSortKey(st Style, p corpus.Paper) string {
	if len(p.Authors) == 0 {
		return sortKey(p.Title)
	}
	var ks []string
	as := p.Authors
	if st == MLA && len(as) >= 3 {
		as = as[:1]
	}
	for _, a := range as {
		fam := familyOf(a)
		if st == Chicago && a.Literal == "" {
			if part, rest := splitParticle(fam); part != "" {
				fam = rest + " " + part
			}
		}
		ks = append(ks, sortKey(fam)+" "+sortKey(a.Given))
	}
	return strings.Join(ks, " ; ")
}

// sortEntries orders author-date bibliographies: by authors, then year
// (undated first for APA, last otherwise), then title.
func sortEntries(st Style, es []entry) {
	sort.SliceStable(es, func(i, j int) bool {
		a, b := es[i].p, es[j].p
		ka, kb := authorSortKey(st, a), authorSortKey(st, b)
		if ka != kb {
			return ka < kb
		}
		ya, yb := a.Year, b.Year
		if st != APA {
			if ya == 0 {
				ya = 1 << 30
			}
			if yb == 0 {
				yb = 1 << 30
			}
		}
		if st == MLA {
			if ta, tb := sortKey(a.Title), sortKey(b.Title); ta != tb {
				return ta < tb
			}
		}
		if ya != yb {
			return ya < yb
		}
		return sortKey(a.Title) < sortKey(b.Title)
	})
}
