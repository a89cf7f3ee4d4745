package corpus_test

import (
	"time"

	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/corpus"
)

// fileVersion is one version of an input file: its records, in file order.
type fileVersion struct {
	path string
	sum  string
	recs []corpus.Record
}

func version(path, sum string, recs ...corpus.Record) fileVersion {
	for i := range recs {
		recs[i].File = path
		recs[i].Line = i*10 + 1
		recs[i].Ref = recs[i].Key
	}
	return fileVersion{path: path, sum: sum, recs: recs}
}

// apply ingests a file version the way citefind.Ingest does: in batches of
// batch records, then FinishSource.
func apply(t *testing.T, s *corpus.Store, v fileVersion, batch int) corpus.IngestStats {
	t.Helper()
	src := corpus.Source{Path: v.path, Size: int64(len(v.recs)), SHA256: v.sum}
	var tot corpus.IngestStats
	for i := 0; i < len(v.recs); i += batch {
		st, err := s.IngestSource(t.Context(), src, v.recs[i:min(i+batch, len(v.recs))])
		require.NoError(t, err)
		tot.Unchanged += st.Unchanged
		tot.Changed += st.Changed
		tot.Added += st.Added
	}
	st, err := s.FinishSource(t.Context(), src, len(v.recs))
	require.NoError(t, err)
	tot.Withdrawn += st.Withdrawn
	tot.Removed += st.Removed
	return tot
}

func paperRec(title, doi string, year int, key string) corpus.Record {
	return rec(corpus.Paper{Title: title, DOI: doi, Year: year, Authors: []corpus.Author{devlin}}, key, "", 0)
}

func gen(t *testing.T, s *corpus.Store) int64 {
	t.Helper()
	g, err := s.Generation(t.Context())
	require.NoError(t, err)
	return g
}

func sinceIDs(t *testing.T, s *corpus.Store, g int64) (changed, removed []string) {
	t.Helper()
	require.NoError(t, s.EachSince(t.Context(), g, func(p corpus.Paper) error {
		changed = append(changed, p.ID)
		return nil
	}))
	removed, err := s.RemovedSince(t.Context(), g)
	require.NoError(t, err)
	return changed, removed
}

func TestStoreChangedFile(t *testing.T) {
	for _, batch := range []int{1, 2, 100} {
		s, _ := openStore(t)
		v1 := version("a.bib", "v1",
			paperRec("Old title", "10.1/x", 2019, "x"),
			paperRec("Paper Y", "10.1/y", 2020, "y"),
			paperRec("Paper W", "10.1/w", 2021, "w"))
		apply(t, s, v1, batch)
		g1 := gen(t, s)

		// The same version again changes nothing.
		st := apply(t, s, v1, batch)
		assert.Equal(t, 3, st.Unchanged)
		assert.Equal(t, g1, gen(t, s), "batch %d", batch)

		// X changed, Y gone, Z new, W as it was.
		v2 := version("a.bib", "v2",
			paperRec("New title", "10.1/x", 2019, "x"),
			paperRec("Paper Z", "10.1/z", 2022, "z"),
			paperRec("Paper W", "10.1/w", 2021, "w"))
		st = apply(t, s, v2, batch)
		assert.Equal(t, 1, st.Changed)
		assert.Equal(t, 1, st.Withdrawn)
		assert.Equal(t, 1, st.Removed)
		assert.Equal(t, 1, st.Unchanged)

		x, err := s.Get(t.Context(), "x")
		require.NoError(t, err)
		assert.Equal(t, "New title", x.Title)
		_, err = s.Get(t.Context(), "10.1/y")
		require.ErrorIs(t, err, corpus.ErrNotFound)
		_, err = s.Get(t.Context(), "y") // its key went with it
		require.ErrorIs(t, err, corpus.ErrNotFound)
		n, err := s.Count(t.Context())
		require.NoError(t, err)
		assert.Equal(t, 3, n)

		changed, removed := sinceIDs(t, s, g1)
		assert.Equal(t, []string{"10.1/x", "10.1/z"}, changed)
		assert.Equal(t, []string{"10.1/y"}, removed)
	}
}

func TestStorePrecedenceAcrossFiles(t *testing.T) {
	s, _ := openStore(t)
	a := paperRec("Title from A", "10.1/x", 2019, "ax")
	b := paperRec("Title from B", "10.1/x", 0, "bx")
	b.Paper.Abstract = "abstract from B"
	apply(t, s, version("a.bib", "a1", a), 10)
	apply(t, s, version("b.bib", "b1", b), 10)
	p, err := s.Get(t.Context(), "10.1/x")
	require.NoError(t, err)
	assert.Equal(t, "Title from A", p.Title, "first file wins a conflict")
	assert.Equal(t, "abstract from B", p.Abstract, "later file fills gaps")

	// A's record changes: it still precedes B's.
	a2 := paperRec("New title from A", "10.1/x", 2019, "ax")
	apply(t, s, version("a.bib", "a2", a2), 10)
	p, err = s.Get(t.Context(), "bx")
	require.NoError(t, err)
	assert.Equal(t, "New title from A", p.Title)
	assert.Equal(t, "abstract from B", p.Abstract)
	assert.Equal(t, 2019, p.Year)

	// A's record goes: B's title takes over, A's year and key go.
	apply(t, s, version("a.bib", "a3", paperRec("Other", "10.1/o", 2000, "o")), 10)
	p, err = s.Get(t.Context(), "10.1/x")
	require.NoError(t, err)
	assert.Equal(t, "Title from B", p.Title)
	assert.Equal(t, 0, p.Year)
	_, err = s.Get(t.Context(), "ax")
	require.ErrorIs(t, err, corpus.ErrNotFound)
	srcs, err := s.RecordSources(t.Context(), "10.1/x")
	require.NoError(t, err)
	require.Len(t, srcs, 1)
	srcs[0].Item = nil
	assert.Equal(t, []corpus.RecordSource{{File: "b.bib", Line: 1, Key: "bx"}}, srcs)
}

