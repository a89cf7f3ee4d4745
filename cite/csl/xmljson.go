package csl

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// citeprocJSON converts a style or locale file to the JSON form of
// citeproc-js's own XML parser (CSL.parseXml: {name, attrs, children},
// attributes in document order), which citeproc-js reads with JSON.parse
// instead of running that parser on goja: Chicago's engine builds in half
// the time. It follows CSL.parseXml step by step, quirks included (it is a
// string parser: newlines become spaces, comments are dropped only within
// a line, entities are decoded in its order, the last of repeated
// attributes wins), so that citeproc-js gets the object it would have
// built; TestCiteprocJSONIsParseXml compares the two on every style and
// locale at hand. ok is false for input whose result could differ from
// citeproc-js's in ways this port does not follow (invalid UTF-8, the
// Unicode line separators, numeric entities outside the BMP, attribute
// names that are not plain XML names, unbalanced elements): the caller
// then gives citeproc-js the XML.
func citeprocJSON(xml []byte) (string, bool) {
	if !utf8.Valid(xml) || bytes.Contains(xml, []byte("\u2028")) || bytes.Contains(xml, []byte("\u2029")) {
		return "", false
	}
	lst, ok := listify(string(xml))
	if !ok {
		return "", false
	}
	root := &xnode{}
	stack := []*xnode{root}
	for _, elem := range lst {
		top := stack[len(stack)-1]
		switch {
		case strings.Contains(elem[min(1, len(elem)):], "<"):
			// An element with its text: <term name="x">text</term>.
			gt := strings.IndexByte(elem, '>')
			if gt < 0 {
				return "", false
			}
			n, ok := castOpeningTag(elem[:gt+1])
			if !ok {
				return "", false
			}
			m := compositeTextRe.FindStringSubmatch(elem)
			if m == nil {
				return "", false
			}
			text, ok := decodeEntities(m[1])
			if !ok {
				return "", false
			}
			n.children = []any{text}
			top.children = append(top.children, n)
		case strings.HasSuffix(elem, "/>"):
			n, ok := castOpeningTag(elem)
			if !ok {
				return "", false
			}
			if n.name == "term" {
				n.children = append(n.children, "")
			}
			top.children = append(top.children, n)
		case strings.HasPrefix(elem, "</"):
			if len(stack) == 1 {
				return "", false
			}
			stack = stack[:len(stack)-1]
		default:
			n, ok := castOpeningTag(elem)
			if !ok {
				return "", false
			}
			top.children = append(top.children, n)
			stack = append(stack, n)
		}
	}
	if len(stack) != 1 || len(root.children) == 0 {
		return "", false
	}
	first, ok := root.children[0].(*xnode)
	if !ok {
		return "", false
	}
	var b bytes.Buffer
	first.write(&b)
	return b.String(), true
}

type xnode struct {
	name     string
	attrs    []xattr
	children []any // *xnode or string
}

type xattr struct{ name, value string }

func (n *xnode) write(b *bytes.Buffer) {
	b.WriteString(`{"name":`)
	writeJSONString(b, n.name)
	b.WriteString(`,"attrs":{`)
	for i, a := range n.attrs {
		if i > 0 {
			b.WriteByte(',')
		}
		writeJSONString(b, a.name)
		b.WriteByte(':')
		writeJSONString(b, a.value)
	}
	b.WriteString(`},"children":[`)
	for i, c := range n.children {
		if i > 0 {
			b.WriteByte(',')
		}
		switch c := c.(type) {
		case *xnode:
			c.write(b)
		case string:
			writeJSONString(b, c)
		}
	}
	b.WriteString("]}")
}

func writeJSONString(b *bytes.Buffer, s string) {
	enc, _ := json.Marshal(s) // valid UTF-8 (checked), so exact
	b.Write(enc)
}

var (
	newlineRe       = regexp.MustCompile(`\r\n|\n|\r`)
	interTagRe      = regexp.MustCompile(`>[\t ]+<`)
	commentRe       = regexp.MustCompile(`<!--.*?-->`)
	tagNameRe       = regexp.MustCompile(`^<([^\t />]+)`)
	attrNamesRe     = regexp.MustCompile(`([^'"=\t ]+)=(?:"[^"]*"|'[^']*')`)
	attrNameOK      = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.:-]*$`)
	compositeTextRe = regexp.MustCompile(`^.*>([^<]*)<.*$`)
	decEntityRe     = regexp.MustCompile(`&#([0-9]{1,6});`)
	hexEntityRe     = regexp.MustCompile(`(?i)&#x([a-f0-9]{1,6});`)
)

