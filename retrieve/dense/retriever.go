package dense

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	chromem "github.com/philippgille/chromem-go"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/internal/topk"
)

// Stat reads the header of the index in dir without loading it. It fails
// with ErrNoIndex when there is none.
func Stat(dir string) (Header, error) {
	var h Header
	b, err := os.ReadFile(filepath.Join(dir, HeaderFile))
	if errors.Is(err, fs.ErrNotExist) {
		return h, fmt.Errorf("dense: %s: %w", dir, ErrNoIndex)
	}
	if err != nil {
		return h, fmt.Errorf("dense: %w", err)
	}
	if err := json.Unmarshal(b, &h); err != nil {
		return h, fmt.Errorf("dense: %s: %w: bad header: %w", dir, ErrNoIndex, err)
	}
	if h.Format != formatV1 || h.Export == "" || filepath.Base(h.Export) != h.Export {
		return h, fmt.Errorf("dense: %s: %w: unknown header format %d", dir, ErrNoIndex, h.Format)
	}
	return h, nil
}

// Retriever answers queries from an index loaded in memory: the paper IDs
// in ascending order and their unit vectors in one contiguous []float32
// (row i is vecs[i*dim:(i+1)*dim]), plus, from quantMinRows papers on, an
// int8 copy of the vectors that queries scan first (a quarter of the
// bytes). It holds no file open and is safe for concurrent use.
type Retriever struct {
	emb    Embedder
	header Header
	dim    int
	ids    []string
	vecs   []float32
	quant  *quantMatrix // nil below quantMinRows papers
	// fromSidecar is true when Open read the sidecar, not the export.
	fromSidecar bool
	// scratch pools scanQuant's working memory (*scanScratch).
	scratch sync.Pool
}

// Open loads the index in dir for queries embedded by emb. It fails with
// ErrNoIndex when there is no index, and with ErrModelMismatch when the
// index was built with another model id, or when emb already knows its
// dimension and it is not the index's. A nil emb opens the index for
// RetrieveVector only (the caller embeds the queries and checks the
// model against Header().Model); Retrieve then fails with ErrEmbedder.
//
// Open reads the export's sidecar (see SidecarName) when there is one made
// for this export that passes its checks (sizes, IDs ascending, CRC-32C
// of the whole file): one read, used in place. Otherwise it reads the
// export with chromem-go's importer and copies it into the flat matrix
// (and quantises it); chromem's copy is then dropped. A missing or bad
// sidecar is no error: it only makes Open slower. Either way the
// Retriever holds the vectors once in float32 and once in int8 (about
// 5·dim bytes per paper).
func Open(dir string, emb Embedder) (*Retriever, error) {
	h, err := Stat(dir)
	if err != nil {
		return nil, err
	}
	if emb == nil {
		// Vector queries only.
	} else if h.Model != emb.Model() {
		return nil, fmt.Errorf("dense: open %s: %w: index has %q, embedder is %q", dir, ErrModelMismatch, h.Model, emb.Model())
	}
	if d := dimOf(emb); d != 0 && d != h.Dim {
		return nil, fmt.Errorf("dense: open %s: %w: index has dimension %d, embedder %d", dir, ErrModelMismatch, h.Dim, d)
	}
	r := &Retriever{emb: emb, header: h, dim: h.Dim}
	if h.Docs == 0 {
		return r, nil
	}
	if err := r.loadSidecar(dir); err == nil {
		r.fromSidecar = true
		return r, nil
	}
	// No usable sidecar (missing, stale or damaged): import the export.
	if err := r.loadExport(dir); err != nil {
		return nil, fmt.Errorf("dense: open %s: %w", dir, err)
	}
	return r, nil
}

// load copies the collection's vectors into the flat matrix.
func (r *Retriever) load(col *chromem.Collection) error {
	n := col.Count()
	if n != r.header.Docs {
		return fmt.Errorf("%d documents, header says %d", n, r.header.Docs)
	}
	// chromem-go has no way to list a collection's documents except a
	// query for all of them (nResults = Count, never more: it fails
	// then). Any unit vector will do; results share chromem's vectors,
	// which are copied below.
	probe := make([]float32, r.dim)
	probe[0] = 1
	res, err := col.QueryEmbedding(context.Background(), probe, n, nil, nil)
	if err != nil {
		return err
	}
	if len(res) != n {
		return fmt.Errorf("listed %d of %d documents", len(res), n)
	}
	slices.SortFunc(res, func(a, b chromem.Result) int { return strings.Compare(a.ID, b.ID) })
	r.ids = make([]string, n)
	r.vecs = make([]float32, n*r.dim)
	for i, doc := range res {
		if len(doc.Embedding) != r.dim {
			return fmt.Errorf("document %s has dimension %d, header says %d", doc.ID, len(doc.Embedding), r.dim)
		}
		r.ids[i] = doc.ID
		copy(r.vecs[i*r.dim:], doc.Embedding)
	}
	if n >= quantMinRows {
		r.quant = quantize(r.vecs, n, r.dim)
	}
	return nil
}

