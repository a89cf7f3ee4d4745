package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/citefind/citefind/cite"
	"github.com/citefind/citefind/cite/csl"
	"github.com/citefind/citefind/engine"
)

// Defaults for the zero values of Options.
const (
	DefaultAddr            = "127.0.0.1:8080"
	DefaultMaxBodyBytes    = 1 << 20 // 1 MiB
	DefaultRequestTimeout  = 30 * time.Second
	DefaultShutdownTimeout = 30 * time.Second
	DefaultMaxK            = 100
	// DefaultBodyTimeout is how long a request body may take to arrive.
	DefaultBodyTimeout = 10 * time.Second
)

// The default limits of each draft of /v1/cite (and of the MCP tool
// resolve_citations), Options.CiteLimits: 10,000 cited IDs (a long thesis
// cites a few hundred papers, some of them many times), 100 quotes to
// check, 500 characters per quote. Within them a draft resolves in well
// under a second (docs/robustness.md).
const (
	DefaultMaxCitations  = 10000
	DefaultMaxQuotes     = 100
	DefaultMaxQuoteChars = 500
)

// Options configure a Server. The zero value uses the defaults above and
// logs nothing.
type Options struct {
	// Logger receives one line per request and the server's life events;
	// nil discards them.
	Logger *slog.Logger
	// MaxBodyBytes limits request bodies (a larger one is a 413); 0 means
	// DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// RequestTimeout is the deadline of each /v1 request (a 503 when it
	// passes); 0 means DefaultRequestTimeout.
	RequestTimeout time.Duration
	// ShutdownTimeout bounds how long Serve waits for requests in flight
	// after its context ends; 0 means DefaultShutdownTimeout.
	ShutdownTimeout time.Duration
	// BodyTimeout is how long a request body may take to arrive after the
	// headers (a 408 when it does not); 0 means DefaultBodyTimeout.
	BodyTimeout time.Duration
	// MaxK is the largest k a search may ask for; 0 means DefaultMaxK.
	MaxK int
	// CiteLimits bound each draft of /v1/cite (a 413 naming the limit).
	// A zero field means its default (DefaultMaxCitations,
	// DefaultMaxQuotes, DefaultMaxQuoteChars); a negative one, no limit.
	CiteLimits cite.Limits
	// MaxConcurrent is how many /v1 requests run on the engine at once;
	// the others wait their turn (within their deadline). It bounds the
	// memory of concurrent searches and the store's connections. 0 means
	// DefaultConcurrency(). Ignored when Limiter is set.
	MaxConcurrent int
	// Limiter, when not nil, admits the /v1 requests instead of a limiter
	// of MaxConcurrent slots: pass the one of mcp.Options.Limiter so that
	// MCP tool calls count against the same limit.
	Limiter *Limiter
	// AllowedHosts are the Host names answered besides localhost, loopback
	// addresses and the address a connection came in on (any other Host is
	// a 403: DNS rebinding); Any ("*") answers every Host.
	AllowedHosts []string
	// AllowOrigins are the web origins (http(s)://HOST[:PORT]) of other
	// sites whose pages may use the server (CORS); a request with another
	// site's Origin is a 403. Any ("*") lets every site in. nil: only the
	// server's own page.
	AllowOrigins []string
	// MCP, when not nil, is served at /mcp (the streamable HTTP handler of
	// package server/mcp). Its long-lived GET streams are closed when
	// Serve shuts down.
	MCP http.Handler
	// Styles renders /v1/cite with citeproc-js; nil means a new
	// csl.Engine (it loads a style's engine when first asked for it, keeps
	// it warm and caches rendered entries). Share one with the MCP tools.
	Styles *csl.Engine
}

// Server serves one engine. Create it with New; it is safe for concurrent
// use, and the engine must stay open while it serves.
type Server struct {
	eng     *engine.Engine
	opts    Options
	log     *slog.Logger
	handler http.Handler

	// stopping is cancelled when shutdown starts: it ends the MCP event
	// streams, which would otherwise keep Shutdown waiting.
	stopping context.Context
	stop     context.CancelFunc
	inFlight atomic.Int64
	// slots admits Options.MaxConcurrent API requests at a time.
	slots *Limiter
	// access is the Host and Origin policy.
	access *access
}

// New returns a server over eng.
func New(eng *engine.Engine, opts Options) *Server {
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = DefaultRequestTimeout
	}
	if opts.ShutdownTimeout <= 0 {
		opts.ShutdownTimeout = DefaultShutdownTimeout
	}
	if opts.MaxK <= 0 {
		opts.MaxK = DefaultMaxK
	}
	if opts.BodyTimeout <= 0 {
		opts.BodyTimeout = DefaultBodyTimeout
	}
	if opts.Limiter == nil {
		opts.Limiter = NewLimiter(opts.MaxConcurrent)
	}
	opts.MaxConcurrent = opts.Limiter.Cap()
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.Styles == nil {
		opts.Styles = csl.New(csl.Options{})
	}
	s := &Server{eng: eng, opts: opts, log: log, slots: opts.Limiter, access: newAccess(opts.AllowedHosts, opts.AllowOrigins)}
	s.stopping, s.stop = context.WithCancel(context.Background())
	s.handler = s.routes()
	return s
}

