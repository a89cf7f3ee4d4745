package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/citefind/citefind/cite"
	"github.com/citefind/citefind/cite/csl"
	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/db"
)

type citeCmd struct{ env }

func (c *citeCmd) Name() string { return "cite" }
func (c *citeCmd) Synopsis() string {
	return "turn [[cite:ID]] placeholders into citations and a bibliography"
}

const citeUsage = `Usage: citefind cite [--db DIR] [--style NAME|FILE.csl] [--format md|text|html]
                    [--lenient] [--session FILE]... [--no-track] [--bib-out FILE]
                    [--timeout DURATION] FILE... | -

Replaces the placeholders [[cite:ID]], ⟦cite:ID⟧, [[cite:ID1,ID2]],
[[cite:PRIMARY|SECONDARY]] and [[cite:ID "quoted words"]] of a draft with
in-text citations and appends (or updates) the bibliography, then prints the
document. IDs are paper IDs or aliases (BibTeX keys) of the store.
Placeholders next to each other ([[cite:A]][[cite:B]]) are one citation. A
superscript citation follows its word (work¹), and a note style's citations
are footnotes (Markdown [^cite-1], with the notes before the bibliography),
placed after the punctuation that follows them (work.¹). Markdown
output can be resolved again after editing: numbering is redone for the
whole document. Several FILEs are drafts with their own [n] numbering and
"[n]: cite:ID" maps, merged into one document.

Citations and the bibliography are rendered by citeproc-js (built in) with
any CSL style: --style NAME finds NAME.csl in $CITEFIND_STYLES,
~/Zotero/styles and /usr/share/citation-style-language/styles (Debian's
citation-style-language-styles), then among the built-in apa, ieee, mla,
chicago, harvard and vancouver; --style FILE.csl takes any file. A
dependent style uses its parent. ` + "`citefind styles [WORD]`" + ` lists the names.
Formats: md (escaped Markdown with invisible anchors, so that resolving
again changes nothing), html (sanitised fragments, also re-resolvable), text.

Unknown IDs are an error listing each with line:column (--lenient keeps their
placeholders, marked ⚠). Warnings (missing author or year, quotes that do
not match the paper, IDs not among --session's candidates, papers the
style prints nothing for) go to stderr.
--bib-out writes the bibliography as .md, .txt, .html, .bib (BibTeX) or .json (CSL-JSON).
--timeout stops a render that has not finished by then (default: no limit;
Ctrl-C always stops it): a style that disambiguates names over many
similar authors can make citeproc-js run for minutes, as it would in Zotero.

Usage tracking: each --session FILE (repeatable) holds the searches behind
the draft, the JSON of earlier ` + "`citefind query --json`" + ` runs. A successful run
records in the store which papers the draft cites and which searches it
used (` + "`citefind stats`" + ` reports them); the same draft file resolved again
replaces its record. --no-track records nothing.`

