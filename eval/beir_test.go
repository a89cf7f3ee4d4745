package eval_test

import (
	"bytes"
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

func beirFixture(name string) string { return filepath.Join("testdata", "beir", name) }

func TestLoadBEIR(t *testing.T) {
	tests := []struct {
		name     string
		opts     eval.BEIROptions
		want     []eval.Query
		unjudged []string
		orphans  []string
		judged   int
	}{
		{
			name: "test split",
			want: []eval.Query{
				{ID: "q1", Text: "Rank fusion [CIT] needs no calibration.", Relevant: []string{"d1"}, Group: "P1"},
				{ID: "q2", Text: "BM25 is a strong baseline.", Relevant: []string{"d2"}, Group: "P1"},
				{ID: "q3", Text: "Dual encoders retrieve passages.", Relevant: []string{"3"}},
				{ID: "q6", Text: "Two relevant papers.", Relevant: []string{"d4", "d5"}},
			},
			unjudged: []string{"q4"},
			orphans:  []string{"q9"},
			judged:   4,
		},
		{
			name:   "train split",
			opts:   eval.BEIROptions{Split: "train"},
			want:   []eval.Query{{ID: "q5", Text: "A training query.", Relevant: []string{"d2"}}},
			judged: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := eval.LoadBEIR(beirFixture("tiny"), tc.opts)
			require.NoError(t, err)
			assert.Equal(t, "tiny", b.Name)
			assert.Equal(t, filepath.Join(beirFixture("tiny"), "corpus.jsonl"), b.CorpusPath)
			assert.Equal(t, tc.want, b.Set.Queries)
			assert.Equal(t, tc.unjudged, b.Set.Unjudged)
			assert.Equal(t, tc.orphans, b.Set.Orphans)
			assert.Equal(t, tc.judged, b.Judged)
			assert.Equal(t, b.Split, b.Set.Name)
		})
	}
}

func TestLoadBEIRSample(t *testing.T) {
	dir := beirFixture("tiny")
	all, err := eval.LoadBEIR(dir, eval.BEIROptions{})
	require.NoError(t, err)
	ids := func(qs []eval.Query) []string {
		var out []string
		for _, q := range qs {
			out = append(out, q.ID)
		}
		return out
	}
	pos := map[string]int{}
	for i, q := range all.Set.Queries {
		pos[q.ID] = i
	}
	for _, seed := range []uint64{0, 1, 7} {
		prev := []string{}
		for n := 1; n <= 4; n++ {
			b, err := eval.LoadBEIR(dir, eval.BEIROptions{Sample: n, Seed: seed})
			require.NoError(t, err)
			got := ids(b.Set.Queries)
			require.Len(t, got, n)
			assert.Equal(t, 4, b.Judged, "Judged counts before sampling")
			for i := 1; i < len(got); i++ {
				assert.Less(t, pos[got[i-1]], pos[got[i]], "sample keeps file order")
			}
			for _, id := range prev {
				assert.Contains(t, got, id, "seed %d: a larger sample holds the smaller one", seed)
			}
			again, err := eval.LoadBEIR(dir, eval.BEIROptions{Sample: n, Seed: seed})
			require.NoError(t, err)
			assert.Equal(t, got, ids(again.Set.Queries), "deterministic")
			prev = got
		}
	}
	// seed 0 is the default seed
	a, err := eval.LoadBEIR(dir, eval.BEIROptions{Sample: 2})
	require.NoError(t, err)
	b, err := eval.LoadBEIR(dir, eval.BEIROptions{Sample: 2, Seed: eval.DefaultBEIRSeed})
	require.NoError(t, err)
	assert.Equal(t, a.Set.Queries, b.Set.Queries)
	// a sample larger than the split keeps everything
	c, err := eval.LoadBEIR(dir, eval.BEIROptions{Sample: 100})
	require.NoError(t, err)
	assert.Equal(t, all.Set.Queries, c.Set.Queries)
}

