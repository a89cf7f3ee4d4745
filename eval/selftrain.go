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

// ErrTooSmall means a library is too small to self-train the learned
// reranker on; the error says what it has and what is needed.
var ErrTooSmall = errors.New("too small to learn from")

// MinSelfQueries is the least number of pseudo-queries whose paper is
// among their candidates (with other candidates as negatives) that
// SelfDataset accepts.
const MinSelfQueries = 50

// SelfOptions configure SelfDataset.
type SelfOptions struct {
	// Pseudo says how many pseudo-queries to make and how.
	Pseudo learned.PseudoOptions
	// Retrievers, Depth and Settings describe the retrieval, as in
	// DatasetOptions; Dir is the folder of the cache file.
	Retrievers []string
	Depth      int
	Settings   string
	Dir        string
	// Log receives one line on where the dataset comes from; nil: none.
	Log io.Writer
	// Progress, when set, is called after each query.
	Progress func(done, total int)
}

// SelfDataset makes the training data of self-training from a library's
// papers: pseudo-queries (learned.PseudoQueries), each searched with
// search (the pipeline's fused candidates, no reranker); the paper a
// query was made from is its one relevant candidate, seen by the
// features without the sentence or keywords the query came from (under
// an ID of its own), and the other candidates are negatives, except those
// with the same normalised title (copies of the paper). Sets are the
// query kinds; a query's group is its paper. The dataset is cached in
// Dir under the settings, like CandidateDataset.
//
// A library with fewer than learned.MinSelfPapers eligible papers, or
// whose pseudo-queries find their paper among the candidates fewer than
// MinSelfQueries times, gives an error wrapping ErrTooSmall.
func SelfDataset(ctx context.Context, papers []learned.PseudoPaper, search func(ctx context.Context, text string) ([]rerank.Candidate, error),
	o SelfOptions) (*learned.Dataset, error) {
	eligible := 0
	for _, p := range papers {
		if learned.Eligible(p.Paper) {
			eligible++
		}
	}
	if eligible < learned.MinSelfPapers {
		return nil, fmt.Errorf("%w: %d papers, %d of them with a title of three words or more or an abstract of two sentences or more; self-training needs at least %d such papers to make queries with other papers as negatives",
			ErrTooSmall, len(papers), eligible, learned.MinSelfPapers)
	}
	qs := learned.PseudoQueries(papers, o.Pseudo)
	settings := fmt.Sprintf("self %s n=%d seed=%d rare=%g drop=%g papers=%d eligible=%d", o.Settings, o.Pseudo.N, o.Pseudo.Seed,
		o.Pseudo.RareDrop, o.Pseudo.DropRate, len(papers), eligible)
	h := sha256.Sum256([]byte(settings))
	cache := filepath.Join(o.Dir, "learned-self-dataset-"+hex.EncodeToString(h[:6])+".json.gz")
	logf := func(format string, args ...any) {
		if o.Log != nil {
			fmt.Fprintf(o.Log, format+"\n", args...)
		}
	}
	if ds, err := learned.LoadDataset(cache); err == nil && ds.Settings == settings {
		logf("self-training dataset: %d pseudo-queries from %s", len(ds.Queries), cache)
		return ds, checkSelf(ds)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		logf("self-training dataset %s is unusable (%v); rebuilding it", cache, err)
	}
	ds := &learned.Dataset{Version: learned.DatasetVersion, Bench: "self", Depth: o.Depth,
		Retrievers: slices.Clone(o.Retrievers), Settings: settings, Created: time.Now().UTC()}
	for i, q := range qs {
		cands, err := search(ctx, q.Text)
		if err != nil {
			return nil, fmt.Errorf("candidates of pseudo-query %d (%s of %s): %w", i+1, q.Kind, q.PaperID, err)
		}
		dq := learned.Query{Set: q.Kind, ID: fmt.Sprintf("self-%d", i+1), Group: q.PaperID, Text: q.Text}
		pos := slices.IndexFunc(cands, func(c rerank.Candidate) bool { return c.ID == q.PaperID })
		if pos < 0 {
			dq.Missing = 1
		} else {
			title := corpus.NormalizeTitle(cands[pos].Title)
			kept := make([]rerank.Candidate, 0, len(cands))
			for k, c := range cands {
				switch {
				case k == pos:
					c.ID = "self:" + dq.ID + ":" + q.PaperID
					c.Title, c.Abstract, c.Keywords = q.Paper.Title, q.Paper.Abstract, q.Paper.Keywords
					dq.Relevant = []string{c.ID}
				case title != "" && corpus.NormalizeTitle(c.Title) == title:
					continue // a copy of the paper: neither answer nor negative
				}
				kept = append(kept, c)
			}
			cands = kept
		}
		ds.Add(dq, cands)
		if o.Progress != nil {
			o.Progress(i+1, len(qs))
		}
	}
	if err := checkSelf(ds); err != nil {
		return nil, err
	}
	if err := ds.Save(cache); err != nil {
		return nil, err
	}
	logf("self-training dataset: %d pseudo-queries saved to %s", len(ds.Queries), cache)
	return ds, nil
}

// SelfFound returns how many queries of a self-training dataset have
// their paper among the candidates, with at least one negative.
func SelfFound(ds *learned.Dataset) int {
	n := 0
	for _, q := range ds.Queries {
		if len(q.Relevant) > 0 && len(q.Cands) > 1 {
			n++
		}
	}
	return n
}

func checkSelf(ds *learned.Dataset) error {
	if n := SelfFound(ds); n < MinSelfQueries {
		return fmt.Errorf("%w: only %d of %d pseudo-queries found their paper among the candidates with other papers beside it; self-training needs at least %d",
			ErrTooSmall, n, len(ds.Queries), MinSelfQueries)
	}
	return nil
}
