package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/citefind/citefind"
	"github.com/citefind/citefind/engine"
)

type queryCmd struct{ env }

func (c *queryCmd) Name() string { return "query" }
func (c *queryCmd) Synopsis() string {
	return "find candidate papers for a masked-citation excerpt or a question"
}

const queryUsage = `Usage: citefind query [--db DIR] [-k N] [--json] [--retrievers bm25,rm3,citing,dense] [--fusion rrf|max|minmax]
                      [--weights bm25=1,dense=0.1] [--strict] [--rerank none|learned|llm] [--pick]
                      [--llm MODEL] [--rerank-model FILE] TEXT | -

TEXT is a sentence or paragraph with a missing citation ("... as shown by
[CITATION] ...") or a literature question; "-" reads it from standard input.
Citation markers ([12], [3-5], [CITATION], (Smith et al., 2020)) are removed
before searching.

Retrievers: bm25 (the cleaned text), rm3 (BM25 over the text expanded with
terms of its top 10 BM25 hits), citing (BM25 of each sentence that holds a
citation marker, for paragraph-long contexts) and dense (the embedding index
built by index --embedder). With several, their lists are fused (--fusion,
--weights); each hit's "sources" give every retriever's rank and score and
"score" is the fused score. Without --retrievers, --fusion, --weights or
--rerank, the database's pipeline applies (DIR/pipeline.json, written by
index, shown by citefind status; eval measures the same): with the contrast
embedder (a new database's) bm25 1, citing 0.5 and dense 1, min-max
fusion, then the learned reranker, chosen on ACM-CR, SciFact and ScisummNet;
without an embedder bm25, rm3 0.2 and citing 0.5 (+ dense 0.05 with
builtin), no reranker. A retriever that fails or takes over 5 s is reported as a
warning and the others' hits are used; --strict makes it an error.

--rerank reorders the top fused candidates: learned (a model trained on
ACM-CR, SciFact and ScisummNet, the database's own from train --self, or
--rerank-model FILE; no server needed; as many candidates as its model was
trained on, 50 for the default pipeline's; for the retrievers it was trained
on: citefind ships one for each default pipeline and picks by the
retrievers; on collections it had not seen it moved nDCG@10 by −.004 to
+.012, on test queries of collections it was trained on by +.001 to +.022:
docs/rerank.md; --rerank none turns it off) or llm (an
Ollama chat model, --llm or CITEFIND_LLM, at OLLAMA_HOST). If the model fails, the fused
order comes back with a warning. --pick chooses the one paper to cite among
the hits: with an LLM configured (--llm or CITEFIND_LLM) the model picks and
its answer is mapped back to a candidate (by ID, then title); without one, or
when the answer names no candidate, the top rank is picked and "picked" says
"fallback": true and why. The pick is always one of the hits.

Examples:
  citefind query "Reciprocal rank fusion [CITATION] combines rankings without score calibration."
  echo "dense passage retrieval for open-domain QA [7]" | citefind query --json -k 5 -
  citefind query --rerank llm --llm qwen2.5:3b --pick "BERT [CITATION] is pre-trained on masked tokens."`

func (c *queryCmd) Run(ctx context.Context, args []string) error {
	fs := newFlagSet(c.env, "query", queryUsage)
	db := dbFlag(fs)
	k := fs.Int("k", 10, "number of candidates to return (no upper limit here; the HTTP API allows 1-100, MCP 1-50: a page of results, and a model's context)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	retrievers := fs.String("retrievers", "", "comma-separated `LIST` of retrievers to use: "+strings.Join(citefind.RetrieverNames, ", ")+" (default: the database's pipeline, see citefind status)")
	var ff fusionFlags
	ff.register(fs)
	rerank := fs.String("rerank", "", "reranker of the top fused candidates: none, learned (offline model), llm (Ollama chat) (default: the database's pipeline)")
	var lf llmFlags
	lf.register(fs)
	pick := fs.Bool("pick", false, "choose the one paper to cite (without an LLM picker: the top rank, marked as fallback)")
	raw := fs.Bool("raw", false, "search the text as given, without stripping citation markers")
	var bf bm25Flags
	bf.register(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usageErr("query: no TEXT given (pass the text, or - to read standard input)")
	}
	if *k <= 0 {
		return usageErr("query: -k must be positive, got %d", *k)
	}
	if err := citefind.CheckReranker(*rerank); err != nil {
		return usageErr("query: %v", err)
	}
	names, err := parseRetrievers("query", *retrievers)
	if err != nil {
		return err
	}
	text := strings.Join(pos, " ")
	if text == "-" {
		b, err := io.ReadAll(c.stdin)
		if err != nil {
			return fmt.Errorf("read standard input: %w", err)
		}
		text = string(b)
	}
	text = strings.TrimSpace(text)
	if text == "" {
		return usageErr("query: the query text is empty")
	}
	sopts, err := bf.options()
	if err != nil {
		return err
	}
	eopts, err := ff.options()
	if err != nil {
		return err
	}
	eopts.Sparse = sopts
	lf.apply(&eopts)
	eng, err := engine.Open(ctx, *db, eopts)
	if err != nil {
		return err
	}
	defer eng.Close()
	res, err := eng.Search(ctx, text, citefind.QueryOptions{K: *k, Retrievers: names, Raw: *raw, Rerank: *rerank, Pick: *pick})
	if err != nil {
		return err
	}
	if len(res.Hits) == 0 && eng.Count(ctx) == 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("the database %s holds no papers: index a bibliography first, e.g. citefind index --db %s refs.bib", *db, *db))
	}
	if *asJSON {
		enc := json.NewEncoder(c.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	printResult(c.stdout, res)
	for _, w := range res.Warnings {
		fmt.Fprintln(c.stderr, "warning:", w)
	}
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func printResult(w io.Writer, res *citefind.Result) {
	if res.Cleaned != res.Query {
		fmt.Fprintf(w, "query: %s\n\n", res.Cleaned)
	}
	if len(res.Hits) == 0 {
		fmt.Fprintln(w, "no matching papers")
		return
	}
	for _, h := range res.Hits {
		mark := " "
		if res.Picked != nil && res.Picked.ID == h.ID {
			mark = "*"
		}
		year := "n.d."
		if h.Year != 0 {
			year = fmt.Sprint(h.Year)
		}
		fmt.Fprintf(w, "%s%2d. %s (%s)\n", mark, h.Rank, h.Title, year)
		var meta []string
		if a := authorsShort(h.Authors); a != "" {
			meta = append(meta, a)
		}
		if h.Venue != "" {
			meta = append(meta, h.Venue)
		}
		if len(meta) > 0 {
			fmt.Fprintf(w, "     %s\n", strings.Join(meta, " · "))
		}
		if h.Key != "" {
			fmt.Fprintf(w, "     id %s   key %s   score %.3f\n", h.ID, h.Key, h.Score)
		} else {
			fmt.Fprintf(w, "     id %s   score %.3f\n", h.ID, h.Score)
		}
	}
}

func authorsShort(as []string) string {
	switch len(as) {
	case 0:
		return ""
	case 1, 2, 3:
		return strings.Join(as, ", ")
	default:
		return as[0] + " et al."
	}
}
