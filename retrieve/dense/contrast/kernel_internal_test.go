package contrast

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
)

func randSlice(rng *rand.Rand, n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(rng.NormFloat64())
	}
	return out
}

func TestGemmNT(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, sz := range [][3]int{{1, 1, 1}, {3, 4, 8}, {7, 9, 16}, {25, 70, 64}, {30, 5, 13}, {100, 130, 768}} {
		m, n, k := sz[0], sz[1], sz[2]
		t.Run(fmt.Sprint(m, n, k), func(t *testing.T) {
			lda, ldb, ldc := k+3, k+1, n+2
			a := randSlice(rng, m*lda)
			b := randSlice(rng, n*ldb)
			for _, workers := range []int{1, 2, 3} {
				c := make([]float32, m*ldc)
				gemmNT(m, n, k, a, lda, b, ldb, c, ldc, workers)
				for i := range m {
					for j := range n {
						var want float64
						for q := range k {
							want += float64(a[i*lda+q]) * float64(b[j*ldb+q])
						}
						assert.InDelta(t, want, c[i*ldc+j], 1e-4*math.Sqrt(float64(k))+1e-5, "c[%d][%d]", i, j)
					}
				}
			}
		})
	}
}

func TestGemmWorkersSame(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	m, n, k := 200, 150, 96
	a, b := randSlice(rng, m*k), randSlice(rng, n*k)
	c1, c2 := make([]float32, m*n), make([]float32, m*n)
	gemmNT(m, n, k, a, k, b, k, c1, n, 1)
	gemmNT(m, n, k, a, k, b, k, c2, n, 2)
	assert.Equal(t, c1, c2)
}

func TestDotAxpy(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 7, 8, 9, 31, 32, 33, 100, 768} {
		x, y := randSlice(rng, n), randSlice(rng, n)
		var want float64
		for i := range n {
			want += float64(x[i]) * float64(y[i])
		}
		assert.InDelta(t, want, dot(x, y), 1e-4*math.Sqrt(float64(n))+1e-6, "dot %d", n)
		assert.InDelta(t, want, dotGeneric(x, y), 1e-4*math.Sqrt(float64(n))+1e-6, "dotGeneric %d", n)
		y2 := append([]float32(nil), y...)
		y3 := append([]float32(nil), y...)
		axpy(0.5, x, y2)
		axpyGeneric(0.5, x, y3)
		for i := range n {
			assert.InDelta(t, y[i]+0.5*x[i], y2[i], 1e-5)
			assert.InDelta(t, y[i]+0.5*x[i], y3[i], 1e-5)
		}
	}
}

var sinkF []float32

func BenchmarkGemmNT(b *testing.B) {
	for _, sz := range [][3]int{{1024, 1024, 768}, {1024, 768, 1024}, {512, 512, 512}} {
		m, n, k := sz[0], sz[1], sz[2]
		rng := rand.New(rand.NewPCG(1, 1))
		a, bb := randSlice(rng, m*k), randSlice(rng, n*k)
		c := make([]float32, m*n)
		for _, w := range []int{1, 2} {
			b.Run(fmt.Sprintf("%dx%dx%d/workers=%d", m, n, k, w), func(b *testing.B) {
				for b.Loop() {
					gemmNT(m, n, k, a, k, bb, k, c, n, w)
				}
				sinkF = c
				b.ReportMetric(float64(m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GMAC/s")
			})
		}
	}
}

func TestAdamKernel(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for _, n := range []int{1, 8, 13, 768} {
		w, m, g := randSlice(rng, n), randSlice(rng, n), randSlice(rng, n)
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.Float64())
		}
		w2, m2, v2 := append([]float32(nil), w...), append([]float32(nil), m...), append([]float32(nil), v...)
		adam(w, m, v, g, 1e-3, 1.5)
		adamGeneric(w2, m2, v2, g, 1e-3, 1.5)
		for i := range n {
			assert.InDelta(t, m2[i], m[i], 1e-6)
			assert.InDelta(t, v2[i], v[i], 1e-6)
			assert.InDelta(t, w2[i], w[i], 1e-6)
		}
	}
}

func TestTokenizer(t *testing.T) {
	z := newTokenizer()
	got := z.terms("The Models' ranking, of BM25-based retrieval (Robertson's) — naïve Ünïcode: 3.5 e-mail", nil)
	assert.Equal(t, []string{"model", "rank", "bm25", "base", "retriev", "robertson", "naïv", "ünïcode", "3", "5", "e", "mail"}, got)
	assert.Equal(t, got, z.terms("The Models' ranking, of BM25-based retrieval (Robertson's) — naïve Ünïcode: 3.5 e-mail", nil), "cached")
	assert.Empty(t, z.terms("of the and", nil))
}