// Header returns the index header.
func (r *Retriever) Header() Header { return r.header }

// Count returns the number of papers in the index.
func (r *Retriever) Count() int { return len(r.ids) }

// Retrieve embeds query with the index's embedder (EmbedQuery when it is a
// QueryEmbedder) and returns the k papers with the highest cosine
// similarity, best first; equal scores are ordered by ID ascending. Scores
// are cosines in [-1, 1]. k is clamped to Count(); k <= 0 is an error
// (ErrBadK). A query whose vector is zero (e.g. no words for the
// HashEmbedder) gives an empty result.
func (r *Retriever) Retrieve(ctx context.Context, query string, k int) ([]corpus.Hit, error) {
	if k <= 0 {
		return nil, fmt.Errorf("dense: retrieve: %w (got %d)", ErrBadK, k)
	}
	if r.emb == nil {
		return nil, fmt.Errorf("dense: retrieve: %w: the index was opened for vector queries only", ErrEmbedder)
	}
	q, err := EmbedQuery(ctx, r.emb, query)
	if err != nil {
		return nil, err
	}
	return r.RetrieveVector(ctx, q, k)
}

// RetrieveVector is Retrieve for a query vector already embedded (not
// necessarily normalised) by the index's embedder. It fails with
// ErrModelMismatch when the vector's length is not the index's dimension.
func (r *Retriever) RetrieveVector(ctx context.Context, vec []float32, k int) ([]corpus.Hit, error) {
	if k <= 0 {
		return nil, fmt.Errorf("dense: retrieve: %w (got %d)", ErrBadK, k)
	}
	if len(r.ids) == 0 {
		return []corpus.Hit{}, nil
	}
	if len(vec) != r.dim {
		return nil, fmt.Errorf("dense: retrieve: %w: query has dimension %d, index %d", ErrModelMismatch, len(vec), r.dim)
	}
	q := slices.Clone(vec)
	if !normalize(q) {
		return []corpus.Hit{}, nil
	}
	var top []cand
	var err error
	if r.quant != nil {
		top, _, err = r.scanQuant(ctx, q, min(k, len(r.ids)))
	} else {
		top, err = r.scan(ctx, q, min(k, len(r.ids)))
	}
	if err != nil {
		return nil, fmt.Errorf("dense: retrieve: %w", err)
	}
	hits := make([]corpus.Hit, len(top))
	for i, c := range top {
		hits[i] = corpus.Hit{ID: r.ids[c.row], Score: float64(c.score)}
	}
	// The matrices may be a mapping of the sidecar, unmapped when r is
	// collected: r must outlive the scan.
	runtime.KeepAlive(r)
	return hits, nil
}

// scanBlock is how many rows are scored between ctx checks.
const scanBlock = 4096

type cand struct {
	score float32
	row   int32
}

// Worse orders candidates: lower score, then higher row (= higher ID).
func (c cand) Worse(d cand) bool {
	return c.score < d.score || c.score == d.score && c.row > d.row
}

// scan is the flat exhaustive search: one pass over the contiguous matrix
// with an unrolled dot product and a size-k min-heap of the best rows so
// far. Rows are in ascending ID order and visited in order, so a row that
// only ties the heap's worst never replaces it: ties go to the lower ID
// without comparing strings.
func (r *Retriever) scan(ctx context.Context, q []float32, k int) ([]cand, error) {
	d := r.dim
	n := len(r.ids)
	h := topk.New[cand](k)
	vecs := r.vecs
	for start := 0; start < n; start += scanBlock {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		end := min(start+scanBlock, n)
		row := vecs[start*d : end*d]
		for i := start; i < end; i++ {
			s := dot(q, row[:d:d])
			row = row[d:]
			if !h.Full() || s > h.Min().score {
				h.Push(cand{s, int32(i)})
			}
		}
	}
	return h.Sorted(), nil
}

// dot is the dot product of two equally long vectors, unrolled by 8 with
// four independent accumulators.
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		aa := a[i : i+8 : i+8]
		bb := b[i : i+8 : i+8]
		s0 += aa[0]*bb[0] + aa[4]*bb[4]
		s1 += aa[1]*bb[1] + aa[5]*bb[5]
		s2 += aa[2]*bb[2] + aa[6]*bb[6]
		s3 += aa[3]*bb[3] + aa[7]*bb[7]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// dimOf is emb.Dim(), 0 for a nil emb.
func dimOf(emb Embedder) int {
	if emb == nil {
		return 0
	}
	return emb.Dim()
}
