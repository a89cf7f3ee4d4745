package server

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// What a browser may do with the server: it runs next to one, on a
// laptop, so any page the browser opens could try to use it. The guard
// refuses a Host that is not the server's (DNS rebinding: a name of the
// attacker's that resolves to 127.0.0.1), and requests that carry the
// Origin of another site unless Options.AllowOrigins lists it; the API
// refuses POST bodies that are not JSON (a page may send text/plain to any
// address without asking first); and every body must arrive within
// Options.BodyTimeout.

// Any, in Options.AllowedHosts or Options.AllowOrigins, allows every Host
// or Origin.
const Any = "*"

// access is the Host and Origin policy of a server.
type access struct {
	anyHost, anyOrigin bool
	hosts              map[string]bool // lower case, without port
	origins            map[string]bool // as NormalizeOrigin returns them
}

func newAccess(hosts, origins []string) *access {
	a := &access{hosts: map[string]bool{}, origins: map[string]bool{}}
	for _, h := range hosts {
		if h == Any {
			a.anyHost = true
		}
		a.hosts[hostName(h)] = true
	}
	for _, o := range origins {
		if o == Any {
			a.anyOrigin = true
		}
		if n, err := NormalizeOrigin(o); err == nil {
			a.origins[n] = true
		}
	}
	return a
}

// hostName is the lower-case name of a Host header value, without port,
// brackets or a final dot.
func hostName(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
}

// CheckHost returns an error when name cannot be an allowed host
// (Options.AllowedHosts): a host name or IP address, without scheme or
// path, or Any.
func CheckHost(name string) error {
	if name == Any {
		return nil
	}
	h := hostName(name)
	if h == "" || strings.ContainsAny(name, "/?#@ \t") {
		return fmt.Errorf("%q is not a host name or address (e.g. myhost.lan or 192.168.1.5)", name)
	}
	return nil
}

// NormalizeOrigin returns origin as browsers send it in an Origin header:
// scheme "http" or "https", lower-case host, the port only when it is not
// the scheme's default. Any is returned as it is.
func NormalizeOrigin(origin string) (string, error) {
	if origin == Any {
		return Any, nil
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("%q is not an origin: want http(s)://HOST[:PORT], as a browser sends it", origin)
	}
	host := strings.ToLower(u.Host)
	if p := u.Port(); (u.Scheme == "http" && p == "80") || (u.Scheme == "https" && p == "443") {
		host = strings.ToLower(u.Hostname())
		if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
	}
	return u.Scheme + "://" + host, nil
}

// hostAllowed reports whether r's Host names this server: localhost, a
// loopback address, the address the connection came in on, or a host of
// Options.AllowedHosts.
func (a *access) hostAllowed(r *http.Request) bool {
	if a.anyHost {
		return true
	}
	h := hostName(r.Host)
	if h == "localhost" || a.hosts[h] {
		return true
	}
	ip := net.ParseIP(h)
	if ip == nil {
		return false
	}
	if ip.IsLoopback() {
		return true
	}
	if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if tcp, ok := la.(*net.TCPAddr); ok && tcp.IP.Equal(ip) {
			return true
		}
	}
	return false
}

// originAllowed reports whether a request with Host host may come from
// origin, and whether that is a cross-origin request (an allowed one gets
// CORS headers).
func (a *access) originAllowed(origin, host string) (ok, cross bool) {
	n, err := NormalizeOrigin(origin)
	if err == nil && n != Any {
		scheme, h, _ := strings.Cut(n, "://")
		req := strings.ToLower(host)
		if (scheme == "http" && strings.HasSuffix(req, ":80")) || (scheme == "https" && strings.HasSuffix(req, ":443")) {
			req = req[:strings.LastIndexByte(req, ':')]
		}
		if h == req {
			return true, false
		}
		if a.origins[n] {
			return true, true
		}
	}
	return a.anyOrigin, true
}

// corsMethods and corsHeaders are what an allowed origin may send.
const (
	corsMethods = "GET, POST, DELETE"
	corsHeaders = "Content-Type, " + RequestIDHeader + ", Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID"
	corsExpose  = RequestIDHeader + ", Mcp-Session-Id"
)

