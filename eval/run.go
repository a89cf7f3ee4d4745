package eval

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/retrieve"
)

// DefaultK is the retrieval depth when Options.K is zero.
const DefaultK = 100

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
	// ResolveGold, when set, is used instead of Resolve: it maps each judged
	// id to every paper that satisfies it, and says how it was matched (see
	// MatchGold). A judged id with no paper is missing from the collection.
	// A gold paper known under several papers of the collection (CiteME's
	// alternative titles, one paper under two DOIs) is one relevant item:
	// the first of its papers in the ranking counts, later ones are scored
	// as non-relevant hits.
	ResolveGold func(ids []string) (map[string]Match, error)
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
	Relevant        int           // relevant items: judged ids, merged when they name the same paper
	RelevantMissing int           // of those, judged ids not found by Resolve = not in the collection
	// Ranks are the 1-based ranks (ascending, ≤ K) at which relevant items
	// were retrieved; with Relevant they give recall at any depth (RecallCurve).
	Ranks []int
	Err   string // retrieval error; "" on success
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
	Missing                int // relevant items absent from the collection, summed over queries
	// Relevant is the number of relevant items summed over queries;
	// coverage is (Relevant-Missing)/Relevant.
	Relevant int
	// Answerable is the number of queries with at least one relevant item
	// in the collection.
	Answerable int
	// Unjudged is the number of topics of the set left out for having no
	// judgement (TopicSet.Unjudged).
	Unjudged int
	// MatchedBy counts the judged ids found in the collection by how they
	// were matched ("id", "doi", "arxiv", "title"), summed over queries;
	// nil unless Options.ResolveGold was used.
	MatchedBy map[string]int
	PerQuery  []QueryResult
}

// Coverage returns the fraction of relevant items found in the collection,
// in [0, 1]; 1 when there is no relevant item.
func (r *Result) Coverage() float64 {
	if r.Relevant == 0 {
		return 1
	}
	return float64(r.Relevant-r.Missing) / float64(r.Relevant)
}

// Stage is one named step of the retrieval pipeline evaluated on its own
// ("bm25", later "dense", "fused", "reranked", "picked").
type Stage struct {
	Name      string
	Retriever retrieve.Retriever
}

// RunStages runs every stage over set, one after the other, and returns
// one Result per stage in the order given (Options.Stage is replaced by
// each stage's name). It stops at the first error Run returns.
func RunStages(ctx context.Context, set TopicSet, stages []Stage, opts Options) ([]*Result, error) {
	out := make([]*Result, 0, len(stages))
	for _, st := range stages {
		o := opts
		o.Stage = st.Name
		res, err := Run(ctx, set, st.Retriever, o)
		if err != nil {
			return nil, fmt.Errorf("stage %s: %w", st.Name, err)
		}
		out = append(out, res)
	}
	return out, nil
}

// Run sends every query of set to r, one at a time, and scores the hits
// against the judgements. A query whose retrieval fails is recorded with
// its error, scored zero and kept, and the run goes on. Run returns an
// error when ctx is cancelled (ctx.Err()), when Resolve fails, and
// ErrEmptyBenchmark when set has no query.
func Run(ctx context.Context, set TopicSet, r retrieve.Retriever, opts Options) (*Result, error) {
	return run(ctx, set, opts, func(ctx context.Context, q Query, k int) ([]corpus.Hit, error) {
		return r.Retrieve(ctx, q.Text, k)
	})
}

// ScoreRun scores a ranking made elsewhere (a TREC run file): hits maps a
// query id of set to its hits, best first. A query of set without an
// entry is scored zero with an empty ranking, as trec_eval -c does.
// Latencies are zero.
func ScoreRun(ctx context.Context, set TopicSet, hits map[string][]corpus.Hit, opts Options) (*Result, error) {
	return run(ctx, set, opts, func(ctx context.Context, q Query, k int) ([]corpus.Hit, error) {
		return hits[q.ID], nil
	})
}

