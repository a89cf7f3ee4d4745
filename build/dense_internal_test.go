package build

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/citefind/citefind/db"
)

// TestTrainedKindsAreInFolder: every embedder build trains is one the
// engine knows lives in the database folder, and the other way round.
func TestTrainedKindsAreInFolder(t *testing.T) {
	for spec, k := range trainedKinds {
		assert.True(t, db.TrainedInFolder(spec), spec)
		assert.Equal(t, spec, k.spec)
	}
	for _, spec := range []string{db.EmbedderBuiltin, db.EmbedderContrast} {
		assert.Contains(t, trainedKinds, spec)
	}
	assert.False(t, db.TrainedInFolder("ollama:nomic-embed-text"))
	assert.Contains(t, trainedKinds, db.DefaultEmbedder)
}
