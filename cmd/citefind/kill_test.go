package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	dbpkg "github.com/citefind/citefind/db"
	"github.com/citefind/citefind/engine"
	"github.com/citefind/citefind/retrieve/dense"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind"
	"github.com/citefind/citefind/corpus"
)

// TestKillIndex starts real `citefind index` processes on a generated
// corpus, SIGKILLs them at seeded random moments, runs the same `index`
// again to completion, and checks the result against clean runs: the same
// papers (every one, as JSON), the same index sizes, status in agreement,
// no leftover files and the same query results. Trials of two kinds: a
// first index of the corpus, and an incremental one after one file
// changed (records changed, removed and added). Two modes: BM25 alone
// (kills land during ingest, the store commits and the BM25 build or
// update), `--embedder builtin` (also during LSA training, embedding
// and writing the dense index, or the fold-in of the changed papers;
// queries use bm25,dense) and a few with `--embedder contrast`. Not run with -short; `make test` runs it in its
// second pass.
func TestKillIndex(t *testing.T) {
	if testing.Short() {
		t.Skip("kills real processes; not with -short")
	}
	const seed = 20261122
	work := t.TempDir()
	bin := filepath.Join(work, "citefind")
	build := exec.Command("go", "build", "-o", bin, ".")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build: %s", out)

	rng := rand.New(rand.NewPCG(seed, 1))
	v1, v2 := killCorpus(rng, 3000)
	// The contrast embedder trains at least 300 steps (contrast.
	// DefaultMinSteps) of up to 1,024 papers whatever the collection's
	// size: 41 s on the 5,600 papers of a.bib and b.bib. Its trials index
	// smaller files of 100 records (about 190 papers, one batch a step),
	// drawn from a random source of their own so that the other trials
	// keep theirs.
	s1, s2 := killCorpus(rand.New(rand.NewPCG(seed, 2)), 100)
	// The dense trials index a.bib and b.bib only (about 5,600 papers):
	// LSA training dominates their runs. b.bib's changes are about 5% of
	// the papers, so the incremental runs fold them into the kept model.
	modes := []killMode{
		{name: "bm25", args: []string{"--embedder", "none"}, fresh: 14, incr: 10, files: 3},
		{name: "dense", args: []string{"--embedder", "builtin"}, fresh: 4, incr: 6, files: 2},
		// contrast shares builtin's model handling (build/dense.go); a
		// few trials kill it during its own training and embedding.
		{name: "contrast", args: []string{"--embedder", "contrast"}, fresh: 2, incr: 2, files: 2, small: true},
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			a, b := v1, v2
			if m.small {
				a, b = s1, s2
			}
			killTrials(t, bin, filepath.Join(work, m.name), rng, m, a[:m.files], b[:m.files])
		})
	}
}

// killMode is a set of kill trials: index arguments (besides --quiet --db
// db in), the number of trials of each kind and of corpus files used.
type killMode struct {
	name        string
	args        []string
	fresh, incr int
	files       int
	small       bool // the files of 100 records, not 3000
}

func (m killMode) dense() bool { return len(m.args) > 0 && m.args[len(m.args)-1] != "none" }

func killTrials(t *testing.T, bin, work string, rng *rand.Rand, m killMode, v1, v2 []corpusFile) {
	// Clean runs: index v1; then index v2 (one file changed) on top.
	clean1 := filepath.Join(work, "clean1")
	writeInputs(t, clean1, v1)
	start := time.Now()
	runIndex(t, bin, clean1, m.args...)
	tFull := time.Since(start)
	clean2 := filepath.Join(work, "clean2")
	copyTree(t, filepath.Join(clean1, "db"), filepath.Join(clean2, "db"))
	writeInputs(t, clean2, v2)
	start = time.Now()
	runIndex(t, bin, clean2, m.args...)
	tIncr := time.Since(start)
	t.Logf("clean runs: full index %v, incremental %v", tFull, tIncr)
	want1, want2 := snapshot(t, clean1, m.dense()), snapshot(t, clean2, m.dense())
	require.NotEqual(t, want1.papers, want2.papers)

	phases := map[string]int{}
	for i := range m.fresh + m.incr {
		incr := i >= m.fresh
		dir := filepath.Join(work, fmt.Sprintf("trial%02d", i))
		want, budget := want1, tFull
		if incr {
			copyTree(t, filepath.Join(clean1, "db"), filepath.Join(dir, "db"))
			writeInputs(t, dir, v2)
			want, budget = want2, tIncr
		} else {
			writeInputs(t, dir, v1)
		}
		delay := time.Duration(rng.Int64N(int64(budget) * 11 / 10))
		cmd := exec.Command(bin, append([]string{"index", "--quiet", "--db", "db", "in"}, m.args...)...)
		cmd.Dir = dir
		require.NoError(t, cmd.Start())
		time.Sleep(delay)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		phase := killPhase(t, dir, want)
		phases[phase]++
		t.Logf("trial %2d (%s): killed after %v, %s", i, map[bool]string{false: "first index", true: "incremental"}[incr], delay.Round(time.Millisecond), phase)

		runIndex(t, bin, dir, m.args...)
		got := snapshot(t, dir, m.dense())
		assert.Equal(t, want.count, got.count, "trial %d: papers", i)
		assert.Equal(t, want.docs, got.docs, "trial %d: index documents", i)
		assert.True(t, got.agree, "trial %d: status disagrees: %v", i, got.problems)
		assert.Equal(t, want.papers, got.papers, "trial %d: papers differ", i)
		assert.Equal(t, want.hits, got.hits, "trial %d: query results differ", i)
		assert.Equal(t, want.dense, got.dense, "trial %d: dense index differs", i)
		left, _ := filepath.Glob(filepath.Join(dir, "db", dbpkg.SparseDir+".*"))
		more, _ := filepath.Glob(filepath.Join(dir, "db", dbpkg.LSAModelFile+".tmp-*"))
		left = append(left, more...)
		if m.dense() {
			exports, _ := filepath.Glob(filepath.Join(dir, "db", dbpkg.DenseDir, "*"))
			assert.Len(t, exports, 3, "trial %d: dense folder holds %v, want the header, one export and its sidecar", i, exports)
		}
		assert.Empty(t, left, "trial %d: leftovers", i)
		if t.Failed() {
			t.FailNow()
		}
		os.RemoveAll(dir)
	}
	t.Logf("%d trials, where the kill landed: %v", m.fresh+m.incr, phases)
}

