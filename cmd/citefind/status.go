package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/citefind/citefind/db"
	"github.com/citefind/citefind/eval"
)

type statusCmd struct{ env }

func (c *statusCmd) Name() string { return "status" }
func (c *statusCmd) Synopsis() string {
	return "papers in the store and in each index, and whether they agree"
}

const statusUsage = `Usage: citefind status [--db DIR] [--json]

Reports the papers in the store of DIR, the documents in each index, the
store generation each index was built from, and whether they agree. When
they do not, says what is out of date and the command that fixes it, and
exits with status 3.`

func (c *statusCmd) Run(ctx context.Context, args []string) error {
	fs := newFlagSet(c.env, "status", statusUsage)
	dir := dbFlag(fs)
	asJSON := fs.Bool("json", false, "print one JSON object")
	if _, err := parseArgs(fs, args); err != nil {
		return err
	}
	s, err := db.ReadStatus(ctx, *dir)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(c.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(s); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(c.stdout, "database %s\n", s.DB)
		fmt.Fprintf(c.stdout, "  store:  %d papers, generation %d\n", s.StorePapers, s.StoreGeneration)
		if s.Backend != "local" {
			fmt.Fprintf(c.stdout, "  backend: %s\n", s.Backend)
		}
		for _, d := range s.Detail {
			fmt.Fprintf(c.stdout, "    %s\n", d)
		}
		for _, ix := range s.Indexes {
			switch {
			case !ix.Exists:
				fmt.Fprintf(c.stdout, "  %-6s  missing\n", ix.Name+":")
			case ix.Error != "":
				fmt.Fprintf(c.stdout, "  %-6s  unreadable: %s\n", ix.Name+":", ix.Error)
			case ix.Name == "dense" && s.Embedder != "":
				model := ""
				if s.VectorModel != "" {
					model = " (model " + s.VectorModel + ")"
				}
				fmt.Fprintf(c.stdout, "  %-6s  %d papers, embedder %s%s, built from generation %d\n", ix.Name+":", ix.Docs, s.Embedder, model, ix.Generation)
			default:
				fmt.Fprintf(c.stdout, "  %-6s  %d papers, built from generation %d\n", ix.Name+":", ix.Docs, ix.Generation)
			}
		}
		p := s.Pipeline
		switch {
		case s.PipelineError != "":
			fmt.Fprintf(c.stdout, "  queries: fail: the pipeline is unreadable: %s\n", s.PipelineError)
		case p == nil:
			b := db.BuiltinPipeline(s.Embedder)
			fmt.Fprintf(c.stdout, "  queries: %s (the built-in pipeline: the database has no %s; run citefind index to write it)\n",
				describeDBPipeline(b), db.PipelineFile)
		default:
			fmt.Fprintf(c.stdout, "  queries: %s\n           (%s)\n", describeDBPipeline(*p), p.Source)
		}
		if s.WriterPID != 0 {
			fmt.Fprintf(c.stdout, "  a citefind (pid %d) is writing this database now\n", s.WriterPID)
		}
		if s.Agree {
			fmt.Fprintln(c.stdout, "in agreement")
		} else {
			for _, p := range s.Problems {
				fmt.Fprintf(c.stdout, "out of date: %s\n", p)
			}
			fmt.Fprintf(c.stdout, "fix: %s\n", s.Fix)
		}
	}
	if !s.Agree {
		return &exitError{code: 3, err: fmt.Errorf("store and indexes disagree (run `%s`)", s.Fix)}
	}
	return nil
}

// describeDBPipeline is one line on a database's pipeline.
func describeDBPipeline(p db.Pipeline) string {
	s := strings.Join(p.Retrievers, " + ")
	if len(p.Retrievers) > 1 {
		s = fmt.Sprintf("%s fused by %s (%s)", strings.Join(p.Retrievers, ", "), p.Method, eval.FormatWeights(p.Retrievers, p.Weights))
	}
	if p.Rerank != "" && p.Rerank != "none" {
		s += ", reranked by " + p.Rerank
	}
	return s
}
