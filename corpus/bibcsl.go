package corpus

import (
	"html"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// BibTeX → CSL-JSON.
//
// A BibTeX entry becomes the CSL-JSON item pandoc makes of it
// (`pandoc -f bibtex -t csljson`, pandoc 2.17), with the deliberate
// differences listed in docs/bibtex.md. The mapping, field by field, is
// documented there too; in short:
//
//   - entry type → type (and genre for theses); type → genre;
//     langid/hyphenation → language; names: author, editor, translator,
//     bookauthor → container-author, director;
//   - title (+ subtitle, titleaddon), booktitle or journal(title) →
//     container-title, series → collection-title, shorttitle or the title
//     up to a colon → title-short, shortjournal → container-title-short,
//     eventtitle → event, origtitle → original-title;
//   - date or year/month/day → issued, urldate → accessed, eventdate →
//     event-date, origdate → original-date;
//   - pages → page, volume (+ part), volumes → number-of-volumes,
//     pagetotal → number-of-pages, chapter → chapter-number, edition,
//     version, number → collection-number (books, proceedings and their
//     parts), issue (articles, with issue) or number (others);
//   - school; institution; organization; howpublished; publisher →
//     publisher, address (else location) → publisher-place, venue →
//     event-place, origpublisher, origlocation;
//   - url (else from eprint), doi (else from a DOI URL), isbn, issn, pmid,
//     pmcid, library → call-number; note, annote/annotation, abstract,
//     keywords → keyword, pubstate → status;
//   - the arXiv id, when there is one, in the non-standard "arxiv" key;
//   - xdata, then crossref: the fields the entry lacks, from the @xdata
//     entries and the entry they name (inheritXData, inheritCrossref); biblatex's langidopts (variant), options
//     (useprefix), origyear, a periodical's issuetitle, a chapter's
//     booktitle beside maintitle → volume-title.
//
// Titles, booktitles (as container titles) and series of English entries
// are put in sentence case (sentenceCase), keeping {protected} words.
// LaTeX becomes Unicode and CSL markup (<i>, <b>, <sup>, <sub>, small
// capitals); HTML entities are decoded and HTML tags other than those
// dropped. Fields other than these are not mapped.

// bibMapped are the fields the conversion reads (lower case); the reader
// keeps only these (first occurrence).
var bibMapped = func() map[string]string {
	m := map[string]string{}
	for _, f := range strings.Fields(`abstract address annotation annote archiveprefix arxiv arxivid author
		bookauthor booksubtitle booktitle booktitleaddon chapter crossref date day director doi edition editor
		editortype endday endmonth endyear entrysubtype eprint eprinttype eventdate eventtitle
		howpublished hyphenation institution isbn issn issue issuesubtitle issuetitle journal journalsubtitle journaltitle
		keywords langid langidopts library location mainsubtitle maintitle maintitleaddon month note number
		options organization origdate origlocation origpublisher origtitle origyear pages pagetotal part pmcid pmid
		publisher pubstate school series shortjournal shorttitle subtitle title titleaddon translator
		type url urldate venue version volume volumes xdata year`) {
		m[f] = f
	}
	return m
}()

// mappedField returns the interned lower-case name of a field the
// conversion reads, or "".
func mappedField(name []byte) string {
	var buf [24]byte
	if len(name) > len(buf) {
		return ""
	}
	for i, c := range name {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	return bibMapped[string(buf[:len(name)])]
}

// crossrefTitleTo maps, for a child entry of an "in" type, the title
// fields of the entry its crossref names to the child's fields (biblatex's
// default inheritance: a book's title is the booktitle of its chapters).
var crossrefTitleTo = [][2]string{{"title", "booktitle"}, {"subtitle", "booksubtitle"}, {"titleaddon", "booktitleaddon"}}

// crossrefNotInherited are the fields a child never takes from its
// crossref: they identify or describe the parent itself (its DOI or URL
// would give every child the parent's identity), or are the parent's own
// title (inherited only as crossrefTitleTo says).
var crossrefNotInherited = map[string]bool{
	"crossref": true, "xdata": true, "doi": true, "url": true, "urldate": true, "eprint": true, "eprinttype": true,
	"archiveprefix": true, "arxiv": true, "arxivid": true, "pmid": true, "pmcid": true,
	"abstract": true, "annotation": true, "annote": true, "keywords": true, "note": true,
	"pages": true, "pagetotal": true, "type": true, "entrysubtype": true,
	"title": true, "subtitle": true, "titleaddon": true, "shorttitle": true,
}

// inheritCrossref adds to child the fields of parent (the entry its
// crossref field names) that child does not have, as BibTeX and
// biblatex's default data inheritance do: editor, publisher, address,
// year, date, series, volume, organization, booktitle, ISBN…; for a child
// of type inbook, incollection, inproceedings, conference, inreference,
// bookinbook, suppbook or suppcollection, the parent's title, subtitle
// and titleaddon become its booktitle, booksubtitle and booktitleaddon
// (and a book's author also the bookauthor of an inbook); for an article, a
// periodical's title becomes its journaltitle. Fields in
// crossrefNotInherited are never taken.
func inheritCrossref(child, parent *bibEntry) {
	get := func(name string) string { // a field that used an undefined macro is not inherited
		if slices.Contains(parent.undefFields, name) {
			return ""
		}
		return parent.get(name)
	}
	add := func(name, val string) {
		if val != "" && !child.hasField(name) {
			child.fields = append(child.fields, bibField{name, val})
		}
	}
	switch child.typ {
	case "inbook", "incollection", "inproceedings", "conference", "inreference", "bookinbook", "suppbook", "suppcollection":
		for _, m := range crossrefTitleTo {
			add(m[1], get(m[0]))
		}
		if child.typ == "inbook" || child.typ == "bookinbook" || child.typ == "suppbook" {
			add("bookauthor", get("author"))
		}
	case "article", "suppperiodical":
		add("journaltitle", get("title"))
		add("journalsubtitle", get("subtitle"))
	}
	for _, f := range parent.fields {
		if crossrefNotInherited[f.name] || slices.Contains(parent.undefFields, f.name) {
			continue
		}
		add(f.name, f.val)
	}
}

// bibField is one field of an entry, first occurrence of its name.
type bibField struct {
	name, val string // name lower-cased; val raw (LaTeX)
}

func (e *bibEntry) get(name string) string {
	for _, f := range e.fields {
		if f.name == name {
			return f.val
		}
	}
	return ""
}

func (e *bibEntry) hasField(name string) bool {
	for _, f := range e.fields {
		if f.name == name {
			return true
		}
	}
	return false
}

// cslBuilder builds a CSL-JSON item: members in the order added.
type cslBuilder struct {
	buf []byte
}

func (b *cslBuilder) key(k string) {
	if len(b.buf) == 0 { // the first member
		b.buf = append(b.buf, '{')
	} else {
		b.buf = append(b.buf, ',')
	}
	b.buf = appendJSONString(b.buf, k)
	b.buf = append(b.buf, ':')
}

// str adds a text variable unless v is empty.
func (b *cslBuilder) str(k, v string) {
	if v == "" {
		return
	}
	b.key(k)
	b.buf = appendJSONString(b.buf, v)
}

func (b *cslBuilder) names(k string, ns []cslName) {
	if len(ns) == 0 {
		return
	}
	b.key(k)
	b.buf = append(b.buf, '[')
	for i, n := range ns {
		if i > 0 {
			b.buf = append(b.buf, ',')
		}
		b.buf = append(b.buf, '{')
		first := true
		for _, kv := range [...][2]string{
			{"family", n.family}, {"given", n.given}, {"dropping-particle", n.dropping},
			{"non-dropping-particle", n.nonDropping}, {"suffix", n.suffix}, {"literal", n.literal},
		} {
			if kv[1] == "" {
				continue
			}
			if !first {
				b.buf = append(b.buf, ',')
			}
			first = false
			b.buf = appendJSONString(b.buf, kv[0])
			b.buf = append(b.buf, ':')
			b.buf = appendJSONString(b.buf, kv[1])
		}
		b.buf = append(b.buf, '}')
	}
	b.buf = append(b.buf, ']')
}

func (b *cslBuilder) date(k string, d cslDateValue) {
	if d.empty() {
		return
	}
	b.key(k)
	b.buf = append(b.buf, '{')
	first := true
	sep := func() {
		if !first {
			b.buf = append(b.buf, ',')
		}
		first = false
	}
	if len(d.parts) > 0 {
		sep()
		b.buf = append(b.buf, `"date-parts":[`...)
		for i, ps := range d.parts {
			if i > 0 {
				b.buf = append(b.buf, ',')
			}
			b.buf = append(b.buf, '[')
			for j, n := range ps {
				if j > 0 {
					b.buf = append(b.buf, ',')
				}
				b.buf = strconv.AppendInt(b.buf, int64(n), 10)
			}
			b.buf = append(b.buf, ']')
		}
		b.buf = append(b.buf, ']')
	}
	if d.season != 0 {
		sep()
		b.buf = append(b.buf, `"season":`...)
		b.buf = strconv.AppendInt(b.buf, int64(d.season), 10)
	}
	if d.circa {
		sep()
		b.buf = append(b.buf, `"circa":true`...)
	}
	if d.literal != "" {
		sep()
		b.buf = append(b.buf, `"literal":`...)
		b.buf = appendJSONString(b.buf, d.literal)
	}
	b.buf = append(b.buf, '}')
}

func (b *cslBuilder) bytes() []byte {
	if len(b.buf) == 0 {
		return []byte("{}")
	}
	return append(b.buf, '}')
}

// bibCSL is the conversion of one entry.
type bibCSL struct {
	e       *bibEntry
	english bool // titles go to sentence case
}

// fancy converts a text field: LaTeX, then HTML, to marked text.
func fancy(v string) string {
	if v == "" || plainText(v) && !strings.ContainsAny(v, "'<&") {
		return v // nothing to convert (and no marker)
	}
	return htmlToMarkers(latexToCSL(v))
}

// title converts a title-like field: marked text, in sentence case for
// English entries.
func (c *bibCSL) title(v string) string {
	m := fancy(v)
	if c.english && m != "" {
		m = sentenceCase(m)
	}
	return m
}

// htmlTagNameRe-free tag handling: the tag names htmlTagRe matches, mapped
// to CSL markers ("" drops the tag, " " replaces a block tag by a space).
var htmlTagMarkers = map[string][2]string{
	"i": {string(mItalicOpen), string(mItalicClose)}, "em": {string(mItalicOpen), string(mItalicClose)},
	"italic": {string(mItalicOpen), string(mItalicClose)}, "emphasis": {string(mItalicOpen), string(mItalicClose)},
	"b": {string(mBoldOpen), string(mBoldClose)}, "strong": {string(mBoldOpen), string(mBoldClose)},
	"bold": {string(mBoldOpen), string(mBoldClose)},
	"sup":  {string(mSupOpen), string(mSupClose)}, "superscript": {string(mSupOpen), string(mSupClose)},
	"sub": {string(mSubOpen), string(mSubClose)}, "subscript": {string(mSubOpen), string(mSubClose)},
	"sc": {string(mSmallCapsOpen), string(mSmallCapsClose)}, "scp": {string(mSmallCapsOpen), string(mSmallCapsClose)},
	"p": {" ", " "}, "br": {" ", " "}, "div": {" ", " "}, "li": {" ", " "}, "ul": {" ", " "},
	"ol": {" ", " "}, "hr": {" ", " "}, "pre": {" ", " "}, "h1": {" ", " "}, "h2": {" ", " "},
	"h3": {" ", " "}, "h4": {" ", " "}, "h5": {" ", " "}, "h6": {" ", " "},
}

// htmlToMarkers turns the HTML tags of ACM exports in marked text into
// markers (i, em, b, strong, sup, sub, sc), spaces (block tags) or
// nothing (others), and decodes HTML entities.
func htmlToMarkers(s string) string {
	if strings.IndexByte(s, '<') >= 0 {
		s = unboldSmallCaps(s)
		s = htmlTagRe.ReplaceAllStringFunc(s, func(tag string) string {
			closing := strings.HasPrefix(tag, "</")
			name := strings.TrimLeft(tag, "</")
			if i := strings.IndexAny(name, " \t\n/>"); i >= 0 {
				name = name[:i]
			}
			m, ok := htmlTagMarkers[strings.ToLower(name)]
			switch {
			case !ok:
				return ""
			case strings.HasSuffix(tag, "/>"):
				return strings.TrimSpace(m[0]) + strings.TrimSpace(m[1])
			case closing:
				return m[1]
			}
			return m[0]
		})
	}
	if strings.IndexByte(s, '&') >= 0 {
		s = html.UnescapeString(s)
	}
	if strings.Contains(s, "  ") || strings.HasPrefix(s, " ") || strings.HasSuffix(s, " ") {
		s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == ' ' }), " ")
	}
	return s
}

