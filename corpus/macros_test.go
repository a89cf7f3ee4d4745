package corpus_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/internal/datadir"
)

// An abbreviations file beside the references, as in
// \bibliography{abbrev,refs} (IEEE's IEEEabrv.bib): the references use its
// macros, which BibTeX defines because it reads the files as one text.
func TestSharedMacros(t *testing.T) {
	dir := t.TempDir()
	abbrev := filepath.Join(dir, "abbrev.bib")
	refs := filepath.Join(dir, "refs.bib")
	other := filepath.Join(dir, "other.BIB")
	require.NoError(t, os.WriteFile(abbrev, []byte(`% journal abbreviations
@STRING{IEEE_J_PAMI = "{IEEE} Trans. Pattern Anal. Mach. Intell."}
@String ( pub = "ACM" )
@string{both = pub # " Press"}
@article{notreally, title = {An entry among the strings}, journal = IEEE_J_PAMI}
`), 0o644))
	require.NoError(t, os.WriteFile(refs, []byte(`@string{pub = "Springer"}
@article{a, title = {Deep nets}, journal = ieee_j_pami, year = 2020}
@book{b, title = {A book}, publisher = both, year = 2021}
@article{c, title = {Undefined}, journal = nowhere, year = 2021}
@book{d, title = {Own macro}, publisher = pub, year = 2022}
`), 0o644))
	require.NoError(t, os.WriteFile(other, []byte(`@article{x, title = {No strings here}, journal = {J}}`), 0o644))

	m, err := corpus.FileMacros(t.Context(), mustRead(t, abbrev))
	require.NoError(t, err)
	assert.Equal(t, corpus.Macros{"ieee_j_pami": "{IEEE} Trans. Pattern Anal. Mach. Intell.", "pub": "ACM", "both": "ACM Press"}, m)
	m, err = corpus.FileMacros(t.Context(), mustRead(t, other))
	require.NoError(t, err)
	assert.Nil(t, m, "a file without @string")

	// Alone, refs.bib lacks the macro: the entry is an error naming it.
	read := func(opts corpus.ReadOptions) (map[string]corpus.Record, []*corpus.ParseError) {
		recs := map[string]corpus.Record{}
		var errs []*corpus.ParseError
		require.NoError(t, corpus.ReadFileWith(t.Context(), refs, opts, func(r corpus.Record) error {
			recs[r.Key] = r
			return nil
		}, func(e *corpus.ParseError) { errs = append(errs, e) }))
		return recs, errs
	}
	recs, errs := read(corpus.ReadOptions{})
	assert.NotContains(t, recs, "a")
	require.Len(t, errs, 3)
	assert.ErrorIs(t, errs[0], corpus.ErrUndefinedMacro)
	assert.Contains(t, errs[0].Error(), `refs.bib:2: undefined @string macro "ieee_j_pami" in field "journal"`)

	// With the macros of the files read together (in order: a later
	// file's definition wins, the file's own definition wins in it).
	shared, err := corpus.SharedMacros(t.Context(), []string{abbrev, refs, other, filepath.Join(dir, "missing.bib"), filepath.Join(dir, "x.json")})
	require.NoError(t, err)
	assert.Equal(t, "Springer", shared.Macros["pub"], "refs.bib, read after abbrev.bib, redefines pub")
	assert.Equal(t, map[string]corpus.MacroConflict{"pub": {Name: "pub",
		Used: corpus.MacroDef{File: refs, Value: "Springer"}, Others: []corpus.MacroDef{{File: abbrev, Value: "ACM"}}}}, shared.Conflicts)
	opts := shared.For(refs)
	assert.Empty(t, opts.Conflicts, "for refs.bib, only abbrev.bib defines pub besides its own definition")
	assert.Equal(t, "ACM", opts.Macros["pub"], "above its own definition, refs.bib has abbrev.bib's pub")
	recs, errs = read(opts)
	require.Contains(t, recs, "a")
	assert.Equal(t, "IEEE Trans. Pattern Anal. Mach. Intell.", recs["a"].Paper.Venue)
	assert.Equal(t, "ACM Press", recs["b"].Paper.Publisher, "a macro defined with another macro keeps its value")
	require.Len(t, errs, 1, "a macro no file defines is still an error")
	assert.Contains(t, errs[0].Error(), `refs.bib:4: undefined @string macro "nowhere"`)
	assert.Equal(t, "a", recs["a"].Ref, "records keep their refs")
	assert.Empty(t, recs["d"].Warnings, "an entry that uses the file's own definition of a conflicting name is not warned")

	// The file's own definition wins over the shared one.
	recs, _ = read(corpus.ReadOptions{Macros: corpus.Macros{"pub": "ACM", "ieee_j_pami": "PAMI"}})
	assert.Equal(t, "Springer", recs["d"].Paper.Publisher)
	assert.Equal(t, "PAMI", recs["a"].Paper.Venue)

	// The digest does not depend on order and follows every value.
	assert.Empty(t, corpus.Macros(nil).Digest())
	d := shared.Macros.Digest()
	assert.Len(t, d, 64)
	assert.Equal(t, d, corpus.Macros{"both": "ACM Press", "ieee_j_pami": "{IEEE} Trans. Pattern Anal. Mach. Intell.", "pub": "Springer"}.Digest())
	assert.NotEqual(t, d, corpus.Macros{"both": "ACM Press", "ieee_j_pami": "{IEEE} Trans. Pattern Anal. Mach. Intell.", "pub": "Springe"}.Digest())
	assert.NotEqual(t, corpus.Macros{"ab": "c"}.Digest(), corpus.Macros{"a": "bc"}.Digest())
	assert.NotEqual(t, d, shared.Digest(), "the shared digest covers the conflicting definitions too")
	assert.Equal(t, d, corpus.Shared{Macros: shared.Macros}.Digest(), "without conflicts it is the macros' digest")
}

