package dense

import (
	"context"
	"math"

	"github.com/citefind/citefind/internal/topk"
)

// The query path scans an int8 copy of the matrix first and re-scores in
// float32 only the rows that can still be in the top k; see scanQuant.

const (
	// quantCols is the column multiple of the int8 rows: the AVX2 kernel
	// handles 32 columns per step, so rows are zero-padded to it.
	quantCols = 32
	// quantMinRows is the index size below which the flat float32 scan is
	// used: the two passes do not pay off on small indexes.
	quantMinRows = 2048
	// quantMaxQ caps the query's int16 magnitude.
	quantMaxQ = math.MaxInt16
)

// quantMatrix is the int8 copy of a Retriever's matrix: row r is
// codes[r*stride:(r+1)*stride], the first dim of them holding
// round(x_j/scale[r]) in [-127, 127] and the rest zero, where scale[r] is
// the row's largest |x_j| / 127. l1[r] is the row's L1 norm Σ|x_j|.
type quantMatrix struct {
	stride int
	codes  []int8
	scale  []float32
	l1     []float32
}

// quantize builds the int8 copy of the n×dim matrix vecs.
func quantize(vecs []float32, n, dim int) *quantMatrix {
	stride := (dim + quantCols - 1) / quantCols * quantCols
	qm := &quantMatrix{
		stride: stride,
		codes:  make([]int8, n*stride),
		scale:  make([]float32, n),
		l1:     make([]float32, n),
	}
	for r := range n {
		qm.l1[r], qm.scale[r] = quantizeRow(vecs[r*dim:(r+1)*dim], qm.codes[r*stride:r*stride+dim])
	}
	return qm
}

// quantizeRow sets codes, as long as row, to row's int8 codes and returns
// the row's L1 norm and scale (a zero row: scale 0, codes all zero).
func quantizeRow(row []float32, codes []int8) (l1, scale float32) {
	var maxAbs, sum float64
	for _, x := range row {
		a := math.Abs(float64(x))
		maxAbs = max(maxAbs, a)
		sum += a
	}
	if maxAbs == 0 {
		clear(codes)
		return float32(sum), 0
	}
	s := float32(maxAbs / 127)
	for j, x := range row {
		codes[j] = int8(max(-127, min(127, math.Round(float64(x/s)))))
	}
	return float32(sum), s
}

// quantQuery is a query quantised for the int8 scan: codes (padded to the
// stride) times scale approximate the query; l1 is the query's L1 norm.
type quantQuery struct {
	codes []int16
	scale float64
	l1    float64
}

// quantizeQuery scales q to int16s so large that the rounding error is
// negligible, and small enough that no int32 sum of the kernel overflows:
// |code| ≤ min(32767, (2³¹−1) / (127·stride)).
func quantizeQuery(q []float32, stride int) quantQuery {
	limit := min(quantMaxQ, (math.MaxInt32)/(127*stride))
	var maxAbs, l1 float64
	for _, x := range q {
		a := math.Abs(float64(x))
		maxAbs = max(maxAbs, a)
		l1 += a
	}
	qq := quantQuery{codes: make([]int16, stride), l1: l1}
	if maxAbs == 0 {
		return qq
	}
	qq.scale = maxAbs / float64(limit)
	for j, x := range q {
		qq.codes[j] = int16(max(-float64(limit), min(float64(limit), math.Round(float64(x)/qq.scale))))
	}
	return qq
}

// scanScratch is scanQuant's per-query working memory, pooled in the
// Retriever: the bound of every row and the kernel's output for a block.
type scanScratch struct {
	upper []float32
	ints  []int32
}

