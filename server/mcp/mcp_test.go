package mcp_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/engine"
	"github.com/citefind/citefind/server"
	"github.com/citefind/citefind/server/internal/sampledb"
	"github.com/citefind/citefind/server/mcp"
)

const rrfID = "10.1145/1571941.1572114"

// connectFunc opens a new MCP client session to the tools under test.
type connectFunc func(t *testing.T) *sdk.ClientSession

func newClient() *sdk.Client {
	return sdk.NewClient(&sdk.Implementation{Name: "citefind-test", Version: "1"}, nil)
}

// overHTTP serves the tools at /mcp of the citefind HTTP server.
func overHTTP(t *testing.T, eng *engine.Engine, tools *mcp.Tools) connectFunc {
	ts := httptest.NewServer(server.New(eng, server.Options{MCP: tools.Handler()}).Handler())
	t.Cleanup(ts.Close)
	return func(t *testing.T) *sdk.ClientSession {
		cs, err := newClient().Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: ts.URL + "/mcp", MaxRetries: -1}, nil)
		require.NoError(t, err)
		t.Cleanup(func() { cs.Close() })
		return cs
	}
}

// patient gives tool calls a deadline long enough for a cold citeproc-js
// engine under the race detector beside other packages' tests: there a
// first resolve_citations took over the default 30 s (TestToolLimits,
// 2026-11-29). The tests of the deadline set their own.
func patient(o mcp.Options) mcp.Options {
	if o.ToolTimeout == 0 {
		o.ToolTimeout = 10 * time.Minute
	}
	return o
}

// overStdio serves each session over a pair of pipes, as `citefind mcp`
// does over standard input and output.
func overStdio(t *testing.T, _ *engine.Engine, tools *mcp.Tools) connectFunc {
	return func(t *testing.T) *sdk.ClientSession {
		inR, inW := io.Pipe()   // client → server
		outR, outW := io.Pipe() // server → client
		done := make(chan error, 1)
		go func() {
			done <- tools.ServeIO(context.WithoutCancel(t.Context()), inR, outW)
			outW.Close()
		}()
		cs, err := newClient().Connect(t.Context(), &sdk.IOTransport{Reader: outR, Writer: inW}, nil)
		require.NoError(t, err)
		t.Cleanup(func() {
			cs.Close()
			inW.Close()
			assert.NoError(t, <-done)
		})
		return cs
	}
}

func TestTools(t *testing.T) {
	eng := sampledb.Open(t)
	for name, transport := range map[string]func(*testing.T, *engine.Engine, *mcp.Tools) connectFunc{"stdio": overStdio, "streamable-http": overHTTP} {
		t.Run(name, func(t *testing.T) {
			tools := mcp.New(eng, patient(mcp.Options{Version: "test"}))
			connect := transport(t, eng, tools)
			testTools(t, connect)
		})
	}
}

func call(t *testing.T, cs *sdk.ClientSession, tool string, args map[string]any) (*sdk.CallToolResult, string) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: tool, Arguments: args})
	require.NoError(t, err)
	var text []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			text = append(text, tc.Text)
		}
	}
	return res, strings.Join(text, "\n")
}

// structured decodes a tool's structured output into v.
func structured(t *testing.T, res *sdk.CallToolResult, v any) {
	t.Helper()
	require.False(t, res.IsError)
	b, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, v))
}

