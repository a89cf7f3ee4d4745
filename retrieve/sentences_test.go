package retrieve_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/citefind/citefind/retrieve"
)

func TestSentences(t *testing.T) {
	text := `BM25 is strong [3]. Robertson et al. (2009) describe it, e.g. in Fig. 2 of J. Smith's survey. Is it the best? Dense retrievers [4, 5] learn embeddings ("DPR"). (See also [6].) 3 systems were tested.`
	assert.Equal(t, []string{
		"BM25 is strong [3].",
		"Robertson et al. (2009) describe it, e.g. in Fig. 2 of J. Smith's survey.",
		"Is it the best?",
		`Dense retrievers [4, 5] learn embeddings ("DPR").`,
		"(See also [6].)",
		"3 systems were tested.",
	}, retrieve.Sentences(text))
	assert.Equal(t, []string{
		"BM25 is strong.",
		"Robertson describe it, e.g. in Fig. 2 of J. Smith's survey.",
		`Dense retrievers learn embeddings ("DPR").`,
	}, retrieve.CitingSentences(text))
	assert.Nil(t, retrieve.Sentences("  "))
	assert.Equal(t, []string{"no end"}, retrieve.Sentences("no end"))
	assert.Nil(t, retrieve.CitingSentences("No markers here. None at all."))
}
