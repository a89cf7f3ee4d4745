package lsa

import (
	"context"
	"iter"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/citefind/citefind/retrieve/sparse"
)

// collection is the analyzed corpus before the vocabulary is chosen: every
// document as (raw term id, term frequency) pairs sorted by id.
type collection struct {
	terms []string // raw id → term, first-seen order
	df    []int32  // raw id → documents containing the term
	ptr   []int    // document d's pairs are ids[ptr[d]:ptr[d+1]]
	ids   []int32
	tfs   []int32
}

// batchSize is the number of documents analyzed together by the workers.
const batchSize = 512

// collect analyzes every text of texts (on workers goroutines, a batch at a
// time) and counts terms.
func collect(ctx context.Context, texts iter.Seq[string], progress func(string, int, int)) (*collection, error) {
	c := &collection{ptr: []int{0}}
	dict := map[string]int32{}
	batch := make([]string, 0, batchSize)
	analyzed := make([][]string, batchSize)
	docs := 0
	var scratch []int32
	flush := func() {
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for i := w; i < len(batch); i += workers {
					analyzed[i] = sparse.Analyze(batch[i])
				}
			})
		}
		wg.Wait()
		for i := range batch {
			scratch = scratch[:0]
			for _, t := range analyzed[i] {
				id, ok := dict[t]
				if !ok {
					id = int32(len(c.terms))
					dict[t] = id
					c.terms = append(c.terms, t)
					c.df = append(c.df, 0)
				}
				scratch = append(scratch, id)
			}
			analyzed[i] = nil
			sortInt32(scratch)
			for j := 0; j < len(scratch); {
				e := j + 1
				for e < len(scratch) && scratch[e] == scratch[j] {
					e++
				}
				c.ids = append(c.ids, scratch[j])
				c.tfs = append(c.tfs, int32(e-j))
				c.df[scratch[j]]++
				j = e
			}
			c.ptr = append(c.ptr, len(c.ids))
		}
		docs += len(batch)
		batch = batch[:0]
		progress("analyze", docs, 0)
	}
	for t := range texts {
		if len(batch) == batchSize {
			if ctx.Err() != nil {
				break
			}
			flush()
		}
		batch = append(batch, t)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(batch) > 0 {
		flush()
	}
	return c, nil
}

func (c *collection) docs() int { return len(c.ptr) - 1 }

// vocabulary applies the document-frequency filters and the size cap of o
// and returns the kept terms, sorted, and the map from raw id to column
// (-1 for a dropped term).
func (c *collection) vocabulary(o Options) ([]string, []int32) {
	maxDF := int(math.Floor(o.MaxDFRatio * float64(c.docs())))
	var keep []int32
	for id, df := range c.df {
		if int(df) >= o.MinDF && int(df) <= maxDF {
			keep = append(keep, int32(id))
		}
	}
	if len(keep) > o.MaxVocab {
		sort.Slice(keep, func(a, b int) bool {
			da, db := c.df[keep[a]], c.df[keep[b]]
			if da != db {
				return da > db
			}
			return c.terms[keep[a]] < c.terms[keep[b]]
		})
		keep = keep[:o.MaxVocab]
	}
	sort.Slice(keep, func(a, b int) bool { return c.terms[keep[a]] < c.terms[keep[b]] })
	remap := make([]int32, len(c.terms))
	for i := range remap {
		remap[i] = -1
	}
	vocab := make([]string, len(keep))
	for col, id := range keep {
		remap[id] = int32(col)
		vocab[col] = strings.Clone(c.terms[id])
	}
	return vocab, remap
}

// matrix builds the documents × vocabulary tf-idf matrix, rows
// L2-normalised, and returns it with the idf of each column.
func (c *collection) matrix(remap []int32, nterms int) (*csr, []float64) {
	n := c.docs()
	df := make([]int, nterms)
	for id, col := range remap {
		if col >= 0 {
			df[col] = int(c.df[id])
		}
	}
	idf := make([]float64, nterms)
	for j, d := range df {
		idf[j] = math.Log(float64(n) / float64(d))
	}
	a := &csr{rows: n, cols: nterms, ptr: make([]int, n+1)}
	type entry struct {
		col int32
		val float64
	}
	var row []entry
	for d := range n {
		row = row[:0]
		for p := c.ptr[d]; p < c.ptr[d+1]; p++ {
			if col := remap[c.ids[p]]; col >= 0 {
				row = append(row, entry{col, termWeight(int(c.tfs[p]), idf[col])})
			}
		}
		slices.SortFunc(row, func(x, y entry) int { return int(x.col) - int(y.col) })
		var norm float64
		for _, e := range row {
			norm += e.val * e.val
		}
		norm = math.Sqrt(norm)
		for _, e := range row {
			a.col = append(a.col, e.col)
			a.val = append(a.val, e.val/norm)
		}
		a.ptr[d+1] = len(a.col)
	}
	return a, idf
}

