package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind"
	"github.com/citefind/citefind/cite/csl"
	"github.com/citefind/citefind/engine"
	"github.com/citefind/citefind/server"
	"github.com/citefind/citefind/server/internal/sampledb"
)

const rrfID = "10.1145/1571941.1572114"

// testStyles is the citeproc-js engine set of the tests' servers, with APA
// built once (seconds, more under the race detector), so that no test
// request waits for it beyond its deadline.
var testStyles = sync.OnceValue(func() *csl.Engine {
	e := csl.New(csl.Options{})
	if st, err := e.Style("apa"); err == nil {
		_ = e.Warm(context.Background(), st)
	}
	return e
})

// patientTimeout is the request deadline of the tests that do not test
// it: a cold citeproc-js engine under the race detector, beside other
// packages' tests, can take longer than the default 30 s (a first MCP
// resolve_citations did, 2026-11-29).
const patientTimeout = 10 * time.Minute

func newTestServer(t *testing.T, eng *engine.Engine, opts server.Options) *httptest.Server {
	t.Helper()
	if opts.Styles == nil {
		opts.Styles = testStyles()
	}
	if opts.RequestTimeout == 0 {
		opts.RequestTimeout = patientTimeout
	}
	ts := httptest.NewServer(server.New(eng, opts).Handler())
	t.Cleanup(ts.Close)
	return ts
}

type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends a request; a body is sent as application/json.
func do(t *testing.T, ts *httptest.Server, method, path, body string) response {
	t.Helper()
	return doH(t, ts, method, path, body, nil)
}

// doH is do with headers: "Content-Type" replaces application/json ("" sends
// none), "Host" sets the Host.
func doH(t *testing.T, ts *httptest.Server, method, path, body string, header map[string]string) response {
	t.Helper()
	r, err := tryH(t.Context(), ts, method, path, body, header)
	require.NoError(t, err)
	return r
}

// try is do for goroutines other than the test's: it returns the error.
func try(ctx context.Context, ts *httptest.Server, method, path, body string) (response, error) {
	return tryH(ctx, ts, method, path, body, nil)
}

func tryH(ctx context.Context, ts *httptest.Server, method, path, body string, header map[string]string) (response, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, ts.URL+path, rd)
	if err != nil {
		return response{}, err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		switch {
		case k == "Host":
			req.Host = v
		case v == "":
			req.Header.Del(k)
		default:
			req.Header.Set(k, v)
		}
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, header: resp.Header, body: b}, err
}

type apiError struct {
	Error   string         `json:"error"`
	Field   string         `json:"field"`
	Details map[string]any `json:"details"`
}

