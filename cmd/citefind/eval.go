package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/citefind/citefind"
	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/eval"
	"github.com/citefind/citefind/internal/datadir"
	"github.com/citefind/citefind/internal/progress"
)

type evalCmd struct{ env }

func (c *evalCmd) Name() string { return "eval" }
func (c *evalCmd) Synopsis() string {
	return "measure retrieval quality on a benchmark (recall@K, nDCG@10, MRR@10)"
}

const evalUsage = `Usage: citefind eval [--db DIR] --bench NAME [--data DIR] [--corpus PATH] [--queries FILE]
                     [--retrievers bm25] [--rerank none] [--json] [--run-out FILE]

NAME: acm-cr (both topic sets) | acm-cr:contexts | acm-cr:sentences | jsonl

acm-cr reads the ACM-CR files under --data (default $CITEFIND_DATA/acm-cr,
CITEFIND_DATA defaulting to ../shared/data), builds an index of its own
collection (the upstream indexing rules: articles and proceedings papers, no
"Session" records, no citing papers) into --db once, and reuses it afterwards.
Without --db the benchmark database is $CITEFIND_DB/bench/NAME.

jsonl takes --corpus PATH (any format index reads) and --queries FILE (one
{"id", "text", "relevant": [ids]} object per line).

The report gives recall@1/5/10/20/50/100, nDCG@10, MRR@10 and accuracy@1 per
topic set, macro-averaged over queries, as trec_eval computes them; relevant
papers missing from the collection count in the recall denominator and are
reported. --run-out writes TREC run files (one per topic set: FILE, or
FILE with the set name inserted before the extension when there are two).`

