package contrast_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/retrieve/dense/contrast"
)

// TestFileFormat pins the version 1 file format: testdata/v1.model was
// written by an earlier build, and must load, keep its identity and be
// written back byte for byte.
func TestFileFormat(t *testing.T) {
	const (
		path = "testdata/v1.model"
		id   = "contrast-4@3d0d607931fe"
	)
	m, err := contrast.LoadFile(path, "uni+bi8/4")
	require.NoError(t, err)
	assert.Equal(t, id, m.Model())
	got, err := contrast.ModelID(path)
	require.NoError(t, err)
	assert.Equal(t, id, got)

	old, err := os.ReadFile(path)
	require.NoError(t, err)
	var again bytes.Buffer
	require.NoError(t, m.Save(&again))
	assert.Equal(t, old, again.Bytes(), "the same bytes written back")
	saved := filepath.Join(t.TempDir(), "v1.model")
	require.NoError(t, contrast.SaveFile(saved, m))
	disk, err := os.ReadFile(saved)
	require.NoError(t, err)
	assert.Equal(t, old, disk, "SaveFile writes the same bytes")
}
