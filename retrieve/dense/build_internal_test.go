package dense

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"iter"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	chromem "github.com/philippgille/chromem-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/corpus"
)

// exportFixture returns n distinct IDs, ascending, and their vectors of
// dim floats: unit vectors as Build makes them, but every 7th left at
// norm 3 (chromem normalises those again), some with exact zeros and one
// long ID (its length takes two bytes in gob).
func exportFixture(n, dim int) ([]string, [][]float32) {
	rng := rand.New(rand.NewSource(3))
	seen := map[string]bool{}
	var ids []string
	for len(ids) < n {
		id := fmt.Sprintf("10.%d/x%d", rng.Intn(100000), rng.Intn(1000))
		if len(ids) == 1 {
			id = strings.Repeat("long", 40)
		}
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	vecs := make([][]float32, n)
	for i := range vecs {
		v := make([]float32, dim)
		for j := range v {
			if rng.Intn(5) > 0 {
				v[j] = float32(rng.NormFloat64())
			}
		}
		v[0] = 1 // no zero vector
		normalize(v)
		if i%7 == 3 {
			for j := range v {
				v[j] *= 3
			}
		}
		vecs[i] = v
	}
	return ids, vecs
}

// chromemExport is chromem-go's export of the collection of ids and vecs,
// built as Build used to build it.
func chromemExport(t *testing.T, ids []string, vecs [][]float32, compress bool) ([]byte, *chromem.Collection) {
	t.Helper()
	db := chromem.NewDB()
	col, err := db.CreateCollection(CollectionName, nil, refuseEmbed)
	require.NoError(t, err)
	for i, id := range ids {
		require.NoError(t, col.AddDocument(t.Context(), chromem.Document{ID: id, Embedding: vecs[i]}))
	}
	var b bytes.Buffer
	require.NoError(t, db.ExportToWriter(&b, compress, ""))
	return b.Bytes(), col
}

// chromemSorted is chromem-go's export of the collection of ids and vecs
// with its documents in ID order: its type definitions and value message
// around each document as chromem encodes it in a collection of its own.
func chromemSorted(t *testing.T, ids []string, vecs [][]float32) []byte {
	t.Helper()
	empty, _ := chromemExport(t, nil, nil, false)
	types, value, ok := splitLastGobMessage(empty)
	require.True(t, ok)
	head := value[:len(value)-3]
	var docs []byte
	for i := range ids {
		one, _ := chromemExport(t, ids[i:i+1], vecs[i:i+1], false)
		_, v, ok := splitLastGobMessage(one)
		require.True(t, ok)
		// head, 1 (the count), the document, 0 and 0 (the ends).
		require.Equal(t, head, v[:len(head)])
		docs = append(docs, v[len(head)+1:len(v)-2]...)
	}
	body := appendGobUint(slices.Clone(head), uint64(len(ids)))
	body = append(append(body, docs...), 0, 0)
	return append(appendGobUint(slices.Clone(types), uint64(len(body))), body...)
}

func TestWriteExportAsChromem(t *testing.T) {
	tests := []struct {
		name     string
		n        int
		compress bool
	}{
		{"empty", 0, false},
		{"one", 1, false},
		{"one gzip", 1, true},
		{"many", 300, false}, // over 127: the count takes two bytes
		{"many gzip", 300, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ids, vecs := exportFixture(tc.n, 33)
			want, col := chromemExport(t, ids, vecs, tc.compress)
			var got bytes.Buffer
			require.NoError(t, writeExport(t.Context(), &got, ids, func(i int) []float32 { return vecs[i] }, tc.compress))
			if tc.n <= 1 {
				// One order only: chromem's bytes exactly.
				assert.Equal(t, want, got.Bytes())
			}
			plain := got.Bytes()
			if tc.compress {
				zr, err := gzip.NewReader(bytes.NewReader(plain))
				require.NoError(t, err)
				plain, err = io.ReadAll(zr)
				require.NoError(t, err)
			}
			assert.Equal(t, chromemSorted(t, ids, vecs), plain, "chromem's bytes, documents in ID order")

			// chromem's importer reads it: the documents AddDocument stored.
			db := chromem.NewDB()
			require.NoError(t, db.ImportFromReader(bytes.NewReader(got.Bytes()), ""))
			imported := db.GetCollection(CollectionName, refuseEmbed)
			require.NotNil(t, imported)
			require.Equal(t, tc.n, imported.Count())
			for _, id := range ids {
				w, err := col.GetByID(t.Context(), id)
				require.NoError(t, err)
				g, err := imported.GetByID(t.Context(), id)
				require.NoError(t, err)
				require.Equal(t, w, g)
			}
		})
	}
	t.Run("ContextCanceled", func(t *testing.T) {
		ids, vecs := exportFixture(10, 4)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		err := writeExport(ctx, io.Discard, ids, func(i int) []float32 { return vecs[i] }, false)
		require.ErrorIs(t, err, context.Canceled)
	})
}

