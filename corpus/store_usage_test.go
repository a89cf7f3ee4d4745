package corpus_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/corpus"
)

// usageShape is a Usage without timestamps, for comparisons.
type usageShape struct {
	Searches map[string][]string // id → hits
	Queries  map[string]string   // id → query
	Drafts   map[string]draftShape
}

type draftShape struct {
	Name, Content string
	Cited         []string
	Searches      []string
}

func shape(t *testing.T, s *corpus.Store) usageShape {
	t.Helper()
	u, err := s.Usage(t.Context())
	require.NoError(t, err)
	sh := usageShape{Searches: map[string][]string{}, Queries: map[string]string{}, Drafts: map[string]draftShape{}}
	for _, se := range u.Searches {
		assert.False(t, se.FirstSeen.IsZero())
		sh.Searches[se.ID] = se.Hits
		sh.Queries[se.ID] = se.Query
	}
	for _, d := range u.Drafts {
		assert.False(t, d.ResolvedAt.IsZero())
		assert.False(t, d.ResolvedAt.Before(d.FirstResolved))
		ds := draftShape{Name: d.Name, Content: d.Content, Cited: d.Cited}
		for _, se := range d.Searches {
			ds.Searches = append(ds.Searches, se.ID)
			assert.Equal(t, sh.Searches[se.ID], se.Hits, "a draft's search carries its hits")
		}
		sh.Drafts[d.ID] = ds
	}
	return sh
}

func TestStoreUsage(t *testing.T) {
	s, path := openStore(t)
	ctx := t.Context()
	sa := corpus.Search{Query: "rank fusion", Hits: []string{"p1", "p2", "p3", "p2"}}
	sb := corpus.Search{Query: "dense retrieval", Hits: []string{"p4", "p2"}}
	ida := corpus.SearchID(sa.Query, sa.Hits)
	idb := corpus.SearchID(sb.Query, sb.Hits)
	require.NotEqual(t, ida, idb)
	assert.Equal(t, ida, corpus.SearchID("rank fusion", []string{"p1", "p2", "p3"}), "a repeated hit counts once")
	assert.NotEqual(t, ida, corpus.SearchID("rank fusion", []string{"p2", "p1", "p3"}), "rank order matters")

	empty, err := s.Usage(ctx)
	require.NoError(t, err)
	assert.Empty(t, empty.Drafts)
	assert.Empty(t, empty.Searches)

	d1 := corpus.DraftUsage{ID: "path:1", Name: "a.md", Content: "c1", Cited: []string{"p1", "p9", "p1"}, Searches: []corpus.Search{sa, sb}}
	require.NoError(t, s.RecordUsage(ctx, d1))
	want := usageShape{
		Searches: map[string][]string{ida: {"p1", "p2", "p3"}, idb: {"p4", "p2"}},
		Queries:  map[string]string{ida: "rank fusion", idb: "dense retrieval"},
		Drafts: map[string]draftShape{
			"path:1": {Name: "a.md", Content: "c1", Cited: []string{"p1", "p9"}, Searches: []string{ida, idb}},
		},
	}
	got := shape(t, s)
	assert.ElementsMatch(t, want.Drafts["path:1"].Searches, got.Drafts["path:1"].Searches)
	got.Drafts["path:1"] = draftShape{Name: "a.md", Content: "c1", Cited: got.Drafts["path:1"].Cited, Searches: want.Drafts["path:1"].Searches}
	assert.Equal(t, want, got)

	t.Run("idempotent", func(t *testing.T) {
		before, err := s.Usage(ctx)
		require.NoError(t, err)
		require.NoError(t, s.RecordUsage(ctx, d1))
		require.NoError(t, s.RecordUsage(ctx, d1))
		after, err := s.Usage(ctx)
		require.NoError(t, err)
		require.Len(t, after.Drafts, 1)
		assert.Equal(t, before.Searches, after.Searches, "searches and their first-seen time unchanged")
		assert.Equal(t, before.Drafts[0].FirstResolved, after.Drafts[0].FirstResolved)
		assert.Equal(t, before.Drafts[0].Cited, after.Drafts[0].Cited)
		assert.Equal(t, shape(t, s), got)
	})

	t.Run("second draft shares a search", func(t *testing.T) {
		d2 := corpus.DraftUsage{ID: "path:2", Name: "b.md", Cited: []string{"p4"}, Searches: []corpus.Search{sb}}
		require.NoError(t, s.RecordUsage(ctx, d2))
		sh := shape(t, s)
		assert.Len(t, sh.Searches, 2, "the shared search is stored once")
		assert.Len(t, sh.Drafts, 2)
		assert.Equal(t, []string{idb}, sh.Drafts["path:2"].Searches)
	})

	t.Run("edited draft replaces its record", func(t *testing.T) {
		sc := corpus.Search{Query: "late interaction", Hits: []string{"p5"}}
		d1e := corpus.DraftUsage{ID: "path:1", Name: "a.md", Content: "c2", Cited: []string{"p5"}, Searches: []corpus.Search{sc}}
		require.NoError(t, s.RecordUsage(ctx, d1e))
		sh := shape(t, s)
		require.Len(t, sh.Drafts, 2)
		assert.Equal(t, draftShape{Name: "a.md", Content: "c2", Cited: []string{"p5"}, Searches: []string{corpus.SearchID(sc.Query, sc.Hits)}}, sh.Drafts["path:1"])
		// sa was behind a.md only: gone; sb is still behind b.md.
		assert.Len(t, sh.Searches, 2)
		assert.NotContains(t, sh.Searches, ida)
		assert.Contains(t, sh.Searches, idb)
	})

	t.Run("forget", func(t *testing.T) {
		ok, err := s.ForgetDraft(ctx, "path:2")
		require.NoError(t, err)
		assert.True(t, ok)
		ok, err = s.ForgetDraft(ctx, "path:2")
		require.NoError(t, err)
		assert.False(t, ok)
		sh := shape(t, s)
		assert.Len(t, sh.Drafts, 1)
		assert.Len(t, sh.Searches, 1)
		var hits int
		db, err := sql.Open("sqlite", path)
		require.NoError(t, err)
		defer db.Close()
		require.NoError(t, db.QueryRow("SELECT count(*) FROM search_hits").Scan(&hits))
		assert.Equal(t, 1, hits, "the hits of deleted searches went with them")
	})

	t.Run("no ID", func(t *testing.T) {
		require.Error(t, s.RecordUsage(ctx, corpus.DraftUsage{Name: "x"}))
	})

	t.Run("usage does not change the generation", func(t *testing.T) {
		g, err := s.Generation(ctx)
		require.NoError(t, err)
		assert.Zero(t, g)
	})
}

