package dense

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
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
// The index is one chromem-go collection, written with chromem's
// exporter (gob, optionally gzip) to a new file papers-<random>.gob[.gz],
// synced; next to it goes its sidecar (SidecarName: the same vectors laid
// out for a fast Open), synced and renamed into place; the index is then
// committed by atomically renaming a new HeaderFile into place, and the
// previous export and sidecar are removed. A failure, crash or cancelled
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
	b := &builder{emb: opts.Embedder, model: opts.Embedder.Model(), cache: opts.Cache, dim: opts.Embedder.Dim(), vecs: map[string][]float32{}}
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
	st.Docs = len(b.vecs)
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
	vecs  map[string][]float32 // paper ID → normalised vector
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
			delete(b.vecs, ids[i])
			continue
		}
		if b.dim == 0 {
			b.dim = len(v)
		}
		if len(v) != b.dim {
			return fmt.Errorf("dense: build: %w: vector of %s has dimension %d, want %d", ErrEmbedder, ids[i], len(v), b.dim)
		}
		nv := slices.Clone(v)
		if !normalize(nv) {
			st.Skipped++
			delete(b.vecs, ids[i])
			continue
		}
		b.vecs[ids[i]] = nv
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
	ids := make([]string, 0, len(b.vecs))
	for id := range b.vecs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	db := chromem.NewDB()
	col, err := db.CreateCollection(CollectionName, nil, refuseEmbed)
	if err != nil {
		return 0, err
	}
	for i, id := range ids {
		if i%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
		}
		if err := col.AddDocument(ctx, chromem.Document{ID: id, Embedding: b.vecs[id]}); err != nil {
			return 0, err
		}
	}
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
		return db.ExportToWriter(w, opts.Compress, "")
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
	if err := writeSidecar(dir, name, size, ids, b.dim, func(i int) []float32 { return b.vecs[ids[i]] }); err != nil {
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
