// Package server serves a citefind engine over HTTP: a JSON API under /v1,
// a web page at / (HTML, CSS and JavaScript embedded in the binary), and,
// when Options.MCP is set, the MCP tools of package server/mcp over
// streamable HTTP at /mcp.
//
// The API:
//
//	POST /v1/search        {"query", "k", "retrievers", "rerank", "pick", "raw"} → the `query --json` object
//	POST /v1/cite          {"draft", "style", "format", "lenient"} → {"text", "bibliography", "warnings", "cited"}
//	GET  /v1/papers/{id}   one paper, by ID or alias (IDs may contain "/": DOIs)
//	GET  /healthz          {"status": "ok", "index_loaded": true, "papers": N}
//
// A bad request is a 4xx with {"error": "…", "field": "…"} naming the
// offending field. Request bodies are limited to Options.MaxBodyBytes and
// each API request to Options.RequestTimeout. Every request is logged with
// log/slog: its id (X-Request-Id, taken from the request when it is a
// short token, else made), method, path, status, bytes and latency.
//
// Usage:
//
//	eng, _ := engine.Open(ctx, dir, engine.Options{})
//	defer eng.Close()
//	srv := server.New(eng, server.Options{Logger: slog.Default()})
//	err := srv.ListenAndServe(ctx, "127.0.0.1:8080") // returns after ctx ends and in-flight requests finish
package server
