package eval

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/citefind/citefind/corpus"
)

// ErrEmptyBenchmark is returned when a benchmark or topic set has no
// scorable query.
var ErrEmptyBenchmark = errors.New("empty benchmark")

// ACM-CR topic set names, in the order LoadACMCR returns them.
const (
	SetContexts  = "contexts"
	SetSentences = "sentences"
)

// Query is one benchmark query with its judgements.
type Query struct {
	ID       string   // topic id; unique within its TopicSet
	Text     string   // the query text as given (citation markers not cleaned)
	Relevant []string // judged-relevant doc ids as written in the qrels, first occurrence order, no duplicates
	// Group names the source the query was taken from (for ACM-CR, the
	// citing paper's title), so that cross-validation can keep all the
	// queries of one citing paper in the same fold. "" when unknown.
	Group string
}

// TopicSet is a named list of judged queries.
type TopicSet struct {
	Name     string   // "contexts" | "sentences" for ACM-CR
	Queries  []Query  // in file order
	Unjudged []string // ids of topics with no relevant qrels line; kept out of Queries
	Orphans  []string // topic ids that occur in the qrels but not in the topics file (sorted)
	// Gold describes the judged ids of a benchmark without a collection of
	// its own (CiteME, LitSearch, ScholarGym): Query.Relevant holds keys of
	// this map, and MatchGold finds the papers they name. nil for sets
	// judged by paper IDs or aliases (ACM-CR, jsonl).
	Gold map[string]Gold
}

// ACMCR is the ACM-CR test collection as found on disk.
type ACMCR struct {
	Dir       string          // the acm-cr folder
	BibFiles  []string        // every .bib under data/acm-dl, sorted
	Blacklist map[string]bool // blacklisted citation keys, lower-cased
	Sets      []TopicSet      // contexts, then sentences (those asked for)
}

// LoadACMCR reads the ACM-CR collection in dir (the folder holding
// data/acm-dl and data/topics+qrels). sets names the topic sets to load,
// SetContexts and/or SetSentences; none means both. Sets come back in
// canonical order (contexts, then sentences) whatever the order asked.
//
// Topics without any relevant qrels line are kept out of the queries and
// listed in TopicSet.Unjudged. Topic ids that repeat get "#2", "#3", …
// appended from their second occurrence on (ACM-CR's contexts topic
// 340982510 occurs twice); every occurrence is judged by the qrels of the
// bare id. Malformed topics or qrels lines are reported as "FILE:LINE:
// cause", all of a file's problems in one error.
func LoadACMCR(dir string, sets ...string) (*ACMCR, error) {
	want := map[string]bool{}
	for _, s := range sets {
		if s != SetContexts && s != SetSentences {
			return nil, fmt.Errorf("acm-cr: unknown topic set %q (want %q or %q)", s, SetContexts, SetSentences)
		}
		want[s] = true
	}
	if len(want) == 0 {
		want[SetContexts], want[SetSentences] = true, true
	}
	a := &ACMCR{Dir: dir}
	tq := filepath.Join(dir, "data", "topics+qrels")

	bl, err := readBlacklist(filepath.Join(tq, "blacklist.txt"))
	if err != nil {
		return nil, fmt.Errorf("acm-cr: %w", err)
	}
	a.Blacklist = bl

	bibDir := filepath.Join(dir, "data", "acm-dl")
	err = filepath.WalkDir(bibDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.EqualFold(filepath.Ext(path), ".bib") {
			a.BibFiles = append(a.BibFiles, path)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("acm-cr: list bib files: %w", err)
	}
	if len(a.BibFiles) == 0 {
		return nil, fmt.Errorf("acm-cr: no .bib file under %s: %w", bibDir, ErrEmptyBenchmark)
	}
	sort.Strings(a.BibFiles)

	for _, name := range []string{SetContexts, SetSentences} {
		if !want[name] {
			continue
		}
		set, err := LoadTREC(name, filepath.Join(tq, name+".topics"), filepath.Join(tq, name+".qrels"))
		if err != nil {
			return nil, fmt.Errorf("acm-cr: %w", err)
		}
		a.Sets = append(a.Sets, *set)
	}
	return a, nil
}

// Keep applies ACM-CR's upstream indexing rules (src/bibtex_to_trec.py) to
// one BibTeX record: keep only entry types "article" and "inproceedings"
// (case-insensitive: jasist.bib writes "@Article"); drop "session" records
// (title starting with "session", case-insensitive, and no abstract); drop
// blacklisted keys (the 50 citing papers; compared case-insensitively, as
// DOIs are). When the record is dropped, the second result says why.
// The rule "duplicate keys: the last one read wins" is the store's business.
func (a *ACMCR) Keep(rec corpus.Record) (bool, string) {
	kind := strings.ToLower(strings.TrimSpace(rec.Kind))
	if kind != "article" && kind != "inproceedings" {
		return false, fmt.Sprintf("entry type %q", rec.Kind)
	}
	title := strings.ToLower(strings.TrimSpace(rec.Paper.Title))
	if strings.HasPrefix(title, "session") && strings.TrimSpace(rec.Paper.Abstract) == "" {
		return false, "session record without abstract"
	}
	if a.Blacklist[strings.ToLower(strings.TrimSpace(rec.Key))] {
		return false, "blacklisted (citing paper)"
	}
	return true, ""
}

func readBlacklist(path string) (map[string]bool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	bl := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		if k := strings.TrimSpace(line); k != "" {
			bl[strings.ToLower(k)] = true
		}
	}
	return bl, nil
}

