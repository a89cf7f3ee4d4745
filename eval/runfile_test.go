package eval_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/eval"
)

func TestRunFileRoundTrip(t *testing.T) {
	res := testResults()
	res[0].PerQuery[0].Ranks = []int{1, 2}
	res[0].PerQuery[0].Metrics = eval.Metrics{eval.Recall10: 1}
	res[0].PerQuery[0].Latency = 1500 * time.Microsecond
	res[0].MatchedBy = map[string]int{"title": 2}
	rf := &eval.RunFile{Label: "tuned", Created: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), Version: "v1",
		Command: []string{"citefind", "eval", "--bench", "acm-cr"}, Settings: map[string]string{"bm25-k1": "2"}, Results: res}
	var b bytes.Buffer
	require.NoError(t, eval.WriteRunFile(&b, rf))
	path := filepath.Join(t.TempDir(), "run.json")
	require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
	got, err := eval.ReadRunFile(path)
	require.NoError(t, err)
	assert.Equal(t, rf.Label, got.Label)
	assert.Equal(t, rf.Created, got.Created)
	assert.Equal(t, rf.Settings, got.Settings)
	assert.Equal(t, rf.Command, got.Command)
	require.Len(t, got.Results, 3)
	g := got.Results[0]
	assert.Equal(t, res[0].Metrics, g.Metrics)
	assert.Equal(t, res[0].LatencyP50, g.LatencyP50)
	assert.Equal(t, res[0].Missing, g.Missing)
	assert.Equal(t, res[0].Relevant, g.Relevant)
	assert.Equal(t, res[0].MatchedBy, g.MatchedBy)
	assert.Equal(t, res[0].PerQuery[0].Hits, g.PerQuery[0].Hits, "ids and scores")
	assert.Equal(t, []int{1, 2}, g.PerQuery[0].Ranks)
	assert.Equal(t, 1500*time.Microsecond, g.PerQuery[0].Latency)
	assert.Equal(t, "boom", g.PerQuery[1].Err)

	// Not a run file.
	bad := filepath.Join(t.TempDir(), "x.run")
	require.NoError(t, os.WriteFile(bad, []byte("q1 Q0 d1 1 2.5 tag\n"), 0o644))
	_, err = eval.ReadRunFile(bad)
	require.ErrorIs(t, err, eval.ErrNotRunFile)
	other := filepath.Join(t.TempDir(), "other.json")
	require.NoError(t, os.WriteFile(other, []byte(`{"format": "something/2"}`), 0o644))
	_, err = eval.ReadRunFile(other)
	require.ErrorIs(t, err, eval.ErrNotRunFile)
}

func TestReadTRECRun(t *testing.T) {
	// WriteRun's own output reads back in the same order.
	var b bytes.Buffer
	require.NoError(t, eval.WriteRun(&b, testResults()[0], "citefind-bm25"))
	path := filepath.Join(t.TempDir(), "a.run")
	require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
	got, tag, err := eval.ReadTRECRun(path)
	require.NoError(t, err)
	assert.Equal(t, "citefind-bm25", tag)
	assert.Equal(t, []corpus.Hit{{ID: "10.1145/a.1", Score: 12.5}, {ID: "h:3f2a9c01b2de", Score: 7.25}, {ID: "arxiv:1706.03762", Score: 1e-7}}, got["340982510"])

	// Lines out of order are sorted by score, ties by rank; a repeated
	// docid keeps its first line.
	require.NoError(t, os.WriteFile(path, []byte("q 0 c 3 1 t\nq 0 a 1 5 t\n\nq 0 b 2 1 t\nq 0 a 9 0.5 t\n"), 0o644))
	got, _, err = eval.ReadTRECRun(path)
	require.NoError(t, err)
	assert.Equal(t, []corpus.Hit{{ID: "a", Score: 5}, {ID: "b", Score: 1}, {ID: "c", Score: 1}}, got["q"])

	require.NoError(t, os.WriteFile(path, []byte("q 0 c x 1 t\nq 0 c\n"), 0o644))
	_, _, err = eval.ReadTRECRun(path)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "a.run:1:")
	assert.Contains(t, err.Error(), "a.run:2:")
}
