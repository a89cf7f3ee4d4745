package selector_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/internal/llm"
	"github.com/citefind/citefind/internal/ollamatest"
	"github.com/citefind/citefind/rerank"
	"github.com/citefind/citefind/selector"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestTitleSimilarity(t *testing.T) {
	assert.Equal(t, 1.0, selector.TitleSimilarity("Attention is all you need", "ATTENTION IS ALL YOU NEED."))
	assert.Equal(t, 0.0, selector.TitleSimilarity("", "x"))
	// 10 runes, one substitution: exactly 0.9, the threshold, matches.
	assert.InDelta(t, 0.9, selector.TitleSimilarity("abcdefghij", "abcdefghix"), 1e-12)
	assert.GreaterOrEqual(t, selector.TitleSimilarity("abcdefghij", "abcdefghix"), selector.FuzzyThreshold)
	// 9 runes, one substitution: 0.889, below.
	assert.Less(t, selector.TitleSimilarity("abcdefghi", "abcdefghx"), selector.FuzzyThreshold)
	assert.Greater(t, selector.TitleSimilarity("Attention is all you need", "Atention is all you need"), 0.95)
	assert.Less(t, selector.TitleSimilarity("BERT: Pre-training of Deep Bidirectional Transformers", "BERT"), 0.5)
	assert.Equal(t, selector.TitleSimilarity("kitten", "sitting"), selector.TitleSimilarity("sitting", "kitten"))
	assert.InDelta(t, 1-3.0/7, selector.TitleSimilarity("kitten", "sitting"), 1e-12)
}

// cands is a fixed candidate list with two papers of the same title.
func cands() []rerank.Candidate {
	return []rerank.Candidate{
		{ID: "p-attn", Title: "Attention Is All You Need", Year: 2017, Rank: 1, Authors: []string{"Ashish Vaswani", "Noam Shazeer", "Niki Parmar", "Jakob Uszkoreit"}, Venue: "NeurIPS",
			Abstract: "We propose a new simple network architecture, the Transformer, based solely on attention mechanisms."},
		{ID: "p-bert", Title: "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding", Year: 2019, Rank: 2, Authors: []string{"Jacob Devlin"}},
		{ID: "p-survey-2018", Title: "A Survey of Neural Ranking Models", Year: 2018, Rank: 3},
		{ID: "p-survey-2021", Title: "A Survey of Neural Ranking Models", Year: 2021, Rank: 4},
		{ID: "p-w2v", Title: "Efficient Estimation of Word Representations in Vector Space", Year: 2013, Rank: 5},
	}
}

var shown = llm.RandomIDs(5, 11)

