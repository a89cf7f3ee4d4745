// Package ollamatest is a scripted fake of the Ollama HTTP API for tests.
//
// It serves POST /api/chat the way a real Ollama server does: one JSON
// object when the request says "stream": false, newline-delimited JSON
// chunks otherwise (Ollama streams by default), and errors as
// {"error": "..."} with the real status codes. Every request is decoded
// and recorded so tests can assert what the client sent (stream, format,
// options, keep_alive). POST /api/embed is served too when an Embed
// function is configured.
//
//	srv := ollamatest.New(t, ollamatest.Queue(
//		ollamatest.Reply{Content: `{"ranking":["KDTQ","BXMR"]}`},
//		ollamatest.NotFound("qwen2.5:3b"),
//	))
//	client := srv.Client() // an *api.Client talking to the fake
//	...
//	req := srv.Requests()[0] // what the client sent
package ollamatest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/ollama/ollama/api"
)

// Request is one request as the server decoded it.
type Request struct {
	// N is the 1-based number of the request on this server (all paths).
	N int
	// Path is the URL path, e.g. "/api/chat".
	Path string
	// Body is the raw request body.
	Body []byte

	// Chat fields (see api.ChatRequest), decoded as the server reads them.
	Model    string
	Messages []api.Message
	// Stream is nil when the client left it out (Ollama then streams).
	Stream *bool
	// Format is the raw "format" value: "json", a JSON schema, or empty.
	Format json.RawMessage
	// Options is the "options" map as sent; numbers decode as float64.
	Options map[string]any
	// KeepAlive is the raw "keep_alive" value (e.g. "10m0s"), or empty.
	KeepAlive json.RawMessage
	// Think is the raw "think" value, or empty.
	Think json.RawMessage

	// Input is the "input" of an /api/embed request, as strings.
	Input []string
}

// Streaming reports whether the client asked for a streamed reply, which
// is Ollama's default when "stream" is absent.
func (r Request) Streaming() bool { return r.Stream == nil || *r.Stream }

// Reply is what the fake answers to one chat request. The zero value is a
// 200 with an empty assistant message.
type Reply struct {
	// Content is the assistant message content.
	Content string
	// Thinking is the assistant message's thinking text, if any.
	Thinking string
	// Status is the HTTP status; 0 means 200.
	Status int
	// Error, when set, makes the body {"error": Error} (with Status, or
	// 500 when Status is 0).
	Error string
	// Body, when set, is written verbatim instead of any JSON (for
	// malformed or truncated replies), with Status.
	Body string
	// Delay is how long the fake waits before answering. It stops waiting
	// when the client goes away.
	Delay time.Duration
	// DoneReason is the final "done_reason"; "" means "stop".
	DoneReason string
	// Chunk is the size in bytes of the content pieces of a streamed
	// reply; 0 means 8.
	Chunk int
}

// NotFound is the reply of a real server asked for a model it does not
// have: 404 {"error":"model \"NAME\" not found, try pulling it first"}.
func NotFound(model string) Reply {
	return Reply{Status: http.StatusNotFound, Error: fmt.Sprintf("model %q not found, try pulling it first", model)}
}

// ServerError is a 500 as a crashed runner produces it.
func ServerError() Reply {
	return Reply{Status: http.StatusInternalServerError, Error: "llama runner process has terminated: signal: killed"}
}

// Script decides the reply to each chat request. It runs on the server's
// goroutines, possibly concurrently; it must not call t.Fatal.
type Script func(req Request) Reply

// Fixed answers every request with r.
func Fixed(r Reply) Script { return func(Request) Reply { return r } }

// Content answers every request with a 200 carrying content.
func Content(content string) Script { return Fixed(Reply{Content: content}) }

// Queue answers the i-th chat request with replies[i-1], and with the last
// reply once the queue is used up. An empty queue answers empty replies.
func Queue(replies ...Reply) Script {
	var mu sync.Mutex
	i := 0
	return func(Request) Reply {
		mu.Lock()
		defer mu.Unlock()
		if len(replies) == 0 {
			return Reply{}
		}
		r := replies[min(i, len(replies)-1)]
		i++
		return r
	}
}

// EmbedFunc returns one vector per input of an /api/embed request.
type EmbedFunc func(model string, input []string) [][]float32

// Config configures NewServer.
type Config struct {
	// Chat scripts /api/chat. nil answers every chat with an empty reply.
	Chat Script
	// Embed serves /api/embed. nil means /api/embed is a 404.
	Embed EmbedFunc
}

// Server is a running fake. Close happens through t.Cleanup.
type Server struct {
	*httptest.Server
	cfg Config

	mu   sync.Mutex
	reqs []Request
}

// New starts a fake whose /api/chat follows chat.
func New(t testing.TB, chat Script) *Server { return NewServer(t, Config{Chat: chat}) }

// NewServer starts a fake with cfg and closes it when the test ends.
func NewServer(t testing.TB, cfg Config) *Server {
	t.Helper()
	s := &Server{cfg: cfg}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// BaseURL returns the server's base URL.
func (s *Server) BaseURL() *url.URL {
	u, err := url.Parse(s.Server.URL)
	if err != nil {
		panic(err) // httptest URLs always parse
	}
	return u
}

// Client returns an Ollama API client talking to the fake.
func (s *Server) Client() *api.Client { return api.NewClient(s.BaseURL(), s.Server.Client()) }

// Requests returns a copy of the requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Count returns the number of requests received so far.
func (s *Server) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.reqs)
}

