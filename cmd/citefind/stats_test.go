package main

import (
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/cite"
)

// TestStatsEndToEnd indexes the sample corpus, saves two searches with
// `query --json`, resolves a draft citing some of their hits and one paper
// neither returned, and checks `stats --json` against numbers worked out
// by hand from the two hit lists.
func TestStatsEndToEnd(t *testing.T) {
	db := t.TempDir()
	dir := t.TempDir()
	_, _, err := cli(t, "", "index", "--db", db, "--quiet", samplePath(t))
	require.NoError(t, err)

	out, _, err := cli(t, "", "stats", "--db", db)
	require.NoError(t, err, "an empty usage record is not an error")
	assert.Contains(t, out, "No citation usage recorded")

	search := func(name, q string, want []string) string {
		t.Helper()
		out, _, err := cli(t, "", "query", "--db", db, "-k", "5", "--json", q)
		require.NoError(t, err)
		var r struct {
			Hits []struct {
				ID string `json:"id"`
			} `json:"hits"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &r))
		var ids []string
		for _, h := range r.Hits {
			ids = append(ids, h.ID)
		}
		require.Equal(t, want, ids, "the sample ranking changed: redo the hand-computed numbers below")
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(out), 0o644))
		return p
	}
	// A: rrf, bm25, monobert, contriever, beir.
	a := search("a.json", "reciprocal rank fusion of BM25 and dense rankings", []string{
		"10.1145/1571941.1572114", "10.1561/1500000019", "arxiv:1901.04085", "arxiv:2112.09118", "arxiv:2104.08663"})
	// B: dpr, monobert, rag, colbert, contriever.
	b := search("b.json", "dense passage retrieval with BERT encoders for question answering", []string{
		"arxiv:2004.04906", "arxiv:1901.04085", "arxiv:2005.11401", "arxiv:2004.12832", "arxiv:2112.09118"})

	// Cites rrf, bm25 (A), dpr, colbert (B), monobert (both) and the
	// Transformer paper, which neither search returned.
	draft := filepath.Join(dir, "draft.md")
	text := "We fuse rankings with RRF [[cite:cormack2009rrf]] over BM25 [[cite:robertson2009bm25]].\n" +
		"Dense retrieval [[cite:karpukhin2020dpr]] and late interaction [[cite:khattab2020colbert]]\n" +
		"are reranked with BERT [[cite:nogueira2019monobert]], a Transformer [[cite:vaswani2017attention]].\n"
	require.NoError(t, os.WriteFile(draft, []byte(text), 0o644))

	stats := func() cite.UsageStats {
		t.Helper()
		out, _, err := cli(t, "", "stats", "--db", db, "--json")
		require.NoError(t, err)
		var st cite.UsageStats
		require.NoError(t, json.Unmarshal([]byte(out), &st))
		for i := range st.Drafts {
			st.Drafts[i].ResolvedAt = ""
		}
		return st
	}
	_, stderr, err := cli(t, "", "cite", "--db", db, "--session", a, "--session", b, draft)
	require.NoError(t, err)
	assert.Contains(t, stderr, "arxiv:1706.03762: not among the session's search candidates")
	st := stats()

	// By hand: A has 3 of its 5 hits cited (rrf, bm25, monobert), B 3 of 5
	// (dpr, monobert, colbert): 6 of 10, 0.6. Six papers cited, five of them
	// retrieved; eight distinct papers retrieved.
	assert.Equal(t, cite.UsageTotals{
		Drafts: 1, Searches: 2, Hits: 10, CitedHits: 6, Rate: 0.6,
		Citations: 6, Retrieved: 5, PapersCited: 6, PapersRetrieved: 8,
	}, st.Totals)
	require.Len(t, st.Searches, 2)
	for _, s := range st.Searches {
		assert.Equal(t, 5, s.Hits)
		assert.Equal(t, 3, s.Cited)
		assert.InDelta(t, 0.6, s.Rate, 1e-9)
		assert.Equal(t, 1, s.Drafts)
	}
	perPaper := map[string][2]int{}
	for _, p := range st.Papers {
		perPaper[p.ID] = [2]int{p.Cited, p.Retrieved}
	}
	assert.Equal(t, map[string][2]int{
		"10.1145/1571941.1572114": {1, 1}, "10.1561/1500000019": {1, 1}, "arxiv:1901.04085": {1, 2},
		"arxiv:2004.04906": {1, 1}, "arxiv:2004.12832": {1, 1}, "arxiv:1706.03762": {1, 0},
		"arxiv:2112.09118": {0, 2}, "arxiv:2005.11401": {0, 1}, "arxiv:2104.08663": {0, 1},
	}, perPaper)
	assert.Equal(t, "arxiv:1901.04085", st.Papers[0].ID, "most cited, then most retrieved")
	require.NotNil(t, st.Papers[0].PerRetrieval)
	assert.InDelta(t, 0.5, *st.Papers[0].PerRetrieval, 1e-9)
	var never []string
	for _, p := range st.NeverCited {
		never = append(never, p.ID)
	}
	assert.Equal(t, []string{"arxiv:2112.09118", "arxiv:2005.11401", "arxiv:2104.08663"}, never)
	require.Len(t, st.NotRetrieved, 1)
	assert.Equal(t, "arxiv:1706.03762", st.NotRetrieved[0].ID)
	assert.Equal(t, "Attention is all you need", st.NotRetrieved[0].Title)

	// Resolving the same draft again, or with --no-track, counts nothing new.
	_, _, err = cli(t, "", "cite", "--db", db, "--session", a, "--session", b, draft)
	require.NoError(t, err)
	assert.Equal(t, st, stats(), "resolving the same draft twice")
	other := filepath.Join(dir, "other.md")
	require.NoError(t, os.WriteFile(other, []byte("[[cite:lewis2020rag]]\n"), 0o644))
	_, _, err = cli(t, "", "cite", "--db", db, "--no-track", "--session", b, other)
	require.NoError(t, err)
	assert.Equal(t, st, stats(), "--no-track")

	// The table.
	out, _, err = cli(t, "", "stats", "--db", db)
	require.NoError(t, err)
	assert.Contains(t, out, "1 draft, 2 searches, 6 citations of 6 papers")
	assert.Contains(t, out, "citation rate: 6 of 10 hits cited (60.0 %)")
	assert.Contains(t, out, "Retrieved, never cited")
	assert.Contains(t, out, "Attention is all you need")

	// An edited draft replaces its record: now it cites rrf only, behind A.
	require.NoError(t, os.WriteFile(draft, []byte("RRF [[cite:cormack2009rrf]].\n"), 0o644))
	_, _, err = cli(t, "", "cite", "--db", db, "--session", a, draft)
	require.NoError(t, err)
	st = stats()
	assert.Equal(t, cite.UsageTotals{
		Drafts: 1, Searches: 1, Hits: 5, CitedHits: 1, Rate: 0.2,
		Citations: 1, Retrieved: 1, PapersCited: 1, PapersRetrieved: 5,
	}, st.Totals)
	assert.Empty(t, st.NotRetrieved)

	// A draft from standard input is keyed by its content: its resolved
	// output, resolved again, is the same draft.
	resolved, _, err := cli(t, "Okapi [[cite:robertson2009bm25]].\n", "cite", "--db", db, "--session", a, "-")
	require.NoError(t, err)
	_, _, err = cli(t, resolved, "cite", "--db", db, "--session", a, "-")
	require.NoError(t, err)
	st = stats()
	assert.Equal(t, 2, st.Totals.Drafts)
	assert.Equal(t, 2, st.Totals.CitedHits, "A: rrf (draft.md) and bm25 (stdin)")
}

// TestCiteWarnsWhenUsageCannotBeRecorded: the document is still printed
// and cite succeeds.
func TestCiteWarnsWhenUsageCannotBeRecorded(t *testing.T) {
	db := t.TempDir()
	_, _, err := cli(t, "", "index", "--db", db, "--quiet", samplePath(t))
	require.NoError(t, err)
	sdb, err := sql.Open("sqlite", filepath.Join(db, "papers.sqlite"))
	require.NoError(t, err)
	_, err = sdb.Exec("DROP TABLE draft_citations")
	require.NoError(t, err)
	require.NoError(t, sdb.Close())

	out, stderr, err := cli(t, "RRF [[cite:cormack2009rrf]].\n", "cite", "--db", db, "-")
	require.NoError(t, err)
	assert.Contains(t, out, "Cormack")
	assert.Contains(t, stderr, "warning: usage not recorded")
}

func TestStatsUsage(t *testing.T) {
	_, _, err := cli(t, "", "stats", "--db", t.TempDir())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no paper store")
	_, _, err = cli(t, "", "stats", "extra")
	var xe *exitError
	require.ErrorAs(t, err, &xe)
	assert.Equal(t, 2, xe.code)
}