func TestResolve(t *testing.T) {
	reply := func(id, title string, year int) string {
		b, _ := json.Marshal(map[string]any{"reasoning": "because", "id": id, "title": title, "year": year})
		return string(b)
	}
	tests := []struct {
		name      string
		raw       string
		want      string // paper ID
		matchedBy string
		fallback  bool
		named     bool // NamedNonCandidate
		reason    string
	}{
		{name: "id", raw: reply(shown[1], "whatever", 0), want: "p-bert", matchedBy: selector.MatchID},
		{name: "id spelled loosely", raw: `{"ID": "[` + strings.ToLower(shown[4]) + `]"}`, want: "p-w2v", matchedBy: selector.MatchID},
		{name: "id wins over a title of another candidate", raw: reply(shown[0], "A Survey of Neural Ranking Models", 2018), want: "p-attn", matchedBy: selector.MatchID},
		{name: "unknown id, exact normalised title", raw: reply("QQQQ", "attention is all you need!!", 0), want: "p-attn", matchedBy: selector.MatchTitle},
		{name: "no id, title", raw: `{"title":"Efficient estimation of word representations in vector space"}`, want: "p-w2v", matchedBy: selector.MatchTitle},
		{name: "title collision, year breaks the tie", raw: reply("", "A survey of neural ranking models", 2021), want: "p-survey-2021", matchedBy: selector.MatchTitle},
		{name: "title collision, no year: best ranked", raw: reply("", "A survey of neural ranking models", 0), want: "p-survey-2018", matchedBy: selector.MatchTitle},
		{name: "fuzzy title", raw: reply("ZZZZ", "Efficient Estimaton of Word Representation in Vector Space", 2013), want: "p-w2v", matchedBy: selector.MatchFuzzyTitle},
		{name: "fuzzy collision, year breaks the tie", raw: reply("", "A Survey of Neural Rankng Models", 2021), want: "p-survey-2021", matchedBy: selector.MatchFuzzyTitle},
		{name: "title in the id field", raw: `{"id": "Attention Is All You Need"}`, want: "p-attn", matchedBy: selector.MatchTitle},
		{name: "JSON inside prose", raw: "After careful thought:\n```json\n" + reply(shown[2], "", 0) + "\n```", want: "p-survey-2018", matchedBy: selector.MatchID},
		{name: "non-JSON naming one ID", raw: "The answer is " + shown[3] + ".", want: "p-survey-2021", matchedBy: selector.MatchID},
		{name: "unknown id, no title: hallucination", raw: reply("QQQQ", "", 0), want: "p-attn", matchedBy: selector.MatchTopRank, fallback: true, named: true, reason: "not a candidate"},
		{name: "made-up paper", raw: reply("", "Deep Residual Learning for Image Recognition", 2016), want: "p-attn", matchedBy: selector.MatchTopRank, fallback: true, named: true, reason: "not a candidate"},
		{name: "near title below threshold", raw: reply("", "A Survey of Ranking Models", 0), want: "p-attn", matchedBy: selector.MatchTopRank, fallback: true, named: true},
		{name: "number instead of id", raw: `{"id": 3}`, want: "p-attn", matchedBy: selector.MatchTopRank, fallback: true, named: true},
		{name: "empty", raw: "", want: "p-attn", matchedBy: selector.MatchTopRank, fallback: true, reason: "empty"},
		{name: "truncated", raw: `{"reasoning": "The text discusses transf`, want: "p-attn", matchedBy: selector.MatchTopRank, fallback: true, reason: "not JSON"},
		{name: "non-JSON", raw: "I cannot determine which paper is cited.", want: "p-attn", matchedBy: selector.MatchTopRank, fallback: true, reason: "not JSON"},
		{name: "non-JSON naming two IDs", raw: shown[1] + " or " + shown[2], want: "p-attn", matchedBy: selector.MatchTopRank, fallback: true, reason: "not JSON"},
		{name: "reasoning only", raw: `{"reasoning": "hard to say"}`, want: "p-attn", matchedBy: selector.MatchTopRank, fallback: true, reason: "named no paper"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := selector.Resolve(tc.raw, cands(), shown)
			assert.Equal(t, tc.want, p.ID)
			assert.Equal(t, tc.matchedBy, p.MatchedBy)
			assert.Equal(t, tc.fallback, p.Fallback, "fallback (%s)", p.Reason)
			assert.Equal(t, tc.named, p.NamedNonCandidate, "named non-candidate")
			assert.Equal(t, tc.raw, p.Raw)
			assert.Contains(t, p.Reason, tc.reason)
			assert.Equal(t, tc.fallback, p.Reason != "", "a reason iff fallback")
			assertValid(t, cands(), p)
		})
	}
	assert.Equal(t, "because", selector.Resolve(reply(shown[1], "", 0), cands(), shown).Reasoning)
}

// assertValid checks the picker invariants: the pick is a candidate, its
// Rank points at it, and a fallback is the top rank.
func assertValid(t *testing.T, cs []rerank.Candidate, p selector.Pick) {
	t.Helper()
	require.True(t, p.Rank >= 1 && p.Rank <= len(cs), "rank %d", p.Rank)
	assert.Equal(t, cs[p.Rank-1].ID, p.ID, "the pick is a candidate")
	if p.Fallback {
		assert.Equal(t, 1, p.Rank)
		assert.Equal(t, selector.MatchTopRank, p.MatchedBy)
		assert.NotEmpty(t, p.Reason)
	}
	if p.NamedNonCandidate {
		assert.True(t, p.Fallback)
	}
}

func TestTopRank(t *testing.T) {
	var p selector.Picker = selector.TopRank{}
	got, err := p.Pick(t.Context(), "q", cands())
	require.NoError(t, err)
	assert.Equal(t, selector.Pick{ID: "p-attn", Rank: 1, Fallback: true, Reason: selector.ReasonNoLLM, MatchedBy: selector.MatchTopRank}, got)
	_, err = p.Pick(t.Context(), "q", nil)
	require.ErrorIs(t, err, selector.ErrNoCandidates)
}

func newPicker(t *testing.T, srv *ollamatest.Server, opts selector.Options) *selector.LLM {
	t.Helper()
	p, err := selector.New(srv.Client(), opts)
	require.NoError(t, err)
	return p
}

