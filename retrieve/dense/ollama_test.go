package dense_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/retrieve/dense"
)

var (
	_ dense.Embedder      = (*dense.Ollama)(nil)
	_ dense.QueryEmbedder = (*dense.Ollama)(nil)
	_ dense.Embedder      = dense.HashEmbedder{}
)

// embedRequest is the /api/embed request body as Ollama's server reads it.
type embedRequest struct {
	Model      string          `json:"model"`
	Input      []string        `json:"input"`
	Truncate   *bool           `json:"truncate"`
	KeepAlive  json.RawMessage `json:"keep_alive"`
	Options    map[string]any  `json:"options"`
	Dimensions int             `json:"dimensions"`
}

// fakeOllama serves POST /api/embed with reply, counting requests. reply
// gets the decoded request and the 1-based request number.
func fakeOllama(t *testing.T, reply func(w http.ResponseWriter, req embedRequest, n int)) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var count atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(count.Add(1))
		if r.Method != http.MethodPost || r.URL.Path != "/api/embed" {
			t.Errorf("request %s %s, want POST /api/embed", r.Method, r.URL.Path)
			http.NotFound(w, r)
			return
		}
		var req embedRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			t.Errorf("decode request: %v", err)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		reply(w, req, n)
	}))
	t.Cleanup(srv.Close)
	return srv, &count
}

// vectors returns dim-dimensional vectors that encode the input's index.
func vectors(inputs []string, dim int) [][]float32 {
	out := make([][]float32, len(inputs))
	for i, s := range inputs {
		v := make([]float32, dim)
		v[0] = float32(len(s))
		v[1%dim] += float32(i + 1)
		out[i] = v
	}
	return out
}

// okReply answers like Ollama: the real response fields.
func okReply(dim int) func(http.ResponseWriter, embedRequest, int) {
	return func(w http.ResponseWriter, req embedRequest, _ int) {
		json.NewEncoder(w).Encode(map[string]any{
			"model":             req.Model,
			"embeddings":        vectors(req.Input, dim),
			"total_duration":    14143917,
			"load_duration":     1019500,
			"prompt_eval_count": 8 * len(req.Input),
		})
	}
}

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "ollama", name))
	require.NoError(t, err)
	return b
}

func fixedReply(code int, body []byte) func(http.ResponseWriter, embedRequest, int) {
	return func(w http.ResponseWriter, _ embedRequest, _ int) {
		w.WriteHeader(code)
		w.Write(body)
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	require.NoError(t, err)
	return u
}

func newOllama(t *testing.T, base string, opts dense.OllamaOptions) *dense.Ollama {
	t.Helper()
	opts.BaseURL = mustURL(t, base)
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{}
	}
	if opts.Backoff == 0 {
		opts.Backoff = time.Millisecond
	}
	o, err := dense.NewOllama(opts)
	require.NoError(t, err)
	return o
}

// closedAddr returns the URL of a port nobody listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return "http://" + addr
}

