package dense

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	chromem "github.com/philippgille/chromem-go"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/internal/atomicfile"
)

// Defaults for BuildOptions.
const (
	DefaultBatchSize = 256
)

// Index layout constants.
const (
	// HeaderFile is the JSON header in the index folder. Renaming it into
	// place is what commits a build.
	HeaderFile = "dense.json"
	// CollectionName is the chromem-go collection inside the export file.
	CollectionName = "papers"
	formatV1       = 1
	exportBase     = "papers-"
)

// Header describes a built index. It is HeaderFile, a small JSON file read
// without loading the vectors.
type Header struct {
	Format     int               `json:"format"`     // 1
	Model      string            `json:"model"`      // Embedder.Model() used to build
	Dim        int               `json:"dim"`        // vector length
	Docs       int               `json:"docs"`       // documents (papers) in the index
	Export     string            `json:"export"`     // export file name in the folder: papers-<random>.gob[.gz]
	Compressed bool              `json:"compressed"` // export is gzip-compressed
	Built      time.Time         `json:"built"`      // when Build finished (UTC)
	Meta       map[string]string `json:"meta,omitempty"`
}

// BuildOptions configure Build. Embedder is required; the rest has usable
// zero values.
type BuildOptions struct {
	// Embedder embeds the papers; Open must be given one with the same
	// Model() and Dim().
	Embedder Embedder
	// Cache, when not nil, supplies vectors already computed for the same
	// model and text, and receives the new ones. nil embeds every paper.
	Cache *Cache
	// BatchSize is the number of papers per embedding batch; progress is
	// reported after each. 0 means DefaultBatchSize (256). (The Ollama
	// embedder splits a batch further into its own request size.)
	BatchSize int
	// Compress gzips the export file. Off by default: measured on 50k
	// random 768-dim vectors, gzip shrinks the export by 24% (228 → 173
	// MB) but makes Build 3.8x slower (2.2 → 8.6 s) and Open 2x slower
	// (1.6 → 3.2 s). Open reads either.
	Compress bool
	// Meta is stored in the header as-is, e.g. the store generation the
	// index was built from.
	Meta map[string]string
}

// BuildStats describes a finished Build.
type BuildStats struct {
	Docs     int           // papers in the index (distinct IDs with text)
	Embedded int           // texts sent to the embedder
	Cached   int           // vectors taken from the cache
	Skipped  int           // papers without title and abstract, or whose vector was zero
	Dim      int           // vector length
	Bytes    int64         // size of the export file
	Duration time.Duration // wall time of Build
}

// PaperText is the text embedded for a paper: its title and abstract,
// trimmed, separated by a blank line ("" when both are empty).
func PaperText(p corpus.Paper) string {
	t, a := strings.TrimSpace(p.Title), strings.TrimSpace(p.Abstract)
	switch {
	case t == "":
		return a
	case a == "":
		return t
	}
	return t + "\n\n" + a
}

