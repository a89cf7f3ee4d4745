// Package mcp exposes a citefind engine to AI writers as Model Context
// Protocol tools, with github.com/modelcontextprotocol/go-sdk, over stdio
// (Tools.ServeIO, `citefind mcp`) or streamable HTTP (Tools.Handler,
// served at /mcp by `citefind serve`).
//
// The tools:
//
//	search_citations  (text, k)                  candidate papers with IDs, titles, years, authors, scores
//	get_paper         (id)                       one paper with its abstract
//	add_citation      (id, reason, quote?)       the [[cite:ID]] placeholder to insert, for a paper
//	                                             that a search of this session returned
//	resolve_citations (draft, style, format?)    the draft with citations and its bibliography
//
// add_citation keeps the writer honest: it refuses IDs that are not in the
// store and IDs that no search_citations call of the same MCP session
// returned, so every citation traces back to a retrieval. Each session's
// returned IDs are kept in memory until the session ends.
//
// Bounds: at most Options.MaxSessions streamable HTTP sessions at once,
// idle ones closed after Options.SessionTimeout; tool calls wait for a
// turn of Options.Limiter (the HTTP API's, in citefind serve); drafts
// within Options.CiteLimits. Over stdio, every request read before the
// end of input is answered before ServeIO returns.
//
// Usage:
//
//	tools := mcp.New(eng, mcp.Options{})
//	err := tools.ServeIO(ctx, os.Stdin, os.Stdout) // or
//	http.Handle("/mcp", tools.Handler())
package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/citefind/citefind"
	"github.com/citefind/citefind/cite"
	"github.com/citefind/citefind/cite/csl"
	"github.com/citefind/citefind/engine"
	"github.com/citefind/citefind/server"
)

// Defaults for the zero values of Options.
const (
	DefaultToolTimeout    = 30 * time.Second
	DefaultMaxK           = 50
	DefaultSessionTimeout = 30 * time.Minute
	// DefaultMaxSessions bounds the streamable HTTP sessions open at once.
	DefaultMaxSessions = 64
	// MaxSessionIDs bounds the paper IDs remembered per session; the
	// oldest searches are forgotten first.
	MaxSessionIDs = 20000
)

// Options configure Tools. The zero value uses the defaults above.
type Options struct {
	// Logger receives tool calls and session events; nil discards them.
	Logger *slog.Logger
	// Version is reported to clients as the server's version.
	Version string
	// ToolTimeout is each tool call's deadline; 0 means DefaultToolTimeout.
	ToolTimeout time.Duration
	// MaxK is the largest k search_citations accepts; 0 means DefaultMaxK.
	MaxK int
	// SessionTimeout closes streamable HTTP sessions idle this long (and
	// forgets their searches); 0 means DefaultSessionTimeout.
	SessionTimeout time.Duration
	// MaxSessions is how many streamable HTTP sessions may be open at
	// once; a new one beyond it is refused (503) until one closes or
	// times out. 0 means DefaultMaxSessions.
	MaxSessions int
	// Limiter admits the tool calls that work on the engine (all but
	// add_citation's bookkeeping), with the HTTP API's requests when it is
	// the one of server.Options.Limiter; nil means a limiter of its own
	// (server.NewLimiter(0)).
	Limiter *server.Limiter
	// CiteLimits bound the drafts of resolve_citations, as
	// server.Options.CiteLimits (zero fields: the defaults).
	CiteLimits cite.Limits
	// HostChecked says that the HTTP server in front of Handler checks
	// the Host header (server.Server does, with its AllowedHosts): the
	// SDK's own check, which allows loopback names only, is then left
	// out. Without it, Handler refuses a non-loopback Host on a loopback
	// connection.
	HostChecked bool
	// Styles renders resolve_citations; nil means a new csl.Engine. `serve`
	// shares the HTTP server's (server.Options.Styles).
	Styles *csl.Engine
}

// Tools serves the citefind MCP tools over one engine. It is safe for
// concurrent use by many sessions; the engine must stay open.
type Tools struct {
	eng  *engine.Engine
	opts Options
	log  *slog.Logger
	srv  *sdk.Server

	mu       sync.Mutex
	sessions map[*sdk.ServerSession]*session
	// opening counts initialize requests over HTTP not yet answered
	// (guarded by mu).
	opening int
}

