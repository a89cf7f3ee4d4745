package main

import (
	"context"

	"github.com/citefind/citefind/server/mcp"
)

type mcpCmd struct{ env }

func (c *mcpCmd) Name() string { return "mcp" }
func (c *mcpCmd) Synopsis() string {
	return "serve the citation tools to an AI writer over MCP (stdio)"
}

const mcpUsage = `Usage: citefind mcp [--db DIR] [--log-format text|json]

Serves the Model Context Protocol over standard input and output, for an
MCP client (an AI writing assistant) that starts citefind as a subprocess.
Tools:

  search_citations  (text, k)               candidate papers with IDs, titles, years, authors, scores
  get_paper         (id)                    one paper with its abstract
  add_citation      (id, reason, quote?)    the [[cite:ID]] placeholder to insert; only for papers a
                                            search of the same session returned
  resolve_citations (draft, style, format?) the draft with citations and its bibliography

Logs go to standard error. The same tools are served over streamable HTTP
at /mcp by citefind serve.

Example client configuration (docs/serving.md has more):
  {"mcpServers": {"citefind": {"command": "citefind", "args": ["mcp", "--db", "/home/me/papers-db"]}}}`

func (c *mcpCmd) Run(ctx context.Context, args []string) error {
	fs := newFlagSet(c.env, "mcp", mcpUsage)
	db := dbFlag(fs)
	backend := fs.String("backend", "", "serve from this remote backend `URL` alone (weaviate://HOST:PORT[,HOST:PORT…]/COLLECTION: name several nodes to ride through one failing), with no local database: several processes can share one cluster")
	logFormat := fs.String("log-format", "text", "log format on standard error: text or json")
	var lf llmFlags
	lf.register(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErr("mcp: unexpected argument %q (mcp takes flags only)", pos[0])
	}
	log, eng, err := openServing(ctx, c.env, *db, *backend, *logFormat, lf)
	if err != nil {
		return err
	}
	defer eng.Close()
	log.Info("serving MCP on stdio", "db", *db, "papers", eng.Count(ctx), "generation", eng.Generation())
	go followDB(ctx, eng, log)
	return mcp.New(eng, mcp.Options{Logger: log, Version: Version}).ServeIO(ctx, c.stdin, c.stdout)
}