// boldCapRe is a short bold run (1 to 4 characters) followed by a
// capital and a small letter: the ACM Digital Library's export of a title
// set in small capitals (JASIST's "Assessing Obliteration" as
// "<b>A</b>Ssessing <b>O</b>Bliteration", "<b>P</b>Ub<b>M</b>Ed", "<b>De
// V</b>Isscher"); boldRunRe is any short bold run of such a text, with
// the capital and small letter after it if there are. A longer run is a
// heading or an emphasis ("<b>Objective</b>To assess"), not a capital.
var (
	boldCapRe = regexp.MustCompile(`(?i:<b>)[^<>]{1,4}(?i:</b>)\p{Lu}\p{Ll}`)
	boldRunRe = regexp.MustCompile(`(?i:<b>)([^<>]{1,4})(?i:</b>)(\p{Lu}\p{Ll})?`)
)

// unboldSmallCaps undoes the ACM export of small capitals: where a text
// has a bold run followed by a capital and a small letter, each of its
// bold runs is the large capital of a word and the capital after it the
// first small capital: "<b>A</b>Ssessing" → "Assessing", "<b>W</b>u" →
// "Wu", "<b>P</b>Ub<b>M</b>Ed" → "PubMed", "<b>DOI</b>" → "DOI". Other
// bold text ("<b>U</b>ser-specific", "<b>57</b>(3)", a longer bold run)
// is left as it is.
func unboldSmallCaps(s string) string {
	if !boldCapRe.MatchString(s) {
		return s
	}
	return boldRunRe.ReplaceAllStringFunc(s, func(m string) string {
		sub := boldRunRe.FindStringSubmatch(m)
		next := sub[2]
		if next != "" {
			r, n := utf8.DecodeRuneInString(next)
			next = string(unicode.ToLower(r)) + next[n:]
		}
		return sub[1] + next
	})
}

