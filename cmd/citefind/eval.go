package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/citefind/citefind"
	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/eval"
	"github.com/citefind/citefind/internal/atomicfile"
	"github.com/citefind/citefind/internal/datadir"
	"github.com/citefind/citefind/internal/progress"
	"github.com/citefind/citefind/retrieve/sparse"
)

type evalCmd struct{ env }

func (c *evalCmd) Name() string { return "eval" }
func (c *evalCmd) Synopsis() string {
	return "measure retrieval quality on a benchmark (recall@K, nDCG@10, MRR@10), compare runs"
}

const evalUsage = `Usage: citefind eval [--db DIR] --bench NAME [--data DIR] [--corpus PATH] [--queries FILE]
                     [--retrievers bm25[,dense]] [--fusion rrf|max|minmax] [--weights bm25=1,dense=0.1]
                     [--rerank none|learned|llm [--rerank-model FILE | --folds N]] [--pick] [--llm MODEL]
                     [--sweep-weights [--sweep-values LIST] [--save-weights]] [--json] [--run-out FILE]
                     [--save-run FILE] [--label NAME] [--report FILE.md]
       citefind eval --compare RUN_A RUN_B [--report FILE.md] [--json]
       citefind eval --compare RUN_A.trec RUN_B.trec --bench NAME [--db DIR] [--data DIR]

NAME: acm-cr (both topic sets) | acm-cr:contexts | acm-cr:sentences | jsonl
      | citeme[:test|:train] | litsearch[:QUERY_SET] | scholargym[:SOURCE]

acm-cr reads the ACM-CR files under --data (default $CITEFIND_DATA/acm-cr,
CITEFIND_DATA defaulting to ../shared/data), builds an index of its own
collection (the upstream indexing rules: articles and proceedings papers, no
"Session" records, no citing papers) into --db once, and reuses it afterwards.
Without --db the benchmark database is $CITEFIND_DB/bench/NAME.

jsonl takes --corpus PATH (any format index reads) and --queries FILE (one
{"id", "text", "relevant": [ids]} object per line).

citeme, litsearch and scholargym read the benchmark's native file from --data
(a file, or a folder; default $CITEFIND_DATA/formats/NAME) or --queries FILE.
They ship no collection: --corpus PATH (a file or folder in any format index
reads; for litsearch also the LitSearch corpus as JSON Lines,
{"corpusid", "title", "abstract", …} per line) is indexed into --db (default
$CITEFIND_DB/bench/corpus-HASH); without --corpus, the database --db DIR
(e.g. your own library) is evaluated as it is. Gold papers are found in it by ID or alias
(e.g. LitSearch corpus ids), DOI, arXiv id or normalised title; CiteME's
alternative titles name one gold paper. The report gives coverage, the share
of gold papers found in the corpus; the missing ones count in the recall
denominator.

--retrievers bm25,dense (the database needs a dense index: index --embedder)
reports each retriever alone and their fusion (--fusion, --weights, as for
query) as the stages bm25, dense and fused, in one run. A query whose dense
retrieval fails counts as a failed query of the dense stage, and of the fused
stage only with --strict (otherwise fused falls back to the others).

Without --retrievers, the database's default retrievers run (see query).
--sweep-weights fuses the retrievers' stored rankings with every weight on a
grid (the first retriever fixed at 1; --sweep-values, default
0,0.025,0.05,0.1,0.15,0.2,0.3,0.4,0.5,0.75,1,1.5,2) and prints recall@10,
recall@100 and nDCG@10 of each beside the first retriever alone, then the
chosen weights: those at most .005 below the first retriever on recall@10
and nDCG@10 that raise recall@100 on every topic set, with the largest mean
gain. --save-weights stores the choice in the database as its default
(fusion.json, tied to its embedder).

--rerank llm adds the stage reranked: the top 100 fused candidates reordered
by the Ollama chat model (--llm MODEL or CITEFIND_LLM). --pick adds the stage picked (the picker's choice first, then
the rest) and prints the picker's figures: accuracy@1, picks outside the
candidates (always 0: the guard maps every answer to a candidate) and the
share of model answers that named a non-candidate.

--rerank learned adds the stage "reranked": the fused candidates (top -k)
reordered by the learned reranker, the built-in model or --rerank-model FILE
(see citefind train). With --folds N it is cross-validated instead: the
queries are split into N folds by citing paper (both topic sets alike), a
model is trained on the other folds' queries and reranks each fold's queries,
so no query is reranked by a model that saw its citing paper. The candidates
are cached in --db (--rerank-cache FILE) so later runs skip that retrieval.

The report gives, per topic set and stage, recall@1/5/10/20/50/100, nDCG@10,
MRR@10 and accuracy@1 macro-averaged over queries as trec_eval computes
them, latency p50/p99 and coverage. --run-out writes TREC run files (one per
topic set: FILE, or FILE with the set name inserted before the extension when
there are two). --save-run writes the whole run (per-query metrics, ranks,
ranked ids, settings) as JSON for --compare. --report writes the Markdown
report to FILE with recall@K figures (PNG and SVG) beside it.

--compare RUN_A RUN_B compares two saved runs query by query, per topic set and
metric: means, difference B − A, 95% bootstrap interval of the difference and
the two-sided paired randomisation test p-value (10,000 sign flips, fixed
seed), with a per-query win/loss figure when --report is given. TREC run files
are accepted too, with --bench (and the benchmark database) for the judgements.`

