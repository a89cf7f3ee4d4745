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
//	GET  /healthz          {"status": "ok", "index_loaded": true, "papers": N, "dense": bool}
//
// A bad request is a 4xx with {"error": "…", "field": "…"} naming the
// offending field. POST bodies must be sent as application/json (415
// otherwise), are limited to Options.MaxBodyBytes and must arrive within
// Options.BodyTimeout (408); each API request runs within
// Options.RequestTimeout, and a /v1/cite draft within Options.CiteLimits
// (413). Requests whose Host is not one of the server's (DNS rebinding)
// or that carry another site's Origin are refused with a 403 unless
// Options.AllowedHosts or Options.AllowOrigins name them; the page may not
// be framed. A Limiter admits the work on the engine, shared with the MCP
// tools when mcp.Options.Limiter is the same one. Every request is logged with
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