func TestLoadBEIRErrors(t *testing.T) {
	bad := beirFixture("bad")
	tests := []struct {
		name   string
		dir    string
		opts   eval.BEIROptions
		is     error
		prefix []string // each line of the error starts with one of these, in order
	}{
		{name: "no judged query", dir: beirFixture("tiny"), opts: eval.BEIROptions{Split: "empty"}, is: eval.ErrEmptyBenchmark},
		{name: "missing split", dir: beirFixture("tiny"), opts: eval.BEIROptions{Split: "dev"}, is: os.ErrNotExist},
		{name: "split outside qrels", dir: beirFixture("tiny"), opts: eval.BEIROptions{Split: "../corpus"}, prefix: []string{`beir: bad split name "../corpus"`}},
		{name: "negative sample", dir: beirFixture("tiny"), opts: eval.BEIROptions{Sample: -1}, prefix: []string{"beir: negative sample size -1"}},
		{name: "bad qrels", dir: bad, prefix: []string{
			"beir: " + filepath.Join(bad, "qrels", "test.tsv") + `:3: want 3 fields "query-id corpus-id score", got 2`,
			filepath.Join(bad, "qrels", "test.tsv") + `:4: score "yes" is not an integer`,
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := eval.LoadBEIR(tc.dir, tc.opts)
			require.Error(t, err)
			if tc.is != nil {
				require.ErrorIs(t, err, tc.is)
			}
			if tc.prefix != nil {
				lines := strings.Split(err.Error(), "\n")
				require.Len(t, lines, len(tc.prefix), err.Error())
				for i, p := range tc.prefix {
					assert.True(t, strings.HasPrefix(lines[i], p), "line %d: got %q, want prefix %q", i, lines[i], p)
				}
			}
		})
	}
}

func TestLoadBEIRBadQueries(t *testing.T) {
	// good qrels, bad queries: every bad line is reported
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "qrels"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "qrels", "test.tsv"), []byte("q1\td1\t1\n"), 0o644))
	src, err := os.ReadFile(filepath.Join(beirFixture("bad"), "queries.jsonl"))
	require.NoError(t, err)
	path := filepath.Join(dir, "queries.jsonl")
	require.NoError(t, os.WriteFile(path, src, 0o644))
	_, err = eval.LoadBEIR(dir, eval.BEIROptions{})
	require.Error(t, err)
	want := []string{
		"beir: " + path + `:2: missing or empty "text"`,
		path + `:3: duplicate _id "q1" (first on line 1)`,
		path + `:4: json: cannot unmarshal array`,
		path + `:5: "_id" must be a string or an integer, not true`,
	}
	lines := strings.Split(err.Error(), "\n")
	require.Len(t, lines, len(want), err.Error())
	for i, w := range want {
		assert.True(t, strings.HasPrefix(lines[i], w), "line %d: got %q, want prefix %q", i, lines[i], w)
	}
}

func readBEIR(t *testing.T, dir string) ([]corpus.Record, []*corpus.ParseError) {
	t.Helper()
	path := filepath.Join(dir, "corpus.jsonl")
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var recs []corpus.Record
	var errs []*corpus.ParseError
	err = eval.ReadBEIRCorpus(t.Context(), f, path, func(r corpus.Record) error {
		recs = append(recs, r)
		return nil
	}, func(pe *corpus.ParseError) { errs = append(errs, pe) })
	require.NoError(t, err)
	return recs, errs
}

func TestReadBEIRCorpus(t *testing.T) {
	recs, errs := readBEIR(t, beirFixture("tiny"))
	assert.Empty(t, errs)
	type row struct{ key, title, abstract string }
	var got []row
	ids := map[string]bool{}
	for _, r := range recs {
		got = append(got, row{r.Key, r.Paper.Title, r.Paper.Abstract})
		assert.Equal(t, corpus.PaperID(r.Paper), r.Paper.ID)
		assert.Equal(t, r.Key, r.Ref)
		ids[r.Paper.ID] = true
	}
	assert.Equal(t, []row{
		{"d1", "Reciprocal rank fusion outperforms Condorcet", "Reciprocal rank fusion combines rankings without score calibration."},
		{"d2", "The probabilistic relevance framework: BM25 and beyond", "BM25 weights terms by frequency and document length."},
		{"3", "[3]", "A paper without a title: dense passage retrieval with dual encoders."},
		{"d4", "Summary [d4]", "First document titled Summary."},
		{"d5", "summary [d5]", "Second document titled summary."},
	}, got)
	assert.Len(t, ids, len(recs), "every document is a paper of its own")
	assert.Equal(t, []int{1, 2, 3, 4, 5}, []int{recs[0].Line, recs[1].Line, recs[2].Line, recs[3].Line, recs[4].Line})
}

