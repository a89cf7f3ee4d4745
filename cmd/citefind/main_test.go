package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/cite/csl"
)

// cli runs citefind in-process and returns stdout, stderr and the error.
func cli(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(t.Context(), args, env{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb, styles: testStyles()})
	return out.String(), errb.String(), err
}

// testStyles is the citeproc-js engine set the tests' cite runs share.
var testStyles = sync.OnceValue(func() *csl.Engine { return csl.New(csl.Options{}) })

func samplePath(t *testing.T) string {
	p, err := filepath.Abs(filepath.Join("..", "..", "sample", "papers.bib"))
	require.NoError(t, err)
	return p
}

func TestSampleCorpusEndToEnd(t *testing.T) {
	db := t.TempDir()
	out, _, err := cli(t, "", "index", "--db", db, "--quiet", samplePath(t))
	require.NoError(t, err)
	assert.Contains(t, out, "records read:      30")
	assert.Contains(t, out, "papers stored:     30 new, 30 in the store")
	assert.Contains(t, out, "skipped (errors):  0")
	assert.Contains(t, out, "bm25 index:        rebuilt (no index yet), 30 papers")

	// Again: nothing to do.
	out, _, err = cli(t, "", "index", "--db", db, "--quiet", samplePath(t))
	require.NoError(t, err)
	assert.Contains(t, out, "files read:        0 (1 unchanged and skipped")
	assert.Contains(t, out, "bm25 index:        up to date")

	out, _, err = cli(t, "", "query", "--db", db, "-k", "3",
		"We merge the BM25 and dense rankings with reciprocal rank fusion [CITATION], which needs no score calibration.")
	require.NoError(t, err)
	assert.Contains(t, out, " 1. Reciprocal rank fusion outperforms Condorcet and individual rank learning methods (2009)")
	assert.Contains(t, out, "id 10.1145/1571941.1572114")
	assert.Contains(t, out, "Gordon V. Cormack, Charles L. A. Clarke, Stefan Büttcher")

	// JSON, text from standard input, flags after the text.
	out, _, err = cli(t, "Dense passage retrieval [12] for open-domain question answering.\n",
		"query", "-", "--db", db, "--json", "-k", "2", "--pick")
	require.NoError(t, err)
	var res struct {
		Query   string `json:"query"`
		Cleaned string `json:"cleaned"`
		Hits    []struct {
			ID      string   `json:"id"`
			Title   string   `json:"title"`
			Year    int      `json:"year"`
			Authors []string `json:"authors"`
			Rank    int      `json:"rank"`
			Score   float64  `json:"score"`
			Sources map[string]struct {
				Rank  int     `json:"rank"`
				Score float64 `json:"score"`
			} `json:"sources"`
		} `json:"hits"`
		Picked *struct {
			ID       string `json:"id"`
			Fallback bool   `json:"fallback"`
		} `json:"picked"`
		Warnings []string `json:"warnings"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	require.Len(t, res.Hits, 2)
	assert.Equal(t, "arxiv:2004.04906", res.Hits[0].ID)
	assert.Equal(t, 2020, res.Hits[0].Year)
	assert.Equal(t, "Barlas Oğuz", res.Hits[0].Authors[1])
	assert.Equal(t, 1, res.Hits[0].Rank)
	assert.Equal(t, 1, res.Hits[0].Sources["bm25"].Rank)
	assert.Greater(t, res.Hits[0].Score, res.Hits[1].Score)
	assert.NotContains(t, res.Cleaned, "[12]")
	require.NotNil(t, res.Picked)
	assert.Equal(t, res.Hits[0].ID, res.Picked.ID)
	assert.True(t, res.Picked.Fallback)
	assert.NotEmpty(t, res.Warnings)
}

func TestIndexReportsBadRecordsAndKeepsTheRest(t *testing.T) {
	db := t.TempDir()
	dir := t.TempDir()
	bib := filepath.Join(dir, "refs.bib")
	require.NoError(t, os.WriteFile(bib, []byte(`@article{good1,
  title = {A Good Paper about Ranking},
  author = {Doe, Jane},
  year = {2020}
}

@article{broken,
  title = {Never Closed,
  year = {2021}

@article{good2,
  title = {Another Good Paper on Fusion},
  author = {Roe, Rick},
  year = 2019
}
`), 0o644))
	out, stderr, err := cli(t, "", "index", "--db", db, "--quiet", bib)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--keep-going")
	assert.Contains(t, stderr, bib+":7: syntax error: unterminated {value} of field \"title\"")
	assert.Contains(t, out, "records read:      2")
	assert.Contains(t, out, "skipped (errors):  1")

	out, _, err = cli(t, "", "query", "--db", db, "fusion")
	require.NoError(t, err)
	assert.Contains(t, out, "Another good paper on fusion", "titles come in sentence case, as CSL data holds them")

	_, _, err = cli(t, "", "index", "--db", db, "--quiet", "--keep-going", bib)
	require.NoError(t, err)
}

// The .bib files of one run share their @string macros; a macro defined
// in no file given makes its entry an error, with a hint.
func TestIndexSharedMacros(t *testing.T) {
	db := t.TempDir()
	dir := t.TempDir()
	refs := filepath.Join(dir, "refs.bib")
	abbrev := filepath.Join(dir, "abbrev.bib")
	require.NoError(t, os.WriteFile(refs, []byte("@article{a, title = {Sparse retrieval at scale}, journal = IEEE_J_PAMI, year = 2020}\n"), 0o644))
	require.NoError(t, os.WriteFile(abbrev, []byte("@STRING{IEEE_J_PAMI = \"{IEEE} Trans. Pattern Anal. Mach. Intell.\"}\n"), 0o644))

	out, stderr, err := cli(t, "", "index", "--db", db, "--quiet", refs)
	require.Error(t, err)
	assert.Contains(t, stderr, refs+`:1: undefined @string macro "ieee_j_pami" in field "journal"`)
	assert.Contains(t, out, "give that file in the same run")

	out, _, err = cli(t, "", "index", "--db", db, "--quiet", refs, abbrev)
	require.NoError(t, err)
	assert.Contains(t, out, "skipped (errors):  0")
	assert.NotContains(t, out, "give that file in the same run")
	out, _, err = cli(t, "", "query", "--db", db, "--json", "sparse retrieval")
	require.NoError(t, err)
	assert.Contains(t, out, "IEEE Trans. Pattern Anal. Mach. Intell.")

	// A second abbreviations file with another value: the last file's
	// value, a warning naming both, and a hint in the summary.
	full := filepath.Join(dir, "full.bib")
	require.NoError(t, os.WriteFile(full, []byte("@STRING{IEEE_J_PAMI = \"{IEEE} Transactions on Pattern Analysis and Machine Intelligence\"}\n"), 0o644))
	out, stderr, err = cli(t, "", "index", "--db", db, "--quiet", refs, abbrev, full)
	require.NoError(t, err, "a conflict is a warning")
	assert.Contains(t, stderr, refs+`:1: warning: @string macro defined differently by the .bib files read together: "ieee_j_pami": `+full+` has "{IEEE} Transactions on Pattern Analysis and Machine Intelligence", `+abbrev+` has "{IEEE} Trans. Pattern Anal. Mach. Intell."`)
	assert.Contains(t, out, "(1 entry uses a @string macro that the .bib files define differently, with the value of the file given last")
	out, _, err = cli(t, "", "query", "--db", db, "--json", "sparse retrieval")
	require.NoError(t, err)
	assert.Contains(t, out, "IEEE Transactions on Pattern Analysis and Machine Intelligence")

	// A file given twice is no conflict with itself.
	out, _, err = cli(t, "", "index", "--db", t.TempDir(), "--quiet", refs, abbrev, abbrev)
	require.NoError(t, err)
	assert.NotContains(t, out, "define differently")
}

// Entries that are no reference are skipped with a warning: the run
// succeeds without --keep-going.
func TestIndexSkipsNonReferences(t *testing.T) {
	db := t.TempDir()
	bib := filepath.Join(t.TempDir(), "refs.bib")
	require.NoError(t, os.WriteFile(bib, []byte("@set{both, entryset = {a,b}}\n@article{a, title = {Dense retrieval}, year = 2020}\n@IEEEtranBSTCTL{ctl, CTLuse_url = \"yes\"}\n"), 0o644))
	out, stderr, err := cli(t, "", "index", "--db", db, "--quiet", bib)
	require.NoError(t, err)
	assert.Contains(t, stderr, bib+":1: warning: not a reference: @set is a biblatex entry set")
	assert.Contains(t, stderr, bib+":3: warning: not a reference: @ieeetranbstctl")
	assert.Contains(t, out, "not references:    2 entries skipped")
	assert.Contains(t, out, "skipped (errors):  0")
	assert.NotContains(t, out, "  warnings:")
}

func TestUsageErrors(t *testing.T) {
	db := t.TempDir()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown command", []string{"frobnicate"}, "unknown command"},
		{"query without text", []string{"query", "--db", db}, "no TEXT"},
		{"bad k", []string{"query", "--db", db, "-k", "0", "x"}, "-k must be positive"},
		{"unknown reranker", []string{"query", "--db", db, "--rerank", "magic", "x"}, "unknown reranker"},
		{"eval without bench", []string{"eval"}, "--bench is required"},
		{"eval unknown bench", []string{"eval", "--bench", "nope"}, "unknown benchmark"},
		{"jsonl needs corpus", []string{"eval", "--bench", "jsonl"}, "--corpus"},
		{"bad field weights", []string{"query", "--db", db, "--field-weights", "text", "x"}, "FIELD=WEIGHT"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := cli(t, "", tc.args...)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			var xe *exitError
			require.ErrorAs(t, err, &xe)
			assert.Equal(t, 2, xe.code)
		})
	}
}

func TestQueryWithoutDatabase(t *testing.T) {
	_, _, err := cli(t, "", "query", "--db", filepath.Join(t.TempDir(), "none"), "anything")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "citefind index")
}

func TestUnknownExtension(t *testing.T) {
	f := filepath.Join(t.TempDir(), "refs.txt")
	require.NoError(t, os.WriteFile(f, []byte("hello"), 0o644))
	_, stderr, err := cli(t, "", "index", "--db", t.TempDir(), "--quiet", f)
	require.Error(t, err)
	assert.Contains(t, stderr, "refs.txt")
	assert.Contains(t, stderr, "unknown file format")
}

func TestHelp(t *testing.T) {
	for _, c := range []string{"index", "query", "eval"} {
		_, stderr, err := cli(t, "", c, "--help")
		require.ErrorIs(t, err, flag.ErrHelp)
		assert.Contains(t, stderr, "Usage: citefind "+c)
	}
	out, _, err := cli(t, "", "help")
	require.NoError(t, err)
	for _, c := range []string{"index", "query", "eval"} {
		assert.Contains(t, out, "  "+c)
	}
}

func TestEvalJSONLBenchmark(t *testing.T) {
	dir := t.TempDir()
	corpusFile := filepath.Join(dir, "papers.jsonl")
	queries := filepath.Join(dir, "queries.jsonl")
	require.NoError(t, os.WriteFile(corpusFile, []byte(
		`{"id":"p1","type":"article-journal","title":"Reciprocal rank fusion of retrieval runs","author":[{"family":"Cormack","given":"Gordon"}],"issued":{"date-parts":[[2009]]}}
{"id":"p2","type":"paper-conference","title":"Dense passage retrieval for question answering","author":[{"family":"Karpukhin","given":"Vladimir"}],"issued":{"date-parts":[[2020]]}}
{"id":"p3","type":"paper-conference","title":"Latent semantic indexing","author":[{"family":"Deerwester","given":"Scott"}],"issued":{"date-parts":[[1990]]}}
`), 0o644))
	require.NoError(t, os.WriteFile(queries, []byte(
		`{"id":"q1","text":"we fuse runs with reciprocal rank fusion [3]","relevant":["p1"]}
{"id":"q2","text":"passage retrieval with dense vectors","relevant":["p2","missing-paper"]}
`), 0o644))
	db := filepath.Join(dir, "db")
	out, _, err := cli(t, "", "eval", "--bench", "jsonl", "--corpus", corpusFile, "--queries", queries, "--db", db, "--quiet", "--json")
	require.NoError(t, err)
	var rep []map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	require.Len(t, rep, 1)
	m := rep[0]["metrics"].(map[string]any)
	// q1 finds p1 at rank 1 (recall 1); q2 finds p2 but the second relevant
	// paper is not in the collection (recall 1/2): mean 0.75.
	assert.InDelta(t, 0.75, m["recall@10"].(float64), 1e-9)
	assert.InDelta(t, 1.0, m["mrr@10"].(float64), 1e-9)
}

// TestQueryShowsUserKeys: hits carry the key the user's BibTeX gave the
// paper, in JSON and in the text output.
func TestQueryShowsUserKeys(t *testing.T) {
	db := t.TempDir()
	_, _, err := cli(t, "", "index", "--db", db, "--quiet", samplePath(t))
	require.NoError(t, err)
	out, _, err := cli(t, "", "query", "--db", db, "--json", "-k", "1", "reciprocal rank fusion [CITATION]")
	require.NoError(t, err)
	var res struct {
		Hits []struct {
			ID      string   `json:"id"`
			Key     string   `json:"key"`
			Aliases []string `json:"aliases"`
		} `json:"hits"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	require.Len(t, res.Hits, 1)
	assert.Equal(t, "10.1145/1571941.1572114", res.Hits[0].ID)
	assert.Equal(t, "cormack2009rrf", res.Hits[0].Key)
	assert.Equal(t, []string{"cormack2009rrf"}, res.Hits[0].Aliases)
	out, _, err = cli(t, "", "query", "--db", db, "-k", "1", "reciprocal rank fusion [CITATION]")
	require.NoError(t, err)
	assert.Contains(t, out, "id 10.1145/1571941.1572114   key cormack2009rrf")
}

// Bad input is reported, never silently accepted: a missing path is an
// error before the database is created, a folder without supported files
// a warning and a failure unless --keep-going, and a query on an empty
// database says so and how to index.
func TestIndexInputWarnings(t *testing.T) {
	db := filepath.Join(t.TempDir(), "db")
	missing := filepath.Join(t.TempDir(), "missing.bib")
	_, _, err := cli(t, "", "index", "--db", db, "--quiet", missing)
	require.Error(t, err)
	assert.Contains(t, err.Error(), missing)
	assert.NoDirExists(t, db, "nothing is created")

	empty := t.TempDir()
	_, stderr, err := cli(t, "", "index", "--db", db, "--quiet", empty)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--keep-going")
	assert.Contains(t, stderr, empty+": warning: no supported files in this folder")
	_, _, err = cli(t, "", "index", "--db", db, "--quiet", "--keep-going", empty)
	require.NoError(t, err)

	out, stderr, err := cli(t, "", "query", "--db", db, "rank fusion")
	require.NoError(t, err)
	assert.Contains(t, out, "no matching papers")
	assert.Contains(t, stderr, "holds no papers: index a bibliography first, e.g. citefind index --db "+db)

	bib := filepath.Join(t.TempDir(), "refs.bib")
	require.NoError(t, os.WriteFile(bib, []byte("@article{k, title={Caf\xe9 culture}, year={2020}}\n@article{k, title={Other paper}, year={2021}}\n"), 0o644))
	out, stderr, err = cli(t, "", "index", "--db", db, "--quiet", bib)
	require.NoError(t, err, "warnings do not fail the run")
	assert.Contains(t, stderr, bib+":1: warning: not UTF-8: read as Latin-1 (Windows-1252)")
	assert.Contains(t, stderr, bib+`:2: warning: duplicate key "k": it already names paper h:`)
	assert.Contains(t, stderr, "("+bib+":1)")
	assert.Contains(t, out, "warnings:          2")
}