// Build embeds every paper's PaperText and writes a new index into dir,
// replacing any index there.
//
// Vectors come from opts.Cache when it has them for (Embedder.Model(),
// text); the others are embedded in batches of BatchSize and added to the
// cache batch by batch, so an interrupted Build keeps its progress. Papers
// without text, or whose vector is zero, are skipped (they could never be
// found). When an ID repeats, the last paper wins.
//
// The index is one chromem-go collection, written as chromem's exporter
// writes it (gob, optionally gzip; documents in ID order) to a new file
// papers-<random>.gob[.gz], synced; next to it goes its sidecar
// (SidecarName: the same vectors laid out for a fast Open), synced and
// renamed into place; the index is then committed by atomically renaming
// a new HeaderFile into place, and the previous export and sidecar are
// removed. A failure, crash or cancelled
// ctx before the rename leaves the previous index intact (a crash may
// leave unreferenced papers-* files, removed by the next Build or
// RemoveLeftovers).
//
// next is a pull iterator over the papers: Build calls it until it returns
// ok=false or an error. progress, when not nil, is called after each batch
// with the number of papers processed so far. ctx is checked between
// batches and bounds the embedder's calls.
func Build(ctx context.Context, dir string, opts BuildOptions, next func() (corpus.Paper, bool, error), progress func(done int)) (BuildStats, error) {
	start := time.Now()
	var st BuildStats
	if opts.Embedder == nil {
		return st, errors.New("dense: build: nil Embedder")
	}
	if next == nil {
		return st, errors.New("dense: build: nil paper iterator")
	}
	batch := opts.BatchSize
	if batch <= 0 {
		batch = DefaultBatchSize
	}
	b := &builder{emb: opts.Embedder, model: opts.Embedder.Model(), cache: opts.Cache, dim: opts.Embedder.Dim(), index: map[string]int{}}
	var ids, texts []string
	done := 0
	flush := func() error {
		if len(ids) == 0 {
			return nil
		}
		if err := b.add(ctx, ids, texts, &st); err != nil {
			return err
		}
		done += len(ids)
		ids, texts = ids[:0], texts[:0]
		if progress != nil {
			progress(done)
		}
		return nil
	}
	for {
		if err := ctx.Err(); err != nil {
			return st, fmt.Errorf("dense: build: %w", err)
		}
		p, ok, err := next()
		if err != nil {
			return st, fmt.Errorf("dense: build: read papers: %w", err)
		}
		if !ok {
			break
		}
		if p.ID == "" {
			return st, fmt.Errorf("dense: build: paper %q has no ID", p.Title)
		}
		ids = append(ids, p.ID)
		texts = append(texts, PaperText(p))
		if len(ids) == batch {
			if err := flush(); err != nil {
				return st, err
			}
		}
	}
	if err := flush(); err != nil {
		return st, err
	}
	if b.dim == 0 {
		b.dim = opts.Embedder.Dim() // may still be 0 for an empty corpus
	}
	st.Dim = b.dim
	st.Docs = len(b.index)
	// The embedder is done with: without references from here, a model
	// held by no one else (a trained one) can be collected while the
	// files are written.
	b.emb, opts.Embedder = nil, nil
	n, err := write(ctx, dir, b, opts)
	if err != nil {
		return st, fmt.Errorf("dense: build: %w", err)
	}
	st.Bytes = n
	st.Duration = time.Since(start)
	return st, nil
}

type builder struct {
	emb   Embedder
	model string
	cache *Cache
	dim   int
	rows  rows           // the normalised vectors, in the order they came
	index map[string]int // paper ID → its row in rows
}

// rowChunk is the number of vectors in a chunk of rows (3 MiB at 768
// dimensions).
const rowChunk = 1024

// rows holds a build's vectors one after another, in chunks of rowChunk
// vectors: one allocation per chunk rather than one per vector, and none
// that copies the vectors stored so far (as growing one flat slice would,
// briefly holding the matrix twice).
type rows struct {
	dim    int
	n      int
	chunks [][]float32
}

// next returns the storage of row n, the next row, for a vector of dim
// floats (the same dim for every row); push keeps it.
func (s *rows) next(dim int) []float32 {
	s.dim = dim
	c := s.n / rowChunk
	if c == len(s.chunks) {
		s.chunks = append(s.chunks, make([]float32, rowChunk*dim))
	}
	o := s.n % rowChunk * dim
	return s.chunks[c][o : o+dim : o+dim]
}

// push keeps the row next returned and returns its number.
func (s *rows) push() int {
	s.n++
	return s.n - 1
}

// row returns row i.
func (s *rows) row(i int) []float32 {
	o := i % rowChunk * s.dim
	return s.chunks[i/rowChunk][o : o+s.dim : o+s.dim]
}