// wire is the request body as Ollama's server reads it.
type wire struct {
	Model     string          `json:"model"`
	Messages  []api.Message   `json:"messages"`
	Stream    *bool           `json:"stream"`
	Format    json.RawMessage `json:"format"`
	Options   map[string]any  `json:"options"`
	KeepAlive json.RawMessage `json:"keep_alive"`
	Think     json.RawMessage `json:"think"`
	Input     json.RawMessage `json:"input"`
}

func (s *Server) record(r *http.Request) (Request, error) {
	req := Request{Path: r.URL.Path}
	var body []byte
	if r.Body != nil {
		var err error
		body, err = readAll(r)
		if err != nil {
			return req, err
		}
	}
	req.Body = body
	var w wire
	decodeErr := json.Unmarshal(body, &w)
	if decodeErr == nil {
		req.Model, req.Messages, req.Stream, req.Format = w.Model, w.Messages, w.Stream, w.Format
		req.Options, req.KeepAlive, req.Think = w.Options, w.KeepAlive, w.Think
		if len(w.Input) > 0 {
			var one string
			if json.Unmarshal(w.Input, &one) == nil {
				req.Input = []string{one}
			} else if err := json.Unmarshal(w.Input, &req.Input); err != nil {
				decodeErr = err
			}
		}
	}
	s.mu.Lock()
	req.N = len(s.reqs) + 1
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()
	return req, decodeErr
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || (r.URL.Path != "/api/chat" && r.URL.Path != "/api/embed") {
		http.NotFound(w, r)
		return
	}
	req, err := s.record(r)
	if err != nil {
		// What Ollama's gin handlers answer to an undecodable body.
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	if req.Model == "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "model is required"})
		return
	}
	if r.URL.Path == "/api/embed" {
		s.embed(w, req)
		return
	}
	rep := Reply{}
	if s.cfg.Chat != nil {
		rep = s.cfg.Chat(req)
	}
	if rep.Delay > 0 {
		t := time.NewTimer(rep.Delay)
		select {
		case <-r.Context().Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
	status := rep.Status
	switch {
	case rep.Body != "":
		if status == 0 {
			status = http.StatusOK
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(rep.Body))
	case rep.Error != "":
		if status == 0 {
			status = http.StatusInternalServerError
		}
		writeJSON(w, status, map[string]string{"error": rep.Error})
	case status != 0 && status != http.StatusOK:
		writeJSON(w, status, map[string]string{"error": http.StatusText(status)})
	case req.Streaming():
		s.stream(w, req, rep)
	default:
		writeJSON(w, http.StatusOK, final(req.Model, rep, rep.Content))
	}
}

// response is the JSON shape of one /api/chat reply object.
type response struct {
	Model      string      `json:"model"`
	CreatedAt  time.Time   `json:"created_at"`
	Message    api.Message `json:"message"`
	Done       bool        `json:"done"`
	DoneReason string      `json:"done_reason,omitempty"`

	TotalDuration      int64 `json:"total_duration,omitempty"`
	LoadDuration       int64 `json:"load_duration,omitempty"`
	PromptEvalCount    int   `json:"prompt_eval_count,omitempty"`
	PromptEvalDuration int64 `json:"prompt_eval_duration,omitempty"`
	EvalCount          int   `json:"eval_count,omitempty"`
	EvalDuration       int64 `json:"eval_duration,omitempty"`
}

// created is a fixed timestamp so that replies are deterministic.
var created = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func final(model string, rep Reply, content string) response {
	reason := rep.DoneReason
	if reason == "" {
		reason = "stop"
	}
	return response{
		Model: model, CreatedAt: created,
		Message: api.Message{Role: "assistant", Content: content, Thinking: rep.Thinking},
		Done:    true, DoneReason: reason,
		TotalDuration: 5_043_500_000, LoadDuration: 5_025_959, PromptEvalCount: 26,
		PromptEvalDuration: 325_953_000, EvalCount: 290, EvalDuration: 4_709_213_000,
	}
}

func (s *Server) stream(w http.ResponseWriter, req Request, rep Reply) {
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	enc := json.NewEncoder(w)
	chunk := rep.Chunk
	if chunk <= 0 {
		chunk = 8
	}
	content := rep.Content
	for len(content) > 0 {
		n := min(chunk, len(content))
		part := response{Model: req.Model, CreatedAt: created, Message: api.Message{Role: "assistant", Content: content[:n]}}
		if err := enc.Encode(part); err != nil {
			return
		}
		content = content[n:]
	}
	last := final(req.Model, rep, "")
	last.Message.Thinking = ""
	_ = enc.Encode(last)
}

func (s *Server) embed(w http.ResponseWriter, req Request) {
	if s.cfg.Embed == nil {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": fmt.Sprintf("model %q not found, try pulling it first", req.Model)})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"model":             req.Model,
		"embeddings":        s.cfg.Embed(req.Model, req.Input),
		"total_duration":    14143917,
		"load_duration":     1019500,
		"prompt_eval_count": 8 * len(req.Input),
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func readAll(r *http.Request) ([]byte, error) {
	defer r.Body.Close()
	return io.ReadAll(r.Body)
}
