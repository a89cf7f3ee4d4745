package dense

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/envconfig"
)

// Defaults for OllamaOptions.
const (
	DefaultOllamaModel     = "nomic-embed-text"
	DefaultOllamaRetries   = 3
	DefaultOllamaBackoff   = 200 * time.Millisecond
	DefaultOllamaBatchSize = 64
	// MaxOllamaRetries caps OllamaOptions.Retries.
	MaxOllamaRetries = 10
	// MaxOllamaBackoff caps one wait between two tries.
	MaxOllamaBackoff = 5 * time.Second
)

// Prefixes are the instructions some embedding models expect in front of
// the text: one for documents (papers) and one for queries.
type Prefixes struct {
	Document string // e.g. "search_document: "
	Query    string // e.g. "search_query: "
}

// KnownPrefixes returns the prefixes that the model's authors prescribe for
// retrieval, by model family (the name without registry path and tag):
// nomic-embed-text uses "search_document: " / "search_query: ";
// mxbai-embed-large and snowflake-arctic-embed prefix queries with
// "Represent this sentence for searching relevant passages: "; other models
// get none.
func KnownPrefixes(model string) Prefixes {
	name := model
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	name, _, _ = strings.Cut(name, ":")
	switch name {
	case "nomic-embed-text":
		return Prefixes{Document: "search_document: ", Query: "search_query: "}
	case "mxbai-embed-large", "snowflake-arctic-embed", "snowflake-arctic-embed2":
		return Prefixes{Query: "Represent this sentence for searching relevant passages: "}
	}
	return Prefixes{}
}

// OllamaOptions configure NewOllama. The zero value embeds with
// nomic-embed-text on the server named by OLLAMA_HOST (default
// http://127.0.0.1:11434).
type OllamaOptions struct {
	// Model is the Ollama model name, with optional tag. "" means
	// DefaultOllamaModel (nomic-embed-text).
	Model string
	// BaseURL is the server. nil means ollama's own reading of the
	// OLLAMA_HOST environment variable (envconfig.Host): unset means
	// http://127.0.0.1:11434; "host" or "host:port" means http with port
	// 11434 by default; an explicit "http://host" means port 80 and
	// "https://host" port 443 (not 11434!); "ollama.com" means
	// https://ollama.com:443; a path after the host is kept.
	BaseURL *url.URL
	// HTTPClient sends the requests. nil means http.DefaultClient. Set no
	// client timeout: deadlines come from the context of each call.
	HTTPClient *http.Client
	// KeepAlive is how long the server keeps the model loaded after a
	// request. 0 means the server's default (5 minutes); negative means
	// forever.
	KeepAlive time.Duration
	// Truncate makes the server cut inputs longer than the model's context
	// instead of failing. nil means true.
	Truncate *bool
	// Dim is the expected dimension. 0 means learn it from the first reply
	// and enforce it from then on. A reply of another dimension fails with
	// ErrEmbedder.
	Dim int
	// Retries is how many times a request is retried after a refused
	// connection, a reset connection or a 5xx status. 0 means
	// DefaultOllamaRetries (3); negative means none; capped at
	// MaxOllamaRetries. 4xx statuses, malformed replies and context errors
	// are never retried.
	Retries int
	// Backoff is the wait before the first retry; each further retry waits
	// twice as long, capped at MaxOllamaBackoff, without jitter (one local
	// client does not need it). 0 means DefaultOllamaBackoff (200 ms), so
	// the default worst case is 0.2+0.4+0.8 = 1.4 s of waiting.
	Backoff time.Duration
	// BatchSize is the number of texts per /api/embed request. 0 means
	// DefaultOllamaBatchSize (64).
	BatchSize int
	// Options are model options sent as the request's "options" map, e.g.
	// {"num_ctx": 8192}. nil sends none. A map (not api.Options) so that
	// zero values are sent too.
	Options map[string]any
	// Prefixes override KnownPrefixes(Model). nil means the known ones;
	// &Prefixes{} means none.
	Prefixes *Prefixes
}

// Ollama embeds texts with an Ollama server's /api/embed endpoint. It is
// safe for concurrent use.
type Ollama struct {
	client    *api.Client
	model     string
	id        string
	keepAlive *api.Duration
	truncate  bool
	dim       atomic.Int64
	retries   int
	backoff   time.Duration
	batch     int
	options   map[string]any
	prefixes  Prefixes
}

