package corpus

import (
	"context"
	"encoding/json"
	"fmt"
)

// resolveCTE resolves the asked keys given as ?1, a JSON array of
// [asked, EscapeID(asked), foldKey(asked)] triples, to the table best(k,
// id): the candidates of the lowest priority found. A key with two rows is
// ambiguous.
const resolveCTE = `
WITH q(k, e, f) AS MATERIALIZED (
	SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]') FROM json_each(?1)
),
c(k, id, pri) AS (
	SELECT q.k, p.id, 1 FROM q JOIN papers p ON p.id = q.e
	UNION ALL SELECT q.k, a.id, 2 FROM q JOIN aliases a ON a.alias = q.e
	UNION ALL SELECT q.k, p.id, 3 FROM q JOIN papers p ON p.id = q.f
	UNION ALL SELECT q.k, a.id, 4 FROM q JOIN aliases a ON a.fold = q.f
),
ranked(k, id, pri, best) AS (
	SELECT k, id, pri, min(pri) OVER (PARTITION BY k) FROM c
),
best(k, id) AS (
	SELECT DISTINCT k, id FROM ranked WHERE pri = best
)`

// lookupQuery is lookup's SQL: resolved keys, with the paper JSON when
// withJSON.
func lookupQuery(withJSON bool) string {
	if !withJSON {
		return resolveCTE + "\nSELECT k, id, '' FROM best"
	}
	// CROSS JOIN keeps best as the outer loop: SQLite 3.54's planner
	// otherwise scans every paper (the whole JSON column) and probes best
	// through a Bloom filter, 200–300 ms on ACM-CR instead of well under
	// 1 ms (TestLookupPlanDoesNotScanPapers).
	return resolveCTE + "\nSELECT b.k, b.id, p.json FROM best b CROSS JOIN papers p ON p.id = b.id"
}

// lookup resolves asked keys in one query. It returns, per resolved key,
// the paper ID and (withJSON) its CSL-JSON; ambiguous keys map to "".
func lookup(ctx context.Context, q queryer, asked []string, withJSON bool) (map[string][2]string, error) {
	out := make(map[string][2]string, len(asked))
	if len(asked) == 0 {
		return out, nil
	}
	seen := make(map[string]bool, len(asked))
	pairs := make([][3]string, 0, len(asked))
	for _, a := range asked {
		if !seen[a] {
			seen[a] = true
			pairs = append(pairs, [3]string{a, EscapeID(a), foldKey(a)})
		}
	}
	arg, err := json.Marshal(pairs)
	if err != nil {
		return nil, err
	}
	rows, err := q.QueryContext(ctx, lookupQuery(withJSON), string(arg))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var k, id, js string
		if err := rows.Scan(&k, &id, &js); err != nil {
			return nil, err
		}
		if prev, dup := out[k]; dup && prev[0] != id {
			out[k] = [2]string{}
			continue
		}
		out[k] = [2]string{id, js}
	}
	return out, rows.Err()
}

// Resolve maps each asked ID or alias to its paper's ID, in one query.
// A key is looked up in its safe-ID form (EscapeID: "a b" finds the alias
// "a%20b" of the key "a b"). Lookup order, first hit wins: a paper ID as
// given; an alias as given (case-sensitive); then case-insensitively (DOIs also with "doi:" or
// resolver URL prefix, arXiv ids with "arXiv:" prefix or version): a paper
// ID, then an alias — where several papers' aliases match, the key is
// ambiguous and left out. Unknown keys are absent from the map.
func (s *Store) Resolve(ctx context.Context, idsOrAliases []string) (map[string]string, error) {
	res, err := lookup(ctx, s.db, idsOrAliases, false)
	if err != nil {
		return nil, fmt.Errorf("resolve: %w", err)
	}
	out := make(map[string]string, len(res))
	for k, v := range res {
		if v[0] != "" {
			out[k] = v[0]
		}
	}
	return out, nil
}