// dotsInt8Generic is the portable dotsInt8. The sums are exact integers
// (quantizeQuery's limit rules out overflow), so it agrees with the AVX2
// kernel bit for bit.
func dotsInt8Generic(q []int16, m []int8, stride int, out []int32) {
	q = q[:stride:stride]
	for r := range out {
		row := m[r*stride : (r+1)*stride : (r+1)*stride]
		var s0, s1, s2, s3 int32
		for j := 0; j+4 <= stride; j += 4 {
			qq := q[j : j+4 : j+4]
			rr := row[j : j+4 : j+4]
			s0 += int32(qq[0]) * int32(rr[0])
			s1 += int32(qq[1]) * int32(rr[1])
			s2 += int32(qq[2]) * int32(rr[2])
			s3 += int32(qq[3]) * int32(rr[3])
		}
		out[r] = (s0 + s1) + (s2 + s3)
	}
}

// scanQuant finds the same top k as the flat float32 scan (the same rows,
// scores and order: scores are computed by the same dot), reading the
// int8 matrix instead of the float32 one for all but a few rows.
//
// Pass 1 computes every row's approximate score a_r = Σ q̂_j·x̂_j from the
// int8 codes, keeps the k best by a_r, and records an upper bound of the
// row's exact score: with x_j = x̂_j + e_j, |e_j| ≤ scale_r/2, and
// q_j = q̂_j + f_j, |f_j| ≤ qscale/2,
//
//	|Σ q_j x_j − a_r| ≤ scale_r/2 · ‖q‖₁ + qscale/2 · (‖x_r‖₁ + dim·scale_r/2).
//
// Those k rows are re-scored in float32, which gives a threshold T (the
// k-th best exact score so far). Pass 2 re-scores in float32 every other
// row whose bound reaches T − slack (slack covers the float32 rounding of
// the dot products), raising T as it goes. A row left out has an exact
// score below T, so it cannot be in the top k: the result is exact, not
// approximate.
func (r *Retriever) scanQuant(ctx context.Context, q []float32, k int) ([]cand, int, error) {
	d, n, qm := r.dim, len(r.ids), r.quant
	qq := quantizeQuery(q, qm.stride)
	slack := float32(4*float64(d)*0x1p-24 + 1e-6)

	// The bound is s_r·boundS + l1_r·boundL1 (see above), computed in
	// float32 like the approximate score: their rounding (relative 2⁻²⁴
	// of values below 2) is far inside slack.
	qscale := float32(qq.scale)
	boundS := float32(qq.l1/2 + qq.scale*float64(d)/4)
	boundL1 := float32(qq.scale / 2)
	buf := r.scratch.Get()
	sc, _ := buf.(*scanScratch)
	if sc == nil {
		sc = &scanScratch{upper: make([]float32, n), ints: make([]int32, scanBlock)}
	}
	defer r.scratch.Put(sc)
	upper, ints := sc.upper, sc.ints
	approx := topk.New[cand](k)
	for start := 0; start < n; start += scanBlock {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		end := min(start+scanBlock, n)
		out := ints[:end-start]
		dotsInt8(qq.codes, qm.codes[start*qm.stride:end*qm.stride], qm.stride, out)
		scales, l1s, ups := qm.scale[start:end], qm.l1[start:end], upper[start:end]
		for i, v := range out {
			s := scales[i]
			a := float32(v) * s * qscale
			ups[i] = a + s*boundS + l1s[i]*boundL1
			c := cand{a, int32(start + i)}
			if !approx.Full() || approx.Min().Worse(c) {
				approx.Push(c)
			}
		}
	}

	// Re-score pass 1's best exactly; then every row whose bound reaches
	// the k-th best exact score.
	h := topk.New[cand](k)
	push := func(row int) {
		h.Push(cand{dot(q, r.vecs[row*d:(row+1)*d:(row+1)*d]), int32(row)})
	}
	for _, c := range approx.Items() {
		push(int(c.row))
		upper[c.row] = float32(math.Inf(-1))
	}
	rescored := approx.Len()
	for start := 0; start < n; start += scanBlock {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		end := min(start+scanBlock, n)
		for row, u := range upper[start:end] {
			if h.Full() && u < h.Min().score-slack {
				continue
			}
			if math.IsInf(float64(u), -1) {
				continue
			}
			push(start + row)
			rescored++
		}
	}
	return h.Sorted(), rescored, nil
}
