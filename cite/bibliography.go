package cite

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/citefind/citefind/corpus"
)

// Bibliography is the formatted reference list of a set of cited papers,
// with what in-text citations need: numbers or disambiguated labels.
type Bibliography struct {
	Style   Style
	Format  Format
	Papers  []corpus.Paper    // in bibliography order
	Entries []string          // formatted entries, same order, with their labels ("[1] ", "1. ")
	num     map[string]int    // paper ID → citation number (numeric styles)
	suffix  map[string]string // paper ID → year suffix "a", "b" (author-date styles)
	title   map[string]bool   // MLA: paper IDs whose in-text citation needs the title
}

// NewBibliography formats papers, given in order of first citation.
func NewBibliography(st Style, f Format, papers []corpus.Paper) *Bibliography {
	b := &Bibliography{Style: st, Format: f, num: map[string]int{}, suffix: map[string]string{}, title: map[string]bool{}}
	es := make([]entry, len(papers))
	for i, p := range papers {
		es[i] = entry{p: typoPaper(p), num: i + 1}
		b.num[p.ID] = i + 1
	}
	if !st.Numeric() {
		sortEntries(st, es)
		// Disambiguate: same name label and year → a, b, … in bibliography order.
		groups := map[string][]int{}
		var order []string
		for i, e := range es {
			key := nameLabel(out{}, st, e.p)
			if st != MLA {
				key += "|" + strconv.Itoa(e.p.Year)
			}
			if _, ok := groups[key]; !ok {
				order = append(order, key)
			}
			groups[key] = append(groups[key], i)
		}
		for _, k := range order {
			g := groups[k]
			if len(g) < 2 {
				continue
			}
			for j, i := range g {
				if st == MLA {
					b.title[es[i].p.ID] = true
					continue
				}
				es[i].yearSuff = string(rune('a' + j%26))
				b.suffix[es[i].p.ID] = es[i].yearSuff
			}
		}
		if st == MLA {
			mlaAddNames(es)
		}
		for i := 1; i < len(es); i++ {
			if len(es[i].p.Authors) == 0 {
				continue
			}
			switch {
			case st == Chicago && slices.Equal(es[i].p.Authors, es[i-1].p.Authors),
				st == MLA && len(es[i-1].p.Authors) > 0 && mlaNames(es[i].p.Authors, es[i].namesN) == mlaNames(es[i-1].p.Authors, es[i-1].namesN):
				es[i].same = true
			}
		}
	}
	for _, e := range es {
		s := formatEntry(st, f, e)
		switch st {
		case IEEE:
			s = fmt.Sprintf("[%d] %s", e.num, s)
		case Vancouver:
			s = fmt.Sprintf("%d. %s", e.num, s)
		}
		b.Papers = append(b.Papers, e.p)
		b.Entries = append(b.Entries, s)
	}
	return b
}

// Heading is the style's title for the reference list.
func (b *Bibliography) Heading() string {
	switch b.Style {
	case MLA:
		return "Works Cited"
	case Harvard:
		return "Reference list"
	}
	return "References"
}

// Number is the citation number of a paper ID (numeric styles), or 0.
func (b *Bibliography) Number(id string) int { return b.num[id] }

// nameLabel is the author part of an in-text citation: family names with
// the style's "and"/"&"/"et al." rules, or the title when there is no
// author.
func nameLabel(o out, st Style, p corpus.Paper) string {
	as := p.Authors
	if len(as) == 0 {
		t := p.Title
		if st == MLA || st == Chicago {
			t = titleCase(t)
		}
		switch kind(p) {
		case "book", "report", "thesis", "webpage":
			if st == Harvard || st == APA || st == MLA {
				return o.it(t)
			}
		}
		return "“" + t + "”"
	}
	f := make([]string, len(as))
	for i, a := range as {
		f[i] = familyOf(a)
	}
	etal := " et al."
	if st == Harvard && o.md {
		etal = " *et al.*"
	}
	switch st {
	case APA:
		switch len(f) {
		case 1:
			return f[0]
		case 2:
			return f[0] + " & " + f[1]
		}
		return f[0] + etal
	case MLA:
		switch len(f) {
		case 1:
			return f[0]
		case 2:
			return f[0] + " and " + f[1]
		}
		return f[0] + etal
	case Chicago:
		switch len(f) {
		case 1:
			return f[0]
		case 2:
			return f[0] + " and " + f[1]
		case 3:
			return f[0] + ", " + f[1] + ", and " + f[2]
		}
		return f[0] + etal
	default: // Harvard
		switch len(f) {
		case 1:
			return f[0]
		case 2, 3:
			return strings.Join(f[:len(f)-1], ", ") + " and " + f[len(f)-1]
		}
		return f[0] + etal
	}
}