// LoadTREC reads a TREC topics file and its qrels into a TopicSet called
// name. The query text of a topic is its <desc> field (without the
// "Description:" label); see LoadACMCR for duplicate ids and unjudged
// topics. Qrels lines are "topic iteration docid relevance", separated by
// tabs or spaces; a doc is relevant when its relevance is above zero.
func LoadTREC(name, topicsPath, qrelsPath string) (*TopicSet, error) {
	topics, err := readTopics(topicsPath)
	if err != nil {
		return nil, err
	}
	qrels, err := readQrels(qrelsPath)
	if err != nil {
		return nil, err
	}
	set := &TopicSet{Name: name}
	seen := map[string]int{}
	for _, t := range topics {
		seen[t.id]++
		id := t.id
		if n := seen[t.id]; n > 1 {
			id = fmt.Sprintf("%s#%d", t.id, n)
		}
		rel := qrels[t.id]
		if len(rel) == 0 {
			set.Unjudged = append(set.Unjudged, id)
			continue
		}
		set.Queries = append(set.Queries, Query{ID: id, Text: t.desc, Relevant: append([]string(nil), rel...), Group: t.title})
	}
	for id := range qrels {
		if seen[id] == 0 {
			set.Orphans = append(set.Orphans, id)
		}
	}
	sort.Strings(set.Orphans)
	if len(set.Queries) == 0 {
		return nil, fmt.Errorf("%s: no judged topic: %w", topicsPath, ErrEmptyBenchmark)
	}
	return set, nil
}

type topic struct {
	id, title, desc string
	line            int
}

// readTopics parses a TREC topics file (<top> <num> <title> <desc> <narr>
// </top>, one field's text up to the next tag).
func readTopics(path string) ([]topic, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var (
		out   []topic
		errs  []error
		cur   *topic
		field string // "num", "title", "desc", "narr" or ""
		text  []string
		bad   bool // current topic already reported
	)
	fail := func(line int, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s:%d: %s", path, line, fmt.Sprintf(format, args...)))
	}
	flush := func() {
		if cur == nil {
			return
		}
		v := strings.Join(strings.Fields(strings.Join(text, " ")), " ")
		switch field {
		case "num":
			cur.id = v
		case "title":
			cur.title = v
		case "desc":
			cur.desc = v
		}
		field, text = "", nil
	}
	lr := newLineReader(f, path)
	for n, line := range lr.Lines() {
		trim := string(bytes.TrimSpace(line))
		tag, rest := splitTag(trim)
		switch tag {
		case "top":
			if cur != nil {
				fail(n, "<top> inside the topic opened at line %d (missing </top>)", cur.line)
			}
			cur, field, text, bad = &topic{line: n}, "", nil, false
			if rest != "" {
				fail(n, "unexpected text after <top>")
				bad = true
			}
		case "/top":
			if cur == nil {
				fail(n, "</top> without <top>")
				continue
			}
			flush()
			switch {
			case bad:
			case cur.id == "":
				fail(cur.line, "topic without <num>")
			case cur.desc == "":
				fail(cur.line, "topic %s: empty <desc>", cur.id)
			default:
				out = append(out, *cur)
			}
			cur = nil
		case "num", "title", "desc", "narr":
			if cur == nil {
				fail(n, "<%s> outside <top>", tag)
				continue
			}
			flush()
			field = tag
			switch tag {
			case "num":
				rest = trimLabel(rest, "Number:")
				if rest == "" || strings.ContainsAny(rest, " \t") {
					fail(n, "bad topic number %q", rest)
					bad = true
				}
			case "desc":
				rest = trimLabel(rest, "Description:")
			case "narr":
				rest = trimLabel(rest, "Narrative:")
			}
			if rest != "" {
				text = append(text, rest)
			}
		default:
			if cur == nil {
				if trim != "" {
					fail(n, "text outside <top>…</top>: %q", clip(trim, 40))
				}
				continue
			}
			if field == "" && trim != "" {
				fail(n, "text before the first field tag: %q", clip(trim, 40))
				bad = true
				continue
			}
			if trim != "" {
				text = append(text, trim)
			}
		}
	}
	if err := lr.Err(); err != nil {
		return nil, err
	}
	if cur != nil {
		fail(cur.line, "topic not closed by </top> before end of file")
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// splitTag recognises a line that starts with one of the TREC topic tags and
// returns the tag name (without brackets) and the rest of the line.
func splitTag(s string) (tag, rest string) {
	for _, t := range []string{"top", "/top", "num", "title", "desc", "narr"} {
		open := "<" + t + ">"
		if len(s) >= len(open) && strings.EqualFold(s[:len(open)], open) {
			return t, strings.TrimSpace(s[len(open):])
		}
	}
	return "", s
}

func trimLabel(s, label string) string {
	if len(s) >= len(label) && strings.EqualFold(s[:len(label)], label) {
		s = s[len(label):]
	}
	return strings.TrimSpace(s)
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// readQrels parses a TREC qrels file into topic id → relevant doc ids
// (relevance > 0), in file order without duplicates.
func readQrels(path string) (map[string][]string, error) {
	out := map[string][]string{}
	dup := map[[2]string]bool{}
	err := readLines(path, func(n int, line []byte) error {
		f := strings.Fields(string(line))
		if len(f) != 4 {
			return fmt.Errorf("want 4 fields \"topic iteration docid relevance\", got %d", len(f))
		}
		rel, err := strconv.Atoi(f[3])
		if err != nil {
			return fmt.Errorf("relevance %q is not an integer", f[3])
		}
		if rel <= 0 || dup[[2]string{f[0], f[2]}] {
			return nil
		}
		dup[[2]string{f[0], f[2]}] = true
		out[f[0]] = append(out[f[0]], f[2])
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
