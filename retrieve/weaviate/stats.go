package weaviate

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/retrieve/sparse"
)

// counts are collection statistics, or changes to them: papers, the
// analysed length of each field, and per field and term the papers whose
// field holds the term (keyed field + "\x00" + term).
type counts struct {
	n      int64
	totals map[string]int64
	df     map[string]int64
}

func newCounts() *counts {
	return &counts{totals: map[string]int64{}, df: map[string]int64{}}
}

// add counts one paper's analysed fields (tokens per field) sign times.
func (c *counts) add(fields map[string][]string, sign int64) {
	c.n += sign
	for f, toks := range fields {
		c.totals[f] += sign * int64(len(toks))
		seen := make(map[string]bool, len(toks))
		for _, t := range toks {
			if !seen[t] {
				seen[t] = true
				c.df[f+"\x00"+t] += sign
			}
		}
	}
}

// analysed returns the analysed tokens of each field of p.
func analysed(p *corpus.Paper, fields []string) map[string][]string {
	out := make(map[string][]string, len(fields))
	for _, f := range fields {
		out[f] = sparse.Analyze(sparse.FieldValue(p, f))
	}
	return out
}

// oldFields reads the stored analysed fields of the objects of these
// paper IDs (those that exist), at the read consistency level: what an
// incremental Sync takes out of the statistics before it replaces or
// deletes them. (Weaviate 1.35 refuses a search over several shards at
// QUORUM or ALL while a node is down and the shards have different
// numbers of live replicas, so ONE it is with 2 replicas; a replica that
// missed writes and is not repaired yet can skew the kept counts until
// the next forced sync, and status shows the kept count against the
// objects.)
func (b *Backend) oldFields(ctx context.Context, ids []string, fields []string) (map[string]map[string][]string, error) {
	out := map[string]map[string][]string{}
	for start := 0; start < len(ids); start += papersBatch {
		chunk := ids[start:min(start+papersBatch, len(ids))]
		quoted := make([]string, len(chunk))
		for i, id := range chunk {
			quoted[i] = gqlString(id)
		}
		q := fmt.Sprintf(`{ Get { %s(%swhere: {path: [%q], operator: ContainsAny, valueText: [%s]}, limit: %d) { %s %s } } }`,
			b.cfg.Collection, b.clArg(), propPID, strings.Join(quoted, ", "), len(chunk), propPID, strings.Join(fields, " "))
		var ans struct {
			Get map[string][]map[string]*string `json:"Get"`
		}
		if err := b.c.graphql(ctx, q, &ans, b.cfg.writeTimeout()); err != nil {
			return nil, fmt.Errorf("weaviate: sync: read the papers to replace: %w", err)
		}
		for _, r := range ans.Get[b.cfg.Collection] {
			if r[propPID] == nil {
				continue
			}
			fs := map[string][]string{}
			for _, f := range fields {
				if v := r[f]; v != nil {
					fs[f] = strings.Fields(*v)
				} else {
					fs[f] = nil
				}
			}
			out[*r[propPID]] = fs
		}
	}
	return out, nil
}

// dfBatchWrite is the number of document-frequency objects per write.
const dfBatchWrite = 1000

// writeDF writes the document frequency objects of these terms (term →
// per-field counts).
func (s *syncRun) writeDF(ctx context.Context, byTerm map[string]map[string]int64) error {
	b := s.b
	terms := make([]string, 0, len(byTerm))
	for t := range byTerm {
		terms = append(terms, t)
	}
	slices.Sort(terms)
	for start := 0; start < len(terms); start += dfBatchWrite {
		chunk := terms[start:min(start+dfBatchWrite, len(terms))]
		objs := make([]object, len(chunk))
		for i, t := range chunk {
			props := map[string]any{propTerm: t}
			for _, f := range s.m.Fields {
				props[dfPrefix+f] = max(byTerm[t][f], 0)
			}
			objs[i] = object{Class: b.cfg.dfClass(), ID: uuidFor("df:" + t), Properties: props}
		}
		if _, err := s.writeObjects(ctx, objs, func(i int) string { return "term " + chunk[i] }); err != nil {
			return err
		}
	}
	return nil
}