// concatWith joins marked texts as pandoc's concatWith: "a" + sep + " " +
// "b", or "a" + " " + "b" when a ends in punctuation; empty parts skipped.
func concatWith(sep byte, parts ...string) string {
	out := ""
	for _, p := range parts {
		if p == "" {
			continue
		}
		if out == "" {
			out = p
			continue
		}
		last := lastVisibleRune(out)
		if strings.ContainsRune("!?.,:;", last) {
			out += " " + p
		} else {
			out += string(sep) + " " + p
		}
	}
	return out
}

func lastVisibleRune(s string) rune {
	for len(s) > 0 {
		r, n := utf8.DecodeLastRuneInString(s)
		if !isMarker(r) {
			return r
		}
		s = s[:len(s)-n]
	}
	return 0
}

// BibTeX entry types, grouped as pandoc groups them.
var (
	bibBookLike = map[string]bool{
		"book": true, "collection": true, "proceedings": true, "reference": true, "mvbook": true,
		"mvcollection": true, "mvproceedings": true, "mvreference": true, "bookinbook": true,
		"inbook": true, "incollection": true, "inproceedings": true, "inreference": true,
		"suppbook": true, "suppcollection": true, "conference": true,
	}
	bibChapterLike = map[string]bool{
		"inbook": true, "incollection": true, "inproceedings": true, "inreference": true,
		"bookinbook": true, "conference": true,
	}
	bibArticleLike = map[string]bool{"article": true, "periodical": true, "suppperiodical": true, "review": true}
)

// cslEntryTypes maps entry types to CSL types (misc, online, electronic and
// www are decided in cslType).
var cslEntryTypes = map[string]string{
	"article": "article-journal", "periodical": "article-journal", "suppperiodical": "article-journal",
	"book": "book", "mvbook": "book", "collection": "book", "mvcollection": "book",
	"proceedings": "book", "mvproceedings": "book", "reference": "book", "mvreference": "book",
	"manual": "book", "commentary": "book", "booklet": "pamphlet",
	"inbook": "chapter", "incollection": "chapter", "bookinbook": "chapter", "suppbook": "chapter",
	"suppcollection": "chapter", "inreference": "entry-encyclopedia",
	"inproceedings": "paper-conference", "conference": "paper-conference",
	"phdthesis": "thesis", "mastersthesis": "thesis", "thesis": "thesis",
	"techreport": "report", "report": "report", "dataset": "dataset", "data": "dataset",
	"software": "software", "patent": "patent", "artwork": "graphic", "image": "graphic",
	"audio": "song", "music": "song", "jurisdiction": "legal_case", "legislation": "legislation",
	"standard": "legislation", "legal": "treaty", "letter": "personal_communication",
	"letters": "personal_communication", "movie": "motion_picture", "video": "motion_picture",
	"performance": "speech", "review": "review", "newsarticle": "article-newspaper",
}

// bibStrings are the biblatex localisation keys that appear as values
// (type = {phdthesis}), in English.
var bibStrings = map[string]string{
	"phdthesis": "PhD thesis", "mathesis": "Master’s thesis", "techreport": "technical report",
	"resreport": "research report", "software": "computer software", "datacd": "CD-ROM",
	"audiocd": "audio CD", "candthesis": "Candidate thesis", "patent": "patent",
	"patentde": "German patent", "patenteu": "European patent", "patentfr": "French patent",
	"patentuk": "British patent", "patentus": "U.S. patent", "patreq": "patent request",
	"patreqde": "German patent request", "patreqeu": "European patent request",
	"patreqfr": "French patent request", "patrequk": "British patent request",
	"patrequs": "U.S. patent request",
}