func TestBadRequests(t *testing.T) {
	eng := sampledb.Open(t)
	ts := newTestServer(t, eng, server.Options{MaxBodyBytes: 4096})
	big := `{"query": "` + strings.Repeat("a", 5000) + `"}`
	tests := []struct {
		name, method, path, body string
		status                   int
		field, msg               string
		ct                       string // Content-Type, when not application/json
	}{
		{"empty body", "POST", "/v1/search", "", 400, "body", "empty", "application/json"},
		{"text/plain", "POST", "/v1/search", `{"query": "x"}`, 415, "content-type", `got Content-Type "text/plain"`, "text/plain"},
		{"form (curl -d)", "POST", "/v1/cite", `{"draft": "x"}`, 415, "content-type", "application/x-www-form-urlencoded", "application/x-www-form-urlencoded"},
		{"no Content-Type", "POST", "/v1/search", `{"query": "x"}`, 415, "content-type", "got no Content-Type", "-"},
		{"multipart", "POST", "/v1/search", `{"query": "x"}`, 415, "content-type", "--json", "multipart/form-data; boundary=x"},
		{"JSON with a charset", "POST", "/v1/search", `{"query": "x", "k": 0}`, 200, "", "", "Application/JSON; charset=utf-8"},
		{"not JSON", "POST", "/v1/search", "query=x", 400, "body", "not valid JSON", ""},
		{"truncated", "POST", "/v1/search", `{"query": "x"`, 400, "body", "ends too early", ""},
		{"array", "POST", "/v1/search", `[1]`, 400, "body", "JSON object", ""},
		{"two objects", "POST", "/v1/search", `{"query": "x"} {}`, 400, "body", "more after it", ""},
		{"too large", "POST", "/v1/search", big, 413, "body", "limit of 4096 bytes", ""},
		{"missing query", "POST", "/v1/search", `{"k": 3}`, 400, "query", "required", ""},
		{"blank query", "POST", "/v1/search", `{"query": "  "}`, 400, "query", "required", ""},
		{"unknown field", "POST", "/v1/search", `{"query": "x", "text": "y"}`, 400, "text", "unknown field", ""},
		{"k not integer", "POST", "/v1/search", `{"query": "x", "k": 2.5}`, 400, "k", "integer", ""},
		{"k string", "POST", "/v1/search", `{"query": "x", "k": "3"}`, 400, "k", "integer", ""},
		{"k too large", "POST", "/v1/search", `{"query": "x", "k": 1000}`, 400, "k", "between 1 and 100", ""},
		{"k negative", "POST", "/v1/search", `{"query": "x", "k": -1}`, 400, "k", "between 1 and 100", ""},
		{"unknown retriever", "POST", "/v1/search", `{"query": "x", "retrievers": ["bm26"]}`, 400, "retrievers", `"bm26"`, ""},
		{"retrievers not a list", "POST", "/v1/search", `{"query": "x", "retrievers": "bm25"}`, 400, "retrievers", "array", ""},
		{"dense without index", "POST", "/v1/search", `{"query": "x", "retrievers": ["bm25", "dense"]}`, 400, "retrievers", "embedder", ""},
		{"unknown reranker", "POST", "/v1/search", `{"query": "x", "rerank": "magic"}`, 400, "rerank", `"magic"`, ""},
		{"pick not bool", "POST", "/v1/search", `{"query": "x", "pick": "yes"}`, 400, "pick", "true or false", ""},
		{"search by GET", "GET", "/v1/search", "", 405, "method", "use POST", ""},
		{"missing draft", "POST", "/v1/cite", `{"style": "apa"}`, 400, "draft", "required", ""},
		{"unknown style", "POST", "/v1/cite", `{"draft": "x", "style": "turabian"}`, 400, "style", "turabian", ""},
		{"style path refused", "POST", "/v1/cite", `{"draft": "x", "style": "/etc/passwd"}`, 400, "style", "file paths are not accepted", ""},
		{"near style suggested", "POST", "/v1/cite", `{"draft": "x", "style": "vancover"}`, 400, "style", "did you mean vancouver", ""},
		{"unknown format", "POST", "/v1/cite", `{"draft": "x", "format": "rtf"}`, 400, "format", "html", ""},
		{"malformed placeholder", "POST", "/v1/cite", `{"draft": "see [[cite:]]"}`, 400, "draft", "empty ID", ""},
		{"unknown ID", "POST", "/v1/cite", `{"draft": "see [[cite:nope2024]]"}`, 422, "draft", "nope2024", ""},
		{"unknown paper", "GET", "/v1/papers/10.9999/none", "", 404, "id", "10.9999/none", ""},
		{"paper by POST", "POST", "/v1/papers/x", "{}", 405, "method", "use GET", ""},
		{"unknown endpoint", "GET", "/v1/nothing", "", 404, "path", "/v1/nothing", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var header map[string]string
			switch tc.ct {
			case "":
			case "-":
				header = map[string]string{"Content-Type": ""}
			default:
				header = map[string]string{"Content-Type": tc.ct}
			}
			r := doH(t, ts, tc.method, tc.path, tc.body, header)
			assert.Equal(t, tc.status, r.status, string(r.body))
			assert.Equal(t, "application/json; charset=utf-8", r.header.Get("Content-Type"))
			if tc.status == http.StatusOK {
				return
			}
			var e apiError
			require.NoError(t, json.Unmarshal(r.body, &e), string(r.body))
			assert.Equal(t, tc.field, e.Field)
			assert.Contains(t, e.Error, tc.msg)
		})
	}
}

