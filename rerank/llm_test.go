package rerank_test

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
)

var update = flag.Bool("update", false, "rewrite golden files")

var (
	_ rerank.Reranker = rerank.None{}
	_ rerank.Reranker = (*rerank.LLM)(nil)
)

// goldenCandidates is the fixed list the prompt golden files render.
func goldenCandidates() []rerank.Candidate {
	return []rerank.Candidate{
		{ID: "10.48550/arxiv.1706.03762", Title: "Attention Is All You Need", Year: 2017, Rank: 1,
			Abstract: "The dominant sequence transduction models are based on complex recurrent or convolutional neural networks that include an encoder and a decoder. The best performing models also connect the encoder and decoder through an attention mechanism. We propose a new simple network architecture, the Transformer, based solely on attention mechanisms, dispensing with recurrence and convolutions entirely."},
		{ID: "10.18653/v1/n19-1423", Title: "BERT: Pre-training of Deep Bidirectional\nTransformers for Language Understanding", Year: 2019, Rank: 2,
			Abstract: "We introduce a new language representation model called BERT.\n\nUnlike recent language representation models, BERT is designed to pre-train deep bidirectional representations."},
		{ID: "h:3f9a1c2b", Title: "Neural Machine Translation by Jointly Learning to Align and Translate", Rank: 3},
		{ID: "arxiv:1301.3781", Title: "Efficient Estimation of Word Representations in Vector Space", Year: 2013, Rank: 4,
			Abstract: "We propose two novel model architectures for computing continuous vector representations of words from very large data sets."},
	}
}

func assertGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./rerank/ -run Golden -update")
	assert.Equal(t, string(want), got, "%s changed; rerun with -update if intended", path)
}

func TestPromptGolden(t *testing.T) {
	cands := goldenCandidates()
	ids := llm.RandomIDs(len(cands), 1)
	sys, usr, err := rerank.Prompt("Transformers [CITATION] replaced recurrence\nwith self-attention.", cands, ids, 120)
	require.NoError(t, err)
	assertGolden(t, "rerank_system.golden", sys)
	assertGolden(t, "rerank_user.golden", usr)
	for _, id := range ids {
		assert.Contains(t, usr, "["+id+"] ")
	}
	assert.NotContains(t, usr, "[1]", "no numbers as handles")

	_, _, err = rerank.Prompt("q", cands, ids[:2], 100)
	require.Error(t, err)
}

// candidates returns n candidates with fused ranks 1..n.
func candidates(n int) []rerank.Candidate {
	out := make([]rerank.Candidate, n)
	for i := range out {
		out[i] = rerank.Candidate{
			ID: fmt.Sprintf("paper-%03d", i), Title: fmt.Sprintf("Paper number %d on retrieval", i),
			Abstract: strings.Repeat(fmt.Sprintf("Sentence about topic %d. ", i), 30),
			Year:     2000 + i%25, Rank: i + 1, Score: 1 / float64(61+i),
		}
	}
	return out
}

