//go:build !amd64

package dense

// dotsInt8 sets out[r] to the dot product of the query q with row r of m
// (rows of stride int8s; len(q) == stride, a multiple of 32).
func dotsInt8(q []int16, m []int8, stride int, out []int32) {
	dotsInt8Generic(q, m, stride, out)
}