func TestOllamaEmbed(t *testing.T) {
	texts := []string{"attention is all you need", "bert"}
	tests := []struct {
		name     string
		reply    func(http.ResponseWriter, embedRequest, int)
		opts     dense.OllamaOptions
		timeout  time.Duration
		wantErr  []error // errors.Is targets; nil means success
		wantCode int     // StatusError code, 0 = none
		wantReqs int     // requests the server must see
	}{
		{name: "ok", reply: okReply(8), wantReqs: 1},
		{name: "fixture shapes", reply: fixedReply(200, nil), wantReqs: 1}, // replaced below
		{name: "model not found", reply: fixedReply(404, nil), wantErr: []error{dense.ErrEmbedder}, wantCode: 404, wantReqs: 1},
		{
			name: "500 retried then StatusError", reply: fixedReply(500, nil), opts: dense.OllamaOptions{Retries: 2},
			wantErr: []error{dense.ErrEmbedder}, wantCode: 500, wantReqs: 3,
		},
		{
			name: "500 then ok", wantReqs: 2,
			reply: func(w http.ResponseWriter, req embedRequest, n int) {
				if n == 1 {
					w.WriteHeader(http.StatusServiceUnavailable)
					w.Write([]byte(`{"error":"server busy"}`))
					return
				}
				okReply(8)(w, req, n)
			},
		},
		{name: "no retries", reply: fixedReply(500, nil), opts: dense.OllamaOptions{Retries: -1}, wantErr: []error{dense.ErrEmbedder}, wantCode: 500, wantReqs: 1},
		{name: "malformed JSON", reply: fixedReply(200, []byte(`{"model":"x","embeddings":[[0.1,`)), wantErr: []error{dense.ErrEmbedder}, wantReqs: 1},
		{name: "non-JSON 500 body", reply: fixedReply(502, []byte("Bad Gateway")), opts: dense.OllamaOptions{Retries: -1}, wantErr: []error{dense.ErrEmbedder}, wantCode: 502, wantReqs: 1},
		{
			name: "wrong vector count", wantErr: []error{dense.ErrEmbedder}, wantReqs: 1,
			reply: func(w http.ResponseWriter, req embedRequest, n int) {
				okReply(8)(w, embedRequest{Model: req.Model, Input: req.Input[:1]}, n)
			},
		},
		{name: "wrong dimension", reply: okReply(8), opts: dense.OllamaOptions{Dim: 768}, wantErr: []error{dense.ErrEmbedder}, wantReqs: 1},
		{
			name: "ragged dimensions", wantErr: []error{dense.ErrEmbedder}, wantReqs: 1,
			reply: func(w http.ResponseWriter, _ embedRequest, _ int) {
				w.Write([]byte(`{"model":"m","embeddings":[[1,2,3],[1,2]]}`))
			},
		},
		{
			name: "slow reply past deadline", timeout: 50 * time.Millisecond, wantReqs: 1,
			wantErr: []error{dense.ErrEmbedder, context.DeadlineExceeded},
			reply: func(w http.ResponseWriter, req embedRequest, n int) {
				time.Sleep(300 * time.Millisecond)
				okReply(8)(w, req, n)
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reply := tc.reply
			if tc.name == "fixture shapes" {
				reply = fixedReply(200, fixture(t, "embed_ok.json"))
			}
			if tc.name == "model not found" {
				reply = fixedReply(404, fixture(t, "model_not_found.json"))
			}
			if tc.name == "500 retried then StatusError" {
				reply = fixedReply(500, fixture(t, "server_error.json"))
			}
			srv, count := fakeOllama(t, reply)
			o := newOllama(t, srv.URL, tc.opts)
			ctx := t.Context()
			if tc.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.timeout)
				defer cancel()
			}
			vecs, err := o.Embed(ctx, texts)
			assert.Equal(t, tc.wantReqs, int(count.Load()), "requests")
			if tc.wantErr == nil {
				require.NoError(t, err)
				require.Len(t, vecs, len(texts))
				assert.Equal(t, len(vecs[0]), o.Dim(), "dimension learnt")
				return
			}
			require.Error(t, err)
			for _, target := range tc.wantErr {
				require.ErrorIs(t, err, target)
			}
			var se *dense.StatusError
			if tc.wantCode != 0 {
				require.ErrorAs(t, err, &se)
				assert.Equal(t, tc.wantCode, se.Code)
				assert.NotEmpty(t, se.Body)
			} else {
				assert.False(t, errors.As(err, &se), "unexpected StatusError %v", err)
			}
		})
	}

	t.Run("404 message", func(t *testing.T) {
		srv, _ := fakeOllama(t, fixedReply(404, fixture(t, "model_not_found.json")))
		_, err := newOllama(t, srv.URL, dense.OllamaOptions{}).Embed(t.Context(), texts)
		var se *dense.StatusError
		require.ErrorAs(t, err, &se)
		assert.Equal(t, `model "nomic-embed-text" not found, try pulling it first`, se.Body)
	})

	t.Run("connection refused retried with bounded backoff", func(t *testing.T) {
		o := newOllama(t, closedAddr(t), dense.OllamaOptions{Retries: 3, Backoff: 20 * time.Millisecond})
		start := time.Now()
		_, err := o.Embed(t.Context(), texts)
		elapsed := time.Since(start)
		require.ErrorIs(t, err, dense.ErrEmbedder)
		// 20 + 40 + 80 ms of backoff, deterministic, then give up.
		assert.GreaterOrEqual(t, elapsed, 140*time.Millisecond)
		assert.Less(t, elapsed, 2*time.Second)
		assert.Contains(t, err.Error(), "after 3 retries")
	})

	t.Run("backoff capped", func(t *testing.T) {
		srv, count := fakeOllama(t, fixedReply(500, []byte(`{"error":"boom"}`)))
		// 100 retries are capped at MaxOllamaRetries; the deadline ends the
		// 1h backoff (capped at MaxOllamaBackoff) long before it is over.
		o := newOllama(t, srv.URL, dense.OllamaOptions{Retries: 100, Backoff: time.Hour})
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := o.Embed(ctx, texts)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.ErrorIs(t, err, dense.ErrEmbedder)
		assert.Less(t, time.Since(start), time.Second)
		assert.Equal(t, int32(1), count.Load())
	})

	t.Run("ContextCanceled", func(t *testing.T) {
		started := make(chan struct{})
		srv, _ := fakeOllama(t, func(w http.ResponseWriter, req embedRequest, n int) {
			close(started)
			time.Sleep(200 * time.Millisecond)
			okReply(8)(w, req, n)
		})
		o := newOllama(t, srv.URL, dense.OllamaOptions{})
		ctx, cancel := context.WithCancel(t.Context())
		go func() { <-started; cancel() }()
		_, err := o.Embed(ctx, texts)
		require.ErrorIs(t, err, context.Canceled)
		require.ErrorIs(t, err, dense.ErrEmbedder)

		_, err = o.Embed(ctx, texts) // already cancelled: no request at all
		require.ErrorIs(t, err, context.Canceled)
	})
}