// NewOllama returns an Ollama embedder. It does not contact the server.
func NewOllama(opts OllamaOptions) (*Ollama, error) {
	o := &Ollama{
		model:    opts.Model,
		truncate: true,
		retries:  opts.Retries,
		backoff:  opts.Backoff,
		batch:    opts.BatchSize,
		options:  opts.Options,
	}
	if o.model == "" {
		o.model = DefaultOllamaModel
	}
	if opts.Truncate != nil {
		o.truncate = *opts.Truncate
	}
	switch {
	case o.retries == 0:
		o.retries = DefaultOllamaRetries
	case o.retries < 0:
		o.retries = 0
	case o.retries > MaxOllamaRetries:
		o.retries = MaxOllamaRetries
	}
	if o.backoff <= 0 {
		o.backoff = DefaultOllamaBackoff
	}
	if o.batch <= 0 {
		o.batch = DefaultOllamaBatchSize
	}
	if opts.Dim < 0 {
		return nil, fmt.Errorf("new ollama embedder: negative Dim %d", opts.Dim)
	}
	o.dim.Store(int64(opts.Dim))
	if opts.KeepAlive != 0 {
		o.keepAlive = &api.Duration{Duration: opts.KeepAlive}
	}
	base := opts.BaseURL
	if base == nil {
		base = envconfig.Host()
	}
	if base.Scheme != "http" && base.Scheme != "https" || base.Host == "" {
		return nil, fmt.Errorf("new ollama embedder: base URL %q: want http(s)://host[:port]", base.String())
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	o.client = api.NewClient(base, hc)
	o.prefixes = KnownPrefixes(o.model)
	if opts.Prefixes != nil {
		o.prefixes = *opts.Prefixes
	}
	o.id = "ollama:" + o.model
	if len(o.options) > 0 || o.prefixes != KnownPrefixes(o.model) {
		// Settings that change the vectors are part of the id, so the
		// cache and the index never mix them up.
		b, err := json.Marshal(struct {
			Options  map[string]any `json:"options,omitempty"` // encoding/json sorts map keys
			Prefixes Prefixes       `json:"prefixes"`
		}{o.options, o.prefixes})
		if err != nil {
			return nil, fmt.Errorf("new ollama embedder: options: %w", err)
		}
		sum := sha256.Sum256(b)
		o.id += "#" + hex.EncodeToString(sum[:4])
	}
	return o, nil
}

// Model returns "ollama:" + the model name, e.g. "ollama:nomic-embed-text",
// followed by "#" and 8 hex digits of a hash when Options or non-default
// Prefixes are set.
func (o *Ollama) Model() string { return o.id }

// Dim returns the dimension: OllamaOptions.Dim, else the one learnt from
// the first reply, else 0.
func (o *Ollama) Dim() int { return int(o.dim.Load()) }

// Embed embeds document texts (each prefixed with Prefixes.Document) in
// requests of BatchSize texts. The context's deadline bounds all
// requests and retries.
func (o *Ollama) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return o.embedAll(ctx, o.prefixes.Document, texts)
}

// embedAll embeds texts, each prefixed with prefix, in requests of
// BatchSize texts.
func (o *Ollama) embedAll(ctx context.Context, prefix string, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += o.batch {
		end := min(start+o.batch, len(texts))
		vecs, err := o.embedBatch(ctx, prefix, texts[start:end])
		if err != nil {
			return nil, err
		}
		out = append(out, vecs...)
	}
	return out, nil
}

// EmbedQuery embeds one query, prefixed with Prefixes.Query.
func (o *Ollama) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	vecs, err := o.embedBatch(ctx, o.prefixes.Query, []string{text})
	if err != nil {
		return nil, err
	}
	return vecs[0], nil
}

// EmbedQueries embeds queries (each prefixed with Prefixes.Query) in
// requests of BatchSize texts, as Embed does documents.
func (o *Ollama) EmbedQueries(ctx context.Context, texts []string) ([][]float32, error) {
	return o.embedAll(ctx, o.prefixes.Query, texts)
}

func (o *Ollama) embedBatch(ctx context.Context, prefix string, texts []string) ([][]float32, error) {
	input := texts
	if prefix != "" {
		input = make([]string, len(texts))
		for i, t := range texts {
			input[i] = prefix + t
		}
	}
	truncate := o.truncate
	req := &api.EmbedRequest{
		Model:     o.model,
		Input:     input,
		KeepAlive: o.keepAlive,
		Truncate:  &truncate,
		Options:   o.options,
	}
	for attempt := 0; ; attempt++ {
		resp, err := o.client.Embed(ctx, req)
		if err == nil {
			return o.check(resp, len(texts))
		}
		if ctx.Err() != nil {
			return nil, embedErr("ollama embed", errors.Join(ctx.Err(), err))
		}
		err, retry := classify(err)
		if !retry || attempt >= o.retries {
			if attempt > 0 {
				return nil, embedErr(fmt.Sprintf("ollama embed (after %d retries)", attempt), err)
			}
			return nil, embedErr("ollama embed", err)
		}
		t := time.NewTimer(o.wait(attempt))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, embedErr("ollama embed", errors.Join(ctx.Err(), err))
		case <-t.C:
		}
	}
}

// wait is the backoff before retry attempt+1.
func (o *Ollama) wait(attempt int) time.Duration {
	d := o.backoff
	for range attempt {
		d *= 2
		if d >= MaxOllamaBackoff {
			return MaxOllamaBackoff
		}
	}
	return min(d, MaxOllamaBackoff)
}

// classify maps an api.Client error to ours and says whether to retry.
func classify(err error) (error, bool) {
	var se api.StatusError
	if errors.As(err, &se) {
		msg := se.ErrorMessage
		if msg == "" {
			msg = http.StatusText(se.StatusCode)
		}
		return &StatusError{Code: se.StatusCode, Body: msg}, se.StatusCode >= 500
	}
	var ae api.AuthorizationError
	if errors.As(err, &ae) {
		return &StatusError{Code: ae.StatusCode, Body: "unauthorized"}, false
	}
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) {
		return err, true
	}
	return err, false
}

// check validates a reply to n texts and learns or enforces the dimension.
func (o *Ollama) check(resp *api.EmbedResponse, n int) ([][]float32, error) {
	dim := int(o.dim.Load())
	if err := checkVectors(resp.Embeddings, n, dim); err != nil {
		return nil, fmt.Errorf("ollama embed %s: %w", o.model, err)
	}
	if dim == 0 && n > 0 {
		got := int64(len(resp.Embeddings[0]))
		if !o.dim.CompareAndSwap(0, got) && o.dim.Load() != got {
			return nil, fmt.Errorf("ollama embed %s: %w: dimension %d, want %d", o.model, ErrEmbedder, got, o.dim.Load())
		}
	}
	return resp.Embeddings, nil
}