// Get returns the paper with this ID or alias (resolved as by Resolve). It
// returns an error wrapping ErrNotFound or ErrAmbiguous when there is no
// such paper or no single one.
func (s *Store) Get(ctx context.Context, idOrAlias string) (Paper, error) {
	res, err := lookup(ctx, s.db, []string{idOrAlias}, true)
	if err != nil {
		return Paper{}, fmt.Errorf("get %q: %w", idOrAlias, err)
	}
	v, ok := res[idOrAlias]
	switch {
	case !ok:
		return Paper{}, fmt.Errorf("get %q: %w", idOrAlias, ErrNotFound)
	case v[0] == "":
		return Paper{}, fmt.Errorf("get %q: %w", idOrAlias, ErrAmbiguous)
	}
	return decodePaper(v[0], v[1])
}

// GetMany returns the papers for the asked IDs or aliases, in one query,
// keyed by the ids as asked. Unknown and ambiguous ones are absent.
func (s *Store) GetMany(ctx context.Context, idsOrAliases []string) (map[string]Paper, error) {
	res, err := lookup(ctx, s.db, idsOrAliases, true)
	if err != nil {
		return nil, fmt.Errorf("get many: %w", err)
	}
	out := make(map[string]Paper, len(res))
	byID := make(map[string]Paper, len(res))
	for k, v := range res {
		if v[0] == "" {
			continue
		}
		p, ok := byID[v[0]]
		if !ok {
			if p, err = decodePaper(v[0], v[1]); err != nil {
				return nil, fmt.Errorf("get many: %w", err)
			}
			byID[v[0]] = p
		}
		out[k] = p
	}
	return out, nil
}

// byIDQuery is GetByID's SQL; CROSS JOIN keeps the asked IDs as the outer
// loop (see lookupQuery).
const byIDQuery = `SELECT p.id, p.json FROM json_each(?1) j CROSS JOIN papers p ON p.id = j.value`

// GetByID returns the papers with exactly these IDs (paper IDs as stored,
// not aliases), in one query; unknown IDs are absent. It is GetMany
// without alias resolution: the hits of an index name papers by their
// IDs, and a reranked query looks up 100 of them (on ACM-CR's store,
// 100 papers in about a third of GetMany's time: BenchmarkGetByID).
func (s *Store) GetByID(ctx context.Context, ids []string) (map[string]Paper, error) {
	out := make(map[string]Paper, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	arg, err := json.Marshal(ids)
	if err != nil {
		return nil, fmt.Errorf("get by id: %w", err)
	}
	rows, err := s.db.QueryContext(ctx, byIDQuery, string(arg))
	if err != nil {
		return nil, fmt.Errorf("get by id: %w", withCtxErr(ctx, err))
	}
	defer rows.Close()
	for rows.Next() {
		var id, js string
		if err := rows.Scan(&id, &js); err != nil {
			return nil, fmt.Errorf("get by id: %w", err)
		}
		if _, dup := out[id]; dup {
			continue
		}
		p, err := decodePaper(id, js)
		if err != nil {
			return nil, fmt.Errorf("get by id: %w", err)
		}
		out[id] = p
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("get by id: %w", withCtxErr(ctx, err))
	}
	return out, nil
}

// Items returns the CSL-JSON items of the papers with the asked IDs or
// aliases (resolved as by Resolve), in one query, keyed by the ids as
// asked; unknown and ambiguous ones are absent. A paper's item is the
// merge of its records' items as they were read (see MergeItems: the
// first record's item, in precedence order, completed with the variables
// it lacks from the later ones) with "id" set to the paper's ID. It is
// what a CSL processor takes (citeproc's updateItems).
func (s *Store) Items(ctx context.Context, idsOrAliases []string) (map[string]json.RawMessage, error) {
	res, err := lookup(ctx, s.db, idsOrAliases, true)
	if err != nil {
		return nil, fmt.Errorf("items: %w", err)
	}
	out := make(map[string]json.RawMessage, len(res))
	for k, v := range res {
		if v[0] != "" {
			out[k] = json.RawMessage(v[1])
		}
	}
	return out, nil
}
