package sparse

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/document"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/index/scorch/mergeplan"
	"github.com/blevesearch/bleve/v2/mapping"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/citefind/citefind/corpus"
)

// Index fields. FieldText is the concatenation of title, abstract and
// keywords; the others hold one part each. Keywords are joined with ". ".
const (
	FieldText     = "text"
	FieldTitle    = "title"
	FieldAbstract = "abstract"
	FieldKeywords = "keywords"
)

// Defaults for BuildOptions.
const (
	DefaultBatchSize = 1000
)

// DefaultFields are the fields Build indexes when BuildOptions.Fields is
// empty.
func DefaultFields() []string { return []string{FieldText, FieldTitle} }

// knownFields are all fields Build can index, in canonical order.
func knownFields() []string {
	return []string{FieldText, FieldTitle, FieldAbstract, FieldKeywords}
}

// BuildOptions configures Build. The zero value is ready to use.
type BuildOptions struct {
	// Fields to index, a subset of FieldText, FieldTitle, FieldAbstract
	// and FieldKeywords. Empty means DefaultFields (text and title). Each
	// extra field costs indexing time and disk; only indexed fields can be
	// given a weight in Options.FieldWeights.
	Fields []string
	// BatchSize is the number of papers per bleve batch (one segment
	// each). Zero means DefaultBatchSize.
	BatchSize int
	// KeepSegments skips the final merge of bleve's segments (one per
	// batch, partly merged in the background) into one. Queries read every
	// segment, so they get slower; this exists to test that scores do not
	// depend on the segment layout.
	KeepSegments bool
	// Meta is stored in the index as-is and read back with
	// Retriever.Meta, e.g. the store generation the index was built from.
	Meta map[string]string
}

// BuildStats describes a finished Build.
type BuildStats struct {
	Docs     int           // documents in the index (distinct paper IDs)
	Duration time.Duration // wall time of Build
	Bytes    int64         // on-disk size of the index folder
}

// Internal (bleve SetInternal) keys.
const (
	headerKey  = "citefind.sparse.header"
	metaPrefix = "citefind.sparse.meta."
	formatV1   = 1 // no per-document lengths: can be read, not updated
	formatV2   = 2 // each document stores its field lengths (lensField)
)

// lensField is the stored-only field holding a document's analyzed field
// lengths, so that Update can take a replaced or deleted document out of
// the header's totals.
const lensField = "_lens"

// header is the JSON value stored under headerKey. It holds the collection
// statistics BM25 needs that bleve does not keep exactly.
type header struct {
	Format   int      `json:"format"`
	Analyzer string   `json:"analyzer"`
	Fields   []string `json:"fields"`
	// Docs is the number of documents (N).
	Docs uint64 `json:"docs"`
	// Lengths is the total analyzed length (tokens after analysis) of
	// each field over all documents; avgdl = Lengths[f] / Docs.
	Lengths map[string]uint64 `json:"lengths"`
}

