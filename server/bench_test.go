package server_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/server"
	"github.com/citefind/citefind/server/internal/sampledb"
)

// sink keeps the compiler from dropping the benchmarked work.
var sink int

// BenchmarkHandler measures one API request through the whole handler
// (routing, logging middleware, JSON in and out, the engine) on the sample
// database, without the network. `make bench-serve` measures the server
// under load over loopback.
func BenchmarkHandler(b *testing.B) {
	eng := sampledb.Open(b)
	h := server.New(eng, server.Options{}).Handler()
	benches := []struct {
		name, method, path, body string
	}{
		{"search-k10", "POST", "/v1/search", `{"query": "We merge rankings with reciprocal rank fusion [CITATION].", "k": 10}`},
		{"search-k10-pick", "POST", "/v1/search", `{"query": "dense passage retrieval for open-domain question answering", "k": 10, "pick": true}`},
		{"cite-ieee", "POST", "/v1/cite", `{"draft": "RRF [[cite:cormack2009rrf]] and DPR [[cite:karpukhin2020dpr]].", "style": "ieee"}`},
		{"paper", "GET", "/v1/papers/10.1145/1571941.1572114", ""},
	}
	for _, bc := range benches {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest(bc.method, bc.path, strings.NewReader(bc.body))
				req.Host = "127.0.0.1:8080"
				if bc.body != "" {
					req.Header.Set("Content-Type", "application/json")
				}
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatalf("status %d: %s", w.Code, w.Body)
				}
				sink += w.Body.Len()
			}
		})
	}
}

// draft20 is sample/draft20.md: it cites 20 sample papers, some twice
// and some together, the way a section of a paper does (make
// bench-cite-cold renders it in new processes).
func draft20(b *testing.B) string {
	d, err := os.ReadFile(filepath.Join("..", "sample", "draft20.md"))
	require.NoError(b, err)
	return string(d)
}

// BenchmarkCiteWarm measures POST /v1/cite of a 20-citation draft in a
// warm style: the style's citeproc-js engine built and the draft's
// entries cached by an earlier request, as on a server in use. It reports
// the median (p50-ms) and 90th percentile (p90-ms) request time.
func BenchmarkCiteWarm(b *testing.B) {
	eng := sampledb.Open(b)
	// The warm-up request builds the style's engine (seconds for APA on
	// a busy machine); it is not measured and may exceed the default
	// request deadline.
	h := server.New(eng, server.Options{RequestTimeout: 10 * time.Minute}).Handler()
	for _, style := range []string{"apa", "ieee", "mla", "chicago", "harvard", "vancouver", "nature"} {
		b.Run(style, func(b *testing.B) {
			body, err := json.Marshal(server.CiteRequest{Draft: draft20(b), Style: style, Format: "md"})
			if err != nil {
				b.Fatal(err)
			}
			do := func() time.Duration {
				start := time.Now()
				req := httptest.NewRequest("POST", "/v1/cite", bytes.NewReader(body))
				req.Host = "127.0.0.1:8080"
				req.Header.Set("Content-Type", "application/json")
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatalf("status %d: %s", w.Code, w.Body)
				}
				sink += w.Body.Len()
				return time.Since(start)
			}
			do() // builds the style's engine and fills the cache
			b.ReportAllocs()
			b.ResetTimer()
			var ds []time.Duration
			for b.Loop() {
				ds = append(ds, do())
			}
			slices.Sort(ds)
			b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(ds[len(ds)*9/10].Microseconds())/1000, "p90-ms")
		})
	}
}