func TestReadBEIRCorpusBad(t *testing.T) {
	recs, errs := readBEIR(t, beirFixture("bad"))
	var keys []string
	for _, r := range recs {
		keys = append(keys, r.Key)
	}
	assert.Equal(t, []string{"d1", "d5"}, keys, "the good lines are kept")
	want := []struct {
		line int
		is   error
		msg  string
	}{
		{2, corpus.ErrSyntax, "invalid character"},
		{3, corpus.ErrBadField, `missing "_id"`},
		{4, corpus.ErrNoTitle, `neither "title" nor "text"`},
		{5, corpus.ErrBadField, `duplicate _id "d1" (first on line 1)`},
		{6, corpus.ErrBadField, `"title" must be a string`},
	}
	require.Len(t, errs, len(want))
	for i, w := range want {
		assert.Equal(t, w.line, errs[i].Line)
		assert.ErrorIs(t, errs[i], w.is)
		assert.Contains(t, errs[i].Error(), w.msg)
		assert.True(t, strings.HasPrefix(errs[i].Error(), filepath.Join(beirFixture("bad"), "corpus.jsonl")+":"), errs[i].Error())
	}
}

func TestConvertBEIRCorpusIngest(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(beirFixture("tiny"), "corpus.jsonl")
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var buf bytes.Buffer
	n, err := eval.ConvertBEIRCorpus(ctx, f, path, &buf, nil)
	require.NoError(t, err)
	assert.Equal(t, 5, n)

	// the CSL lines read back as the same papers, keyed by the corpus ids
	direct, _ := readBEIR(t, beirFixture("tiny"))
	var back []corpus.Record
	require.NoError(t, corpus.ReadJSONL(ctx, &buf, "conv.jsonl", func(r corpus.Record) error {
		back = append(back, r)
		return nil
	}, func(pe *corpus.ParseError) { t.Errorf("converted line rejected: %v", pe) }))
	require.Len(t, back, len(direct))
	for i := range back {
		assert.Equal(t, direct[i].Key, back[i].Key)
		assert.Equal(t, direct[i].Paper.ID, back[i].Paper.ID)
		assert.Equal(t, direct[i].Paper.Title, back[i].Paper.Title)
		assert.Equal(t, direct[i].Paper.Abstract, back[i].Paper.Abstract)
	}

	// ingested, every document is a paper and the qrels' corpus ids resolve
	st, err := corpus.OpenStore(ctx, filepath.Join(t.TempDir(), "papers.sqlite"))
	require.NoError(t, err)
	defer st.Close()
	_, err = st.Ingest(ctx, direct)
	require.NoError(t, err)
	count, err := st.Count(ctx)
	require.NoError(t, err)
	assert.Equal(t, 5, count)
	b, err := eval.LoadBEIR(beirFixture("tiny"), eval.BEIROptions{})
	require.NoError(t, err)
	var judged []string
	for _, q := range b.Set.Queries {
		judged = append(judged, q.Relevant...)
	}
	got, err := st.Resolve(ctx, judged)
	require.NoError(t, err)
	for _, id := range judged {
		assert.NotEmpty(t, got[id], "corpus id %s resolves", id)
		for _, r := range direct {
			if r.Key == id {
				assert.Equal(t, r.Paper.ID, got[id])
			}
		}
	}
}

// TestLoadBEIRDevsets reads the development sets of ../shared/data/devsets
// (skipped when absent): every split loads, every corpus line is a paper.
func TestLoadBEIRDevsets(t *testing.T) {
	tests := []struct {
		set, split string
		queries    int
		docs       int
	}{
		{"scifact", "test", 300, 5183},
		{"scifact", "train", 809, 5183},
		{"scisummnet", "keep_for_gold", 1675, 978},
		{"scisummnet", "clean", 14561, 978},
		{"scisummnet", "test", 14662, 978},
	}
	for _, tc := range tests {
		t.Run(tc.set+":"+tc.split, func(t *testing.T) {
			dir := filepath.Join(datadir.Bench("devsets"), tc.set)
			if _, err := os.Stat(filepath.Join(dir, "corpus.jsonl")); err != nil {
				t.Skipf("BEIR data not found at %s (set %s): %v", dir, datadir.Env, err)
			}
			b, err := eval.LoadBEIR(dir, eval.BEIROptions{Split: tc.split})
			require.NoError(t, err)
			assert.Len(t, b.Set.Queries, tc.queries)
			assert.Empty(t, b.Set.Orphans)
			recs, errs := readBEIR(t, dir)
			assert.Empty(t, errs)
			assert.Len(t, recs, tc.docs)
			if tc.set == "scisummnet" {
				masked := 0
				for _, q := range b.Set.Queries {
					if strings.Contains(q.Text, "[CIT]") {
						masked++
					}
				}
				assert.Greater(t, masked, len(b.Set.Queries)*9/10, "text_masked is the query text")
			}
		})
	}
}