func run(ctx context.Context, set TopicSet, opts Options, retrieve func(context.Context, Query, int) ([]corpus.Hit, error)) (*Result, error) {
	rs, err := RunMulti(ctx, set, []string{opts.Stage}, func(ctx context.Context, q Query, k int) (map[string]StageList, error) {
		start := time.Now()
		hits, err := retrieve(ctx, q, k)
		return map[string]StageList{opts.Stage: {Hits: hits, Latency: time.Since(start), Err: err}}, nil
	}, opts)
	if err != nil {
		return nil, err
	}
	return rs[0], nil
}

// StageList is one stage's ranking of one query.
type StageList struct {
	Hits    []corpus.Hit  // best first
	Latency time.Duration // how long the stage took for the query
	Err     error         // the stage failed for this query (scored 0)
}

// RunMulti runs every query of set once through rank, which ranks it for
// every stage at once (a whole pipeline: each retriever, the fusion, the
// reranker, …), and scores each named stage against the judgements: one
// Result per stage, in the order of stages (Options.Stage is replaced by
// the stage name). A stage rank leaves out, or an error rank returns for a
// query, counts as a failed query of every stage, scored zero. RunMulti
// returns an error when ctx is cancelled, when resolving the judged ids
// fails, and ErrEmptyBenchmark when set has no query.
func RunMulti(ctx context.Context, set TopicSet, stages []string, rank func(ctx context.Context, q Query, k int) (map[string]StageList, error), opts Options) ([]*Result, error) {
	if len(set.Queries) == 0 {
		return nil, fmt.Errorf("topic set %q: %w", set.Name, ErrEmptyBenchmark)
	}
	k := opts.K
	if k <= 0 {
		k = DefaultK
	}
	resolved, err := resolveAll(set, opts)
	if err != nil {
		return nil, fmt.Errorf("resolve judged ids: %w", err)
	}
	scorers := make([]*scorer, len(stages))
	for i, name := range stages {
		scorers[i] = &scorer{res: &Result{Bench: opts.Bench, Set: set.Name, Stage: name, Queries: len(set.Queries), Unjudged: len(set.Unjudged)}}
		if opts.ResolveGold != nil {
			scorers[i].res.MatchedBy = map[string]int{}
		}
	}
	for i, q := range set.Queries {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		j := judge(q, resolved)
		lists, err := rank(ctx, q, k)
		if cerr := ctx.Err(); cerr != nil {
			return nil, cerr
		}
		for si, sc := range scorers {
			l, ok := lists[stages[si]]
			switch {
			case err != nil:
				l = StageList{Err: err}
			case !ok:
				l = StageList{Err: fmt.Errorf("no ranking for stage %s", stages[si])}
			}
			sc.add(q, j, l, k)
		}
		if opts.Progress != nil {
			opts.Progress(i+1, len(set.Queries))
		}
	}
	out := make([]*Result, len(scorers))
	for i, sc := range scorers {
		out[i] = sc.finish()
	}
	return out, nil
}

// scorer accumulates one stage's Result query by query.
type scorer struct {
	res *Result
	per []Metrics
	lat []time.Duration
}

func (s *scorer) add(q Query, j judgement, l StageList, k int) {
	res := s.res
	qr := QueryResult{ID: q.ID, Latency: l.Latency}
	qr.Relevant, qr.RelevantMissing = j.items, j.missing
	for _, by := range j.by {
		res.MatchedBy[by]++
	}
	if l.Err != nil {
		qr.Err = l.Err.Error()
		qr.Metrics = Score(nil, j.relevant)
		res.Failed++
	} else {
		hits := l.Hits
		if len(hits) > k {
			hits = hits[:k]
		}
		qr.Hits = hits
		var keys []string
		keys, qr.Ranks = j.rank(hits)
		qr.Metrics = Score(keys, j.relevant)
		s.lat = append(s.lat, qr.Latency)
	}
	res.Relevant += qr.Relevant
	res.Missing += qr.RelevantMissing
	if qr.Relevant > qr.RelevantMissing {
		res.Answerable++
	}
	res.PerQuery = append(res.PerQuery, qr)
	s.per = append(s.per, qr.Metrics)
}

func (s *scorer) finish() *Result {
	s.res.Metrics = Mean(s.per)
	s.res.LatencyP50 = Percentile(s.lat, 50)
	s.res.LatencyP99 = Percentile(s.lat, 99)
	return s.res
}

