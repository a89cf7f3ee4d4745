package csl

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/citefind/citefind/internal/editdist"
)

// Folders searched by DefaultResolver, after $CITEFIND_STYLES and the
// user's Zotero styles folder.
const (
	SystemStyles  = "/usr/share/citation-style-language/styles"  // Debian's citation-style-language-styles
	SystemLocales = "/usr/share/citation-style-language/locales" // Debian's citation-style-language-locales
)

// ShortNames maps the short style names citefind has always accepted to
// CSL style file names (without ".csl").
var shortNames = map[string]string{
	"mla":     "modern-language-association",
	"chicago": "chicago-author-date",
	"harvard": "harvard-cite-them-right",
}

// ShortName returns the short name of a style file name, or the name
// itself ("modern-language-association" → "mla").
func ShortName(name string) string {
	for k, v := range shortNames {
		if v == name {
			return k
		}
	}
	return name
}

// Style is a resolved CSL style, ready for an engine: an independent
// style's XML, or a dependent style's parent XML with the dependent's
// locale.
type Style struct {
	Name   string // the file name without ".csl" ("apa", "nature")
	ID     string // <info><id>
	Title  string // <info><title>
	File   string // the file it was read from; "embedded:apa.csl" for a built-in style
	Parent string // for a dependent style: the parent's file, else ""
	// Class is "in-text" or "note".
	Class string
	// Format is the <category citation-format>: author-date, numeric,
	// note, label or author ("" when the style does not say).
	Format string
	// Locale is the style's default-locale ("" for en-US).
	Locale string
	XML    []byte
	// citation layout affixes, e.g. "(" and ")"
	layoutPrefix, layoutSuffix string
	key                        string // identity of the rendering: hash of XML and locale
}

// Key identifies the style's rendering (XML and locale): engines and
// cached entries are kept per key.
func (s *Style) Key() string { return s.key }

// Numeric reports whether the style's citations are numbers.
func (s *Style) Numeric() bool { return s.Format == "numeric" }

// Heading is the usual title of the style's reference list: "Works
// Cited" for MLA, "Reference list" for Cite Them Right Harvard,
// "Bibliography" for note styles, else "References".
func (s *Style) Heading() string {
	switch {
	case strings.Contains(s.ID, "modern-language-association"):
		return "Works Cited"
	case strings.Contains(s.ID, "harvard-cite-them-right"):
		return "Reference list"
	case s.Class == "note":
		return "Bibliography"
	}
	return "References"
}

// Resolver finds styles and locales by name in folders, then among the
// built-in ones. The zero value searches only the built-in styles and
// locale.
type Resolver struct {
	// StyleDirs are searched in order for NAME.csl and dependent/NAME.csl.
	StyleDirs []string
	// LocaleDirs are searched in order for locales-LANG.xml.
	LocaleDirs []string
}

// DefaultResolver searches $CITEFIND_STYLES (a list of folders separated
// by the OS list separator), the user's Zotero styles folder
// (~/Zotero/styles) and /usr/share/citation-style-language/styles, and for
// locales $CITEFIND_LOCALES and /usr/share/citation-style-language/locales;
// then the built-in styles and en-US locale. getenv is os.Getenv when nil.
func DefaultResolver(getenv func(string) string) *Resolver {
	if getenv == nil {
		getenv = os.Getenv
	}
	r := &Resolver{}
	if v := getenv("CITEFIND_STYLES"); v != "" {
		r.StyleDirs = append(r.StyleDirs, filepath.SplitList(v)...)
	}
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	if home != "" {
		r.StyleDirs = append(r.StyleDirs, filepath.Join(home, "Zotero", "styles"))
	}
	r.StyleDirs = append(r.StyleDirs, SystemStyles)
	if v := getenv("CITEFIND_LOCALES"); v != "" {
		r.LocaleDirs = append(r.LocaleDirs, filepath.SplitList(v)...)
	}
	r.LocaleDirs = append(r.LocaleDirs, SystemLocales)
	return r
}

// canonical maps a short name to the file name.
func canonical(name string) string {
	n := strings.ToLower(strings.TrimSpace(name))
	if v, ok := shortNames[n]; ok {
		return v
	}
	return n
}

// isPath reports whether ref names a file rather than a style name.
func isPath(ref string) bool {
	return strings.HasSuffix(strings.ToLower(ref), ".csl") || strings.ContainsRune(ref, os.PathSeparator) || strings.ContainsRune(ref, '/')
}