func TestOllamaRequest(t *testing.T) {
	var got []embedRequest
	srv, _ := fakeOllama(t, func(w http.ResponseWriter, req embedRequest, n int) {
		got = append(got, req) // requests are sequential
		okReply(4)(w, req, n)
	})
	no := false
	o := newOllama(t, srv.URL, dense.OllamaOptions{
		Model: "nomic-embed-text:v1.5", KeepAlive: 10 * time.Minute, Truncate: &no,
		BatchSize: 2, Options: map[string]any{"num_ctx": 2048, "temperature": 0},
	})
	texts := []string{"a", "bb", "ccc", "dddd", "eeeee"}
	vecs, err := o.Embed(t.Context(), texts)
	require.NoError(t, err)
	require.Len(t, vecs, 5)
	for i, v := range vecs {
		// the fake puts len(prefixed input) in v[0]: order is kept
		assert.Equal(t, float32(len("search_document: "+texts[i])), v[0])
	}
	require.Len(t, got, 3, "5 texts in batches of 2")
	r := got[0]
	assert.Equal(t, "nomic-embed-text:v1.5", r.Model)
	assert.Equal(t, []string{"search_document: a", "search_document: bb"}, r.Input)
	require.NotNil(t, r.Truncate)
	assert.False(t, *r.Truncate)
	assert.JSONEq(t, `"10m0s"`, string(r.KeepAlive))
	assert.Equal(t, map[string]any{"num_ctx": 2048.0, "temperature": 0.0}, r.Options, "zero values are sent")
	assert.Zero(t, r.Dimensions)

	q, err := o.EmbedQuery(t.Context(), "what")
	require.NoError(t, err)
	assert.Equal(t, float32(len("search_query: what")), q[0])
	assert.Equal(t, []string{"search_query: what"}, got[3].Input)

	assert.Contains(t, o.Model(), "ollama:nomic-embed-text:v1.5#", "options are part of the model id")
}

