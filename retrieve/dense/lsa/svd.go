package lsa

import (
	"context"
	"fmt"
	"math"
	"math/rand"

	"gonum.org/v1/gonum/mat"
)

// randomizedSVD returns the top k singular values of a (descending) and the
// matching right singular vectors as an a.cols × k row-major float32
// matrix (each column's largest-magnitude entry positive).
//
// It follows Halko, Martinsson & Tropp (2011), run on the term side so
// that the orthonormal basis it builds is already the right singular
// space: with l = k + oversample random directions,
//
//	Y = Aᵀ Ω                 Ω: a.rows × l, standard Gaussian from seed
//	Q = orth(Y)
//	repeat power times:      Q = orth(Aᵀ (A Q))
//	Q = orth(Q)              second pass, orthonormal to rounding
//	G = (A Q)ᵀ (A Q) = W Λ Wᵀ
//	σ = √Λ, V = Q W          (Rayleigh–Ritz)
//
// orth orthonormalises through the eigendecomposition of the Gram matrix
// (an l×l problem), dropping directions the data does not span, so a
// rank-deficient a gives fewer than k values. All products with a and the
// Gram matrices run on workers goroutines.
func randomizedSVD(ctx context.Context, a *csr, k, oversample, power int, seed int64, progress func(done, total int)) ([]float64, []float32, error) {
	if progress == nil {
		progress = func(int, int) {}
	}
	m, n := a.rows, a.cols
	l := min(k+oversample, m, n)
	k = min(k, l)
	if k <= 0 {
		return nil, nil, fmt.Errorf("randomized svd: empty %d×%d matrix", m, n)
	}
	at := a.transpose()
	total := 7 + 3*power
	done := 0
	step := func() { done++; progress(done, total) }

	rng := rand.New(rand.NewSource(seed))
	zbuf := make([]float64, m*l) // Ω, then A·Q
	for i := range zbuf {
		zbuf[i] = rng.NormFloat64()
	}
	ybuf := make([]float64, n*l)
	qbuf := make([]float64, n*l)
	if err := at.mul(ctx, zbuf, l, ybuf); err != nil {
		return nil, nil, err
	}
	step()
	r, err := orth(ctx, ybuf, n, l, qbuf)
	if err != nil {
		return nil, nil, err
	}
	step()
	for range power {
		if err := a.mul(ctx, qbuf[:n*r], r, zbuf[:m*r]); err != nil {
			return nil, nil, err
		}
		step()
		if err := at.mul(ctx, zbuf[:m*r], r, ybuf[:n*r]); err != nil {
			return nil, nil, err
		}
		step()
		if r, err = orth(ctx, ybuf[:n*r], n, r, qbuf); err != nil {
			return nil, nil, err
		}
		step()
	}
	copy(ybuf, qbuf[:n*r])
	if r, err = orth(ctx, ybuf[:n*r], n, r, qbuf); err != nil {
		return nil, nil, err
	}
	step()
	q := qbuf[:n*r]
	z := zbuf[:m*r]
	if err := a.mul(ctx, q, r, z); err != nil {
		return nil, nil, err
	}
	step()
	g, err := gram(ctx, z, m, r)
	if err != nil {
		return nil, nil, err
	}
	var eig mat.EigenSym
	if !eig.Factorize(mat.NewSymDense(r, g), true) {
		return nil, nil, fmt.Errorf("randomized svd: eigendecomposition failed")
	}
	step()
	lambda := eig.Values(nil) // ascending
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	k = min(k, r)
	sigma := make([]float64, k)
	w := make([]float64, r*k) // r × k: the top-k Ritz vectors, descending
	for c := range k {
		src := r - 1 - c
		sigma[c] = math.Sqrt(max(lambda[src], 0))
		for i := range r {
			w[i*k+c] = vecs.At(i, src)
		}
	}
	v64 := make([]float64, n*k)
	if err := mulDense(ctx, q, n, r, w, k, v64); err != nil {
		return nil, nil, err
	}
	step()
	// Fix each column's sign: its largest-magnitude entry is positive.
	for c := range k {
		best, at := 0.0, 0
		for j := range n {
			if x := math.Abs(v64[j*k+c]); x > best {
				best, at = x, j
			}
		}
		if v64[at*k+c] < 0 {
			for j := range n {
				v64[j*k+c] = -v64[j*k+c]
			}
		}
	}
	v := make([]float32, n*k)
	for i, x := range v64 {
		v[i] = float32(x)
	}
	step()
	return sigma, v, nil
}

