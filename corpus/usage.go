package corpus

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// Search is one search behind a draft (usage tracking): its query text and
// the IDs of the papers it returned, best first.
type Search struct {
	// ID is SearchID(Query, Hits); RecordUsage computes it when empty.
	ID    string
	Query string
	// Hits are paper IDs, best first; a repeated ID counts at its first rank.
	Hits []string
	// FirstSeen is when a draft first recorded the search (set by Usage).
	FirstSeen time.Time
}

// SearchID identifies a search by its content: the SHA-256 (hex) of the
// query text and the hit IDs in order (repeats dropped), so the same
// search recorded twice is one search.
func SearchID(query string, hits []string) string {
	h := sha256.New()
	h.Write([]byte(query))
	for _, id := range dedupe(hits) {
		h.Write([]byte{0})
		h.Write([]byte(id))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// DraftUsage is what one resolved draft cited and the searches behind it.
type DraftUsage struct {
	// ID is the draft's key: recording a draft with the same ID again
	// replaces its citations and searches.
	ID string
	// Name says which draft it is (file paths, "-" for standard input).
	Name string
	// Content identifies the draft's content (a hash); informative.
	Content string
	// Cited are the cited paper IDs, in order of first citation.
	Cited []string
	// Searches are the searches behind the draft.
	Searches []Search
	// FirstResolved and ResolvedAt are set by Usage.
	FirstResolved, ResolvedAt time.Time
}

// Usage is every recorded draft and the searches behind them.
type Usage struct {
	Searches []Search     // by first seen, then ID
	Drafts   []DraftUsage // by first resolved, then ID; each with its searches
}

// RecordUsage records, in one transaction, a resolved draft's citations
// and the searches behind it, replacing what was recorded under the same
// draft ID before, so recording the same draft again changes nothing but
// its ResolvedAt. A search is stored once however many drafts link to it;
// searches no draft links to any more are deleted. Usage does not change
// the generation.
func (s *Store) RecordUsage(ctx context.Context, d DraftUsage) error {
	if d.ID == "" {
		return errors.New("record usage: draft has no ID")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.recordUsage(ctx, d)
	if err != nil {
		err = withCtxErr(ctx, fmt.Errorf("record usage of %s: %w", d.Name, err))
	}
	return err
}

func (s *Store) recordUsage(ctx context.Context, d DraftUsage) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback()
	now := time.Now().UnixNano()
	if _, err := tx.ExecContext(ctx, `INSERT INTO drafts (id, name, content, first_resolved, resolved_at)
		VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET name = excluded.name, content = excluded.content,
			resolved_at = excluded.resolved_at`, d.ID, d.Name, d.Content, now, now); err != nil {
		return err
	}
	for _, q := range []string{"DELETE FROM draft_citations WHERE draft = ?", "DELETE FROM draft_searches WHERE draft = ?"} {
		if _, err := tx.ExecContext(ctx, q, d.ID); err != nil {
			return err
		}
	}
	for i, id := range dedupe(d.Cited) {
		if _, err := tx.ExecContext(ctx, "INSERT INTO draft_citations (draft, paper, ord) VALUES (?, ?, ?)", d.ID, id, i+1); err != nil {
			return err
		}
	}
	for _, se := range d.Searches {
		hits := dedupe(se.Hits)
		id := se.ID
		if id == "" {
			id = SearchID(se.Query, hits)
		}
		r, err := tx.ExecContext(ctx, `INSERT INTO searches (id, query, hits, first_seen) VALUES (?, ?, ?, ?)
			ON CONFLICT (id) DO NOTHING`, id, se.Query, len(hits), now)
		if err != nil {
			return err
		}
		if n, err := r.RowsAffected(); err != nil {
			return err
		} else if n > 0 {
			for i, h := range hits {
				if _, err := tx.ExecContext(ctx, "INSERT INTO search_hits (search, rank, paper) VALUES (?, ?, ?)", id, i+1, h); err != nil {
					return err
				}
			}
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO draft_searches (draft, search) VALUES (?, ?) ON CONFLICT DO NOTHING", d.ID, id); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM searches WHERE id NOT IN (SELECT search FROM draft_searches)"); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// ForgetDraft deletes the usage record of the draft with this ID (and the
// searches no other draft links to). It reports whether there was one.
func (s *Store) ForgetDraft(ctx context.Context, id string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("forget draft: begin: %w", err)
	}
	defer tx.Rollback()
	r, err := tx.ExecContext(ctx, "DELETE FROM drafts WHERE id = ?", id)
	if err != nil {
		return false, fmt.Errorf("forget draft: %w", err)
	}
	n, err := r.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("forget draft: %w", err)
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM searches WHERE id NOT IN (SELECT search FROM draft_searches)"); err != nil {
		return false, fmt.Errorf("forget draft: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("forget draft: commit: %w", err)
	}
	return n > 0, nil
}

// Usage returns every recorded draft, with its citations and searches, and
// every search with its hits; see RecordUsage.
func (s *Store) Usage(ctx context.Context) (Usage, error) {
	u, err := s.usage(ctx)
	if err != nil {
		return Usage{}, fmt.Errorf("usage: %w", err)
	}
	return u, nil
}

func (s *Store) usage(ctx context.Context) (Usage, error) {
	var u Usage
	// One deferred (read) transaction, for a consistent view; BeginTx
	// would take the write lock (_txlock=immediate).
	tx, err := s.db.Conn(ctx)
	if err != nil {
		return u, err
	}
	defer tx.Close()
	if _, err := tx.ExecContext(ctx, "BEGIN DEFERRED"); err != nil {
		return u, err
	}
	defer tx.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
	byID := map[string]int{}
	err = queryRows(ctx, tx, "SELECT id, query, first_seen FROM searches ORDER BY first_seen, id", func(rows *sql.Rows) error {
		var se Search
		var ns int64
		if err := rows.Scan(&se.ID, &se.Query, &ns); err != nil {
			return err
		}
		se.FirstSeen = time.Unix(0, ns)
		byID[se.ID] = len(u.Searches)
		u.Searches = append(u.Searches, se)
		return nil
	})
	if err != nil {
		return u, err
	}
	err = queryRows(ctx, tx, "SELECT search, paper FROM search_hits ORDER BY search, rank", func(rows *sql.Rows) error {
		var sid, pid string
		if err := rows.Scan(&sid, &pid); err != nil {
			return err
		}
		if i, ok := byID[sid]; ok {
			u.Searches[i].Hits = append(u.Searches[i].Hits, pid)
		}
		return nil
	})
	if err != nil {
		return u, err
	}
	draftIdx := map[string]int{}
	err = queryRows(ctx, tx, "SELECT id, name, content, first_resolved, resolved_at FROM drafts ORDER BY first_resolved, id", func(rows *sql.Rows) error {
		var d DraftUsage
		var first, last int64
		if err := rows.Scan(&d.ID, &d.Name, &d.Content, &first, &last); err != nil {
			return err
		}
		d.FirstResolved, d.ResolvedAt = time.Unix(0, first), time.Unix(0, last)
		draftIdx[d.ID] = len(u.Drafts)
		u.Drafts = append(u.Drafts, d)
		return nil
	})
	if err != nil {
		return u, err
	}
	err = queryRows(ctx, tx, "SELECT draft, paper FROM draft_citations ORDER BY draft, ord", func(rows *sql.Rows) error {
		var did, pid string
		if err := rows.Scan(&did, &pid); err != nil {
			return err
		}
		if i, ok := draftIdx[did]; ok {
			u.Drafts[i].Cited = append(u.Drafts[i].Cited, pid)
		}
		return nil
	})
	if err != nil {
		return u, err
	}
	err = queryRows(ctx, tx, `SELECT ds.draft, ds.search FROM draft_searches ds JOIN searches se ON se.id = ds.search
		ORDER BY ds.draft, se.first_seen, se.id`, func(rows *sql.Rows) error {
		var did, sid string
		if err := rows.Scan(&did, &sid); err != nil {
			return err
		}
		i, ok := draftIdx[did]
		j, ok2 := byID[sid]
		if ok && ok2 {
			u.Drafts[i].Searches = append(u.Drafts[i].Searches, u.Searches[j])
		}
		return nil
	})
	return u, err
}