// csr is a sparse matrix in compressed sparse row form: row i's entries
// are col[ptr[i]:ptr[i+1]] (ascending) with values val[ptr[i]:ptr[i+1]].
type csr struct {
	rows, cols int
	ptr        []int
	col        []int32
	val        []float64
}

func (a *csr) nnz() int { return len(a.col) }

// transpose returns aᵀ in CSR form (columns ascending within each row).
func (a *csr) transpose() *csr {
	t := &csr{rows: a.cols, cols: a.rows, ptr: make([]int, a.cols+1),
		col: make([]int32, a.nnz()), val: make([]float64, a.nnz())}
	for _, j := range a.col {
		t.ptr[j+1]++
	}
	for j := range a.cols {
		t.ptr[j+1] += t.ptr[j]
	}
	next := slices.Clone(t.ptr[:a.cols])
	for i := range a.rows {
		for p := a.ptr[i]; p < a.ptr[i+1]; p++ {
			j := a.col[p]
			q := next[j]
			t.col[q] = int32(i)
			t.val[q] = a.val[p]
			next[j]++
		}
	}
	return t
}

// split returns workers+1 row boundaries of a that give each worker about
// the same number of non-zeros.
func (a *csr) split() []int {
	b := make([]int, workers+1)
	b[workers] = a.rows
	for w := 1; w < workers; w++ {
		target := a.nnz() * w / workers
		b[w] = sort.Search(a.rows, func(i int) bool { return a.ptr[i] >= target })
	}
	return b
}

// checkEvery is how many rows a worker handles between two looks at ctx.
const checkEvery = 1024

// mul sets out (a.rows × c, row-major) to a·x, x being a.cols × c.
func (a *csr) mul(ctx context.Context, x []float64, c int, out []float64) error {
	b := a.split()
	return parallel(ctx, func(ctx context.Context, w int) error {
		for i := b[w]; i < b[w+1]; i++ {
			if (i-b[w])%checkEvery == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			dst := out[i*c : (i+1)*c]
			clear(dst)
			for p := a.ptr[i]; p < a.ptr[i+1]; p++ {
				j := int(a.col[p])
				axpy(a.val[p], x[j*c:(j+1)*c], dst)
			}
		}
		return nil
	})
}

// parallel runs f for w = 0 … workers-1 on their own goroutines and
// returns the first error, or ctx's error.
func parallel(ctx context.Context, f func(ctx context.Context, w int) error) error {
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() { errs[w] = f(ctx, w) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return ctx.Err()
}

// axpy adds alpha·x to y; len(y) ≤ len(x).
func axpy(alpha float64, x, y []float64) {
	x = x[:len(y)]
	i := 0
	for ; i+4 <= len(y); i += 4 {
		y[i] += alpha * x[i]
		y[i+1] += alpha * x[i+1]
		y[i+2] += alpha * x[i+2]
		y[i+3] += alpha * x[i+3]
	}
	for ; i < len(y); i++ {
		y[i] += alpha * x[i]
	}
}

// axpy32 adds alpha·x to y.
func axpy32(alpha float64, x []float32, y []float64) {
	x = x[:len(y)]
	for i, v := range x {
		y[i] += alpha * float64(v)
	}
}

// dot returns x·y; len(y) ≥ len(x).
func dot(x, y []float64) float64 {
	y = y[:len(x)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		s0 += x[i] * y[i]
		s1 += x[i+1] * y[i+1]
		s2 += x[i+2] * y[i+2]
		s3 += x[i+3] * y[i+3]
	}
	for ; i < len(x); i++ {
		s0 += x[i] * y[i]
	}
	return (s0 + s1) + (s2 + s3)
}

func sortInt32(s []int32) { slices.Sort(s) }