func TestStoreUsageContextCanceled(t *testing.T) {
	s, _ := openStore(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := s.RecordUsage(ctx, corpus.DraftUsage{ID: "d", Cited: []string{"p"}})
	require.ErrorIs(t, err, context.Canceled)
	u, err := s.Usage(t.Context())
	require.NoError(t, err)
	assert.Empty(t, u.Drafts)
}

// TestStoreMigratesV2 opens a version 2 store (no usage tables): the
// tables are added, nothing else changes.
func TestStoreMigratesV2(t *testing.T) {
	s, path := openStore(t)
	ingest(t, s, rec(attention("10.5555/x"), "vaswani2017", "a.bib", 1))
	require.NoError(t, s.Close())
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	for _, tbl := range []string{"draft_searches", "draft_citations", "drafts", "search_hits", "searches"} {
		_, err = db.Exec("DROP TABLE " + tbl)
		require.NoError(t, err)
	}
	_, err = db.Exec("PRAGMA user_version = 2")
	require.NoError(t, err)
	require.NoError(t, db.Close())

	s2, err := corpus.OpenStore(t.Context(), path)
	require.NoError(t, err)
	defer s2.Close()
	p, err := s2.Get(t.Context(), "vaswani2017")
	require.NoError(t, err)
	assert.Equal(t, "10.5555/x", p.ID)
	require.NoError(t, s2.RecordUsage(t.Context(), corpus.DraftUsage{ID: "d", Cited: []string{p.ID}}))
	u, err := s2.Usage(t.Context())
	require.NoError(t, err)
	require.Len(t, u.Drafts, 1)
	assert.Equal(t, []string{"10.5555/x"}, u.Drafts[0].Cited)

	db, err = sql.Open("sqlite", path)
	require.NoError(t, err)
	defer db.Close()
	var v int
	require.NoError(t, db.QueryRow("PRAGMA user_version").Scan(&v))
	assert.Equal(t, 4, v)
}
