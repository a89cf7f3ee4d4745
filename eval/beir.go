package eval

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/citefind/citefind/corpus"
)

// BEIR file names inside a collection folder.
const (
	BEIRCorpusFile  = "corpus.jsonl"
	BEIRQueriesFile = "queries.jsonl"
	BEIRQrelsDir    = "qrels"
	// DefaultBEIRSplit is the qrels split read when BEIROptions.Split is "".
	DefaultBEIRSplit = "test"
	// DefaultBEIRSeed seeds BEIROptions.Sample when Seed is 0.
	DefaultBEIRSeed = 1
)

// BEIROptions configure LoadBEIR. The zero value reads every judged query
// of the test split.
type BEIROptions struct {
	// Split names the judgements file qrels/SPLIT.tsv, e.g. "test",
	// "train", or ScisummNet's "keep_for_gold" and "clean". "" means
	// DefaultBEIRSplit.
	Split string
	// Sample, when > 0, keeps at most this many judged queries: those
	// whose ids hash lowest under Seed (FNV-1a 64 of the seed and the
	// id), in file order. The same ids, seed and size give the same
	// sample on every machine, and a larger sample contains a smaller
	// one. 0 keeps them all.
	Sample int
	// Seed seeds the sample; 0 means DefaultBEIRSeed.
	Seed uint64
}

// BEIR is a retrieval collection in the BEIR layout (Thakur et al.,
// 2021): corpus.jsonl, queries.jsonl and qrels/SPLIT.tsv in one folder.
type BEIR struct {
	Dir        string   // the collection folder
	Name       string   // the folder's base name, e.g. "scifact"
	Split      string   // the qrels split read, e.g. "test"
	CorpusPath string   // Dir/corpus.jsonl
	Set        TopicSet // named Split; judged by corpus ids (record keys, see ReadBEIRCorpus)
	// Judged is the number of judged queries of the split before
	// BEIROptions.Sample (equal to len(Set.Queries) without a sample).
	Judged int
}

