package rerank

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"strings"
	"text/template"
	"time"

	"github.com/ollama/ollama/api"
)

// Defaults for LLMOptions.
const (
	// DefaultLLMModel is the Ollama chat model used when neither
	// --llm nor CITEFIND_LLM names one: a small instruct model.
	DefaultLLMModel = "qwen2.5:3b"
	// DefaultWindow is how many of the top fused candidates the model
	// reorders.
	DefaultWindow = 30
	// DefaultAbstractChars is how much of each abstract the model sees,
	// in runes.
	DefaultAbstractChars = 300
	// DefaultLLMTimeout bounds one rerank call to the model.
	DefaultLLMTimeout = 2 * time.Minute
	// DefaultSeed is the sampling seed sent to the model.
	DefaultSeed = 42
)

// EnvLLM is the environment variable naming the Ollama chat model.
const EnvLLM = "CITEFIND_LLM"

// LLMModel returns the chat model to use: flag when not empty, else
// $CITEFIND_LLM when set, else DefaultLLMModel.
func LLMModel(flag string) string {
	if flag != "" {
		return flag
	}
	if m := os.Getenv(EnvLLM); m != "" {
		return m
	}
	return DefaultLLMModel
}

// LLMOptions configure NewLLM. The zero value reranks the top 30
// candidates with DefaultLLMModel, showing 300 runes of each abstract,
// at temperature 0 with seed 42, giving the model 2 minutes.
type LLMOptions struct {
	// Model is the Ollama chat model, with optional tag. "" means
	// DefaultLLMModel (see LLMModel for the flag/environment rule).
	Model string
	// Window is how many of the top candidates the model reorders, >= 0.
	// Candidates after the window keep their fused order after the
	// reordered ones. 0 means DefaultWindow (30).
	Window int
	// AbstractChars is how many runes of each abstract the prompt shows
	// (cut at a word boundary, marked "…"). 0 means DefaultAbstractChars
	// (300); negative shows no abstract.
	AbstractChars int
	// Seed is the model's sampling seed ("options.seed"). 0 means
	// DefaultSeed. With temperature 0 it makes replies repeatable on one
	// server and model.
	Seed int
	// Timeout bounds each call to the model, from when Rerank starts. A
	// call that exceeds it falls back to the fused order. 0 means
	// DefaultLLMTimeout (2 min); negative means only ctx's deadline.
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

// LLM is the listwise LLM reranker: it shows the query and the top
// Window candidates (4-letter random IDs, title, year, truncated abstract)
// to an Ollama chat model, asks for a JSON ranking of the IDs and reorders
// the candidates accordingly. It is safe for concurrent use.
//
// Rerank never loses or invents a candidate. The reply is parsed
// leniently (see ParseRanking): JSON inside prose or code fences is
// found, duplicates keep their first place, unknown IDs and numbers are
// ignored and counted in Outcome.Unknown, and window candidates the model
// left out follow the ranked ones in fused order. When the call fails
// (HTTP error, unknown model, timeout, empty or unusable reply) the fused
// order comes back with Fallback set and a warning saying why.
type LLM struct {
	chat ChatConfig
}

var _ Reranker = (*LLM)(nil)

// NewLLM returns an LLM reranker that talks to Ollama through client. A
// nil client means api.ClientFromEnvironment (OLLAMA_HOST, default
// http://127.0.0.1:11434; note that "http://host" without a port means
// port 80). It does not contact the server.
func NewLLM(client *api.Client, opts LLMOptions) (*LLM, error) {
	c, err := NewChat(client, opts, ChatDefaults{Window: DefaultWindow, AbstractChars: DefaultAbstractChars, Timeout: DefaultLLMTimeout})
	if err != nil {
		return nil, fmt.Errorf("new llm reranker: %w", err)
	}
	return &LLM{chat: c}, nil
}

// ChatConfig holds the resolved settings of deterministic Ollama chat calls
// over a window of candidates, shared by the LLM reranker and the picker
// (package selector).
type ChatConfig struct {
	Client        *api.Client
	Model         string
	Window        int
	AbstractChars int
	Timeout       time.Duration
	KeepAlive     *api.Duration // nil: the server's default
	Options       map[string]any
	IDSeed        uint64
}

// ChatDefaults are the values NewChat uses for zero LLMOptions fields
// besides the model and seed, which default to DefaultLLMModel and
// DefaultSeed.
type ChatDefaults struct {
	Window        int
	AbstractChars int
	Timeout       time.Duration
}

// NewChat resolves opts against defaults. A nil client means
// api.ClientFromEnvironment (OLLAMA_HOST, default http://127.0.0.1:11434;
// "http://host" without a port means port 80). It does not contact the
// server.
func NewChat(client *api.Client, opts LLMOptions, d ChatDefaults) (ChatConfig, error) {
	if opts.Window < 0 {
		return ChatConfig{}, fmt.Errorf("negative window %d", opts.Window)
	}
	if client == nil {
		var err error
		if client, err = api.ClientFromEnvironment(); err != nil {
			return ChatConfig{}, err
		}
	}
	c := ChatConfig{Client: client, Model: opts.Model, Window: opts.Window, AbstractChars: opts.AbstractChars,
		Timeout: opts.Timeout, IDSeed: opts.IDSeed}
	if c.Model == "" {
		c.Model = DefaultLLMModel
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

// Name returns NameLLM.
func (l *LLM) Name() string { return NameLLM }

// Model returns the Ollama model name.
func (l *LLM) Model() string { return l.chat.Model }

//go:embed prompts/rerank.txt
var promptFS embed.FS

// rerankPrompt is the parsed prompts/rerank.txt.
var rerankPrompt = template.Must(template.New("rerank.txt").
	Funcs(template.FuncMap{"join": strings.Join}).
	ParseFS(promptFS, "prompts/rerank.txt"))

// Separator is the line between two candidates in prompts: wide, so that
// a model never reads two candidates as one.
const Separator = "=================================================="

// promptData is the data of prompts/rerank.txt.
type promptData struct {
	Query      string
	Candidates []promptCandidate
	IDs        []string
	Sep        string
}

type promptCandidate struct {
	ID, Title, Abstract string
	Year                int
}

// Prompt renders the system and user messages for query and the window
// candidates under ids (parallel to cands), with abstracts cut to
// abstractChars runes (<= 0: none). Exposed for golden tests and for
// inspecting what the model sees.
func Prompt(query string, cands []Candidate, ids []string, abstractChars int) (system, user string, err error) {
	if len(ids) != len(cands) || len(cands) == 0 {
		return "", "", fmt.Errorf("render rerank prompt: %d candidates, %d IDs", len(cands), len(ids))
	}
	d := promptData{Query: CleanText(query), IDs: ids, Sep: Separator, Candidates: make([]promptCandidate, len(cands))}
	for i, c := range cands {
		d.Candidates[i] = promptCandidate{ID: ids[i], Title: CleanText(c.Title), Year: c.Year, Abstract: TruncateText(c.Abstract, abstractChars)}
	}
	var sys, usr strings.Builder
	if err := rerankPrompt.ExecuteTemplate(&sys, "system", d); err != nil {
		return "", "", fmt.Errorf("render rerank prompt: %w", err)
	}
	if err := rerankPrompt.ExecuteTemplate(&usr, "user", d); err != nil {
		return "", "", fmt.Errorf("render rerank prompt: %w", err)
	}
	return sys.String(), usr.String(), nil
}

// RankingSchema is the JSON schema sent as the request's format: an
// object whose "ranking" is an array of the given IDs. Ollama constrains
// decoding to it; the parser does not rely on that.
func RankingSchema(ids []string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{
		"type": "object",
		"properties": map[string]any{
			"ranking": map[string]any{
				"type":  "array",
				"items": map[string]any{"type": "string", "enum": ids},
			},
		},
		"required": []string{"ranking"},
	})
	return b
}

// Rerank reorders the top Window candidates with the model. See LLM for
// the parsing and fallback rules.
//
// Errors: Rerank returns an error only when ctx is cancelled
// (context.Canceled), and even then the Outcome holds the fused order
// with Fallback set, so a caller may still use it. A deadline (Timeout or
// ctx's) is a model failure: fused order, Fallback, a warning, nil error.
// Fewer than two candidates are returned as they are without asking the
// model.
func (l *LLM) Rerank(ctx context.Context, query string, cands []Candidate) (Outcome, error) {
	fallback := func(why string) Outcome {
		return Outcome{
			Candidates: append([]Candidate(nil), cands...),
			Fallback:   true,
			Warnings:   []string{"llm rerank failed, kept the fused order: " + why},
		}
	}
	if err := ctx.Err(); errors.Is(err, context.Canceled) {
		return fallback("cancelled"), fmt.Errorf("llm rerank: %w", err)
	}
	if len(cands) < 2 {
		return Outcome{Candidates: append([]Candidate(nil), cands...)}, nil
	}
	w := min(l.chat.Window, len(cands))
	ids := RandomIDs(w, l.chat.IDSeed)
	sys, usr, err := Prompt(query, cands[:w], ids, l.chat.AbstractChars)
	if err != nil {
		return fallback(err.Error()), nil
	}
	content, err := l.chat.Ask(ctx, sys, usr, RankingSchema(ids))
	if err != nil {
		if errors.Is(ctx.Err(), context.Canceled) {
			return fallback("cancelled"), fmt.Errorf("llm rerank: %w", ctx.Err())
		}
		return fallback(err.Error()), nil
	}
	r := ParseRanking(content, ids)
	if len(r.Order) == 0 {
		out := fallback(r.Failure)
		out.Unknown = r.Unknown
		out.Warnings = append(out.Warnings, r.Warnings...)
		return out, nil
	}
	out := Outcome{Candidates: make([]Candidate, 0, len(cands)), Unknown: r.Unknown, Warnings: r.Warnings}
	for _, i := range r.Order {
		out.Candidates = append(out.Candidates, cands[i])
	}
	if missing := w - r.Ranked; missing > 0 {
		out.Warnings = append(out.Warnings, fmt.Sprintf(
			"llm rerank: the model left out %d of %d candidates; they follow the ranked ones in fused order", missing, w))
	}
	out.Candidates = append(out.Candidates, cands[w:]...)
	return out, nil
}

// Ask sends one deterministic, non-streaming chat request (system and
// user messages, the JSON schema format) with the configured model,
// options and keep-alive, and returns the reply's content (see Chat).
func (c ChatConfig) Ask(ctx context.Context, system, user string, format json.RawMessage) (string, error) {
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

// maxShown bounds how much of a bad reply a warning quotes.
const maxShown = 200

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
			return "", fmt.Errorf("ollama chat %s: HTTP %d: %s", req.Model, se.StatusCode, Shorten(msg, maxShown))
		}
		msg := Shorten(err.Error(), maxShown)
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
