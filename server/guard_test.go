package server_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/cite"
	"github.com/citefind/citefind/server"
	"github.com/citefind/citefind/server/internal/sampledb"
	"github.com/citefind/citefind/server/mcp"
)

const mcpInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// TestHostPolicy: DNS rebinding. A page of attacker.example whose name
// resolves to 127.0.0.1 reaches the server with Host: attacker.example;
// only the server's own names are answered.
func TestHostPolicy(t *testing.T) {
	eng := sampledb.Open(t)
	tools := mcp.New(eng, mcp.Options{HostChecked: true})
	ts := newTestServer(t, eng, server.Options{MCP: tools.Handler(), AllowedHosts: []string{"Papers.LAN"}})
	port := ts.URL[strings.LastIndexByte(ts.URL, ':')+1:]
	requests := []struct{ method, path, body string }{
		{"GET", "/", ""},
		{"GET", "/static/app.js", ""},
		{"GET", "/healthz", ""},
		{"POST", "/v1/search", `{"query": "rank fusion"}`},
		{"POST", "/v1/cite", `{"draft": "[[cite:cormack2009rrf]]"}`},
		{"GET", "/v1/papers/cormack2009rrf", ""},
		{"POST", "/mcp", mcpInit},
	}
	tests := []struct {
		host string
		ok   bool
	}{
		{"attacker.example:" + port, false},
		{"attacker.example", false},
		{"localhost.attacker.example:" + port, false},
		{"10.1.2.3:" + port, false}, // an address the connection did not come in on
		{"127.0.0.1:" + port, true},
		{"localhost:" + port, true},
		{"LOCALHOST.:" + port, true},
		{"127.0.0.2:" + port, true},
		{"[::1]:" + port, true},
		{"papers.lan:" + port, true}, // AllowedHosts
	}
	for _, tc := range tests {
		for _, rq := range requests {
			t.Run(tc.host+" "+rq.method+" "+rq.path, func(t *testing.T) {
				r := doH(t, ts, rq.method, rq.path, rq.body, map[string]string{"Host": tc.host, "Accept": "application/json, text/event-stream"})
				if tc.ok {
					assert.Equal(t, http.StatusOK, r.status, string(r.body))
					return
				}
				assert.Equal(t, http.StatusForbidden, r.status)
				var e apiError
				require.NoError(t, json.Unmarshal(r.body, &e), string(r.body))
				assert.Equal(t, "host", e.Field)
				assert.Contains(t, e.Error, "--allowed-hosts "+strings.Split(tc.host, ":")[0])
			})
		}
	}

	any := newTestServer(t, eng, server.Options{AllowedHosts: []string{server.Any}})
	r := doH(t, any, "GET", "/healthz", "", map[string]string{"Host": "attacker.example"})
	assert.Equal(t, http.StatusOK, r.status)
}

