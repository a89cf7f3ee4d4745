package dense

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/corpus"
)

// fixedEmbedder returns the vector of the number in the text "doc-<i>".
type fixedEmbedder struct{ vecs [][]float32 }

func (e *fixedEmbedder) Model() string { return "fixed" }
func (e *fixedEmbedder) Dim() int      { return len(e.vecs[0]) }
func (e *fixedEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		var n int
		if _, err := fmt.Sscanf(t, "doc-%d", &n); err != nil {
			return nil, err
		}
		out[i] = e.vecs[n]
	}
	return out, nil
}

// buildFixed builds an index of n random vectors (seed) in a new folder.
func buildFixed(t *testing.T, n, dim int, seed int64) (string, *fixedEmbedder) {
	t.Helper()
	rng := rand.New(rand.NewSource(seed))
	emb := &fixedEmbedder{vecs: make([][]float32, n)}
	ps := make([]corpus.Paper, n)
	for i := range n {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		emb.vecs[i] = v
		ps[i] = corpus.Paper{ID: fmt.Sprintf("p%06d", rng.Intn(1_000_000)), Title: fmt.Sprintf("doc-%d", i)}
	}
	dir := t.TempDir()
	next := func() (corpus.Paper, bool, error) {
		if len(ps) == 0 {
			return corpus.Paper{}, false, nil
		}
		p := ps[0]
		ps = ps[1:]
		return p, true, nil
	}
	_, err := Build(t.Context(), dir, BuildOptions{Embedder: emb, BatchSize: 1024}, next, nil)
	require.NoError(t, err)
	return dir, emb
}

func sidecarPath(t *testing.T, dir string) string {
	h, err := Stat(dir)
	require.NoError(t, err)
	return filepath.Join(dir, SidecarName(h.Export))
}

// fromExport loads dir's index from the export, ignoring any sidecar.
func fromExport(t *testing.T, dir string, emb Embedder) *Retriever {
	h, err := Stat(dir)
	require.NoError(t, err)
	r := &Retriever{emb: emb, header: h, dim: h.Dim}
	require.NoError(t, r.loadExport(dir))
	return r
}

// sameHits checks that got answers random queries exactly as want.
func sameHits(t *testing.T, want, got *Retriever) {
	t.Helper()
	rng := rand.New(rand.NewSource(9))
	for range 20 {
		q := make([]float32, want.dim)
		for j := range q {
			q[j] = float32(rng.NormFloat64())
		}
		w, err := want.RetrieveVector(t.Context(), q, 25)
		require.NoError(t, err)
		g, err := got.RetrieveVector(t.Context(), q, 25)
		require.NoError(t, err)
		require.Equal(t, w, g)
	}
}

func TestSidecarRoundTrip(t *testing.T) {
	tests := []struct {
		name   string
		n, dim int
	}{
		{"flat", 700, 24},
		{"quantised", 3000, 40}, // from quantMinRows on: the int8 copy is stored too
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir, emb := buildFixed(t, tc.n, tc.dim, 1)
			require.FileExists(t, sidecarPath(t, dir), "Build writes the sidecar")
			r, err := Open(dir, emb)
			require.NoError(t, err)
			assert.True(t, r.fromSidecar)
			ref := fromExport(t, dir, emb)
			assert.Equal(t, ref.ids, r.ids)
			assert.Equal(t, ref.vecs, r.vecs)
			assert.Equal(t, ref.quant, r.quant)
			sameHits(t, ref, r)
		})
	}
}

func TestSidecarFallback(t *testing.T) {
	dir, emb := buildFixed(t, 3000, 40, 1)
	ref := fromExport(t, dir, emb)
	other, _ := buildFixed(t, 3000, 40, 2) // another index of the same shape
	good, err := os.ReadFile(sidecarPath(t, dir))
	require.NoError(t, err)
	otherSide, err := os.ReadFile(sidecarPath(t, other))
	require.NoError(t, err)
	flip := func(off int) []byte {
		b := append([]byte(nil), good...)
		b[off] ^= 0x40
		return b
	}
	tests := []struct {
		name string
		data []byte // nil: no sidecar
	}{
		{"missing", nil},
		{"empty", []byte{}},
		{"truncated", good[:len(good)-1]},
		{"truncated header", good[:100]},
		{"longer", append(append([]byte(nil), good...), 0)},
		{"header byte", flip(20)},
		{"vector byte", flip(sidecarHdrSize + 1000)},
		{"last ID byte", flip(len(good) - 1)},
		{"another export's", otherSide},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := sidecarPath(t, dir)
			if tc.data == nil {
				require.NoError(t, os.Remove(path))
			} else {
				require.NoError(t, os.WriteFile(path, tc.data, 0o644))
			}
			r, err := Open(dir, emb)
			require.NoError(t, err)
			assert.False(t, r.fromSidecar)
			sameHits(t, ref, r)

			// index repairs it.
			wrote, err := EnsureSidecar(t.Context(), dir)
			require.NoError(t, err)
			assert.True(t, wrote)
			wrote, err = EnsureSidecar(t.Context(), dir)
			require.NoError(t, err)
			assert.False(t, wrote)
			r, err = Open(dir, emb)
			require.NoError(t, err)
			assert.True(t, r.fromSidecar)
			sameHits(t, ref, r)
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, good, got, "the repaired sidecar is the one Build wrote")
		})
	}
}

func TestSidecarLeftovers(t *testing.T) {
	dir, emb := buildFixed(t, 300, 16, 1)
	h, err := Stat(dir)
	require.NoError(t, err)
	for _, name := range []string{"papers-000000000000.gob.flat", SidecarName(h.Export) + ".tmp-0123456789ab"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644))
	}
	n, err := RemoveLeftovers(dir)
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.ElementsMatch(t, []string{HeaderFile, h.Export, SidecarName(h.Export)}, names)

	// A rebuild replaces both files.
	_, err = Build(t.Context(), dir, BuildOptions{Embedder: emb}, func() (corpus.Paper, bool, error) { return corpus.Paper{}, false, nil }, nil)
	require.NoError(t, err)
	h2, err := Stat(dir)
	require.NoError(t, err)
	entries, err = os.ReadDir(dir)
	require.NoError(t, err)
	names = names[:0]
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.ElementsMatch(t, []string{HeaderFile, h2.Export, SidecarName(h2.Export)}, names)
}