// listify is CSL.parseXml's _listifyString: the file as a list of tags
// (an element holding only text, and an empty term or a singular/multiple
// term pair, is one item), from the <style or <locale element on.
func listify(s string) ([]string, bool) {
	s = newlineRe.ReplaceAllString(s, " ")
	s = interTagRe.ReplaceAllString(s, "><")
	s = commentRe.ReplaceAllString(s, "")
	lst := strings.Split(s, "><")
	stylePos := -1
	for i := range lst {
		if i > 0 {
			lst[i] = "<" + lst[i]
		}
		if i < len(lst)-1 {
			lst[i] += ">"
		}
		if stylePos < 0 && (strings.HasPrefix(lst[i], "<style ") || strings.HasPrefix(lst[i], "<locale ")) {
			stylePos = i
		}
	}
	if stylePos < 0 {
		return nil, false
	}
	lst = lst[stylePos:]
	for i := len(lst) - 2; i > -1; i-- {
		if len(lst[i]) == 0 || strings.Contains(lst[i][1:], "<") || strings.HasSuffix(lst[i], "/>") {
			continue
		}
		stub := lst[i][:min(5, len(lst[i]))]
		merge := stub == "<term" && strings.HasPrefix(lst[i+1], "</term") ||
			(stub == "<sing" || stub == "<mult") && strings.HasPrefix(lst[i+1], "<")
		if merge {
			lst[i] += lst[i+1]
			lst = append(lst[:i+1], lst[i+2:]...)
		}
	}
	return lst, true
}

// castOpeningTag is CSL.parseXml's _castObjectFromOpeningTag.
func castOpeningTag(elem string) (*xnode, bool) {
	m := tagNameRe.FindStringSubmatch(elem)
	if m == nil {
		return nil, false
	}
	n := &xnode{name: m[1], children: []any{}}
	for _, a := range attrNamesRe.FindAllString(elem, -1) {
		name := a[:strings.IndexByte(a, '=')]
		// The name goes into a regular expression unescaped, as in
		// citeproc-js: only plain names read the same in both languages
		// (a digit-only name would also sort first in a JavaScript object).
		if !attrNameOK.MatchString(name) || name == "__proto__" {
			return nil, false
		}
		vm := attrValueRe(name).FindStringSubmatch(elem)
		if vm == nil {
			return nil, false
		}
		v, ok := decodeEntities(vm[1][1 : len(vm[1])-1])
		if !ok {
			return nil, false
		}
		set := false
		for i := range n.attrs {
			if n.attrs[i].name == name {
				n.attrs[i].value, set = v, true
			}
		}
		if !set {
			n.attrs = append(n.attrs, xattr{name, v})
		}
	}
	return n, true
}

var attrValueRes sync.Map // attribute name → *regexp.Regexp

// attrValueRe is CSL.parseXml's _getAttribute expression for name: the
// last name="…" (or '…') of the tag.
func attrValueRe(name string) *regexp.Regexp {
	if re, ok := attrValueRes.Load(name); ok {
		return re.(*regexp.Regexp)
	}
	re := regexp.MustCompile(`^.*[\t ]+` + name + `=("(?:[^"]*)"|'(?:[^']*)').*$`)
	attrValueRes.Store(name, re)
	return re
}

// decodeEntities is CSL.parseXml's _decodeHtmlEntities, in its order
// (&amp; first, so "&amp;lt;" gives "<"; &apos; is not decoded).
func decodeEntities(s string) (string, bool) {
	s = strings.ReplaceAll(s, "&amp;", "&")
	s = strings.ReplaceAll(s, "&quot;", `"`)
	s = strings.ReplaceAll(s, "&gt;", ">")
	s = strings.ReplaceAll(s, "&lt;", "<")
	ok := true
	char := func(digits string, base int) string {
		n, err := strconv.ParseInt(digits, base, 32)
		// String.fromCharCode keeps 16 bits: a code point outside the
		// BMP, or a surrogate, would not be the character.
		if err != nil || n > 0xFFFF || n >= 0xD800 && n <= 0xDFFF {
			ok = false
			return ""
		}
		return string(rune(n))
	}
	s = decEntityRe.ReplaceAllStringFunc(s, func(m string) string { return char(m[2:len(m)-1], 10) })
	s = hexEntityRe.ReplaceAllStringFunc(s, func(m string) string { return char(m[3:len(m)-1], 16) })
	return s, ok
}