// bibSeriesStrings are the biblatex localisation keys of the series
// field (series = {newseries}), in English.
var bibSeriesStrings = map[string]string{"newseries": "New series", "oldseries": "Old series"}

// bibOption reports whether biblatex's options field (options = {useprefix,
// maxnames=2}) sets the boolean option name: bare or "=true".
func bibOption(options, name string) bool {
	for _, o := range strings.Split(plainValue(options), ",") {
		k, v, ok := strings.Cut(o, "=")
		if strings.EqualFold(strings.TrimSpace(k), name) {
			return !ok || strings.EqualFold(strings.TrimSpace(v), "true")
		}
	}
	return false
}

// usePrefix moves each name's dropping particle into its non-dropping one.
func usePrefix(ns []cslName) []cslName {
	for i := range ns {
		if ns[i].dropping != "" && ns[i].nonDropping == "" {
			ns[i].nonDropping, ns[i].dropping = ns[i].dropping, ""
		}
	}
	return ns
}

// bibLanguages maps babel/polyglossia language names to IETF tags.
var bibLanguages = map[string]string{
	"english": "en-US", "american": "en-US", "usenglish": "en-US", "british": "en-GB",
	"ukenglish": "en-GB", "canadian": "en-US", "australian": "en-AU", "newzealand": "en-NZ",
	"german": "de-DE", "ngerman": "de-DE", "austrian": "de-AT", "naustrian": "de-AT",
	"swissgerman": "de-CH", "french": "fr-FR", "francais": "fr-FR", "spanish": "es-ES",
	"italian": "it-IT", "portuguese": "pt-PT", "portuges": "pt-PT", "brazil": "pt-BR",
	"brazilian": "pt-BR", "dutch": "nl-NL", "russian": "ru-RU", "polish": "pl-PL",
	"czech": "cs-CZ", "danish": "da-DK", "swedish": "sv-SE", "norwegian": "nb-NO",
	"norsk": "nb-NO", "nynorsk": "nn-NO", "finnish": "fi-FI", "greek": "el-GR",
	"turkish": "tr-TR", "hungarian": "hu-HU", "magyar": "hu-HU", "chinese": "zh-CN",
	"japanese": "ja-JP", "korean": "ko-KR", "arabic": "ar", "hebrew": "he-IL",
	"catalan": "ca-AD", "croatian": "hr-HR", "romanian": "ro-RO", "slovak": "sk-SK",
	"slovene": "sl-SI", "ukrainian": "uk-UA", "latin": "la", "icelandic": "is-IS",
	"estonian": "et-EE", "lithuanian": "lt-LT", "latvian": "lv-LV", "vietnamese": "vi-VN",
	"thai": "th-TH", "indonesian": "id-ID", "bulgarian": "bg-BG", "serbian": "sr-RS",
}

// langVariant returns the tag that biblatex's langidopts (variant=british)
// makes of an English lang, or "".
func langVariant(lang, opts string) string {
	if !strings.HasPrefix(lang, "en") {
		return ""
	}
	for _, o := range strings.Split(plainValue(opts), ",") {
		k, v, _ := strings.Cut(o, "=")
		if strings.EqualFold(strings.TrimSpace(k), "variant") {
			switch strings.ToLower(strings.TrimSpace(v)) {
			case "british", "uk":
				return "en-GB"
			case "american", "us", "usmax":
				return "en-US"
			case "australian":
				return "en-AU"
			case "newzealand":
				return "en-NZ"
			case "canadian":
				return "en-CA"
			}
		}
	}
	return ""
}

