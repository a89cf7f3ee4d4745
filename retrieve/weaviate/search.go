package weaviate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/retrieve"
	"github.com/citefind/citefind/retrieve/sparse"
)

// maxLimit is Weaviate's default QUERY_MAXIMUM_RESULTS.
const maxLimit = 10000

// maxRepeat bounds how often a term is repeated in the candidate query
// (Weaviate weighs a repeated query term by its count).
const maxRepeat = 8

// BM25 returns up to k papers for an analysed, weighted query, best first,
// scored exactly as package sparse scores them (see the package doc):
// Weaviate's BM25 over the analysed text gives the candidates, which are
// re-scored with the collection-wide N, average field lengths and document
// frequencies. Equal scores are ordered by paper ID.
func (b *Backend) BM25(ctx context.Context, terms []retrieve.Term, k int) ([]corpus.Hit, error) {
	if k <= 0 {
		return nil, fmt.Errorf("weaviate: bm25: %w (got %d)", ErrBadK, k)
	}
	qts := make([]retrieve.Term, 0, len(terms))
	for _, t := range terms {
		if t.Weight > 0 && t.Text != "" && !math.IsInf(t.Weight, 0) {
			qts = append(qts, t)
		}
	}
	if len(qts) == 0 {
		return []corpus.Hit{}, nil
	}
	s, err := b.state(ctx)
	if err != nil {
		return nil, fmt.Errorf("weaviate: bm25: %w", err)
	}
	if !s.hasStats {
		return nil, fmt.Errorf("weaviate: bm25: %w: %s (no complete sync yet)", ErrNoCollection, b.cfg.Collection)
	}
	cands, err := b.candidates(ctx, qts, min(b.cfg.depth(k), maxLimit))
	if err != nil {
		return nil, fmt.Errorf("weaviate: bm25: %w", err)
	}
	distinct := make([]string, 0, len(qts))
	for _, t := range qts {
		if !slices.Contains(distinct, t.Text) {
			distinct = append(distinct, t.Text)
		}
	}
	fields := make([]string, len(b.scorers))
	for i, f := range b.scorers {
		fields[i] = f.name
	}
	dfs, err := b.docFreqs(ctx, s, fields, distinct)
	if err != nil {
		return nil, fmt.Errorf("weaviate: bm25: %w", err)
	}
	return b.rescore(s, qts, dfs, cands, k), nil
}

// candidate is one BM25 candidate: its ID and, per scored field, the
// term frequencies of the query terms and the field's length.
type candidate struct {
	id    string
	tf    []map[string]int // per scorer
	dl    []float64        // per scorer
	score float64
}

// candidateQuery is the query text of the candidate search: each distinct
// term repeated in proportion to its summed weight (at least once, at most
// maxRepeat times), since Weaviate weighs a query term by its count.
func candidateQuery(terms []retrieve.Term) string {
	w := map[string]float64{}
	var order []string
	for _, t := range terms {
		if _, ok := w[t.Text]; !ok {
			order = append(order, t.Text)
		}
		w[t.Text] += t.Weight
	}
	var top float64
	for _, v := range w {
		top = max(top, v)
	}
	var sb strings.Builder
	for _, t := range order {
		n := int(math.Round(maxRepeat * w[t] / top))
		n = min(max(n, 1), maxRepeat)
		for range n {
			if sb.Len() > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(t)
		}
	}
	return sb.String()
}