// session is what one MCP session has searched and cited.
type session struct {
	order    []string        // returned IDs, oldest first, for the MaxSessionIDs bound
	returned map[string]bool // IDs any search_citations of the session returned
	queries  map[string]string
	added    []string // IDs add_citation accepted, in order
}

// New returns the tools over eng.
func New(eng *engine.Engine, opts Options) *Tools {
	if opts.ToolTimeout <= 0 {
		opts.ToolTimeout = DefaultToolTimeout
	}
	if opts.MaxK <= 0 {
		opts.MaxK = DefaultMaxK
	}
	if opts.SessionTimeout <= 0 {
		opts.SessionTimeout = DefaultSessionTimeout
	}
	if opts.MaxSessions <= 0 {
		opts.MaxSessions = DefaultMaxSessions
	}
	if opts.Limiter == nil {
		opts.Limiter = server.NewLimiter(0)
	}
	if opts.Styles == nil {
		opts.Styles = csl.New(csl.Options{})
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	t := &Tools{eng: eng, opts: opts, log: log, sessions: map[*sdk.ServerSession]*session{}}
	t.srv = sdk.NewServer(&sdk.Implementation{Name: "citefind", Title: "citefind: citations from your own corpus", Version: opts.Version},
		&sdk.ServerOptions{Instructions: instructions, Logger: log})
	t.register()
	return t
}

// instructions tell the model how the tools fit together.
const instructions = `citefind finds real papers to cite in a local corpus; it never invents references.
Workflow: call search_citations with the sentence that needs a citation (a [CITATION] marker is fine);
read the candidates (get_paper shows an abstract); call add_citation with the chosen ID and your reason,
and insert the placeholder it returns into your draft (for several papers at one point, their placeholders
next to each other with nothing between: they become one citation); finally call resolve_citations on the whole draft
to get formatted citations and a bibliography. Only cite IDs that search_citations returned in this session.`

// Server returns the MCP server, for transports other than stdio and
// streamable HTTP (tests use in-memory ones).
func (t *Tools) Server() *sdk.Server { return t.srv }

// ServeIO serves one session over r and w, newline-delimited JSON-RPC as
// on stdio (`citefind mcp` passes standard input and output), until the
// client closes r or ctx ends. Every request read before the end of r is
// answered before ServeIO returns (waiting at most Options.ToolTimeout
// and 10 s more), so that a client may pipe its requests and close its
// end.
func (t *Tools) ServeIO(ctx context.Context, r io.Reader, w io.Writer) error {
	d := newDrain()
	r = &drainReader{r: r, d: d, ctx: ctx, timeout: t.opts.ToolTimeout + 10*time.Second}
	w = &drainWriter{w: w, d: d}
	err := t.srv.Run(ctx, &sdk.IOTransport{Reader: io.NopCloser(r), Writer: nopWriteCloser{w}})
	if ctx.Err() != nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) {
		return nil
	}
	return err
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// Handler returns the streamable HTTP handler: one MCP session per
// Mcp-Session-Id, closed after Options.SessionTimeout idle, at most
// Options.MaxSessions at once (an initialize that would open one more is
// a 503 with Retry-After).
func (t *Tools) Handler() http.Handler {
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return t.srv },
		&sdk.StreamableHTTPOptions{Logger: t.log, SessionTimeout: t.opts.SessionTimeout, MaxRequestBodyBytes: server.DefaultMaxBodyBytes,
			DisableLocalhostProtection: t.opts.HostChecked})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// An initialize without a session id opens a session.
		if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" || r.Body == nil {
			h.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, server.DefaultMaxBodyBytes+1))
		var bte *server.BodyTimeoutError
		switch {
		case errors.As(err, &bte):
			http.Error(w, bte.Error(), http.StatusRequestTimeout)
			return
		case err != nil:
			http.Error(w, "read the body: "+err.Error(), http.StatusBadRequest)
			return
		case len(body) > server.DefaultMaxBodyBytes:
			http.Error(w, fmt.Sprintf("request body exceeds %d bytes", server.DefaultMaxBodyBytes), http.StatusRequestEntityTooLarge)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if !isInitialize(body) {
			h.ServeHTTP(w, r)
			return
		}
		release, ok := t.reserve()
		if !ok {
			w.Header().Set("Retry-After", "60")
			http.Error(w, fmt.Sprintf("too many MCP sessions: %d are open, the limit (serve --mcp-sessions); "+
				"idle ones close after %s, or when their client ends them (DELETE)", t.opts.MaxSessions, t.opts.SessionTimeout),
				http.StatusServiceUnavailable)
			return
		}
		defer release()
		// By the time the answer goes out, the session is initialized and
		// counted as such: the reservation ends then, before the client
		// can send anything else.
		h.ServeHTTP(&firstWrite{ResponseWriter: w, fn: release}, r)
	})
}