type corpusFile struct {
	name string
	body string
}

// killCorpus generates the inputs: three BibTeX files of n records
// (DOI records, duplicates across files with other fields, records without
// DOI), and a second version in which b.bib changed: every 25th record has
// a new title, every 40th is gone and n/50 are new (60 of 3000).
func killCorpus(rng *rand.Rand, n int) (v1, v2 []corpusFile) {
	words := make([]string, 4000)
	for i := range words {
		var b strings.Builder
		for range 3 + rng.IntN(7) {
			b.WriteByte(byte('a' + rng.IntN(26)))
		}
		words[i] = b.String()
	}
	text := func(n int) string {
		ws := make([]string, n)
		for i := range ws {
			ws[i] = words[int(float64(len(words))*rng.Float64()*rng.Float64())]
		}
		return strings.Join(ws, " ")
	}
	entry := func(key, doi, title, abstract string, year int) string {
		var b strings.Builder
		fmt.Fprintf(&b, "@article{%s,\n  title = {%s},\n  author = {Doe, Jane and Roe, Richard},\n  year = {%d},\n", key, title, year)
		if doi != "" {
			fmt.Fprintf(&b, "  doi = {%s},\n", doi)
		}
		if abstract != "" {
			fmt.Fprintf(&b, "  abstract = {%s},\n", abstract)
		}
		b.WriteString("}\n\n")
		return b.String()
	}
	type rec struct {
		key, doi, title, abstract string
		year                      int
	}
	files := map[string][]rec{}
	for f, name := range []string{"a.bib", "b.bib", "c.bib"} {
		for i := range n {
			r := rec{key: fmt.Sprintf("%c%d", 'a'+f, i), title: text(6 + rng.IntN(6)), abstract: text(40 + rng.IntN(60)), year: 1990 + rng.IntN(35)}
			switch {
			case i%10 == 0:
				// no DOI: identified by title, year and first author
			case f > 0 && i%7 == 0:
				// the same paper as one in the first file, other fields
				r.doi = fmt.Sprintf("10.1000/a%d", i)
				if i%2 == 0 {
					r.abstract = ""
				}
			default:
				r.doi = fmt.Sprintf("10.1000/%c%d", 'a'+f, i)
			}
			files[name] = append(files[name], r)
		}
	}
	render := func(name string, rs []rec) corpusFile {
		var b strings.Builder
		for _, r := range rs {
			b.WriteString(entry(r.key, r.doi, r.title, r.abstract, r.year))
		}
		return corpusFile{name: name, body: b.String()}
	}
	for _, name := range []string{"a.bib", "b.bib", "c.bib"} {
		v1 = append(v1, render(name, files[name]))
	}
	var b2 []rec
	for i, r := range files["b.bib"] {
		switch {
		case i%40 == 0:
			continue
		case i%25 == 0:
			r.title = "revised " + text(5)
		}
		b2 = append(b2, r)
	}
	for i := range n / 50 {
		b2 = append(b2, rec{key: fmt.Sprintf("new%d", i), doi: fmt.Sprintf("10.1000/new%d", i), title: text(8), abstract: text(50), year: 2025})
	}
	v2 = []corpusFile{v1[0], render("b.bib", b2), v1[2]}
	return v1, v2
}