// LoadBEIR reads the queries and the judgements of one split of the BEIR
// collection in dir; the corpus is read separately (ReadBEIRCorpus,
// ConvertBEIRCorpus on BEIR.CorpusPath), as it can be large.
//
// queries.jsonl holds one {"_id", "text", …} object per line; when a query
// has a non-empty "text_masked" (ScisummNet: the citation markers replaced
// by [CIT]) it is the query text, else "text". A "citing_paper_id", when
// present, becomes Query.Group, so that cross-validation keeps the
// sentences of one citing paper together. Other keys are ignored.
//
// qrels/SPLIT.tsv holds "query-id corpus-id score" lines separated by tabs
// (or spaces), with an optional header line of those three names; a pair is
// relevant when its score is above zero. The split's queries are the
// query ids of its qrels, in queries.jsonl order; a query whose every
// line scores 0 is listed in TopicSet.Unjudged, a qrels query id missing
// from queries.jsonl in TopicSet.Orphans. Queries of queries.jsonl that
// the split does not name belong to other splits and are not read.
//
// A malformed line of either file (not JSON, no "_id" or text, a repeated
// "_id"; not three fields, a score that is not an integer) is reported as
// "FILE:LINE: cause"; each file is read to the end and all of its problems
// come in one error. A split without any relevant pair gives
// ErrEmptyBenchmark.
func LoadBEIR(dir string, opts BEIROptions) (*BEIR, error) {
	split := opts.Split
	if split == "" {
		split = DefaultBEIRSplit
	}
	if split != filepath.Base(split) || strings.ContainsAny(split, `/\`) || split == "." || split == ".." {
		return nil, fmt.Errorf("beir: bad split name %q", split)
	}
	if opts.Sample < 0 {
		return nil, fmt.Errorf("beir: negative sample size %d", opts.Sample)
	}
	b := &BEIR{Dir: dir, Name: filepath.Base(filepath.Clean(dir)), Split: split,
		CorpusPath: filepath.Join(dir, BEIRCorpusFile)}
	qrelsPath := filepath.Join(dir, BEIRQrelsDir, split+".tsv")
	qrels, order, err := readBEIRQrels(qrelsPath)
	if err != nil {
		return nil, fmt.Errorf("beir: %w", err)
	}
	queriesPath := filepath.Join(dir, BEIRQueriesFile)
	queries, err := readBEIRQueries(queriesPath, qrels)
	if err != nil {
		return nil, fmt.Errorf("beir: %w", err)
	}
	set := TopicSet{Name: split}
	for _, q := range queries {
		rel := qrels[q.ID].relevant
		if len(rel) == 0 {
			set.Unjudged = append(set.Unjudged, q.ID)
			continue
		}
		q.Relevant = rel
		set.Queries = append(set.Queries, q)
	}
	found := make(map[string]bool, len(queries))
	for _, q := range queries {
		found[q.ID] = true
	}
	for _, id := range order {
		if !found[id] {
			set.Orphans = append(set.Orphans, id)
		}
	}
	slices.Sort(set.Orphans)
	b.Judged = len(set.Queries)
	if len(set.Queries) == 0 {
		return nil, fmt.Errorf("beir: %s: no judged query of split %q in %s: %w", qrelsPath, split, queriesPath, ErrEmptyBenchmark)
	}
	if opts.Sample > 0 && opts.Sample < len(set.Queries) {
		set.Queries = sampleQueries(set.Queries, opts.Sample, cmpOr(opts.Seed, DefaultBEIRSeed))
	}
	b.Set = set
	return b, nil
}

func cmpOr(x, def uint64) uint64 {
	if x == 0 {
		return def
	}
	return x
}

// sampleQueries keeps the n queries whose ids hash lowest under seed, in
// their original order.
func sampleQueries(qs []Query, n int, seed uint64) []Query {
	type keyed struct {
		h   uint64
		pos int
	}
	ks := make([]keyed, len(qs))
	var sb [8]byte
	binary.LittleEndian.PutUint64(sb[:], seed)
	for i, q := range qs {
		h := fnv.New64a()
		h.Write(sb[:])
		h.Write([]byte(q.ID))
		ks[i] = keyed{h.Sum64(), i}
	}
	slices.SortFunc(ks, func(a, b keyed) int {
		if a.h != b.h {
			if a.h < b.h {
				return -1
			}
			return 1
		}
		return a.pos - b.pos
	})
	keep := make([]int, n)
	for i := range n {
		keep[i] = ks[i].pos
	}
	slices.Sort(keep)
	out := make([]Query, n)
	for i, p := range keep {
		out[i] = qs[p]
	}
	return out
}

// beirJudged is one query's judgements in a qrels file.
type beirJudged struct {
	relevant []string // corpus ids with score > 0, first occurrence order, distinct
	line     int      // first line naming the query
}

// readBEIRQrels reads a BEIR qrels file: query id → judgements, and the
// query ids in first-occurrence order.
func readBEIRQrels(path string) (map[string]*beirJudged, []string, error) {
	out := map[string]*beirJudged{}
	var order []string
	dup := map[[2]string]bool{}
	err := readLines(path, func(n int, line []byte) error {
		fs := strings.Fields(string(line))
		if n == 1 && len(fs) == 3 && strings.EqualFold(fs[0], "query-id") && strings.EqualFold(fs[1], "corpus-id") && strings.EqualFold(fs[2], "score") {
			return nil // the header
		}
		if len(fs) != 3 {
			return fmt.Errorf("want 3 fields \"query-id corpus-id score\", got %d", len(fs))
		}
		score, err := strconv.Atoi(fs[2])
		if err != nil {
			return fmt.Errorf("score %q is not an integer", fs[2])
		}
		j := out[fs[0]]
		if j == nil {
			j = &beirJudged{line: n}
			out[fs[0]] = j
			order = append(order, fs[0])
		}
		if score <= 0 || dup[[2]string{fs[0], fs[1]}] {
			return nil
		}
		dup[[2]string{fs[0], fs[1]}] = true
		j.relevant = append(j.relevant, fs[1])
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return out, order, nil
}

// beirQuery is the wire form of one line of queries.jsonl. Unknown keys
// are ignored.
type beirQuery struct {
	ID         json.RawMessage `json:"_id"`
	Text       *string         `json:"text"`
	TextMasked *string         `json:"text_masked"`
	Citing     *string         `json:"citing_paper_id"`
}

// readBEIRQueries reads the queries of queries.jsonl that want names, in
// file order (Relevant not set). Every line is checked, wanted or not.
func readBEIRQueries(path string, want map[string]*beirJudged) ([]Query, error) {
	var out []Query
	seen := map[string]int{}
	err := readLines(path, func(n int, line []byte) error {
		q, err := parseBEIRQuery(line)
		switch {
		case err != nil:
			return err
		case seen[q.ID] != 0:
			return fmt.Errorf("duplicate _id %q (first on line %d)", q.ID, seen[q.ID])
		}
		seen[q.ID] = n
		if want[q.ID] != nil {
			out = append(out, q)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func parseBEIRQuery(line []byte) (Query, error) {
	var w beirQuery
	if err := json.Unmarshal(line, &w); err != nil {
		return Query{}, err
	}
	id, err := beirID(w.ID)
	if err != nil {
		return Query{}, err
	}
	text := ""
	if w.TextMasked != nil && strings.TrimSpace(*w.TextMasked) != "" {
		text = *w.TextMasked
	} else if w.Text != nil {
		text = *w.Text
	}
	if strings.TrimSpace(text) == "" {
		return Query{}, errors.New(`missing or empty "text"`)
	}
	q := Query{ID: id, Text: text}
	if w.Citing != nil {
		q.Group = strings.TrimSpace(*w.Citing)
	}
	return q, nil
}

// beirID reads an "_id", a string or (as some BEIR exports write) an
// integer.
func beirID(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", errors.New(`missing "_id"`)
	}
	var id string
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &id); err != nil {
			return "", fmt.Errorf(`"_id": %w`, err)
		}
	} else {
		var num json.Number
		if err := json.Unmarshal(raw, &num); err != nil {
			return "", fmt.Errorf(`"_id" must be a string or an integer, not %s`, raw)
		}
		if _, err := strconv.ParseInt(num.String(), 10, 64); err != nil {
			return "", fmt.Errorf(`"_id" %s is not an integer`, raw)
		}
		id = num.String()
	}
	if id = strings.TrimSpace(id); id == "" {
		return "", errors.New(`empty "_id"`)
	}
	return id, nil
}

// beirDoc is the wire form of one line of corpus.jsonl.
type beirDoc struct {
	ID    json.RawMessage `json:"_id"`
	Title string          `json:"title"`
	Text  string          `json:"text"`
}

// ReadBEIRCorpus reads a BEIR corpus.jsonl from r (name is the file name
// that records and errors give) and calls emit with one record per
// document, in file order: a paper of type "article" whose title is the
// document's "title" and abstract its "text", with the document's "_id"
// as the record key, so that it becomes an alias of the paper and the
// qrels' corpus ids resolve to it (Store.Resolve). Each BEIR document is
// kept as a paper of its own: a document whose title is empty is titled
// with its id ("[C02-1139]"), and one whose title repeats another's
// (normalised, corpus.NormalizeTitle) gets its id appended ("Summary
// [885056]"), because papers without DOI, year or author are identified
// by their title (corpus.PaperID) and would otherwise be merged.
//
// The whole file is read before the first record is emitted (titles are
// checked for repeats first), so memory grows with the corpus. Bad lines
// (not JSON, no "_id", neither title nor text, a repeated "_id") are
// passed to onErr as *corpus.ParseError and skipped; emit's error stops
// the read and is returned.
func ReadBEIRCorpus(ctx context.Context, r io.Reader, name string, emit func(corpus.Record) error, onErr func(*corpus.ParseError)) error {
	type doc struct {
		line int
		id   string
		d    beirDoc
	}
	var docs []doc
	titles := map[string]int{}
	seen := map[string]int{}
	lr := newLineReader(r, name)
	read := 0
	for n, line := range lr.Lines() {
		if read++; read%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		d, id, err := parseBEIRDoc(line)
		if err == nil && seen[id] != 0 {
			err = fmt.Errorf("%w: duplicate _id %q (first on line %d)", corpus.ErrBadField, id, seen[id])
		}
		if err != nil {
			if onErr != nil {
				onErr(&corpus.ParseError{File: name, Line: n, Err: err})
			}
			continue
		}
		seen[id] = n
		docs = append(docs, doc{n, id, d})
		if t := corpus.NormalizeTitle(d.Title); t != "" {
			titles[t]++
		}
	}
	if err := lr.Err(); err != nil {
		return err
	}
	for _, d := range docs {
		title := d.d.Title
		switch t := corpus.NormalizeTitle(title); {
		case t == "":
			title = "[" + d.id + "]"
		case titles[t] > 1:
			title += " [" + d.id + "]"
		}
		p := corpus.Paper{Type: "article", Title: title, Abstract: d.d.Text}
		p.ID = corpus.PaperID(p)
		rec := corpus.Record{Paper: p, Key: d.id, File: name, Line: d.line, Kind: "article", Ref: d.id}
		if err := emit(rec); err != nil {
			return err
		}
	}
	return nil
}

func parseBEIRDoc(line []byte) (beirDoc, string, error) {
	var d beirDoc
	if err := json.Unmarshal(line, &d); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return d, "", fmt.Errorf("%w: %q must be a string, not %s", corpus.ErrBadField, te.Field, te.Value)
		}
		return d, "", fmt.Errorf("%w: %w", corpus.ErrSyntax, err)
	}
	id, err := beirID(d.ID)
	if err != nil {
		return d, "", fmt.Errorf("%w: %w", corpus.ErrBadField, err)
	}
	d.Title = strings.Join(strings.Fields(d.Title), " ")
	d.Text = strings.TrimSpace(d.Text)
	if d.Title == "" && d.Text == "" {
		return d, "", fmt.Errorf("%w: neither \"title\" nor \"text\"", corpus.ErrNoTitle)
	}
	return d, id, nil
}

// ConvertBEIRCorpus reads a BEIR corpus.jsonl from r (see ReadBEIRCorpus)
// and writes it to w as citefind's generic corpus format, one CSL-JSON
// item per line ({"id": _id, "type": "article", "title", "abstract"}),
// which `citefind index` and Ingest read; the item ids become aliases of
// the papers. Bad lines go to onErr and are skipped. It returns the
// number of items written.
func ConvertBEIRCorpus(ctx context.Context, r io.Reader, name string, w io.Writer, onErr func(*corpus.ParseError)) (int, error) {
	bw := bufio.NewWriter(w)
	written := 0
	err := ReadBEIRCorpus(ctx, r, name, func(rec corpus.Record) error {
		b, err := json.Marshal(cslItem{ID: rec.Key, Type: "article", Title: rec.Paper.Title, Abstract: rec.Paper.Abstract})
		if err != nil {
			return err
		}
		bw.Write(b)
		bw.WriteByte('\n')
		written++
		return nil
	}, onErr)
	if err != nil {
		return written, err
	}
	return written, bw.Flush()
}
