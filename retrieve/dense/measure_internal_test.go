package dense

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/eval"
	"github.com/citefind/citefind/internal/datadir"
	"github.com/citefind/citefind/retrieve/dense/lsa"
)

// measureDBEnv names a database folder with a builtin (LSA) dense index of
// the ACM-CR collection, e.g. one built by `citefind index --embedder
// builtin`; TestMeasureACMCR runs only when it is set.
const measureDBEnv = "CITEFIND_DENSE_DB"

// TestMeasureACMCR checks that Open reads the same index from the sidecar
// as from the export, and, on the ACM-CR queries, that the two-pass query
// (int8 scan, float32 re-scoring) returns exactly what the flat float32
// scan returns for k 100, and logs the cost of each, of embedding a query
// (LSA fold-in), of both ways to Open, and how many rows pass 2
// re-scores. Opt-in: set CITEFIND_DENSE_DB (see measureDBEnv); timings
// depend on the machine's load.
func TestMeasureACMCR(t *testing.T) {
	db := os.Getenv(measureDBEnv)
	if db == "" {
		t.Skipf("set %s to a database with a builtin dense index of ACM-CR", measureDBEnv)
	}
	a, err := eval.LoadACMCR(datadir.Bench("acm-cr"))
	require.NoError(t, err)
	f, err := os.Open(filepath.Join(db, "lsa.model"))
	require.NoError(t, err)
	m, err := lsa.Load(f)
	f.Close()
	require.NoError(t, err)
	start := time.Now()
	r, err := Open(filepath.Join(db, "dense"), m)
	require.NoError(t, err)
	require.NotNil(t, r.quant)
	t.Logf("open: %d papers × %d dims in %v (from the sidecar: %v)", r.Count(), r.dim, time.Since(start), r.fromSidecar)
	start = time.Now()
	ref := &Retriever{emb: m, header: r.header, dim: r.dim}
	require.NoError(t, ref.loadExport(filepath.Join(db, "dense")))
	t.Logf("open from the chromem-go export: %v", time.Since(start))
	require.Equal(t, ref.ids, r.ids)
	require.Equal(t, ref.vecs, r.vecs)
	require.Equal(t, ref.quant, r.quant)
	ref = nil

	ctx := context.Background()
	var embed, flat, quant time.Duration
	var rescored []int
	const k = 100
	for _, set := range a.Sets {
		for _, query := range set.Queries {
			t0 := time.Now()
			vs, err := m.Embed(ctx, []string{query.Text})
			require.NoError(t, err)
			t1 := time.Now()
			q := slices.Clone(vs[0])
			if !normalize(q) {
				continue
			}
			want, err := r.scan(ctx, q, k)
			require.NoError(t, err)
			t2 := time.Now()
			got, n, err := r.scanQuant(ctx, q, k)
			require.NoError(t, err)
			t3 := time.Now()
			assert.Equal(t, want, got, "%s %s", set.Name, query.ID)
			embed += t1.Sub(t0)
			flat += t2.Sub(t1)
			quant += t3.Sub(t2)
			rescored = append(rescored, n)
		}
	}
	n := time.Duration(len(rescored))
	slices.Sort(rescored)
	t.Logf("%d queries, k %d, per query: embed %v, flat float32 scan %v, two-pass scan %v; rows re-scored p50 %d, p90 %d, max %d",
		n, k, embed/n, flat/n, quant/n, rescored[len(rescored)/2], rescored[len(rescored)*9/10], rescored[len(rescored)-1])
}
