package weaviate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

// Retry policy of every request: up to maxAttempts attempts, waiting
// backoffBase·2^i (±25% jitter, at most backoffMax) between them, while
// ctx allows. Transport errors, 5xx, 429 and GraphQL errors are retried;
// other 4xx are not.
const (
	maxAttempts = 5
	// writeAttempts is the attempts of a write (about 16 s in all): long
	// enough for Weaviate to notice a node that died and stop counting
	// its replicas.
	writeAttempts = 8
	backoffBase   = 200 * time.Millisecond
	backoffMax    = 5 * time.Second
)

// StatusError is a Weaviate answer with an unexpected HTTP status.
type StatusError struct {
	Method, Path string
	Code         int
	Body         string // the start of the response body
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s %s: status %d: %s", e.Method, e.Path, e.Code, e.Body)
}

// Unwrap lets errors.Is match ErrUnavailable for 5xx and 429.
func (e *StatusError) Unwrap() error {
	if e.Code >= 500 || e.Code == http.StatusTooManyRequests {
		return ErrUnavailable
	}
	return nil
}

// client speaks Weaviate's REST and GraphQL API with retries. With several
// nodes' addresses, an attempt that fails (transport error, timeout, 5xx,
// 429, a GraphQL error) moves the client to the next node for the retry
// and for the requests after it; a read that has not answered after hedge
// is sent to the next node as well, and the first answer wins.
type client struct {
	bases []string // http://HOST:PORT of each node, in the URL's order
	next  atomic.Uint32
	hedge time.Duration // 0: no hedged reads
	hc    *http.Client
}

func newClient(addrs []string, hedge time.Duration, hc *http.Client) *client {
	if hc == nil {
		hc = &http.Client{Transport: &http.Transport{
			Proxy:               nil, // loopback and cluster-internal addresses: no proxy
			MaxIdleConns:        64,
			MaxIdleConnsPerHost: 64,
			IdleConnTimeout:     90 * time.Second,
		}}
	}
	c := &client{hc: hc, hedge: hedge}
	for _, a := range addrs {
		c.bases = append(c.bases, "http://"+a)
	}
	return c
}

// pick returns the index of the node the next attempt goes to.
func (c *client) pick() int { return int(c.next.Load() % uint32(len(c.bases))) }

// failed moves the client off node i after a failed attempt there (unless
// another request already moved it).
func (c *client) failed(i int) {
	if len(c.bases) > 1 {
		c.next.CompareAndSwap(uint32(i), uint32((i+1)%len(c.bases)))
	}
}

// retryable reports whether a failed attempt may succeed when repeated.
func retryable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var se *StatusError
	if errors.As(err, &se) {
		return se.Code >= 500 || se.Code == http.StatusTooManyRequests
	}
	return true // transport errors, per-attempt timeouts, GraphQL errors
}

// backoff waits before attempt i+1 (i ≥ 0); false when ctx ended first.
func backoff(ctx context.Context, i int) bool {
	d := backoffBase << i
	if d > backoffMax || d <= 0 {
		d = backoffMax
	}
	d = time.Duration(float64(d) * (0.75 + 0.5*rand.Float64()))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// do sends one request with retries; body (when not nil) is sent as JSON
// and the answer decoded into out (when not nil). Each attempt is bounded
// by timeout; GETs are hedged. 404 gives a *StatusError at once.
func (c *client) do(ctx context.Context, method, path string, body, out any, timeout time.Duration) error {
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return fmt.Errorf("encode %s %s: %w", method, path, err)
		}
	}
	attempts := maxAttempts
	if method != http.MethodGet {
		attempts = writeAttempts
	}
	var err error
	for i := range attempts {
		if i > 0 && !backoff(ctx, i-1) {
			break
		}
		var b []byte
		b, _, err = c.attempt(ctx, method, path, payload, timeout, method == http.MethodGet)
		if err == nil {
			if out != nil && len(b) > 0 {
				if err := json.Unmarshal(b, out); err != nil {
					return fmt.Errorf("%s %s: decode answer: %w (%s)", method, path, err, truncate(string(b), 200))
				}
			}
			return nil
		}
		if !retryable(err) || ctx.Err() != nil {
			return err
		}
	}
	if ctx.Err() != nil && err == nil {
		err = ctx.Err()
	}
	return fmt.Errorf("%w: %w (after %d attempts)", ErrUnavailable, err, attempts)
}

