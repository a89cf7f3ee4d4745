package cite_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/citefind/citefind/cite"
)

// parseSink keeps the compiler from dropping the benchmarked work.
var parseSink int

// draftOf returns n placeholders citing the test store's papers, joined by
// sep (" " puts them all on one line, "\n" one per line).
func draftOf(n int, sep string) string {
	ids := []string{"smith2020", "doe2022", "lee2019", "10.1/smith"}
	parts := make([]string, n)
	for i := range parts {
		parts[i] = "[[cite:" + ids[i%len(ids)] + "]]"
	}
	return strings.Join(parts, sep)
}

// BenchmarkParse measures Parse on drafts of N placeholders, all on one
// line and one per line. Parsing is linear in the input: one-line/40000
// stays within 2× of lines/40000 (issue 13: it was quadratic, 10–16 s per
// request on one line against 0.1–0.2 s over 40,000 lines). The hostile
// ones are inputs that used to make a pass quadratic: unclosed
// placeholders, unclosed anchors, code spans, bare numbers with a number
// map, and backtick runs of many lengths.
func BenchmarkParse(b *testing.B) {
	type bench struct {
		name string
		doc  string
	}
	var benches []bench
	for _, n := range []int{5000, 10000, 20000, 40000} {
		benches = append(benches,
			bench{fmt.Sprintf("one-line/%d", n), draftOf(n, " ")},
			bench{fmt.Sprintf("lines/%d", n), draftOf(n, "\n")})
	}
	const n = 40000
	var ticks strings.Builder
	for i := 1; ticks.Len() < 24*n; i++ {
		ticks.WriteString(strings.Repeat("`", i%1500+1) + "x ")
	}
	benches = append(benches,
		bench{"hostile/unclosed", strings.Repeat(`[[cite:a "q" `, n)},
		bench{"hostile/anchors-unclosed", strings.Repeat("<!--cite:a-->x ", n)},
		bench{"hostile/code-spans", strings.Repeat("`c` [[cite:a]] ", n)},
		bench{"hostile/numbers", "[1]: cite:a\n" + strings.Repeat("[1] [", n)},
		bench{"hostile/backtick-runs", ticks.String()},
	)
	for _, bc := range benches {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.doc)))
			b.ReportAllocs()
			for b.Loop() {
				d, _ := cite.Parse(bc.doc)
				parseSink += len(d.Citations)
			}
		})
	}
}

// BenchmarkResolve measures the whole of Resolve (parse, one lookup,
// numbering, rendering) on 40,000 placeholders on one line and over
// 40,000 lines, in IEEE Markdown.
func BenchmarkResolve(b *testing.B) {
	st := testStore()
	for _, bc := range []struct{ name, doc string }{
		{"one-line/40000", draftOf(40000, " ")},
		{"lines/40000", draftOf(40000, "\n")},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.doc)))
			b.ReportAllocs()
			for b.Loop() {
				res, err := cite.Resolve(b.Context(), bc.doc, st, cite.Options{Style: cite.IEEE})
				if err != nil {
					b.Fatal(err)
				}
				parseSink += len(res.Text)
			}
		})
	}
}
