// Package llm is the Ollama chat plumbing that the LLM reranker (package
// rerank) and the picker (package selector) share: deterministic,
// non-streaming requests, the reply's JSON found in prose, random
// candidate IDs, and text cleaning for prompts and warnings.
//
//	c, err := llm.New(nil, llm.Options{Model: llm.Model(flagLLM)}, llm.Defaults{Window: 30})
//	reply, err := c.Ask(ctx, system, user, schema)
//	raw, ok := llm.ExtractJSON(reply, nil)
package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"strings"
	"time"

	"github.com/ollama/ollama/api"
)

const (
	// DefaultModel is the Ollama chat model used when neither --llm nor
	// CITEFIND_LLM names one: a small instruct model.
	DefaultModel = "qwen2.5:3b"
	// DefaultSeed is the sampling seed sent to the model.
	DefaultSeed = 42
)

// EnvModel is the environment variable naming the Ollama chat model.
const EnvModel = "CITEFIND_LLM"

// Model returns the chat model to use: flag when not empty, else
// $CITEFIND_LLM when set, else DefaultModel.
func Model(flag string) string {
	if flag != "" {
		return flag
	}
	if m := os.Getenv(EnvModel); m != "" {
		return m
	}
	return DefaultModel
}

// Options configure the chat calls of the LLM reranker and the picker.
// Zero fields take the caller's Defaults, the model DefaultModel and
// the seed DefaultSeed.
type Options struct {
	// Model is the Ollama chat model, with optional tag. "" means
	// DefaultModel (see Model for the flag/environment rule).
	Model string
	// Window is how many of the top candidates the model reorders, >= 0.
	// Candidates after the window keep their fused order after the
	// reordered ones. 0 means the caller's default.
	Window int
	// AbstractChars is how many runes of each abstract the prompt shows
	// (cut at a word boundary, marked "…"). 0 means the caller's default; negative shows no abstract.
	AbstractChars int
	// Seed is the model's sampling seed ("options.seed"). 0 means
	// DefaultSeed. With temperature 0 it makes replies repeatable on one
	// server and model.
	Seed int
	// Timeout bounds each call to the model, from when Rerank starts. A
	// call that exceeds it falls back to the fused order. 0 means the caller's default; negative means only ctx's deadline.
	Timeout time.Duration
	// KeepAlive is how long the server keeps the model loaded after a
	// request. 0 means the server's default (5 min); negative, forever.
	KeepAlive time.Duration
	// Options are extra model options sent in "options", e.g.
	// {"num_ctx": 8192}. "temperature" and "seed" are always set from
	// this struct (0 and Seed) and cannot be overridden here.
	Options map[string]any
	// IDSeed fixes the candidate IDs shown to the model (see RandomIDs).
	// 0, the default, draws new IDs on every call; tests and golden files
	// set it.
	IDSeed uint64
}

// Config holds the resolved settings of deterministic Ollama chat calls
// over a window of candidates, shared by the LLM reranker and the picker
// (package selector).
type Config struct {
	Client        *api.Client
	Model         string
	Window        int
	AbstractChars int
	Timeout       time.Duration
	KeepAlive     *api.Duration // nil: the server's default
	Options       map[string]any
	IDSeed        uint64
}

// Defaults are the values New uses for zero Options fields
// besides the model and seed, which default to DefaultModel and
// DefaultSeed.
type Defaults struct {
	Window        int
	AbstractChars int
	Timeout       time.Duration
}

// New resolves opts against defaults. A nil client means
// api.ClientFromEnvironment (OLLAMA_HOST, default http://127.0.0.1:11434;
// "http://host" without a port means port 80). It does not contact the
// server.
func New(client *api.Client, opts Options, d Defaults) (Config, error) {
	if opts.Window < 0 {
		return Config{}, fmt.Errorf("negative window %d", opts.Window)
	}
	if client == nil {
		var err error
		if client, err = api.ClientFromEnvironment(); err != nil {
			return Config{}, err
		}
	}
	c := Config{Client: client, Model: opts.Model, Window: opts.Window, AbstractChars: opts.AbstractChars,
		Timeout: opts.Timeout, IDSeed: opts.IDSeed}
	if c.Model == "" {
		c.Model = DefaultModel
	}
	if c.Window == 0 {
		c.Window = d.Window
	}
	if c.AbstractChars == 0 {
		c.AbstractChars = d.AbstractChars
	}
	if c.Timeout == 0 {
		c.Timeout = d.Timeout
	}
	seed := opts.Seed
	if seed == 0 {
		seed = DefaultSeed
	}
	if opts.KeepAlive != 0 {
		c.KeepAlive = &api.Duration{Duration: opts.KeepAlive}
	}
	c.Options = ModelOptions(opts.Options, seed)
	return c, nil
}

// ModelOptions returns the "options" map of a deterministic request:
// a copy of extra with "temperature" 0 and "seed" set. It is a map, not
// api.Options, because api.Options drops a zero temperature.
func ModelOptions(extra map[string]any, seed int) map[string]any {
	o := make(map[string]any, len(extra)+2)
	maps.Copy(o, extra)
	o["temperature"] = 0
	o["seed"] = seed
	return o
}

// Ask sends one deterministic, non-streaming chat request (system and
// user messages, the JSON schema format) with the configured model,
// options and keep-alive, and returns the reply's content (see Chat).
func (c Config) Ask(ctx context.Context, system, user string, format json.RawMessage) (string, error) {
	stream := false
	req := &api.ChatRequest{
		Model: c.Model,
		Messages: []api.Message{
			{Role: "system", Content: system},
			{Role: "user", Content: user},
		},
		Stream:    &stream,
		Format:    format,
		Options:   c.Options,
		KeepAlive: c.KeepAlive,
	}
	return Chat(ctx, c.Client, req, c.Timeout)
}

// MaxShown bounds how much of a bad reply a warning quotes.
const MaxShown = 200

// Chat sends req and returns the assistant's content, concatenated over
// chunks if the server streams anyway. timeout > 0 bounds the call. A
// reply that ends without "done" (a dropped connection) is an error;
// HTTP errors keep the server's message ("404: model \"x\" not found, try
// pulling it first").
func Chat(ctx context.Context, client *api.Client, req *api.ChatRequest, timeout time.Duration) (string, error) {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	var b strings.Builder
	done := false
	err := client.Chat(ctx, req, func(r api.ChatResponse) error {
		b.WriteString(r.Message.Content)
		done = done || r.Done
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("ollama chat %s: %w", req.Model, errors.Join(ctx.Err(), err))
		}
		var se api.StatusError
		if errors.As(err, &se) {
			msg := se.ErrorMessage
			if msg == "" {
				msg = se.Status
			}
			return "", fmt.Errorf("ollama chat %s: HTTP %d: %s", req.Model, se.StatusCode, Shorten(msg, MaxShown))
		}
		msg := Shorten(err.Error(), MaxShown)
		if msg == "" {
			msg = "unreadable reply"
		}
		return "", fmt.Errorf("ollama chat %s: %s", req.Model, msg)
	}
	if !done {
		return "", fmt.Errorf("ollama chat %s: the reply ended before the model was done", req.Model)
	}
	return b.String(), nil
}

// Shorten cleans s and cuts it to n runes for a warning.
func Shorten(s string, n int) string { return TruncateText(s, n) }