// csl converts the entry into its CSL-JSON item, appended to scratch[:0]
// (the caller copies it).
func (e *bibEntry) csl(scratch []byte) []byte {
	c := &bibCSL{e: e, english: true}
	et := e.typ

	// Language.
	lang := ""
	if l := strings.ToLower(strings.TrimSpace(plainValue(firstNonEmpty(e.get("langid"), e.get("hyphenation"))))); l != "" {
		if t, ok := bibLanguages[l]; ok {
			lang = t
		} else {
			lang = l
		}
		if v := langVariant(lang, e.get("langidopts")); v != "" {
			lang = v
		}
		if !strings.HasPrefix(lang, "en") {
			c.english = false
		}
	}

	// URL, DOI, arXiv.
	url := plainValue(e.get("url"))
	howURL := ""
	if url == "" {
		eprint := plainValue(e.get("eprint"))
		switch strings.ToLower(plainValue(firstNonEmpty(e.get("eprinttype"), e.get("archiveprefix")))) {
		case "arxiv":
			if eprint != "" {
				url = "https://arxiv.org/abs/" + eprint
			}
		case "jstor":
			url = "https://www.jstor.org/stable/" + eprint
		case "pubmed":
			url = "https://www.ncbi.nlm.nih.gov/pubmed/" + eprint
		case "googlebooks":
			url = "https://books.google.com?id=" + eprint
		}
		if url == "" && (et == "misc" || et == "online" || et == "electronic" || et == "www") {
			howURL = howPublishedURL(e.get("howpublished"))
			url = howURL
		}
	}
	doi := plainValue(e.get("doi"))
	if doi == "" && url != "" {
		doi = doiFromURL(url)
	}
	container := c.containerTitle()
	arxiv := e.arxiv(url, stripMarkers(container), plainValue(e.get("volume")))

	b := cslBuilder{buf: scratch[:0]}
	b.str("id", e.key)
	b.str("type", e.cslType(url, firstNonEmpty(stripMarkers(container), e.get("booktitle")), doi, arxiv))
	genre := bibString(fancy(e.get("type")))
	if genre == "" {
		switch et {
		case "phdthesis":
			genre = "PhD thesis"
		case "mastersthesis":
			genre = "Master’s thesis"
		}
	}
	b.str("genre", renderCSL(genre))
	b.str("language", lang)

	// Titles.
	title, sub, addon := c.title(e.get("title")), c.title(e.get("subtitle")), c.title(e.get("titleaddon"))
	if et == "periodical" && e.hasField("issuetitle") {
		// An issue of a periodical: the issue's title is the title, the
		// periodical (its title) the container.
		title, sub, addon = c.title(e.get("issuetitle")), c.title(e.get("issuesubtitle")), ""
	}
	volTitle := ""
	if e.hasField("maintitle") && !bibChapterLike[et] {
		volTitle = concatWith('.', concatWith(':', title, sub), addon)
		title, sub, addon = c.title(e.get("maintitle")), c.title(e.get("mainsubtitle")), c.title(e.get("maintitleaddon"))
	}
	if bibChapterLike[et] && e.hasField("maintitle") && e.hasField("booktitle") {
		// A chapter of one volume of a multi-volume work: the work is the
		// container, the volume's own title the volume-title.
		volTitle = concatWith('.', concatWith(':', c.title(e.get("booktitle")), c.title(e.get("booksubtitle"))), c.title(e.get("booktitleaddon")))
	}
	fullTitle := concatWith('.', concatWith(':', title, sub), addon)
	b.str("title", renderCSL(fullTitle))
	short := ""
	switch {
	case e.hasField("shorttitle"):
		short = c.title(e.get("shorttitle"))
	case sub != "" || addon != "":
		short = title
	default:
		if before, ok := splitTopColon(title); ok {
			short = before
		}
	}
	b.str("title-short", renderCSL(short))
	b.str("volume-title", renderCSL(volTitle))
	b.str("container-title", renderCSL(container))
	shortContainer := fancy(e.get("shortjournal"))
	if et == "periodical" && shortContainer == "" {
		shortContainer = fancy(e.get("shorttitle"))
	}
	b.str("container-title-short", renderCSL(shortContainer))
	series := c.title(e.get("series"))
	if v, ok := bibSeriesStrings[strings.ToLower(strings.TrimSpace(plainValue(e.get("series"))))]; ok {
		series = v
	}
	if isNumber(stripMarkers(series)) {
		series = ordinal(stripMarkers(series)) + " series"
	}
	b.str("collection-title", renderCSL(series))
	b.str("event", renderCSL(c.title(e.get("eventtitle"))))
	b.str("original-title", renderCSL(c.title(e.get("origtitle"))))

	// Names. biblatex's entry option useprefix makes particles part of
	// the family name for sorting (non-dropping).
	names := parseCSLNames
	if bibOption(e.get("options"), "useprefix") {
		names = func(raw string) []cslName { return usePrefix(parseCSLNames(raw)) }
	}
	b.names("author", names(e.get("author")))
	b.names("container-author", names(e.get("bookauthor")))
	editors := names(e.get("editor"))
	directors := names(e.get("director"))
	if strings.EqualFold(strings.TrimSpace(e.get("editortype")), "director") {
		editors, directors = nil, editors
	}
	b.names("editor", editors)
	b.names("translator", names(e.get("translator")))
	b.names("director", directors)

	// Dates.
	b.date("issued", e.issued())
	b.date("accessed", parseCSLDate(plainValue(e.get("urldate"))))
	b.date("event-date", parseCSLDate(plainValue(e.get("eventdate"))))
	b.date("original-date", parseCSLDate(plainValue(firstNonEmpty(e.get("origdate"), e.get("origyear")))))

	// Locators.
	page := renderCSL(fancy(e.get("pages")))
	page = strings.ReplaceAll(page, "–", "-")
	b.str("page", page)
	b.str("number-of-pages", renderCSL(fancy(e.get("pagetotal"))))
	volume := renderCSL(fancy(e.get("volume")))
	if part := renderCSL(fancy(e.get("part"))); part != "" {
		if volume != "" {
			volume += "." + part
		} else {
			volume = part
		}
	}
	b.str("volume", volume)
	b.str("number-of-volumes", renderCSL(fancy(e.get("volumes"))))
	b.str("chapter-number", renderCSL(fancy(e.get("chapter"))))
	b.str("edition", renderCSL(fancy(e.get("edition"))))
	b.str("version", renderCSL(fancy(e.get("version"))))
	number, issue := renderCSL(fancy(e.get("number"))), renderCSL(fancy(e.get("issue")))
	switch {
	case bibBookLike[et]:
		b.str("collection-number", number)
		b.str("issue", issue)
	case bibArticleLike[et]:
		b.str("issue", strings.Join(nonEmpty(number, issue), ", "))
	default:
		b.str("number", number)
		b.str("issue", issue)
	}

	// Publisher and places.
	pubs := []string{fancy(e.get("school")), fancy(e.get("institution")), fancy(e.get("organization"))}
	if howURL == "" {
		pubs = append(pubs, fancy(e.get("howpublished")))
	}
	pubs = append(pubs, fancy(e.get("publisher")))
	b.str("publisher", renderCSL(concatWith(';', pubs...)))
	b.str("original-publisher", renderCSL(fancy(e.get("origpublisher"))))
	address, location, venue := fancy(e.get("address")), fancy(e.get("location")), fancy(e.get("venue"))
	switch {
	case address == "":
		address = location
	case venue == "":
		venue = location
	}
	b.str("publisher-place", renderCSL(address))
	b.str("event-place", renderCSL(venue))
	b.str("original-publisher-place", renderCSL(fancy(e.get("origlocation"))))

	// Identifiers.
	b.str("URL", url)
	b.str("DOI", doi)
	b.str("ISBN", plainValue(e.get("isbn")))
	b.str("ISSN", plainValue(e.get("issn")))
	b.str("PMID", plainValue(e.get("pmid")))
	b.str("PMCID", plainValue(e.get("pmcid")))
	b.str("call-number", plainValue(e.get("library")))
	b.str("arxiv", arxiv)

	// Notes.
	b.str("note", renderCSL(fancy(e.get("note"))))
	b.str("annote", renderCSL(fancy(firstNonEmpty(e.get("annotation"), e.get("annote")))))
	b.str("abstract", renderCSL(fancy(e.get("abstract"))))
	b.str("keyword", renderCSL(fancy(e.get("keywords"))))
	b.str("status", renderCSL(bibString(fancy(e.get("pubstate")))))
	return b.bytes()
}