// Match is how one judged id was found in the collection.
type Match struct {
	// Papers are the paper IDs that satisfy the judged id (any one of
	// them counts); empty when it is not in the collection.
	Papers []string
	// By says how it was matched: "id" (paper ID or alias), "doi",
	// "arxiv" or "title"; "" when not found.
	By string
}

// Keys in the id space Score sees. No paper ID contains a NUL byte, so
// these are never confused with one.
const (
	itemPrefix    = "\x00item:"    // a relevant item found in the collection
	missingPrefix = "\x00missing:" // a relevant item not in the collection: never retrieved, still in the recall denominator
	repeatPrefix  = "\x00repeat:"  // a further paper of an item already retrieved: takes a rank, not relevant
)

// judgement is one query's relevant items in Score's id space.
type judgement struct {
	relevant map[string]bool // item and missing keys
	item     map[string]int  // paper ID → item number
	items    int
	missing  int
	by       []string // how each found judged id was matched
}

// judge groups the judged ids of q into relevant items: judged ids that
// share a paper are one item, and a paper claimed by two judged ids
// belongs to the first.
func judge(q Query, resolved map[string]Match) judgement {
	j := judgement{relevant: map[string]bool{}, item: map[string]int{}}
	for _, id := range q.Relevant {
		m := resolved[id]
		if len(m.Papers) == 0 {
			j.relevant[missingPrefix+id] = true
			j.missing++
			j.items++
			continue
		}
		if m.By != "" {
			j.by = append(j.by, m.By)
		}
		n, merged := -1, false
		for _, p := range m.Papers {
			if it, ok := j.item[p]; ok {
				n, merged = it, true
				break
			}
		}
		if !merged {
			n = j.items
			j.items++
			j.relevant[itemPrefix+strconv.Itoa(n)] = true
		}
		for _, p := range m.Papers {
			if _, ok := j.item[p]; !ok {
				j.item[p] = n
			}
		}
	}
	return j
}

// rank maps hits to Score's id space: a repeated paper ID is dropped (it
// takes no rank), a paper of a relevant item becomes the item's key at its
// first rank and a non-relevant repeat key later. It also returns the
// ranks at which items were found.
func (j judgement) rank(hits []corpus.Hit) ([]string, []int) {
	keys := make([]string, 0, len(hits))
	seen := make(map[string]bool, len(hits))
	found := map[int]bool{}
	var ranks []int
	for _, h := range hits {
		if seen[h.ID] {
			continue
		}
		seen[h.ID] = true
		n, ok := j.item[h.ID]
		switch {
		case !ok:
			keys = append(keys, h.ID)
		case found[n]:
			keys = append(keys, repeatPrefix+h.ID)
		default:
			found[n] = true
			keys = append(keys, itemPrefix+strconv.Itoa(n))
			ranks = append(ranks, len(keys))
		}
	}
	return keys, ranks
}

// resolveAll maps every judged id of set to the papers that satisfy it.
func resolveAll(set TopicSet, opts Options) (map[string]Match, error) {
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
	out := make(map[string]Match, len(ids))
	switch {
	case opts.ResolveGold != nil:
		return opts.ResolveGold(ids)
	case opts.Resolve != nil:
		m, err := opts.Resolve(ids)
		if err != nil {
			return nil, err
		}
		for id, p := range m {
			out[id] = Match{Papers: []string{p}}
		}
	default:
		for _, id := range ids {
			if d := corpus.NormalizeDOI(id); d != "" {
				out[id] = Match{Papers: []string{d}}
			} else {
				out[id] = Match{Papers: []string{id}}
			}
		}
	}
	return out, nil
}

// PooledLatencies returns the latencies of the queries that did not fail
// in the results of stage, over every topic set.
func PooledLatencies(results []*Result, stage string) []time.Duration {
	var lat []time.Duration
	for _, res := range results {
		if res.Stage != stage {
			continue
		}
		for _, q := range res.PerQuery {
			if q.Err == "" {
				lat = append(lat, q.Latency)
			}
		}
	}
	return lat
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