func TestSearchIsQueryJSON(t *testing.T) {
	eng := sampledb.Open(t)
	ts := newTestServer(t, eng, server.Options{})
	const text = "We merge the BM25 and dense rankings with reciprocal rank fusion [CITATION]."
	r := do(t, ts, "POST", "/v1/search", fmt.Sprintf(`{"query": %q, "k": 3, "pick": true, "rerank": "none", "retrievers": ["bm25"]}`, text))
	require.Equal(t, http.StatusOK, r.status, string(r.body))

	want, err := eng.Search(t.Context(), text, citefind.QueryOptions{K: 3, Pick: true, Rerank: "none", Retrievers: []string{"bm25"}})
	require.NoError(t, err)
	wantJSON, err := json.Marshal(want)
	require.NoError(t, err)
	assert.JSONEq(t, string(wantJSON), string(r.body))

	var res citefind.Result
	require.NoError(t, json.Unmarshal(r.body, &res))
	require.Len(t, res.Hits, 3)
	assert.Equal(t, rrfID, res.Hits[0].ID)
	assert.Equal(t, 1, res.Hits[0].Sources["bm25"].Rank)
	require.NotNil(t, res.Picked)
	assert.Equal(t, rrfID, res.Picked.ID)
	assert.True(t, res.Picked.Fallback)
}

func TestCitePaperAndHealth(t *testing.T) {
	eng := sampledb.Open(t)
	ts := newTestServer(t, eng, server.Options{})

	r := do(t, ts, "GET", "/healthz", "")
	require.Equal(t, http.StatusOK, r.status)
	assert.JSONEq(t, fmt.Sprintf(`{"status": "ok", "index_loaded": true, "papers": 30, "generation": %d, "dense": false}`, eng.Generation()), string(r.body))

	// IDs with a slash (DOIs), written as is or with the slash escaped as
	// the page sends them, and aliases (BibTeX keys) all work.
	for _, id := range []string{rrfID, url.PathEscape(rrfID), "cormack2009rrf"} {
		r = do(t, ts, "GET", "/v1/papers/"+id, "")
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		var p server.Paper
		require.NoError(t, json.Unmarshal(r.body, &p))
		assert.Equal(t, rrfID, p.ID)
		assert.Equal(t, 2009, p.Year)
		assert.Equal(t, []string{"Gordon V. Cormack", "Charles L. A. Clarke", "Stefan Büttcher"}, p.Authors)
		assert.NotEmpty(t, p.Abstract)
	}

	// An escaped ID stays inside /v1/papers/: no walking out with "..".
	r = do(t, ts, "GET", "/v1/papers/"+url.PathEscape("10.1234/../../healthz"), "")
	assert.Equal(t, http.StatusNotFound, r.status, string(r.body))
	assert.Contains(t, string(r.body), `"field":"id"`)

	draft := "Fusion [[cite:" + rrfID + "]] and dense retrieval [[cite:arxiv:2004.04906]]; both [[cite:" + rrfID + ",arxiv:2004.04906]]."
	tests := []struct {
		style, format string
		wantText      string
		wantEntry     string
	}{
		{"ieee", "text", "Fusion [1] and dense retrieval [2]; both [1], [2].", "[1] G. V. Cormack, C. L. A. Clarke, and S. Büttcher,"},
		{"apa", "text", "Fusion (Cormack et al., 2009)", "Cormack, G. V., Clarke, C. L. A., & Büttcher, S. (2009)."},
		{"vancouver", "md", "Fusion <!--cite:" + rrfID + "-->", "1. Cormack GV, Clarke CLA, Büttcher S."},
	}
	for _, tc := range tests {
		t.Run(tc.style, func(t *testing.T) {
			body, err := json.Marshal(server.CiteRequest{Draft: draft, Style: tc.style, Format: tc.format})
			require.NoError(t, err)
			r := do(t, ts, "POST", "/v1/cite", string(body))
			require.Equal(t, http.StatusOK, r.status, string(r.body))
			var res server.CiteResponse
			require.NoError(t, json.Unmarshal(r.body, &res))
			assert.Contains(t, res.Text, tc.wantText)
			require.NotNil(t, res.Bibliography)
			assert.Equal(t, tc.style, res.Bibliography.Style)
			assert.Equal(t, []string{rrfID, "arxiv:2004.04906"}, res.Cited)
			require.Len(t, res.Bibliography.Entries, 2)
			assert.Contains(t, strings.Join(res.Bibliography.Entries, "\n"), tc.wantEntry)
		})
	}

	// A note style: footnote marks in the text, the notes in "notes".
	t.Run("notes", func(t *testing.T) {
		if _, err := csl.DefaultResolver(os.Getenv).Style("chicago-note-bibliography"); err != nil {
			t.Skipf("Debian's CSL styles are not installed (scripts/install-test-deps.sh): %v", err)
		}
		body, err := json.Marshal(server.CiteRequest{Draft: draft, Style: "chicago-note-bibliography", Format: "text"})
		require.NoError(t, err)
		r := do(t, ts, "POST", "/v1/cite", string(body))
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		var res server.CiteResponse
		require.NoError(t, json.Unmarshal(r.body, &res))
		assert.True(t, strings.HasPrefix(res.Text, "Fusion¹ and dense retrieval;² both.³\n\nNotes\n\n1. Cormack, Clarke, and Büttcher,"), res.Text)
		require.Len(t, res.Notes, 3)
		assert.True(t, strings.HasPrefix(res.Notes[0], "Cormack, Clarke, and Büttcher, “Reciprocal Rank Fusion"), res.Notes[0])
	})

	// Lenient: unknown IDs stay, listed.
	r = do(t, ts, "POST", "/v1/cite", `{"draft": "x [[cite:nope]]", "lenient": true, "format": "text"}`)
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	var res server.CiteResponse
	require.NoError(t, json.Unmarshal(r.body, &res))
	assert.Equal(t, []server.UnknownID{{ID: "nope", Line: 1, Col: 10}}, res.Unknown)
	assert.Nil(t, res.Bibliography)
}

