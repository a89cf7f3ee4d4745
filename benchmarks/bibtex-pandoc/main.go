// Command bibtex-pandoc measures citefind's BibTeX → CSL-JSON conversion
// against pandoc's (`pandoc -f bibtex -t csljson`), field by field: for
// every .bib file under the given paths it reads the entries with
// corpus.ReadBibTeX, converts the file with pandoc, matches the items by
// id (the BibTeX key, repeated keys in order) and prints a Markdown table
// of agreement per CSL variable with examples of the differences.
//
// Usage (see `make bench-bibtex` and docs/bibtex.md):
//
//	bibtex-pandoc [-pandoc pandoc] [-cache DIR] [-examples 3] [-dump FILE] PATH...
//
// -cache keeps pandoc's output per file (DIR/<path under PATH>.json), so a
// second run does not call pandoc again.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/internal/csldiff"
)

func main() {
	pandoc := flag.String("pandoc", "pandoc", "the pandoc binary")
	cache := flag.String("cache", "", "folder keeping pandoc's output per file (reused when present)")
	examples := flag.Int("examples", 3, "examples per variable")
	dump := flag.String("dump", "", "write every difference to this file as JSON Lines {id, variable, citefind, pandoc}")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: bibtex-pandoc [-pandoc BIN] [-cache DIR] [-examples N] PATH...")
		os.Exit(2)
	}
	if err := run(context.Background(), *pandoc, *cache, *examples, *dump, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "bibtex-pandoc:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, pandoc, cache string, examples int, dump string, roots []string) error {
	start := time.Now()
	c := csldiff.Comparison{MaxExamples: examples}
	if dump != "" {
		f, err := os.Create(dump)
		if err != nil {
			return err
		}
		defer f.Close()
		enc := json.NewEncoder(f)
		enc.SetEscapeHTML(false)
		c.OnDiff = func(id, variable, ours, their string) {
			_ = enc.Encode(map[string]string{"id": id, "variable": variable, "citefind": ours, "pandoc": their})
		}
	}
	files, records, parseErrs, pandocFailed := 0, 0, 0, 0
	var pandocTime time.Duration
	for _, root := range roots {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.EqualFold(filepath.Ext(path), ".bib") {
				return err
			}
			files++
			var ours []json.RawMessage
			err = corpus.ReadFile(ctx, path, func(r corpus.Record) error {
				ours = append(ours, r.Item)
				return nil
			}, func(e *corpus.ParseError) { parseErrs++; fmt.Fprintln(os.Stderr, e) })
			if err != nil {
				return err
			}
			records += len(ours)
			t0 := time.Now()
			their, err := pandocItems(ctx, pandoc, cache, root, path)
			pandocTime += time.Since(t0)
			if err != nil {
				fmt.Fprintf(os.Stderr, "%s: pandoc: %v\n", path, err)
				pandocFailed++
				c.Unmatched += len(ours)
				return nil
			}
			return c.Add(ours, their)
		})
		if err != nil {
			return err
		}
	}
	fmt.Printf("%d .bib files, %d records read by citefind (%d bad entries skipped), pandoc failed on %d files; %s (pandoc %s)\n\n",
		files, records, parseErrs, pandocFailed, time.Since(start).Round(time.Second), pandocTime.Round(time.Second))
	return c.WriteMarkdown(os.Stdout, examples)
}

// pandocItems returns pandoc's CSL-JSON items of a file, from the cache
// when there.
func pandocItems(ctx context.Context, pandoc, cache, root, path string) ([]json.RawMessage, error) {
	var cached string
	if cache != "" {
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return nil, err
		}
		cached = filepath.Join(cache, rel+".json")
		if b, err := os.ReadFile(cached); err == nil {
			return decodeItems(b)
		}
	}
	cmd := exec.CommandContext(ctx, pandoc, "-f", "bibtex", "-t", "csljson", path)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
	}
	if cached != "" {
		if err := os.MkdirAll(filepath.Dir(cached), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(cached, out.Bytes(), 0o644); err != nil {
			return nil, err
		}
	}
	return decodeItems(out.Bytes())
}

func decodeItems(b []byte) ([]json.RawMessage, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(b, &items); err != nil {
		return nil, fmt.Errorf("decode pandoc output: %w", err)
	}
	return items, nil
}
