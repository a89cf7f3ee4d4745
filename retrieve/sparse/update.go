package sparse

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/document"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/citefind/citefind/corpus"
)

// ErrNeedsRebuild means Update cannot apply changes to this index (it was
// written by an older Build without per-document lengths); Build a new one.
var ErrNeedsRebuild = errors.New("index cannot be updated; rebuild it")

// DefaultMaxSegments is UpdateOptions.MaxSegments' default.
const DefaultMaxSegments = 8

// UpdateOptions configure Update. The zero value is ready to use.
type UpdateOptions struct {
	// BatchSize is the number of papers per bleve batch; 0 means
	// DefaultBatchSize.
	BatchSize int
	// Meta values to set (e.g. the new store generation); other meta keys
	// are kept. They are written with the header, after all documents.
	Meta map[string]string
	// MaxSegments: when the updated index has more segments than this
	// (each batch adds one), they are merged into one. 0 means
	// DefaultMaxSegments.
	MaxSegments int
}

// UpdateStats describes a finished Update.
type UpdateStats struct {
	Added    int // papers that were not in the index
	Replaced int // papers that replaced their earlier document
	Deleted  int // documents deleted
	Missing  int // IDs to delete that were not in the index
	Docs     int // documents in the index afterwards
	Merged   bool
	Duration time.Duration
	Bytes    int64
}

