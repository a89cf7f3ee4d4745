package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/citefind/citefind"
	"github.com/citefind/citefind/cite"
	"github.com/citefind/citefind/corpus"
)

type citeCmd struct{ env }

func (c *citeCmd) Name() string { return "cite" }
func (c *citeCmd) Synopsis() string {
	return "turn [[cite:ID]] placeholders into citations and a bibliography"
}

const citeUsage = `Usage: citefind cite [--db DIR] [--style apa|ieee|mla|chicago|harvard|vancouver] [--format md|text]
                    [--lenient] [--session FILE] [--bib-out FILE] FILE... | -

Replaces the placeholders [[cite:ID]], ⟦cite:ID⟧, [[cite:ID1,ID2]],
[[cite:PRIMARY|SECONDARY]] and [[cite:ID "quoted words"]] of a draft with
in-text citations and appends (or updates) the bibliography, then prints the
document. IDs are paper IDs or aliases (BibTeX keys) of the store. Markdown
output can be resolved again after editing: numbering is redone for the
whole document. Several FILEs are drafts with their own [n] numbering and
"[n]: cite:ID" maps, merged into one document.

Unknown IDs are an error listing each with line:column (--lenient keeps their
placeholders, marked ⚠). Warnings (missing author or year, quotes that do
not match the paper, IDs not among --session's candidates) go to stderr.
--bib-out writes the bibliography as .md, .txt, .bib (BibTeX) or .json (CSL-JSON).`

func (c *citeCmd) Run(ctx context.Context, args []string) error {
	fs := newFlagSet(c.env, "cite", citeUsage)
	db := dbFlag(fs)
	styleName := fs.String("style", "apa", "citation style: apa, ieee, mla, chicago, harvard, vancouver")
	formatName := fs.String("format", "md", "output format: md (Markdown, re-resolvable) or text")
	lenient := fs.Bool("lenient", false, "leave placeholders with unknown IDs in place, marked ⚠, instead of failing")
	session := fs.String("session", "", "`FILE` with the JSON of an earlier `citefind query --json`: flag cited papers it did not retrieve")
	bibOut := fs.String("bib-out", "", "also write the bibliography to `FILE` (.md, .txt, .bib, .json)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usageErr("cite: no FILE given (pass a file, or - to read standard input)")
	}
	st, err := cite.ParseStyle(*styleName)
	if err != nil {
		return usageErr("cite: %w", err)
	}
	format, err := cite.ParseFormat(*formatName)
	if err != nil {
		return usageErr("cite: %w", err)
	}
	var drafts []string
	for _, p := range pos {
		var b []byte
		if p == "-" {
			b, err = io.ReadAll(c.stdin)
		} else {
			b, err = os.ReadFile(p)
		}
		if err != nil {
			return fmt.Errorf("cite: %w", err)
		}
		drafts = append(drafts, string(b))
	}
	doc := drafts[0]
	if len(drafts) > 1 {
		if doc, err = cite.Merge(drafts); err != nil {
			return fmt.Errorf("cite: merge: %w", err)
		}
	}
	opts := cite.Options{Style: st, Format: format, Lenient: *lenient}
	if *session != "" {
		if opts.Candidates, err = readSession(*session); err != nil {
			return fmt.Errorf("cite: --session: %w", err)
		}
	}
	storePath := filepath.Join(*db, citefind.StoreFile)
	if _, err := os.Stat(storePath); err != nil {
		return fmt.Errorf("cite: no paper store at %s (run `citefind index --db %s FILE…` first)", storePath, *db)
	}
	store, err := corpus.OpenStore(ctx, storePath)
	if err != nil {
		return err
	}
	defer store.Close()
	res, err := cite.Resolve(ctx, doc, store, opts)
	if err != nil {
		var ue *cite.UnknownIDError
		var el cite.ErrorList
		if errors.As(err, &ue) || errors.As(err, &el) {
			return fmt.Errorf("cite: %w", err)
		}
		return err
	}
	if _, err := io.WriteString(c.stdout, res.Text); err != nil {
		return err
	}
	for _, w := range res.Warnings {
		fmt.Fprintln(c.stderr, "warning:", w)
	}
	if *bibOut != "" && res.Bibliography != nil {
		if err := writeBib(*bibOut, res.Bibliography); err != nil {
			return fmt.Errorf("cite: --bib-out: %w", err)
		}
	}
	return nil
}

// readSession reads the candidate IDs of one `query --json` result, or a
// JSON array of them, or JSON lines.
func readSession(path string) (map[string]bool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	type result struct {
		Hits []struct {
			ID string `json:"id"`
		} `json:"hits"`
	}
	var rs []result
	dec := json.NewDecoder(strings.NewReader(string(b)))
	for dec.More() {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		if t := strings.TrimSpace(string(raw)); strings.HasPrefix(t, "[") {
			var many []result
			if err := json.Unmarshal(raw, &many); err != nil {
				return nil, err
			}
			rs = append(rs, many...)
		} else {
			var one result
			if err := json.Unmarshal(raw, &one); err != nil {
				return nil, err
			}
			rs = append(rs, one)
		}
	}
	ids := map[string]bool{}
	for _, r := range rs {
		for _, h := range r.Hits {
			ids[h.ID] = true
		}
	}
	return ids, nil
}

func writeBib(path string, b *cite.Bibliography) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".bib", ".bibtex":
		err = cite.WriteBibTeX(f, b.Papers)
	case ".json":
		err = cite.WriteCSLJSON(f, b.Papers)
	case ".txt", ".text":
		nb := cite.NewBibliography(b.Style, cite.Text, b.Papers)
		_, err = io.WriteString(f, strings.Join(nb.Entries, "\n\n")+"\n")
	default:
		nb := cite.NewBibliography(b.Style, cite.Markdown, b.Papers)
		_, err = io.WriteString(f, strings.Join(nb.Entries, "\n\n")+"\n")
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