// add embeds (or fetches) one batch.
func (b *builder) add(ctx context.Context, ids, texts []string, st *BuildStats) error {
	vecs := make([][]float32, len(texts))
	if b.cache != nil {
		got, err := b.cache.Get(ctx, b.model, texts)
		if err != nil {
			return fmt.Errorf("dense: build: %w", err)
		}
		for i, v := range got {
			if v != nil && (b.dim == 0 || len(v) == b.dim) {
				vecs[i] = v
				st.Cached++
			}
		}
	}
	var missIdx []int
	var missText []string
	for i, t := range texts {
		if vecs[i] == nil && t != "" {
			missIdx = append(missIdx, i)
			missText = append(missText, t)
		}
	}
	if len(missText) > 0 {
		got, err := b.emb.Embed(ctx, missText)
		if err != nil {
			return fmt.Errorf("dense: build: embed: %w", err)
		}
		if err := checkVectors(got, len(missText), b.dim); err != nil {
			return fmt.Errorf("dense: build: embed: %w", err)
		}
		st.Embedded += len(missText)
		for j, i := range missIdx {
			vecs[i] = got[j]
		}
		if b.cache != nil {
			if err := b.cache.Put(ctx, b.model, missText, got); err != nil {
				return fmt.Errorf("dense: build: %w", err)
			}
		}
	}
	for i, v := range vecs {
		if v == nil {
			st.Skipped++
			delete(b.index, ids[i])
			continue
		}
		if b.dim == 0 {
			b.dim = len(v)
		}
		if len(v) != b.dim {
			return fmt.Errorf("dense: build: %w: vector of %s has dimension %d, want %d", ErrEmbedder, ids[i], len(v), b.dim)
		}
		// A repeated ID gets a new row; its earlier one is left unused.
		nv := b.rows.next(b.dim)
		copy(nv, v)
		if !normalize(nv) {
			st.Skipped++
			delete(b.index, ids[i])
			continue
		}
		b.index[ids[i]] = b.rows.push()
	}
	return nil
}

// refuseEmbed is the collection's embedding function: every vector is
// computed by our Embedder, so chromem must never embed (a nil function
// would mean OpenAI).
func refuseEmbed(context.Context, string) ([]float32, error) {
	return nil, errors.New("dense: chromem-go must not embed; vectors come from the Embedder")
}

// write exports the collection and commits the header.
func write(ctx context.Context, dir string, b *builder, opts BuildOptions) (int64, error) {
	ids := make([]string, 0, len(b.index))
	for id := range b.index {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	order := make([]int, len(ids)) // the row of ids[i]
	for i, id := range ids {
		order[i] = b.index[id]
	}
	row := func(i int) []float32 { return b.rows.row(order[i]) }
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	var rnd [6]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return 0, err
	}
	name := exportBase + hex.EncodeToString(rnd[:]) + ".gob"
	if opts.Compress {
		name += ".gz"
	}
	path := filepath.Join(dir, name)
	size, err := writeSynced(path, func(w *bufio.Writer) error {
		return writeExport(ctx, w, ids, row, opts.Compress)
	})
	if err != nil {
		os.Remove(path)
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		os.Remove(path)
		return 0, err
	}
	// The sidecar goes in before the commit, so a committed index has
	// one; a kill before the commit leaves both files unreferenced.
	if err := writeSidecar(dir, name, size, ids, b.dim, row); err != nil {
		os.Remove(path)
		return 0, fmt.Errorf("write sidecar: %w", err)
	}
	side := filepath.Join(dir, SidecarName(name))
	if err := ctx.Err(); err != nil {
		os.Remove(side)
		os.Remove(path)
		return 0, err
	}
	h := Header{
		Format: formatV1, Model: b.model, Dim: b.dim, Docs: len(ids),
		Export: name, Compressed: opts.Compress, Built: time.Now().UTC(), Meta: opts.Meta,
	}
	hb, err := json.MarshalIndent(h, "", "  ")
	if err != nil {
		os.Remove(side)
		os.Remove(path)
		return 0, err
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, HeaderFile), append(hb, '\n'), 0o644); err != nil {
		os.Remove(side)
		os.Remove(path)
		return 0, err
	}
	// Committed. Remove exports and temp headers of earlier builds.
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		n := e.Name()
		if n != name && n != SidecarName(name) && (strings.HasPrefix(n, exportBase) || strings.HasPrefix(n, HeaderFile+".tmp-")) {
			os.Remove(filepath.Join(dir, n))
		}
	}
	return size, nil
}

