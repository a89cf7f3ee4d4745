package contrast

import "sync"

// This file holds the dense float32 arithmetic of training and embedding:
// a matrix product in "NT" form (both operands row-major with the inner
// dimension contiguous) and y += a·x, each with an AVX2+FMA path on amd64
// (kernel_amd64.s) and a portable Go path. The two paths sum in different
// orders, so their results may differ in the last bits; one machine always
// takes the same path, which keeps training deterministic there.

// gemmNT sets c[i*ldc+j] = Σ_t a[i*lda+t]·b[j*ldb+t] for i < m, j < n,
// t < k, with up to workers goroutines (split by rows of a). Each c entry
// is computed by one kernel call whatever the split, so the result does
// not depend on workers.
func gemmNT(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, workers int) {
	if m == 0 || n == 0 {
		return
	}
	_ = a[(m-1)*lda+k-1]
	_ = b[(n-1)*ldb+k-1]
	_ = c[(m-1)*ldc+n-1]
	if workers < 1 {
		workers = 1
	}
	// rows of a per task, a multiple of the kernel's 3
	const tile = 3 * 8
	tasks := (m + tile - 1) / tile
	if workers > tasks {
		workers = tasks
	}
	if workers == 1 {
		gemmRows(0, m, n, k, a, lda, b, ldb, c, ldc)
		return
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	next := 0
	for range workers {
		wg.Go(func() {
			for {
				mu.Lock()
				t := next
				next++
				mu.Unlock()
				if t >= tasks {
					return
				}
				lo := t * tile
				gemmRows(lo, min(lo+tile, m), n, k, a, lda, b, ldb, c, ldc)
			}
		})
	}
	wg.Wait()
}

// gemmBlock is the number of rows of b kept hot in cache while the rows of
// a stream past them.
const gemmBlock = 64

// gemmRows computes rows lo..hi of c (see gemmNT).
func gemmRows(lo, hi, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	fast := useAVX2 && k%8 == 0 && k > 0
	for jb := 0; jb < n; jb += gemmBlock {
		je := min(jb+gemmBlock, n)
		i := lo
		if fast {
			for ; i+3 <= hi; i += 3 {
				j := jb
				for ; j+4 <= je; j += 4 {
					dot3x4(a[i*lda:], lda, b[j*ldb:], ldb, k, c[i*ldc+j:], ldc)
				}
				for ; j < je; j++ {
					for r := i; r < i+3; r++ {
						c[r*ldc+j] = dot(a[r*lda:r*lda+k], b[j*ldb:j*ldb+k])
					}
				}
			}
		}
		for ; i < hi; i++ {
			ar := a[i*lda : i*lda+k]
			for j := jb; j < je; j++ {
				c[i*ldc+j] = dot(ar, b[j*ldb:j*ldb+k])
			}
		}
	}
}

// dot returns Σ a[t]·b[t] over len(a) (len(b) >= len(a)).
func dot(a, b []float32) float32 {
	if useAVX2 && len(a) >= 8 {
		n := len(a) &^ 7
		s := dotAVX2(&a[0], &b[0], n)
		for t := n; t < len(a); t++ {
			s += a[t] * b[t]
		}
		return s
	}
	return dotGeneric(a, b)
}

func dotGeneric(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	t := 0
	for ; t+4 <= len(a); t += 4 {
		s0 += a[t] * b[t]
		s1 += a[t+1] * b[t+1]
		s2 += a[t+2] * b[t+2]
		s3 += a[t+3] * b[t+3]
	}
	for ; t < len(a); t++ {
		s0 += a[t] * b[t]
	}
	return (s0 + s1) + (s2 + s3)
}

// axpy sets y[t] += alpha·x[t] for t < len(x) (len(y) >= len(x)).
func axpy(alpha float32, x, y []float32) {
	if useAVX2 && len(x) >= 8 {
		n := len(x) &^ 7
		axpyAVX2(alpha, &x[0], &y[0], n)
		for t := n; t < len(x); t++ {
			y[t] += alpha * x[t]
		}
		return
	}
	axpyGeneric(alpha, x, y)
}

func axpyGeneric(alpha float32, x, y []float32) {
	y = y[:len(x)]
	for t, v := range x {
		y[t] += alpha * v
	}
}
