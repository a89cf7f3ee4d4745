package selector

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
	"github.com/citefind/citefind/rerank"
)

// Sentinel errors. Test with errors.Is.
var (
	// ErrNoCandidates: Pick was given no candidates, so there is nothing
	// to pick, not even a fallback.
	ErrNoCandidates = errors.New("no candidates to pick from")
)

// How a Pick was mapped to its candidate (Pick.MatchedBy).
const (
	MatchID         = "id"          // the model's ID is a shown ID
	MatchTitle      = "title"       // exact normalised title
	MatchFuzzyTitle = "fuzzy-title" // TitleSimilarity >= FuzzyThreshold
	MatchTopRank    = "top-rank"    // the fallback: the first candidate
)

// Reason of TopRank's picks.
const ReasonNoLLM = "no LLM picker configured"

// Pick is the paper chosen to cite.
type Pick struct {
	// ID is the chosen candidate's paper ID, always one of the candidates
	// given to Pick.
	ID string `json:"id"`
	// Rank is the 1-based position of the chosen candidate in the list
	// given to Pick (1 for the top rank).
	Rank int `json:"rank"`
	// Fallback is true when the top-ranked candidate was returned
	// because there is no model, the model failed, or its answer mapped
	// to no candidate; Reason says which.
	Fallback bool   `json:"fallback"`
	Reason   string `json:"reason,omitempty"`
	// MatchedBy says how the answer was mapped to the candidate: MatchID,
	// MatchTitle, MatchFuzzyTitle or, for a fallback, MatchTopRank.
	MatchedBy string `json:"matched_by"`
	// Reasoning is the model's stated reasoning ("" without one).
	Reasoning string `json:"reasoning,omitempty"`
	// Raw is the model's raw reply ("" when there was none: no model, an
	// HTTP error, a timeout).
	Raw string `json:"raw,omitempty"`
	// NamedNonCandidate is true when the model's answer named a paper
	// (an ID or a title) that maps to no candidate: a hallucination the
	// guard caught. An empty or unreadable reply names nothing and leaves
	// it false.
	NamedNonCandidate bool `json:"named_non_candidate"`
}

// Picker chooses one of the candidates, which come best first. Pick
// returns ErrNoCandidates for an empty list, and otherwise an error only
// when ctx is cancelled; even then the returned Pick is the top-rank
// fallback. Implementations are safe for concurrent use.
type Picker interface {
	Pick(ctx context.Context, query string, cands []rerank.Candidate) (Pick, error)
}

// TopRank is the picker without a model: it returns the top-ranked
// candidate, marked as a fallback with Reason ReasonNoLLM.
type TopRank struct{}

// Pick returns cands[0] as a fallback.
func (TopRank) Pick(ctx context.Context, query string, cands []rerank.Candidate) (Pick, error) {
	if len(cands) == 0 {
		return Pick{}, ErrNoCandidates
	}
	return topRank(cands, ReasonNoLLM), nil
}

func topRank(cands []rerank.Candidate, why string) Pick {
	return Pick{ID: cands[0].ID, Rank: 1, Fallback: true, Reason: why, MatchedBy: MatchTopRank}
}

// Defaults for Options.
const (
	// DefaultWindow is how many top candidates the model chooses from.
	DefaultWindow = 10
	// DefaultAbstractChars is how much of each abstract the model sees,
	// in runes.
	DefaultAbstractChars = 400
	// DefaultTimeout bounds one pick.
	DefaultTimeout = time.Minute
	// maxAuthors is how many authors the prompt names before "et al.".
	maxAuthors = 3
)

// Options configure New (see llm.Options for each field). The zero value
// picks among the top DefaultWindow candidates with llm.DefaultModel at
// temperature 0 and seed llm.DefaultSeed, showing DefaultAbstractChars
// runes of each abstract, within DefaultTimeout.
type Options = llm.Options

// LLM picks with an Ollama chat model. It is safe for concurrent use.
type LLM struct {
	chat llm.Config
}

var _ Picker = (*LLM)(nil)
var _ Picker = TopRank{}