// offered reads the shown IDs from the request's schema.
func offered(t *testing.T, req ollamatest.Request) []string {
	var s struct {
		Properties struct {
			ID struct {
				Enum []string `json:"enum"`
			} `json:"id"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(req.Format, &s); err != nil {
		t.Errorf("format: %v", err)
	}
	return s.Properties.ID.Enum
}

func TestLLMPick(t *testing.T) {
	choose := func(t *testing.T, i int, wrap string) ollamatest.Script {
		return func(req ollamatest.Request) ollamatest.Reply {
			return ollamatest.Reply{Content: fmt.Sprintf(wrap, fmt.Sprintf(`{"reasoning":"r","id":%q,"title":"","year":0}`, offered(t, req)[i]))}
		}
	}
	tests := []struct {
		name     string
		script   func(t *testing.T) ollamatest.Script
		opts     selector.Options
		want     string
		fallback bool
		named    bool
		reason   string
	}{
		{name: "valid", script: func(t *testing.T) ollamatest.Script { return choose(t, 4, "%s") }, want: "p-w2v"},
		{name: "JSON inside prose", script: func(t *testing.T) ollamatest.Script { return choose(t, 1, "Sure! Here it is: %s Thanks.") }, want: "p-bert"},
		{name: "window limits the choice", opts: selector.Options{Window: 2},
			script: func(t *testing.T) ollamatest.Script {
				return func(req ollamatest.Request) ollamatest.Reply {
					assert.Len(t, offered(t, req), 2)
					return ollamatest.Reply{Content: `{"id":"QQQQ","title":"Efficient Estimation of Word Representations in Vector Space"}`}
				}
			}, want: "p-attn", fallback: true, named: true, reason: "not a candidate"},
		{name: "unknown ID", script: func(*testing.T) ollamatest.Script {
			return ollamatest.Content(`{"reasoning":"x","id":"QQQQ","title":"","year":0}`)
		},
			want: "p-attn", fallback: true, named: true},
		{name: "out-of-range number", script: func(*testing.T) ollamatest.Script { return ollamatest.Content(`{"id": 17}`) },
			want: "p-attn", fallback: true, named: true},
		{name: "empty", script: func(*testing.T) ollamatest.Script { return ollamatest.Content("") }, want: "p-attn", fallback: true, reason: "empty"},
		{name: "truncated", script: func(*testing.T) ollamatest.Script {
			return ollamatest.Fixed(ollamatest.Reply{Content: `{"reasoning":"The passage`, DoneReason: "length"})
		}, want: "p-attn", fallback: true, reason: "not JSON"},
		{name: "non-JSON", script: func(*testing.T) ollamatest.Script { return ollamatest.Content("No idea, sorry.") }, want: "p-attn", fallback: true, reason: "not JSON"},
		{name: "malformed body", script: func(*testing.T) ollamatest.Script { return ollamatest.Fixed(ollamatest.Reply{Body: `{"message":`}) },
			want: "p-attn", fallback: true, reason: "the model failed"},
		{name: "HTTP 500", script: func(*testing.T) ollamatest.Script { return ollamatest.Fixed(ollamatest.ServerError()) },
			want: "p-attn", fallback: true, reason: "HTTP 500"},
		{name: "404 model not found", opts: selector.Options{Model: "nosuch"},
			script: func(*testing.T) ollamatest.Script { return ollamatest.Fixed(ollamatest.NotFound("nosuch")) },
			want:   "p-attn", fallback: true, reason: `model "nosuch" not found`},
		{name: "slow reply past the deadline", opts: selector.Options{Timeout: 20 * time.Millisecond},
			script: func(t *testing.T) ollamatest.Script {
				return func(req ollamatest.Request) ollamatest.Reply {
					r := choose(t, 1, "%s")(req)
					r.Delay = time.Minute
					return r
				}
			}, want: "p-attn", fallback: true, reason: "deadline exceeded"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := ollamatest.New(t, tc.script(t))
			got, err := newPicker(t, srv, tc.opts).Pick(t.Context(), "the citing text", cands())
			require.NoError(t, err)
			assert.Equal(t, tc.want, got.ID)
			assert.Equal(t, tc.fallback, got.Fallback, "fallback: %s", got.Reason)
			assert.Equal(t, tc.named, got.NamedNonCandidate)
			assert.Contains(t, got.Reason, tc.reason)
			assertValid(t, cands(), got)
			assert.Equal(t, 1, srv.Count())
		})
	}

	t.Run("ContextCanceled", func(t *testing.T) {
		started := make(chan struct{})
		srv := ollamatest.New(t, func(ollamatest.Request) ollamatest.Reply {
			close(started)
			return ollamatest.Reply{Delay: time.Minute}
		})
		ctx, cancel := context.WithCancel(t.Context())
		go func() { <-started; cancel() }()
		p := newPicker(t, srv, selector.Options{})
		got, err := p.Pick(ctx, "q", cands())
		require.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, "p-attn", got.ID, "the top rank is still returned")
		assert.True(t, got.Fallback)

		_, err = p.Pick(ctx, "q", cands())
		require.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, 1, srv.Count())
	})

	t.Run("no candidates", func(t *testing.T) {
		srv := ollamatest.New(t, nil)
		_, err := newPicker(t, srv, selector.Options{}).Pick(t.Context(), "q", nil)
		require.ErrorIs(t, err, selector.ErrNoCandidates)
		assert.Zero(t, srv.Count())
	})

	t.Run("one candidate: no request", func(t *testing.T) {
		srv := ollamatest.New(t, nil)
		got, err := newPicker(t, srv, selector.Options{}).Pick(t.Context(), "q", cands()[:1])
		require.NoError(t, err)
		assert.Equal(t, "p-attn", got.ID)
		assert.False(t, got.Fallback)
		assert.Empty(t, got.Reason)
		assert.Zero(t, srv.Count())
	})
}