// gramBlock is the number of rows gram transposes and handles together.
const gramBlock = 64

// gram returns yᵀy (c × c, row-major, symmetric) of y (rows × c).
func gram(ctx context.Context, y []float64, rows, c int) ([]float64, error) {
	parts := make([][]float64, workers)
	err := parallel(ctx, func(ctx context.Context, w int) error {
		lo, hi := rows*w/workers, rows*(w+1)/workers
		g := make([]float64, c*c)
		tb := make([]float64, c*gramBlock)
		for r0 := lo; r0 < hi; r0 += gramBlock {
			if (r0-lo)%(16*gramBlock) == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			nb := min(gramBlock, hi-r0)
			for r := range nb {
				row := y[(r0+r)*c : (r0+r+1)*c]
				for i, x := range row {
					tb[i*gramBlock+r] = x
				}
			}
			for i := range c {
				ti := tb[i*gramBlock : i*gramBlock+nb]
				gi := g[i*c : (i+1)*c]
				for j := i; j < c; j++ {
					gi[j] += dot(ti, tb[j*gramBlock:])
				}
			}
		}
		parts[w] = g
		return nil
	})
	if err != nil {
		return nil, err
	}
	g := parts[0]
	for _, p := range parts[1:] {
		for i, x := range p {
			g[i] += x
		}
	}
	for i := range c {
		for j := i + 1; j < c; j++ {
			g[j*c+i] = g[i*c+j]
		}
	}
	return g, nil
}

// mulDense sets out (rows × c2) to y (rows × c) times w (c × c2).
func mulDense(ctx context.Context, y []float64, rows, c int, w []float64, c2 int, out []float64) error {
	return parallel(ctx, func(ctx context.Context, wk int) error {
		lo, hi := rows*wk/workers, rows*(wk+1)/workers
		for i := lo; i < hi; i++ {
			if (i-lo)%checkEvery == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			dst := out[i*c2 : (i+1)*c2]
			clear(dst)
			for a, x := range y[i*c : (i+1)*c] {
				if x != 0 {
					axpy(x, w[a*c2:(a+1)*c2], dst)
				}
			}
		}
		return nil
	})
}

// orthTol is the smallest eigenvalue of the Gram matrix, relative to the
// largest, whose direction orth keeps (a condition number of 10⁶ for y).
const orthTol = 1e-12

// orth writes to q (rows × r) an orthonormal basis of the column space of
// y (rows × c) and returns r ≤ c: q = y·W·Λ^(-1/2), W Λ Wᵀ being the
// eigendecomposition of yᵀy, keeping the directions with λ > orthTol·λmax.
// The result is orthonormal to about eps·cond(y)²; a second call on q makes
// it orthonormal to rounding.
func orth(ctx context.Context, y []float64, rows, c int, q []float64) (int, error) {
	g, err := gram(ctx, y, rows, c)
	if err != nil {
		return 0, err
	}
	var eig mat.EigenSym
	if !eig.Factorize(mat.NewSymDense(c, g), true) {
		return 0, fmt.Errorf("orthonormalise: eigendecomposition failed")
	}
	lambda := eig.Values(nil) // ascending
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	top := lambda[c-1]
	r := 0
	for i := c - 1; i >= 0 && lambda[i] > orthTol*top && top > 0; i-- {
		r++
	}
	if r == 0 {
		return 0, fmt.Errorf("orthonormalise: zero matrix")
	}
	w := make([]float64, c*r)
	for col := range r {
		src := c - 1 - col
		s := 1 / math.Sqrt(lambda[src])
		for i := range c {
			w[i*r+col] = vecs.At(i, src) * s
		}
	}
	return r, mulDense(ctx, y, rows, c, w, r, q[:rows*r])
}