// TestOriginPolicy: another site's page may not use the server, whatever
// it sends, unless AllowOrigins lists it; the server's own page may.
func TestOriginPolicy(t *testing.T) {
	eng := sampledb.Open(t)
	tools := mcp.New(eng, mcp.Options{})
	ts := newTestServer(t, eng, server.Options{MCP: tools.Handler(), AllowOrigins: []string{"https://Notes.example:443"}})
	search := `{"query": "rank fusion"}`
	tests := []struct {
		name, method, path, body string
		header                   map[string]string
		status                   int
		acao                     string // Access-Control-Allow-Origin
	}{
		{"simple POST, text/plain", "POST", "/v1/search", search, map[string]string{"Origin": "http://evil.example", "Content-Type": "text/plain"}, 403, ""},
		{"POST JSON", "POST", "/v1/search", search, map[string]string{"Origin": "http://evil.example"}, 403, ""},
		{"cite", "POST", "/v1/cite", `{"draft": "x"}`, map[string]string{"Origin": "http://evil.example"}, 403, ""},
		{"GET paper", "GET", "/v1/papers/cormack2009rrf", "", map[string]string{"Origin": "http://evil.example"}, 403, ""},
		{"the page", "GET", "/", "", map[string]string{"Origin": "http://evil.example"}, 403, ""},
		{"MCP", "POST", "/mcp", mcpInit, map[string]string{"Origin": "http://evil.example", "Accept": "application/json, text/event-stream"}, 403, ""},
		{"sandboxed page (null)", "POST", "/v1/search", search, map[string]string{"Origin": "null"}, 403, ""},
		{"another port of localhost", "POST", "/v1/search", search, map[string]string{"Origin": "http://127.0.0.1:1"}, 403, ""},
		{"preflight of another site", "OPTIONS", "/v1/search", "", map[string]string{"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"}, 403, ""},
		{"own page", "POST", "/v1/search", search, map[string]string{"Origin": ts.URL}, 200, ""},
		{"no Origin (curl, scripts)", "POST", "/v1/search", search, nil, 200, ""},
		{"allowed origin", "POST", "/v1/search", search, map[string]string{"Origin": "https://notes.example"}, 200, "https://notes.example"},
		{"allowed origin's preflight", "OPTIONS", "/v1/search", "", map[string]string{"Origin": "https://notes.example", "Access-Control-Request-Method": "POST",
			"Access-Control-Request-Headers": "content-type"}, 204, "https://notes.example"},
		{"allowed origin over http", "POST", "/v1/search", search, map[string]string{"Origin": "http://notes.example"}, 403, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := doH(t, ts, tc.method, tc.path, tc.body, tc.header)
			require.Equal(t, tc.status, r.status, string(r.body))
			assert.Equal(t, tc.acao, r.header.Get("Access-Control-Allow-Origin"))
			switch tc.status {
			case http.StatusForbidden:
				var e apiError
				require.NoError(t, json.Unmarshal(r.body, &e), string(r.body))
				assert.Equal(t, "origin", e.Field)
				assert.Contains(t, e.Error, "--allow-origin")
			case http.StatusNoContent:
				assert.Contains(t, r.header.Get("Access-Control-Allow-Methods"), "POST")
				assert.Contains(t, r.header.Get("Access-Control-Allow-Headers"), "Content-Type")
			}
		})
	}

	any := newTestServer(t, eng, server.Options{AllowOrigins: []string{server.Any}})
	r := doH(t, any, "POST", "/v1/search", search, map[string]string{"Origin": "http://evil.example"})
	assert.Equal(t, http.StatusOK, r.status)
	assert.Equal(t, "http://evil.example", r.header.Get("Access-Control-Allow-Origin"))
}

func TestNormalizeOrigin(t *testing.T) {
	for in, want := range map[string]string{
		"http://Example.org":       "http://example.org",
		"https://example.org:443/": "https://example.org",
		"http://example.org:8080":  "http://example.org:8080",
		"http://[::1]:80":          "http://[::1]",
		"*":                        "*",
	} {
		got, err := server.NormalizeOrigin(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{"example.org", "ftp://example.org", "http://example.org/path", "null", "http://u@example.org", ""} {
		_, err := server.NormalizeOrigin(bad)
		assert.Error(t, err, bad)
	}
	for _, bad := range []string{"", "http://x/", "a b"} {
		assert.Error(t, server.CheckHost(bad), bad)
	}
	assert.NoError(t, server.CheckHost("papers.lan"))
}

// rawRequest opens a connection to ts and writes head.
func rawRequest(t *testing.T, addr, head string) net.Conn {
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	_, err = io.WriteString(conn, head)
	require.NoError(t, err)
	return conn
}

// TestBodyTimeout: a body sent slowly (part of it, then nothing) gets a
// 408 once BodyTimeout passes, on the API and on /mcp; the connection
// does not stay open.
func TestBodyTimeout(t *testing.T) {
	eng := sampledb.Open(t)
	tools := mcp.New(eng, mcp.Options{})
	ts := newTestServer(t, eng, server.Options{MCP: tools.Handler(), BodyTimeout: 200 * time.Millisecond})
	addr := strings.TrimPrefix(ts.URL, "http://")
	for _, path := range []string{"/v1/search", "/v1/cite", "/mcp"} {
		t.Run(path, func(t *testing.T) {
			conn := rawRequest(t, addr, fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"+
				"Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{\"query\"", path, addr))
			// A safety net, not a measurement: without the deadline the
			// server waits for the rest of the body for ever.
			require.NoError(t, conn.SetReadDeadline(time.Now().Add(30*time.Second)))
			br := bufio.NewReader(conn)
			resp, err := http.ReadResponse(br, nil)
			require.NoError(t, err)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			assert.Equal(t, http.StatusRequestTimeout, resp.StatusCode, string(body))
			assert.Contains(t, string(body), "the body did not arrive within 200ms")
			// The server closes the connection.
			_, err = br.ReadByte()
			assert.Error(t, err)
		})
	}

	// An answer given before the body has all arrived (here: it is not
	// JSON) goes out at once, and the connection is closed: the server
	// does not wait for the rest of the body first.
	patient := newTestServer(t, eng, server.Options{BodyTimeout: time.Hour})
	paddr := strings.TrimPrefix(patient.URL, "http://")
	conn := rawRequest(t, paddr, fmt.Sprintf("POST /v1/search HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\nxyz", paddr))
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(30*time.Second))) // a safety net; the body deadline is an hour
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.True(t, resp.Close, "Connection: close")

	// A body that arrives in time lifts the deadline: the next request on
	// the same connection, sent after BodyTimeout, is answered.
	body := `{"query": "rank fusion", "k": 1}`
	conn = rawRequest(t, addr, "")
	br := bufio.NewReader(conn)
	for range 2 {
		_, err := fmt.Fprintf(conn, "POST /v1/search HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", addr, len(body), body)
		require.NoError(t, err)
		resp, err := http.ReadResponse(br, nil)
		require.NoError(t, err)
		_, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		time.Sleep(400 * time.Millisecond)
	}
}