func testTools(t *testing.T, connect connectFunc) {
	cs := connect(t)

	list, err := cs.ListTools(t.Context(), nil)
	require.NoError(t, err)
	byName := map[string]*sdk.Tool{}
	for _, tool := range list.Tools {
		byName[tool.Name] = tool
	}
	require.Len(t, byName, 4)
	for name, required := range map[string][]string{
		"search_citations":  {"text"},
		"get_paper":         {"id"},
		"add_citation":      {"id", "reason"},
		"resolve_citations": {"draft"},
	} {
		tool := byName[name]
		require.NotNil(t, tool, name)
		assert.Greater(t, len(tool.Description), 80, "%s has a description written for a model", name)
		schema, err := json.Marshal(tool.InputSchema)
		require.NoError(t, err)
		var s struct {
			Type       string                     `json:"type"`
			Required   []string                   `json:"required"`
			Properties map[string]json.RawMessage `json:"properties"`
		}
		require.NoError(t, json.Unmarshal(schema, &s))
		assert.Equal(t, "object", s.Type)
		assert.ElementsMatch(t, required, s.Required, name)
		for prop, ps := range s.Properties {
			assert.Contains(t, string(ps), `"description"`, "%s.%s is described", name, prop)
		}
		assert.NotNil(t, tool.OutputSchema, name)
	}

	// Citing before searching is refused, saying why.
	res, text := call(t, cs, "add_citation", map[string]any{"id": rrfID, "reason": "it introduced RRF"})
	assert.True(t, res.IsError)
	assert.Contains(t, text, "no search_citations call in this session returned it")
	res, text = call(t, cs, "add_citation", map[string]any{"id": "10.9999/invented", "reason": "x"})
	assert.True(t, res.IsError)
	assert.Contains(t, text, `no paper with ID or alias "10.9999/invented"`)

	// Search.
	res, text = call(t, cs, "search_citations", map[string]any{"text": "Scores are fused with reciprocal rank fusion [CITATION].", "k": 3})
	var found mcp.SearchOutput
	structured(t, res, &found)
	assert.Contains(t, text, rrfID, "the text content carries the result too")
	assert.Equal(t, "Scores are fused with reciprocal rank fusion.", found.Query)
	require.Len(t, found.Candidates, 3)
	top := found.Candidates[0]
	assert.Equal(t, rrfID, top.ID)
	assert.Equal(t, 2009, top.Year)
	assert.Equal(t, []string{"Gordon V. Cormack", "Charles L. A. Clarke", "Stefan Büttcher"}, top.Authors)
	assert.Equal(t, 1, top.Rank)
	assert.Equal(t, 1, top.Sources["bm25"].Rank)
	assert.Positive(t, top.Score)

	// Bad input is a tool error naming the field.
	res, text = call(t, cs, "search_citations", map[string]any{"text": "fusion", "k": 500})
	assert.True(t, res.IsError)
	assert.Contains(t, text, "k must be between 1 and 50")
	res, text = call(t, cs, "search_citations", map[string]any{"text": "   "})
	assert.True(t, res.IsError)
	assert.Contains(t, text, "text is required")
	_, err = cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "search_citations", Arguments: map[string]any{"k": 3}})
	if err == nil {
		res, text = call(t, cs, "search_citations", map[string]any{"k": 3})
		assert.True(t, res.IsError)
		assert.Contains(t, text, "text")
	} else {
		assert.Contains(t, err.Error(), "text")
	}

	// get_paper, by ID and by BibTeX key.
	for _, id := range []string{rrfID, "cormack2009rrf"} {
		res, _ = call(t, cs, "get_paper", map[string]any{"id": id})
		var p server.Paper
		structured(t, res, &p)
		assert.Equal(t, rrfID, p.ID)
		assert.Contains(t, p.Abstract, "reciprocal of its rank")
	}
	res, text = call(t, cs, "get_paper", map[string]any{"id": "nope"})
	assert.True(t, res.IsError)
	assert.Contains(t, text, "get_paper: id: no paper")

	// Cite a returned candidate, by its key: the placeholder has the ID.
	res, _ = call(t, cs, "add_citation", map[string]any{"id": "cormack2009rrf", "reason": "it introduced reciprocal rank fusion"})
	var added mcp.AddOutput
	structured(t, res, &added)
	assert.Equal(t, "[[cite:"+rrfID+"]]", added.Placeholder)
	assert.Equal(t, "Scores are fused with reciprocal rank fusion [CITATION].", added.Query)
	res, _ = call(t, cs, "add_citation", map[string]any{"id": rrfID, "reason": "definition", "quote": "reciprocal of its rank"})
	structured(t, res, &added)
	assert.Equal(t, `[[cite:`+rrfID+` "reciprocal of its rank"]]`, added.Placeholder)
	assert.Contains(t, added.QuoteMatch, "1.00")
	res, text = call(t, cs, "add_citation", map[string]any{"id": rrfID, "reason": " "})
	assert.True(t, res.IsError)
	assert.Contains(t, text, "reason")
	res, text = call(t, cs, "add_citation", map[string]any{"id": rrfID, "reason": "x", "quote": `say "hi"`})
	assert.True(t, res.IsError)
	assert.Contains(t, text, "quote")

	// Resolve: the papers of this session's searches raise no warning,
	// others do.
	draft := "Fusion " + added.Placeholder + " beats single rankers; BERT [[cite:devlin2019bert]] is a different matter."
	res, _ = call(t, cs, "resolve_citations", map[string]any{"draft": draft, "style": "ieee", "format": "text"})
	var resolved server.CiteResponse
	structured(t, res, &resolved)
	assert.True(t, strings.HasPrefix(resolved.Text, "Fusion [1] beats single rankers; BERT [2] is a different matter."), resolved.Text)
	require.NotNil(t, resolved.Bibliography)
	assert.Len(t, resolved.Bibliography.Entries, 2)
	require.Len(t, resolved.Warnings, 1)
	assert.Equal(t, "not-retrieved", resolved.Warnings[0].Kind)
	assert.Equal(t, "arxiv:1810.04805", resolved.Warnings[0].ID)

	res, text = call(t, cs, "resolve_citations", map[string]any{"draft": "x [[cite:made-up-2024]]"})
	assert.True(t, res.IsError)
	assert.Contains(t, text, "made-up-2024")
	res, text = call(t, cs, "resolve_citations", map[string]any{"draft": "x", "style": "turabian"})
	assert.True(t, res.IsError)
	assert.Contains(t, text, "resolve_citations: style:")

	// Another session has searched nothing: the same citation is refused.
	other := connect(t)
	res, text = call(t, other, "add_citation", map[string]any{"id": rrfID, "reason": "it introduced RRF"})
	assert.True(t, res.IsError)
	assert.Contains(t, text, "no search_citations call in this session returned it")
	// And the first session still may.
	res, _ = call(t, cs, "add_citation", map[string]any{"id": rrfID, "reason": "it introduced RRF"})
	assert.False(t, res.IsError)
}

func TestSessionStateIsDropped(t *testing.T) {
	eng := sampledb.Open(t)
	tools := mcp.New(eng, patient(mcp.Options{}))
	cs := overStdio(t, eng, tools)(t)
	_, _ = call(t, cs, "search_citations", map[string]any{"text": "rank fusion"})
	assert.Equal(t, 1, tools.Sessions())
	require.NoError(t, cs.Close())
	require.Eventually(t, func() bool { return tools.Sessions() == 0 }, 10*time.Second, time.Millisecond)
}

// TestShutdownWithOpenSession checks that an MCP client's open event
// stream does not hold up the HTTP server's graceful shutdown.
func TestShutdownWithOpenSession(t *testing.T) {
	eng := sampledb.Open(t)
	srv := server.New(eng, server.Options{MCP: mcp.New(eng, patient(mcp.Options{})).Handler()})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()

	cs, err := newClient().Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: "http://" + ln.Addr().String() + "/mcp", MaxRetries: -1}, nil)
	require.NoError(t, err)
	defer cs.Close()
	res, _ := call(t, cs, "search_citations", map[string]any{"text": "rank fusion"})
	require.False(t, res.IsError)

	cancel()
	require.NoError(t, <-served)
}
