package corpus

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLookupPlanDoesNotScanPapers pins the query plans of GetMany and
// GetByID: the
// papers table is searched by ID for each resolved key, never scanned.
// SQLite 3.54 chose a full scan of papers (every paper's JSON) with a
// Bloom filter for the plain JOIN, which made GetMany of 10 hits take
// 200–300 ms on ACM-CR's 108k papers instead of under 1 ms.
func TestLookupPlanDoesNotScanPapers(t *testing.T) {
	ctx := t.Context()
	s, err := OpenStore(ctx, filepath.Join(t.TempDir(), "papers.sqlite"))
	require.NoError(t, err)
	defer s.Close()
	var recs []Record
	for i := range 500 {
		p := Paper{Title: fmt.Sprintf("Paper number %d on retrieval", i), Year: 2000 + i%20,
			Authors: []Author{{Family: fmt.Sprintf("Author%d", i)}}, Abstract: strings.Repeat("words ", 200)}
		p.ID = PaperID(p)
		recs = append(recs, Record{Paper: p, Key: fmt.Sprintf("k%d", i), File: "x.bib", Line: i + 1, Kind: "article"})
	}
	_, err = s.Ingest(ctx, recs)
	require.NoError(t, err)
	// Close runs PRAGMA optimize, which writes planner statistics; the bad
	// plan needs them.
	_, err = s.db.ExecContext(ctx, "ANALYZE")
	require.NoError(t, err)
	arg, err := json.Marshal([][2]string{{recs[3].Paper.ID, foldKey(recs[3].Paper.ID)}, {"k7", "k7"}})
	require.NoError(t, err)
	ids, err := json.Marshal([]string{recs[3].Paper.ID, "k7"})
	require.NoError(t, err)
	for _, q := range []struct{ sql, arg string }{{lookupQuery(true), string(arg)}, {byIDQuery, string(ids)}} {
		rows, err := s.db.QueryContext(ctx, "EXPLAIN QUERY PLAN "+q.sql, q.arg)
		require.NoError(t, err)
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			require.NoError(t, rows.Scan(&id, &parent, &unused, &detail))
			plan = append(plan, detail)
			require.NotRegexp(t, `^SCAN (p|papers)\b`, detail, "full scan of papers in the plan of %s", q.sql)
		}
		require.NoError(t, rows.Err())
		rows.Close()
		require.NotEmpty(t, plan)
	}
	got, err := s.GetMany(ctx, []string{recs[3].Paper.ID, "k7"})
	require.NoError(t, err)
	require.Equal(t, recs[3].Paper.Title, got[recs[3].Paper.ID].Title)
	require.Equal(t, recs[7].Paper.Title, got["k7"].Title)
}
