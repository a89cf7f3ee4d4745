package eval_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/eval"
	"github.com/citefind/citefind/internal/datadir"
)

func TestLoadACMCRMini(t *testing.T) {
	dir := filepath.Join("testdata", "acm-cr-mini")
	a, err := eval.LoadACMCR(dir)
	require.NoError(t, err)

	assert.Equal(t, []string{
		filepath.Join(dir, "data", "acm-dl", "journals", "j.bib"),
		filepath.Join(dir, "data", "acm-dl", "x", "x-2020.bib"),
	}, a.BibFiles)
	// keys are lower-cased: DOIs are case-insensitive
	assert.Equal(t, map[string]bool{"10.1145/7777777.7777777": true, "10.1145/8888888.8888888": true, "10.1145/abc.def": true}, a.Blacklist)
	require.Len(t, a.Sets, 2)

	ctx := a.Sets[0]
	assert.Equal(t, eval.SetContexts, ctx.Name)
	assert.Equal(t, []eval.Query{
		{ID: "100000001", Text: "BM25 remains a strong baseline [1, 2].",
			Relevant: []string{"10.1145/1111111.1111111", "10.5555/AAA.2222"}, Group: "A Citing Paper"},
		// duplicate topic id: both occurrences kept, the second renamed,
		// both judged by the merged qrels (repeated line and rel 0 dropped)
		{ID: "100000002", Text: "Dense retrievers [3] learn embeddings.",
			Relevant: []string{"10.1145/3333333.3333333", "10.1145/4444444.4444444"}, Group: "A Citing Paper"},
		{ID: "100000002#2", Text: "A second context that reuses the id of the one before [3, 4].",
			Relevant: []string{"10.1145/3333333.3333333", "10.1145/4444444.4444444"}, Group: "A Citing Paper"},
	}, ctx.Queries)
	assert.Equal(t, []string{"100000003"}, ctx.Unjudged)
	assert.Equal(t, []string{"100000009"}, ctx.Orphans)

	sen := a.Sets[1]
	assert.Equal(t, eval.SetSentences, sen.Name)
	require.Len(t, sen.Queries, 2)
	// last qrels line without final newline is read
	assert.Equal(t, []string{"10.1145/3333333.3333333"}, sen.Queries[1].Relevant)
	// a description over two lines is joined with one space
	assert.Equal(t, "Dense retrievers [3] learn embeddings over two lines.", sen.Queries[1].Text)
	assert.Empty(t, sen.Unjudged)
	assert.Empty(t, sen.Orphans)
}