// TestFraming: the page may not be framed by another site.
func TestFraming(t *testing.T) {
	eng := sampledb.Open(t)
	ts := newTestServer(t, eng, server.Options{})
	for _, path := range []string{"/", "/static/app.js"} {
		r := do(t, ts, "GET", path, "")
		require.Equal(t, http.StatusOK, r.status)
		assert.Contains(t, r.header.Get("Content-Security-Policy"), "frame-ancestors 'none'")
		assert.Equal(t, "DENY", r.header.Get("X-Frame-Options"))
	}
}

// TestCiteLimits: a draft over a limit is a 413 naming it; within the
// limits it resolves.
func TestCiteLimits(t *testing.T) {
	eng := sampledb.Open(t)
	ts := newTestServer(t, eng, server.Options{})
	draft := func(n int, sep string) string {
		b, err := json.Marshal(server.CiteRequest{Draft: strings.TrimSuffix(strings.Repeat("[[cite:cormack2009rrf]]"+sep, n), sep)})
		require.NoError(t, err)
		return string(b)
	}
	r := do(t, ts, "POST", "/v1/cite", draft(server.DefaultMaxCitations, " "))
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	r = do(t, ts, "POST", "/v1/cite", draft(server.DefaultMaxCitations+1, "\n"))
	require.Equal(t, http.StatusRequestEntityTooLarge, r.status)
	var e apiError
	require.NoError(t, json.Unmarshal(r.body, &e))
	assert.Equal(t, "draft", e.Field)
	assert.Contains(t, e.Error, "more than 10000 cited IDs in one document, the limit of one request")
	assert.Equal(t, map[string]any{"limit": 10000.0, "what": "cited IDs in one document", "line": 10001.0, "col": 8.0}, e.Details)

	quotes := strings.Repeat(`[[cite:cormack2009rrf "rank fusion"]] `, server.DefaultMaxQuotes+1)
	body, err := json.Marshal(server.CiteRequest{Draft: quotes})
	require.NoError(t, err)
	r = do(t, ts, "POST", "/v1/cite", string(body))
	require.Equal(t, http.StatusRequestEntityTooLarge, r.status)
	assert.Contains(t, string(r.body), "more than 100 quotes in one document")

	// Options.CiteLimits: a negative limit is none.
	free := newTestServer(t, eng, server.Options{CiteLimits: cite.Limits{MaxCitations: -1, MaxQuotes: -1, MaxQuoteChars: -1}})
	r = do(t, free, "POST", "/v1/cite", draft(server.DefaultMaxCitations+1, " "))
	require.Equal(t, http.StatusOK, r.status)
}
