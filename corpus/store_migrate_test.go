package corpus_test

import (
	"database/sql"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/corpus"
)

// TestStoreMigratesV3 opens a version 3 store, whose records and papers
// hold citefind's reduced CSL-JSON (Paper.MarshalJSON) instead of the items
// as read: it keeps working as it is, and the next ingest of its files
// (all read again: the migration forgets which were ingested) fills in the
// full items.
func TestStoreMigratesV3(t *testing.T) {
	ctx := t.Context()
	bib := `@inproceedings{devlin2019bert,
  title = {{BERT}: Pre-training of Deep Bidirectional Transformers},
  author = {Devlin, Jacob},
  editor = {Burstein, Jill},
  booktitle = {Proceedings of NAACL},
  address = {Minneapolis, Minnesota},
  year = {2019},
  doi = {10.18653/v1/N19-1423}
}`
	var recs []corpus.Record
	require.NoError(t, corpus.ReadBibTeX(ctx, strings.NewReader(bib), "refs.bib", func(r corpus.Record) error {
		recs = append(recs, r)
		return nil
	}, nil))
	src := corpus.Source{Path: "refs.bib", Size: int64(len(bib)), ModTime: time.Unix(1, 0), SHA256: "ab"}

	s, path := openStore(t)
	_, err := s.IngestSource(ctx, src, recs)
	require.NoError(t, err)
	_, err = s.FinishSource(ctx, src, len(recs))
	require.NoError(t, err)
	require.NoError(t, s.Close())

	// Make it a version 3 store: the JSON columns hold the reduced form.
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	p := recs[0].Paper
	p.DOI = corpus.NormalizeDOI(p.DOI) // version 3 lower-cased DOIs
	old, err := json.Marshal(p)
	require.NoError(t, err)
	for _, q := range []string{"UPDATE records SET json = ?", "UPDATE papers SET json = ?"} {
		_, err = db.Exec(q, string(old))
		require.NoError(t, err)
	}
	_, err = db.Exec("PRAGMA user_version = 3")
	require.NoError(t, err)
	require.NoError(t, db.Close())

	s2, err := corpus.OpenStore(ctx, path)
	require.NoError(t, err)
	defer s2.Close()
	got, err := s2.Get(ctx, "devlin2019bert")
	require.NoError(t, err, "the old JSON still reads")
	assert.Equal(t, "10.18653/v1/n19-1423", got.ID)
	items, err := s2.Items(ctx, []string{"devlin2019bert"})
	require.NoError(t, err)
	assert.NotContains(t, string(items["devlin2019bert"]), "editor", "not filled before re-indexing")
	seen, err := s2.SourceSeen(ctx, src.Path, src.Size, src.ModTime, src.SHA256)
	require.NoError(t, err)
	assert.False(t, seen, "the migration makes the next index read every file again")

	st, err := s2.IngestSource(ctx, src, recs)
	require.NoError(t, err)
	assert.Equal(t, 1, st.Changed)
	_, err = s2.FinishSource(ctx, src, len(recs))
	require.NoError(t, err)
	items, err = s2.Items(ctx, []string{"devlin2019bert"})
	require.NoError(t, err)
	want, err := corpus.ItemWithID(recs[0].Item, "10.18653/v1/n19-1423")
	require.NoError(t, err)
	assert.Equal(t, string(want), string(items["devlin2019bert"]))
	got, err = s2.Get(ctx, "devlin2019bert")
	require.NoError(t, err)
	assert.Equal(t, "10.18653/v1/N19-1423", got.DOI, "the DOI as written")

	db, err = sql.Open("sqlite", path)
	require.NoError(t, err)
	defer db.Close()
	var v int
	require.NoError(t, db.QueryRow("PRAGMA user_version").Scan(&v))
	assert.Equal(t, 4, v)
}
