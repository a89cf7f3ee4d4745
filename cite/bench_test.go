package cite_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/citefind/citefind/cite/csl"
)

// sink keeps the compiler from dropping the benchmarked work.
var sink int

// BenchmarkBibliography200 renders a document citing 200 synthetic items
// (each once) with its bibliography on a warm engine: "cached" with the
// rendered entries in the cache (a server re-rendering a draft), "engine"
// with the cache off (citeproc-js renders every citation and entry).
func BenchmarkBibliography200(b *testing.B) {
	var doc csl.Document
	for i, raw := range syntheticItems(200, 15) {
		var m struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			b.Fatal(err)
		}
		doc.Items = append(doc.Items, csl.Item{ID: m.ID, JSON: raw})
		doc.Citations = append(doc.Citations, csl.Citation{ID: fmt.Sprint("c", i), Items: []csl.CiteItem{{ID: m.ID}}})
	}
	for _, style := range []string{"apa", "ieee"} {
		for _, mode := range []struct {
			name  string
			cache int
		}{{"cached", 0}, {"engine", -1}} {
			b.Run(style+"/"+mode.name, func(b *testing.B) {
				eng := csl.New(csl.Options{Resolver: &csl.Resolver{}, CacheEntries: mode.cache})
				st, err := eng.Style(style)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := eng.Render(b.Context(), st, doc); err != nil { // warm
					b.Fatal(err)
				}
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					out, err := eng.Render(b.Context(), st, doc)
					if err != nil {
						b.Fatal(err)
					}
					sink += len(out.Entries)
				}
			})
		}
	}
}