// New returns a model picker. A nil client means
// api.ClientFromEnvironment (OLLAMA_HOST). It does not contact the server.
func New(client *api.Client, opts Options) (*LLM, error) {
	c, err := llm.New(client, opts, llm.Defaults{Window: DefaultWindow, AbstractChars: DefaultAbstractChars, Timeout: DefaultTimeout})
	if err != nil {
		return nil, fmt.Errorf("new picker: %w", err)
	}
	return &LLM{chat: c}, nil
}

// Model returns the Ollama model name.
func (p *LLM) Model() string { return p.chat.Model }

//go:embed prompts/pick.txt
var promptFS embed.FS

var pickPrompt = template.Must(template.New("pick.txt").
	Funcs(template.FuncMap{"join": strings.Join}).
	ParseFS(promptFS, "prompts/pick.txt"))

type promptData struct {
	Query      string
	Candidates []promptCandidate
	IDs        []string
	Sep        string
}

type promptCandidate struct {
	ID, Title, Authors, Venue, Abstract string
	Year                                int
}

// Prompt renders the system and user messages for query and cands
// shown under ids (parallel), with abstracts cut to abstractChars runes.
// Exposed for golden tests and for inspecting what the model sees.
func Prompt(query string, cands []rerank.Candidate, ids []string, abstractChars int) (system, user string, err error) {
	if len(ids) != len(cands) || len(cands) == 0 {
		return "", "", fmt.Errorf("render pick prompt: %d candidates, %d IDs", len(cands), len(ids))
	}
	d := promptData{Query: llm.CleanText(query), IDs: ids, Sep: rerank.Separator, Candidates: make([]promptCandidate, len(cands))}
	for i, c := range cands {
		authors := c.Authors
		etal := ""
		if len(authors) > maxAuthors {
			authors, etal = authors[:maxAuthors], " et al."
		}
		d.Candidates[i] = promptCandidate{
			ID: ids[i], Title: llm.CleanText(c.Title), Year: c.Year,
			Authors:  llm.CleanText(strings.Join(authors, ", ")) + etal,
			Venue:    llm.CleanText(c.Venue),
			Abstract: llm.TruncateText(c.Abstract, abstractChars),
		}
	}
	var sys, usr strings.Builder
	if err := pickPrompt.ExecuteTemplate(&sys, "system", d); err != nil {
		return "", "", fmt.Errorf("render pick prompt: %w", err)
	}
	if err := pickPrompt.ExecuteTemplate(&usr, "user", d); err != nil {
		return "", "", fmt.Errorf("render pick prompt: %w", err)
	}
	return sys.String(), usr.String(), nil
}

// Schema is the JSON schema sent as the request's format: reasoning
// first (so the model reasons before it commits), then the ID, limited to
// the shown IDs, then title and year. Keys are written in that order on
// purpose: Ollama builds its grammar in schema order.
func Schema(ids []string) json.RawMessage {
	enum, _ := json.Marshal(ids)
	return json.RawMessage(`{"type":"object","properties":{` +
		`"reasoning":{"type":"string"},` +
		`"id":{"type":"string","enum":` + string(enum) + `},` +
		`"title":{"type":"string"},` +
		`"year":{"type":"integer"}},` +
		`"required":["reasoning","id","title","year"]}`)
}

// Pick asks the model to choose among the top Window candidates and maps
// its answer back (see match for the rules). On any failure (HTTP error,
// unknown model, deadline, empty or unreadable reply, an answer that maps
// to nothing) it returns the top-ranked candidate with Fallback and a
// Reason. It returns an error only for no candidates (ErrNoCandidates)
// or a cancelled ctx, and then still the fallback Pick. A single
// candidate is returned without asking the model (MatchedBy top-rank,
// not a fallback, no Reason).
func (p *LLM) Pick(ctx context.Context, query string, cands []rerank.Candidate) (Pick, error) {
	if len(cands) == 0 {
		return Pick{}, ErrNoCandidates
	}
	if err := ctx.Err(); errors.Is(err, context.Canceled) {
		return topRank(cands, "cancelled"), fmt.Errorf("pick: %w", err)
	}
	if len(cands) == 1 {
		return Pick{ID: cands[0].ID, Rank: 1, MatchedBy: MatchTopRank}, nil
	}
	shown := cands[:min(p.chat.Window, len(cands))]
	ids := llm.RandomIDs(len(shown), p.chat.IDSeed)
	sys, usr, err := Prompt(query, shown, ids, p.chat.AbstractChars)
	if err != nil {
		return topRank(cands, err.Error()), nil
	}
	raw, err := p.chat.Ask(ctx, sys, usr, Schema(ids))
	if err != nil {
		if errors.Is(ctx.Err(), context.Canceled) {
			return topRank(cands, "cancelled"), fmt.Errorf("pick: %w", ctx.Err())
		}
		return topRank(cands, "the model failed: "+err.Error()), nil
	}
	return Resolve(raw, shown, ids), nil
}