// candidates asks Weaviate's BM25, once per scored field (in parallel),
// for depth papers each, and returns the union with the term frequencies
// and lengths of every scored field. One search per field keeps a paper
// whose score comes mostly from a lightly weighted field (the title) among
// the candidates.
func (b *Backend) candidates(ctx context.Context, terms []retrieve.Term, depth int) ([]candidate, error) {
	rows := make([][]map[string]*string, len(b.scorers))
	g, gctx := errgroup.WithContext(ctx)
	for i, f := range b.scorers {
		if b.searchFields != nil && !slices.Contains(b.searchFields, f.name) {
			continue
		}
		g.Go(func() error {
			r, err := b.search(gctx, terms, f.name, depth)
			rows[i] = r
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, t := range terms {
		want[t.Text] = true
	}
	seen := map[string]bool{}
	var cands []candidate
	for _, rs := range rows {
		for _, r := range rs {
			pid := r[propPID]
			if pid == nil || seen[*pid] {
				continue
			}
			seen[*pid] = true
			c := candidate{id: *pid, tf: make([]map[string]int, len(b.scorers)), dl: make([]float64, len(b.scorers))}
			for i, f := range b.scorers {
				c.tf[i] = map[string]int{}
				v := r[f.name]
				if v == nil {
					continue
				}
				toks := strings.Fields(*v)
				c.dl[i] = float64(len(toks))
				for _, t := range toks {
					if want[t] {
						c.tf[i][t]++
					}
				}
			}
			cands = append(cands, c)
		}
	}
	return cands, nil
}

// search runs Weaviate's BM25 on one field and returns the rows (pid and
// every scored field).
func (b *Backend) search(ctx context.Context, terms []retrieve.Term, field string, depth int) ([]map[string]*string, error) {
	var sel strings.Builder
	sel.WriteString(propPID)
	for _, f := range b.scorers {
		sel.WriteString(" " + f.name)
	}
	q := fmt.Sprintf(`{ Get { %s(%sbm25: {query: %s, properties: [%q]}, limit: %d) { %s } } }`,
		b.cfg.Collection, b.clArg(), gqlString(candidateQuery(terms)), field, depth, sel.String())
	var out struct {
		Get map[string][]map[string]*string `json:"Get"`
	}
	if err := b.c.graphql(ctx, q, &out, b.cfg.timeout()); err != nil {
		return nil, fmt.Errorf("candidates (%s): %w", field, err)
	}
	return out.Get[b.cfg.Collection], nil
}

// rescore scores the candidates with BM25 exactly as sparse.Retriever
// does (the same formula, field and term order, so the same float64
// sums) and returns the best k, ties by ID.
func (b *Backend) rescore(s *snapshot, terms []retrieve.Term, dfs map[string]int, cands []candidate, k int) []corpus.Hit {
	n := float64(s.n)
	k1p1 := b.k1 + 1
	c1 := b.k1 * (1 - b.b)
	for si, f := range b.scorers {
		c2 := 0.0
		if s.n > 0 && s.totals[f.name] > 0 {
			c2 = b.k1 * b.b / (s.totals[f.name] / n)
		}
		for _, t := range terms {
			df := dfs[f.name+"\x00"+t.Text]
			if df == 0 {
				continue
			}
			dff := float64(df)
			idf := math.Log(1 + (n-dff+0.5)/(dff+0.5))
			coef := f.weight * t.Weight * idf * k1p1
			for ci := range cands {
				c := &cands[ci]
				tf := float64(c.tf[si][t.Text])
				if tf == 0 {
					continue
				}
				c.score += coef * tf / (tf + c1 + c2*c.dl[si])
			}
		}
	}
	hits := make([]corpus.Hit, 0, len(cands))
	seen := make(map[string]bool, len(cands))
	for _, c := range cands {
		if c.score > 0 && !seen[c.id] {
			seen[c.id] = true
			hits = append(hits, corpus.Hit{ID: c.id, Score: c.score})
		}
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].Score != hits[j].Score {
			return hits[i].Score > hits[j].Score
		}
		return hits[i].ID < hits[j].ID
	})
	if len(hits) > k {
		hits = hits[:k]
	}
	return hits
}

// DocFreqs returns, for each analysed term, the number of papers whose
// text field holds it, and the number of papers.
func (b *Backend) DocFreqs(ctx context.Context, terms []string) (map[string]int, int, error) {
	s, err := b.state(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("weaviate: doc freqs: %w", err)
	}
	if !s.hasStats {
		return nil, 0, fmt.Errorf("weaviate: doc freqs: %w: %s (no complete sync yet)", ErrNoCollection, b.cfg.Collection)
	}
	dfs, err := b.docFreqs(ctx, s, []string{sparse.FieldText}, terms)
	if err != nil {
		return nil, 0, fmt.Errorf("weaviate: doc freqs: %w", err)
	}
	out := make(map[string]int, len(terms))
	for _, t := range terms {
		out[t] = dfs[sparse.FieldText+"\x00"+t]
	}
	return out, s.n, nil
}

// dfBatch is the number of terms asked in one request.
const dfBatch = 1000

// docFreqs returns the document frequency of every (field, term), keyed
// field + "\x00" + term, from the snapshot's cache or the document
// frequency objects Sync keeps (read at the read consistency level).
func (b *Backend) docFreqs(ctx context.Context, s *snapshot, fields, terms []string) (map[string]int, error) {
	out := make(map[string]int, len(fields)*len(terms))
	var missing []string
	s.dfMu.Lock()
	for _, t := range terms {
		if t == "" {
			continue
		}
		for _, f := range fields {
			key := f + "\x00" + t
			v, ok := s.df[key]
			if !ok {
				missing = append(missing, t)
				break
			}
			out[key] = v
		}
	}
	s.dfMu.Unlock()
	missing = slices.Compact(slices.Sorted(slices.Values(missing)))
	for start := 0; start < len(missing); start += dfBatch {
		chunk := missing[start:min(start+dfBatch, len(missing))]
		got, err := b.readDFNewest(ctx, chunk)
		if err != nil {
			return nil, fmt.Errorf("document frequencies: %w", err)
		}
		s.dfMu.Lock()
		if len(s.df) > maxCachedDF {
			s.df = map[string]int{}
		}
		for _, t := range chunk {
			for _, f := range b.fields() {
				key := f + "\x00" + t
				s.df[key] = got[key] // 0 when the term has no object
			}
			for _, f := range fields {
				key := f + "\x00" + t
				out[key] = got[key]
			}
		}
		s.dfMu.Unlock()
	}
	return out, nil
}

// readDFNewest reads the document frequency objects of terms at ALL when
// the collection is replicated, and at the read consistency level when
// that fails (a node down). A replica that missed a sync's updates while
// its node was down can keep its old counts well after the node returns
// (more than a minute, seen in TestClusterKill under load: every score
// through that node off); a read at ALL compares the replicas, answers
// with the newest object and repairs the others.
func (b *Backend) readDFNewest(ctx context.Context, terms []string) (map[string]int, error) {
	if b.cfg.replicas() <= 1 || b.cfg.Read != "" {
		return b.readDF(ctx, terms, b.clArg(), b.c.graphql)
	}
	if got, err := b.readDF(ctx, terms, "consistencyLevel: "+All+", ", b.c.graphqlOnce); err == nil {
		return got, nil
	}
	return b.readDF(ctx, terms, b.clArg(), b.c.graphql)
}

// readDF reads the document frequency objects of terms: field + "\x00" +
// term → count, for every stored field; absent terms are absent.
func (b *Backend) readDF(ctx context.Context, terms []string, cl string, gql func(context.Context, string, any, time.Duration) error) (map[string]int, error) {
	quoted := make([]string, len(terms))
	for i, t := range terms {
		quoted[i] = gqlString(t)
	}
	sel := propTerm
	for _, f := range b.fields() {
		sel += " " + dfPrefix + f
	}
	q := fmt.Sprintf(`{ Get { %s(%swhere: {path: [%q], operator: ContainsAny, valueText: [%s]}, limit: %d) { %s } } }`,
		b.cfg.dfClass(), cl, propTerm, strings.Join(quoted, ", "), len(terms), sel)
	var ans struct {
		Get map[string][]map[string]any `json:"Get"`
	}
	if err := gql(ctx, q, &ans, b.cfg.timeout()); err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, r := range ans.Get[b.cfg.dfClass()] {
		t, _ := r[propTerm].(string)
		for _, f := range b.fields() {
			if v, ok := r[dfPrefix+f].(float64); ok {
				out[f+"\x00"+t] = int(v)
			}
		}
	}
	return out, nil
}

// Vector returns up to k papers nearest to vec by cosine similarity (HNSW,
// approximate), best first; the score is the cosine similarity.
// ErrNoVectors when the collection holds none.
func (b *Backend) Vector(ctx context.Context, vec []float32, k int) ([]corpus.Hit, error) {
	if k <= 0 {
		return nil, fmt.Errorf("weaviate: vector: %w (got %d)", ErrBadK, k)
	}
	s, err := b.state(ctx)
	if err != nil {
		return nil, fmt.Errorf("weaviate: vector: %w", err)
	}
	if !s.exists || s.m.Dim == 0 || s.m.StatsGen < 0 {
		return nil, fmt.Errorf("weaviate: vector: %w", retrieve.ErrNoVectors)
	}
	if len(vec) != s.m.Dim {
		return nil, fmt.Errorf("weaviate: vector: %w: query vector of dimension %d, the collection's are %d (%s)", ErrSchemaMismatch, len(vec), s.m.Dim, s.m.Embedder)
	}
	vb, _ := json.Marshal(vec)
	q := fmt.Sprintf(`{ Get { %s(%snearVector: {vector: %s}, limit: %d) { %s _additional { distance } } } }`,
		b.cfg.Collection, b.clArg(), vb, min(k, maxLimit), propPID)
	var out struct {
		Get map[string][]struct {
			PID        string `json:"pid"`
			Additional struct {
				Distance float64 `json:"distance"`
			} `json:"_additional"`
		} `json:"Get"`
	}
	if err := b.c.graphql(ctx, q, &out, b.cfg.timeout()); err != nil {
		return nil, fmt.Errorf("weaviate: vector: %w", err)
	}
	rows := out.Get[b.cfg.Collection]
	hits := make([]corpus.Hit, 0, len(rows))
	for _, r := range rows {
		hits = append(hits, corpus.Hit{ID: r.PID, Score: 1 - r.Additional.Distance})
	}
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].Score != hits[j].Score {
			return hits[i].Score > hits[j].Score
		}
		return hits[i].ID < hits[j].ID
	})
	return hits, nil
}

