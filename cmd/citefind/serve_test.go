package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lockedBuffer is a bytes.Buffer for concurrent writers (a logger).
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

func TestServeCommand(t *testing.T) {
	db := t.TempDir()
	_, _, err := cli(t, "", "index", "--db", db, "--quiet", samplePath(t))
	require.NoError(t, err)

	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var logs lockedBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--db", db, "--addr", addr, "--log-format", "json",
			"--allowed-hosts", "papers.lan", "--allow-origin", "https://notes.lan"},
			env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: &logs})
	}()
	base := "http://" + addr
	waitHealthy(t, base)

	resp, err := http.Post(base+"/v1/search", "application/json",
		strings.NewReader(`{"query": "reciprocal rank fusion [CITATION]", "k": 2}`))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var res struct {
		Hits []struct{ ID string } `json:"hits"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&res))
	resp.Body.Close()
	require.Len(t, res.Hits, 2)
	assert.Equal(t, "10.1145/1571941.1572114", res.Hits[0].ID)

	// MCP is at /mcp.
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).Connect(t.Context(),
		&sdk.StreamableClientTransport{Endpoint: base + "/mcp", MaxRetries: -1}, nil)
	require.NoError(t, err)
	tools, err := cs.ListTools(t.Context(), nil)
	require.NoError(t, err)
	assert.Len(t, tools.Tools, 4)

	// Another site's page, or another Host, is refused; the names given
	// to --allowed-hosts and --allow-origin are let in.
	for _, tc := range []struct {
		host, origin string
		status       int
	}{
		{"attacker.example", "", http.StatusForbidden},
		{"papers.lan", "", http.StatusOK},
		{"", "http://evil.example", http.StatusForbidden},
		{"", "https://notes.lan", http.StatusOK},
	} {
		req, err := http.NewRequestWithContext(t.Context(), "POST", base+"/v1/search", strings.NewReader(`{"query": "rank fusion"}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		if tc.host != "" {
			req.Host = tc.host
		}
		if tc.origin != "" {
			req.Header.Set("Origin", tc.origin)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, tc.status, resp.StatusCode, "%+v", tc)
	}
	// MCP over HTTP under an allowed name.
	req, err := http.NewRequestWithContext(t.Context(), "POST", base+"/mcp", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	require.NoError(t, err)
	req.Host = "papers.lan"
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	cancel() // SIGINT / SIGTERM in main
	require.NoError(t, <-done)
	cs.Close()
	assert.Contains(t, logs.String(), `"msg":"request"`)
	assert.Contains(t, logs.String(), `"path":"/v1/search"`)
	assert.Contains(t, logs.String(), `"msg":"stopped"`)
}

func TestServeAndMCPFlags(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"serve", "extra"}, `unexpected argument "extra"`},
		{[]string{"serve", "--log-format", "xml"}, "--log-format must be text or json"},
		{[]string{"serve", "--request-timeout", "0s"}, "--request-timeout must be positive"},
		{[]string{"serve", "--max-body", "0"}, "--max-body must be positive"},
		{[]string{"serve", "--body-timeout", "0s"}, "--body-timeout must be positive"},
		{[]string{"serve", "--mcp-sessions", "0"}, "--mcp-sessions must be positive"},
		{[]string{"serve", "--allowed-hosts", "http://papers.lan/"}, `--allowed-hosts: "http://papers.lan/" is not a host name`},
		{[]string{"serve", "--allow-origin", "notes.lan"}, `--allow-origin: "notes.lan" is not an origin`},
		{[]string{"serve", "--allow-origin", "https://notes.lan/page"}, "want http(s)://HOST[:PORT]"},
		{[]string{"mcp", "extra"}, `unexpected argument "extra"`},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, _, err := cli(t, "", append(tc.args, "--db", t.TempDir())...)
			require.Error(t, err)
			var xe *exitError
			require.True(t, errors.As(err, &xe))
			assert.Equal(t, 2, xe.code)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	_, _, err := cli(t, "", "serve", "--db", t.TempDir(), "--addr", freeAddr(t))
	assert.ErrorContains(t, err, "no citefind database")
}

