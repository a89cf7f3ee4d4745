//go:build amd64

#include "textflag.h"

// func dot3x4AVX2(a *float32, lda int, b *float32, ldb int, k int, c *float32, ldc int)
//
// c[r*ldc+q] = Σ_t a[r*lda+t]·b[q*ldb+t] for r < 3, q < 4, t < k; k is a
// positive multiple of 8; strides are in elements. Twelve accumulators
// (Y0–Y11, row r's four in Y(4r)…Y(4r+3)) take one FMA per 8 columns
// each; three loads of a and four of b feed twelve FMAs. Each row's four
// sums are reduced together with three VHADDPS and stored as 4 floats.
TEXT ·dot3x4AVX2(SB), NOSPLIT, $0-56
	MOVQ a+0(FP), SI
	MOVQ lda+8(FP), R8
	SHLQ $2, R8
	MOVQ b+16(FP), DI
	MOVQ ldb+24(FP), R9
	SHLQ $2, R9
	MOVQ k+32(FP), CX
	SHLQ $2, CX
	MOVQ c+40(FP), DX
	MOVQ ldc+48(FP), R10
	SHLQ $2, R10

	LEAQ (SI)(R8*1), R11  // a row 1
	LEAQ (R11)(R8*1), R12 // a row 2
	LEAQ (DI)(R9*1), R13  // b row 1
	LEAQ (R13)(R9*1), BX  // b row 2
	LEAQ (BX)(R9*1), R9   // b row 3

	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	XORQ   AX, AX

loop:
	VMOVUPS     (SI)(AX*1), Y12
	VMOVUPS     (R11)(AX*1), Y13
	VMOVUPS     (R12)(AX*1), Y14
	VMOVUPS     (DI)(AX*1), Y15
	VFMADD231PS Y15, Y12, Y0
	VFMADD231PS Y15, Y13, Y4
	VFMADD231PS Y15, Y14, Y8
	VMOVUPS     (R13)(AX*1), Y15
	VFMADD231PS Y15, Y12, Y1
	VFMADD231PS Y15, Y13, Y5
	VFMADD231PS Y15, Y14, Y9
	VMOVUPS     (BX)(AX*1), Y15
	VFMADD231PS Y15, Y12, Y2
	VFMADD231PS Y15, Y13, Y6
	VFMADD231PS Y15, Y14, Y10
	VMOVUPS     (R9)(AX*1), Y15
	VFMADD231PS Y15, Y12, Y3
	VFMADD231PS Y15, Y13, Y7
	VFMADD231PS Y15, Y14, Y11
	ADDQ        $32, AX
	CMPQ        AX, CX
	JLT         loop

	// row 0
	VHADDPS      Y1, Y0, Y0
	VHADDPS      Y3, Y2, Y2
	VHADDPS      Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VMOVUPS      X0, (DX)

	// row 1
	VHADDPS      Y5, Y4, Y4
	VHADDPS      Y7, Y6, Y6
	VHADDPS      Y6, Y4, Y4
	VEXTRACTF128 $1, Y4, X5
	VADDPS       X5, X4, X4
	VMOVUPS      X4, (DX)(R10*1)

	// row 2
	VHADDPS      Y9, Y8, Y8
	VHADDPS      Y11, Y10, Y10
	VHADDPS      Y10, Y8, Y8
	VEXTRACTF128 $1, Y8, X9
	VADDPS       X9, X8, X8
	VMOVUPS      X8, (DX)(R10*2)

	VZEROUPPER
	RET

// func dotAVX2(a, b *float32, n int) float32
//
// Σ a[t]·b[t] for t < n, n a positive multiple of 8: four accumulators
// over 32 columns at a time, then 8 at a time.
TEXT ·dotAVX2(SB), NOSPLIT, $0-28
	MOVQ   a+0(FP), SI
	MOVQ   b+8(FP), DI
	MOVQ   n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ   AX, AX

dloop32:
	LEAQ        32(AX), DX
	CMPQ        DX, CX
	JGT         dloop8
	VMOVUPS     (SI)(AX*4), Y4
	VMOVUPS     32(SI)(AX*4), Y5
	VMOVUPS     64(SI)(AX*4), Y6
	VMOVUPS     96(SI)(AX*4), Y7
	VFMADD231PS (DI)(AX*4), Y4, Y0
	VFMADD231PS 32(DI)(AX*4), Y5, Y1
	VFMADD231PS 64(DI)(AX*4), Y6, Y2
	VFMADD231PS 96(DI)(AX*4), Y7, Y3
	MOVQ        DX, AX
	JMP         dloop32

dloop8:
	CMPQ        AX, CX
	JGE         dreduce
	VMOVUPS     (SI)(AX*4), Y4
	VFMADD231PS (DI)(AX*4), Y4, Y0
	ADDQ        $8, AX
	JMP         dloop8