// writeExport writes to w what chromem-go's DB.ExportToWriter writes for
// a DB holding one collection, CollectionName, with one document per ID
// ids[i] (ascending) whose embedding is row(i), added with AddDocument.
//
// ExportToWriter encodes the whole DB as one gob message in memory before
// writing it: on ACM-CR (108,681 papers × 768 dimensions) a 473 MiB buffer
// grown by appending, next to the vectors and with as much garbage again,
// which took `citefind index` from 1 to 3.3 GB of RSS. writeExport writes
// that message as it encodes it, one document at a time. Its bytes are
// ExportToWriter's but for the order of the documents, which gob's map
// encoding takes from Go's randomised map iteration (two chromem exports
// of one collection differ) and writeExport from ids; chromem's importer
// reads either.
//
// A gob stream is the type definitions, then here one message holding the
// DB value. Both are taken from ExportToWriter's output for the empty
// collection (gob numbers types per process, so they must come from gob
// itself): its value message ends with the length of the empty Documents
// map (0) and the ends of the collection and DB structs (0, 0), and the
// documents go in place of that 0. A message starts with its length, so
// the documents are encoded twice: once to measure, once to write.
func writeExport(ctx context.Context, w io.Writer, ids []string, row func(i int) []float32, compress bool) error {
	db := chromem.NewDB()
	if _, err := db.CreateCollection(CollectionName, nil, refuseEmbed); err != nil {
		return err
	}
	var empty bytes.Buffer
	if err := db.ExportToWriter(&empty, false, ""); err != nil {
		return err
	}
	types, value, ok := splitLastGobMessage(empty.Bytes())
	if !ok || !bytes.HasSuffix(value, []byte{0, 0, 0}) {
		return errors.New("export: chromem-go's export of an empty collection has an unexpected form")
	}
	head := value[:len(value)-3]

	// each calls fn with the encoding of every document in turn.
	var scratch []float32
	var enc []byte
	each := func(fn func(enc []byte) error) error {
		for i, id := range ids {
			if i%4096 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			enc = appendGobDocument(enc[:0], id, chromemEmbedding(row(i), &scratch))
			if err := fn(enc); err != nil {
				return err
			}
		}
		return nil
	}
	size := uint64(len(head)) + uint64(gobUintLen(uint64(len(ids)))) + 2
	if err := each(func(enc []byte) error { size += uint64(len(enc)); return nil }); err != nil {
		return err
	}
	if size >= gobTooBig {
		return errors.New("export: too large for a gob message")
	}

	var gz *gzip.Writer
	if compress {
		gz = gzip.NewWriter(w)
		w = gz
	}
	var msg []byte
	msg = append(msg, types...)
	msg = appendGobUint(msg, size)
	msg = append(msg, head...)
	msg = appendGobUint(msg, uint64(len(ids)))
	if _, err := w.Write(msg); err != nil {
		return err
	}
	if err := each(func(enc []byte) error { _, err := w.Write(enc); return err }); err != nil {
		return err
	}
	if _, err := w.Write([]byte{0, 0}); err != nil {
		return err
	}
	if gz != nil {
		return gz.Close()
	}
	return nil
}

// gobTooBig is the length from which gob refuses a message (encoding/gob's
// tooBig): 8 GiB, or 1 GiB on 32-bit systems.
const gobTooBig = (1 << 30) << (^uint(0) >> 62)

// chromemEmbedding returns v as chromem-go's AddDocument stores it: v
// itself when its norm is within 1e-6 of 1 (always for a vector from
// normalize), else v divided by its float32 norm, in *scratch.
func chromemEmbedding(v []float32, scratch *[]float32) []float32 {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	if math.Abs(math.Sqrt(ss)-1) < 1e-6 {
		return v
	}
	var n float32
	for _, x := range v {
		n += x * x
	}
	n = float32(math.Sqrt(float64(n)))
	out := (*scratch)[:0]
	for _, x := range v {
		out = append(out, x/n)
	}
	*scratch = out
	return out
}