// Style resolves a style name (apa, nature, mla, …) or a path to a .csl
// file. A dependent style resolves to its parent, keeping its own
// default-locale. Errors: *UnknownStyleError (with near matches) for a
// name found nowhere; ErrBadStyle naming the file for a malformed one.
func (r *Resolver) Style(ref string) (*Style, error) {
	if strings.TrimSpace(ref) == "" {
		return nil, &UnknownStyleError{Name: ref, Near: []string{"apa", "ieee", "mla", "chicago", "harvard", "vancouver"}}
	}
	if isPath(ref) {
		b, err := os.ReadFile(ref)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) && !strings.ContainsRune(ref, '/') {
				// "nature.csl" given as a name.
				return r.Style(strings.TrimSuffix(ref, ".csl"))
			}
			return nil, fmt.Errorf("%w: %w", ErrBadStyle, err)
		}
		return r.build(ref, b, 0)
	}
	name := canonical(ref)
	file, b, err := r.find(name)
	if err != nil {
		return nil, err
	}
	return r.build(file, b, 0)
}

// find returns the file and content of style NAME.
func (r *Resolver) find(name string) (string, []byte, error) {
	if strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
		return "", nil, &UnknownStyleError{Name: name}
	}
	for _, d := range r.StyleDirs {
		for _, p := range []string{filepath.Join(d, name+".csl"), filepath.Join(d, "dependent", name+".csl")} {
			b, err := os.ReadFile(p)
			if err == nil {
				return p, b, nil
			}
		}
	}
	if b, ok := embeddedStyle(name + ".csl"); ok {
		return "embedded:" + name + ".csl", b, nil
	}
	if len(embeddedStyleNames()) == 0 && len(r.StyleDirs) == 0 {
		return "", nil, fmt.Errorf("%w: style %q: %w: %s", ErrUnknownStyle, name, ErrNotFetched, fetchHint)
	}
	return "", nil, &UnknownStyleError{Name: name, Near: r.near(name), Searched: r.existingDirs()}
}

func (r *Resolver) existingDirs() []string {
	var out []string
	for _, d := range r.StyleDirs {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			out = append(out, d)
		}
	}
	return out
}

// styleXML is the part of a CSL style that citefind reads itself.
type styleXML struct {
	XMLName       xml.Name `xml:"style"`
	Class         string   `xml:"class,attr"`
	DefaultLocale string   `xml:"default-locale,attr"`
	Info          struct {
		ID    string `xml:"id"`
		Title string `xml:"title"`
		Links []struct {
			Rel  string `xml:"rel,attr"`
			Href string `xml:"href,attr"`
		} `xml:"link"`
		Category []struct {
			Format string `xml:"citation-format,attr"`
		} `xml:"category"`
	} `xml:"info"`
	Citation *struct {
		Layout []struct {
			Prefix string `xml:"prefix,attr"`
			Suffix string `xml:"suffix,attr"`
		} `xml:"layout"`
	} `xml:"citation"`
}

// parseStyle reads what citefind needs from a style's XML; errors name
// the file and line.
func parseStyle(file string, b []byte) (*styleXML, error) {
	var sx styleXML
	dec := xml.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&sx); err != nil {
		var se *xml.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("%w: %s:%d: %s", ErrBadStyle, file, se.Line, se.Msg)
		}
		var ue xml.UnmarshalError
		if errors.As(err, &ue) || strings.Contains(err.Error(), "expected element type") {
			return nil, fmt.Errorf("%w: %s: not a CSL style (its root element must be <style>): %v", ErrBadStyle, file, err)
		}
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%w: %s: empty file", ErrBadStyle, file)
		}
		return nil, fmt.Errorf("%w: %s: %v", ErrBadStyle, file, err)
	}
	return &sx, nil
}

// StyleFromXML reads a style from its XML; file names it in errors. A
// dependent style's parent is looked up by r.
func (r *Resolver) StyleFromXML(file string, b []byte) (*Style, error) {
	return r.build(file, b, 0)
}