// TestConcurrentRequests runs many searches, citations and lookups at
// once over one engine (with -race, it checks the engine and server share
// nothing unsafely); every answer must equal the one-at-a-time answer.
func TestConcurrentRequests(t *testing.T) {
	eng := sampledb.Open(t)
	ts := newTestServer(t, eng, server.Options{})
	queries := []string{
		"reciprocal rank fusion [CITATION]",
		"dense passage retrieval for open-domain question answering [12]",
		"BERT pre-training of deep bidirectional transformers",
		"passage re-ranking with BERT",
	}
	want := map[string]string{}
	for _, q := range queries {
		r := do(t, ts, "POST", "/v1/search", fmt.Sprintf(`{"query": %q, "k": 5}`, q))
		require.Equal(t, http.StatusOK, r.status)
		want[q] = string(r.body)
	}
	const workers, each = 32, 8
	var wg sync.WaitGroup
	errs := make(chan string, workers*each)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				q := queries[(w+i)%len(queries)]
				var r response
				var err error
				switch i % 4 {
				case 3:
					r, err = try(t.Context(), ts, "POST", "/v1/cite", `{"draft": "x [[cite:`+rrfID+`]]", "style": "mla"}`)
				case 2:
					r, err = try(t.Context(), ts, "GET", "/v1/papers/"+rrfID, "")
				default:
					r, err = try(t.Context(), ts, "POST", "/v1/search", fmt.Sprintf(`{"query": %q, "k": 5}`, q))
					if err == nil && r.status == http.StatusOK && string(r.body) != want[q] {
						errs <- "different answer for " + q
					}
				}
				switch {
				case err != nil:
					errs <- err.Error()
				case r.status != http.StatusOK:
					errs <- fmt.Sprintf("status %d: %s", r.status, r.body)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func TestDeadline(t *testing.T) {
	eng := sampledb.Open(t)
	ts := newTestServer(t, eng, server.Options{RequestTimeout: time.Nanosecond})
	r := do(t, ts, "POST", "/v1/search", `{"query": "reciprocal rank fusion"}`)
	assert.Equal(t, http.StatusServiceUnavailable, r.status, string(r.body))
	var e apiError
	require.NoError(t, json.Unmarshal(r.body, &e))
	assert.Contains(t, e.Error, "deadline of 1ns")
}

func TestRequestLog(t *testing.T) {
	eng := sampledb.Open(t)
	var buf syncBuffer
	ts := newTestServer(t, eng, server.Options{Logger: slog.New(slog.NewJSONHandler(&buf, nil))})

	req, err := http.NewRequestWithContext(t.Context(), "POST", ts.URL+"/v1/search", strings.NewReader(`{"query": "x", "k": 0.5}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(server.RequestIDHeader, "client-42")
	resp, err := ts.Client().Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, "client-42", resp.Header.Get(server.RequestIDHeader))

	r := do(t, ts, "GET", "/healthz", "")
	made := r.header.Get(server.RequestIDHeader)
	assert.Regexp(t, `^[0-9a-f]{16}$`, made)

	var lines []map[string]any
	sc := bufio.NewScanner(strings.NewReader(buf.String()))
	for sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m))
		if m["msg"] == "request" {
			lines = append(lines, m)
		}
	}
	require.Len(t, lines, 2)
	assert.Equal(t, "client-42", lines[0]["request_id"])
	assert.Equal(t, "WARN", lines[0]["level"])
	assert.Equal(t, float64(400), lines[0]["status"])
	assert.Equal(t, "/v1/search", lines[0]["path"])
	assert.Contains(t, lines[0], "latency")
	assert.Equal(t, made, lines[1]["request_id"])
	assert.Equal(t, float64(200), lines[1]["status"])
}

// TestGracefulShutdown starts a request, ends the server's context while
// the request is still being received, and checks that the request is
// answered in full and Serve returns nil.
func TestGracefulShutdown(t *testing.T) {
	eng := sampledb.Open(t)
	srv := server.New(eng, server.Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ctx, cancel := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()

	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer conn.Close()
	body := `{"query": "reciprocal rank fusion", "k": 1}`
	_, err = fmt.Fprintf(conn, "POST /v1/search HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", addr, len(body), body[:10])
	require.NoError(t, err)
	// The handler is running (reading the body) before shutdown starts.
	require.Eventually(t, func() bool { return srv.InFlight() == 1 }, 10*time.Second, time.Millisecond)

	cancel()
	// Shutdown closes the listener first: wait until new connections fail.
	require.Eventually(t, func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err != nil
	}, 10*time.Second, 5*time.Millisecond)
	select {
	case err := <-served:
		t.Fatalf("Serve returned before the request in flight finished: %v", err)
	default:
	}

	_, err = io.WriteString(conn, body[10:])
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	assert.Contains(t, string(b), rrfID)
	require.NoError(t, <-served)
}

func TestWebPage(t *testing.T) {
	eng := sampledb.Open(t)
	ts := newTestServer(t, eng, server.Options{})
	r := do(t, ts, "GET", "/", "")
	require.Equal(t, http.StatusOK, r.status)
	assert.Equal(t, "text/html; charset=utf-8", r.header.Get("Content-Type"))
	assert.Contains(t, r.header.Get("Content-Security-Policy"), "default-src 'self'")
	page := string(r.body)
	assert.Contains(t, page, `<textarea id="q"`)
	for _, asset := range []string{"/static/app.js", "/static/style.css"} {
		assert.Contains(t, page, `"`+asset+`"`)
		a := do(t, ts, "GET", asset, "")
		assert.Equal(t, http.StatusOK, a.status, asset)
		assert.NotContains(t, string(a.body), "@import")
	}
	// Nothing is loaded from another host.
	assert.NotRegexp(t, `(src|href)="(https?:)?//`, page)
	assert.Equal(t, http.StatusNotFound, do(t, ts, "GET", "/static/missing.js", "").status)
}

// syncBuffer is a bytes.Buffer safe for the concurrent writes of a logger.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
