package eval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/citefind/citefind/corpus"
)

// Set names of the native-format loaders.
const (
	// SetAll is the one topic set of CiteME, LitSearch and ScholarGym when
	// no subset is asked for.
	SetAll = "all"
)

// TitleSeparator joins CiteME's alternative target titles.
const TitleSeparator = "[TITLE_SEPARATOR]"

// citemeColumns are the CiteME.tsv columns the loader needs.
var citemeColumns = []string{"id", "excerpt", "target_paper_title", "target_paper_url", "split"}

// LoadCiteME reads CiteME's TSV file (header row, TAB-separated, LF or
// CRLF line ends). Each row is one query: Text is the excerpt as given
// (with its [CITATION] marker), judged by one gold paper, the target: its
// title (alternative titles joined by "[TITLE_SEPARATOR]" are one gold
// paper known by either title) and the arXiv id or DOI found in its URL.
// The judged ids are "citeme:ID" keys of TopicSet.Gold.
//
// split selects the rows of one split ("test", "train"); "" or SetAll
// keeps every row. The set is named after split (SetAll for all). Bad
// rows are reported as "PATH:LINE: cause", all in one error.
func LoadCiteME(path, split string) (*TopicSet, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	b = bytes.TrimPrefix(b, []byte("\ufeff"))
	lines := strings.Split(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n")
	if len(lines) == 0 || strings.TrimSpace(lines[0]) == "" {
		return nil, fmt.Errorf("%s: no header row: %w", path, ErrEmptyBenchmark)
	}
	col := map[string]int{}
	for i, h := range strings.Split(lines[0], "\t") {
		col[strings.TrimSpace(h)] = i
	}
	for _, c := range citemeColumns {
		if _, ok := col[c]; !ok {
			return nil, fmt.Errorf("%s:1: no %q column (want %s)", path, c, strings.Join(citemeColumns, ", "))
		}
	}
	if split == "" {
		split = SetAll
	}
	set := &TopicSet{Name: split, Gold: map[string]Gold{}}
	var errs []error
	seen := map[string]int{}
	splits := map[string]bool{}
	for n, line := range lines[1:] {
		n += 2
		if strings.TrimSpace(line) == "" {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != len(col) {
			errs = append(errs, fmt.Errorf("%s:%d: %d fields, want %d", path, n, len(f), len(col)))
			continue
		}
		get := func(c string) string { return strings.TrimSpace(f[col[c]]) }
		id, text, title, url, sp := get("id"), get("excerpt"), get("target_paper_title"), get("target_paper_url"), get("split")
		splits[sp] = true
		switch {
		case id == "":
			errs = append(errs, fmt.Errorf("%s:%d: empty id", path, n))
			continue
		case seen[id] != 0:
			errs = append(errs, fmt.Errorf("%s:%d: duplicate id %q (first on line %d)", path, n, id, seen[id]))
			continue
		case text == "":
			errs = append(errs, fmt.Errorf("%s:%d: empty excerpt", path, n))
			continue
		}
		seen[id] = n
		var titles []string
		for _, t := range strings.Split(title, TitleSeparator) {
			if t = strings.TrimSpace(t); t != "" {
				titles = append(titles, t)
			}
		}
		if len(titles) == 0 {
			errs = append(errs, fmt.Errorf("%s:%d: empty target_paper_title", path, n))
			continue
		}
		if split != SetAll && sp != split {
			continue
		}
		key := "citeme:" + id
		set.Gold[key] = Gold{Titles: titles, ArXiv: corpus.NormalizeArXiv(url), DOI: doiFromURL(url)}
		set.Queries = append(set.Queries, Query{ID: id, Text: text, Relevant: []string{key}})
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if len(set.Queries) == 0 {
		return nil, fmt.Errorf("%s: no query in split %q (splits: %s): %w", path, split, strings.Join(sortedKeys(splits), ", "), ErrEmptyBenchmark)
	}
	return set, nil
}

var urlDOIRe = regexp.MustCompile(`(?:^|/)(10\.\d{4,9}/[^\s?#]+)`)

// doiFromURL finds a DOI in a publisher URL (doi.org/…, dl.acm.org/doi/…,
// link.springer.com/article/10.…), or "".
func doiFromURL(u string) string {
	m := urlDOIRe.FindStringSubmatch(u)
	if m == nil {
		return ""
	}
	d := strings.TrimSuffix(strings.TrimSuffix(m[1], "/"), ".pdf")
	return corpus.NormalizeDOI(d)
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// litsearchQuery is one line of litsearch_queries_with_qrels.jsonl.
type litsearchQuery struct {
	QID       *int64          `json:"qid"`
	Query     string          `json:"query"`
	QuerySet  string          `json:"query_set"`
	Corpusids []int64         `json:"gold_corpusids"`
	Arxiv     []goldArxivWire `json:"gold_arxiv"`
}

type goldArxivWire struct {
	ArxivID string `json:"arxiv_id"`
	Title   string `json:"title"`
	Year    int    `json:"year"`
}

// LoadLitSearch reads the LitSearch queries (JSON Lines: qid, query,
// query_set, gold_corpusids, optional gold_arxiv). Each gold paper is
// named by its Semantic Scholar corpus id, which is an alias of the paper
// when the LitSearch corpus was ingested (ReadLitSearchCorpus); when the
// query also lists gold_arxiv of the same length, the i-th entry's arXiv
// id, title and year are taken as other names of the i-th corpus id (the
// data README notes this pairing is positional and unverified; for the 563
// single-gold queries it is trivially right). The judged ids are
// "corpusid:N" keys of TopicSet.Gold.
//
// querySet selects one query_set ("inline_acl", "inline_nonacl",
// "manual_acl", "manual_iclr"); "" or SetAll keeps all. Queries without a
// gold corpus id go to TopicSet.Unjudged.
func LoadLitSearch(path, querySet string) (*TopicSet, error) {
	if querySet == "" {
		querySet = SetAll
	}
	set := &TopicSet{Name: querySet, Gold: map[string]Gold{}}
	sets := map[string]bool{}
	seen := map[string]int{}
	err := readLines(path, func(n int, line []byte) error {
		var w litsearchQuery
		if err := json.Unmarshal(line, &w); err != nil {
			return err
		}
		if w.QID == nil {
			return errors.New(`missing "qid"`)
		}
		id := strconv.FormatInt(*w.QID, 10)
		if seen[id] != 0 {
			return fmt.Errorf("duplicate qid %s (first on line %d)", id, seen[id])
		}
		seen[id] = n
		if strings.TrimSpace(w.Query) == "" {
			return errors.New(`missing or empty "query"`)
		}
		sets[w.QuerySet] = true
		if querySet != SetAll && w.QuerySet != querySet {
			return nil
		}
		if len(w.Corpusids) == 0 {
			set.Unjudged = append(set.Unjudged, id)
			return nil
		}
		q := Query{ID: id, Text: w.Query}
		for i, cid := range w.Corpusids {
			key := "corpusid:" + strconv.FormatInt(cid, 10)
			if slices.Contains(q.Relevant, key) {
				continue
			}
			q.Relevant = append(q.Relevant, key)
			if _, ok := set.Gold[key]; ok {
				continue
			}
			g := Gold{IDs: []string{strconv.FormatInt(cid, 10)}}
			if len(w.Arxiv) == len(w.Corpusids) {
				a := w.Arxiv[i]
				g.ArXiv = corpus.NormalizeArXiv(a.ArxivID)
				if t := strings.TrimSpace(a.Title); t != "" {
					g.Titles = []string{t}
				}
				g.Year = a.Year
			}
			set.Gold[key] = g
		}
		set.Queries = append(set.Queries, q)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(set.Queries) == 0 {
		return nil, fmt.Errorf("%s: no judged query in query set %q (sets: %s): %w", path, querySet, strings.Join(sortedKeys(sets), ", "), ErrEmptyBenchmark)
	}
	return set, nil
}

// scholargymQuery is one line of scholargym_bench.jsonl.
type scholargymQuery struct {
	QID        string          `json:"qid"`
	Query      string          `json:"query"`
	Source     string          `json:"source"`
	CitedPaper []goldArxivWire `json:"cited_paper"`
}

// LoadScholarGym reads ScholarGym's benchmark file (JSON Lines: qid, query,
// cited_paper [{arxiv_id, title, year}], source, …). Each cited paper is a
// gold paper named by its arXiv id, title and year; the judged ids are
// "arxiv:ID" keys of TopicSet.Gold. Queries with an empty cited_paper list
// (78 in the full file) go to TopicSet.Unjudged.
//
// source selects the queries of one source ("PASA_AutoScholar",
// "PASA_RealScholar", "LitSearch"); "" or SetAll keeps all.
func LoadScholarGym(path, source string) (*TopicSet, error) {
	if source == "" {
		source = SetAll
	}
	set := &TopicSet{Name: source, Gold: map[string]Gold{}}
	sources := map[string]bool{}
	seen := map[string]int{}
	err := readLines(path, func(n int, line []byte) error {
		var w scholargymQuery
		if err := json.Unmarshal(line, &w); err != nil {
			return err
		}
		id := strings.TrimSpace(w.QID)
		switch {
		case id == "":
			return errors.New(`missing or empty "qid"`)
		case seen[id] != 0:
			return fmt.Errorf("duplicate qid %q (first on line %d)", id, seen[id])
		case strings.TrimSpace(w.Query) == "":
			return errors.New(`missing or empty "query"`)
		}
		seen[id] = n
		sources[w.Source] = true
		if source != SetAll && w.Source != source {
			return nil
		}
		q := Query{ID: id, Text: w.Query}
		for i, c := range w.CitedPaper {
			a := corpus.NormalizeArXiv(c.ArxivID)
			title := strings.TrimSpace(c.Title)
			var key string
			switch {
			case a != "":
				key = "arxiv:" + a
			case title != "":
				key = "title:" + corpus.NormalizeTitle(title)
			default:
				return fmt.Errorf("cited_paper[%d]: neither arxiv_id nor title", i)
			}
			if slices.Contains(q.Relevant, key) {
				continue
			}
			q.Relevant = append(q.Relevant, key)
			if _, ok := set.Gold[key]; !ok {
				g := Gold{ArXiv: a, Year: c.Year}
				if title != "" {
					g.Titles = []string{title}
				}
				set.Gold[key] = g
			}
		}
		if len(q.Relevant) == 0 {
			set.Unjudged = append(set.Unjudged, id)
			return nil
		}
		set.Queries = append(set.Queries, q)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(set.Queries) == 0 {
		return nil, fmt.Errorf("%s: no judged query from source %q (sources: %s): %w", path, source, strings.Join(sortedKeys(sources), ", "), ErrEmptyBenchmark)
	}
	return set, nil
}