// appendGobDocument appends the gob encoding of one entry of a
// collection's documents map, id → &chromem.Document{ID: id, Embedding:
// v}: the key, then the struct's fields as (field number delta, value),
// zero values left out (Metadata nil, Content ""), and 0 to end it. gob
// writes a float32 as a float64 whose bits, byte-reversed, are an unsigned
// integer.
func appendGobDocument(b []byte, id string, v []float32) []byte {
	b = appendGobString(b, id)
	b = append(b, 1) // field 0, ID
	b = appendGobString(b, id)
	b = append(b, 2) // field 2, Embedding
	b = appendGobUint(b, uint64(len(v)))
	for _, x := range v {
		b = appendGobUint(b, bits.ReverseBytes64(math.Float64bits(float64(x))))
	}
	return append(b, 0)
}

func appendGobString(b []byte, s string) []byte {
	return append(appendGobUint(b, uint64(len(s))), s...)
}

// appendGobUint appends x as gob encodes an unsigned integer: one byte
// below 128, else minus the number of bytes that follow, then x's bytes,
// big-endian, without leading zeros.
func appendGobUint(b []byte, x uint64) []byte {
	if x < 0x80 {
		return append(b, byte(x))
	}
	n := gobUintLen(x) - 1
	b = append(b, byte(-n))
	for i := n - 1; i >= 0; i-- {
		b = append(b, byte(x>>(8*i)))
	}
	return b
}

// gobUintLen is the length of appendGobUint's encoding of x.
func gobUintLen(x uint64) int {
	if x < 0x80 {
		return 1
	}
	return 1 + 8 - bits.LeadingZeros64(x)/8
}

// splitLastGobMessage splits the gob stream s into its messages but the
// last (each with its length) and the last one's contents (without it).
func splitLastGobMessage(s []byte) (before, last []byte, ok bool) {
	for off := 0; off < len(s); {
		n, w := uint64(s[off]), 1
		if n >= 0x80 {
			w += 256 - int(n) // the bytes that follow
			if w > 9 || off+w > len(s) {
				return nil, nil, false
			}
			n = 0
			for _, c := range s[off+1 : off+w] {
				n = n<<8 | uint64(c)
			}
		}
		end := off + w + int(n)
		if n > uint64(len(s)) || end > len(s) {
			return nil, nil, false
		}
		if end == len(s) {
			return s[:off], s[off+w:], true
		}
		off = end
	}
	return nil, nil, false
}

// writeSynced creates path, fills it with fill, syncs and closes it, and
// returns its size.
func writeSynced(path string, fill func(*bufio.Writer) error) (int64, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return 0, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	err = fill(w)
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	var size int64
	if err == nil {
		var fi fs.FileInfo
		if fi, err = f.Stat(); err == nil {
			size = fi.Size()
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return size, err
}

// RemoveLeftovers removes what killed Builds left in the index folder dir:
// export files the header does not name, sidecars of other exports, and
// temporary headers and sidecars. With no
// readable header every export is a leftover. It returns how many files it
// removed; a missing folder is no error. Call it holding the database's
// write lock, as Build is called.
func RemoveLeftovers(dir string) (int, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("dense: remove leftovers: %w", err)
	}
	keep, keepSide := "", ""
	if h, err := Stat(dir); err == nil {
		keep, keepSide = h.Export, SidecarName(h.Export)
	}
	n := 0
	for _, e := range entries {
		name := e.Name()
		if name == keep || name == keepSide || !strings.HasPrefix(name, exportBase) && !strings.HasPrefix(name, HeaderFile+".tmp-") {
			continue
		}
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return n, fmt.Errorf("dense: remove leftover %s: %w", name, err)
		}
		n++
	}
	return n, nil
}