func TestStoreRecomputeChangesIdentity(t *testing.T) {
	s, _ := openStore(t)
	withDOI := paperRec("Shared Title", "10.1/x", 2019, "doi-rec")
	bare := paperRec("Shared Title", "", 2019, "bare-rec")
	bare.Paper.Abstract = "bare abstract"
	apply(t, s, version("a.bib", "a1", withDOI), 10)
	apply(t, s, version("b.bib", "b1", bare), 10)
	p, err := s.Get(t.Context(), "bare-rec")
	require.NoError(t, err)
	assert.Equal(t, "10.1/x", p.ID, "bare record merged by fingerprint")
	g := gen(t, s)

	// The DOI record goes: the paper is the bare record's again.
	apply(t, s, version("a.bib", "a2"), 10)
	p, err = s.Get(t.Context(), "bare-rec")
	require.NoError(t, err)
	assert.Equal(t, bare.Paper.ID, p.ID)
	assert.Equal(t, "bare abstract", p.Abstract)
	assert.Empty(t, p.DOI)
	changed, removed := sinceIDs(t, s, g)
	assert.Equal(t, []string{bare.Paper.ID}, changed)
	assert.Equal(t, []string{"10.1/x"}, removed)
	n, err := s.Count(t.Context())
	require.NoError(t, err)
	assert.Equal(t, 1, n)
}

func TestStoreInterruptedFileIsResumed(t *testing.T) {
	// A clean run, and a run killed after the first batch of the changed
	// file and then redone: same papers.
	v1 := version("a.bib", "v1",
		paperRec("One", "10.1/1", 2001, "k1"), paperRec("Two", "10.1/2", 2002, "k2"),
		paperRec("Three", "10.1/3", 2003, "k3"), paperRec("Four", "10.1/4", 2004, "k4"))
	v2 := version("a.bib", "v2",
		paperRec("One!", "10.1/1", 2001, "k1"), paperRec("Three", "10.1/3", 2003, "k3"),
		paperRec("Five", "10.1/5", 2005, "k5"), paperRec("Four!", "10.1/4", 2004, "k4"))
	clean, _ := openStore(t)
	apply(t, clean, v1, 2)
	apply(t, clean, v2, 2)

	s, _ := openStore(t)
	apply(t, s, v1, 2)
	_, err := s.IngestSource(t.Context(), corpus.Source{Path: "a.bib", SHA256: "v2"}, v2.recs[:2])
	require.NoError(t, err)
	// "killed" here; the next run reads the whole file again.
	apply(t, s, v2, 2)
	assert.Equal(t, allPapers(t, clean), allPapers(t, s))
	seen, err := s.SourceSeen(t.Context(), "a.bib", 4, time.Time{}, "v2")
	require.NoError(t, err)
	assert.True(t, seen)
}

func TestStoreRemoveThenChangedFile(t *testing.T) {
	s, _ := openStore(t)
	v1 := version("a.bib", "v1", paperRec("One", "10.1/1", 2001, "k1"), paperRec("Two", "10.1/2", 2002, "k2"))
	apply(t, s, v1, 10)
	n, err := s.Remove(t.Context(), "k1")
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	// Unchanged file: stays removed (the caller skips seen files).
	// Changed file: the record is new again.
	v2 := version("a.bib", "v2", paperRec("One", "10.1/1", 2001, "k1"), paperRec("Two!", "10.1/2", 2002, "k2"))
	st := apply(t, s, v2, 10)
	assert.Equal(t, 1, st.Added)
	assert.Equal(t, 1, st.Changed)
	n, err = s.Count(t.Context())
	require.NoError(t, err)
	assert.Equal(t, 2, n)
}

// A record whose content changes its paper's identity (no DOI, another
// title: another "h:" ID) takes its key along: the key names the new
// paper, and no key conflict is reported against the old one, which goes.
func TestStoreChangedRecordKeepsItsKey(t *testing.T) {
	s, _ := openStore(t)
	apply(t, s, version("a.bib", "a1", paperRec("First title", "", 2001, "k")), 10)
	old, err := s.Get(t.Context(), "k")
	require.NoError(t, err)

	src := corpus.Source{Path: "a.bib", Size: 1, SHA256: "a2"}
	v := version("a.bib", "a2", paperRec("Second title", "", 2001, "k"))
	st, err := s.IngestSource(t.Context(), src, v.recs)
	require.NoError(t, err)
	assert.Equal(t, 1, st.Changed)
	assert.Zero(t, st.AliasConflicts)
	assert.Empty(t, st.KeyConflicts)

	p, err := s.Get(t.Context(), "k")
	require.NoError(t, err)
	assert.Equal(t, "Second title", p.Title)
	assert.NotEqual(t, old.ID, p.ID)
	_, err = s.Get(t.Context(), old.ID)
	require.ErrorIs(t, err, corpus.ErrNotFound)
}
