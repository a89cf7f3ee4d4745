package eval

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/citefind/citefind/corpus"
)

// litsearchPaper is one row of the LitSearch corpus as published
// (Hugging Face princeton-nlp/LitSearch, config corpus_clean, exported as
// JSON Lines). full_paper and citations are not read.
type litsearchPaper struct {
	CorpusID    json.Number    `json:"corpusid"`
	Title       string         `json:"title"`
	Abstract    string         `json:"abstract"`
	ExternalIDs map[string]any `json:"externalids"` // corpus_s2orc layout: ArXiv, DOI, …
}

// IsLitSearchCorpus reports whether the JSON Lines file at path is in the
// LitSearch corpus layout: its first object has a "corpusid" and no "id".
func IsLitSearchCorpus(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadBytes('\n')
		line = bytes.TrimSpace(bytes.TrimPrefix(line, []byte("\ufeff")))
		if len(line) > 0 {
			var keys map[string]json.RawMessage
			if json.Unmarshal(line, &keys) != nil {
				return false, nil
			}
			_, hasCID := keys["corpusid"]
			_, hasID := keys["id"]
			return hasCID && !hasID, nil
		}
		if err == io.EOF {
			return false, nil
		}
		if err != nil {
			return false, err
		}
	}
}

// ConvertLitSearchCorpus reads the LitSearch corpus layout from r (one
// {"corpusid": int, "title": str, "abstract": str, …} object per line) and
// writes it to w as citefind's generic corpus format (one CSL-JSON item
// per line), which `citefind index` and Ingest read. The item id is the
// corpus id, so it becomes an alias of the paper and the LitSearch
// judgements (gold corpus ids) resolve to it. A DOI or arXiv id in
// "externalids" (the corpus_s2orc layout) is carried over; without one the
// paper's ID is the title hash (corpus.PaperID), so two corpus rows with
// the same title and no year or authors are stored as one paper that
// answers to both corpus ids. Bad rows (not JSON, no corpusid, empty
// title) are passed to onErr as *corpus.ParseError and skipped. It returns
// the number of items written.
func ConvertLitSearchCorpus(ctx context.Context, r io.Reader, name string, w io.Writer, onErr func(*corpus.ParseError)) (int, error) {
	bw := bufio.NewWriter(w)
	written := 0
	lr := newLineReader(r, name)
	read := 0
	for n, line := range lr.Lines() {
		if read++; read%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return written, err
			}
		}
		item, err := litsearchItem(line)
		if err != nil {
			if onErr != nil {
				onErr(&corpus.ParseError{File: name, Line: n, Err: err})
			}
			continue
		}
		b, err := json.Marshal(item)
		if err != nil {
			return written, err
		}
		bw.Write(b)
		bw.WriteByte('\n')
		written++
	}
	if err := lr.Err(); err != nil {
		return written, err
	}
	return written, bw.Flush()
}

// cslItem is the subset of CSL-JSON the conversion writes, in this order.
type cslItem struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Title    string `json:"title"`
	Abstract string `json:"abstract,omitempty"`
	DOI      string `json:"DOI,omitempty"`
	ArXiv    string `json:"arxiv,omitempty"`
}

func litsearchItem(line []byte) (cslItem, error) {
	var p litsearchPaper
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if err := dec.Decode(&p); err != nil {
		return cslItem{}, fmt.Errorf("%w: %w", corpus.ErrSyntax, err)
	}
	id := strings.TrimSpace(p.CorpusID.String())
	if _, err := strconv.ParseInt(id, 10, 64); err != nil {
		return cslItem{}, fmt.Errorf("%w: \"corpusid\" %q is not an integer", corpus.ErrBadField, id)
	}
	title := strings.Join(strings.Fields(p.Title), " ")
	if title == "" {
		return cslItem{}, corpus.ErrNoTitle
	}
	it := cslItem{ID: id, Type: "article", Title: title, Abstract: strings.TrimSpace(p.Abstract)}
	for k, v := range p.ExternalIDs {
		s, ok := v.(string)
		if !ok {
			continue
		}
		switch strings.ToLower(k) {
		case "doi":
			it.DOI = corpus.NormalizeDOI(s)
		case "arxiv":
			it.ArXiv = corpus.NormalizeArXiv(s)
		}
	}
	return it, nil
}