// Update applies changes to the index Build wrote at dir: every paper
// next yields is added or replaces the document with its ID (an upsert),
// and every ID in deletes is deleted. The exact collection statistics (N
// and the total field lengths behind avgdl) are adjusted by each replaced
// or deleted document's stored lengths, so scores are the same as after a
// Build of the resulting collection.
//
// Update works on a copy: the index files are hard-linked (scorch never
// rewrites a segment file; the small bolt root file is copied) into a
// sibling temp folder, the copy is updated, its header and Meta are
// written after the last document, and the copy is renamed into place as
// Build does. So a crash, kill or cancelled ctx leaves dir as it was (and
// a dir.tmp-* folder that RemoveLeftovers deletes), and readers that have
// dir open keep reading the version they opened. Applying the same changes
// twice gives the same index (upserts and deletes are idempotent).
//
// An index without per-document lengths (written before format 2) gives
// ErrNeedsRebuild. progress, when not nil, is called after each batch with
// the number of changes applied so far.
func Update(ctx context.Context, dir string, opts UpdateOptions, next func() (corpus.Paper, bool, error), deletes []string, progress func(done int)) (st UpdateStats, err error) {
	start := time.Now()
	dir = filepath.Clean(dir)
	if next == nil {
		next = func() (corpus.Paper, bool, error) { return corpus.Paper{}, false, nil }
	}
	batchSize := opts.BatchSize
	if batchSize <= 0 {
		batchSize = DefaultBatchSize
	}
	maxSegs := opts.MaxSegments
	if maxSegs <= 0 {
		maxSegs = DefaultMaxSegments
	}
	an, err := analyzer()
	if err != nil {
		return st, err
	}
	if _, err := os.Stat(filepath.Join(dir, "index_meta.json")); err != nil {
		return st, fmt.Errorf("sparse: update %s: %w (no index_meta.json)", dir, ErrNotIndex)
	}
	if err := ctx.Err(); err != nil {
		return st, fmt.Errorf("sparse: update: %w", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), filepath.Base(dir)+".tmp-")
	if err != nil {
		return st, fmt.Errorf("sparse: update: %w", err)
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
	if err = copyIndex(dir, tmp); err != nil {
		return st, fmt.Errorf("sparse: update: copy index: %w", err)
	}
	idx, err = bleve.OpenUsing(tmp, map[string]any{
		// No background merges: segments are merged once, at the end,
		// when there are more than MaxSegments.
		"scorchMergePlanOptions": map[string]any{"MaxSegmentSize": 2},
	})
	if err != nil {
		return st, fmt.Errorf("sparse: update: open copy: %w: %v", ErrNotIndex, err)
	}
	u := &updater{idx: idx}
	if err = u.readHeader(); err != nil {
		return st, fmt.Errorf("sparse: update %s: %w", dir, err)
	}
	b := &builder{idx: idx, fields: u.h.Fields, an: an, batch: idx.NewBatch(),
		ids: map[string]struct{}{}, seen: map[string]docLens{}, lengths: make([]uint64, len(u.h.Fields))}
	done := 0
	flush := func() error {
		if len(b.pending) == 0 {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		for i := range b.pending {
			replaced, err := u.forget(b.pending[i].id)
			if err != nil {
				return err
			}
			if replaced {
				st.Replaced++
			} else {
				st.Added++
			}
		}
		if err := safeBatch(idx, b.batch); err != nil {
			return fmt.Errorf("index batch: %w", err)
		}
		for i := range b.pending {
			u.h.Docs++
			for j, tf := range b.pending[i].fields {
				if tf != nil {
					u.h.Lengths[u.h.Fields[j]] += uint64(tf.AnalyzedLength())
				}
			}
		}
		done += len(b.pending)
		b.pending = b.pending[:0]
		clear(b.ids)
		b.batch = idx.NewBatch()
		if progress != nil {
			progress(done)
		}
		return nil
	}
	for {
		p, ok, nerr := next()
		if nerr != nil {
			return st, fmt.Errorf("sparse: update: next paper: %w", nerr)
		}
		if !ok {
			break
		}
		if p.ID == "" {
			return st, errors.New("sparse: update: paper without ID")
		}
		if _, dup := b.ids[p.ID]; dup {
			if err = flush(); err != nil {
				return st, fmt.Errorf("sparse: update: %w", err)
			}
		}
		if err = b.add(ctx, &p); err != nil {
			return st, fmt.Errorf("sparse: update: %w", err)
		}
		if len(b.pending) >= batchSize {
			if err = flush(); err != nil {
				return st, fmt.Errorf("sparse: update: %w", err)
			}
		}
	}
	if err = flush(); err != nil {
		return st, fmt.Errorf("sparse: update: %w", err)
	}
	for i := 0; i < len(deletes); i += batchSize {
		if err = ctx.Err(); err != nil {
			return st, fmt.Errorf("sparse: update: %w", err)
		}
		batch := idx.NewBatch()
		for _, id := range deletes[i:min(i+batchSize, len(deletes))] {
			had, err := u.forget(id)
			if err != nil {
				return st, fmt.Errorf("sparse: update: %w", err)
			}
			if !had {
				st.Missing++
				continue
			}
			batch.Delete(id)
			st.Deleted++
		}
		if err = safeBatch(idx, batch); err != nil {
			return st, fmt.Errorf("sparse: update: delete batch: %w", err)
		}
		done += min(batchSize, len(deletes)-i)
		if progress != nil {
			progress(done)
		}
	}
	nsegs, err := segmentCountOf(idx)
	if err != nil {
		return st, fmt.Errorf("sparse: update: %w", err)
	}
	if nsegs > maxSegs {
		if err = mergeAll(ctx, idx); err != nil {
			return st, fmt.Errorf("sparse: update: %w", err)
		}
		st.Merged = true
	}
	// The header and meta go last, in one safe batch (see builder.finish).
	hb, err := json.Marshal(u.h)
	if err != nil {
		return st, fmt.Errorf("sparse: update: %w", err)
	}
	batch := idx.NewBatch()
	batch.SetInternal([]byte(headerKey), hb)
	for k, v := range opts.Meta {
		batch.SetInternal([]byte(metaPrefix+k), []byte(v))
	}
	if err = safeBatch(idx, batch); err != nil {
		return st, fmt.Errorf("sparse: update: write header: %w", err)
	}
	n, err := idx.DocCount()
	if err != nil {
		return st, fmt.Errorf("sparse: update: %w", err)
	}
	if n != u.h.Docs {
		return st, fmt.Errorf("sparse: update: internal error: bleve counts %d documents, header %d", n, u.h.Docs)
	}
	err = idx.Close()
	idx = nil
	if err != nil {
		return st, fmt.Errorf("sparse: update: close: %w", err)
	}
	size, err := installTemp(ctx, tmp, dir)
	if err != nil {
		return st, fmt.Errorf("sparse: update: %w", err)
	}
	st.Docs = int(n)
	st.Duration = time.Since(start)
	st.Bytes = size
	return st, nil
}

// safeBatch runs a bleve batch, turning a panic inside bleve into an
// error: zapx can panic on a segment that failed to persist, e.g. when the
// disk is full.
func safeBatch(idx bleve.Index, b *bleve.Batch) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("bleve failed (%v); is the disk full?", r)
		}
	}()
	return idx.Batch(b)
}

// safeClose closes idx on an error path, where bleve may be in a bad state.
func safeClose(idx bleve.Index) {
	defer func() { _ = recover() }()
	_ = idx.Close()
}

// updater keeps the header of an index being updated.
type updater struct {
	idx bleve.Index
	h   header
}

