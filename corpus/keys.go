package corpus

import (
	"context"
	"fmt"
	"strings"
)

// Keys are the names a user gave a paper in their files: the record keys
// (BibTeX citation keys, CSL-JSON ids) of its records.
type Keys struct {
	// Key is the key of the paper's first record (by file precedence and
	// line) that has one other than the paper ID: the key the user cites
	// it by. "" when no record has one.
	Key string
	// Aliases are every record key of the paper, Key first, then in
	// record order, without repeats and without the paper ID.
	Aliases []string
}

// keysBatch bounds the IDs of one Keys query.
const keysBatch = 500

// Keys returns the record keys of the papers with the given IDs (not
// aliases); papers without any are absent from the map.
func (s *Store) Keys(ctx context.Context, ids []string) (map[string]Keys, error) {
	out := make(map[string]Keys, len(ids))
	ids = dedupe(ids)
	for start := 0; start < len(ids); start += keysBatch {
		batch := ids[start:min(len(ids), start+keysBatch)]
		args := make([]any, len(batch))
		for i, id := range batch {
			args[i] = id
		}
		q := "SELECT r.id, r.key FROM records r WHERE r.key <> '' AND r.id IN (?" + strings.Repeat(",?", len(batch)-1) + ") ORDER BY r.id, r.file, r.line, r.ref"
		rows, err := s.db.QueryContext(ctx, q, args...)
		if err != nil {
			return nil, fmt.Errorf("record keys: %w", err)
		}
		for rows.Next() {
			var id, key string
			if err := rows.Scan(&id, &key); err != nil {
				rows.Close()
				return nil, fmt.Errorf("record keys: %w", err)
			}
			if key == id {
				continue
			}
			k := out[id]
			seen := false
			for _, a := range k.Aliases {
				seen = seen || a == key
			}
			if seen {
				continue
			}
			if k.Key == "" {
				k.Key = key
			}
			k.Aliases = append(k.Aliases, key)
			out[id] = k
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("record keys: %w", err)
		}
	}
	return out, nil
}