// shownIDs reads the IDs the client offered from the request's JSON
// schema, so that scripts can answer with them.
func shownIDs(t *testing.T, req ollamatest.Request) []string {
	var schema struct {
		Properties struct {
			Ranking struct {
				Items struct {
					Enum []string `json:"enum"`
				} `json:"items"`
			} `json:"ranking"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(req.Format, &schema); err != nil {
		t.Errorf("format is not a JSON schema: %v", err)
	}
	return schema.Properties.Ranking.Items.Enum
}

// reversed answers with the shown IDs in reverse order, wrapped by wrap.
func reversed(t *testing.T, wrap func(string) string) ollamatest.Script {
	return func(req ollamatest.Request) ollamatest.Reply {
		ids := shownIDs(t, req)
		rev := make([]string, len(ids))
		for i, id := range ids {
			rev[len(ids)-1-i] = id
		}
		b, _ := json.Marshal(map[string]any{"ranking": rev})
		return ollamatest.Reply{Content: wrap(string(b))}
	}
}

func plain(s string) string { return s }

// ids returns the paper IDs of cands in order.
func ids(cands []rerank.Candidate) []string {
	out := make([]string, len(cands))
	for i, c := range cands {
		out[i] = c.ID
	}
	return out
}

// assertPermutationOf checks the reranker invariant: got holds every input
// candidate exactly once.
func assertPermutationOf(t *testing.T, in, got []rerank.Candidate) {
	t.Helper()
	assert.ElementsMatch(t, ids(in), ids(got), "the output is a permutation of the input")
}

func newLLM(t *testing.T, srv *ollamatest.Server, opts rerank.LLMOptions) *rerank.LLM {
	t.Helper()
	l, err := rerank.NewLLM(srv.Client(), opts)
	require.NoError(t, err)
	return l
}

func TestLLMRerank(t *testing.T) {
	const n = 8
	rev := make([]string, n) // the input IDs reversed
	for i, c := range candidates(n) {
		rev[n-1-i] = c.ID
	}
	fused := ids(candidates(n))
	tests := []struct {
		name     string
		script   func(t *testing.T) ollamatest.Script
		opts     rerank.LLMOptions
		want     []string // nil: fused order
		fallback bool
		unknown  int
		warn     string // substring of a warning
		// early: the deadline may pass before the request reaches the
		// fake (a loaded machine), so it may count none
		early bool
	}{
		{name: "valid", script: func(t *testing.T) ollamatest.Script { return reversed(t, plain) }, want: rev},
		{name: "JSON inside prose", script: func(t *testing.T) ollamatest.Script {
			return reversed(t, func(s string) string {
				return "Here is the ranking you asked for:\n```json\n" + s + "\n```\nLet me know!"
			})
		}, want: rev},
		{name: "duplicate, unknown and out-of-range IDs", script: func(t *testing.T) ollamatest.Script {
			return func(req ollamatest.Request) ollamatest.Reply {
				ids := shownIDs(t, req)
				return ollamatest.Reply{Content: fmt.Sprintf(`{"ranking":[%q,%q,"QQQQ",%q,99,"9",%q]}`, ids[7], ids[7], ids[6], ids[5])}
			}
		}, want: append(rev[:3:3], fused[:5]...), unknown: 3, warn: "named no candidate"},
		{name: "window: the tail keeps its place", opts: rerank.LLMOptions{Window: 3},
			script: func(t *testing.T) ollamatest.Script { return reversed(t, plain) },
			want:   append([]string{fused[2], fused[1], fused[0]}, fused[3:]...)},
		{name: "missing candidates follow in fused order", script: func(t *testing.T) ollamatest.Script {
			return func(req ollamatest.Request) ollamatest.Reply {
				return ollamatest.Reply{Content: fmt.Sprintf(`{"ranking":[%q]}`, shownIDs(t, req)[4])}
			}
		}, want: append([]string{fused[4]}, append(fused[:4:4], fused[5:]...)...), warn: "left out 7 of 8"},
		{name: "truncated output salvaged", script: func(t *testing.T) ollamatest.Script {
			return func(req ollamatest.Request) ollamatest.Reply {
				ids := shownIDs(t, req)
				return ollamatest.Reply{Content: fmt.Sprintf(`{"ranking": [%q, %q, "%s`, ids[2], ids[1], ids[0][:2]), DoneReason: "length"}
			}
		}, want: append([]string{fused[2], fused[1], fused[0]}, fused[3:]...), warn: "not valid JSON"},
		{name: "empty", script: func(*testing.T) ollamatest.Script { return ollamatest.Content("") }, fallback: true, warn: "empty"},
		{name: "non-JSON", script: func(*testing.T) ollamatest.Script {
			return ollamatest.Content("I'm sorry, I can't rank scientific papers.")
		}, fallback: true, warn: "not JSON"},
		{name: "numbers only", script: func(*testing.T) ollamatest.Script {
			return ollamatest.Content(`{"ranking":[3,1,2,4,5,6,7,8]}`)
		}, fallback: true, unknown: 8, warn: "numbers"},
		{name: "malformed body", script: func(*testing.T) ollamatest.Script {
			return ollamatest.Fixed(ollamatest.Reply{Body: `{"model":"m","message":{"role":"assistant","content":"{\"rank`})
		}, fallback: true, warn: "ollama chat"},
		{name: "empty body", script: func(*testing.T) ollamatest.Script {
			return ollamatest.Fixed(ollamatest.Reply{Body: "\n"})
		}, fallback: true, warn: "unreadable reply"},
		{name: "HTTP 500", script: func(*testing.T) ollamatest.Script { return ollamatest.Fixed(ollamatest.ServerError()) },
			fallback: true, warn: "HTTP 500: llama runner process has terminated"},
		{name: "404 model not found", opts: rerank.LLMOptions{Model: "nosuch:1b"},
			script:   func(*testing.T) ollamatest.Script { return ollamatest.Fixed(ollamatest.NotFound("nosuch:1b")) },
			fallback: true, warn: `HTTP 404: model "nosuch:1b" not found, try pulling it first`},
		{name: "slow reply past the deadline", opts: rerank.LLMOptions{Timeout: 20 * time.Millisecond},
			script: func(t *testing.T) ollamatest.Script {
				return func(req ollamatest.Request) ollamatest.Reply {
					r := reversed(t, plain)(req)
					r.Delay = time.Minute // the fake stops waiting when the client leaves
					return r
				}
			}, fallback: true, warn: "deadline exceeded", early: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := ollamatest.New(t, tc.script(t))
			in := candidates(n)
			out, err := newLLM(t, srv, tc.opts).Rerank(t.Context(), "query text", in)
			require.NoError(t, err)
			assertPermutationOf(t, in, out.Candidates)
			assert.Equal(t, tc.fallback, out.Fallback, "fallback; warnings %q", out.Warnings)
			assert.Equal(t, tc.unknown, out.Unknown, "unknown")
			want := tc.want
			if tc.fallback {
				want = fused
			}
			assert.Equal(t, want, ids(out.Candidates))
			if tc.warn != "" {
				assert.Contains(t, strings.Join(out.Warnings, "\n"), tc.warn)
			}
			if tc.fallback {
				assert.NotEmpty(t, out.Warnings)
			}
			if tc.early {
				assert.LessOrEqual(t, srv.Count(), 1, "no retries")
			} else {
				assert.Equal(t, 1, srv.Count(), "one request, no retries")
			}
			assert.Equal(t, ids(candidates(n)), ids(in), "the input is not modified")
		})
	}

	t.Run("ContextCanceled", func(t *testing.T) {
		started := make(chan struct{})
		srv := ollamatest.New(t, func(req ollamatest.Request) ollamatest.Reply {
			close(started)
			return ollamatest.Reply{Content: `{"ranking":[]}`, Delay: time.Minute}
		})
		ctx, cancel := context.WithCancel(t.Context())
		go func() { <-started; cancel() }()
		in := candidates(n)
		out, err := newLLM(t, srv, rerank.LLMOptions{}).Rerank(ctx, "q", in)
		require.ErrorIs(t, err, context.Canceled)
		assert.True(t, out.Fallback)
		assert.Equal(t, fused, ids(out.Candidates), "the fused order is still returned")

		out, err = newLLM(t, srv, rerank.LLMOptions{}).Rerank(ctx, "q", in) // already cancelled
		require.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, fused, ids(out.Candidates))
		assert.Equal(t, 1, srv.Count(), "no request once cancelled")
	})

	t.Run("caller deadline is a fallback, not an error", func(t *testing.T) {
		srv := ollamatest.New(t, ollamatest.Fixed(ollamatest.Reply{Delay: time.Minute}))
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
		defer cancel()
		out, err := newLLM(t, srv, rerank.LLMOptions{}).Rerank(ctx, "q", candidates(n))
		require.NoError(t, err)
		assert.True(t, out.Fallback)
	})

	t.Run("fewer than two candidates: no request", func(t *testing.T) {
		srv := ollamatest.New(t, ollamatest.Fixed(ollamatest.ServerError()))
		l := newLLM(t, srv, rerank.LLMOptions{})
		for _, in := range [][]rerank.Candidate{nil, {}, candidates(1)} {
			out, err := l.Rerank(t.Context(), "q", in)
			require.NoError(t, err)
			assert.Equal(t, ids(in), ids(out.Candidates))
			assert.False(t, out.Fallback)
		}
		assert.Zero(t, srv.Count())
	})
}

