package main

import (
	"context"
	"log/slog"

	"github.com/citefind/citefind"
	"github.com/citefind/citefind/cite/csl"
	"github.com/citefind/citefind/server"
	"github.com/citefind/citefind/server/mcp"
)

type serveCmd struct{ env }

func (c *serveCmd) Name() string { return "serve" }
func (c *serveCmd) Synopsis() string {
	return "serve the JSON API, the web page and MCP over HTTP"
}

const serveUsage = `Usage: citefind serve [--db DIR] [--addr 127.0.0.1:8080] [--request-timeout 30s] [--max-body BYTES]
                      [--no-mcp] [--log-format text|json]

Serves the database over HTTP until interrupted (SIGINT or SIGTERM), then
stops accepting connections and finishes the requests in flight:

  GET  /                 the web page (search, abstracts, citation styles)
  POST /v1/search        {"query", "k", "retrievers", "rerank", "pick"} → the object of query --json
  POST /v1/cite          {"draft", "style", "format"} → {"text", "bibliography", "warnings", "cited"}
  GET  /v1/papers/{id}   one paper by ID or alias
  GET  /healthz          {"status", "index_loaded", "papers"}
  /mcp                   the MCP tools over streamable HTTP (see citefind mcp)

A bad request gets a 4xx and {"error", "field"}. Each request is logged to
standard error (log/slog) with its request id, status and latency.
docs/serving.md has the whole reference.

Examples:
  citefind serve --db ~/papers-db
  curl -s localhost:8080/v1/search -d '{"query": "reciprocal rank fusion [CITATION]", "k": 3}'`

func (c *serveCmd) Run(ctx context.Context, args []string) error {
	fs := newFlagSet(c.env, "serve", serveUsage)
	db := dbFlag(fs)
	addr := fs.String("addr", server.DefaultAddr, "`HOST:PORT` to listen on")
	timeout := fs.Duration("request-timeout", server.DefaultRequestTimeout, "deadline of each API request")
	maxBody := fs.Int64("max-body", server.DefaultMaxBodyBytes, "largest request body, in `BYTES`")
	noMCP := fs.Bool("no-mcp", false, "do not serve the MCP tools at /mcp")
	logFormat := fs.String("log-format", "text", "log format on standard error: text or json")
	var lf llmFlags
	lf.register(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErr("serve: unexpected argument %q (serve takes flags only)", pos[0])
	}
	if *timeout <= 0 {
		return usageErr("serve: --request-timeout must be positive, got %s", *timeout)
	}
	if *maxBody <= 0 {
		return usageErr("serve: --max-body must be positive, got %d", *maxBody)
	}
	log, eng, err := openServing(ctx, c.env, *db, *logFormat, lf)
	if err != nil {
		return err
	}
	defer eng.Close()
	// One citeproc-js engine set for the API and the MCP tools: a style's
	// engine is built on its first /v1/cite and kept warm.
	styles := csl.New(csl.Options{})
	opts := server.Options{Logger: log, RequestTimeout: *timeout, MaxBodyBytes: *maxBody, Styles: styles}
	if !*noMCP {
		opts.MCP = mcp.New(eng, mcp.Options{Logger: log, Version: Version, ToolTimeout: *timeout, Styles: styles}).Handler()
	}
	log.Info("opened database", "db", *db, "papers", eng.Count())
	return server.New(eng, opts).ListenAndServe(ctx, *addr)
}

// openServing makes the logger and opens the engine of serve and mcp.
func openServing(ctx context.Context, e env, db, logFormat string, lf llmFlags) (*slog.Logger, *citefind.Engine, error) {
	log, err := newLogger(e, logFormat)
	if err != nil {
		return nil, nil, err
	}
	var eopts citefind.EngineOptions
	lf.apply(&eopts)
	eng, err := citefind.Open(ctx, db, eopts)
	if err != nil {
		return nil, nil, err
	}
	return log, eng, nil
}

// newLogger returns the slog logger of serve and mcp, on standard error.
func newLogger(e env, format string) (*slog.Logger, error) {
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(e.stderr, nil)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(e.stderr, nil)), nil
	}
	return nil, usageErr("--log-format must be text or json, got %q", format)
}
