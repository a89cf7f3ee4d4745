package mcp_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/cite"
	"github.com/citefind/citefind/server"
	"github.com/citefind/citefind/server/internal/sampledb"
	"github.com/citefind/citefind/server/mcp"
)

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// postInitialize opens a session with a bare initialize request and
// returns the status, the session id and the body.
func postInitialize(t *testing.T, url string) (int, string, string) {
	req, err := http.NewRequestWithContext(t.Context(), "POST", url, strings.NewReader(initialize))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), string(b)
}

// TestSessionCap: sessions that are never closed (15,000 initialize
// calls grew the server by 250 MB) stop at MaxSessions, and idle ones
// time out.
func TestSessionCap(t *testing.T) {
	eng := sampledb.Open(t)
	tools := mcp.New(eng, mcp.Options{MaxSessions: 3, SessionTimeout: 5 * time.Second})
	ts := httptest.NewServer(server.New(eng, server.Options{MCP: tools.Handler()}).Handler())
	t.Cleanup(ts.Close)
	url := ts.URL + "/mcp"
	ids := map[string]bool{}
	for range 3 {
		status, id, body := postInitialize(t, url)
		require.Equal(t, http.StatusOK, status, body)
		ids[id] = true
	}
	assert.Len(t, ids, 3)
	assert.Equal(t, 3, tools.OpenSessions())
	for range 5 {
		status, _, body := postInitialize(t, url)
		assert.Equal(t, http.StatusServiceUnavailable, status)
		assert.Contains(t, body, "too many MCP sessions: 3 are open, the limit")
	}
	assert.Equal(t, 3, tools.OpenSessions())

	// Idle sessions close; then new ones are welcome.
	require.Eventually(t, func() bool { return tools.OpenSessions() == 0 }, 30*time.Second, 10*time.Millisecond)
	status, _, body := postInitialize(t, url)
	assert.Equal(t, http.StatusOK, status, body)

	// A client that ends its session (DELETE) makes room at once.
	tools = mcp.New(eng, mcp.Options{MaxSessions: 1})
	ts2 := httptest.NewServer(server.New(eng, server.Options{MCP: tools.Handler()}).Handler())
	t.Cleanup(ts2.Close)
	cs, err := newClient().Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: ts2.URL + "/mcp", MaxRetries: -1}, nil)
	require.NoError(t, err)
	status, _, _ = postInitialize(t, ts2.URL+"/mcp")
	assert.Equal(t, http.StatusServiceUnavailable, status)
	require.NoError(t, cs.Close())
	require.Eventually(t, func() bool { return tools.OpenSessions() == 0 }, 10*time.Second, 10*time.Millisecond)
	status, _, _ = postInitialize(t, ts2.URL+"/mcp")
	assert.Equal(t, http.StatusOK, status)
}

// TestToolsShareTheAdmissionLimit: a tool call waits for a slot of the
// limiter the HTTP API uses; when none comes within its deadline it is a
// tool error saying the server is busy.
func TestToolsShareTheAdmissionLimit(t *testing.T) {
	eng := sampledb.Open(t)
	limiter := server.NewLimiter(1)
	tools := mcp.New(eng, mcp.Options{Limiter: limiter, ToolTimeout: 200 * time.Millisecond})
	cs := overStdio(t, eng, tools)(t)

	release, err := limiter.Acquire(t.Context()) // an API request at work
	require.NoError(t, err)
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"search_citations", map[string]any{"text": "rank fusion"}},
		{"get_paper", map[string]any{"id": rrfID}},
		{"resolve_citations", map[string]any{"draft": "[[cite:" + rrfID + "]]"}},
	} {
		res, text := call(t, cs, c.tool, c.args)
		assert.True(t, res.IsError, c.tool)
		assert.Contains(t, text, c.tool+": the server is busy")
	}
	release()
	// Tools of the same limiter with the default deadline: the free slot
	// serves them.
	patient := overStdio(t, eng, mcp.New(eng, mcp.Options{Limiter: limiter}))(t)
	res, _ := call(t, patient, "search_citations", map[string]any{"text": "rank fusion"})
	assert.False(t, res.IsError)
	assert.Zero(t, limiter.InUse(), "the call released its slot")

}

// TestToolLimits: resolve_citations and add_citation apply the draft
// limits of Options.CiteLimits.
func TestToolLimits(t *testing.T) {
	eng := sampledb.Open(t)
	tools := mcp.New(eng, mcp.Options{CiteLimits: cite.Limits{MaxCitations: 3, MaxQuoteChars: 20}})
	cs := overStdio(t, eng, tools)(t)
	res, text := call(t, cs, "resolve_citations", map[string]any{"draft": strings.Repeat("[[cite:"+rrfID+"]] ", 3)})
	assert.False(t, res.IsError, text)
	res, text = call(t, cs, "resolve_citations", map[string]any{"draft": strings.Repeat("[[cite:"+rrfID+"]] ", 4)})
	assert.True(t, res.IsError)
	assert.Contains(t, text, "more than 3 cited IDs in one document, the limit of one request (passed at line 1, column 107)")
	res, text = call(t, cs, "add_citation", map[string]any{"id": rrfID, "reason": "x", "quote": strings.Repeat("a", 21)})
	assert.True(t, res.IsError)
	assert.Contains(t, text, "add_citation: quote: more than 20 characters, the limit")

	// The defaults.
	defaults := mcp.New(eng, patient(mcp.Options{}))
	cs = overStdio(t, eng, defaults)(t)
	res, text = call(t, cs, "add_citation", map[string]any{"id": rrfID, "reason": "x", "quote": strings.Repeat("a", server.DefaultMaxQuoteChars+1)})
	assert.True(t, res.IsError)
	assert.Contains(t, text, "more than 500 characters")
}

// TestServeIODrain: requests piped at once, followed by the end of input,
// are all answered before ServeIO returns (the SDK alone answered none).
func TestServeIODrain(t *testing.T) {
	eng := sampledb.Open(t)
	tools := mcp.New(eng, patient(mcp.Options{}))
	in := strings.Join([]string{
		initialize,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":"three","method":"tools/call","params":{"name":"search_citations","arguments":{"text":"reciprocal rank fusion","k":2}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"get_paper","arguments":{"id":"cormack2009rrf"}}}`,
	}, "\n") // the last line without its newline
	var out bytes.Buffer
	require.NoError(t, tools.ServeIO(t.Context(), strings.NewReader(in), &out))
	answered := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m struct {
			ID     any             `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &m), line)
		require.NotEmpty(t, m.Result, line)
		answered[strings.Trim(string(must(json.Marshal(m.ID))), `"`)] = true
	}
	assert.Equal(t, map[string]bool{"1": true, "2": true, "three": true, "4": true}, answered)
	assert.Contains(t, out.String(), rrfID)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
