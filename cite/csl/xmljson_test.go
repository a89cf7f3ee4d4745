package csl

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dop251/goja"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCiteprocJSONIsParseXml requires citeprocJSON to give, for every
// style and locale at hand, the object citeproc-js's own parser
// (CSL.parseXml, unpatched citeproc-js) builds from the file: compared as
// JSON.stringify of both inside goja, so key order counts. It covers the
// embedded styles and locale, Debian's locales and every 10th of Debian's
// 2,549 styles and dependent styles (all of them with
// CITEFIND_XMLJSON_ALL=1), and hand-made files that hit the parser's
// quirks; those it cannot follow must be refused (ok false), never
// converted differently.
func TestCiteprocJSONIsParseXml(t *testing.T) {
	if raceEnabled {
		t.Skip("one goroutine driving goja, which the race detector slows about tenfold: make test runs it without -race, in its second pass (LONG_TESTS)")
	}
	var p Program
	vm, cslObj, err := p.NewRuntime()
	require.NoError(t, err)
	require.NoError(t, vm.Set("CSL", cslObj))
	parse, err := vm.RunString(`(function (xml, ours) {
	  var want = JSON.stringify(CSL.parseXml(xml));
	  return [want, ours === null ? null : JSON.stringify(JSON.parse(ours))];
	})`)
	require.NoError(t, err)
	compare, ok := goja.AssertFunction(parse)
	require.True(t, ok)
	check := func(t *testing.T, name string, xml []byte) bool {
		t.Helper()
		ours, ok := citeprocJSON(xml)
		var arg goja.Value = goja.Null()
		if ok {
			arg = vm.ToValue(ours)
		}
		v, err := compare(goja.Undefined(), vm.ToValue(string(xml)), arg)
		if !ok {
			return false // refused: citeproc-js gets the XML
		}
		require.NoError(t, err, name)
		var pair [2]string
		require.NoError(t, vm.ExportTo(v, &pair))
		return assert.Equal(t, pair[0], pair[1], name)
	}

	t.Run("embedded", func(t *testing.T) {
		for _, name := range embeddedStyleNames() {
			xml, ok := embeddedStyle(name + ".csl")
			require.True(t, ok)
			assert.True(t, check(t, name, xml), "%s: not converted", name)
		}
		xml, ok := embeddedLocale("en-US")
		require.True(t, ok)
		assert.True(t, check(t, "locales-en-US.xml", xml), "en-US: not converted")
	})

	t.Run("debian", func(t *testing.T) {
		styles, _ := filepath.Glob(filepath.Join(SystemStyles, "*.csl"))
		dependent, _ := filepath.Glob(filepath.Join(SystemStyles, "dependent", "*.csl"))
		locales, _ := filepath.Glob(filepath.Join(SystemLocales, "*.xml"))
		if len(styles) == 0 || len(locales) == 0 {
			t.Skipf("Debian's CSL styles or locales are not installed in %s, %s (make test-deps installs them)", SystemStyles, SystemLocales)
		}
		step := 10
		if os.Getenv("CITEFIND_XMLJSON_ALL") != "" {
			step = 1
		}
		var files []string
		for i, f := range append(styles, dependent...) {
			if i%step == 0 {
				files = append(files, f)
			}
		}
		files = append(files, locales...)
		converted := 0
		for _, f := range files {
			xml, err := os.ReadFile(f)
			require.NoError(t, err)
			if check(t, f, xml) {
				converted++
			}
		}
		t.Logf("%d of %d files converted and identical to CSL.parseXml", converted, len(files))
		assert.Equal(t, len(files), converted, "some real files were refused")
	})

	t.Run("quirks", func(t *testing.T) {
		const head = `<?xml version="1.0" encoding="utf-8"?>` + "\r\n<!-- a comment -->\n"
		converted := map[string]string{
			"entities": head + `<style xmlns="http://purl.org/net/xbiblio/csl" class="in-text" version="1.0">
  <info><title>A &amp; B &quot;q&quot; &lt;x&gt; &amp;lt; &#38;#x41; &#65; &#x42; &#X43; &#1234567; &apos;</title></info>
  <citation><layout><text value="a &amp; b" prefix=' x="1" '/></layout></citation>
</style>`,
			"terms": head + `<locale xmlns="http://purl.org/net/xbiblio/csl" version="1.0" xml:lang="en-US">
	<terms>
		<term name="empty"></term>
		<term name="single"/>
		<term name="page" form="short"><single>p.</single><multiple>pp.</multiple></term>
		<term name="two"><single></single>
		<multiple>x</multiple></term>
		<term name="tabbed">	a	b	</term>
	</terms>
</locale>`,
			"repeated attribute": `<style class="a" version="1.0" class="b"><citation><layout><text variable="title" variable="URL"/></layout></citation></style>`,
			"comment in a line":  `<style version="1.0"><!-- a --><citation><!-- <text/> --><layout><text term="and"/></layout></citation></style>`,
			"comment over lines": "<style version=\"1.0\"><citation><!-- a\n<layout><text term=\"x\"/></layout> --><layout/></citation></style>",
			"nested text":        `<style version="1.0"><macro name="m"><text value="x"/>tail</macro></style>`,
			"crlf and tabs":      "<style\tversion=\"1.0\" class=\"note\">\r\n\t<citation>\r<layout>\t \t<text macro=\"m\"/></layout>\n</citation></style>",
		}
		for name, xml := range converted {
			check(t, name, []byte(xml))
		}
		for _, name := range []string{"entities", "terms", "repeated attribute", "comment in a line"} {
			_, ok := citeprocJSON([]byte(converted[name]))
			assert.True(t, ok, "%s: not converted", name)
		}
		refused := map[string]string{
			"astral entity":      `<style version="1.0"><info><title>&#x1F600;</title></info></style>`,
			"surrogate entity":   `<style version="1.0"><info><title>&#55357;</title></info></style>`,
			"line separator":     "<style version=\"1.0\"><info><title>a\u2028b</title></info></style>",
			"invalid UTF-8":      "<style version=\"1.0\"><info><title>a\xffb</title></info></style>",
			"no style element":   `<?xml version="1.0"?><other a="1"/>`,
			"unbalanced":         `<style version="1.0"></citation></layout></style>`,
			"odd attribute name": `<style version="1.0" a[b]="1"></style>`,
			"numeric attribute":  `<style version="1.0" 1="x"></style>`,
		}
		for name, xml := range refused {
			_, ok := citeprocJSON([]byte(xml))
			assert.False(t, ok, "%s: converted", name)
		}
	})
}

// BenchmarkCiteprocJSON measures the conversion of Chicago's style file,
// which replaces CSL.parseXml's run on goja.
func BenchmarkCiteprocJSON(b *testing.B) {
	xml, ok := embeddedStyle("chicago-author-date.csl")
	require.True(b, ok)
	for b.Loop() {
		if _, ok := citeprocJSON(xml); !ok {
			b.Fatal("not converted")
		}
	}
	b.ReportMetric(float64(len(xml)), "bytes")
}
