package eval

import (
	"encoding/json"
	"errors"
	"fmt"
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
	var out []Query
	seen := map[string]int{}
	err := readLines(path, func(n int, line []byte) error {
		q, err := parseJSONLQuery(line)
		switch {
		case err != nil:
			return err
		case seen[q.ID] != 0:
			return fmt.Errorf("duplicate id %q (first on line %d)", q.ID, seen[q.ID])
		}
		seen[q.ID] = n
		out = append(out, q)
		return nil
	})
	if err != nil {
		return nil, err
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