// isInitialize reports whether a JSON-RPC message, or batch, holds an
// initialize request.
func isInitialize(body []byte) bool {
	type msg struct {
		Method string `json:"method"`
	}
	var one msg
	if json.Unmarshal(body, &one) == nil {
		return one.Method == "initialize"
	}
	var batch []msg
	if json.Unmarshal(body, &batch) == nil {
		for _, m := range batch {
			if m.Method == "initialize" {
				return true
			}
		}
	}
	return false
}

// reserve counts an initialize in flight when the initialized sessions and
// the initializes in flight are fewer than Options.MaxSessions; release
// (idempotent) ends the reservation.
func (t *Tools) reserve() (release func(), ok bool) {
	open := t.OpenSessions()
	t.mu.Lock()
	defer t.mu.Unlock()
	if open+t.opening >= t.opts.MaxSessions {
		return nil, false
	}
	t.opening++
	var once sync.Once
	return func() {
		once.Do(func() {
			t.mu.Lock()
			t.opening--
			t.mu.Unlock()
		})
	}, true
}

// firstWrite calls fn before the first byte or header of the response.
type firstWrite struct {
	http.ResponseWriter
	fn func()
}

func (w *firstWrite) WriteHeader(code int) {
	w.fn()
	w.ResponseWriter.WriteHeader(code)
}

func (w *firstWrite) Write(b []byte) (int, error) {
	w.fn()
	return w.ResponseWriter.Write(b)
}

func (w *firstWrite) Flush() {
	w.fn()
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *firstWrite) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// OpenSessions returns the number of initialized MCP sessions.
func (t *Tools) OpenSessions() int {
	n := 0
	for ss := range t.srv.Sessions() {
		if ss.InitializeParams() != nil {
			n++
		}
	}
	return n
}

// admit waits for a slot of Options.Limiter; its error is the tool's.
func (t *Tools) admit(ctx context.Context, tool string) (func(), error) {
	release, err := t.opts.Limiter.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: the server is busy: no turn came within the call's deadline of %s (%w)", tool, t.opts.ToolTimeout, err)
	}
	return release, nil
}

// state returns the session's state, creating it (and its clean-up when
// the session ends) on first use.
func (t *Tools) state(ss *sdk.ServerSession) *session {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.sessions[ss]
	if !ok {
		s = &session{returned: map[string]bool{}, queries: map[string]string{}}
		t.sessions[ss] = s
		go func() {
			_ = ss.Wait()
			t.mu.Lock()
			delete(t.sessions, ss)
			t.mu.Unlock()
			t.log.Debug("mcp session ended", "session", ss.ID())
		}()
	}
	return s
}

// Sessions returns the number of sessions with state, for tests and
// metrics.
func (t *Tools) Sessions() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.sessions)
}

func (t *Tools) remember(ss *sdk.ServerSession, query string, ids []string) {
	s := t.state(ss)
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, id := range ids {
		if !s.returned[id] {
			s.returned[id] = true
			s.queries[id] = query
			s.order = append(s.order, id)
		}
	}
	for len(s.order) > MaxSessionIDs {
		delete(s.returned, s.order[0])
		delete(s.queries, s.order[0])
		s.order = s.order[1:]
	}
}

// returnedBy reports whether a search of the session returned id, and
// which query did.
func (t *Tools) returnedBy(ss *sdk.ServerSession, id string) (string, bool) {
	s := t.state(ss)
	t.mu.Lock()
	defer t.mu.Unlock()
	return s.queries[id], s.returned[id]
}