// attempt sends the request to the current node and returns the answer's
// body and the node that gave it. When hedged, there are several nodes and
// the node has not answered after c.hedge, the request goes to the next
// node too; the first success wins and the other is cancelled. A failed
// node is moved off (failed).
func (c *client) attempt(ctx context.Context, method, path string, payload []byte, timeout time.Duration, hedged bool) ([]byte, int, error) {
	first := c.pick()
	if !hedged || c.hedge <= 0 || len(c.bases) < 2 {
		b, err := c.once(ctx, c.bases[first], method, path, payload, timeout)
		if err != nil && retryable(err) {
			c.failed(first)
		}
		return b, first, err
	}
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	type answer struct {
		node int
		body []byte
		err  error
	}
	ch := make(chan answer, 2)
	send := func(node int) {
		b, err := c.once(actx, c.bases[node], method, path, payload, timeout)
		ch <- answer{node, b, err}
	}
	go send(first)
	t := time.NewTimer(c.hedge)
	defer t.Stop()
	pending, hedgedTo := 1, -1
	var firstErr error
	for pending > 0 {
		select {
		case <-t.C:
			if hedgedTo < 0 {
				hedgedTo = (first + 1) % len(c.bases)
				pending++
				go send(hedgedTo)
			}
		case a := <-ch:
			pending--
			if a.err == nil {
				if a.node != first {
					c.failed(first) // the hedge answered first: prefer its node
				}
				return a.body, a.node, nil
			}
			if retryable(a.err) {
				c.failed(a.node)
			}
			if firstErr == nil {
				firstErr = a.err
			}
			if hedgedTo < 0 && retryable(a.err) {
				// The first node failed before the hedge was due: the
				// caller's retry (after its backoff) goes to the next node.
				return nil, a.node, a.err
			}
		}
	}
	return nil, first, firstErr
}

func (c *client) once(ctx context.Context, base, method, path string, payload []byte, timeout time.Duration) ([]byte, error) {
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var rd io.Reader
	if payload != nil {
		rd = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(actx, method, base+path, rd)
	if err != nil {
		return nil, err
	}
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%s %s: read answer: %w", method, path, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, &StatusError{Method: method, Path: path, Code: resp.StatusCode, Body: truncate(string(b), 300)}
	}
	return b, nil
}

// gqlError is one entry of a GraphQL answer's "errors".
type gqlError struct {
	Message string `json:"message"`
}

// graphql runs a GraphQL query (a read: hedged) and decodes its "data"
// into out.
func (c *client) graphql(ctx context.Context, query string, out any, timeout time.Duration) error {
	payload := mustJSON(map[string]string{"query": query})
	var err error
	for i := range maxAttempts {
		if i > 0 && !backoff(ctx, i-1) {
			break
		}
		var b []byte
		var node int
		b, node, err = c.attempt(ctx, http.MethodPost, "/v1/graphql", payload, timeout, true)
		if err == nil {
			var permanent bool
			if permanent, err = decodeGraphQL(b, out); err == nil || permanent {
				return err
			}
			c.failed(node) // e.g. a coordinator that cannot reach a replica yet
			continue
		}
		if !retryable(err) || ctx.Err() != nil {
			return err
		}
	}
	if ctx.Err() != nil && err == nil {
		err = ctx.Err()
	}
	return fmt.Errorf("%w: %w (after %d attempts)", ErrUnavailable, err, maxAttempts)
}

// graphqlOnce runs a GraphQL query once, on the current node, without
// retries, hedging or moving the client to another node on failure: for
// a read that has a weaker fallback (a consistency level the cluster may
// not reach while a node is down).
func (c *client) graphqlOnce(ctx context.Context, query string, out any, timeout time.Duration) error {
	b, err := c.once(ctx, c.bases[c.pick()], http.MethodPost, "/v1/graphql", mustJSON(map[string]string{"query": query}), timeout)
	if err != nil {
		return err
	}
	_, err = decodeGraphQL(b, out)
	return err
}

// decodeGraphQL decodes a GraphQL answer's "data" into out (when not
// nil); an answer with "errors" is an error, permanent when repeating the
// query cannot fix it.
func decodeGraphQL(b []byte, out any) (permanent bool, err error) {
	var ans struct {
		Data   json.RawMessage `json:"data"`
		Errors []gqlError      `json:"errors"`
	}
	if err := json.Unmarshal(b, &ans); err != nil {
		return true, fmt.Errorf("POST /v1/graphql: decode answer: %w (%s)", err, truncate(string(b), 200))
	}
	if len(ans.Errors) > 0 {
		msgs := make([]string, 0, len(ans.Errors))
		for _, e := range ans.Errors {
			msgs = append(msgs, e.Message)
		}
		return permanentGraphQL(msgs), fmt.Errorf("graphql: %s", truncate(strings.Join(msgs, "; "), 500))
	}
	if out != nil {
		if err := json.Unmarshal(ans.Data, out); err != nil {
			return true, fmt.Errorf("graphql: decode data: %w", err)
		}
	}
	return false, nil
}

// permanentGraphQL reports GraphQL errors that repeating cannot fix: the
// query does not fit the schema.
func permanentGraphQL(msgs []string) bool {
	for _, m := range msgs {
		for _, s := range []string{"Cannot query field", "Unknown argument", "Syntax Error", "could not find class", "no such prop", "Argument \""} {
			if strings.Contains(m, s) {
				return true
			}
		}
	}
	return false
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only called with maps of strings
	}
	return b
}

// gqlString quotes s as a GraphQL string literal (JSON string syntax is
// valid GraphQL).
func gqlString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func truncate(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
