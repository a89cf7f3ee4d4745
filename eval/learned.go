package eval

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/rerank"
	"github.com/citefind/citefind/rerank/learned"
)

// DatasetOptions configure CandidateDataset.
type DatasetOptions struct {
	// Retrievers are the retrievers the candidates were fused from, and
	// Depth how many candidates each query has.
	Retrievers []string
	Depth      int
	// Settings describes the retrieval (every setting that changes the
	// candidates); the cache is used only when it matches. The number of
	// queries and a digest of their ids are added to it.
	Settings string
	// Cache is the dataset file; "" means a file in Dir named after a
	// hash of Settings.
	Cache, Dir string
	// Log receives one line on where the dataset comes from; nil: none.
	Log io.Writer
	// Progress, when set, is called after each query of each set.
	Progress func(set string, done, total int)
}

// CandidateDataset returns the benchmark's queries with their fused
// candidates (search with no reranker, Depth deep) and judgements (found
// with resolve), for training or cross-validating the learned reranker:
// from the cache file when its settings match, else by running retrieval
// once and saving it there. Benchmarks judged by gold papers are refused:
// the learned reranker trains on judgements by paper ID.
func CandidateDataset(ctx context.Context, b *Bench, search func(ctx context.Context, text string) ([]rerank.Candidate, error),
	resolve func(ids []string) (map[string]string, error), o DatasetOptions) (*learned.Dataset, error) {
	// The queries are part of the settings: a sample, or a split with
	// some queries excluded, is another dataset than the whole split.
	qh := sha256.New()
	nq := 0
	for _, set := range b.Sets {
		for _, q := range set.Queries {
			fmt.Fprintf(qh, "%s\x00%s\x00", set.Name, q.ID)
			nq++
		}
	}
	o.Settings += fmt.Sprintf(" queries=%d/%s", nq, hex.EncodeToString(qh.Sum(nil)[:6]))
	cache := o.Cache
	if cache == "" {
		h := sha256.Sum256([]byte(o.Settings))
		cache = filepath.Join(o.Dir, "learned-dataset-"+hex.EncodeToString(h[:6])+".json.gz")
	}
	logf := func(format string, args ...any) {
		if o.Log != nil {
			fmt.Fprintf(o.Log, format+"\n", args...)
		}
	}
	if ds, err := learned.LoadDataset(cache); err == nil && ds.Settings == o.Settings {
		logf("candidate dataset: %d queries from %s", len(ds.Queries), cache)
		return ds, nil
	} else if err == nil {
		logf("candidate dataset %s was made with other settings; rebuilding it", cache)
	} else if !errors.Is(err, os.ErrNotExist) {
		logf("candidate dataset %s is unusable (%v); rebuilding it", cache, err)
	}
	ds := &learned.Dataset{Version: learned.DatasetVersion, Bench: b.Name, Depth: o.Depth,
		Retrievers: slices.Clone(o.Retrievers), Settings: o.Settings, Created: time.Now().UTC()}
	for _, set := range b.Sets {
		if set.Gold != nil {
			return nil, fmt.Errorf("%w: the learned reranker trains on benchmarks judged by paper IDs (acm-cr, jsonl), not on %s's gold papers", ErrBenchUsage, b.Name)
		}
		var ids []string
		for _, q := range set.Queries {
			ids = append(ids, q.Relevant...)
		}
		slices.Sort(ids)
		resolved, err := resolve(slices.Compact(ids))
		if err != nil {
			return nil, fmt.Errorf("resolve judged ids: %w", err)
		}
		for i, q := range set.Queries {
			cands, err := search(ctx, q.Text)
			if err != nil {
				return nil, fmt.Errorf("candidates of %s:%s: %w", set.Name, q.ID, err)
			}
			dq := learned.Query{Set: set.Name, ID: q.ID, Group: q.Group, Text: q.Text}
			for _, id := range q.Relevant {
				if p, ok := resolved[id]; ok {
					if !slices.Contains(dq.Relevant, p) {
						dq.Relevant = append(dq.Relevant, p)
					}
				} else {
					dq.Missing++
				}
			}
			ds.Add(dq, cands)
			if o.Progress != nil {
				o.Progress(set.Name, i+1, len(set.Queries))
			}
		}
	}
	if err := ds.Save(cache); err != nil {
		return nil, err
	}
	logf("candidate dataset: %d queries saved to %s", len(ds.Queries), cache)
	return ds, nil
}

// CrossValidated reranks each query with the model of the fold that did
// not see its group (citing paper): honest figures for the learned
// reranker on the benchmark it is trained on.
type CrossValidated struct {
	fold map[string]int // query text → fold
	rs   []*learned.Reranker
}

// CrossValidate trains one model per fold of ds (folds by query group,
// seed fixes the assignment) with the default parameters.
func CrossValidate(ctx context.Context, ds *learned.Dataset, folds int, seed uint64, progress func(done, total int)) (*CrossValidated, error) {
	samples, err := ds.Samples(ctx, ds.Retrievers)
	if err != nil {
		return nil, err
	}
	cv, err := learned.CrossValidate(ctx, ds, samples, folds, learned.DefaultParams(), seed, progress)
	if err != nil {
		return nil, err
	}
	// Each query text is reranked by its fold's model; a text shared by
	// queries of different citing papers in different folds cannot be.
	out := &CrossValidated{fold: map[string]int{}}
	for _, q := range ds.Queries {
		fq := cv.Fold[q.Group]
		if prev, ok := out.fold[q.Text]; ok && prev != fq {
			return nil, fmt.Errorf("cross-validation: query %s:%s has the text of a query of another fold", q.Set, q.ID)
		}
		out.fold[q.Text] = fq
	}
	for _, m := range cv.Models {
		out.rs = append(out.rs, learned.New(m))
	}
	return out, nil
}

// Rerank reorders one query's fused candidates with its fold's model, as
// the StageReranked list.
func (cv *CrossValidated) Rerank(ctx context.Context, text string, cands []rerank.Candidate) (StageList, error) {
	fq, ok := cv.fold[text]
	if !ok {
		return StageList{}, errors.New("cross-validation: query not in the candidate dataset")
	}
	start := time.Now()
	out, err := cv.rs[fq].Rerank(ctx, text, cands)
	if err != nil {
		return StageList{}, err
	}
	hits := make([]corpus.Hit, len(out.Candidates))
	for i, c := range out.Candidates {
		hits[i] = corpus.Hit{ID: c.ID, Score: out.Scores[i]}
	}
	return StageList{Hits: hits, Latency: time.Since(start)}, nil
}