func (u *updater) readHeader() error {
	hb, err := u.idx.GetInternal([]byte(headerKey))
	if err != nil {
		return err
	}
	if hb == nil {
		return fmt.Errorf("%w (no header)", ErrNotIndex)
	}
	if err := json.Unmarshal(hb, &u.h); err != nil {
		return fmt.Errorf("%w (bad header: %v)", ErrNotIndex, err)
	}
	if u.h.Format != formatV2 {
		return fmt.Errorf("%w (format %d)", ErrNeedsRebuild, u.h.Format)
	}
	if u.h.Analyzer != AnalyzerName {
		return fmt.Errorf("%w (analyzer %q)", ErrNeedsRebuild, u.h.Analyzer)
	}
	if u.h.Lengths == nil {
		u.h.Lengths = map[string]uint64{}
	}
	n, err := u.idx.DocCount()
	if err != nil {
		return err
	}
	if n != u.h.Docs {
		return fmt.Errorf("%w (bleve counts %d documents, header %d)", ErrNotIndex, n, u.h.Docs)
	}
	return nil
}

// forget takes the document id, if indexed, out of the header's
// statistics, and reports whether it was indexed.
func (u *updater) forget(id string) (bool, error) {
	d, err := u.idx.Document(id)
	if err != nil {
		return false, fmt.Errorf("read document %s: %w", id, err)
	}
	if d == nil {
		return false, nil
	}
	var lens []uint64
	found := false
	d.VisitFields(func(f index.Field) {
		if f.Name() != lensField {
			return
		}
		found = true
		for _, s := range strings.Fields(string(f.Value())) {
			v, err := strconv.ParseUint(s, 10, 32)
			if err != nil {
				found = false
				return
			}
			lens = append(lens, v)
		}
	})
	if !found || len(lens) != len(u.h.Fields) {
		return false, fmt.Errorf("%w (document %s has no field lengths)", ErrNeedsRebuild, id)
	}
	for i, f := range u.h.Fields {
		if u.h.Lengths[f] < lens[i] || u.h.Docs == 0 {
			return false, fmt.Errorf("%w (statistics below document %s's lengths)", ErrNotIndex, id)
		}
		u.h.Lengths[f] -= lens[i]
	}
	u.h.Docs--
	return true, nil
}

// lensValue is the stored-only field lensField: the analyzed lengths of a
// document's fields, space-separated in header field order. Its value is
// computed when bleve reads it, after the document's text fields are
// analyzed; so the text is analyzed once.
type lensValue struct {
	fields [4]*document.TextField
	n      int
}

var _ index.Field = (*lensValue)(nil)

func (l *lensValue) Size() int                { return 64 }
func (l *lensValue) Name() string             { return lensField }
func (l *lensValue) ArrayPositions() []uint64 { return nil }
func (l *lensValue) EncodedFieldType() byte   { return 't' }
func (l *lensValue) Analyze()                 {}
func (l *lensValue) Options() index.FieldIndexingOptions {
	return index.StoreField
}
func (l *lensValue) AnalyzedLength() int                              { return 0 }
func (l *lensValue) AnalyzedTokenFrequencies() index.TokenFrequencies { return nil }
func (l *lensValue) NumPlainTextBytes() uint64                        { return uint64(len(l.Value())) }
func (l *lensValue) Value() []byte {
	var b []byte
	for i := range l.n {
		if i > 0 {
			b = append(b, ' ')
		}
		n := 0
		if tf := l.fields[i]; tf != nil {
			n = tf.AnalyzedLength()
		}
		b = strconv.AppendInt(b, int64(n), 10)
	}
	return b
}

// segmentCountOf returns the number of segments of idx's current snapshot.
func segmentCountOf(idx bleve.Index) (int, error) {
	adv, err := idx.Advanced()
	if err != nil {
		return 0, err
	}
	return segmentCount(adv)
}

// copyIndex copies the index folder src to dst (which exists and is
// empty): segment files are hard-linked (copied when linking fails), the
// rest copied.
func copyIndex(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			if rel == "." {
				return nil
			}
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if filepath.Ext(path) == ".zap" {
			if os.Link(path, target) == nil {
				return nil
			}
		}
		return copyFile(path, target)
	})
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// RemoveLeftovers deletes what killed builds and updates of the index at
// dir left behind: the sibling dir.tmp-* (unfinished) and dir.old-*
// (replaced) folders. It returns how many it removed. Call it only while no
// other process builds or updates this index (citefind holds the database
// lock).
func RemoveLeftovers(dir string) (int, error) {
	dir = filepath.Clean(dir)
	n := 0
	for _, pat := range []string{".tmp-*", ".old-*"} {
		ms, err := filepath.Glob(filepath.Join(filepath.Dir(dir), escapeGlob(filepath.Base(dir))+pat))
		if err != nil {
			return n, err
		}
		for _, m := range ms {
			if err := os.RemoveAll(m); err != nil {
				return n, fmt.Errorf("remove leftover %s: %w", m, err)
			}
			n++
		}
	}
	return n, nil
}

func escapeGlob(s string) string {
	r := strings.NewReplacer(`*`, `\*`, `?`, `\?`, `[`, `\[`, `\`, `\\`)
	return r.Replace(s)
}
