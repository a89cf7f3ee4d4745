package corpus_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/internal/datadir"
)

// cslFixtures are every CSL-JSON fixture of the repository.
var cslFixtures = []string{
	"testdata/csl/rich.json",
	"testdata/readers/papers.json",
	"testdata/readers/papers.jsonl",
	"testdata/readers/single.json",
	"../cite/testdata/styles/items.json",
	"../server/testdata/abstracts.jsonl",
	"../eval/testdata/native/corpus.jsonl",
}

// rawItems returns the items of a CSL-JSON or JSON Lines file, compacted,
// as the multiset of their bytes.
func rawItems(t *testing.T, path string) map[string]int {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	out := map[string]int{}
	add := func(b []byte) {
		var c bytes.Buffer
		if json.Compact(&c, b) == nil { // a broken line is the reader's error
			out[c.String()]++
		}
	}
	if strings.HasSuffix(path, ".jsonl") {
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			if l := bytes.TrimSpace(sc.Bytes()); len(l) > 0 {
				add(l)
			}
		}
		return out
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if t0 := bytes.TrimSpace(data); len(t0) > 0 && t0[0] == '[' {
		var items []json.RawMessage
		require.NoError(t, dec.Decode(&items))
		for _, it := range items {
			add(it)
		}
		return out
	}
	for dec.More() {
		var it json.RawMessage
		require.NoError(t, dec.Decode(&it))
		add(it)
	}
	return out
}

// checkRoundTrip ingests one CSL-JSON file into s and checks that every
// item comes back as it was given: each record's item from RecordSources,
// and the paper's item from Items (with "id" the paper ID) for papers made
// of one record. Items the reader rejects (no title; the reader fixtures'
// deliberate errors) are counted as skipped.
func checkRoundTrip(t *testing.T, s *corpus.Store, path string) (checked int, rejected []*corpus.ParseError) {
	t.Helper()
	want := rawItems(t, path)
	var recs []corpus.Record
	require.NoError(t, corpus.ReadFile(t.Context(), path, func(r corpus.Record) error {
		recs = append(recs, r)
		return nil
	}, func(pe *corpus.ParseError) { rejected = append(rejected, pe) }))
	for _, r := range recs {
		assert.Positive(t, want[string(r.Item)], "%s:%d: the record's item is the item as given:\n%s", path, r.Line, r.Item)
	}

	st, err := s.Ingest(t.Context(), recs)
	require.NoError(t, err)
	require.Equal(t, len(recs), st.Read)
	for _, r := range recs {
		ids, err := s.Resolve(t.Context(), []string{r.Paper.ID})
		require.NoError(t, err)
		id := ids[r.Paper.ID]
		require.NotEmpty(t, id, "%s:%d", path, r.Line)
		srcs, err := s.RecordSources(t.Context(), id)
		require.NoError(t, err)
		var got json.RawMessage
		for _, src := range srcs {
			if src.Line == r.Line && src.File == r.File {
				got = src.Item
			}
		}
		assert.Equal(t, string(r.Item), string(got), "%s:%d: RecordSources gives the item back unchanged", path, r.Line)
		checked++
		if len(srcs) != 1 {
			continue
		}
		items, err := s.Items(t.Context(), []string{id})
		require.NoError(t, err)
		var wantItem, gotItem map[string]any
		require.NoError(t, json.Unmarshal(r.Item, &wantItem))
		require.NoError(t, json.Unmarshal(items[id], &gotItem))
		wantItem["id"] = id
		assert.Equal(t, wantItem, gotItem, "%s:%d: Items gives the item back with the paper ID", path, r.Line)
		withID, err := corpus.ItemWithID(r.Item, id)
		require.NoError(t, err)
		assert.Equal(t, string(withID), string(items[id]), "byte for byte but the id")
	}
	return checked, rejected
}

// TestCSLRoundTrip: CSL-JSON in, CSL-JSON out, identical, for every CSL
// fixture of the repository.
func TestCSLRoundTrip(t *testing.T) {
	for _, f := range cslFixtures {
		t.Run(f, func(t *testing.T) {
			s, _ := openStore(t)
			checked, rejected := checkRoundTrip(t, s, f)
			assert.Positive(t, checked)
			t.Logf("%s: %d items identical, %d rejected by the reader", f, checked, len(rejected))
		})
	}
}

// TestRealDataCSLTestSuiteRoundTrip runs the round trip over the input
// items of every fixture of the CSL processor test suite (names with
// particles, suffixes and non-Latin scripts, dates with ranges, seasons,
// circa and literals, every variable), when ../shared/data holds it. Items
// without a title are rejected by the reader (a paper needs a title).
func TestRealDataCSLTestSuiteRoundTrip(t *testing.T) {
	if testing.Short() {
		t.Skip("reads the 847 fixtures of the CSL test suite; run without -short")
	}
	root := filepath.Join(datadir.Bench("csl-test-suite"), "humans")
	files, _ := filepath.Glob(filepath.Join(root, "*.txt"))
	if len(files) == 0 {
		t.Skipf("CSL test suite not found in %s; set %s to the benchmark data folder", root, datadir.Env)
	}
	dir := t.TempDir()
	s, _ := openStore(t)
	checked, skipped, fixtures := 0, 0, 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		in := string(data)
		start := strings.Index(in, ">>===== INPUT =====>>")
		end := strings.Index(in, "<<===== INPUT =====<<")
		if start < 0 || end < start {
			continue
		}
		input := strings.TrimSpace(in[start+len(">>===== INPUT =====>>") : end])
		var items []json.RawMessage
		if json.Unmarshal([]byte(input), &items) != nil || len(items) == 0 {
			continue
		}
		path := filepath.Join(dir, strings.TrimSuffix(filepath.Base(f), ".txt")+".json")
		require.NoError(t, os.WriteFile(path, []byte(input), 0o644))
		fixtures++
		c, rejected := checkRoundTrip(t, s, path)
		checked += c
		for _, pe := range rejected {
			assert.ErrorIs(t, pe, corpus.ErrNoTitle, "only items without a title are rejected")
			skipped++
		}
	}
	t.Logf("%d test-suite fixtures: %d items identical after the round trip, %d rejected by the reader (no title)", fixtures, checked, skipped)
	assert.GreaterOrEqual(t, checked, 800)
}
