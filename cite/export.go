package cite

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode"

	"github.com/citefind/citefind/corpus"
)

// WriteCSLJSON writes papers as a CSL-JSON array (corpus.Paper's JSON form).
func WriteCSLJSON(w io.Writer, papers []corpus.Paper) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if papers == nil {
		papers = []corpus.Paper{}
	}
	return enc.Encode(papers)
}

// bibType is the BibTeX entry type that corpus.ReadBibTeX maps back to the
// paper's CSL type.
func bibType(p corpus.Paper) string {
	switch p.Type {
	case "article-journal":
		return "article"
	case "paper-conference":
		return "inproceedings"
	case "book":
		return "book"
	case "chapter":
		return "incollection"
	case "thesis":
		return "phdthesis"
	case "report":
		return "techreport"
	case "dataset", "software":
		return p.Type
	case "webpage":
		return "online"
	}
	return "misc"
}

// bibEscape protects a value for BibTeX: LaTeX specials escaped, braces
// balanced by escaping them.
func bibEscape(s string) string {
	r := strings.NewReplacer(`\`, `\textbackslash{}`, "{", `\{`, "}", `\}`, "&", `\&`, "%", `\%`, "$", `\$`, "#", `\#`, "_", `\_`, "~", `\textasciitilde{}`, "^", `\^{}`)
	return r.Replace(s)
}

// bibKey makes a citation key from the paper ID: letters, digits and
// ":-_./" kept.
func bibKey(id string) string {
	var b strings.Builder
	for _, r := range id {
		if r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune(":-_./", r)) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// WriteCSLItems writes the papers as a CSL-JSON array, each as its full
// item in items (by paper ID; the store's lossless items), or as its own
// JSON when items has none for it.
func WriteCSLItems(w io.Writer, papers []corpus.Paper, items map[string]json.RawMessage) error {
	out := make([]json.RawMessage, 0, len(papers))
	for _, p := range papers {
		raw, ok := items[p.ID]
		if !ok {
			b, err := json.Marshal(p)
			if err != nil {
				return err
			}
			raw = b
		}
		out = append(out, raw)
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// WriteBibTeX writes papers as BibTeX that corpus.ReadBibTeX reads back to
// the same papers (same stable IDs and fields; titles and venues
// brace-protected so that they keep their casing). An entry's key is the
// user's own key for the paper, keys[paper ID] (the BibTeX key or CSL id
// of its first record, see corpus.Store.Keys), so that \cite commands of a
// LaTeX document keep matching; else the paper ID. Characters a BibTeX
// key cannot hold become "_".
func WriteBibTeX(w io.Writer, papers []corpus.Paper, keys map[string]string) error {
	for _, p := range papers {
		var b strings.Builder
		key := keys[p.ID]
		if key == "" {
			key = p.ID
		}
		fmt.Fprintf(&b, "@%s{%s,\n", bibType(p), bibKey(key))
		field := func(name, v string, raw bool) {
			if v == "" {
				return
			}
			if !raw {
				v = bibEscape(v)
			}
			fmt.Fprintf(&b, "  %s = {%s},\n", name, v)
		}
		field("title", "{"+bibEscape(p.Title)+"}", true)
		var names []string
		for _, a := range p.Authors {
			switch {
			case a.Literal != "":
				names = append(names, "{"+bibEscape(a.Literal)+"}")
			case a.Given == "":
				names = append(names, "{"+bibEscape(a.Family)+"}")
			default:
				names = append(names, "{"+bibEscape(a.Family)+"}, "+bibEscape(a.Given))
			}
		}
		field("author", strings.Join(names, " and "), true)
		if p.Year != 0 {
			field("year", fmt.Sprint(p.Year), true)
		}
		if p.Venue != "" {
			switch bibType(p) {
			case "article":
				field("journal", "{"+bibEscape(p.Venue)+"}", true)
			default:
				field("booktitle", "{"+bibEscape(p.Venue)+"}", true)
			}
		}
		field("publisher", p.Publisher, false)
		field("volume", p.Volume, false)
		field("number", p.Issue, false)
		field("pages", p.Pages, false)
		field("doi", p.DOI, false)
		field("url", p.URL, false)
		if p.ArXiv != "" {
			field("eprint", p.ArXiv, false)
			field("archiveprefix", "arXiv", true)
		}
		field("abstract", p.Abstract, false)
		if len(p.Keywords) > 0 {
			field("keywords", strings.Join(p.Keywords, ", "), false)
		}
		b.WriteString("}\n\n")
		if _, err := io.WriteString(w, b.String()); err != nil {
			return err
		}
	}
	return nil
}