// guard applies the Host and Origin policy and the body deadline to every
// request, and answers the CORS preflight of allowed origins.
func (s *Server) guard(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody {
			if body := s.bodyDeadline(w, r); body != nil {
				w = &closeUnread{ResponseWriter: w, body: body}
			}
		}
		if !s.access.hostAllowed(r) {
			writeError(w, &FieldError{Status: http.StatusForbidden, Field: "host", Msg: fmt.Sprintf(
				"Host %q is not a name of this server: it answers localhost, loopback addresses and the address it listens on "+
					"(a page of another site reaching it under its own name is DNS rebinding); "+
					"start it with --allowed-hosts %s to answer that name", r.Host, hostName(r.Host))})
			return
		}
		origin := r.Header.Get("Origin")
		if origin == "" {
			h.ServeHTTP(w, r)
			return
		}
		ok, cross := s.access.originAllowed(origin, r.Host)
		if !ok {
			writeError(w, &FieldError{Status: http.StatusForbidden, Field: "origin", Msg: fmt.Sprintf(
				"requests from the web origin %q are refused: only the server's own page may use it; "+
					"start it with --allow-origin %s to let that site in", origin, origin)})
			return
		}
		if cross {
			w.Header().Set("Access-Control-Allow-Origin", origin)
			w.Header().Add("Vary", "Origin")
			w.Header().Set("Access-Control-Expose-Headers", corsExpose)
			if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
				w.Header().Set("Access-Control-Allow-Methods", corsMethods)
				w.Header().Set("Access-Control-Allow-Headers", corsHeaders)
				w.Header().Set("Access-Control-Max-Age", "600")
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// requireJSON refuses a POST whose body is not declared JSON: a page of
// another site may send text/plain, form data or multipart anywhere
// without a CORS preflight, but not application/json.
func requireJSON(r *http.Request) error {
	if r.Method != http.MethodPost {
		return nil
	}
	ct := r.Header.Get("Content-Type")
	if mt, _, err := mime.ParseMediaType(ct); err == nil && mt == "application/json" {
		return nil
	}
	got := "no Content-Type"
	if ct != "" {
		got = fmt.Sprintf("Content-Type %q", ct)
	}
	return &FieldError{Status: http.StatusUnsupportedMediaType, Field: "content-type", Msg: fmt.Sprintf(
		"the body must be JSON sent as Content-Type: application/json, got %s "+
			"(with curl: --json '{…}', or -H 'Content-Type: application/json')", got)}
}

// BodyTimeoutError is a request body that did not arrive within
// Options.BodyTimeout.
type BodyTimeoutError struct{ Timeout time.Duration }

func (e *BodyTimeoutError) Error() string {
	return fmt.Sprintf("the body did not arrive within %s", e.Timeout)
}

// Unwrap returns os.ErrDeadlineExceeded.
func (e *BodyTimeoutError) Unwrap() error { return os.ErrDeadlineExceeded }

// bodyDeadline gives r's body Options.BodyTimeout to arrive: a read
// deadline on the connection, lifted once the body has been read to its
// end. A body still unread when the handler returns keeps the deadline,
// so that the server's discarding of the rest ends with it too. It
// returns the body it set, nil when the connection takes no deadline.
func (s *Server) bodyDeadline(w http.ResponseWriter, r *http.Request) *deadlineBody {
	rc := http.NewResponseController(w)
	if err := rc.SetReadDeadline(time.Now().Add(s.opts.BodyTimeout)); err != nil {
		return nil // not a network connection (a test recorder)
	}
	b := &deadlineBody{ReadCloser: r.Body, timeout: s.opts.BodyTimeout,
		lift: func() { _ = rc.SetReadDeadline(time.Time{}) }}
	r.Body = b
	return b
}

type deadlineBody struct {
	io.ReadCloser
	timeout time.Duration
	once    sync.Once
	lift    func()
	ended   atomic.Bool // read to its end
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	switch {
	case errors.Is(err, io.EOF):
		b.ended.Store(true)
		b.once.Do(b.lift)
	case errors.Is(err, os.ErrDeadlineExceeded):
		err = &BodyTimeoutError{Timeout: b.timeout}
	}
	return n, err
}

// closeUnread closes the connection after an answer given before the
// request's body was read to its end (a refusal, a malformed body):
// otherwise the server reads the rest of the body before it sends the
// answer, which a slow client stretches to the body deadline.
type closeUnread struct {
	http.ResponseWriter
	body *deadlineBody
	once sync.Once
}

func (w *closeUnread) check() {
	w.once.Do(func() {
		if !w.body.ended.Load() {
			w.Header().Set("Connection", "close")
		}
	})
}

func (w *closeUnread) WriteHeader(code int) {
	w.check()
	w.ResponseWriter.WriteHeader(code)
}

func (w *closeUnread) Write(b []byte) (int, error) {
	w.check()
	return w.ResponseWriter.Write(b)
}

func (w *closeUnread) Flush() {
	w.check()
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *closeUnread) Unwrap() http.ResponseWriter { return w.ResponseWriter }