dreduce:
	VADDPS       Y1, Y0, Y0
	VADDPS       Y3, Y2, Y2
	VADDPS       Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	VZEROUPPER
	MOVSS        X0, ret+24(FP)
	RET

// func axpyAVX2(alpha float32, x, y *float32, n int)
//
// y[t] += alpha·x[t] for t < n, n a positive multiple of 8.
TEXT ·axpyAVX2(SB), NOSPLIT, $0-32
	VBROADCASTSS alpha+0(FP), Y15
	MOVQ         x+8(FP), SI
	MOVQ         y+16(FP), DI
	MOVQ         n+24(FP), CX
	XORQ         AX, AX

aloop32:
	LEAQ        32(AX), DX
	CMPQ        DX, CX
	JGT         aloop8
	VMOVUPS     (DI)(AX*4), Y0
	VMOVUPS     32(DI)(AX*4), Y1
	VMOVUPS     64(DI)(AX*4), Y2
	VMOVUPS     96(DI)(AX*4), Y3
	VFMADD231PS (SI)(AX*4), Y15, Y0
	VFMADD231PS 32(SI)(AX*4), Y15, Y1
	VFMADD231PS 64(SI)(AX*4), Y15, Y2
	VFMADD231PS 96(SI)(AX*4), Y15, Y3
	VMOVUPS     Y0, (DI)(AX*4)
	VMOVUPS     Y1, 32(DI)(AX*4)
	VMOVUPS     Y2, 64(DI)(AX*4)
	VMOVUPS     Y3, 96(DI)(AX*4)
	MOVQ        DX, AX
	JMP         aloop32

aloop8:
	CMPQ        AX, CX
	JGE         adone
	VMOVUPS     (DI)(AX*4), Y0
	VFMADD231PS (SI)(AX*4), Y15, Y0
	VMOVUPS     Y0, (DI)(AX*4)
	ADDQ        $8, AX
	JMP         aloop8

adone:
	VZEROUPPER
	RET

// func adamAVX2(w, m, v, grad *float32, n int, lr, ibc2 float32)
//
// One Adam step on n floats (n a positive multiple of 8), β1 0.9, β2
// 0.999, ε 1e-8: m = β1·m + (1−β1)·g; v = β2·v + (1−β2)·g²;
// w −= lr·m / (√(v·ibc2) + ε). lr already holds the first moment's bias
// correction; ibc2 is 1/(1−β2^t).
TEXT ·adamAVX2(SB), NOSPLIT, $0-48
	MOVQ         w+0(FP), DI
	MOVQ         m+8(FP), SI
	MOVQ         v+16(FP), DX
	MOVQ         grad+24(FP), BX
	MOVQ         n+32(FP), CX
	VBROADCASTSS lr+40(FP), Y8
	VBROADCASTSS ibc2+44(FP), Y9
	MOVL         $0x3f666666, AX // 0.9
	VMOVD        AX, X10
	VBROADCASTSS X10, Y10
	MOVL         $0x3dcccccd, AX // 0.1
	VMOVD        AX, X11
	VBROADCASTSS X11, Y11
	MOVL         $0x3f7fbe77, AX // 0.999
	VMOVD        AX, X12
	VBROADCASTSS X12, Y12
	MOVL         $0x3a83126f, AX // 0.001
	VMOVD        AX, X13
	VBROADCASTSS X13, Y13
	MOVL         $0x322bcc77, AX // 1e-8
	VMOVD        AX, X14
	VBROADCASTSS X14, Y14
	XORQ         AX, AX

adloop:
	VMOVUPS     (BX)(AX*4), Y0    // g
	VMULPS      (SI)(AX*4), Y10, Y1 // β1·m
	VFMADD231PS Y0, Y11, Y1       // + (1−β1)·g
	VMULPS      Y0, Y0, Y2        // g²
	VMULPS      (DX)(AX*4), Y12, Y3 // β2·v
	VFMADD231PS Y2, Y13, Y3       // + (1−β2)·g²
	VMOVUPS     Y1, (SI)(AX*4)
	VMOVUPS     Y3, (DX)(AX*4)
	VMULPS      Y3, Y9, Y4        // v·ibc2
	VSQRTPS     Y4, Y4
	VADDPS      Y14, Y4, Y4       // + ε
	VDIVPS      Y4, Y1, Y5        // m / (…)
	VMOVUPS     (DI)(AX*4), Y6
	VFNMADD231PS Y5, Y8, Y6       // w − lr·(…)
	VMOVUPS     Y6, (DI)(AX*4)
	ADDQ        $8, AX
	CMPQ        AX, CX
	JLT         adloop

	VZEROUPPER
	RET