// cite is one item of an in-text citation, ready to render.
type cite struct {
	p   corpus.Paper
	sec *corpus.Paper
}

// InText renders one in-text citation of the given papers (each with an
// optional secondary source that it is cited in).
func (b *Bibliography) inText(cs []cite) string {
	o := out{md: b.Format == Markdown}
	st := b.Style
	if st.Numeric() {
		var nums []int
		var secs []string
		for _, c := range cs {
			if c.sec != nil {
				secs = append(secs, fmt.Sprintf("%d, as cited in %d", b.num[c.p.ID], b.num[c.sec.ID]))
				continue
			}
			nums = append(nums, b.num[c.p.ID])
		}
		slices.Sort(nums)
		var parts []string
		for i := 0; i < len(nums); {
			j := i
			for j+1 < len(nums) && nums[j+1] == nums[j]+1 {
				j++
			}
			one := func(n int) string {
				if st == IEEE {
					return fmt.Sprintf("[%d]", n)
				}
				return strconv.Itoa(n)
			}
			if j-i >= 2 {
				parts = append(parts, one(nums[i])+"–"+one(nums[j]))
			} else {
				for k := i; k <= j; k++ {
					parts = append(parts, one(nums[k]))
				}
			}
			i = j + 1
		}
		if st == IEEE {
			for _, s := range secs {
				parts = append(parts, "["+s+"]")
			}
			return strings.Join(parts, ", ")
		}
		parts = append(parts, secs...)
		return "(" + strings.Join(parts, ",") + ")"
	}
	one := func(p corpus.Paper) string {
		name := nameLabel(o, st, p)
		year := yearLabel(entry{p: p, yearSuff: b.suffix[p.ID]}, map[bool]string{true: "no date", false: "n.d."}[st == Harvard])
		switch st {
		case MLA:
			if b.title[p.ID] && len(p.Authors) > 0 {
				return name + ", " + shortTitle(o, p)
			}
			return name
		case Chicago:
			return name + " " + year
		}
		return name + ", " + year
	}
	var parts []string
	for _, c := range cs {
		s := one(c.p)
		if c.sec != nil {
			s += ", as cited in " + one(*c.sec)
		}
		parts = append(parts, s)
	}
	return "(" + strings.Join(parts, "; ") + ")"
}

func shortTitle(o out, p corpus.Paper) string {
	t := titleCase(p.Title)
	if i := strings.IndexAny(t, ":?"); i > 0 {
		t = t[:i]
	}
	switch kind(p) {
	case "book", "report", "thesis":
		return o.it(t)
	}
	return "“" + t + "”"
}

// mlaAddNames shows more names where "First et al." names several papers,
// as CSL's disambiguate-add-names does: each paper shows the fewest names
// that tell its author list from the others', else all of them.
func mlaAddNames(es []entry) {
	groups := map[string][]int{}
	for i, e := range es {
		if len(e.p.Authors) >= 3 {
			k := familyOf(e.p.Authors[0]) + "|" + e.p.Authors[0].Given
			groups[k] = append(groups[k], i)
		}
	}
	prefix := func(as []corpus.Author, n int) []corpus.Author { return as[:min(n, len(as))] }
	for _, g := range groups {
		if len(g) < 2 {
			continue
		}
		for _, i := range g {
			as := es[i].p.Authors
			n := len(as)
			for k := 1; k <= len(as); k++ {
				unique := true
				for _, j := range g {
					if j != i && slices.Equal(prefix(as, k), prefix(es[j].p.Authors, k)) {
						unique = false
						break
					}
				}
				if unique {
					n = k
					break
				}
			}
			if n > 1 {
				es[i].namesN = n
			}
		}
	}
}
