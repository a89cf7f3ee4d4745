package main

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/citefind/citefind"
	"github.com/citefind/citefind/db"
	"github.com/citefind/citefind/engine"
	"github.com/citefind/citefind/fuse"
	"github.com/citefind/citefind/rerank"
	"github.com/citefind/citefind/retrieve/sparse"
)

// fusionFlags choose how several retrievers' lists are fused.
type fusionFlags struct {
	method  string
	weights string
	strict  bool
}

func (f *fusionFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.method, "fusion", "", "fusion of several retrievers: rrf, max or minmax (default: the database's pipeline, see citefind status)")
	fs.StringVar(&f.weights, "weights", "", "fusion `WEIGHTS` by retriever, NAME=W,... (default: the database's pipeline; a retriever not named keeps its weight there, else 1)")
	fs.BoolVar(&f.strict, "strict", false, "fail when any retriever fails (default: warn and use the others)")
}

// options returns the fusion fields of engine.Options.
func (f *fusionFlags) options() (engine.Options, error) {
	var o engine.Options
	switch m := fuse.Method(f.method); m {
	case "", fuse.RRF, fuse.MaxNorm, fuse.MinMax:
		o.Fusion = m
	default:
		return o, usageErr("--fusion must be rrf, max or minmax, got %q", f.method)
	}
	o.Weights = map[string]float64{} // a weight not given keeps its default
	for _, kv := range splitList(f.weights) {
		k, v, ok := strings.Cut(kv, "=")
		w, err := strconv.ParseFloat(v, 64)
		if !ok || err != nil || w < 0 || !slices.Contains(citefind.RetrieverNames, k) {
			return o, usageErr("--weights: %q is not NAME=W with NAME one of %s and a weight >= 0", kv, strings.Join(citefind.RetrieverNames, ", "))
		}
		o.Weights[k] = w
	}
	o.Strict = f.strict
	return o, nil
}

// dbFlag registers --db with its documented default.
func dbFlag(fs *flag.FlagSet) *string {
	return fs.String("db", db.DefaultDir(), "database `DIR` (env CITEFIND_DB)")
}

// waitFlag registers --wait, how long a writing command waits for another.
func waitFlag(fs *flag.FlagSet) *time.Duration {
	return fs.Duration("wait", db.DefaultLockWait, "how long to wait for another citefind writing the same database")
}

// lockDB takes the database's write lock, saying so while it waits.
func lockDB(ctx context.Context, e env, dir string, wait time.Duration) (*db.WriteLock, error) {
	return db.Lock(ctx, dir, wait, waitingFor(e, dir, wait))
}

// waitingFor says that a command waits for another writer of dir.
func waitingFor(e env, dir string, wait time.Duration) func(pid int) {
	return func(pid int) {
		fmt.Fprintf(e.stderr, "waiting for another citefind writing %s (pid %d), up to %s…\n", dir, pid, wait)
	}
}

// bm25Flags are the BM25 ranking parameters, for experiments and tuning.
type bm25Flags struct {
	k1, b   float64
	k3      float64
	weights string
}

func (f *bm25Flags) register(fs *flag.FlagSet) {
	d := engine.DefaultSparse()
	fs.Float64Var(&f.k1, "bm25-k1", d.K1, "BM25 term-frequency saturation k1 (> 0)")
	fs.Float64Var(&f.b, "bm25-b", d.B, "BM25 length normalisation b, in (0, 1]")
	fs.Float64Var(&f.k3, "bm25-k3", d.K3, "BM25 query-term saturation k3 (0 = none: a repeated query term counts each time)")
	fs.StringVar(&f.weights, "field-weights", formatWeights(d.FieldWeights), "BM25 field `WEIGHTS` over text (title+abstract+keywords) and title")
}

func formatWeights(w map[string]float64) string {
	keys := make([]string, 0, len(w))
	for k := range w {
		keys = append(keys, k)
	}
	sort.Strings(keys) // "text" before "title"
	var parts []string
	for _, k := range keys {
		parts = append(parts, k+"="+strconv.FormatFloat(w[k], 'g', -1, 64))
	}
	return strings.Join(parts, ",")
}

func (f *bm25Flags) options() (sparse.Options, error) {
	if f.k1 <= 0 {
		return sparse.Options{}, usageErr("--bm25-k1 must be > 0, got %v", f.k1)
	}
	if f.b <= 0 || f.b > 1 {
		return sparse.Options{}, usageErr("--bm25-b must be in (0, 1], got %v", f.b)
	}
	if f.k3 < 0 {
		return sparse.Options{}, usageErr("--bm25-k3 must be >= 0, got %v", f.k3)
	}
	o := sparse.Options{K1: f.k1, B: f.b, K3: f.k3}
	if f.weights != "" {
		o.FieldWeights = map[string]float64{}
		for _, kv := range strings.Split(f.weights, ",") {
			k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
			w, err := strconv.ParseFloat(v, 64)
			if !ok || err != nil || w < 0 {
				return o, usageErr("--field-weights: %q is not FIELD=WEIGHT with a weight >= 0", kv)
			}
			o.FieldWeights[k] = w
		}
	}
	return o, nil
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// llmFlags are the model flags of query, eval and serve.
type llmFlags struct {
	llm, rerankModel string
}

func (f *llmFlags) register(fs *flag.FlagSet) {
	f.registerLLM(fs)
	fs.StringVar(&f.rerankModel, "rerank-model", "", "learned reranker model `FILE` (default: the database's own learned-model.json, else the model that ships with citefind)")
}

// registerLLM registers --llm alone (eval has its own --rerank-model).
func (f *llmFlags) registerLLM(fs *flag.FlagSet) {
	fs.StringVar(&f.llm, "llm", "", "Ollama chat `MODEL` of --rerank llm and the picker (env CITEFIND_LLM; default "+rerank.DefaultLLMModel+" for --rerank llm; without it --pick takes the top rank)")
}

func (f *llmFlags) apply(o *engine.Options) {
	o.LLM, o.RerankModel = f.llm, f.rerankModel
}

// parseRetrievers reads a --retrievers list: known names, repeats
// dropped; empty means the database's default.
func parseRetrievers(cmd, list string) ([]string, error) {
	names := slices.Compact(splitList(list))
	for _, r := range names {
		if !slices.Contains(citefind.RetrieverNames, r) {
			return nil, usageErr("%s: unknown retriever %q (available: %s)", cmd, r, strings.Join(citefind.RetrieverNames, ", "))
		}
	}
	return names, nil
}