func (t *Tools) candidates(ss *sdk.ServerSession) map[string]bool {
	s := t.state(ss)
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(s.returned) == 0 {
		return nil
	}
	out := make(map[string]bool, len(s.returned))
	for id := range s.returned {
		out[id] = true
	}
	return out
}

func (t *Tools) added(ss *sdk.ServerSession, id string) {
	s := t.state(ss)
	t.mu.Lock()
	defer t.mu.Unlock()
	s.added = append(s.added, id)
}

// SearchInput is the input of search_citations.
type SearchInput struct {
	Text string `json:"text" jsonschema:"the passage that needs a citation, e.g. a sentence with a [CITATION] marker, or a literature question; citation markers are ignored"`
	K    int    `json:"k,omitempty" jsonschema:"how many candidates to return, 1 to 50; default 10"`
}

// Candidate is one paper search_citations returns.
type Candidate struct {
	ID      string                         `json:"id" jsonschema:"the paper ID to pass to get_paper and add_citation"`
	Title   string                         `json:"title"`
	Year    int                            `json:"year,omitempty" jsonschema:"publication year; absent when unknown"`
	Authors []string                       `json:"authors"`
	Venue   string                         `json:"venue,omitempty"`
	Rank    int                            `json:"rank" jsonschema:"1 is the best candidate"`
	Score   float64                        `json:"score" jsonschema:"retrieval score, higher is better; comparable only within one search"`
	Sources map[string]citefind.SourceRank `json:"sources" jsonschema:"each retriever's rank and score for this paper"`
}

// SearchOutput is the output of search_citations.
type SearchOutput struct {
	Query      string      `json:"query" jsonschema:"the text searched, after removing citation markers"`
	Candidates []Candidate `json:"candidates" jsonschema:"best first"`
	Warnings   []string    `json:"warnings,omitempty"`
}

// PaperInput is the input of get_paper.
type PaperInput struct {
	ID string `json:"id" jsonschema:"a paper ID from search_citations (a DOI such as 10.1145/1571941.1572114, arxiv:…, h:…) or a BibTeX key"`
}

// AddInput is the input of add_citation.
type AddInput struct {
	ID     string `json:"id" jsonschema:"the ID of the paper to cite; it must have been returned by search_citations in this session"`
	Reason string `json:"reason" jsonschema:"one sentence on why this paper supports the claim being cited"`
	Quote  string `json:"quote,omitempty" jsonschema:"optional words quoted from the paper's title or abstract; checked when the draft is resolved"`
}

// AddOutput is the output of add_citation.
type AddOutput struct {
	Placeholder string `json:"placeholder" jsonschema:"insert this text in the draft where the citation belongs; resolve_citations turns it into a formatted citation"`
	ID          string `json:"id" jsonschema:"the paper's canonical ID"`
	Title       string `json:"title"`
	Reason      string `json:"reason"`
	Query       string `json:"query" jsonschema:"the search that returned the paper"`
	QuoteMatch  string `json:"quote_match,omitempty" jsonschema:"how well the quote matches the paper's title or abstract, when a quote was given"`
}

// ResolveInput is the input of resolve_citations.
type ResolveInput struct {
	Draft  string `json:"draft" jsonschema:"the whole draft with [[cite:ID]] placeholders (several papers: [[cite:A,B]])"`
	Style  string `json:"style,omitempty" jsonschema:"CSL citation style name: apa (default), ieee, mla, chicago, harvard, vancouver, or any installed CSL style such as nature or acm-sig-proceedings"`
	Format string `json:"format,omitempty" jsonschema:"md (default: Markdown that can be resolved again after editing), html or text"`
}

