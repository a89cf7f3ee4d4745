//go:build amd64

package dense

import "golang.org/x/sys/cpu"

// hasAVX2 is fixed at start-up by the CPU's features.
var hasAVX2 = cpu.X86.HasAVX2

// dotsInt8 sets out[r] to the dot product of the query q with row r of m
// (rows of stride int8s; len(q) == stride, a multiple of 32), with AVX2
// when the CPU has it. Both ways compute the same integers.
func dotsInt8(q []int16, m []int8, stride int, out []int32) {
	if len(out) == 0 {
		return
	}
	if !hasAVX2 {
		dotsInt8Generic(q, m, stride, out)
		return
	}
	_ = q[stride-1]
	_ = m[len(out)*stride-1]
	dotsInt8AVX2(&q[0], &m[0], stride, len(out), &out[0])
}

//go:noescape
func dotsInt8AVX2(q *int16, m *int8, stride, rows int, out *int32)