func TestLLMRequest(t *testing.T) {
	srv := ollamatest.New(t, reversed(t, plain))
	l := newLLM(t, srv, rerank.LLMOptions{
		Model: "qwen2.5:7b", Window: 5, Seed: 7, KeepAlive: 10 * time.Minute,
		Options: map[string]any{"num_ctx": 8192, "temperature": 0.8}, IDSeed: 3,
	})
	assert.Equal(t, "qwen2.5:7b", l.Model())
	assert.Equal(t, rerank.NameLLM, l.Name())
	_, err := l.Rerank(t.Context(), "the query", candidates(12))
	require.NoError(t, err)
	req := srv.Requests()[0]
	assert.Equal(t, "/api/chat", req.Path)
	assert.Equal(t, "qwen2.5:7b", req.Model)
	require.NotNil(t, req.Stream)
	assert.False(t, *req.Stream, "stream must be false")
	assert.Equal(t, map[string]any{"temperature": 0.0, "seed": 7.0, "num_ctx": 8192.0}, req.Options, "temperature 0 and the seed always win")
	assert.JSONEq(t, `"10m0s"`, string(req.KeepAlive))
	shown := llm.RandomIDs(5, 3)
	assert.JSONEq(t, string(rerank.RankingSchema(shown)), string(req.Format))
	require.Len(t, req.Messages, 2)
	assert.Equal(t, "system", req.Messages[0].Role)
	assert.Equal(t, "user", req.Messages[1].Role)
	assert.Contains(t, req.Messages[1].Content, "the query")
	for i, id := range shown {
		assert.Contains(t, req.Messages[1].Content, "["+id+"] Paper number "+fmt.Sprint(i))
	}
	assert.NotContains(t, req.Messages[1].Content, "Paper number 5 ", "outside the window")

	t.Run("defaults", func(t *testing.T) {
		srv := ollamatest.New(t, reversed(t, plain))
		_, err := newLLM(t, srv, rerank.LLMOptions{}).Rerank(t.Context(), "q", candidates(40))
		require.NoError(t, err)
		req := srv.Requests()[0]
		assert.Equal(t, rerank.DefaultLLMModel, req.Model)
		assert.Equal(t, map[string]any{"temperature": 0.0, "seed": float64(rerank.DefaultSeed)}, req.Options)
		assert.Empty(t, req.KeepAlive)
		assert.Len(t, shownIDs(t, req), rerank.DefaultWindow)
	})

	_, err = rerank.NewLLM(nil, rerank.LLMOptions{Window: -1})
	require.Error(t, err)
}

