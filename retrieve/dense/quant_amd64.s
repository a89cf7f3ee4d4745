//go:build amd64

#include "textflag.h"

// func dotsInt8AVX2(q *int16, m *int8, stride, rows int, out *int32)
//
// out[r] = Σ_j q[j]·m[r·stride+j] for r < rows, in int32; stride is a
// positive multiple of 32. Per 32 columns: two VPMOVSXBW widen 2×16 int8
// to int16, two VPMADDWD multiply by the query's int16s and add adjacent
// pairs into 8 int32 lanes, two VPADDD accumulate.
TEXT ·dotsInt8AVX2(SB), NOSPLIT, $0-40
	MOVQ q+0(FP), SI
	MOVQ m+8(FP), DI
	MOVQ stride+16(FP), CX
	MOVQ rows+24(FP), DX
	MOVQ out+32(FP), R8

rowloop:
	TESTQ DX, DX
	JZ    done
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	XORQ  AX, AX

colloop:
	VPMOVSXBW (DI)(AX*1), Y2
	VPMOVSXBW 16(DI)(AX*1), Y3
	VPMADDWD  (SI)(AX*2), Y2, Y2
	VPMADDWD  32(SI)(AX*2), Y3, Y3
	VPADDD    Y2, Y0, Y0
	VPADDD    Y3, Y1, Y1
	ADDQ      $32, AX
	CMPQ      AX, CX
	JLT       colloop

	VPADDD       Y1, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0x4e, X0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0xb1, X0, X1
	VPADDD       X1, X0, X0
	VMOVD        X0, R9
	MOVL         R9, (R8)

	ADDQ CX, DI
	ADDQ $4, R8
	DECQ DX
	JMP  rowloop

done:
	VZEROUPPER
	RET
