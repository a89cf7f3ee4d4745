package main

import (
	"context"
	"log/slog"
	"net"
	"time"

	"github.com/citefind/citefind/cite/csl"
	"github.com/citefind/citefind/engine"
	"github.com/citefind/citefind/server"
	"github.com/citefind/citefind/server/mcp"
)

type serveCmd struct{ env }

func (c *serveCmd) Name() string { return "serve" }
func (c *serveCmd) Synopsis() string {
	return "serve the JSON API, the web page and MCP over HTTP"
}

const serveUsage = `Usage: citefind serve [--db DIR] [--addr 127.0.0.1:8080] [--allowed-hosts NAME,...] [--allow-origin URL,...]
                      [--request-timeout 30s] [--body-timeout 10s] [--max-body BYTES] [--no-mcp]
                      [--mcp-sessions N] [--log-format text|json]

Serves the database over HTTP until interrupted (SIGINT or SIGTERM), then
stops accepting connections and finishes the requests in flight:

  GET  /                 the web page (search, abstracts, citation styles)
  POST /v1/search        {"query", "k", "retrievers", "rerank", "pick"} → the object of query --json
  POST /v1/cite          {"draft", "style", "format"} → {"text", "bibliography", "warnings", "cited"}
  GET  /v1/papers/{id}   one paper by ID or alias
  GET  /healthz          {"status", "index_loaded", "papers", "dense"}
  /mcp                   the MCP tools over streamable HTTP (see citefind mcp)

POST bodies are JSON sent as Content-Type: application/json (curl --json).
A bad request gets a 4xx and {"error", "field"}. Each request is logged to
standard error (log/slog) with its request id, status and latency.

Safe next to a browser: requests must name the server in their Host
(localhost, a loopback address, the address they came in on, the --addr
host or a name of --allowed-hosts; else 403: DNS rebinding), and requests
from another site's page (an Origin header) are refused unless
--allow-origin lists that origin. A body must arrive within --body-timeout;
a draft may cite at most 10,000 IDs with at most 100 quotes; at most 2 x
the CPUs requests (MCP tool calls included) work at once, the others wait.
docs/serving.md has the whole reference.

Examples:
  citefind serve --db ~/papers-db
  curl -s --json '{"query": "reciprocal rank fusion [CITATION]", "k": 3}' localhost:8080/v1/search
  citefind serve --addr 0.0.0.0:8080 --allowed-hosts papers.lan --allow-origin https://notes.lan`

func (c *serveCmd) Run(ctx context.Context, args []string) error {
	fs := newFlagSet(c.env, "serve", serveUsage)
	db := dbFlag(fs)
	backend := fs.String("backend", "", "serve from this remote backend `URL` alone (weaviate://HOST:PORT[,HOST:PORT…]/COLLECTION: name several nodes to ride through one failing), with no local database: several processes can share one cluster")
	addr := fs.String("addr", server.DefaultAddr, "`HOST:PORT` to listen on")
	hosts := fs.String("allowed-hosts", "", "more `NAMES` (comma-separated) that requests may give as their Host; * for any (no DNS rebinding protection)")
	origins := fs.String("allow-origin", "", "web `ORIGINS` (comma-separated, http(s)://HOST[:PORT]) whose pages may use the server; * for any site")
	timeout := fs.Duration("request-timeout", server.DefaultRequestTimeout, "deadline of each API request")
	bodyTimeout := fs.Duration("body-timeout", server.DefaultBodyTimeout, "how long a request body may take to arrive")
	maxBody := fs.Int64("max-body", server.DefaultMaxBodyBytes, "largest request body, in `BYTES`")
	noMCP := fs.Bool("no-mcp", false, "do not serve the MCP tools at /mcp")
	mcpSessions := fs.Int("mcp-sessions", mcp.DefaultMaxSessions, "most MCP sessions open at once over HTTP (idle ones close after 30 minutes)")
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
	if *bodyTimeout <= 0 {
		return usageErr("serve: --body-timeout must be positive, got %s", *bodyTimeout)
	}
	if *maxBody <= 0 {
		return usageErr("serve: --max-body must be positive, got %d", *maxBody)
	}
	if *mcpSessions <= 0 {
		return usageErr("serve: --mcp-sessions must be positive, got %d", *mcpSessions)
	}
	allowedHosts := splitList(*hosts)
	for _, h := range allowedHosts {
		if err := server.CheckHost(h); err != nil {
			return usageErr("serve: --allowed-hosts: %v", err)
		}
	}
	// The host of --addr, when it is a name, is one of the server's.
	if h, _, err := net.SplitHostPort(*addr); err == nil && h != "" && net.ParseIP(h) == nil {
		allowedHosts = append(allowedHosts, h)
	}
	allowOrigins := splitList(*origins)
	for _, o := range allowOrigins {
		if _, err := server.NormalizeOrigin(o); err != nil {
			return usageErr("serve: --allow-origin: %v", err)
		}
	}
	log, eng, err := openServing(ctx, c.env, *db, *backend, *logFormat, lf)
	if err != nil {
		return err
	}
	defer eng.Close()
	limiter := server.NewLimiter(0)
	// One citeproc-js engine set for the API and the MCP tools: a style's
	// engine is built on its first /v1/cite and kept warm.
	styles := csl.New(csl.Options{})
	opts := server.Options{Logger: log, RequestTimeout: *timeout, BodyTimeout: *bodyTimeout, MaxBodyBytes: *maxBody,
		Limiter: limiter, AllowedHosts: allowedHosts, AllowOrigins: allowOrigins, Styles: styles}
	if !*noMCP {
		opts.MCP = mcp.New(eng, mcp.Options{Logger: log, Version: Version, ToolTimeout: *timeout,
			MaxSessions: *mcpSessions, Limiter: limiter, HostChecked: true, Styles: styles}).Handler()
	}
	log.Info("opened database", "db", eng.Dir(), "backend", *backend, "papers", eng.Count(ctx), "generation", eng.Generation())
	go followDB(ctx, eng, log)
	return server.New(eng, opts).ListenAndServe(ctx, *addr)
}

// openServing makes the logger and opens the engine of serve and mcp.
func openServing(ctx context.Context, e env, db, backend, logFormat string, lf llmFlags) (*slog.Logger, *engine.Engine, error) {
	log, err := newLogger(e, logFormat)
	if err != nil {
		return nil, nil, err
	}
	var eopts engine.Options
	lf.apply(&eopts)
	var eng *engine.Engine
	if backend != "" {
		eng, err = engine.OpenBackend(ctx, backend, eopts)
	} else {
		eng, err = engine.Open(ctx, db, eopts)
	}
	if err != nil {
		return nil, nil, err
	}
	return log, eng, nil
}

// followInterval is how often serve and mcp look for a newer store
// generation (an index or remove run by another process).
const followInterval = 2 * time.Second

// followDB swaps in the indexes of each new store generation until ctx
// ends, logging each swap and failure.
func followDB(ctx context.Context, eng *engine.Engine, log *slog.Logger) {
	eng.Follow(ctx, followInterval, func(swapped bool, err error) {
		if err != nil {
			log.Warn("could not open the database's new indexes; still serving the previous ones", "err", err)
			return
		}
		log.Info("serving a new store generation", "generation", eng.Generation(), "papers", eng.Count(ctx))
	})
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