// applyDelta adds the changes counted by an incremental Sync to the kept
// statistics: the document frequency objects of the changed terms, and N
// and the field totals in s.m.
func (s *syncRun) applyDelta(ctx context.Context, d *counts) error {
	byTerm := map[string]map[string]int64{}
	for key, v := range d.df {
		if v == 0 {
			continue
		}
		f, t, _ := strings.Cut(key, "\x00")
		if byTerm[t] == nil {
			byTerm[t] = map[string]int64{}
		}
		byTerm[t][f] += v
	}
	terms := make([]string, 0, len(byTerm))
	for t := range byTerm {
		terms = append(terms, t)
	}
	for start := 0; start < len(terms); start += dfBatch {
		chunk := terms[start:min(start+dfBatch, len(terms))]
		// A read-modify-write: the counts it adds to must be the newest
		// (a replica that missed a sync would turn its old counts into
		// new wrong ones).
		cur, err := s.b.readDFNewest(ctx, chunk)
		if err != nil {
			return fmt.Errorf("weaviate: sync: read document frequencies: %w", err)
		}
		for _, t := range chunk {
			for _, f := range s.m.Fields {
				byTerm[t][f] += int64(cur[f+"\x00"+t])
			}
		}
	}
	if err := s.writeDF(ctx, byTerm); err != nil {
		return err
	}
	tot, err := decodeTotals(s.m.Totals)
	if err != nil {
		return err
	}
	for f, v := range d.totals {
		tot[f] += v
	}
	s.m.N += d.n
	return s.setTotals(tot)
}

// recompute rebuilds the statistics from the store (every paper analysed
// again): after a first, forced, resumed or interrupted sync. Terms kept
// before that no paper holds any more get zero counts.
func (s *syncRun) recompute(ctx context.Context) error {
	c := newCounts()
	err := s.st.Each(ctx, func(p corpus.Paper) error {
		c.add(analysed(&p, s.m.Fields), 1)
		return nil
	})
	if err != nil {
		return fmt.Errorf("weaviate: sync: statistics: %w", err)
	}
	byTerm := map[string]map[string]int64{}
	for key, v := range c.df {
		f, t, _ := strings.Cut(key, "\x00")
		if byTerm[t] == nil {
			byTerm[t] = map[string]int64{}
		}
		byTerm[t][f] = v
	}
	old, err := s.b.allTerms(ctx)
	if err != nil {
		return err
	}
	for _, t := range old {
		if byTerm[t] == nil {
			byTerm[t] = map[string]int64{}
		}
	}
	if err := s.writeDF(ctx, byTerm); err != nil {
		return err
	}
	s.m.N = c.n
	return s.setTotals(c.totals)
}

func (s *syncRun) setTotals(tot map[string]int64) error {
	b, err := json.Marshal(tot)
	if err != nil {
		return err
	}
	s.m.Totals = string(b)
	return nil
}

func decodeTotals(js string) (map[string]int64, error) {
	tot := map[string]int64{}
	if js == "" {
		return tot, nil
	}
	if err := json.Unmarshal([]byte(js), &tot); err != nil {
		return nil, fmt.Errorf("weaviate: the kept field lengths: %w", err)
	}
	return tot, nil
}

// allTerms lists the terms of every document frequency object.
func (b *Backend) allTerms(ctx context.Context) ([]string, error) {
	var out []string
	after := ""
	for {
		cursor := ""
		if after != "" {
			cursor = ", after: " + gqlString(after)
		}
		q := fmt.Sprintf(`{ Get { %s(limit: %d%s) { %s _additional { id } } } }`, b.cfg.dfClass(), maxLimit, cursor, propTerm)
		var ans struct {
			Get map[string][]struct {
				Term       string `json:"term"`
				Additional struct {
					ID string `json:"id"`
				} `json:"_additional"`
			} `json:"Get"`
		}
		if err := b.c.graphql(ctx, q, &ans, b.cfg.writeTimeout()); err != nil {
			return nil, fmt.Errorf("weaviate: list the document frequencies: %w", err)
		}
		rows := ans.Get[b.cfg.dfClass()]
		for _, r := range rows {
			out = append(out, r.Term)
		}
		if len(rows) < maxLimit {
			return out, nil
		}
		after = rows[len(rows)-1].Additional.ID
	}
}