func writeInputs(t *testing.T, dir string, files []corpusFile) {
	t.Helper()
	in := filepath.Join(dir, "in")
	require.NoError(t, os.MkdirAll(in, 0o755))
	for _, f := range files {
		require.NoError(t, os.WriteFile(filepath.Join(in, f.name), []byte(f.body), 0o644))
	}
}

func runIndex(t *testing.T, bin, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"index", "--quiet", "--db", "db", "in"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "index in %s: %s", dir, out)
}

func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(dst), 0o755))
	out, err := exec.Command("cp", "-a", src, dst).CombinedOutput()
	require.NoError(t, err, "cp: %s", out)
}

// dbSnapshot is what a trial is compared on.
type dbSnapshot struct {
	count    int
	gen      int64 // store generation (for telling phases apart, not compared)
	docs     int
	agree    bool
	problems []string
	papers   map[string]string // ID → JSON
	hits     []string
	dense    string // dense index: model, dimension and documents ("" in BM25 mode)
}

// snapshot describes the database of dir; with dense, queries use
// bm25,dense (strictly: a dense failure fails the test).
func snapshot(t *testing.T, dir string, withDense bool) dbSnapshot {
	t.Helper()
	ctx := context.Background()
	db := filepath.Join(dir, "db")
	s, err := dbpkg.ReadStatus(ctx, db)
	require.NoError(t, err)
	snap := dbSnapshot{count: s.StorePapers, gen: s.StoreGeneration, docs: s.Indexes[0].Docs, agree: s.Agree, problems: s.Problems, papers: map[string]string{}}
	opts := engine.Options{}
	if withDense {
		opts = engine.Options{Retrievers: []string{citefind.RetrieverBM25, citefind.RetrieverDense}, Strict: true}
		h, err := dense.Stat(filepath.Join(db, dbpkg.DenseDir))
		require.NoError(t, err)
		snap.dense = fmt.Sprintf("%s %d×%d", h.Model, h.Docs, h.Dim)
		require.Len(t, s.Indexes, 2)
		snap.docs += 1_000_000 * s.Indexes[1].Docs
	}
	e, err := engine.Open(ctx, db, opts)
	require.NoError(t, err)
	defer e.Close()
	require.NoError(t, e.Store().Each(ctx, func(p corpus.Paper) error {
		b, err := json.Marshal(p)
		snap.papers[p.ID] = string(b)
		return err
	}))
	// queries: "revised" (in the changed titles) and the titles of a few
	// papers, picked by ID order
	ids := make([]string, 0, len(snap.papers))
	for id := range snap.papers {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	qs := []string{"revised"}
	for _, i := range []int{0, len(ids) / 3, 2 * len(ids) / 3} {
		var p corpus.Paper
		require.NoError(t, json.Unmarshal([]byte(snap.papers[ids[i]]), &p))
		qs = append(qs, p.Title)
	}
	for _, q := range qs {
		res, err := e.Search(ctx, q, citefind.QueryOptions{K: 20})
		require.NoError(t, err)
		for _, h := range res.Hits {
			snap.hits = append(snap.hits, fmt.Sprintf("%s %s %.9g", q, h.ID, h.Score))
		}
	}
	return snap
}

// killPhase says what state a kill left: what the store and index hold.
func killPhase(t *testing.T, dir string, want dbSnapshot) string {
	t.Helper()
	db := filepath.Join(dir, "db")
	if _, err := os.Stat(filepath.Join(db, dbpkg.StoreFile)); err != nil {
		return "before the store was created"
	}
	s, err := dbpkg.ReadStatus(context.Background(), db)
	if err != nil {
		return "store unreadable: " + err.Error()
	}
	tmp, _ := filepath.Glob(filepath.Join(db, dbpkg.SparseDir+".tmp-*"))
	model, _ := filepath.Glob(filepath.Join(db, dbpkg.LSAModelFile+".tmp-*"))
	exports, _ := filepath.Glob(filepath.Join(db, dbpkg.DenseDir, "papers-*"))
	denseDone := true
	if want.dense != "" {
		h, err := dense.Stat(filepath.Join(db, dbpkg.DenseDir))
		denseDone = err == nil && h.Meta["store_generation"] == fmt.Sprint(s.StoreGeneration)
	}
	switch {
	case s.Agree && s.StoreGeneration >= want.gen && denseDone:
		return "after everything was done"
	case len(tmp) > 0:
		return "during the index build/update"
	case len(model) > 0:
		return "while saving the LSA model"
	case len(exports) > 1:
		return "while writing the dense index"
	case s.StoreGeneration >= want.gen && s.Indexes[0].UpToDate && !denseDone:
		return "during LSA training or embedding"
	case s.StoreGeneration < want.gen:
		return fmt.Sprintf("during ingest (store at generation %d of %d)", s.StoreGeneration, want.gen)
	default:
		return "between ingest and index"
	}
}
