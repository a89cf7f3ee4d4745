//go:build amd64

package contrast

import "golang.org/x/sys/cpu"

// useAVX2 is fixed at start-up by the CPU's features: the assembly kernels
// need AVX2 and FMA.
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// dot3x4 sets the 3×4 block c[r*ldc+q] = Σ_t a[r*lda+t]·b[q*ldb+t], t < k,
// k a positive multiple of 8.
func dot3x4(a []float32, lda int, b []float32, ldb int, k int, c []float32, ldc int) {
	_ = a[2*lda+k-1]
	_ = b[3*ldb+k-1]
	_ = c[2*ldc+3]
	dot3x4AVX2(&a[0], lda, &b[0], ldb, k, &c[0], ldc)
}

//go:noescape
func dot3x4AVX2(a *float32, lda int, b *float32, ldb int, k int, c *float32, ldc int)

//go:noescape
func dotAVX2(a, b *float32, n int) float32

//go:noescape
func axpyAVX2(alpha float32, x, y *float32, n int)

//go:noescape
func adamAVX2(w, m, v, grad *float32, n int, lr, ibc2 float32)