// Two files of one run define a macro differently (IEEEabrv.bib and
// IEEEfull.bib given together): a third file's entry that uses it gets the
// later file's value, as in BibTeX, and a warning naming both values.
func TestSharedMacroConflicts(t *testing.T) {
	dir := t.TempDir()
	abrv := filepath.Join(dir, "IEEEabrv.bib")
	full := filepath.Join(dir, "IEEEfull.bib")
	refs := filepath.Join(dir, "refs.bib")
	require.NoError(t, os.WriteFile(abrv, []byte(`@string{IEEE_J_IA = "{IEEE} Trans. Ind. Appl."}
@string{IEEE_O_CSS = "{IEEE} Computer Society"}
@string{same = "Same everywhere"}
`), 0o644))
	require.NoError(t, os.WriteFile(full, []byte(`@string{IEEE_J_IA = "{IEEE} Transactions on Industry Applications"}
@string{IEEE_O_CSS = "{IEEE} Computer Society"}
@string{same = "Same
   everywhere"}
`), 0o644))
	require.NoError(t, os.WriteFile(refs, []byte(`@article{uses, title = {Motors}, journal = IEEE_J_IA, year = 2001}
@article{twice, title = {Drives}, journal = IEEE_J_IA, note = ieee_j_ia # " (special issue)", year = 2002}
@book{agreed, title = {Agreed}, publisher = IEEE_O_CSS # ", " # same, year = 2003}
@article{ignored, title = {Unread field}, journal = {J}, acknowledgement = IEEE_J_IA, year = 2004}
@string{special = IEEE_J_IA # " (Special issue)"}
@string{again = special}
@article{derived, title = {Derived}, journal = again, year = 2006}
@string{IEEE_J_IA = "Own value"}
@article{own, title = {Own}, journal = IEEE_J_IA, year = 2005}
@string{special = "Plain"}
@article{redefined, title = {Redefined}, journal = special, year = 2007}
`), 0o644))
	shared, err := corpus.SharedMacros(t.Context(), []string{abrv, full, refs})
	require.NoError(t, err)
	require.Len(t, shared.Conflicts, 1, "same values in two files (white space aside) are no conflict: %v", shared.Conflicts)
	c := shared.Conflicts["ieee_j_ia"]
	assert.Equal(t, corpus.MacroDef{File: refs, Value: "Own value"}, c.Used, "the last file's definition is used")
	assert.Equal(t, []corpus.MacroDef{{abrv, "{IEEE} Trans. Ind. Appl."}, {full, "{IEEE} Transactions on Industry Applications"}}, c.Others)

	// A file given twice conflicts with nobody (it once crashed For).
	twice, err := corpus.SharedMacros(t.Context(), []string{abrv, abrv})
	require.NoError(t, err)
	assert.Empty(t, twice.Conflicts)
	assert.Equal(t, "{IEEE} Trans. Ind. Appl.", twice.For(abrv).Macros["ieee_j_ia"])

	// refs.bib's entries above its own definition have the last of the
	// other files' values (IEEEfull.bib's), as in the text BibTeX reads.
	opts := shared.For(refs)
	assert.Equal(t, map[string]corpus.MacroConflict{"ieee_j_ia": {Name: "ieee_j_ia",
		Used: corpus.MacroDef{File: full, Value: "{IEEE} Transactions on Industry Applications"}, Others: []corpus.MacroDef{{abrv, "{IEEE} Trans. Ind. Appl."}}}}, opts.Conflicts)
	assert.Equal(t, shared.Macros, shared.For(filepath.Join(dir, "none.bib")).Macros, "a file that defines nothing has the shared table")
	recs := map[string]corpus.Record{}
	require.NoError(t, corpus.ReadFileWith(t.Context(), refs, opts,
		func(r corpus.Record) error { recs[r.Key] = r; return nil },
		func(e *corpus.ParseError) { t.Errorf("unexpected error: %v", e) }))
	require.Len(t, recs, 7)
	assert.Equal(t, "IEEE Transactions on Industry Applications", recs["uses"].Paper.Venue)
	for _, key := range []string{"uses", "twice"} {
		require.Len(t, recs[key].Warnings, 1, "%s: one warning however often the macro is used: %v", key, recs[key].Warnings)
		w := recs[key].Warnings[0]
		assert.ErrorIs(t, w, corpus.ErrMacroConflict)
		assert.Equal(t, map[string]int{"uses": 1, "twice": 2}[key], w.Line)
		assert.Equal(t, refs+`:`+map[string]string{"uses": "1", "twice": "2"}[key]+`: warning: @string macro defined differently by the .bib files read together: "ieee_j_ia": `+
			full+` has "{IEEE} Transactions on Industry Applications", `+abrv+` has "{IEEE} Trans. Ind. Appl."; the entry has `+full+`'s (the file given last wins, as in BibTeX)`, w.Error())
	}
	for _, key := range []string{"agreed", "ignored", "own", "redefined"} {
		assert.Empty(t, recs[key].Warnings, "%s: no conflict used", key)
	}
	// A macro of the file defined from a conflicting one (through another)
	// passes the warning on to the entries that use it.
	assert.Equal(t, "IEEE Transactions on Industry Applications (Special issue)", recs["derived"].Paper.Venue)
	require.Len(t, recs["derived"].Warnings, 1)
	assert.ErrorIs(t, recs["derived"].Warnings[0], corpus.ErrMacroConflict)
	assert.Equal(t, 7, recs["derived"].Warnings[0].Line)
	assert.Equal(t, "Own value", recs["own"].Paper.Venue)

	// Without the conflicts (an older caller), the value is read the same, silently.
	recs2 := map[string]corpus.Record{}
	require.NoError(t, corpus.ReadFileWith(t.Context(), refs, corpus.ReadOptions{Macros: opts.Macros},
		func(r corpus.Record) error { recs2[r.Key] = r; return nil }, nil))
	assert.Equal(t, recs["uses"].Paper, recs2["uses"].Paper)
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

// Entries that hold data for the bibliography tools, not a work, are
// reported as ErrNotReference (with their line), not as bad records.
func TestNotReferenceEntries(t *testing.T) {
	src := `@Set{stdmodel, entryset = {glashow,weinberg}, annotation = {A set}}
@xdata{hostdata, publisher = {Host}, location = undefinedmacro}
@IEEEtranBSTCTL{IEEEexample:BSTcontrol,
  CTLuse_article_number = "yes",
}
@CONTROL{REVTEX41Control}
@article{glashow, title = {Partial symmetries of weak interactions}, year = 1961}
`
	var keys []string
	var errs []*corpus.ParseError
	require.NoError(t, corpus.ReadBibTeX(t.Context(), strings.NewReader(src), "refs.bib", func(r corpus.Record) error {
		keys = append(keys, r.Key)
		return nil
	}, func(e *corpus.ParseError) { errs = append(errs, e) }))
	assert.Equal(t, []string{"glashow"}, keys)
	require.Len(t, errs, 4)
	for i, line := range []int{1, 2, 3, 6} {
		assert.ErrorIs(t, errs[i], corpus.ErrNotReference)
		assert.Equal(t, line, errs[i].Line)
	}
	assert.Contains(t, errs[0].Error(), "refs.bib:1: not a reference: @set is a biblatex entry set")
	assert.Contains(t, errs[2].Error(), "@ieeetranbstctl is IEEEtran.bst's style options; skipped")
}

// BenchmarkSharedMacros is the scan `citefind index` makes of a run's .bib
// files for @string definitions, over ACM-CR's 903 files (none has one):
// go test -run '^$' -bench SharedMacros ./corpus/
func BenchmarkSharedMacros(b *testing.B) {
	files, _ := filepath.Glob(filepath.Join(datadir.Bench("acm-cr"), "data", "acm-dl", "*", "*.bib"))
	if len(files) == 0 {
		b.Skipf("ACM-CR data not found; set %s to the benchmark data folder", datadir.Env)
	}
	for range b.N {
		m, err := corpus.SharedMacros(b.Context(), files)
		if err != nil || len(m.Macros) != 0 {
			b.Fatalf("%d macros, %v", len(m.Macros), err)
		}
	}
}