func TestLLMPickRequest(t *testing.T) {
	srv := ollamatest.New(t, ollamatest.Content(`{"id":"x"}`))
	p := newPicker(t, srv, selector.Options{Model: "llama3.2:3b", Seed: 9, KeepAlive: -1, IDSeed: 11, Options: map[string]any{"num_ctx": 4096}})
	assert.Equal(t, "llama3.2:3b", p.Model())
	_, err := p.Pick(t.Context(), "the citing text", cands())
	require.NoError(t, err)
	req := srv.Requests()[0]
	assert.Equal(t, "llama3.2:3b", req.Model)
	require.NotNil(t, req.Stream)
	assert.False(t, *req.Stream)
	assert.Equal(t, map[string]any{"temperature": 0.0, "seed": 9.0, "num_ctx": 4096.0}, req.Options)
	assert.Equal(t, `-1`, string(req.KeepAlive), "negative: keep loaded forever")
	assert.JSONEq(t, string(selector.Schema(shown)), string(req.Format))
	assert.True(t, strings.Index(string(req.Format), "reasoning") < strings.Index(string(req.Format), `"id"`), "reasoning comes before the ID")
	require.Len(t, req.Messages, 2)
	assert.Contains(t, req.Messages[1].Content, "["+shown[0]+"] Attention Is All You Need (2017)")

	_, err = selector.New(nil, selector.Options{Window: -3})
	require.Error(t, err)
}

func assertGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./selector/ -run Golden -update")
	assert.Equal(t, string(want), got, "%s changed; rerun with -update if intended", path)
}

func TestPromptGolden(t *testing.T) {
	sys, usr, err := selector.Prompt("Transformers [CITATION] rely on attention alone.", cands(), shown, 80)
	require.NoError(t, err)
	assertGolden(t, "pick_system.golden", sys)
	assertGolden(t, "pick_user.golden", usr)
	assert.Contains(t, usr, "Ashish Vaswani, Noam Shazeer, Niki Parmar et al.")
	_, _, err = selector.Prompt("q", cands(), shown[:1], 80)
	require.Error(t, err)
}

// TestLLMPickProperty checks the invariants over random candidate lists
// and random replies: the pick is a candidate, a fallback is the top
// rank, a hallucination is always caught.
func TestLLMPickProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	iterations := 300
	if testing.Short() {
		iterations = 100
	}
	var script ollamatest.Script
	srv := ollamatest.New(t, func(req ollamatest.Request) ollamatest.Reply { return script(req) })
	titles := []string{"Attention Is All You Need", "A Survey of Neural Ranking Models", "Dense Passage Retrieval", "BM25 and Beyond", "Deep Residual Learning"}
	for it := range iterations {
		n := 1 + rng.IntN(20)
		cs := make([]rerank.Candidate, n)
		for i := range cs {
			cs[i] = rerank.Candidate{ID: fmt.Sprintf("p%d", i), Title: titles[rng.IntN(len(titles))], Year: 2015 + rng.IntN(5), Rank: i + 1}
		}
		script = func(req ollamatest.Request) ollamatest.Reply {
			ids := offered(t, req)
			switch rng.IntN(8) {
			case 0:
				return ollamatest.ServerError()
			case 1:
				return ollamatest.Reply{Content: ""}
			}
			a := map[string]any{"reasoning": "r"}
			if rng.IntN(2) == 0 && len(ids) > 0 {
				a["id"] = ids[rng.IntN(len(ids))]
			} else {
				a["id"] = []any{"QQQQ", 7, "", nil}[rng.IntN(4)]
			}
			if rng.IntN(2) == 0 {
				a["title"] = titles[rng.IntN(len(titles))] + []string{"", "s", " revisited"}[rng.IntN(3)]
				a["year"] = 2015 + rng.IntN(5)
			}
			b, _ := json.Marshal(a)
			s := string(b)
			if rng.IntN(4) == 0 {
				s = s[:rng.IntN(len(s)+1)]
			}
			return ollamatest.Reply{Content: s}
		}
		got, err := newPicker(t, srv, selector.Options{Window: rng.IntN(12)}).Pick(t.Context(), "q", cs)
		require.NoError(t, err, "iteration %d", it)
		assertValid(t, cs, got)
	}
}