func (t *Tools) register() {
	sdk.AddTool(t.srv, &sdk.Tool{
		Name:  "search_citations",
		Title: "Search citations",
		Description: "Find papers in the local corpus that the given text should cite. Pass the sentence or paragraph " +
			"that makes the claim (a [CITATION] marker where the citation goes is fine) or a literature question. " +
			"Returns candidates best first with their IDs, titles, years, authors, venue and scores. Only papers " +
			"returned here can be cited with add_citation in this session.",
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)},
	}, t.search)
	sdk.AddTool(t.srv, &sdk.Tool{
		Name:  "get_paper",
		Title: "Get paper",
		Description: "Show one paper of the corpus by ID (or BibTeX key): title, authors, year, venue, DOI, " +
			"abstract and keywords. Use it to check that a candidate really supports the claim before citing it.",
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)},
	}, t.getPaper)
	sdk.AddTool(t.srv, &sdk.Tool{
		Name:  "add_citation",
		Title: "Add citation",
		Description: "Cite a paper: give the ID of a candidate that search_citations returned in this session and a " +
			"one-sentence reason. Returns the placeholder to insert into the draft at the point of citation, " +
			"e.g. [[cite:10.1145/1571941.1572114]]. Fails, saying why, when the ID is not in the corpus or was not " +
			"returned by a search in this session: search first, never cite from memory.",
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)},
	}, t.addCitation)
	sdk.AddTool(t.srv, &sdk.Tool{
		Name:  "resolve_citations",
		Title: "Resolve citations",
		Description: "Turn the [[cite:ID]] placeholders of a draft into formatted in-text citations and append the " +
			"bibliography, in a citation style (apa, ieee, mla, chicago, harvard, vancouver). Returns the resolved " +
			"text, the bibliography entries and warnings (e.g. a cited paper no search returned, a quote that does " +
			"not match). Unknown IDs or malformed placeholders are an error listing each with line:column.",
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)},
	}, t.resolve)
}

func ptr[T any](v T) *T { return &v }

// toolError turns err into the message the model reads.
func toolError(tool string, err error) error {
	var fe *server.FieldError
	if errors.As(err, &fe) {
		return fmt.Errorf("%s: %s: %s", tool, fe.Field, fe.Msg)
	}
	return fmt.Errorf("%s: %w", tool, err)
}

func (t *Tools) logCall(ctx context.Context, req *sdk.CallToolRequest, start time.Time, err error) {
	attrs := []any{"tool", req.Params.Name, "session", req.Session.ID(), "latency", time.Since(start)}
	if err != nil {
		t.log.WarnContext(ctx, "mcp tool call failed", append(attrs, "err", err)...)
		return
	}
	t.log.InfoContext(ctx, "mcp tool call", attrs...)
}

func (t *Tools) search(ctx context.Context, req *sdk.CallToolRequest, in SearchInput) (_ *sdk.CallToolResult, out SearchOutput, err error) {
	defer func(start time.Time) { t.logCall(ctx, req, start, err) }(time.Now())
	ctx, cancel := context.WithTimeout(ctx, t.opts.ToolTimeout)
	defer cancel()
	release, err := t.admit(ctx, "search_citations")
	if err != nil {
		return nil, out, err
	}
	defer release()
	if in.K == 0 {
		in.K = 10
	}
	res, err := server.Search(ctx, t.eng, server.SearchRequest{Query: in.Text, K: in.K}, t.opts.MaxK)
	if err != nil {
		var fe *server.FieldError
		if errors.As(err, &fe) && fe.Field == "query" {
			fe.Field, fe.Msg = "text", "text is required: the passage that needs a citation"
		}
		return nil, out, toolError("search_citations", err)
	}
	out = SearchOutput{Query: res.Cleaned, Candidates: make([]Candidate, 0, len(res.Hits)), Warnings: res.Warnings}
	ids := make([]string, 0, len(res.Hits))
	for _, h := range res.Hits {
		out.Candidates = append(out.Candidates, Candidate{ID: h.ID, Title: h.Title, Year: h.Year, Authors: h.Authors,
			Venue: h.Venue, Rank: h.Rank, Score: h.Score, Sources: h.Sources})
		ids = append(ids, h.ID)
	}
	t.remember(req.Session, in.Text, ids)
	return nil, out, nil
}

func (t *Tools) getPaper(ctx context.Context, req *sdk.CallToolRequest, in PaperInput) (_ *sdk.CallToolResult, out server.Paper, err error) {
	defer func(start time.Time) { t.logCall(ctx, req, start, err) }(time.Now())
	ctx, cancel := context.WithTimeout(ctx, t.opts.ToolTimeout)
	defer cancel()
	release, err := t.admit(ctx, "get_paper")
	if err != nil {
		return nil, out, err
	}
	defer release()
	p, err := server.GetPaper(ctx, t.eng.Papers(), in.ID)
	if err != nil {
		return nil, out, toolError("get_paper", err)
	}
	if p.Keywords == nil {
		p.Keywords = []string{}
	}
	return nil, p, nil
}