// papersBatch is the number of papers asked in one lookup request.
const papersBatch = 500

// Papers returns the stored papers with the given IDs; IDs the collection
// does not hold are absent from the map.
func (b *Backend) Papers(ctx context.Context, ids []string) (map[string]corpus.Paper, error) {
	out := make(map[string]corpus.Paper, len(ids))
	uniq := slices.Compact(slices.Sorted(slices.Values(ids)))
	for start := 0; start < len(uniq); start += papersBatch {
		chunk := uniq[start:min(start+papersBatch, len(uniq))]
		quoted := make([]string, len(chunk))
		for i, id := range chunk {
			quoted[i] = gqlString(id)
		}
		q := fmt.Sprintf(`{ Get { %s(%swhere: {path: [%q], operator: ContainsAny, valueText: [%s]}, limit: %d) { %s %s } } }`,
			b.cfg.Collection, b.clArg(), propPID, strings.Join(quoted, ", "), len(chunk), propPID, propPaper)
		var ans struct {
			Get map[string][]struct {
				PID   string `json:"pid"`
				Paper string `json:"paper"`
			} `json:"Get"`
		}
		if err := b.c.graphql(ctx, q, &ans, b.cfg.timeout()); err != nil {
			return nil, fmt.Errorf("weaviate: papers: %w", err)
		}
		for _, r := range ans.Get[b.cfg.Collection] {
			var p corpus.Paper
			if err := json.Unmarshal([]byte(r.Paper), &p); err != nil {
				return nil, fmt.Errorf("weaviate: papers: stored paper %s: %w", r.PID, err)
			}
			p.ID = r.PID
			out[r.PID] = p
		}
	}
	if len(out) < len(uniq) {
		if err := b.papersByUUID(ctx, uniq, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// maxDirectLookups bounds how many IDs one Papers call reads by UUID.
const maxDirectLookups = 64

// papersByUUID reads the IDs of ids that out lacks (up to
// maxDirectLookups) by their object UUIDs. Lookups by ID search the pid
// filter index, which on a replica that async replication is filling can
// lag its objects (494 of 500 papers through a restarted node, for a
// minute, seen in TestClusterKill); a read by UUID goes to the object
// store instead. It reads at ALL, so that a replica that has the object
// answers for one that has not yet (and is repaired), and at the read
// consistency level when ALL fails (a node down). IDs the collection does
// not hold stay absent.
func (b *Backend) papersByUUID(ctx context.Context, ids []string, out map[string]corpus.Paper) error {
	var missing []string
	for _, id := range ids {
		if _, ok := out[id]; !ok {
			missing = append(missing, id)
		}
	}
	if len(missing) > maxDirectLookups {
		missing = missing[:maxDirectLookups]
	}
	found := make([]*corpus.Paper, len(missing))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	for i, id := range missing {
		g.Go(func() error {
			p, err := b.paperByUUID(gctx, id)
			found[i] = p
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return fmt.Errorf("weaviate: papers: %w", err)
	}
	for _, p := range found {
		if p != nil {
			out[p.ID] = *p
		}
	}
	return nil
}

// paperByUUID reads one paper by its object UUID: nil when the collection
// does not hold it.
func (b *Backend) paperByUUID(ctx context.Context, id string) (*corpus.Paper, error) {
	var obj struct {
		Properties struct {
			PID   string `json:"pid"`
			Paper string `json:"paper"`
		} `json:"properties"`
	}
	found, err := b.getObject(ctx, b.cfg.Collection, uuidFor(id), &obj)
	if err != nil {
		return nil, fmt.Errorf("read %s by UUID: %w", id, err)
	}
	if !found {
		return nil, nil
	}
	if obj.Properties.PID != id {
		// Another object under this UUID: not a paper citefind wrote.
		return nil, nil
	}
	var p corpus.Paper
	if err := json.Unmarshal([]byte(obj.Properties.Paper), &p); err != nil {
		return nil, fmt.Errorf("stored paper %s: %w", id, err)
	}
	p.ID = id
	return &p, nil
}

// getObject reads one object by UUID into out; found false when the
// collection does not hold it. A replicated collection is read with one
// attempt at ALL — every replica is asked and the newest object wins, so a
// replica that missed writes while its node was down does not answer
// alone (Weaviate repairs it) — and, when that fails (a node down; the
// failure is the cluster's, not the node's, so the client stays on its
// node), at the read level with the usual retries. A read= level named in
// the URL is used as it is.
func (b *Backend) getObject(ctx context.Context, class, uuid string, out any) (bool, error) {
	path := "/v1/objects/" + class + "/" + uuid
	level := All
	if b.cfg.replicas() > 1 && b.cfg.Read == "" {
		body, err := b.c.once(ctx, b.c.bases[b.c.pick()], http.MethodGet, path+"?consistency_level="+All, nil, b.cfg.timeout())
		var se *StatusError
		switch {
		case errors.As(err, &se) && se.Code == http.StatusNotFound:
			return false, nil
		case err == nil && json.Unmarshal(body, out) == nil:
			return true, nil
		}
		level = b.cfg.readLevel()
	} else if b.cfg.replicas() > 1 {
		level = b.cfg.readLevel()
	}
	err := b.c.do(ctx, http.MethodGet, path+"?consistency_level="+level, nil, out, b.cfg.timeout())
	var se *StatusError
	if errors.As(err, &se) && se.Code == http.StatusNotFound {
		return false, nil
	}
	return err == nil, err
}

// clArg is the consistencyLevel argument of a GraphQL Get (Weaviate only
// knows it for replicated collections).
func (b *Backend) clArg() string {
	if b.cfg.replicas() <= 1 {
		return ""
	}
	return "consistencyLevel: " + b.cfg.readLevel() + ", "
}

// fields returns the analysed fields every citefind collection of this
// backend's BM25 weights stores (text, title and the weighted ones).
func (b *Backend) fields() []string { return fieldsFor(b.weights) }