// CiteLimits returns l with its zero fields set to their defaults
// (DefaultMaxCitations, …) and its negative ones to 0 (no limit), as
// Options.CiteLimits reads it.
func CiteLimits(l cite.Limits) cite.Limits {
	set := func(v *int, def int) {
		switch {
		case *v == 0:
			*v = def
		case *v < 0:
			*v = 0
		}
	}
	set(&l.MaxCitations, DefaultMaxCitations)
	set(&l.MaxQuotes, DefaultMaxQuotes)
	set(&l.MaxQuoteChars, DefaultMaxQuoteChars)
	return l
}

// Handler returns the server's HTTP handler: the API, the web page and
// /mcp, with request ids, logging, the Host and Origin policy, body
// limits and deadlines.
func (s *Server) Handler() http.Handler { return s.handler }

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	api := func(h http.HandlerFunc) http.Handler { return s.withDeadline(h) }
	mux.Handle("POST /v1/search", api(s.handleSearch))
	mux.Handle("POST /v1/cite", api(s.handleCite))
	mux.Handle("GET /v1/papers/{id...}", api(s.handlePaper))
	mux.HandleFunc("GET /healthz", s.handleHealth)
	// Other methods on known paths, and unknown /v1 paths, get JSON too.
	for path, allow := range map[string]string{"/v1/search": "POST", "/v1/cite": "POST", "/v1/papers/": "GET", "/healthz": "GET"} {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", allow)
			writeError(w, &FieldError{Status: http.StatusMethodNotAllowed, Field: "method",
				Msg: fmt.Sprintf("%s %s is not supported; use %s", r.Method, r.URL.Path, allow)})
		})
	}
	mux.HandleFunc("/v1/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, &FieldError{Status: http.StatusNotFound, Field: "path",
			Msg: fmt.Sprintf("no API endpoint %s (see /v1/search, /v1/cite, /v1/papers/{id})", r.URL.Path)})
	})
	if s.opts.MCP != nil {
		mux.Handle("/mcp", s.endOnShutdown(s.opts.MCP))
	}
	s.webRoutes(mux)
	return s.logRequests(s.guard(mux))
}

// endOnShutdown cancels the context of long-lived GET streams when
// shutdown starts, so that they end and Shutdown can finish.
func (s *Server) endOnShutdown(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			ctx, cancel := context.WithCancel(r.Context())
			defer cancel()
			stop := context.AfterFunc(s.stopping, cancel)
			defer stop()
			r = r.WithContext(ctx)
		}
		h.ServeHTTP(w, r)
	})
}

// withDeadline bounds an API request by Options.RequestTimeout and its
// body by Options.MaxBodyBytes, and refuses POST bodies that are not
// JSON.
func (s *Server) withDeadline(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := requireJSON(r); err != nil {
			writeError(w, err)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), s.opts.RequestTimeout)
		defer cancel()
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes)
		}
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}

// admit waits for one of the Options.MaxConcurrent slots for work on the
// engine (after the request is read, so that slow clients hold none) and
// returns its release, or the context's error.
func (s *Server) admit(ctx context.Context) (release func(), err error) {
	return s.slots.Acquire(ctx)
}

// InFlight returns the number of requests being handled.
func (s *Server) InFlight() int64 { return s.inFlight.Load() }

// ListenAndServe listens on addr (host:port) and calls Serve.
func (s *Server) ListenAndServe(ctx context.Context, addr string) error {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	return s.Serve(ctx, ln)
}

// Serve answers requests on ln until ctx ends, then stops accepting
// connections, waits up to Options.ShutdownTimeout for the requests in
// flight to finish, and returns (nil after a clean shutdown). Requests in
// flight keep running when ctx ends: their contexts do not derive from
// its cancellation.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	s.log.Info("serving", "addr", ln.Addr().String(), "papers", s.eng.Count(ctx))
	select {
	case err := <-errc:
		s.stop()
		return err
	case <-ctx.Done():
	}
	s.log.Info("shutting down: finishing requests in flight", "in_flight", s.inFlight.Load(), "timeout", s.opts.ShutdownTimeout.String())
	s.stop()
	sctx, cancel := context.WithTimeout(context.Background(), s.opts.ShutdownTimeout)
	defer cancel()
	err := hs.Shutdown(sctx)
	if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	if err != nil {
		hs.Close()
		return fmt.Errorf("shut down: %w", err)
	}
	s.log.Info("stopped")
	return nil
}