func TestOllamaDefaults(t *testing.T) {
	var got embedRequest
	srv, _ := fakeOllama(t, func(w http.ResponseWriter, req embedRequest, n int) {
		got = req
		okReply(4)(w, req, n)
	})
	// BaseURL nil: OLLAMA_HOST, read exactly as ollama reads it.
	t.Setenv("OLLAMA_HOST", srv.Listener.Addr().String())
	o, err := dense.NewOllama(dense.OllamaOptions{HTTPClient: srv.Client()})
	require.NoError(t, err)
	assert.Equal(t, "ollama:nomic-embed-text", o.Model())
	assert.Zero(t, o.Dim(), "unknown before the first reply")
	_, err = o.Embed(t.Context(), []string{"x"})
	require.NoError(t, err)
	assert.Equal(t, 4, o.Dim())
	require.NotNil(t, got.Truncate)
	assert.True(t, *got.Truncate, "truncate defaults to true")
	assert.Empty(t, got.KeepAlive, "server default keep-alive")

	other, err := dense.NewOllama(dense.OllamaOptions{Model: "all-minilm", Prefixes: &dense.Prefixes{}})
	require.NoError(t, err)
	assert.Equal(t, "ollama:all-minilm", other.Model(), "no known prefixes: the plain id")

	_, err = dense.NewOllama(dense.OllamaOptions{BaseURL: mustURL(t, "ftp://x")})
	require.Error(t, err)
}

// TestOllamaReal talks to a real Ollama server; it runs only when
// OLLAMA_HOST is set, with the model in CITEFIND_EMBED_MODEL (default
// nomic-embed-text, which must be pulled).
func TestOllamaReal(t *testing.T) {
	if os.Getenv("OLLAMA_HOST") == "" {
		t.Skip("OLLAMA_HOST not set")
	}
	model := os.Getenv("CITEFIND_EMBED_MODEL")
	o, err := dense.NewOllama(dense.OllamaOptions{Model: model, KeepAlive: time.Minute})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	vecs, err := o.Embed(ctx, []string{"Attention is all you need", "BERT: pre-training of deep bidirectional transformers"})
	require.NoError(t, err)
	require.Len(t, vecs, 2)
	assert.Positive(t, o.Dim())
	q, err := o.EmbedQuery(ctx, "transformer language model pre-training")
	require.NoError(t, err)
	assert.Len(t, q, o.Dim())
}

// TestOllamaQueryVector checks that QueryVector embeds a paragraph and its
// citing sentences in one request, both with the model's query prefix,
// and passes a failure on.
func TestOllamaQueryVector(t *testing.T) {
	var mu sync.Mutex
	var inputs [][]string
	srv, count := fakeOllama(t, func(w http.ResponseWriter, req embedRequest, n int) {
		mu.Lock()
		inputs = append(inputs, req.Input)
		mu.Unlock()
		okReply(8)(w, req, n)
	})
	o := newOllama(t, srv.URL, dense.OllamaOptions{Model: "nomic-embed-text"})
	v, err := dense.QueryVector(t.Context(), o, "Sparse methods dominate. Dense retrieval [12] uses dual encoders.")
	require.NoError(t, err)
	assert.Len(t, v, 8)
	assert.EqualValues(t, 1, count.Load())
	q := dense.KnownPrefixes("nomic-embed-text").Query
	require.NotEmpty(t, q)
	assert.Equal(t, [][]string{{q + "Sparse methods dominate. Dense retrieval uses dual encoders.", q + "Dense retrieval uses dual encoders."}}, inputs)

	failing, _ := fakeOllama(t, fixedReply(500, fixture(t, "server_error.json")))
	o = newOllama(t, failing.URL, dense.OllamaOptions{Model: "nomic-embed-text", Retries: -1})
	_, err = dense.QueryVector(t.Context(), o, "Sparse methods dominate. Dense retrieval [12] uses dual encoders.")
	require.ErrorIs(t, err, dense.ErrEmbedder)
	assert.Contains(t, err.Error(), "dense: embed query")
}
