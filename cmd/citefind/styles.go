package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/citefind/citefind/cite/csl"
)

type stylesCmd struct{ env }

func (c *stylesCmd) Name() string     { return "styles" }
func (c *stylesCmd) Synopsis() string { return "list the CSL styles that cite --style can name" }

const stylesUsage = `Usage: citefind styles [--json] [--notice] [WORD]

Lists the CSL citation styles that ` + "`citefind cite --style NAME`" + ` finds, by
name and title: NAME.csl in $CITEFIND_STYLES (folders separated by ":"),
~/Zotero/styles and /usr/share/citation-style-language/styles (Debian's
citation-style-language-styles, with dependent/), then the styles built into
citefind (apa, ieee, modern-language-association = mla, chicago-author-date
= chicago, harvard-cite-them-right = harvard, vancouver). The first folder
with a name wins. WORD keeps the styles whose name or title contains it.
A dependent style is rendered with its parent. --json prints a JSON array of
{"name", "short", "title", "file", "dependent", "parent", "format"}.
--notice prints the licences and attribution of the built-in citeproc-js,
styles and locale (CC BY-SA 3.0).`

func (c *stylesCmd) Run(ctx context.Context, args []string) error {
	fs := newFlagSet(c.env, "styles", stylesUsage)
	asJSON := fs.Bool("json", false, "print a JSON array")
	notice := fs.Bool("notice", false, "print the licences and attribution of the built-in citeproc-js, styles and locale")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return usageErr("styles: one WORD at most, got %d arguments", len(pos))
	}
	if *notice {
		n, err := csl.Notice()
		if err != nil {
			return fmt.Errorf("styles: %w", err)
		}
		_, err = fmt.Fprint(c.stdout, n)
		return err
	}
	word := ""
	if len(pos) == 1 {
		word = pos[0]
	}
	list, err := csl.DefaultResolver(nil).List(word)
	if err != nil {
		return fmt.Errorf("styles: %w", err)
	}
	if *asJSON {
		enc := json.NewEncoder(c.stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if list == nil {
			list = []csl.StyleInfo{}
		}
		return enc.Encode(list)
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tFORMAT\tTITLE")
	for _, s := range list {
		name := s.Name
		if s.Short != "" {
			name += " (" + s.Short + ")"
		}
		title := s.Title
		if s.Dependent {
			title += " [uses " + s.Parent + "]"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", name, s.Format, strings.TrimSpace(title))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if word != "" && len(list) == 0 {
		fmt.Fprintf(c.stderr, "no style name or title contains %q\n", word)
	}
	return nil
}
