package eval

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/citefind/citefind/corpus"
)

// DefaultK is the retrieval depth when Options.K is zero.
const DefaultK = 100

// Retriever returns the k best papers for a query, best first.
type Retriever interface {
	Retrieve(ctx context.Context, query string, k int) ([]corpus.Hit, error)
}

// RetrieverFunc adapts a function to Retriever.
type RetrieverFunc func(ctx context.Context, query string, k int) ([]corpus.Hit, error)

// Retrieve calls f.
func (f RetrieverFunc) Retrieve(ctx context.Context, query string, k int) ([]corpus.Hit, error) {
	return f(ctx, query, k)
}

// Options configures Run. The zero value is usable.
type Options struct {
	// K is the depth retrieved per query; 0 means DefaultK. Hits beyond K
	// are ignored.
	K int
	// Resolve maps the doc ids of the judgements (qrels DOIs, corpus item
	// ids) to paper IDs; an id absent from the returned map is not in the
	// collection. It is called once per Run with every judged id of the set.
	// nil maps each id to corpus.NormalizeDOI(id), or to the id itself when
	// it is not a DOI, and treats every id as present. For ACM-CR the
	// store's alias lookup is needed: records without a doi field get a
	// hashed paper ID, not their 10.5555 key.
	Resolve func(ids []string) (map[string]string, error)
	// Progress, when set, is called after each query with the number of
	// queries done and the total.
	Progress func(done, total int)
	// Bench and Stage are copied to the Result ("acm-cr", "bm25").
	Bench, Stage string
}

// QueryResult is the outcome of one query.
type QueryResult struct {
	ID              string
	Hits            []corpus.Hit  // best first, at most K
	Metrics         Metrics       // all zero when Err is set
	Latency         time.Duration // wall time of the Retrieve call
	Relevant        int           // judged relevant ids (distinct paper IDs)
	RelevantMissing int           // judged relevant ids not found by Resolve = not in the collection
	Err             string        // retrieval error; "" on success
}

// Result is one topic set run through one retriever stage.
type Result struct {
	Bench   string // Options.Bench, e.g. "acm-cr"
	Set     string // TopicSet.Name, e.g. "contexts"
	Stage   string // Options.Stage, e.g. "bm25"
	Queries int    // number of queries scored, failed ones included
	Failed  int    // queries whose retrieval failed (scored 0)
	Metrics Metrics
	// Latency percentiles (nearest rank) over the queries that did not fail.
	LatencyP50, LatencyP99 time.Duration
	Missing                int // relevant docs absent from the collection, summed over queries
	PerQuery               []QueryResult
}

// missingPrefix marks a relevant id that is not in the collection: no
// paper ID starts with a NUL byte, so it is never retrieved but still counts
// in the recall denominator.
const missingPrefix = "\x00missing:"

// Run sends every query of set to r, one at a time, and scores the hits
// against the judgements. A query whose retrieval fails is recorded with
// its error, scored zero and kept, and the run goes on. Run returns an
// error when ctx is cancelled (ctx.Err()), when Resolve fails, and
// ErrEmptyBenchmark when set has no query.
func Run(ctx context.Context, set TopicSet, r Retriever, opts Options) (*Result, error) {
	if len(set.Queries) == 0 {
		return nil, fmt.Errorf("topic set %q: %w", set.Name, ErrEmptyBenchmark)
	}
	k := opts.K
	if k <= 0 {
		k = DefaultK
	}
	resolved, err := resolveAll(set, opts.Resolve)
	if err != nil {
		return nil, fmt.Errorf("resolve judged ids: %w", err)
	}
	res := &Result{Bench: opts.Bench, Set: set.Name, Stage: opts.Stage, Queries: len(set.Queries)}
	per := make([]Metrics, 0, len(set.Queries))
	var lat []time.Duration
	for i, q := range set.Queries {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rel := map[string]bool{}
		qr := QueryResult{ID: q.ID}
		for _, id := range q.Relevant {
			if pid, ok := resolved[id]; ok {
				rel[pid] = true
			} else {
				rel[missingPrefix+id] = true
				qr.RelevantMissing++
			}
		}
		qr.Relevant = len(rel)

		start := time.Now()
		hits, err := r.Retrieve(ctx, q.Text, k)
		qr.Latency = time.Since(start)
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return nil, cerr
			}
			qr.Err = err.Error()
			qr.Metrics = Score(nil, rel)
			res.Failed++
		} else {
			if len(hits) > k {
				hits = hits[:k]
			}
			qr.Hits = hits
			ids := make([]string, len(hits))
			for j, h := range hits {
				ids[j] = h.ID
			}
			qr.Metrics = Score(ids, rel)
			lat = append(lat, qr.Latency)
		}
		res.Missing += qr.RelevantMissing
		res.PerQuery = append(res.PerQuery, qr)
		per = append(per, qr.Metrics)
		if opts.Progress != nil {
			opts.Progress(i+1, len(set.Queries))
		}
	}
	res.Metrics = Mean(per)
	res.LatencyP50 = Percentile(lat, 50)
	res.LatencyP99 = Percentile(lat, 99)
	return res, nil
}

// resolveAll maps every judged id of set to its paper ID.
func resolveAll(set TopicSet, resolve func([]string) (map[string]string, error)) (map[string]string, error) {
	seen := map[string]bool{}
	var ids []string
	for _, q := range set.Queries {
		for _, id := range q.Relevant {
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	sort.Strings(ids)
	if resolve == nil {
		out := make(map[string]string, len(ids))
		for _, id := range ids {
			if d := corpus.NormalizeDOI(id); d != "" {
				out[id] = d
			} else {
				out[id] = id
			}
		}
		return out, nil
	}
	return resolve(ids)
}

// Percentile returns the p-th percentile (0 < p ≤ 100) of ds by the
// nearest-rank method: the smallest value with at least p% of the values
// at or below it, i.e. sorted[ceil(p/100·n)-1]. It returns 0 for no value.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	r := int(math.Ceil(p * float64(len(s)) / 100))
	r = max(1, min(r, len(s)))
	return s[r-1]
}