// builtIndex is what Build wrote, but for the export's random name and
// the build time: the header, the export and the sidecar, and the stats.
type builtIndex struct {
	header       Header
	export, side []byte
	stats        BuildStats
}

func readBuilt(t *testing.T, dir string, st BuildStats) builtIndex {
	t.Helper()
	h, err := Stat(dir)
	require.NoError(t, err)
	export, err := os.ReadFile(filepath.Join(dir, h.Export))
	require.NoError(t, err)
	side, err := os.ReadFile(filepath.Join(dir, SidecarName(h.Export)))
	require.NoError(t, err)
	sh, err := decodeSidecarHeader(side)
	require.NoError(t, err)
	require.Equal(t, h.Export, sh.export)
	sh.export = ""
	side = append(sh.encode(), side[sidecarHdrSize:]...)
	h.Export, h.Built = "", time.Time{}
	st.Duration = 0
	return builtIndex{header: h, export: export, side: side, stats: st}
}

// TestBuildSameIndex checks that Build writes the same files whatever its
// batch size and whatever the cache holds, with repeated IDs (the last
// paper wins) and papers without a vector among them.
func TestBuildSameIndex(t *testing.T) {
	const n, dim = 2300, 24
	rng := rand.New(rand.NewSource(5))
	emb := &fixedEmbedder{vecs: make([][]float32, n+1)}
	var ps []corpus.Paper
	for i := range n {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		emb.vecs[i] = v
		// IDs drawn from 10n: about 100 repeat.
		ps = append(ps, corpus.Paper{ID: fmt.Sprintf("p%05d", rng.Intn(10*n)), Title: fmt.Sprintf("doc-%d", i)})
	}
	emb.vecs[n] = make([]float32, dim)
	ps = append(ps,
		corpus.Paper{ID: "zero", Title: fmt.Sprintf("doc-%d", n)}, // a zero vector: skipped
		corpus.Paper{ID: "no text"},                               // skipped
		corpus.Paper{ID: ps[5].ID},                                // removes ps[5]
	)
	cache, err := OpenCache(filepath.Join(t.TempDir(), "cache.sqlite"))
	require.NoError(t, err)
	defer cache.Close()

	tests := []struct {
		name  string
		batch int
		cache *Cache
	}{
		{"default batches", 0, nil},
		{"batches of 1", 1, nil},
		{"batches of 7", 7, nil},
		{"one batch", 5000, nil},
		{"cold cache", 64, cache},
		{"warm cache", 100, cache},
	}
	var want *builtIndex
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			next := slices.Values(ps)
			pull, stop := iter.Pull(next)
			defer stop()
			st, err := Build(t.Context(), dir, BuildOptions{Embedder: emb, Cache: tc.cache, BatchSize: tc.batch},
				func() (corpus.Paper, bool, error) { p, ok := pull(); return p, ok, nil }, nil)
			require.NoError(t, err)
			got := readBuilt(t, dir, st)
			if want == nil {
				want = &got
				assert.Less(t, st.Docs, n-50, "repeated IDs")
				assert.GreaterOrEqual(t, st.Docs, quantMinRows, "the sidecar has the int8 copy")
				assert.Equal(t, 3, st.Skipped)
				return
			}
			assert.Equal(t, want.header, got.header)
			assert.True(t, bytes.Equal(want.export, got.export), "export")
			assert.True(t, bytes.Equal(want.side, got.side), "sidecar")
			assert.Equal(t, want.stats.Docs, got.stats.Docs)
			assert.Equal(t, want.stats.Skipped, got.stats.Skipped)
			assert.Equal(t, want.stats.Bytes, got.stats.Bytes)
			if tc.name == "warm cache" {
				assert.Zero(t, got.stats.Embedded)
			}
		})
	}
}
