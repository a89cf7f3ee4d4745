package editdist_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/citefind/citefind/internal/editdist"
)

func TestDistances(t *testing.T) {
	tests := []struct {
		a, b     string
		lev, osa int
	}{
		{"", "", 0, 0},
		{"", "apa", 3, 3},
		{"apa", "", 3, 3},
		{"apa", "apa", 0, 0},
		{"vancover", "vancouver", 1, 1},
		{"aap", "apa", 2, 1},
		{"ieee", "iee", 1, 1},
		{"chicgao", "chicago", 2, 1},
		{"ca", "abc", 3, 3}, // OSA edits no substring twice (true Damerau: 2)
		{"kitten", "sitting", 3, 3},
		{"naturé", "nature", 1, 1}, // runes, not bytes
		{"ab", "ba", 2, 1},
	}
	for _, tc := range tests {
		t.Run(tc.a+"→"+tc.b, func(t *testing.T) {
			assert.Equal(t, tc.lev, editdist.Levenshtein([]rune(tc.a), []rune(tc.b)), "Levenshtein")
			assert.Equal(t, tc.osa, editdist.OSA([]rune(tc.a), []rune(tc.b)), "OSA")
			assert.Equal(t, tc.lev, editdist.Levenshtein([]rune(tc.b), []rune(tc.a)), "Levenshtein is symmetric")
			assert.Equal(t, tc.osa, editdist.OSA([]rune(tc.b), []rune(tc.a)), "OSA is symmetric")
		})
	}
}
