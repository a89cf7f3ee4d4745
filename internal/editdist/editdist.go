// Package editdist measures how far apart two strings are, in runes.
//
//	editdist.Levenshtein([]rune("vancover"), []rune("vancouver")) // 1
//	editdist.OSA([]rune("aap"), []rune("apa"))                   // 1: one transposition
package editdist

// Levenshtein is the edit distance of a and b: the fewest insertions,
// deletions and substitutions of one rune, each costing 1, that turn a
// into b. O(|a|·|b|) time, O(|b|) space.
func Levenshtein(a, b []rune) int {
	row := make([]int, len(b)+1)
	for j := range row {
		row[j] = j
	}
	for i := 1; i <= len(a); i++ {
		diag := row[0]
		row[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			next := min(row[j]+1, row[j-1]+1, diag+cost)
			diag = row[j]
			row[j] = next
		}
	}
	return row[len(b)]
}

// OSA is the optimal string alignment distance of a and b: Levenshtein's
// operations plus the swap of two adjacent runes, each costing 1, no
// substring edited twice. It is what a typing slip costs: "aap" is 1 from
// "apa" (Levenshtein 2). O(|a|·|b|) time, O(|b|) space.
func OSA(a, b []rune) int {
	// Three rows: the one two above (for transpositions), the one above,
	// and the current one.
	pp := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d = min(d, pp[j-2]+1)
			}
			cur[j] = d
		}
		pp, prev, cur = prev, cur, pp
	}
	return prev[len(b)]
}
