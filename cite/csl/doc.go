// Package csl renders citations and bibliographies in any CSL style with
// citeproc-js — the processor Zotero and Mendeley use — running unmodified
// inside the binary on goja, a JavaScript engine written in Go.
//
// citeproc-js (npm citeproc 2.4.63), the six default styles (apa, ieee,
// modern-language-association, chicago-author-date,
// harvard-cite-them-right, vancouver) and the en-US locale are embedded
// from dist/, which `make citeproc` fills (pinned by sha256, never
// committed). A build without them compiles and answers ErrNotFetched.
//
// Styles are found by a Resolver: by name in $CITEFIND_STYLES, ~/Zotero/styles
// and /usr/share/citation-style-language/styles, then the built-in ones;
// or by path to a .csl file. A dependent style resolves to its parent.
// Short names: mla, chicago, harvard (ShortName).
//
// An Engine keeps one warm citeproc-js Processor per style (built on
// first use: 0.1–1 s) and caches rendered fragments; a Processor is one
// goja runtime and is not safe for concurrent use. A JavaScript exception
// or a Go panic inside the engine becomes an *EngineError (the processor
// is discarded), a cancelled context interrupts the JavaScript, and an
// item citeproc-js rejects is named in an *ItemError.
//
// Output is citeproc-js's HTML as a Fragment, turned into plain text,
// escaped Markdown or sanitised HTML.
//
// Usage:
//
//	eng := csl.New(csl.Options{})
//	st, err := eng.Style("apa") // or "nature", "path/to/style.csl"
//	out, err := eng.Render(ctx, st, csl.Document{
//		Items:     []csl.Item{{ID: "smith2020", JSON: json.RawMessage(`{"id":"smith2020","type":"book",…}`)}},
//		Citations: []csl.Citation{{ID: "c1", Items: []csl.CiteItem{{ID: "smith2020"}}}},
//	})
//	fmt.Println(out.Citations[0].Markdown(), out.Entries[0].Text.Markdown())
package csl