func (r *Resolver) build(file string, b []byte, depth int) (*Style, error) {
	sx, err := parseStyle(file, b)
	if err != nil {
		return nil, err
	}
	base := strings.TrimSuffix(filepath.Base(strings.TrimPrefix(file, "embedded:")), ".csl")
	st := &Style{Name: base, ID: sx.Info.ID, Title: sx.Info.Title, File: file, Class: sx.Class, Locale: sx.DefaultLocale}
	for _, c := range sx.Info.Category {
		if c.Format != "" {
			st.Format = c.Format
		}
	}
	var parent string
	for _, l := range sx.Info.Links {
		if l.Rel == "independent-parent" {
			parent = l.Href
		}
	}
	if sx.Citation == nil || len(sx.Citation.Layout) == 0 {
		if parent == "" {
			return nil, fmt.Errorf("%w: %s: no <citation> layout and no independent-parent link", ErrBadStyle, file)
		}
		if depth > 0 {
			return nil, fmt.Errorf("%w: %s: a dependent style's parent is itself dependent", ErrBadStyle, file)
		}
		pname := parent[strings.LastIndexByte(parent, '/')+1:]
		pfile, pb, err := r.find(pname)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: its parent style %s: %w", ErrBadStyle, file, parent, err)
		}
		ps, err := r.build(pfile, pb, depth+1)
		if err != nil {
			return nil, err
		}
		ps.Name, ps.ID, ps.Title, ps.Parent = st.Name, st.ID, st.Title, pfile
		ps.File = file
		if st.Locale != "" {
			ps.Locale = st.Locale
		}
		if st.Format != "" {
			ps.Format = st.Format
		}
		ps.key = styleKey(ps.XML, ps.Locale)
		return ps, nil
	}
	if st.Class == "" {
		st.Class = "in-text"
	}
	st.layoutPrefix, st.layoutSuffix = sx.Citation.Layout[0].Prefix, sx.Citation.Layout[0].Suffix
	st.XML = b
	st.key = styleKey(b, st.Locale)
	return st, nil
}