func (o BuildOptions) fields() ([]string, error) {
	if len(o.Fields) == 0 {
		return DefaultFields(), nil
	}
	var out []string
	for _, f := range o.Fields {
		if !slices.Contains(knownFields(), f) {
			return nil, fmt.Errorf("%w: %q (want one of %s)", ErrUnknownField, f, strings.Join(knownFields(), ", "))
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out, nil
}

// fieldValue returns the text of field f of p.
func fieldValue(p *corpus.Paper, f string) string {
	switch f {
	case FieldTitle:
		return p.Title
	case FieldAbstract:
		return p.Abstract
	case FieldKeywords:
		return strings.Join(p.Keywords, ". ")
	case FieldText:
		parts := make([]string, 0, 3)
		for _, s := range []string{p.Title, p.Abstract, strings.Join(p.Keywords, ". ")} {
			if s != "" {
				parts = append(parts, s)
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}

// newMapping describes the index to bleve: only the given text fields,
// analyzed with AnalyzerName, not stored, no term vectors, no doc values,
// no _all field and no dynamic fields. Build feeds bleve pre-mapped
// documents (Batch.IndexAdvanced) built the same way, so the mapping is
// documentation stored with the index rather than a code path.
func newMapping(fields []string) *mapping.IndexMappingImpl {
	m := bleve.NewIndexMapping()
	m.DefaultAnalyzer = AnalyzerName
	m.StoreDynamic = false
	m.IndexDynamic = false
	m.DocValuesDynamic = false
	dm := bleve.NewDocumentStaticMapping()
	for _, f := range fields {
		fm := bleve.NewTextFieldMapping()
		fm.Analyzer = AnalyzerName
		fm.Store = false
		fm.IncludeTermVectors = false
		fm.IncludeInAll = false
		fm.DocValues = false
		dm.AddFieldMappingsAt(f, fm)
	}
	m.DefaultMapping = dm
	return m
}

// Build writes a new index of all papers into dir.
//
// It builds in a sibling temp folder (dir + ".tmp-<random>") and renames
// it into place only when complete. An existing index at dir is replaced:
// it is renamed aside, the new one renamed in, the old one removed. So a
// failure, crash or cancelled ctx never leaves a half-written index at dir;
// on error the temp folder is removed and an old index is left intact.
// Build refuses to replace a non-empty dir that is not a bleve index. (A
// process killed mid-build leaves its dir.tmp-* folder behind; it is never
// read and can be deleted.)
//
// next is a pull iterator over the papers: Build calls it until it returns
// ok=false or an error. Every paper must have an ID; when an ID repeats, the
// last paper wins. progress, when not nil, is called after each batch with
// the number of papers indexed so far. ctx is checked between batches.
func Build(ctx context.Context, dir string, opts BuildOptions, next func() (corpus.Paper, bool, error), progress func(done int)) (st BuildStats, err error) {
	start := time.Now()
	fields, err := opts.fields()
	if err != nil {
		return st, fmt.Errorf("sparse: build: %w", err)
	}
	if next == nil {
		return st, errors.New("sparse: build: nil paper iterator")
	}
	batchSize := opts.BatchSize
	if batchSize <= 0 {
		batchSize = DefaultBatchSize
	}
	an, err := analyzer()
	if err != nil {
		return st, err
	}
	dir = filepath.Clean(dir)
	if err := checkReplaceable(dir); err != nil {
		return st, fmt.Errorf("sparse: build: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return st, fmt.Errorf("sparse: build: %w", err)
	}

	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return st, fmt.Errorf("sparse: build: %w", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), filepath.Base(dir)+".tmp-")
	if err != nil {
		return st, fmt.Errorf("sparse: build: %w", err)
	}
	var idx bleve.Index
	defer func() {
		if err != nil {
			if idx != nil {
				safeClose(idx)
			}
			_ = os.RemoveAll(tmp)
		}
	}()
	// bleve creates the index folder itself and refuses an existing one;
	// the name stays reserved by us in practice (random suffix).
	if err = os.Remove(tmp); err != nil {
		return st, fmt.Errorf("sparse: build: %w", err)
	}
	var kv map[string]any
	if opts.KeepSegments || !backgroundMerge {
		// No background file merges: only segments smaller than half of
		// MaxSegmentSize (in documents) are eligible. (A large
		// MaxSegmentsPerTier does not stop them.) The final ForceMerge
		// passes its own options.
		kv = map[string]any{"scorchMergePlanOptions": map[string]any{"MaxSegmentSize": 2}}
	}
	bi, err := bleve.NewUsing(tmp, newMapping(fields), scorch.Name, scorch.Name, kv)
	if err != nil {
		return st, fmt.Errorf("sparse: build: create index: %w", err)
	}
	idx = bi

	b := &builder{
		idx:      idx,
		fields:   fields,
		an:       an,
		batch:    idx.NewBatch(),
		ids:      make(map[string]struct{}, 2*batchSize),
		seen:     make(map[string]docLens),
		lengths:  make([]uint64, len(fields)),
		progress: progress,
	}
	defer b.abandon() // no batch may still run when the index is closed
	for {
		p, ok, nerr := next()
		if nerr != nil {
			return st, fmt.Errorf("sparse: build: next paper: %w", nerr)
		}
		if !ok {
			break
		}
		if err = b.add(ctx, &p); err != nil {
			return st, fmt.Errorf("sparse: build: %w", err)
		}
		if len(b.pending) >= batchSize {
			if err = b.submit(ctx); err != nil {
				return st, fmt.Errorf("sparse: build: %w", err)
			}
		}
	}
	if err = b.submit(ctx); err != nil {
		return st, fmt.Errorf("sparse: build: %w", err)
	}
	if err = b.drain(); err != nil {
		return st, fmt.Errorf("sparse: build: %w", err)
	}

	if err = b.finish(ctx, opts.Meta, !opts.KeepSegments); err != nil {
		return st, fmt.Errorf("sparse: build: %w", err)
	}
	err = idx.Close()
	idx = nil
	if err != nil {
		return st, fmt.Errorf("sparse: build: close index: %w", err)
	}
	size, err := installTemp(ctx, tmp, dir)
	if err != nil {
		return st, fmt.Errorf("sparse: build: %w", err)
	}
	return BuildStats{Docs: int(b.docs), Duration: time.Since(start), Bytes: size}, nil
}

// docLens are the analyzed field lengths of one document, in the order of
// builder.fields (at most 4 fields).
type docLens [4]uint32

type pendingDoc struct {
	id     string
	fields [4]*document.TextField // nil when the field is empty
}

// builder accumulates papers into bleve batches and keeps the exact
// collection statistics (N and total field lengths) as it goes. Field
// lengths are read from bleve's own analysis (TextField.AnalyzedLength)
// after each batch, so the text is analyzed once, and they are exactly the
// lengths bleve encodes in the postings.
type builder struct {
	idx      bleve.Index
	fields   []string
	an       analysis.Analyzer
	batch    *bleve.Batch        // being filled
	pending  []pendingDoc        // the documents of batch
	inFlight []*batchJob         // submitted to bleve, oldest first
	ids      map[string]struct{} // IDs pending or in flight
	seen     map[string]docLens  // IDs indexed, with their field lengths
	docs     uint64
	lengths  []uint64 // total per field, in fields order
	done     int      // papers indexed so far
	progress func(int)
}

// batchJob is a batch running in bleve.
type batchJob struct {
	docs []pendingDoc
	err  chan error
}

// backgroundMerge lets scorch merge segments while indexing. Off: one
// final merge of all batch segments costs less in total than tiered
// merging followed by the final merge (10k papers: -12% time).
const backgroundMerge = false

// maxInFlight is the number of batches run at once. bleve analyses a batch
// in parallel but builds its segment on one goroutine; with two batches in
// flight one is analysed while the other's segment is built.
const maxInFlight = 2

func (b *builder) add(ctx context.Context, p *corpus.Paper) error {
	if p.ID == "" {
		return fmt.Errorf("paper %d has no ID", b.done+len(b.pending)+1)
	}
	if _, dup := b.ids[p.ID]; dup {
		// A batch keeps only the last document per ID, and concurrent
		// batches apply in any order: finish all earlier work first, so
		// the earlier document is replaced and its statistics are known.
		if err := b.submit(ctx); err != nil {
			return err
		}
		if err := b.drain(); err != nil {
			return err
		}
	}
	doc := document.NewDocument(p.ID)
	pd := pendingDoc{id: p.ID}
	for i, f := range b.fields {
		v := fieldValue(p, f)
		if v == "" {
			continue
		}
		tf := document.NewTextFieldCustom(f, nil, []byte(v), index.IndexField, b.an)
		doc.AddField(tf)
		pd.fields[i] = tf
	}
	doc.AddField(&lensValue{fields: pd.fields, n: len(b.fields)})
	if err := b.batch.IndexAdvanced(doc); err != nil {
		return err
	}
	b.pending = append(b.pending, pd)
	b.ids[p.ID] = struct{}{}
	return nil
}

// submit hands the pending batch to bleve, after waiting for the oldest
// batch when maxInFlight are running.
func (b *builder) submit(ctx context.Context) error {
	if len(b.pending) == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	for len(b.inFlight) >= maxInFlight {
		if err := b.complete(); err != nil {
			return err
		}
	}
	job := &batchJob{docs: b.pending, err: make(chan error, 1)}
	batch := b.batch
	go func() { job.err <- safeBatch(b.idx, batch) }()
	b.inFlight = append(b.inFlight, job)
	b.pending = make([]pendingDoc, 0, len(job.docs))
	b.batch = b.idx.NewBatch()
	return nil
}

// complete waits for the oldest batch in flight and adds its documents to
// the statistics. Field lengths come from bleve's own analysis of the
// batch (TextField.AnalyzedLength), exactly the lengths bleve encodes.
func (b *builder) complete() error {
	job := b.inFlight[0]
	b.inFlight = b.inFlight[1:]
	if err := <-job.err; err != nil {
		return fmt.Errorf("index batch: %w", err)
	}
	for i := range job.docs {
		pd := &job.docs[i]
		if old, ok := b.seen[pd.id]; ok {
			for j := range b.fields {
				b.lengths[j] -= uint64(old[j])
			}
			b.docs--
		}
		var l docLens
		for j, tf := range pd.fields {
			if tf != nil {
				l[j] = uint32(tf.AnalyzedLength())
				b.lengths[j] += uint64(l[j])
			}
		}
		b.seen[pd.id] = l
		b.docs++
		delete(b.ids, pd.id)
	}
	b.done += len(job.docs)
	if b.progress != nil {
		b.progress(b.done)
	}
	return nil
}

// drain completes all batches in flight.
func (b *builder) drain() error {
	for len(b.inFlight) > 0 {
		if err := b.complete(); err != nil {
			return err
		}
	}
	return nil
}

// abandon waits for batches still in flight without accounting them.
func (b *builder) abandon() {
	for _, job := range b.inFlight {
		<-job.err
	}
	b.inFlight = nil
}

// finish stores the header and meta, checks the document count against
// bleve's and merges the index into one segment (fewer segments make every
// term lookup cheaper at query time).
func (b *builder) finish(ctx context.Context, meta map[string]string, merge bool) error {
	if merge {
		if err := b.merge(ctx); err != nil {
			return err
		}
	}
	// The header goes last, in a safe batch: it returns once a snapshot
	// containing it is persisted, and so also the merged segment above
	// (otherwise Close can win the race against the persister and the
	// index reopens unmerged, with the merged file orphaned).
	h := header{Format: formatV2, Analyzer: AnalyzerName, Fields: b.fields, Docs: b.docs, Lengths: map[string]uint64{}}
	for i, f := range b.fields {
		h.Lengths[f] = b.lengths[i]
	}
	hb, err := json.Marshal(h)
	if err != nil {
		return err
	}
	batch := b.idx.NewBatch()
	batch.SetInternal([]byte(headerKey), hb)
	for k, v := range meta {
		batch.SetInternal([]byte(metaPrefix+k), []byte(v))
	}
	if err := safeBatch(b.idx, batch); err != nil {
		return fmt.Errorf("write header: %w", err)
	}
	n, err := b.idx.DocCount()
	if err != nil {
		return err
	}
	if n != b.docs {
		return fmt.Errorf("internal error: bleve counts %d documents, builder %d", n, b.docs)
	}
	return ctx.Err()
}

// merge merges the index into one segment: fewer segments make every term
// lookup cheaper at query time.
func (b *builder) merge(ctx context.Context) error { return mergeAll(ctx, b.idx) }

// mergeAll merges the segments of idx into one.
func mergeAll(ctx context.Context, idx bleve.Index) error {
	adv, err := idx.Advanced()
	if err != nil {
		return err
	}
	fm, ok := adv.(interface {
		ForceMerge(context.Context, *mergeplan.MergePlanOptions) error
	})
	if !ok {
		return nil
	}
	// One force merge round merges at most SegmentsPerMergeTask segments
	// per task and only segments already persisted, so repeat until one
	// segment is left (or no progress is made).
	mo := mergeplan.SingleSegmentMergePlanOptions
	mo.SegmentsPerMergeTask = 1 << 20
	mo.MaxSegmentsPerTier = 1
	prev := -1
	for range 20 {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := segmentCount(adv)
		if err != nil {
			return err
		}
		if n <= 1 || n == prev {
			break
		}
		prev = n
		if err := fm.ForceMerge(ctx, &mo); err != nil {
			return fmt.Errorf("merge segments: %w", err)
		}
	}
	return ctx.Err()
}

// segmentCount returns the number of segments of the current snapshot of
// a scorch index, or 1 for other index types.
func segmentCount(adv index.Index) (int, error) {
	rd, err := adv.Reader()
	if err != nil {
		return 0, err
	}
	defer rd.Close()
	if snap, ok := rd.(*scorch.IndexSnapshot); ok {
		return len(snap.Segments()), nil
	}
	return 1, nil
}

// pruneOrphans removes the segment files of a closed scorch index that its
// latest snapshot does not use. scorch deletes files made obsolete by merges
// asynchronously, and Close does not wait for it, so a freshly built index
// can hold its pre-merge segments as well (doubling its size). It also
// checks that the index opens.
func pruneOrphans(dir string) error {
	idx, err := bleve.OpenUsing(dir, map[string]any{"read_only": true})
	if err != nil {
		return fmt.Errorf("reopen index: %w", err)
	}
	defer idx.Close()
	adv, err := idx.Advanced()
	if err != nil {
		return err
	}
	rd, err := adv.Reader()
	if err != nil {
		return err
	}
	defer rd.Close()
	snap, ok := rd.(*scorch.IndexSnapshot)
	if !ok {
		return nil
	}
	live := map[string]bool{}
	for _, s := range snap.Segments() {
		p, ok := s.Segment().(interface{ Path() string })
		if !ok {
			return nil // not file segments: leave the folder alone
		}
		live[filepath.Base(p.Path())] = true
	}
	store := filepath.Join(dir, "store")
	ents, err := os.ReadDir(store)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if filepath.Ext(e.Name()) == ".zap" && !live[e.Name()] {
			if err := os.Remove(filepath.Join(store, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkReplaceable reports an error when dir exists and is neither empty
// nor a bleve index, so Build never deletes unrelated files.
func checkReplaceable(dir string) error {
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s exists and is not a folder", dir)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if len(ents) == 0 {
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, "index_meta.json")); err != nil {
		return fmt.Errorf("refusing to replace %s: not empty and not an index", dir)
	}
	return nil
}

// install moves the finished index tmp to dir, replacing an existing dir.
func install(tmp, dir string) error {
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return os.Rename(tmp, dir)
	}
	old, err := os.MkdirTemp(filepath.Dir(dir), filepath.Base(dir)+".old-")
	if err != nil {
		return err
	}
	if err := os.Remove(old); err != nil {
		return err
	}
	if err := os.Rename(dir, old); err != nil {
		return fmt.Errorf("move old index aside: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if rerr := os.Rename(old, dir); rerr != nil {
			return fmt.Errorf("install index: %w (and restoring the old one: %v; it is at %s)", err, rerr, old)
		}
		return fmt.Errorf("install index: %w", err)
	}
	if err := os.RemoveAll(old); err != nil {
		return fmt.Errorf("remove old index: %w", err)
	}
	return nil
}

func dirSize(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			fi, err := d.Info()
			if err != nil {
				return err
			}
			n += fi.Size()
		}
		return nil
	})
	return n, err
}

// installTemp finishes a build or update written to the closed index in
// tmp: unless ctx is done, it removes segment files the final snapshot does
// not use, measures the folder and renames it into place at dir. It returns
// the index size in bytes.
func installTemp(ctx context.Context, tmp, dir string) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := pruneOrphans(tmp); err != nil {
		return 0, err
	}
	size, err := dirSize(tmp)
	if err != nil {
		return 0, err
	}
	if err := install(tmp, dir); err != nil {
		return 0, err
	}
	return size, nil
}