func (c *evalCmd) Run(ctx context.Context, args []string) error {
	fs := newFlagSet(c.env, "eval", evalUsage)
	db := fs.String("db", "", "benchmark database `DIR` (default $CITEFIND_DB/bench/NAME)")
	bench := fs.String("bench", "", "benchmark `NAME`")
	data := fs.String("data", "", "benchmark data `DIR` (default $CITEFIND_DATA/NAME)")
	corpusPath := fs.String("corpus", "", "corpus `PATH` for --bench jsonl")
	queries := fs.String("queries", "", "queries `FILE` for --bench jsonl")
	retrievers := fs.String("retrievers", "bm25", "comma-separated retrievers (available: bm25)")
	rerank := fs.String("rerank", "none", "reranker: none (learned and llm are not available yet)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	runOut := fs.String("run-out", "", "write TREC run `FILE`(s)")
	depth := fs.Int("k", 100, "ranking depth retrieved per query")
	quiet := fs.Bool("quiet", false, "no progress display")
	raw := fs.Bool("raw", false, "search the query texts as given, without removing citation markers")
	var bf bm25Flags
	bf.register(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErr("eval: unexpected argument %q", pos[0])
	}
	if *bench == "" {
		return usageErr("eval: --bench is required (acm-cr, acm-cr:contexts, acm-cr:sentences, jsonl)")
	}
	if *rerank != "none" {
		return usageErr("eval: --rerank %q is not available yet (only none)", *rerank)
	}
	for _, r := range splitList(*retrievers) {
		if r != citefind.RetrieverBM25 {
			return usageErr("eval: unknown retriever %q (available: bm25)", r)
		}
	}
	if *depth < 100 {
		return usageErr("eval: -k must be at least 100 (recall@100 is reported), got %d", *depth)
	}
	sopts, err := bf.options()
	if err != nil {
		return err
	}
	var prog io.Writer = c.stderr
	if *quiet {
		prog = nil
	}

	name, setName, _ := strings.Cut(*bench, ":")
	var (
		sets    []eval.TopicSet
		files   []string
		keep    func(corpus.Record) (bool, string)
		dbName  = name
		benchID = name
	)
	switch name {
	case "acm-cr":
		dir := *data
		if dir == "" {
			dir = datadir.Bench("acm-cr")
		}
		var which []string
		if setName != "" {
			which = []string{setName}
		}
		a, err := eval.LoadACMCR(dir, which...)
		if err != nil {
			return fmt.Errorf("load ACM-CR: %w", err)
		}
		sets, files, keep = a.Sets, a.BibFiles, a.Keep
	case "jsonl":
		if *corpusPath == "" || *queries == "" {
			return usageErr("eval: --bench jsonl needs --corpus PATH and --queries FILE")
		}
		qs, err := eval.LoadJSONLQueries(*queries)
		if err != nil {
			return err
		}
		sets = []eval.TopicSet{{Name: strings.TrimSuffix(filepath.Base(*queries), filepath.Ext(*queries)), Queries: qs}}
		files = []string{*corpusPath}
		abs, _ := filepath.Abs(*corpusPath)
		h := sha256.Sum256([]byte(abs))
		dbName = "jsonl-" + hex.EncodeToString(h[:4])
	case "citeme", "litsearch", "scholargym":
		return usageErr("eval: --bench %s is not supported yet (only acm-cr and jsonl)", name)
	default:
		return usageErr("eval: unknown benchmark %q (acm-cr, acm-cr:contexts, acm-cr:sentences, jsonl)", *bench)
	}
	if *db == "" {
		*db = filepath.Join(citefind.DefaultDBDir(), "bench", dbName)
	}

	if err := c.ensureDB(ctx, *db, benchID, files, keep, prog); err != nil {
		return err
	}
	eng, err := citefind.Open(ctx, *db, citefind.EngineOptions{Sparse: sopts, Raw: *raw})
	if err != nil {
		return err
	}
	defer eng.Close()

	var results []*eval.Result
	for _, set := range sets {
		var bar *progress.Bar
		if prog != nil {
			bar = progress.New(prog, "eval "+name+":"+set.Name, int64(len(set.Queries)), "queries")
		}
		res, err := eval.Run(ctx, set, eng, eval.Options{
			K: *depth,
			Resolve: func(ids []string) (map[string]string, error) {
				return eng.Store().Resolve(ctx, ids)
			},
			Progress: func(done, total int) { bar.Set(int64(done), 0) },
		})
		bar.Done()
		if err != nil {
			return err
		}
		res.Bench = name
		res.Stage = citefind.RetrieverBM25
		results = append(results, res)
	}
	if len(results) > 1 {
		var lat []time.Duration
		for _, res := range results {
			for _, q := range res.PerQuery {
				if q.Err == "" {
					lat = append(lat, q.Latency)
				}
			}
		}
		fmt.Fprintf(c.stderr, "latency over all %d queries: p50 %.1f ms, p99 %.1f ms\n", len(lat),
			ms(eval.Percentile(lat, 50)), ms(eval.Percentile(lat, 99)))
	}
	if *runOut != "" {
		for _, res := range results {
			path := *runOut
			if len(results) > 1 {
				ext := filepath.Ext(path)
				path = strings.TrimSuffix(path, ext) + "." + res.Set + ext
			}
			if err := writeFile(path, func(w io.Writer) error { return eval.WriteRun(w, res, "citefind-"+res.Stage) }); err != nil {
				return err
			}
			fmt.Fprintf(c.stderr, "wrote run file %s\n", path)
		}
	}
	if *asJSON {
		return eval.WriteJSON(c.stdout, results)
	}
	fmt.Fprintf(c.stdout, "%s: %d papers in the collection (%s)\n\n", name, eng.Count(), *db)
	return eval.WriteMarkdown(c.stdout, results)
}

// ensureDB builds the benchmark database when it holds no papers yet and
// brings its index up to date.
func (c *evalCmd) ensureDB(ctx context.Context, db, bench string, files []string, keep func(corpus.Record) (bool, string), prog io.Writer) error {
	if err := os.MkdirAll(db, 0o755); err != nil {
		return fmt.Errorf("create benchmark database: %w", err)
	}
	st, err := corpus.OpenStore(ctx, filepath.Join(db, citefind.StoreFile))
	if err != nil {
		return err
	}
	defer st.Close()
	n, err := st.Count(ctx)
	if err != nil {
		return err
	}
	if n == 0 {
		fmt.Fprintf(c.stderr, "building the %s benchmark database in %s (once)\n", bench, db)
		if err := st.SetMeta(ctx, "bench", bench); err != nil {
			return err
		}
	} else if b, _ := st.Meta(ctx, "bench"); b != bench {
		return fmt.Errorf("%s holds another collection (bench %q), not %s; pass another --db", db, b, bench)
	}
	// Files already ingested with the same content are skipped, so this
	// completes an interrupted build and is cheap otherwise.
	sum, err := citefind.Ingest(ctx, st, files, citefind.IngestOptions{Keep: keep, Progress: prog,
		OnError: func(err error) { fmt.Fprintln(c.stderr, err) }})
	if err != nil {
		return err
	}
	if sum.Skipped() > 0 {
		fmt.Fprintf(c.stderr, "warning: %s skipped while reading the benchmark collection\n", plural(sum.Skipped(), "bad record"))
	}
	_, err = citefind.BuildIndexes(ctx, db, st, citefind.BuildOptions{Progress: prog})
	return err
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func writeFile(path string, fn func(io.Writer) error) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if err := fn(f); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}
