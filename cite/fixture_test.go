package cite_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/corpus"
)

// loadFixture reads testdata/styles/items.json: 68 synthetic CSL-JSON items.
func loadFixture(t *testing.T) []corpus.Paper {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "styles", "items.json"))
	require.NoError(t, err)
	var ps []corpus.Paper
	require.NoError(t, json.Unmarshal(b, &ps))
	require.GreaterOrEqual(t, len(ps), 60)
	return ps
}