func TestMCPCommand(t *testing.T) {
	db := t.TempDir()
	_, _, err := cli(t, "", "index", "--db", db, "--quiet", samplePath(t))
	require.NoError(t, err)

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var logs lockedBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(t.Context(), []string{"mcp", "--db", db}, env{stdin: inR, stdout: outW, stderr: &logs})
		outW.Close()
	}()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).Connect(t.Context(),
		&sdk.IOTransport{Reader: outR, Writer: inW}, nil)
	require.NoError(t, err)
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "search_citations",
		Arguments: map[string]any{"text": "dense passage retrieval [12]", "k": 1}})
	require.NoError(t, err)
	require.False(t, res.IsError)
	b, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"id":"arxiv:2004.04906"`)

	require.NoError(t, cs.Close())
	inW.Close() // the client closes standard input
	require.NoError(t, <-done)
	assert.Contains(t, logs.String(), "serving MCP on stdio")
}

// TestServeFollowsIndex: a paper indexed by another process after serve
// started is found within a few seconds, and /healthz reports the new
// store generation; a removed paper goes the same way.
func TestServeFollowsIndex(t *testing.T) {
	db := t.TempDir()
	_, _, err := cli(t, "", "index", "--db", db, "--quiet", samplePath(t))
	require.NoError(t, err)
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() {
		_ = run(ctx, []string{"serve", "--db", db, "--addr", addr, "--no-mcp"},
			env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard})
	}()
	base := "http://" + addr
	health := func() (gen int64, papers int) {
		resp, err := http.Get(base + "/healthz")
		if err != nil {
			return -1, -1
		}
		defer resp.Body.Close()
		var h struct {
			Generation int64 `json:"generation"`
			Papers     int   `json:"papers"`
		}
		if json.NewDecoder(resp.Body).Decode(&h) != nil {
			return -1, -1
		}
		return h.Generation, h.Papers
	}
	var gen0 int64
	require.Eventually(t, func() bool { gen0, _ = health(); return gen0 > 0 }, 30*time.Second, 10*time.Millisecond)
	search := func(q string) []string {
		resp, err := http.Post(base+"/v1/search", "application/json", strings.NewReader(`{"query": "`+q+`", "k": 3}`))
		require.NoError(t, err)
		defer resp.Body.Close()
		var res struct {
			Hits []struct {
				Title string `json:"title"`
			} `json:"hits"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&res))
		var titles []string
		for _, h := range res.Hits {
			titles = append(titles, h.Title)
		}
		return titles
	}
	const title = "Zebrafish Striping Patterns Explain Retrieval Fusion"
	const stored = "Zebrafish striping patterns explain retrieval fusion" // sentence case, as CSL data wants it
	assert.NotContains(t, search("zebrafish striping"), stored)

	extra := filepath.Join(t.TempDir(), "new.bib")
	require.NoError(t, os.WriteFile(extra, []byte("@article{zebra2031, title = {"+title+"}, author = {Quagga, Zed}, year = {2031}}\n"), 0o644))
	_, _, err = cli(t, "", "index", "--db", db, "--quiet", extra)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		g, n := health()
		return g > gen0 && n == 31
	}, 15*time.Second, 50*time.Millisecond, "serve picks up the new generation")
	assert.Contains(t, search("zebrafish striping"), stored)

	_, _, err = cli(t, "", "remove", "--db", db, "--quiet", "zebra2031")
	require.NoError(t, err)
	require.Eventually(t, func() bool { _, n := health(); return n == 30 }, 15*time.Second, 50*time.Millisecond)
	assert.NotContains(t, search("zebrafish striping"), stored)
}

// TestMCPCommandPiped: requests piped to citefind mcp at once, followed by
// the end of input, are all answered (issue 13: none were).
func TestMCPCommandPiped(t *testing.T) {
	db := t.TempDir()
	_, _, err := cli(t, "", "index", "--db", db, "--quiet", samplePath(t))
	require.NoError(t, err)
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search_citations","arguments":{"text":"reciprocal rank fusion","k":1}}}`,
	}, "\n") + "\n"
	out, _, err := cli(t, in, "mcp", "--db", db)
	require.NoError(t, err)
	var ids []float64
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var m struct {
			ID     float64         `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &m), line)
		require.NotEmpty(t, m.Result, line)
		ids = append(ids, m.ID)
	}
	assert.ElementsMatch(t, []float64{1, 2, 3}, ids)
	assert.Contains(t, out, "10.1145/1571941.1572114")
}

// waitHealthy waits (up to 2 minutes) until the server at base answers
// /healthz with 200.
func waitHealthy(t *testing.T, base string) {
	t.Helper()
	require.Eventually(t, func() bool {
		resp, err := http.Get(base + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 2*time.Minute, 20*time.Millisecond, "the server at %s answers /healthz", base)
}
