package corpus

import (
	"context"
	"encoding/json"
	"fmt"
)

// Each calls fn for every paper in ID order, streaming them from the
// database. It stops at the first error from fn and returns it.
func (s *Store) Each(ctx context.Context, fn func(Paper) error) error {
	return s.each(ctx, "SELECT id, json FROM papers ORDER BY id", fn)
}

// EachSince calls fn, in ID order, for every paper inserted or changed by
// an Ingest after generation gen. Together with RemovedSince it lets an
// index built at gen catch up with the store.
func (s *Store) EachSince(ctx context.Context, gen int64, fn func(Paper) error) error {
	return s.each(ctx, "SELECT id, json FROM papers WHERE updated_gen > ? ORDER BY id", fn, gen)
}

func (s *Store) each(ctx context.Context, query string, fn func(Paper) error, args ...any) error {
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("each paper: %w", err)
	}
	defer rows.Close()
	for n := 0; rows.Next(); n++ {
		if n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("each paper: %w", err)
			}
		}
		var id, js string
		if err := rows.Scan(&id, &js); err != nil {
			return fmt.Errorf("each paper: %w", err)
		}
		p, err := decodePaper(id, js)
		if err != nil {
			return fmt.Errorf("each paper: %w", err)
		}
		if err := fn(p); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("each paper: %w", err)
	}
	return nil
}

// CountChangedSince returns how many papers EachSince(gen) would yield.
func (s *Store) CountChangedSince(ctx context.Context, gen int64) (int, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM papers WHERE updated_gen > ?", gen).Scan(&n); err != nil {
		return 0, fmt.Errorf("count changed since %d: %w", gen, err)
	}
	return n, nil
}

// RemovedSince returns, sorted, the IDs removed after generation gen
// (by Remove, or absorbed into another paper by Ingest) and not stored
// again since.
func (s *Store) RemovedSince(ctx context.Context, gen int64) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT id FROM removed WHERE gen > ? ORDER BY id", gen)
	if err != nil {
		return nil, fmt.Errorf("removed since %d: %w", gen, err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("removed since %d: %w", gen, err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("removed since %d: %w", gen, err)
	}
	return ids, nil
}

// Remove deletes the papers with these IDs or aliases (resolved as by
// Resolve), with their aliases and records, in one transaction. It
// returns how many papers it deleted; unknown ids are ignored. A removed
// paper comes back only when a file holding it is read again: changed, or
// with --force (IngestSource treats its records as new).
func (s *Store) Remove(ctx context.Context, ids ...string) (int, error) {
	n, err := s.remove(ctx, ids)
	return n, withCtxErr(ctx, err)
}

func (s *Store) remove(ctx context.Context, ids []string) (int, error) {
	if len(ids) == 0 {
		if err := ctx.Err(); err != nil {
			return 0, fmt.Errorf("remove: %w", err)
		}
		return 0, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("remove: begin: %w", err)
	}
	defer tx.Rollback()
	res, err := lookup(ctx, tx, ids, false)
	if err != nil {
		return 0, fmt.Errorf("remove: %w", err)
	}
	var del []string
	for _, v := range res {
		if v[0] != "" {
			del = append(del, v[0])
		}
	}
	if len(del) == 0 {
		return 0, nil
	}
	arg, err := json.Marshal(del)
	if err != nil {
		return 0, fmt.Errorf("remove: %w", err)
	}
	gen, err := generation(ctx, tx)
	if err != nil {
		return 0, fmt.Errorf("remove: %w", err)
	}
	gen++
	if _, err := tx.ExecContext(ctx, `INSERT INTO removed (id, gen)
		SELECT id, ? FROM papers WHERE id IN (SELECT value FROM json_each(?))
		ON CONFLICT (id) DO UPDATE SET gen = excluded.gen`, gen, string(arg)); err != nil {
		return 0, fmt.Errorf("remove: tombstones: %w", err)
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM records WHERE id IN (SELECT value FROM json_each(?))", string(arg)); err != nil {
		return 0, fmt.Errorf("remove: records: %w", err)
	}
	r, err := tx.ExecContext(ctx, "DELETE FROM papers WHERE id IN (SELECT value FROM json_each(?))", string(arg))
	if err != nil {
		return 0, fmt.Errorf("remove: %w", err)
	}
	n, err := r.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("remove: %w", err)
	}
	if n > 0 {
		if _, err := tx.ExecContext(ctx, "UPDATE generation SET n = ?", gen); err != nil {
			return 0, fmt.Errorf("remove: bump generation: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("remove: commit: %w", err)
	}
	return int(n), nil
}