// containerTitle is the marked container title: for parts of books and
// proceedings the maintitle or booktitle (in sentence case), else the
// journal (as written), else a booktitle (as written), with their
// subtitles and addons.
func (c *bibCSL) containerTitle() string {
	e := c.e
	var t, sub, addon string
	switch {
	case e.typ == "periodical":
		t, sub, addon = fancy(e.get("title")), fancy(e.get("subtitle")), fancy(e.get("titleaddon"))
	case bibChapterLike[e.typ] && e.hasField("maintitle"):
		t, sub, addon = c.title(e.get("maintitle")), c.title(e.get("mainsubtitle")), c.title(e.get("maintitleaddon"))
	case bibChapterLike[e.typ] && e.hasField("booktitle"):
		t, sub, addon = c.title(e.get("booktitle")), c.title(e.get("booksubtitle")), c.title(e.get("booktitleaddon"))
	case e.hasField("journaltitle"):
		t, sub = fancy(e.get("journaltitle")), fancy(e.get("journalsubtitle"))
	case e.hasField("journal"):
		t, sub = fancy(e.get("journal")), fancy(e.get("journalsubtitle"))
	default:
		// A booktitle where pandoc reads none (misc, online, article …):
		// the site or collection the work is part of, kept as written.
		t, sub = fancy(e.get("booktitle")), fancy(e.get("booksubtitle"))
	}
	return concatWith('.', concatWith(':', t, sub), addon)
}

// issued is the entry's publication date: the date field, else year,
// month and day (and endyear, endmonth, endday).
func (e *bibEntry) issued() cslDateValue {
	if d := plainValue(e.get("date")); d != "" {
		// A date that is no date (Beebe's "15/05/84", a record's entry
		// date) gives way to the year when there is one.
		if v := parseCSLDate(d); !v.empty() && (len(v.parts) > 0 || strings.TrimSpace(e.get("year")) == "") {
			return v
		}
	}
	yearRaw := strings.TrimSpace(stripMarkers(latexToCSL(e.get("year"))))
	if yearRaw == "" {
		return cslDateValue{}
	}
	y := parseYear(yearRaw)
	if y == 0 {
		return cslDateValue{literal: yearRaw}
	}
	var d cslDateValue
	d.parts = append(d.parts, datePart(y, parseMonth(e.get("month")), parseDay(e.get("day"))))
	if ey := parseYear(plainValue(e.get("endyear"))); ey != 0 {
		d.parts = append(d.parts, datePart(ey, parseMonth(e.get("endmonth")), parseDay(e.get("endday"))))
	}
	return d
}

func datePart(y, m, d int) []int {
	switch {
	case m == 0:
		return []int{y}
	case d == 0:
		return []int{y, m}
	}
	return []int{y, m, d}
}

// parseMonth reads a month: a number 1–12, an English name or its
// three-letter abbreviation (any case); 0 otherwise.
func parseMonth(s string) int {
	s = strings.ToLower(strings.TrimSpace(plainValue(s)))
	if s == "" {
		return 0
	}
	if n, err := strconv.Atoi(s); err == nil {
		if n >= 1 && n <= 12 {
			return n
		}
		return 0
	}
	s = strings.TrimSuffix(s, ".")
	for i, m := range [...]string{"january", "february", "march", "april", "may", "june", "july",
		"august", "september", "october", "november", "december"} {
		if s == m || (len(s) >= 3 && strings.HasPrefix(m, s)) {
			return i + 1
		}
	}
	return 0
}

func parseDay(s string) int {
	n, err := strconv.Atoi(strings.TrimSpace(plainValue(s)))
	if err != nil || n < 1 || n > 31 {
		return 0
	}
	return n
}

// cslDateValue is a CSL-JSON date.
type cslDateValue struct {
	parts   [][]int
	season  int
	circa   bool
	literal string
}

func (d cslDateValue) empty() bool { return len(d.parts) == 0 && d.literal == "" }

// parseCSLDate reads a biblatex (ISO 8601 / EDTF level 1) date: YYYY,
// YYYY-MM, YYYY-MM-DD, YYYY-21…24 (seasons), with "~" (circa) or "?"
// (uncertain, dropped) or "%" (both), and ranges A/B (either end may be
// open: "..", or empty). Anything else is a literal date.
func parseCSLDate(s string) cslDateValue {
	s = strings.TrimSpace(s)
	if s == "" {
		return cslDateValue{}
	}
	var d cslDateValue
	ends := strings.SplitN(s, "/", 2)
	for i, part := range ends {
		part = strings.TrimSpace(part)
		if part == "" || part == ".." {
			if i == 0 || len(ends) == 1 {
				return cslDateValue{literal: s}
			}
			continue
		}
		ps, season, circa, ok := parseEDTF(part)
		if !ok {
			return cslDateValue{literal: s}
		}
		d.circa = d.circa || circa
		if season != 0 && i == 0 {
			d.season = season
		}
		d.parts = append(d.parts, ps)
	}
	return d
}

func parseEDTF(s string) (parts []int, season int, circa, ok bool) {
	for len(s) > 0 {
		switch s[len(s)-1] {
		case '~', '%':
			circa = true
			s = s[:len(s)-1]
			continue
		case '?':
			s = s[:len(s)-1]
			continue
		}
		break
	}
	fs := strings.Split(s, "-")
	neg := false
	if len(fs) > 0 && fs[0] == "" && len(fs) > 1 { // a negative year
		neg, fs = true, fs[1:]
	}
	if len(fs) == 0 || len(fs) > 3 {
		return nil, 0, false, false
	}
	for i, f := range fs {
		n, err := strconv.Atoi(f)
		if err != nil || f == "" || f[0] == '+' {
			return nil, 0, false, false
		}
		switch i {
		case 0:
			if len(f) < 4 && !neg {
				return nil, 0, false, false
			}
			if neg {
				n = -n
			}
		case 1:
			if n >= 21 && n <= 24 && len(fs) == 2 {
				season = n - 20
				continue
			}
			if n < 1 || n > 12 {
				return nil, 0, false, false
			}
		case 2:
			if n < 1 || n > 31 {
				return nil, 0, false, false
			}
		}
		parts = append(parts, n)
	}
	return parts, season, circa, true
}