// TestLLMRerankProperty drives the reranker with random candidate lists
// and random model replies (good, broken, hostile) and checks the
// invariants: the output is a permutation of the input, candidates after
// the window keep their place, Fallback means the fused order, and the
// error is nil.
func TestLLMRerankProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(42, 4))
	iterations := 300
	if testing.Short() {
		iterations = 100
	}
	var script ollamatest.Script
	srv := ollamatest.New(t, func(req ollamatest.Request) ollamatest.Reply { return script(req) })
	for it := range iterations {
		n := rng.IntN(45)
		window := rng.IntN(35)
		in := candidates(n)
		replyRng := rand.New(rand.NewPCG(uint64(it), 9))
		script = func(req ollamatest.Request) ollamatest.Reply { return randomReply(t, replyRng, shownIDs(t, req)) }
		l := newLLM(t, srv, rerank.LLMOptions{Window: window, Timeout: time.Minute})
		out, err := l.Rerank(t.Context(), "q", in)
		require.NoError(t, err, "iteration %d", it)
		assertPermutationOf(t, in, out.Candidates)
		w := window
		if w == 0 {
			w = rerank.DefaultWindow
		}
		if w < n {
			assert.Equal(t, ids(in[w:]), ids(out.Candidates[w:]), "iteration %d: the tail keeps its place", it)
		}
		if out.Fallback {
			assert.Equal(t, ids(in), ids(out.Candidates), "iteration %d: fallback is the fused order", it)
			assert.NotEmpty(t, out.Warnings)
		}
		assert.GreaterOrEqual(t, out.Unknown, 0)
	}
}

