package lsa

import (
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
)

// denseCSR stores the dense matrix d (rows × cols, row-major) as a csr,
// leaving out zeros.
func denseCSR(d []float64, rows, cols int) *csr {
	a := &csr{rows: rows, cols: cols, ptr: make([]int, rows+1)}
	for i := range rows {
		for j := range cols {
			if x := d[i*cols+j]; x != 0 {
				a.col = append(a.col, int32(j))
				a.val = append(a.val, x)
			}
		}
		a.ptr[i+1] = len(a.col)
	}
	return a
}

// orthonormal returns a rows × cols matrix with orthonormal columns.
func orthonormal(rng *rand.Rand, rows, cols int) *mat.Dense {
	g := mat.NewDense(rows, cols, nil)
	for i := range rows {
		for j := range cols {
			g.Set(i, j, rng.NormFloat64())
		}
	}
	var qr mat.QR
	qr.Factorize(g)
	var q mat.Dense
	qr.QTo(&q)
	return mat.DenseCopyOf(q.Slice(0, rows, 0, cols))
}

func TestRandomizedSVDAccuracy(t *testing.T) {
	tests := []struct {
		name       string
		rows, cols int
		make       func(rng *rand.Rand, rows, cols int) []float64
		k, over    int
		power      int
	}{
		{
			name: "decaying spectrum", rows: 300, cols: 200, k: 10, over: 10, power: 4,
			make: func(rng *rand.Rand, rows, cols int) []float64 {
				r := min(rows, cols)
				u, v := orthonormal(rng, rows, r), orthonormal(rng, cols, r)
				s := mat.NewDiagDense(r, nil)
				for i := range r {
					s.SetDiag(i, 10*math.Pow(0.85, float64(i)))
				}
				var us, a mat.Dense
				us.Mul(u, s)
				a.Mul(&us, v.T())
				return a.RawMatrix().Data
			},
		},
		{
			name: "sparse non-negative, tf-idf like", rows: 400, cols: 150, k: 8, over: 30, power: 20,
			make: func(rng *rand.Rand, rows, cols int) []float64 {
				d := make([]float64, rows*cols)
				for i := range d {
					if rng.Float64() < 0.08 {
						d[i] = rng.ExpFloat64()
					}
				}
				return d
			},
		},
		{
			name: "gaussian, basis as wide as the matrix", rows: 120, cols: 80, k: 6, over: 74, power: 1,
			make: func(rng *rand.Rand, rows, cols int) []float64 {
				d := make([]float64, rows*cols)
				for i := range d {
					d[i] = rng.NormFloat64()
				}
				return d
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewSource(42))
			d := tc.make(rng, tc.rows, tc.cols)
			var ref mat.SVD
			require.True(t, ref.Factorize(mat.NewDense(tc.rows, tc.cols, d), mat.SVDThin))
			want := ref.Values(nil)
			var refV mat.Dense
			ref.VTo(&refV)

			sigma, v, err := randomizedSVD(t.Context(), denseCSR(d, tc.rows, tc.cols), tc.k, tc.over, tc.power, 1, nil)
			require.NoError(t, err)
			require.Len(t, sigma, tc.k)
			require.Len(t, v, tc.cols*tc.k)
			for i := range tc.k {
				assert.InDelta(t, 0, (sigma[i]-want[i])/want[i], 1e-6, "σ%d: %v want %v", i, sigma[i], want[i])
				// Singular vector i matches up to sign (float32 storage).
				var c float64
				for j := range tc.cols {
					c += float64(v[j*tc.k+i]) * refV.At(j, i)
				}
				assert.InDelta(t, 1, math.Abs(c), 1e-5, "v%d", i)
			}
		})
	}
}

func TestOrthRankDeficient(t *testing.T) {
	// Three columns spanning a plane: orth keeps two orthonormal columns.
	y := []float64{
		1, 0, 1,
		0, 1, 1,
		1, 1, 2,
		2, 0, 2,
	}
	q := make([]float64, len(y))
	r, err := orth(t.Context(), y, 4, 3, q)
	require.NoError(t, err)
	require.Equal(t, 2, r)
	for a := range r {
		for b := range r {
			var s float64
			for i := range 4 {
				s += q[i*r+a] * q[i*r+b]
			}
			want := 0.0
			if a == b {
				want = 1
			}
			assert.InDelta(t, want, s, 1e-12)
		}
	}
}

func TestGram(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, rows := range []int{1, 63, 64, 65, 300} {
		c := 7
		y := make([]float64, rows*c)
		for i := range y {
			y[i] = rng.NormFloat64()
		}
		g, err := gram(t.Context(), y, rows, c)
		require.NoError(t, err)
		var want mat.Dense
		ym := mat.NewDense(rows, c, y)
		want.Mul(ym.T(), ym)
		for i := range c {
			for j := range c {
				assert.InDelta(t, want.At(i, j), g[i*c+j], 1e-9, "rows %d (%d,%d)", rows, i, j)
			}
		}
	}
}