// Resolve maps a raw model reply to a Pick among cands, which were shown
// under ids (parallel). It is Pick without the model call: the parsing
// and mapping rules in one place.
//
// The reply's JSON may be bare, fenced or inside prose
// (llm.ExtractJSON); keys are matched case-insensitively, and "id"
// may also be spelled "candidate", "choice" or "answer". A reply without
// JSON still maps when exactly one shown ID occurs in it as a word.
func Resolve(raw string, cands []rerank.Candidate, ids []string) Pick {
	fallback := func(why string) Pick {
		p := topRank(cands, why)
		p.Raw = raw
		return p
	}
	if strings.TrimSpace(raw) == "" {
		return fallback("the model's reply was empty")
	}
	a, ok := parseAnswer(raw)
	if !ok {
		found := idsInText(raw, ids)
		if len(found) != 1 {
			return fallback(fmt.Sprintf("the model's reply was not JSON: %q", llm.Shorten(raw, 200)))
		}
		a = answer{ID: found[0]}
	}
	i, how := match(a, cands, ids)
	if i < 0 {
		if a.ID == "" && a.Title == "" {
			p := fallback("the model's answer named no paper")
			p.Reasoning = a.Reasoning
			return p
		}
		p := fallback(fmt.Sprintf("the model named a paper that is not a candidate (id %q, title %q)", llm.Shorten(a.ID, 40), llm.Shorten(a.Title, 120)))
		p.Reasoning = a.Reasoning
		p.NamedNonCandidate = true
		return p
	}
	return Pick{ID: cands[i].ID, Rank: i + 1, MatchedBy: how, Reasoning: a.Reasoning, Raw: raw}
}

// parseAnswer reads the answer object out of a reply.
func parseAnswer(raw string) (answer, bool) {
	var a answer
	found := false
	llm.ExtractJSON(raw, func(v json.RawMessage) bool {
		var obj map[string]json.RawMessage
		if json.Unmarshal(v, &obj) != nil {
			return false
		}
		get := func(keys ...string) json.RawMessage {
			for _, k := range keys {
				for key, val := range obj {
					if strings.EqualFold(key, k) {
						return val
					}
				}
			}
			return nil
		}
		text := func(v json.RawMessage) string {
			var s string
			if json.Unmarshal(v, &s) == nil {
				return strings.TrimSpace(s)
			}
			if v != nil && string(v) != "null" {
				return strings.TrimSpace(string(v)) // a number or other value: kept as written
			}
			return ""
		}
		a = answer{
			ID:        text(get("id", "candidate", "choice", "answer", "paper")),
			Title:     text(get("title")),
			Reasoning: text(get("reasoning", "reason", "explanation")),
		}
		var year json.Number
		if y := get("year"); y != nil && json.Unmarshal(y, &year) == nil {
			if n, err := year.Int64(); err == nil {
				a.Year = int(n)
			}
		} else if y != nil {
			var s string
			if json.Unmarshal(y, &s) == nil {
				fmt.Sscanf(s, "%d", &a.Year)
			}
		}
		found = a.ID != "" || a.Title != "" || a.Reasoning != ""
		return found
	})
	return a, found
}

// idsInText returns the distinct shown IDs that occur as words in s.
func idsInText(s string, ids []string) []string {
	shown := make(map[string]bool, len(ids))
	for _, id := range ids {
		shown[id] = true
	}
	var out []string
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(s, func(c rune) bool { return !(c >= 'A' && c <= 'Z') }) {
		if shown[w] && !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}
