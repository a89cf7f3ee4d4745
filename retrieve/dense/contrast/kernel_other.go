//go:build !amd64

package contrast

const useAVX2 = false

func dot3x4(a []float32, lda int, b []float32, ldb int, k int, c []float32, ldc int) {
	panic("contrast: no assembly kernels on this architecture")
}

func dotAVX2(a, b *float32, n int) float32 {
	panic("contrast: no assembly kernels on this architecture")
}

func axpyAVX2(alpha float32, x, y *float32, n int) {
	panic("contrast: no assembly kernels on this architecture")
}

func adamAVX2(w, m, v, g *float32, n int, lr, ibc2 float32) {
	panic("contrast: no assembly kernels on this architecture")
}