func TestLoadACMCROneSet(t *testing.T) {
	a, err := eval.LoadACMCR(filepath.Join("testdata", "acm-cr-mini"), eval.SetSentences)
	require.NoError(t, err)
	require.Len(t, a.Sets, 1)
	assert.Equal(t, eval.SetSentences, a.Sets[0].Name)

	_, err = eval.LoadACMCR(filepath.Join("testdata", "acm-cr-mini"), "paragraphs")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"paragraphs"`)
}

func TestLoadACMCRMalformed(t *testing.T) {
	dir := filepath.Join("testdata", "acm-cr-bad")
	tq := filepath.Join(dir, "data", "topics+qrels")

	_, err := eval.LoadACMCR(dir, eval.SetContexts)
	require.Error(t, err)
	msg := err.Error()
	qrels := filepath.Join(tq, "contexts.qrels")
	assert.Contains(t, msg, qrels+`:2: want 4 fields "topic iteration docid relevance", got 3`)
	assert.Contains(t, msg, qrels+`:3: relevance "yes" is not an integer`)

	_, err = eval.LoadACMCR(dir, eval.SetSentences)
	require.Error(t, err)
	msg = err.Error()
	topics := filepath.Join(tq, "sentences.topics")
	assert.Contains(t, msg, topics+":10: <top> inside the topic opened at line 1 (missing </top>)")
	assert.Contains(t, msg, topics+":10: topic 1000001: empty <desc>")
	assert.Contains(t, msg, topics+":16: </top> without <top>")
}

func TestLoadACMCRMissing(t *testing.T) {
	_, err := eval.LoadACMCR(filepath.Join(t.TempDir(), "nope"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestKeep(t *testing.T) {
	a, err := eval.LoadACMCR(filepath.Join("testdata", "acm-cr-mini"), eval.SetContexts)
	require.NoError(t, err)
	rec := func(kind, key, title, abstract string) corpus.Record {
		return corpus.Record{Kind: kind, Key: key, Paper: corpus.Paper{Title: title, Abstract: abstract}}
	}
	tests := []struct {
		name   string
		rec    corpus.Record
		keep   bool
		reason string
	}{
		{"inproceedings", rec("inproceedings", "10.1145/1.2", "BM25", ""), true, ""},
		{"article", rec("article", "10.1145/1.3", "BM25", "abs"), true, ""},
		{"Article (jasist)", rec("Article", "10.1002/x", "BM25", "abs"), true, ""},
		{"inbook", rec("inbook", "10.1145/1.4", "BM25", "abs"), false, `entry type "inbook"`},
		{"dataset", rec("dataset", "10.1145/1.5", "BM25", "abs"), false, `entry type "dataset"`},
		{"proceedings", rec("proceedings", "10.1145/1.6", "SIGIR '20", ""), false, `entry type "proceedings"`},
		{"session", rec("inproceedings", "10.1145/1.7", "Session details: Ranking", ""), false, "session record without abstract"},
		{"SESSION", rec("inproceedings", "10.1145/1.8", "SESSION: Ranking", ""), false, "session record without abstract"},
		{"session with abstract", rec("inproceedings", "10.1145/1.9", "Session-based recommendation", "abs"), true, ""},
		{"blacklisted", rec("inproceedings", "10.1145/8888888.8888888", "A Citing Paper", "abs"), false, "blacklisted (citing paper)"},
		{"blacklisted upper case", rec("inproceedings", "10.1145/abc.DEF", "X", "abs"), false, "blacklisted (citing paper)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			keep, reason := a.Keep(tc.rec)
			assert.Equal(t, tc.keep, keep)
			assert.Equal(t, tc.reason, reason)
		})
	}
}

// TestLoadACMCRReal checks the loader against the counts of
// ../shared/data/README.md, section 1.
func TestLoadACMCRReal(t *testing.T) {
	dir := datadir.Bench("acm-cr")
	if _, err := os.Stat(filepath.Join(dir, "data", "topics+qrels")); err != nil {
		t.Skipf("ACM-CR data not found at %s (set %s to the data folder): %v", dir, datadir.Env, err)
	}
	a, err := eval.LoadACMCR(dir)
	require.NoError(t, err)

	assert.Len(t, a.BibFiles, 903, ".bib files (upstream 905; tkde and pvldb missing)")
	assert.Len(t, a.Blacklist, 50)
	require.Len(t, a.Sets, 2)

	tests := []struct {
		set                  string
		topics, distinct     int
		qrelsLines, distDOIs int
	}{
		{eval.SetContexts, 269, 268, 900, 537},
		{eval.SetSentences, 552, 552, 978, 537},
	}
	for i, tc := range tests {
		t.Run(tc.set, func(t *testing.T) {
			set := a.Sets[i]
			assert.Equal(t, tc.set, set.Name)
			assert.Len(t, set.Queries, tc.topics)
			assert.Empty(t, set.Unjudged, "topics without qrels")
			assert.Empty(t, set.Orphans, "qrels without topic")
			base := map[string]bool{}
			dois := map[string]bool{}
			lines := 0
			for _, q := range set.Queries {
				id, _, dup := strings.Cut(q.ID, "#")
				if dup {
					continue // same qrels as the bare id
				}
				base[id] = true
				lines += len(q.Relevant)
				for _, d := range q.Relevant {
					dois[d] = true
				}
				assert.NotContains(t, q.Text, "Description:")
			}
			assert.Len(t, base, tc.distinct, "distinct topic ids")
			assert.Equal(t, tc.qrelsLines, lines, "qrels lines")
			assert.Len(t, dois, tc.distDOIs, "distinct judged DOIs")
		})
	}
	var dup []eval.Query
	for _, q := range a.Sets[0].Queries {
		if strings.HasPrefix(q.ID, "340982510") {
			dup = append(dup, q)
		}
	}
	require.Len(t, dup, 2)
	assert.Equal(t, "340982510", dup[0].ID)
	assert.Equal(t, "340982510#2", dup[1].ID)
	assert.NotEqual(t, dup[0].Text, dup[1].Text)
	assert.Len(t, dup[0].Relevant, 3, "merged qrels of 340982510")
	assert.Equal(t, dup[0].Relevant, dup[1].Relevant)
}