// bibString resolves a biblatex localisation key (type = {phdthesis}).
func bibString(m string) string {
	if v, ok := bibStrings[strings.ToLower(stripMarkers(m))]; ok {
		return v
	}
	return m
}

func isNumber(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// ordinal returns the English ordinal of a number: 1st, 2nd, 3rd, 11th.
func ordinal(s string) string {
	n, _ := strconv.Atoi(s)
	suffix := "th"
	if n%100 < 11 || n%100 > 13 {
		switch n % 10 {
		case 1:
			suffix = "st"
		case 2:
			suffix = "nd"
		case 3:
			suffix = "rd"
		}
	}
	return s + suffix
}

// cslType maps the entry type to a CSL type: see ReadBibTeX.
func (e *bibEntry) cslType(url, container, doi, arxiv string) string {
	switch e.typ {
	case "article", "periodical", "suppperiodical":
		switch strings.ToLower(strings.TrimSpace(e.get("entrysubtype"))) {
		case "magazine":
			return "article-magazine"
		case "newspaper":
			return "article-newspaper"
		}
		return "article-journal"
	case "unpublished":
		if e.hasField("eventdate") || e.hasField("eventtitle") || e.hasField("venue") {
			return "speech"
		}
		return "manuscript"
	case "misc", "online", "electronic", "www":
		if arxiv != "" || e.get("eprint") != "" {
			return "article"
		}
		if e.typ != "misc" {
			return "webpage"
		}
		if url != "" && container == "" && doi == "" {
			return "webpage"
		}
		return "article"
	}
	if t, ok := cslEntryTypes[e.typ]; ok {
		return t
	}
	return "article"
}

// cslName is a CSL-JSON name.
type cslName struct {
	family, given, dropping, nonDropping, suffix, literal string
}

// nameWord is one word of a name in marked text.
type nameWord string

// parseCSLNames splits a BibTeX name list on "and" (any case) outside
// braces and parses each name as pandoc does in BibTeX mode: "First von
// Last", "von Last, First" or "von Last, Jr, First", where von is the
// words before the last run of capitalised words; a name wholly in
// braces is a literal; "others" is dropped; biblatex's extended form
// "family=…, given=…" is read.
func parseCSLNames(raw string) []cslName {
	if strings.TrimSpace(raw) == "" {
		return nil
	}
	m := raw
	if !plainText(raw) || strings.ContainsAny(raw, "'<&") {
		m = latexToCSL(raw)
	}
	words := splitMarkedWords(m)
	var out []cslName
	start := 0
	for i := 0; i <= len(words); i++ {
		if i < len(words) && !strings.EqualFold(string(words[i]), "and") {
			continue
		}
		if i > start {
			if n, ok := parseCSLName(words[start:i]); ok {
				out = append(out, n)
			}
		}
		start = i + 1
	}
	return out
}

// splitMarkedWords splits marked text at spaces outside marked spans.
func splitMarkedWords(s string) []nameWord {
	var out []nameWord
	depth, start := 0, -1
	for i, r := range s {
		switch {
		case isMarker(r):
			if markerOpens(r) {
				depth++
			} else if depth > 0 {
				depth--
			}
		case unicode.IsSpace(r) && depth == 0:
			if start >= 0 {
				out = append(out, nameWord(s[start:i]))
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		out = append(out, nameWord(s[start:]))
	}
	return out
}

// plainName is the text of name words, markers removed, entities decoded.
func plainName(ws []nameWord) string {
	switch {
	case len(ws) == 0:
		return ""
	case len(ws) == 1 && !strings.ContainsFunc(string(ws[0]), isMarker) && strings.IndexByte(string(ws[0]), '&') < 0:
		return string(ws[0])
	}
	parts := make([]string, 0, len(ws))
	for _, w := range ws {
		if t := stripMarkers(string(w)); t != "" {
			parts = append(parts, t)
		}
	}
	s := strings.Join(parts, " ")
	if strings.IndexByte(s, '&') >= 0 {
		s = html.UnescapeString(s)
	}
	return s
}

func parseCSLName(ws []nameWord) (cslName, bool) {
	if len(ws) == 1 {
		w := string(ws[0])
		if strings.EqualFold(w, "others") {
			return cslName{}, false
		}
		if r, n := utf8.DecodeRuneInString(w); r == mProtOpen {
			if closeAt := matchingMarker(w, 0); closeAt == len(w)-n {
				lit := plainName(ws)
				return cslName{literal: lit}, lit != ""
			}
		}
	}
	// Extended biblatex form: family=…, given=…
	if strings.Contains(stripMarkers(string(ws[0])), "=") {
		return extendedName(plainName(ws))
	}
	// Split into comma parts (commas outside spans), each into words.
	var parts [][]nameWord
	cur := make([]nameWord, 0, len(ws))
	for _, w := range ws {
		if strings.IndexByte(string(w), ',') < 0 {
			cur = append(cur, w)
			continue
		}
		for k, p := range splitTopComma(string(w)) {
			if k > 0 {
				parts = append(parts, cur)
				cur = nil
			}
			if p != "" {
				cur = append(cur, nameWord(p))
			}
		}
	}
	parts = append(parts, cur)
	var first, vonLast, jr []nameWord
	switch len(parts) {
	case 1:
		fvl := parts[0]
		k := 0
		for k < len(fvl) && capitalizedWord(fvl[k]) {
			k++
		}
		if k == len(fvl) && k > 0 {
			first, vonLast = fvl[:k-1], fvl[k-1:]
		} else {
			first, vonLast = fvl[:k], fvl[k:]
		}
	case 2:
		vonLast, first = parts[0], parts[1]
	default:
		vonLast, jr, first = parts[0], parts[1], parts[2]
	}
	// Initials written together in the given names: "J.G." → "J. G.".
	if slices.ContainsFunc(first, func(w nameWord) bool { return strings.IndexByte(string(w), '.') >= 0 }) {
		var spaced []nameWord
		for _, w := range first {
			spaced = append(spaced, addSpaceAfterPeriod(w)...)
		}
		first = spaced
	}
	// "Family, Given von": lower-case words after the capitalised given
	// names are a particle, as pandoc reads them ("Oliveira, Marcos de").
	var givenVon []nameWord
	if len(parts) > 1 {
		g := 0
		for g < len(first) && capitalizedWord(first[g]) {
			g++
		}
		lower := g > 0 && g < len(first)
		for _, w := range first[g:] {
			r, _ := utf8.DecodeRuneInString(stripMarkers(string(w)))
			lower = lower && unicode.IsLower(r)
		}
		if lower {
			first, givenVon = first[:g], first[g:]
		}
	}
	// BibTeX: the last name is the trailing run of capitalised words (at
	// least one word); von is what precedes it.
	k := len(vonLast)
	for k > 0 && capitalizedWord(vonLast[k-1]) {
		k--
	}
	if k == len(vonLast) && k > 0 {
		k--
	}
	n := cslName{
		family: plainName(vonLast[k:]), given: plainName(first),
		dropping: plainName(append(givenVon[:len(givenVon):len(givenVon)], vonLast[:k]...)), suffix: plainName(jr),
	}
	// An elided particle written onto the family name: d’Aquin, dell’Orto.
	if m := elidedParticleRe.FindStringSubmatch(n.family); m != nil {
		n.nonDropping, n.family = m[1], m[2]
	}
	if n.family == "" {
		if n.given == "" && n.dropping == "" {
			return cslName{}, false
		}
		if n.given != "" && n.dropping == "" {
			n.family, n.given = n.given, ""
		}
	}
	return n, true
}

// elidedParticleRe matches a family name starting with a lower-case
// particle elided with an apostrophe.
var elidedParticleRe = regexp.MustCompile(`^(\p{Ll}+[’'-])(\p{Lu}[^-’']*)$`)

// extendedName reads biblatex's "family=Smith, given=John, prefix=van,
// useprefix=true, suffix=Jr".
func extendedName(s string) (cslName, bool) {
	var n cslName
	useprefix := false
	for _, p := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			continue
		}
		v = strings.Trim(strings.TrimSpace(v), `"`)
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "family":
			n.family = v
		case "given":
			n.given = strings.TrimSpace(n.given + " " + v)
		case "prefix":
			n.dropping = v
		case "suffix":
			n.suffix = v
		case "useprefix":
			useprefix = strings.EqualFold(v, "true")
		}
	}
	if useprefix {
		n.nonDropping, n.dropping = n.dropping, ""
	}
	return n, n.family != "" || n.given != ""
}