func TestTally(t *testing.T) {
	cs := cands()
	var tl selector.Tally
	tl.Add(selector.Pick{ID: "p-bert", Rank: 2, MatchedBy: selector.MatchID, Raw: "{}"}, cs, map[string]bool{"p-bert": true})
	tl.Add(selector.Pick{ID: "p-attn", Rank: 1, Fallback: true, NamedNonCandidate: true, Raw: "{}"}, cs, map[string]bool{"p-bert": true})
	tl.Add(selector.Pick{ID: "p-attn", Rank: 1, Fallback: true, Reason: "HTTP 500"}, cs, map[string]bool{"p-attn": true})
	tl.Add(selector.Pick{ID: "ghost"}, cs, nil) // a bug the figure must expose
	assert.Equal(t, selector.Tally{Queries: 4, Correct: 2, Outside: 1, Answered: 2, NamedNonCandidate: 1, Fallbacks: 2}, tl)
	assert.Equal(t, map[string]float64{
		selector.MetricAccuracy: 0.5, selector.MetricOutside: 0.25,
		selector.MetricNamedNonCandidate: 0.5, selector.MetricFallback: 0.5,
	}, tl.Metrics())
	assert.Equal(t, 0.0, selector.Tally{}.Metrics()[selector.MetricAccuracy])
}

// TestLLMPickReal picks with a real Ollama server; it runs only when
// OLLAMA_HOST is set, with the model named by CITEFIND_LLM (pulled).
func TestLLMPickReal(t *testing.T) {
	if os.Getenv("OLLAMA_HOST") == "" {
		t.Skip("OLLAMA_HOST not set")
	}
	p, err := selector.New(nil, selector.Options{Model: llm.Model(""), Timeout: 5 * time.Minute})
	require.NoError(t, err)
	got, err := p.Pick(t.Context(), "The Transformer [CITATION] dispenses with recurrence and relies entirely on self-attention.", cands())
	require.NoError(t, err)
	assertValid(t, cands(), got)
	t.Logf("pick %+v", got)
}

var sinkPick selector.Pick

// BenchmarkPick measures the latency the picker adds besides model time:
// prompt rendering, the round trip to a fake that answers at once, and
// mapping the answer (here by fuzzy title, the slowest path).
func BenchmarkPick(b *testing.B) {
	for _, reply := range []struct{ name, content string }{
		{"by-id", ""},
		{"by-fuzzy-title", `{"reasoning":"r","id":"QQQQ","title":"Efficient Estimaton of Word Representation in Vector Space","year":2013}`},
	} {
		b.Run(reply.name, func(b *testing.B) {
			srv := ollamatest.New(b, func(req ollamatest.Request) ollamatest.Reply {
				if reply.content != "" {
					return ollamatest.Reply{Content: reply.content}
				}
				var s struct {
					Properties struct {
						ID struct{ Enum []string } `json:"id"`
					} `json:"properties"`
				}
				_ = json.Unmarshal(req.Format, &s)
				return ollamatest.Reply{Content: `{"reasoning":"r","id":"` + s.Properties.ID.Enum[1] + `","title":"","year":0}`}
			})
			p, err := selector.New(srv.Client(), selector.Options{})
			require.NoError(b, err)
			cs := cands()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				got, err := p.Pick(context.Background(), "the citing text", cs)
				if err != nil || got.Fallback {
					b.Fatalf("pick: %v %+v", err, got)
				}
				sinkPick = got
			}
		})
	}
}
