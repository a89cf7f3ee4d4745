// Package csldiff compares two sets of CSL-JSON items field by field: how
// citefind's BibTeX → CSL conversion agrees with pandoc's (`pandoc -f
// bibtex -t csljson`), in counts per variable and examples.
//
//	var c csldiff.Comparison
//	c.Add(ourItems, pandocItems) // items matched by position within a file
//	fmt.Print(c.Markdown(3))
package csldiff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"
)

// Field counts, for one CSL variable, how the two sides compare over the
// items both have.
type Field struct {
	Name      string
	Same      int       // both have it with equal values
	Different int       // both have it, values differ
	OnlyOurs  int       // only the first side has it
	OnlyTheir int       // only the second side has it
	Examples  []Example // the first differences met
}

// Example is one difference.
type Example struct {
	ID          string
	Ours, Their string // the JSON values ("" when absent)
}

// Comparison accumulates field comparisons.
type Comparison struct {
	Items     int // items compared (present on both sides)
	Unmatched int // items present on one side only
	Identical int // items whose every variable agrees
	// MaxExamples is how many examples to keep per field and kind; 0
	// means 3.
	MaxExamples int
	// OnDiff, when set, is called for every difference (e.g. to dump them
	// all); ours or their is "" when the variable is absent on that side.
	OnDiff func(id, variable, ours, their string)
	fields map[string]*Field
}

// Add compares ours[i] with their[i] for the items whose "id" both
// sides share, matching repeated ids in order; the others count as
// unmatched.
func (c *Comparison) Add(ours, their []json.RawMessage) error {
	if c.fields == nil {
		c.fields = map[string]*Field{}
	}
	theirByID := map[string][]map[string]any{}
	for _, t := range their {
		m, err := decode(t)
		if err != nil {
			return fmt.Errorf("decode their item: %w", err)
		}
		id := fmt.Sprint(m["id"])
		theirByID[id] = append(theirByID[id], m)
	}
	matched := 0
	for _, o := range ours {
		m, err := decode(o)
		if err != nil {
			return fmt.Errorf("decode our item: %w", err)
		}
		id := fmt.Sprint(m["id"])
		ts := theirByID[id]
		if len(ts) == 0 {
			c.Unmatched++
			continue
		}
		t := ts[0]
		theirByID[id] = ts[1:]
		matched++
		c.compare(id, m, t)
	}
	c.Unmatched += len(their) - matched
	return nil
}

func (c *Comparison) example(f *Field, id string, o, t any) {
	max := c.MaxExamples
	if max == 0 {
		max = 3
	}
	if len(f.Examples) < max {
		f.Examples = append(f.Examples, Example{ID: id, Ours: show(o), Their: show(t)})
	}
}

func (c *Comparison) compare(id string, o, t map[string]any) {
	c.Items++
	same := true
	keys := map[string]bool{}
	for k := range o {
		keys[k] = true
	}
	for k := range t {
		keys[k] = true
	}
	for k := range keys {
		if k == "id" {
			continue
		}
		f := c.fields[k]
		if f == nil {
			f = &Field{Name: k}
			c.fields[k] = f
		}
		ov, inO := o[k]
		tv, inT := t[k]
		switch {
		case inO && inT && reflect.DeepEqual(ov, tv):
			f.Same++
			continue
		case inO && inT:
			f.Different++
		case inO:
			f.OnlyOurs++
		default:
			f.OnlyTheir++
		}
		same = false
		c.example(f, id, ov, tv)
		if c.OnDiff != nil {
			c.OnDiff(id, k, show(ov), show(tv))
		}
	}
	if same {
		c.Identical++
	}
}

// Fields returns the per-variable counts, most disagreements first.
func (c *Comparison) Fields() []Field {
	out := make([]Field, 0, len(c.fields))
	for _, f := range c.fields {
		out = append(out, *f)
	}
	sort.Slice(out, func(i, j int) bool {
		di, dj := out[i].Different+out[i].OnlyOurs+out[i].OnlyTheir, out[j].Different+out[j].OnlyOurs+out[j].OnlyTheir
		if di != dj {
			return di > dj
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// WriteMarkdown writes the comparison as a Markdown table (one row per
// variable) followed by up to examples examples per variable that
// disagrees.
func (c *Comparison) WriteMarkdown(w io.Writer, examples int) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%d items compared (%d identical in every variable, %.1f%%); %d on one side only.\n\n",
		c.Items, c.Identical, pct(c.Identical, c.Items), c.Unmatched)
	b.WriteString("| variable | same | different | only citefind | only pandoc | agreement |\n|---|---:|---:|---:|---:|---:|\n")
	for _, f := range c.Fields() {
		n := f.Same + f.Different + f.OnlyOurs + f.OnlyTheir
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %.1f%% |\n", f.Name, f.Same, f.Different, f.OnlyOurs, f.OnlyTheir, pct(f.Same, n))
	}
	if examples > 0 {
		b.WriteString("\nExamples (citefind → pandoc):\n")
		for _, f := range c.Fields() {
			if len(f.Examples) == 0 {
				continue
			}
			fmt.Fprintf(&b, "\n- **%s**\n", f.Name)
			for i, e := range f.Examples {
				if i == examples {
					break
				}
				o, t := around(e.Ours, e.Their)
				fmt.Fprintf(&b, "  - `%s`: %s → %s\n", e.ID, clip(o), clip(t))
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// around cuts two long values to the region where they first differ.
func around(a, b string) (string, string) {
	ra, rb := []rune(a), []rune(b)
	if len(ra) <= 160 && len(rb) <= 160 || a == "" || b == "" {
		return a, b
	}
	i := 0
	for i < len(ra) && i < len(rb) && ra[i] == rb[i] {
		i++
	}
	from := max(i-60, 0)
	cut := func(r []rune) string {
		end := min(from+140, len(r))
		if from >= len(r) {
			return "…"
		}
		s := string(r[from:end])
		if from > 0 {
			s = "…" + s
		}
		if end < len(r) {
			s += "…"
		}
		return s
	}
	return cut(ra), cut(rb)
}

func pct(a, n int) float64 {
	if n == 0 {
		return 0
	}
	return 100 * float64(a) / float64(n)
}

func clip(s string) string {
	if s == "" {
		return "(absent)"
	}
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return "`" + strings.ReplaceAll(s, "`", "'") + "`"
}

func decode(b []byte) (map[string]any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return nil, err
	}
	return m, nil
}

func show(v any) string {
	if v == nil {
		return ""
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSpace(b.String())
}
