package server_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

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
