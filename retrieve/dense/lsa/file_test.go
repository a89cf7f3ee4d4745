package lsa_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/retrieve/dense/lsa"
)

// TestFileFormat pins the version 1 file format: testdata/v1.model was
// written by an earlier build, and must load, keep its identity and be
// written back byte for byte.
func TestFileFormat(t *testing.T) {
	const (
		path = "testdata/v1.model"
		id   = "lsa-2@d0d872d8d9a0"
	)
	old, err := os.ReadFile(path)
	require.NoError(t, err)
	m, err := lsa.Load(bytes.NewReader(old))
	require.NoError(t, err)
	assert.Equal(t, id, m.Model())
	assert.Equal(t, 2, m.Dim())
	assert.Equal(t, lsa.FoldInverseSqrt, m.Fold())
	got, err := lsa.ModelID(path)
	require.NoError(t, err)
	assert.Equal(t, id, got)
	var again bytes.Buffer
	require.NoError(t, m.Save(&again))
	assert.Equal(t, old, again.Bytes(), "the same bytes written back")
}