func (c *citeCmd) Run(ctx context.Context, args []string) error {
	fs := newFlagSet(c.env, "cite", citeUsage)
	dir := dbFlag(fs)
	styleName := fs.String("style", "apa", "CSL style `NAME` (apa, ieee, mla, chicago, harvard, vancouver, nature, …; citefind styles lists them) or FILE.csl")
	formatName := fs.String("format", "md", "output format: md (Markdown, re-resolvable), html or text")
	lenient := fs.Bool("lenient", false, "leave placeholders with unknown IDs in place, marked ⚠, instead of failing")
	var sessions stringList
	fs.Var(&sessions, "session", "`FILE` with the JSON of an earlier `citefind query --json` (repeatable): flag cited papers no session retrieved, and record the searches")
	noTrack := fs.Bool("no-track", false, "do not record the draft's citations and searches in the store (citefind stats)")
	bibOut := fs.String("bib-out", "", "also write the bibliography to `FILE` (.md, .txt, .bib, .json)")
	timeout := fs.Duration("timeout", 0, "give up when citations and bibliography are not rendered within `DURATION` (0: no limit)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if *timeout < 0 {
		return usageErr("cite: --timeout must not be negative, got %s", *timeout)
	}
	if len(pos) == 0 {
		return usageErr("cite: no FILE given (pass a file, or - to read standard input)")
	}
	// citeproc-js on goja allocates heavily while it builds a style's
	// engine; this short-lived process trades memory for less GC work
	// (APA, 20 citations: user CPU 4.4 s → 3.6 s, peak RSS 310 → 454 MB,
	// docs/cite.md).
	// Two processors: a cold render shares the bibliography between two
	// engines, one per core (csl.Engine's helper).
	styles := c.styles
	if styles == nil {
		debug.SetGCPercent(400)
		styles = csl.New(csl.Options{Processors: 2})
	}
	if _, err := cite.ResolveStyle(styles, cite.Style(*styleName)); err != nil {
		return usageErr("cite: --style: %w", err)
	}
	st := cite.Style(*styleName)
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
	opts := cite.Options{Style: st, Format: format, Engine: styles, Lenient: *lenient}
	var searches []corpus.Search
	if len(sessions) > 0 {
		opts.Candidates = map[string]bool{}
		for _, path := range sessions {
			ss, err := readSession(path)
			if err != nil {
				return fmt.Errorf("cite: --session %s: %w", path, err)
			}
			for _, se := range ss {
				for _, id := range se.Hits {
					opts.Candidates[id] = true
				}
			}
			searches = append(searches, ss...)
		}
	}
	storePath := filepath.Join(*dir, db.StoreFile)
	if _, err := os.Stat(storePath); err != nil {
		return fmt.Errorf("cite: no paper store at %s (run `citefind index --db %s FILE…` first)", storePath, *dir)
	}
	store, err := corpus.OpenStore(ctx, storePath)
	if err != nil {
		return err
	}
	defer store.Close()
	rctx := ctx
	if *timeout > 0 {
		var cancel context.CancelFunc
		rctx, cancel = context.WithTimeout(ctx, *timeout)
		defer cancel()
	}
	res, err := cite.Resolve(rctx, doc, store, opts)
	if err != nil {
		if ctx.Err() == nil && errors.Is(rctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("cite: style %s: rendering did not finish within --timeout %s: %w", *styleName, *timeout, context.DeadlineExceeded)
		}
		var ue *cite.UnknownIDError
		var el cite.ErrorList
		if errors.As(err, &ue) || errors.As(err, &el) || errors.Is(err, csl.ErrBadItem) || cite.IsStyleError(err) {
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
		if err := writeBib(ctx, *bibOut, res.Bibliography, store); err != nil {
			return fmt.Errorf("cite: --bib-out: %w", err)
		}
	}
	if !*noTrack {
		if err := trackUsage(ctx, store, pos, doc, res.Cited, searches); err != nil {
			if ctx.Err() != nil {
				return err
			}
			// The document is out; not recording it is worth a warning only
			// (a read-only or busy store, say).
			fmt.Fprintf(c.stderr, "warning: usage not recorded (citefind stats will not count this draft): %v\n", err)
		}
	}
	return nil
}

// trackUsage records the resolved draft and the searches behind it.
func trackUsage(ctx context.Context, store *corpus.Store, paths []string, doc string, cited []string, searches []corpus.Search) error {
	d, err := cite.DraftUsage(paths, doc, cited, searches)
	if err != nil {
		return err
	}
	return store.RecordUsage(ctx, d)
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }
func (l *stringList) Set(s string) error {
	*l = append(*l, s)
	return nil
}

// readSession reads the searches of a session file: one `query --json`
// result, or a JSON array of them, or JSON lines. Each result is one
// search: its query text and hit IDs in rank order.
func readSession(path string) ([]corpus.Search, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	type result struct {
		Query string `json:"query"`
		Hits  []struct {
			ID   string `json:"id"`
			Rank int    `json:"rank"` // 1-based; 0 when absent: file order
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
	if len(rs) == 0 {
		return nil, errors.New("no `citefind query --json` result in the file")
	}
	out := make([]corpus.Search, 0, len(rs))
	for _, r := range rs {
		se := corpus.Search{Query: r.Query}
		sort.SliceStable(r.Hits, func(i, j int) bool { return r.Hits[i].Rank < r.Hits[j].Rank })
		for _, h := range r.Hits {
			se.Hits = append(se.Hits, h.ID)
		}
		out = append(out, se)
	}
	return out, nil
}

// writeBib exports the bibliography to path, in the format its extension
// names: BibTeX with the user's own keys, CSL-JSON with the store's
// lossless items, text, HTML or Markdown.
func writeBib(ctx context.Context, path string, b *cite.Bibliography, st *corpus.Store) error {
	ids := make([]string, len(b.Papers))
	for i, p := range b.Papers {
		ids[i] = p.ID
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".bib", ".bibtex":
		var ks map[string]corpus.Keys
		if ks, err = st.Keys(ctx, ids); err == nil {
			keys := make(map[string]string, len(ks))
			for id, k := range ks {
				keys[id] = k.Key
			}
			err = cite.WriteBibTeX(f, b.Papers, keys)
		}
	case ".json":
		var items map[string]json.RawMessage
		if items, err = st.Items(ctx, ids); err == nil {
			err = cite.WriteCSLItems(f, b.Papers, items)
		}
	case ".txt", ".text":
		_, err = io.WriteString(f, strings.Join(b.Render(cite.Text), "\n\n")+"\n")
	case ".html", ".htm":
		var s strings.Builder
		s.WriteString("<div class=\"csl-bib-body\">\n")
		for _, e := range b.Render(cite.HTML) {
			s.WriteString(`<div class="csl-entry">` + e + "</div>\n")
		}
		s.WriteString("</div>\n")
		_, err = io.WriteString(f, s.String())
	default:
		_, err = io.WriteString(f, strings.Join(b.Render(cite.Markdown), "\n\n")+"\n")
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
