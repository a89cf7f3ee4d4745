package eval

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// jsonlQuery is the wire form of one line of a generic benchmark's queries
// file. Unknown keys are ignored.
type jsonlQuery struct {
	ID       *string  `json:"id"`
	Text     *string  `json:"text"`
	Relevant []string `json:"relevant"`
}

// LoadJSONLQueries reads the queries of a generic benchmark (--bench jsonl):
// one object per line, {"id": "q1", "text": "…", "relevant": ["paper-id", …]}.
// The relevant ids are the corpus item ids (aliases) as written. Blank lines
// are skipped. A line is bad when it is not a JSON object of that shape, when
// id or text is missing or empty, when relevant is empty, or when its id
// repeats an earlier one; the whole file is read and every bad line is
// reported as "PATH:LINE: cause" in one error. A file without queries gives
// ErrEmptyBenchmark.
func LoadJSONLQueries(path string) ([]Query, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var (
		out  []Query
		errs []error
		seen = map[string]int{}
	)
	r := bufio.NewReader(f)
	for n := 1; ; n++ {
		line, rerr := r.ReadBytes('\n')
		if rerr != nil && rerr != io.EOF {
			return nil, fmt.Errorf("%s:%d: %w", path, n, rerr)
		}
		if n == 1 {
			line = bytes.TrimPrefix(line, []byte("\ufeff"))
		}
		if len(bytes.TrimSpace(line)) > 0 {
			q, err := parseJSONLQuery(line)
			switch {
			case err != nil:
				errs = append(errs, fmt.Errorf("%s:%d: %w", path, n, err))
			case seen[q.ID] != 0:
				errs = append(errs, fmt.Errorf("%s:%d: duplicate id %q (first on line %d)", path, n, q.ID, seen[q.ID]))
			default:
				seen[q.ID] = n
				out = append(out, q)
			}
		}
		if rerr == io.EOF {
			break
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no query: %w", path, ErrEmptyBenchmark)
	}
	return out, nil
}

func parseJSONLQuery(line []byte) (Query, error) {
	var w jsonlQuery
	if err := json.Unmarshal(line, &w); err != nil {
		return Query{}, err
	}
	var q Query
	switch {
	case w.ID == nil || strings.TrimSpace(*w.ID) == "":
		return q, errors.New(`missing or empty "id"`)
	case w.Text == nil || strings.TrimSpace(*w.Text) == "":
		return q, errors.New(`missing or empty "text"`)
	case len(w.Relevant) == 0:
		return q, errors.New(`missing or empty "relevant"`)
	}
	q.ID, q.Text = strings.TrimSpace(*w.ID), *w.Text
	dup := map[string]bool{}
	for i, id := range w.Relevant {
		id = strings.TrimSpace(id)
		if id == "" {
			return Query{}, fmt.Errorf("relevant[%d] is empty", i)
		}
		if !dup[id] {
			dup[id] = true
			q.Relevant = append(q.Relevant, id)
		}
	}
	return q, nil
}
