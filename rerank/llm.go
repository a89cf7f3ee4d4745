package rerank

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/template"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/citefind/citefind/internal/llm"
)

// Defaults for LLMOptions.
const (
	// DefaultLLMModel is the Ollama chat model used when neither
	// --llm nor CITEFIND_LLM names one: a small instruct model.
	DefaultLLMModel = llm.DefaultModel
	// DefaultWindow is how many of the top fused candidates the model
	// reorders.
	DefaultWindow = 30
	// DefaultAbstractChars is how much of each abstract the model sees,
	// in runes.
	DefaultAbstractChars = 300
	// DefaultLLMTimeout bounds one rerank call to the model.
	DefaultLLMTimeout = 2 * time.Minute
	// DefaultSeed is the sampling seed sent to the model.
	DefaultSeed = llm.DefaultSeed
)

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
	chat llm.Config
}

var _ Reranker = (*LLM)(nil)

// NewLLM returns an LLM reranker that talks to Ollama through client. A
// nil client means api.ClientFromEnvironment (OLLAMA_HOST, default
// http://127.0.0.1:11434; note that "http://host" without a port means
// port 80). It does not contact the server.
func NewLLM(client *api.Client, opts LLMOptions) (*LLM, error) {
	c, err := llm.New(client, opts, llm.Defaults{Window: DefaultWindow, AbstractChars: DefaultAbstractChars, Timeout: DefaultLLMTimeout})
	if err != nil {
		return nil, fmt.Errorf("new llm reranker: %w", err)
	}
	return &LLM{chat: c}, nil
}

// LLMOptions configure NewLLM (see llm.Options). The zero value reranks
// the top DefaultWindow candidates with DefaultLLMModel, showing
// DefaultAbstractChars runes of each abstract, at temperature 0 with
// DefaultSeed, giving the model DefaultLLMTimeout.
type LLMOptions = llm.Options

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
	d := promptData{Query: llm.CleanText(query), IDs: ids, Sep: Separator, Candidates: make([]promptCandidate, len(cands))}
	for i, c := range cands {
		d.Candidates[i] = promptCandidate{ID: ids[i], Title: llm.CleanText(c.Title), Year: c.Year, Abstract: llm.TruncateText(c.Abstract, abstractChars)}
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
	ids := llm.RandomIDs(w, l.chat.IDSeed)
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
