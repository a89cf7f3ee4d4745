package eval_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/eval"
)

func TestLoadJSONLQueries(t *testing.T) {
	qs, err := eval.LoadJSONLQueries(filepath.Join("testdata", "jsonl", "ok.jsonl"))
	require.NoError(t, err)
	assert.Equal(t, []eval.Query{
		{ID: "q1", Text: "BM25 remains a strong baseline [CITATION].", Relevant: []string{"robertson2009", "10.1145/1111111.1111111"}},
		{ID: "q2", Text: "Dense retrievers learn embeddings.", Relevant: []string{"karpukhin2020"}},
	}, qs)
}

func TestLoadJSONLQueriesBad(t *testing.T) {
	path := filepath.Join("testdata", "jsonl", "bad.jsonl")
	_, err := eval.LoadJSONLQueries(path)
	require.Error(t, err)
	// every bad line is reported, the good ones (1 with a BOM, 7) are not
	want := []string{
		path + `:2: missing or empty "relevant"`,
		path + `:3: invalid character`,
		path + `:4: json: cannot unmarshal number`,
		path + `:5: duplicate id "q1" (first on line 1)`,
		path + `:6: missing or empty "id"`,
		path + `:8: missing or empty "text"`,
	}
	lines := strings.Split(err.Error(), "\n")
	require.Len(t, lines, len(want), err.Error())
	for i, w := range want {
		assert.True(t, strings.HasPrefix(lines[i], w), "line %d: got %q, want prefix %q", i, lines[i], w)
	}
}

func TestLoadJSONLQueriesEmpty(t *testing.T) {
	path := filepath.Join(t.TempDir(), "empty.jsonl")
	require.NoError(t, os.WriteFile(path, []byte("\n\n"), 0o644))
	_, err := eval.LoadJSONLQueries(path)
	require.ErrorIs(t, err, eval.ErrEmptyBenchmark)

	_, err = eval.LoadJSONLQueries(filepath.Join(t.TempDir(), "missing.jsonl"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestLoadJSONLQueriesCutLine(t *testing.T) {
	// CRLF endings; line 2 is cut inside a string: it is reported with its
	// line, the line ending is not part of the JSON, and line 3 is still read
	path := filepath.Join(t.TempDir(), "cut.jsonl")
	data := "\ufeff{\"id\":\"q1\",\"text\":\"a\",\"relevant\":[\"x\"]}\r\n" +
		"{\"id\":\"q2\",\"text\":\"cut\r\n" +
		"{\"id\":\"q1\",\"text\":\"b\",\"relevant\":[\"y\"]}"
	require.NoError(t, os.WriteFile(path, []byte(data), 0o644))
	_, err := eval.LoadJSONLQueries(path)
	require.Error(t, err)
	assert.Equal(t, path+":2: unexpected end of JSON input\n"+
		path+`:3: duplicate id "q1" (first on line 1)`, err.Error())
}