// randomReply builds a random model reply over the shown IDs.
func randomReply(t *testing.T, r *rand.Rand, shown []string) ollamatest.Reply {
	switch r.IntN(12) {
	case 0:
		return ollamatest.ServerError()
	case 1:
		return ollamatest.NotFound("m")
	case 2:
		return ollamatest.Reply{Body: `{"message":{"content":"{\"ra`}
	case 3:
		return ollamatest.Reply{Content: ""}
	}
	var items []any
	for range r.IntN(len(shown) + 5) {
		switch k := r.IntN(10); {
		case k < 6 && len(shown) > 0:
			items = append(items, shown[r.IntN(len(shown))])
		case k == 6:
			items = append(items, r.IntN(60)-5)
		case k == 7:
			items = append(items, string(rune('A'+r.IntN(26)))+"QZX")
		case k == 8 && len(shown) > 0:
			items = append(items, "["+strings.ToLower(shown[r.IntN(len(shown))])+"]")
		default:
			items = append(items, map[string]any{"x": 1})
		}
	}
	b, _ := json.Marshal(map[string]any{"ranking": items})
	s := string(b)
	switch r.IntN(5) {
	case 0:
		s = "Sure! " + s + " Hope this helps."
	case 1:
		s = "```json\n" + s + "\n```"
	case 2:
		s = s[:r.IntN(len(s)+1)]
	}
	return ollamatest.Reply{Content: s}
}

// TestLLMReal reranks with a real Ollama server; it runs only when
// OLLAMA_HOST is set, with the model named by CITEFIND_LLM (pulled).
func TestLLMReal(t *testing.T) {
	if os.Getenv("OLLAMA_HOST") == "" {
		t.Skip("OLLAMA_HOST not set")
	}
	l, err := rerank.NewLLM(nil, rerank.LLMOptions{Model: llm.Model(""), Timeout: 5 * time.Minute})
	require.NoError(t, err)
	in := goldenCandidates()
	out, err := l.Rerank(t.Context(), "The Transformer [CITATION] dispenses with recurrence entirely and relies on self-attention.", in)
	require.NoError(t, err)
	assertPermutationOf(t, in, out.Candidates)
	require.False(t, out.Fallback, "warnings: %q", out.Warnings)
	t.Logf("order %q, unknown %d, warnings %q", ids(out.Candidates), out.Unknown, out.Warnings)
}

var sinkOutcome rerank.Outcome

// BenchmarkLLMRerank measures the latency the LLM path adds besides model
// time: prompt rendering, the HTTP round trip to a fake server that
// answers at once, and parsing, for 30 candidates.
func BenchmarkLLMRerank(b *testing.B) {
	for _, n := range []int{10, 30} {
		b.Run(fmt.Sprintf("candidates=%d", n), func(b *testing.B) {
			t := &testing.T{}
			srv := ollamatest.New(b, reversed(t, plain))
			l, err := rerank.NewLLM(srv.Client(), rerank.LLMOptions{})
			require.NoError(b, err)
			in := candidates(n)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				out, err := l.Rerank(context.Background(), "query text about retrieval", in)
				if err != nil || out.Fallback {
					b.Fatalf("rerank: %v %q", err, out.Warnings)
				}
				sinkOutcome = out
			}
		})
	}
}

// BenchmarkParseRanking measures parsing alone.
func BenchmarkParseRanking(b *testing.B) {
	shown := llm.RandomIDs(30, 1)
	reply, _ := json.Marshal(map[string]any{"ranking": shown})
	s := "Here you go:\n```json\n" + string(reply) + "\n```"
	b.ReportAllocs()
	for b.Loop() {
		if r := rerank.ParseRanking(s, shown); len(r.Order) != 30 {
			b.Fatal("bad parse")
		}
	}
}