func (t *Tools) addCitation(ctx context.Context, req *sdk.CallToolRequest, in AddInput) (_ *sdk.CallToolResult, out AddOutput, err error) {
	defer func(start time.Time) { t.logCall(ctx, req, start, err) }(time.Now())
	ctx, cancel := context.WithTimeout(ctx, t.opts.ToolTimeout)
	defer cancel()
	if strings.TrimSpace(in.Reason) == "" {
		return nil, out, errors.New("add_citation: reason: say in one sentence why this paper supports the claim")
	}
	if strings.ContainsAny(in.Quote, "\"\n") || strings.Contains(in.Quote, "]]") {
		return nil, out, errors.New(`add_citation: quote: a quote must be one line without double quotes or "]]"`)
	}
	if max := server.CiteLimits(t.opts.CiteLimits).MaxQuoteChars; max > 0 && utf8.RuneCountInString(strings.TrimSpace(in.Quote)) > max {
		return nil, out, fmt.Errorf("add_citation: quote: more than %d characters, the limit: quote a shorter passage", max)
	}
	release, err := t.admit(ctx, "add_citation")
	if err != nil {
		return nil, out, err
	}
	defer release()
	p, err := server.GetPaper(ctx, t.eng.Papers(), in.ID)
	if err != nil {
		return nil, out, toolError("add_citation", err)
	}
	query, ok := t.returnedBy(req.Session, p.ID)
	if !ok {
		return nil, out, fmt.Errorf("add_citation: id: paper %s (%q) is in the corpus but no search_citations call in this session returned it; "+
			"search for the claim first and cite one of the candidates", p.ID, p.Title)
	}
	out = AddOutput{Placeholder: "[[cite:" + p.ID + "]]", ID: p.ID, Title: p.Title, Reason: in.Reason, Query: query}
	if q := strings.TrimSpace(in.Quote); q != "" {
		out.Placeholder = fmt.Sprintf("[[cite:%s %q]]", p.ID, q)
		full, err := t.eng.Papers().Get(ctx, p.ID)
		if err != nil {
			return nil, out, toolError("add_citation", err)
		}
		sim := cite.QuoteSimilarity(q, full)
		out.QuoteMatch = fmt.Sprintf("%.2f (1 is an exact match; below %.2f resolve_citations will warn)", sim, cite.DefaultQuoteThreshold)
	}
	t.added(req.Session, p.ID)
	return nil, out, nil
}

func (t *Tools) resolve(ctx context.Context, req *sdk.CallToolRequest, in ResolveInput) (_ *sdk.CallToolResult, out server.CiteResponse, err error) {
	defer func(start time.Time) { t.logCall(ctx, req, start, err) }(time.Now())
	ctx, cancel := context.WithTimeout(ctx, t.opts.ToolTimeout)
	defer cancel()
	release, err := t.admit(ctx, "resolve_citations")
	if err != nil {
		return nil, out, err
	}
	defer release()
	res, err := server.Cite(ctx, t.eng.Papers(), t.opts.Styles, server.CiteRequest{Draft: in.Draft, Style: in.Style, Format: in.Format},
		t.candidates(req.Session), t.opts.CiteLimits)
	if err != nil {
		var fe *server.FieldError
		if errors.As(err, &fe) && fe.Details != nil {
			if d, ok := fe.Details.(map[string]any); ok {
				if us, ok := d["unknown"].([]server.UnknownID); ok {
					ids := make([]string, len(us))
					for i, u := range us {
						ids[i] = u.ID
					}
					sort.Strings(ids)
					return nil, out, fmt.Errorf("resolve_citations: draft: %s (search for these claims and cite the IDs search_citations returns: %s)", fe.Msg, strings.Join(ids, ", "))
				}
			}
		}
		return nil, out, toolError("resolve_citations", err)
	}
	return nil, *res, nil
}
