package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/citefind/citefind/cite"
	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/db"
)

type statsCmd struct{ env }

func (c *statsCmd) Name() string { return "stats" }
func (c *statsCmd) Synopsis() string {
	return "citation usage: which retrieved papers the resolved drafts cite"
}

const statsUsage = `Usage: citefind stats [--db DIR] [--json] [--top N]

Reports what ` + "`citefind cite --session FILE… DRAFT`" + ` recorded: per search, its hits
and how many of them the drafts behind it cite (citation rate); the overall
rate; per paper, the drafts citing it and the searches returning it; the
papers retrieved but never cited; and the papers cited although none of
their draft's searches returned them. --json prints one object with every
row; the table shows the first N rows of each list.`

func (c *statsCmd) Run(ctx context.Context, args []string) error {
	fs := newFlagSet(c.env, "stats", statsUsage)
	dir := dbFlag(fs)
	asJSON := fs.Bool("json", false, "print one JSON object (every row)")
	top := fs.Int("top", 20, "rows per list in the table (0: all)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErr("stats: unexpected argument %q", pos[0])
	}
	storePath := filepath.Join(*dir, db.StoreFile)
	if _, err := os.Stat(storePath); err != nil {
		return fmt.Errorf("stats: no paper store at %s (run `citefind index --db %s FILE…` first)", storePath, *dir)
	}
	store, err := corpus.OpenStore(ctx, storePath)
	if err != nil {
		return err
	}
	defer store.Close()
	u, err := store.Usage(ctx)
	if err != nil {
		return fmt.Errorf("stats: %w", err)
	}
	st, err := cite.Stats(ctx, u, store)
	if err != nil {
		return fmt.Errorf("stats: %w", err)
	}
	if *asJSON {
		enc := json.NewEncoder(c.stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(st)
	}
	if st.Totals.Drafts == 0 {
		_, err := fmt.Fprintf(c.stdout, "No citation usage recorded in %s yet.\n"+
			"`citefind cite --session SEARCH.json DRAFT` records which papers a draft cites\n"+
			"and which searches (saved with `citefind query --json … > SEARCH.json`) were behind it.\n", *dir)
		return err
	}
	return writeStats(c.stdout, st, *top)
}

func writeStats(w io.Writer, st *cite.UsageStats, top int) error {
	t := st.Totals
	searches := fmt.Sprintf("%d searches", t.Searches)
	if t.Searches == 1 {
		searches = "1 search"
	}
	fmt.Fprintf(w, "%s, %s, %s of %s\n", plural(t.Drafts, "draft"), searches, plural(t.Citations, "citation"), plural(t.PapersCited, "paper"))
	fmt.Fprintf(w, "citation rate: %d of %d hits cited (%s)\n", t.CitedHits, t.Hits, pct(t.Rate))
	if t.Citations > 0 {
		fmt.Fprintf(w, "citations retrieved by their draft's searches: %d of %d\n", t.Retrieved, t.Citations)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if len(st.Searches) > 0 {
		fmt.Fprintf(tw, "\nSearches\nquery\thits\tcited\trate\tdrafts\n")
		for _, s := range limit(st.Searches, top) {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%d\n", clip(s.Query, 60), s.Hits, s.Cited, pct(s.Rate), s.Drafts)
		}
		more(tw, len(st.Searches), top)
	}
	if len(st.Papers) > 0 {
		fmt.Fprintf(tw, "\nPapers (cited = drafts citing it, retrieved = searches returning it)\nid\ttitle\tcited\tretrieved\tcited/retrieved\n")
		for _, p := range limit(st.Papers, top) {
			r := "-"
			if p.PerRetrieval != nil {
				r = fmt.Sprintf("%.2f", *p.PerRetrieval)
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\n", p.ID, clip(p.Title, 50), p.Cited, p.Retrieved, r)
		}
		more(tw, len(st.Papers), top)
	}
	if len(st.NeverCited) > 0 {
		fmt.Fprintf(tw, "\nRetrieved, never cited\nid\ttitle\tretrieved\n")
		for _, p := range limit(st.NeverCited, top) {
			fmt.Fprintf(tw, "%s\t%s\t%d\n", p.ID, clip(p.Title, 50), p.Retrieved)
		}
		more(tw, len(st.NeverCited), top)
	}
	if len(st.NotRetrieved) > 0 {
		fmt.Fprintf(tw, "\nCited, not retrieved by the draft's searches\nid\ttitle\tdrafts\n")
		for _, p := range limit(st.NotRetrieved, top) {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", p.ID, clip(p.Title, 50), clip(strings.Join(p.Drafts, "; "), 60))
		}
		more(tw, len(st.NotRetrieved), top)
	}
	return tw.Flush()
}

func limit[T any](xs []T, n int) []T {
	if n > 0 && len(xs) > n {
		return xs[:n]
	}
	return xs
}

func more(w io.Writer, n, top int) {
	if top > 0 && n > top {
		fmt.Fprintf(w, "… %d more (--top 0 or --json for all)\n", n-top)
	}
}

func pct(r float64) string { return fmt.Sprintf("%.1f %%", 100*r) }

// clip shortens s to n characters, marking the cut with "…", and puts it
// on one line.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