func styleKey(b []byte, locale string) string {
	h := sha256.New()
	h.Write(b)
	h.Write([]byte{0})
	h.Write([]byte(locale))
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// Locale returns locales-LANG.xml from the locale folders, else the
// built-in en-US, else an error wrapping ErrMissingLocale that names the
// file looked for.
func (r *Resolver) Locale(lang string) ([]byte, error) {
	if lang == "" || strings.ContainsAny(lang, `/\`) {
		return nil, fmt.Errorf("%w: bad language tag %q", ErrMissingLocale, lang)
	}
	file := "locales-" + lang + ".xml"
	for _, d := range r.LocaleDirs {
		if b, err := os.ReadFile(filepath.Join(d, file)); err == nil {
			return b, nil
		}
	}
	if b, ok := embeddedLocale(lang); ok {
		return b, nil
	}
	dirs := append([]string(nil), r.LocaleDirs...)
	if len(dirs) == 0 {
		return nil, fmt.Errorf("%w: %s is not built in (only en-US is) and no locale folder is set: install citation-style-language-locales or set CITEFIND_LOCALES", ErrMissingLocale, file)
	}
	return nil, fmt.Errorf("%w: %s in none of %s (install citation-style-language-locales or set CITEFIND_LOCALES)", ErrMissingLocale, file, strings.Join(dirs, ", "))
}

// cslLocales are the locales of the CSL project (citation-style-language-
// locales): a style asking for one of them needs its file.
const cslLocales = " af-ZA ar bg-BG ca-AD cs-CZ cy-GB da-DK de-AT de-CH de-DE el-GR en-GB en-US es-CL es-ES es-MX et-EE eu fa-IR fi-FI fr-CA fr-FR he-IL hi-IN hr-HR hu-HU id-ID is-IS it-IT ja-JP km-KH ko-KR la lt-LT lv-LV mn-MN nb-NO nl-NL nn-NO pl-PL pt-BR pt-PT ro-RO ru-RU sk-SK sl-SI sr-RS sv-SE th-TH tr-TR uk-UA vi-VN zh-CN zh-TW "

// knownLocale reports whether lang (or its language) has a CSL locale.
func knownLocale(lang string) bool {
	if strings.Contains(cslLocales, " "+lang+" ") {
		return true
	}
	base, _, _ := strings.Cut(lang, "-")
	return strings.Contains(cslLocales, " "+base+"-") || strings.Contains(cslLocales, " "+base+" ")
}

// StyleInfo describes a style that can be named.
type StyleInfo struct {
	Name      string `json:"name"`            // what --style takes
	Short     string `json:"short,omitempty"` // the short name, when there is one (mla)
	Title     string `json:"title"`
	File      string `json:"file"`
	Dependent bool   `json:"dependent,omitempty"`
	Parent    string `json:"parent,omitempty"` // a dependent style's parent name
	Format    string `json:"format,omitempty"` // author-date, numeric, note, label, author
}

// List returns the styles that Style can resolve by name, the first
// folder's file winning, sorted by name. With word, only those whose name
// or title contains it (case-insensitive).
func (r *Resolver) List(word string) ([]StyleInfo, error) {
	word = strings.ToLower(strings.TrimSpace(word))
	seen := map[string]bool{}
	var out []StyleInfo
	add := func(file string, head []byte) {
		name := strings.TrimSuffix(filepath.Base(strings.TrimPrefix(file, "embedded:")), ".csl")
		if seen[name] {
			return
		}
		seen[name] = true
		info := headInfo(head)
		info.Name, info.File = name, file
		if s := ShortName(name); s != name {
			info.Short = s
		}
		if word != "" && !strings.Contains(strings.ToLower(info.Name), word) && !strings.Contains(strings.ToLower(info.Title), word) && !strings.Contains(info.Short, word) {
			return
		}
		out = append(out, info)
	}
	for _, d := range r.StyleDirs {
		for _, sub := range []string{d, filepath.Join(d, "dependent")} {
			es, err := os.ReadDir(sub)
			if err != nil {
				continue
			}
			for _, e := range es {
				if e.IsDir() || !strings.HasSuffix(e.Name(), ".csl") {
					continue
				}
				p := filepath.Join(sub, e.Name())
				head, err := readHead(p, 8192)
				if err != nil {
					continue
				}
				add(p, head)
			}
		}
	}
	for _, n := range embeddedStyleNames() {
		b, _ := embeddedStyle(n + ".csl")
		add("embedded:"+n+".csl", b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func readHead(path string, n int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, n)
	k, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return buf[:k], nil
}

// headInfo reads title, parent and format from the start of a style file
// (its <info> comes first) without parsing the whole file.
func headInfo(head []byte) StyleInfo {
	var info StyleInfo
	dec := xml.NewDecoder(bytes.NewReader(head))
	inInfo := false
	var path []string
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		switch t := tok.(type) {
		case xml.StartElement:
			path = append(path, t.Name.Local)
			switch t.Name.Local {
			case "info":
				inInfo = true
			case "link":
				if inInfo && attr(t, "rel") == "independent-parent" {
					h := attr(t, "href")
					info.Dependent = true
					info.Parent = h[strings.LastIndexByte(h, '/')+1:]
				}
			case "category":
				if f := attr(t, "citation-format"); f != "" && inInfo {
					info.Format = f
				}
			case "title":
				if inInfo && len(path) == 3 {
					var s string
					if err := dec.DecodeElement(&s, &t); err == nil {
						info.Title = strings.TrimSpace(s)
					}
					path = path[:len(path)-1]
				}
			}
		case xml.EndElement:
			if len(path) > 0 {
				path = path[:len(path)-1]
			}
			if t.Name.Local == "info" {
				return info
			}
		}
	}
	return info
}

func attr(t xml.StartElement, name string) string {
	for _, a := range t.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// near returns up to five style names close to name: those containing it
// or contained in it, then the smallest edit distances (a swap of two
// adjacent letters counting one edit).
func (r *Resolver) near(name string) []string {
	var names []string
	seen := map[string]bool{}
	add := func(n string) {
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	for k := range shortNames {
		add(k)
	}
	for _, d := range r.StyleDirs {
		for _, sub := range []string{d, filepath.Join(d, "dependent")} {
			es, _ := os.ReadDir(sub)
			for _, e := range es {
				if n, ok := strings.CutSuffix(e.Name(), ".csl"); ok {
					add(n)
				}
			}
		}
	}
	for _, n := range embeddedStyleNames() {
		add(n)
	}
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	for _, n := range names {
		d := editdist.OSA([]rune(name), []rune(n))
		switch {
		// A name the user began (natur → nature), or one the user went
		// on past (apa-7th → apa); not a style's name of one or two
		// letters that only starts what was typed (chicgo → c).
		case strings.HasPrefix(n, name) || len(n) >= 3 && strings.HasPrefix(name, n):
			d = min(d, 1+abs(len(n)-len(name))/8)
		case strings.Contains(n, name):
			d = min(d, 2+abs(len(n)-len(name))/8)
		}
		if d <= max(1, len(name)/4) {
			cs = append(cs, cand{n, d})
		}
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].d != cs[j].d {
			return cs[i].d < cs[j].d
		}
		if len(cs[i].name) != len(cs[j].name) {
			return len(cs[i].name) < len(cs[j].name)
		}
		return cs[i].name < cs[j].name
	})
	var out []string
	for i := 0; i < len(cs) && i < 5; i++ {
		out = append(out, cs[i].name)
	}
	return out
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