// matchingMarker returns the offset of the marker closing the span opened
// at s[i], or -1.
func matchingMarker(s string, i int) int {
	depth := 0
	for j, r := range s[i:] {
		if !isMarker(r) {
			continue
		}
		if markerOpens(r) {
			depth++
		} else {
			depth--
			if depth == 0 {
				return i + j
			}
		}
	}
	return -1
}

// splitTopComma splits a word at commas outside marked spans.
func splitTopComma(w string) []string {
	if strings.IndexByte(w, ',') < 0 {
		return []string{w}
	}
	var out []string
	depth, start := 0, 0
	for i, r := range w {
		switch {
		case isMarker(r):
			if markerOpens(r) {
				depth++
			} else if depth > 0 {
				depth--
			}
		case r == ',' && depth == 0:
			out = append(out, w[start:i])
			start = i + 1
		}
	}
	return append(out, w[start:])
}

// addSpaceAfterPeriod splits initials written together, "J.G." → "J.",
// "G.", as pandoc does: a single upper-case letter and "." followed by a
// single upper-case letter.
func addSpaceAfterPeriod(w nameWord) []nameWord {
	s := string(w)
	if strings.Count(s, ".") < 1 || strings.ContainsFunc(s, isMarker) {
		return []nameWord{w}
	}
	// Tokens: runs without ".", and each ".".
	var toks []string
	for s != "" {
		i := strings.IndexByte(s, '.')
		switch {
		case i < 0:
			toks, s = append(toks, s), ""
		case i == 0:
			toks, s = append(toks, "."), s[1:]
		default:
			toks, s = append(toks, s[:i], "."), s[i+1:]
		}
	}
	single := func(t string) bool {
		r, n := utf8.DecodeRuneInString(t)
		return n == len(t) && unicode.IsLetter(r) && isUpperRune(r)
	}
	var out []nameWord
	cur := ""
	for i := 0; i < len(toks); i++ {
		cur += toks[i]
		if single(toks[i]) && i+2 < len(toks) && toks[i+1] == "." && single(toks[i+2]) {
			out = append(out, nameWord(cur+"."))
			cur = ""
			i++
		}
	}
	if cur != "" {
		out = append(out, nameWord(cur))
	}
	return out
}

func isUpperASCII(c byte) bool { return 'A' <= c && c <= 'Z' }

// capitalizedWord is pandoc's isCapitalized: the word's first letter (marked
// spans skipped, digits skipped) is upper case; a word with no letter
// outside spans counts as capitalised. Unlike pandoc, a word that starts
// with a span holding a single letter ({\'E}mile) takes that letter's case,
// as BibTeX does.
func capitalizedWord(w nameWord) bool {
	s := string(w)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if isMarker(r) {
			if !markerOpens(r) {
				i += n
				continue
			}
			end := matchingMarker(s, i)
			if end < 0 {
				return true
			}
			if i == 0 && end+3 < len(s) {
				inner := stripMarkers(s[i:end])
				if utf8.RuneCountInString(inner) == 1 {
					r0, _ := utf8.DecodeRuneInString(inner)
					if unicode.IsLetter(r0) {
						return isUpperRune(r0)
					}
				}
			}
			_, cn := utf8.DecodeRuneInString(s[end:])
			i = end + cn
			continue
		}
		if unicode.IsDigit(r) {
			i += n
			continue
		}
		return isUpperRune(r)
	}
	return true
}