func (c *evalCmd) Run(ctx context.Context, args []string) error {
	fs := newFlagSet(c.env, "eval", evalUsage)
	db := fs.String("db", "", "benchmark database `DIR` (default $CITEFIND_DB/bench/NAME)")
	bench := fs.String("bench", "", "benchmark `NAME`")
	data := fs.String("data", "", "benchmark data `DIR` or file (default $CITEFIND_DATA/NAME, $CITEFIND_DATA/formats/NAME)")
	corpusPath := fs.String("corpus", "", "corpus `PATH` for --bench jsonl, citeme, litsearch, scholargym")
	queries := fs.String("queries", "", "queries `FILE` (--bench jsonl; overrides --data for citeme, litsearch, scholargym)")
	retrievers := fs.String("retrievers", "", "comma-separated retrievers, each a stage of the report, fused as a further stage when several: "+strings.Join(citefind.RetrieverNames, ", ")+" (default: the database's)")
	var ff fusionFlags
	ff.register(fs)
	rerank := fs.String("rerank", "none", "reranker of the fused candidates, reported as the stage reranked: none, learned (see --rerank-model, --folds), llm")
	pick := fs.Bool("pick", false, "add the stage picked (the picker's choice first) and the picker's figures: accuracy@1, picks outside the candidates, model answers naming a non-candidate")
	var mf llmFlags
	mf.registerLLM(fs)
	var lf learnedFlags
	lf.register(fs)
	asJSON := fs.Bool("json", false, "print the report as JSON")
	runOut := fs.String("run-out", "", "write TREC run `FILE`(s)")
	saveRun := fs.String("save-run", "", "write the run (per-query metrics and rankings, settings) as JSON to `FILE`, for --compare")
	label := fs.String("label", "", "`NAME` of the run in saved runs and reports (default: run)")
	report := fs.String("report", "", "write the Markdown report to `FILE` with figures beside it")
	compare := fs.Bool("compare", false, "compare two runs given as arguments: RUN_A RUN_B")
	depth := fs.Int("k", 100, "ranking depth retrieved per query")
	quiet := fs.Bool("quiet", false, "no progress display")
	raw := fs.Bool("raw", false, "search the query texts as given, without removing citation markers")
	var bf bm25Flags
	bf.register(fs)
	var sf sweepFlags
	sf.register(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	var prog io.Writer = c.stderr
	if *quiet {
		prog = nil
	}
	if *compare {
		if len(pos) != 2 {
			return usageErr("eval: --compare takes two run files, RUN_A RUN_B (got %d arguments)", len(pos))
		}
		return c.compare(ctx, pos[0], pos[1], compareOptions{bench: *bench, data: *data, db: *db, corpus: *corpusPath,
			queries: *queries, depth: *depth, report: *report, asJSON: *asJSON, prog: prog})
	}
	if len(pos) > 0 {
		return usageErr("eval: unexpected argument %q", pos[0])
	}
	if *bench == "" {
		return usageErr("eval: --bench is required (acm-cr, acm-cr:contexts, acm-cr:sentences, jsonl, citeme, litsearch, scholargym)")
	}
	if err := lf.validate(*rerank); err != nil {
		return err
	}
	stageNames, err := parseRetrievers("eval", *retrievers)
	if err != nil {
		return err
	}
	eopts, err := ff.options()
	if err != nil {
		return err
	}
	sweepValues, err := sf.parse()
	if err != nil {
		return err
	}
	if sf.sweep && *asJSON {
		return usageErr("eval: --sweep-weights prints Markdown tables; it does not combine with --json (use --save-run for the stages' data)")
	}
	if *depth < 100 {
		return usageErr("eval: -k must be at least 100 (recall@100 is reported), got %d", *depth)
	}
	sopts, err := bf.options()
	if err != nil {
		return err
	}

	b, err := c.benchDB(ctx, "eval", *bench, *data, *corpusPath, *queries, db, prog)
	if err != nil {
		return err
	}
	eopts.Sparse, eopts.Raw, eopts.Retrievers = sopts, *raw, stageNames
	mf.apply(&eopts)
	eopts.RerankModel = lf.model
	eng, err := citefind.Open(ctx, *db, eopts)
	if err != nil {
		return err
	}
	defer eng.Close()
	if len(stageNames) == 0 {
		stageNames, _ = eng.DefaultRetrievers()
	}
	var grid []map[string]float64
	if sf.sweep {
		if grid, err = sweepGrid(stageNames, sweepValues); err != nil {
			return err
		}
	}
	if slices.Contains(stageNames, citefind.RetrieverDense) {
		if err := eng.DenseAvailable(ctx); err != nil {
			return err
		}
	}

	// The stages of the report, in pipeline order. Each retriever alone,
	// then fused, (as they land) reranked and picked.
	var stages []eval.Stage
	for _, name := range stageNames {
		stages = append(stages, eval.Stage{Name: name, Retriever: eng.Retriever(name)})
	}
	if len(stageNames) > 1 {
		stages = append(stages, eval.Stage{Name: "fused", Retriever: eng})
	}
	rs, err := c.rerankStage(ctx, *rerank, lf, *db, eng, b, stageNames, *depth, *raw, eopts, prog)
	if err != nil {
		return err
	}
	if rs != nil {
		stages = append(stages, *rs)
	}
	if *rerank == "llm" {
		stages = append(stages, engineRerankStage(eng, *rerank))
	}
	var picks pickTally

	resolve := func(ids []string) (map[string]string, error) { return eng.Store().Resolve(ctx, ids) }
	var cat *eval.Catalog
	var results []*eval.Result
	sweepOpts := map[string]eval.Options{}
	for _, set := range b.sets {
		opts := eval.Options{K: *depth, Bench: b.name, Resolve: resolve}
		if set.Gold != nil {
			if cat == nil {
				if cat, err = eval.BuildCatalog(ctx, eng.Store()); err != nil {
					return fmt.Errorf("read the corpus for matching gold papers: %w", err)
				}
			}
			opts.ResolveGold = eval.MatchGold(set, cat, resolve)
		}
		setStages := stages
		if *pick {
			setStages = append(slices.Clone(stages), pickStage(eng, *rerank, set.Name, &picks))
		}
		for _, st := range setStages {
			var bar *progress.Bar
			if prog != nil {
				bar = progress.New(prog, "eval "+b.name+":"+set.Name+" "+st.Name, int64(len(set.Queries)), "queries")
			}
			opts.Progress = func(done, total int) { bar.Set(int64(done), 0) }
			res, err := eval.RunStages(ctx, set, []eval.Stage{st}, opts)
			bar.Done()
			if err != nil {
				return err
			}
			results = append(results, res...)
		}
		sweepOpts[set.Name] = opts
	}
	if len(b.sets) > 1 {
		last := stages[len(stages)-1].Name
		if *pick {
			last = "picked"
		}
		var lat []time.Duration
		for _, res := range results {
			if res.Stage != last {
				continue
			}
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
			if len(b.sets) > 1 {
				ext := filepath.Ext(path)
				path = strings.TrimSuffix(path, ext) + "." + res.Set + ext
			}
			if len(stages) > 1 {
				ext := filepath.Ext(path)
				path = strings.TrimSuffix(path, ext) + "." + res.Stage + ext
			}
			if err := writeFile(path, func(w io.Writer) error { return eval.WriteRun(w, res, "citefind-"+res.Stage) }); err != nil {
				return err
			}
			fmt.Fprintf(c.stderr, "wrote run file %s\n", path)
		}
	}
	rf := &eval.RunFile{
		Label: *label, Created: time.Now().UTC(), Version: Version,
		Command:  append([]string{"citefind", "eval"}, args...),
		Settings: runSettings(*bench, b, *depth, *raw, sopts, stageNames, *rerank),
		Results:  results,
	}
	lf.settings(*rerank, rf.Settings)
	if len(stageNames) > 1 {
		m, w := eng.Fusion()
		rf.Settings["fusion"] = string(m)
		rf.Settings["fusion_weights"] = formatWeights(w)
	}
	if rf.Label == "" {
		rf.Label = "run"
	}
	if *saveRun != "" {
		if err := writeFile(*saveRun, func(w io.Writer) error { return eval.WriteRunFile(w, rf) }); err != nil {
			return err
		}
		fmt.Fprintf(c.stderr, "wrote run %s\n", *saveRun)
	}
	if *report != "" {
		if err := writeReport(*report, []*eval.RunFile{rf}); err != nil {
			return err
		}
		fmt.Fprintf(c.stderr, "wrote report %s\n", *report)
	}
	if *asJSON {
		if *pick {
			picks.write(c.stderr, results)
		}
		return eval.WriteJSON(c.stdout, results)
	}
	fmt.Fprintf(c.stdout, "%s: %d papers in the collection (%s)\n\n", b.name, eng.Count(), *db)
	if err := eval.WriteMarkdown(c.stdout, results); err != nil {
		return err
	}
	if *pick {
		fmt.Fprintln(c.stdout)
		picks.write(c.stdout, results)
	}
	if sf.sweep {
		m, _ := eng.Fusion()
		return c.runSweep(ctx, &sf, eng, *db, stageNames, grid, m, b.sets, results, sweepOpts)
	}
	return nil
}

// benchDB loads the benchmark and makes sure its database exists and is
// up to date: the benchmark's own collection is indexed into *db (default
// $CITEFIND_DB/bench/NAME) once; a benchmark without a collection needs
// --corpus or an existing --db.
func (c *evalCmd) benchDB(ctx context.Context, cmd, bench, data, corpusPath, queries string, db *string, prog io.Writer) (*benchSpec, error) {
	b, err := loadBench(bench, data, corpusPath, queries)
	if err != nil {
		return nil, err
	}
	if b.dbName == "" && *db == "" {
		return nil, usageErr("%s: --bench %s ships no collection: give --corpus PATH (a file or folder index reads) or the --db DIR of an existing database", cmd, b.name)
	}
	if *db == "" {
		*db = filepath.Join(citefind.DefaultDBDir(), "bench", b.dbName)
	}
	if b.id != "" {
		if err := b.prepareCorpus(ctx, *db, c.stderr); err != nil {
			return nil, err
		}
		if err := c.ensureDB(ctx, *db, b.id, b.files, b.keep, prog); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// runSettings are the settings recorded in a saved run.
func runSettings(bench string, b *benchSpec, depth int, raw bool, so sparse.Options, stages []string, rerank string) map[string]string {
	s := map[string]string{
		"bench":         bench,
		"k":             strconv.Itoa(depth),
		"raw":           strconv.FormatBool(raw),
		"bm25-k1":       strconv.FormatFloat(so.K1, 'g', -1, 64),
		"bm25-b":        strconv.FormatFloat(so.B, 'g', -1, 64),
		"bm25-k3":       strconv.FormatFloat(so.K3, 'g', -1, 64),
		"field-weights": formatWeights(so.FieldWeights),
		"retrievers":    strings.Join(stages, ","),
		"rerank":        rerank,
	}
	if b.corpus != "" {
		s["corpus"] = b.corpus
	}
	return s
}

// writeReport writes the Markdown report of runs to path, figures beside it.
func writeReport(path string, runs []*eval.RunFile) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	prefix := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	return writeFile(path, func(w io.Writer) error {
		return eval.WriteReport(w, runs, eval.ReportOptions{FigureDir: dir, Prefix: prefix})
	})
}

// benchSpec is a benchmark resolved from --bench and its data flags.
type benchSpec struct {
	name   string                             // "acm-cr", "citeme", …
	id     string                             // what the database records as its collection
	dbName string                             // default database folder under $CITEFIND_DB/bench
	sets   []eval.TopicSet                    // topic sets to run
	files  []string                           // collection files to ingest
	keep   func(corpus.Record) (bool, string) // collection filter; nil keeps all
	corpus string                             // --corpus as given ("" for acm-cr)
	// litsearch is set when --corpus is the LitSearch corpus layout: it is
	// converted to CSL JSON Lines in the database folder before ingest.
	litsearch bool
}

// nativeFiles are the default file names of the native-format benchmarks.
var nativeFiles = map[string][]string{
	"citeme":     {"CiteME.tsv", "DATASET.csv"},
	"litsearch":  {"litsearch_queries_with_qrels.jsonl"},
	"scholargym": {"scholargym_bench.jsonl", "scholargym_bench.first200.jsonl"},
}

func loadBench(bench, data, corpusPath, queries string) (*benchSpec, error) {
	name, setName, _ := strings.Cut(bench, ":")
	b := &benchSpec{name: name, id: name, dbName: name, corpus: corpusPath}
	switch name {
	case "acm-cr":
		dir := data
		if dir == "" {
			dir = datadir.Bench("acm-cr")
		}
		var which []string
		if setName != "" {
			which = []string{setName}
		}
		a, err := eval.LoadACMCR(dir, which...)
		if err != nil {
			return nil, fmt.Errorf("load ACM-CR: %w", err)
		}
		b.sets, b.files, b.keep = a.Sets, a.BibFiles, a.Keep
	case "jsonl":
		if corpusPath == "" || queries == "" {
			return nil, usageErr("eval: --bench jsonl needs --corpus PATH and --queries FILE")
		}
		qs, err := eval.LoadJSONLQueries(queries)
		if err != nil {
			return nil, err
		}
		b.sets = []eval.TopicSet{{Name: strings.TrimSuffix(filepath.Base(queries), filepath.Ext(queries)), Queries: qs}}
		b.files = []string{corpusPath}
		abs, _ := filepath.Abs(corpusPath)
		h := sha256.Sum256([]byte(abs))
		b.dbName = "jsonl-" + hex.EncodeToString(h[:4])
	case "citeme", "litsearch", "scholargym":
		file, err := nativeFile(name, data, queries)
		if err != nil {
			return nil, err
		}
		var set *eval.TopicSet
		switch name {
		case "citeme":
			set, err = eval.LoadCiteME(file, setName)
		case "litsearch":
			set, err = eval.LoadLitSearch(file, setName)
		case "scholargym":
			set, err = eval.LoadScholarGym(file, setName)
		}
		if err != nil {
			return nil, fmt.Errorf("load %s: %w", name, err)
		}
		b.sets = []eval.TopicSet{*set}
		if corpusPath == "" {
			// An existing database (--db) is evaluated as it is.
			b.id, b.dbName = "", ""
			break
		}
		abs, err := filepath.Abs(corpusPath)
		if err != nil {
			return nil, err
		}
		fi, err := os.Stat(abs)
		if err != nil {
			return nil, fmt.Errorf("corpus: %w", err)
		}
		// The database depends on the corpus only: benchmarks over the
		// same corpus share it.
		h := sha256.Sum256([]byte(abs))
		b.id = "corpus " + abs
		b.dbName = "corpus-" + hex.EncodeToString(h[:4])
		b.files = []string{abs}
		if !fi.IsDir() && name == "litsearch" {
			if b.litsearch, err = eval.IsLitSearchCorpus(abs); err != nil {
				return nil, fmt.Errorf("corpus: %w", err)
			}
		}
	default:
		return nil, usageErr("eval: unknown benchmark %q (acm-cr, acm-cr:contexts, acm-cr:sentences, jsonl, citeme, litsearch, scholargym)", bench)
	}
	return b, nil
}

// nativeFile finds the benchmark file of a native-format benchmark:
// queries when given, else data (a file, or a folder holding one of the
// default file names), else $CITEFIND_DATA/formats/NAME.
func nativeFile(name, data, queries string) (string, error) {
	if queries != "" {
		return queries, nil
	}
	if data == "" {
		data = datadir.Bench(filepath.Join("formats", name))
	}
	fi, err := os.Stat(data)
	if err != nil {
		return "", fmt.Errorf("%s data: %w", name, err)
	}
	if !fi.IsDir() {
		return data, nil
	}
	for _, f := range nativeFiles[name] {
		p := filepath.Join(data, f)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s data: none of %s in %s (give the file with --data FILE)", name, strings.Join(nativeFiles[name], ", "), data)
}

// prepareCorpus converts a LitSearch-layout corpus into CSL JSON Lines in
// the database folder, and ingests that instead. The conversion is
// deterministic, so an unchanged corpus gives the same file, which
// ingest then skips.
func (b *benchSpec) prepareCorpus(ctx context.Context, db string, stderr io.Writer) error {
	if !b.litsearch {
		return nil
	}
	if err := os.MkdirAll(db, 0o755); err != nil {
		return fmt.Errorf("create benchmark database: %w", err)
	}
	out := filepath.Join(db, "litsearch-corpus.csl.jsonl")
	in, err := os.Open(b.files[0])
	if err != nil {
		return err
	}
	defer in.Close()
	bad := 0
	var n int
	err = writeFile(out, func(w io.Writer) error {
		var err error
		n, err = eval.ConvertLitSearchCorpus(ctx, in, b.files[0], w, func(pe *corpus.ParseError) {
			bad++
			if bad <= 10 {
				fmt.Fprintln(stderr, pe)
			}
		})
		return err
	})
	if err != nil {
		return fmt.Errorf("convert the LitSearch corpus: %w", err)
	}
	fmt.Fprintf(stderr, "LitSearch corpus %s: %d papers converted to %s, %d bad rows skipped\n", b.files[0], n, out, bad)
	b.files = []string{out}
	return nil
}

type compareOptions struct {
	bench, data, db, corpus, queries string
	depth                            int
	report                           string
	asJSON                           bool
	prog                             io.Writer
}

// compare reads two runs (saved runs, or TREC run files scored against
// --bench) and reports their paired comparison.
func (c *evalCmd) compare(ctx context.Context, pathA, pathB string, o compareOptions) error {
	var runs []*eval.RunFile
	var b *benchSpec
	var resolveFor func(set eval.TopicSet) (eval.Options, error)
	for _, path := range []string{pathA, pathB} {
		rf, err := eval.ReadRunFile(path)
		if err == nil {
			runs = append(runs, rf)
			continue
		}
		if !errors.Is(err, eval.ErrNotRunFile) {
			return err
		}
		// A TREC run file: judged against --bench.
		hits, tag, terr := eval.ReadTRECRun(path)
		if terr != nil {
			return fmt.Errorf("%s is neither a saved run (%v) nor a TREC run file: %w", path, err, terr)
		}
		if o.bench == "" {
			return usageErr("eval --compare: %s is a TREC run file; give --bench NAME for its judgements", path)
		}
		if b == nil {
			if b, err = loadBench(o.bench, o.data, o.corpus, o.queries); err != nil {
				return err
			}
			if o.db == "" {
				o.db = filepath.Join(citefind.DefaultDBDir(), "bench", b.dbName)
			}
			eng, err := citefind.Open(ctx, o.db, citefind.EngineOptions{AllowStale: true})
			if err != nil {
				return fmt.Errorf("the judgements of %s need its benchmark database (run `citefind eval --bench %s` first): %w", o.bench, o.bench, err)
			}
			defer eng.Close()
			resolve := func(ids []string) (map[string]string, error) { return eng.Store().Resolve(ctx, ids) }
			var cat *eval.Catalog
			resolveFor = func(set eval.TopicSet) (eval.Options, error) {
				opts := eval.Options{K: o.depth, Bench: b.name, Resolve: resolve}
				if set.Gold != nil {
					if cat == nil {
						var err error
						if cat, err = eval.BuildCatalog(ctx, eng.Store()); err != nil {
							return opts, err
						}
					}
					opts.ResolveGold = eval.MatchGold(set, cat, resolve)
				}
				return opts, nil
			}
		}
		set, ok := bestSet(b.sets, hits)
		if !ok {
			return fmt.Errorf("%s: no query id of the run is a topic of %s", path, o.bench)
		}
		opts, err := resolveFor(set)
		if err != nil {
			return err
		}
		opts.Stage = strings.TrimPrefix(tag, "citefind-")
		res, err := eval.ScoreRun(ctx, set, hits, opts)
		if err != nil {
			return err
		}
		runs = append(runs, &eval.RunFile{Label: strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)), Results: []*eval.Result{res}})
	}
	if runs[0].Label == runs[1].Label {
		runs[0].Label += "-A"
		runs[1].Label += "-B"
	}
	if o.report != "" {
		if err := writeReport(o.report, runs); err != nil {
			return err
		}
		fmt.Fprintf(c.stderr, "wrote report %s\n", o.report)
	}
	if o.asJSON {
		return writeComparisonsJSON(c.stdout, runs)
	}
	return eval.WriteReport(c.stdout, runs, eval.ReportOptions{})
}

// bestSet picks the topic set that holds most of the run's query ids.
func bestSet(sets []eval.TopicSet, hits map[string][]corpus.Hit) (eval.TopicSet, bool) {
	best, bestN := -1, 0
	for i, s := range sets {
		n := 0
		for _, q := range s.Queries {
			if _, ok := hits[q.ID]; ok {
				n++
			}
		}
		if n > bestN {
			best, bestN = i, n
		}
	}
	if best < 0 {
		return eval.TopicSet{}, false
	}
	return sets[best], true
}

// writeComparisonsJSON prints the comparisons of two runs as a JSON array,
// one object per topic set and paired stage.
func writeComparisonsJSON(w io.Writer, runs []*eval.RunFile) error {
	type cmpJSON struct {
		Bench   string             `json:"bench"`
		A       string             `json:"a"`
		B       string             `json:"b"`
		Queries int                `json:"queries"`
		Method  string             `json:"method"`
		Metrics map[string]cmpStat `json:"metrics"`
	}
	var out []cmpJSON
	opts := eval.StatOptions{}
	byKey := func(rf *eval.RunFile) map[string][]*eval.Result {
		m := map[string][]*eval.Result{}
		for _, r := range rf.Results {
			k := r.Bench + ":" + r.Set
			m[k] = append(m[k], r)
		}
		return m
	}
	ma, mb := byKey(runs[0]), byKey(runs[1])
	var keys []string
	for k := range ma {
		if _, ok := mb[k]; ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		as, bs := ma[k], mb[k]
		for _, a := range as {
			for _, bb := range bs {
				if !(len(as) == 1 && len(bs) == 1) && a.Stage != bb.Stage {
					continue
				}
				la, lb := runs[0].Label+"/"+a.Stage, runs[1].Label+"/"+bb.Stage
				cs, err := eval.CompareResults(a, bb, la, lb, nil, opts)
				if err != nil {
					return err
				}
				cj := cmpJSON{Bench: cs[0].Set, A: la, B: lb, Queries: cs[0].N, Method: opts.MethodText(), Metrics: map[string]cmpStat{}}
				for _, c := range cs {
					cj.Metrics[c.Metric] = cmpStat{c.MeanA, c.MeanB, c.Diff, [2]float64{c.CILow, c.CIHigh}, c.P, c.Wins, c.Ties, c.Losses}
				}
				out = append(out, cj)
			}
		}
	}
	if len(out) == 0 {
		return fmt.Errorf("compare: the two runs share no topic set")
	}
	return writeJSONValue(w, out)
}

func writeJSONValue(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

type cmpStat struct {
	MeanA  float64    `json:"mean_a"`
	MeanB  float64    `json:"mean_b"`
	Diff   float64    `json:"diff"`
	CI95   [2]float64 `json:"ci95"`
	P      float64    `json:"p"`
	Wins   int        `json:"wins"`
	Ties   int        `json:"ties"`
	Losses int        `json:"losses"`
}

// ensureDB builds the benchmark database when it holds no papers yet and
// brings its index up to date.
func (c *evalCmd) ensureDB(ctx context.Context, db, bench string, files []string, keep func(corpus.Record) (bool, string), prog io.Writer) error {
	if err := os.MkdirAll(db, 0o755); err != nil {
		return fmt.Errorf("create benchmark database: %w", err)
	}
	lock, err := lockDB(ctx, c.env, db, citefind.DefaultLockWait)
	if err != nil {
		return err
	}
	defer lock.Unlock()
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
	return atomicfile.Write(path, 0o644, func(f *os.File) error { return fn(f) })
}
