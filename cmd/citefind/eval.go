package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/citefind/citefind"
	"github.com/citefind/citefind/build"
	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/db"
	"github.com/citefind/citefind/engine"
	"github.com/citefind/citefind/eval"
	"github.com/citefind/citefind/internal/atomicfile"
	"github.com/citefind/citefind/internal/progress"
	"github.com/citefind/citefind/rerank"
	"github.com/citefind/citefind/retrieve/sparse"
)

type evalCmd struct{ env }

func (c *evalCmd) Name() string { return "eval" }
func (c *evalCmd) Synopsis() string {
	return "measure retrieval quality on a benchmark (recall@K, nDCG@10, MRR@10), compare runs"
}

const evalUsage = `Usage: citefind eval [--db DIR] --bench NAME [--data DIR] [--corpus PATH] [--queries FILE]
                     [--retrievers bm25,rm3,citing,dense] [--fusion rrf|max|minmax] [--weights bm25=1,rm3=0.2]
                     [--rerank none|learned|llm [--rerank-model FILE | --folds N]] [--pick] [--llm MODEL]
                     [--sweep-weights [--sweep-values LIST] [--save-weights] [--sweep-top N]] [--json] [--run-out FILE]
                     [--save-run FILE] [--label NAME] [--report FILE.md]
       citefind eval --compare RUN_A RUN_B [--report FILE.md] [--json]
       citefind eval --compare RUN_A.trec RUN_B.trec --bench NAME [--db DIR] [--data DIR]

NAME: acm-cr (both topic sets) | acm-cr:contexts | acm-cr:sentences | jsonl
      | beir[:SPLIT] | citeme[:test|:train] | litsearch[:QUERY_SET] | scholargym[:SOURCE]

Without pipeline flags, eval measures the database's pipeline, exactly what
query answers on the same database (pipeline.json; citefind status shows
it): each retriever alone, their fusion, the reranker when it has one.

acm-cr reads the ACM-CR files under --data (default $CITEFIND_DATA/acm-cr,
CITEFIND_DATA defaulting to ../shared/data), builds a database of its own
collection (the upstream indexing rules: articles and proceedings papers, no
"Session" records, no citing papers) into --db once, with the default
pipeline, and reuses it afterwards. Without --db the benchmark database is
$CITEFIND_DB/bench/NAME.

jsonl takes --queries FILE (one {"id", "text", "relevant": [ids]} object per
line) and --corpus PATH (any format index reads), indexed into --db; without
--corpus, the database --db DIR (e.g. your own library, made by index) is
evaluated as it is.

beir reads a collection in the BEIR layout from --data DIR (corpus.jsonl,
queries.jsonl, qrels/SPLIT.tsv; SPLIT defaults to test), e.g.
$CITEFIND_DATA/devsets/scifact; a query's text_masked is searched when it has
one. Its corpus is indexed into --db (default
$CITEFIND_DB/bench/beir-NAME-HASH) once; --sample N evaluates a fixed sample
of the split's queries.

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

--retrievers, --fusion and --weights replace the pipeline's for the run
(the database needs a dense index for dense: index --embedder); each
retriever alone is a stage of the report and their fusion the stage fused,
all from one search per query. A query whose dense retrieval fails counts
as a failed query of the dense stage, and of the fused stage only with
--strict (otherwise fused falls back to the others).

--sweep-weights fuses the retrievers' stored rankings with every weight on a
grid (the first retriever fixed at 1; --sweep-values, default
0,0.025,0.05,0.1,0.15,0.2,0.3,0.4,0.5,0.75,1,1.5,2) and prints recall@10,
recall@100 and nDCG@10 of each beside the first retriever alone, then the
chosen weights: those at most .005 below the first retriever on recall@10
and nDCG@10 that raise recall@100 on every topic set, with the largest mean
gain. --save-weights stores the choice in the database's pipeline
(pipeline.json, tied to its embedder).

--rerank llm adds the stage reranked: the top 100 fused candidates reordered
by the Ollama chat model (--llm MODEL or CITEFIND_LLM). --pick adds the stage picked (the picker's choice first, then
the rest) and prints the picker's figures: accuracy@1, picks outside the
candidates (always 0: the guard maps every answer to a candidate) and the
share of model answers that named a non-candidate.

--rerank learned adds the stage "reranked": the fused candidates (top -k)
reordered by the learned reranker: --rerank-model FILE, else the database's
own model (train --self), else the built-in one (trained on ACM-CR, SciFact
and ScisummNet; see citefind train and docs/rerank.md). A model trained on
other retrievers' candidates is refused before the first query. With --folds N it is cross-validated instead: the
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

--suite runs every stage (each retriever, the fusion, the reranker with
--rerank) on every collection of the evaluation suite: ACM-CR (both topic
sets), SciFact (test split) and ScisummNet (keep_for_gold), under --data
(default $CITEFIND_DATA); a collection whose data is missing is skipped with
a line saying so. Each is indexed once into its own database under --db
(default $CITEFIND_DB/bench/suite[-EMBEDDER]) with --embedder. The report
(--report FILE.md, else standard output) compares every stage with bm25 query
by query (difference, 95% bootstrap interval, randomisation test) and sums up
the worst and mean difference over the topic sets. make eval-suite writes
docs/eval/suite.md.

--compare RUN_A RUN_B compares two saved runs query by query, per topic set and
metric: means, difference B − A, 95% bootstrap interval of the difference and
the two-sided paired randomisation test p-value (10,000 sign flips, fixed
seed), with a per-query win/loss figure when --report is given. TREC run files
are accepted too, with --bench (and the benchmark database) for the judgements.`

func (c *evalCmd) Run(ctx context.Context, args []string) error {
	fs := newFlagSet(c.env, "eval", evalUsage)
	dbDir := fs.String("db", "", "database `DIR`: the benchmark database (default $CITEFIND_DB/bench/NAME), or an existing database to evaluate as it is")
	bench := fs.String("bench", "", "benchmark `NAME`")
	data := fs.String("data", "", "benchmark data `DIR` or file (default $CITEFIND_DATA/NAME, $CITEFIND_DATA/formats/NAME)")
	corpusPath := fs.String("corpus", "", "corpus `PATH` for --bench jsonl, citeme, litsearch, scholargym (without it: --db is evaluated as it is)")
	queries := fs.String("queries", "", "queries `FILE` (--bench jsonl; overrides --data for citeme, litsearch, scholargym)")
	sample := fs.Int("sample", 0, "--bench beir: evaluate a fixed sample of `N` queries of the split (0: all)")
	retrievers := fs.String("retrievers", "", "comma-separated retrievers, each a stage of the report, fused as a further stage when several: "+strings.Join(citefind.RetrieverNames, ", ")+" (default: the database's pipeline)")
	var ff fusionFlags
	ff.register(fs)
	rerankFlag := fs.String("rerank", "", "reranker of the fused candidates, reported as the stage reranked: none, learned (see --rerank-model, --folds), llm (default: the database's pipeline)")
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
	suite := fs.Bool("suite", false, "run the evaluation suite: every stage on ACM-CR, SciFact and ScisummNet (see below); --db is then the folder of the suite's databases")
	embedder := fs.String("embedder", "", "embedder of the benchmark databases eval builds: none, builtin, contrast or ollama:MODEL (default: the one a database records, else none)")
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
		return c.compare(ctx, pos, *bench, eval.BenchOptions{Data: *data, Corpus: *corpusPath, Queries: *queries, Sample: *sample}, *dbDir, *depth, *report, *asJSON)
	}
	if len(pos) > 0 {
		return usageErr("eval: unexpected argument %q", pos[0])
	}
	if *embedder != "" {
		if _, err := db.ParseEmbedder(*embedder); err != nil {
			return usageErr("eval: --embedder: %v", err)
		}
	}
	if *suite {
		if *bench != "" || *corpusPath != "" || *queries != "" {
			return usageErr("eval: --suite runs its own collections; drop --bench, --corpus and --queries")
		}
		if sf.save || *pick || lf.folds > 0 {
			return usageErr("eval: --suite does not take --save-weights, --pick or --folds (it chooses weights across collections with --sweep-weights)")
		}
	} else if *bench == "" {
		return usageErr("eval: --bench is required (%s)", eval.BenchNames)
	}
	if err := lf.validate(*rerankFlag); err != nil {
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

	if *suite {
		return c.runSuite(ctx, suiteRun{root: *dbDir, data: *data, embedder: *embedder, retrievers: stageNames, rerank: *rerankFlag,
			eopts: eopts, sparse: sopts, depth: *depth, raw: *raw, report: *report, llm: mf, model: lf.model, args: args,
			sweep: sf.sweep, sweepValues: sweepValues, sweepTop: sf.top}, prog)
	}
	b, err := c.benchDB(ctx, "eval", *bench, eval.BenchOptions{Data: *data, Corpus: *corpusPath, Queries: *queries, Sample: *sample}, *embedder, dbDir, prog)
	if err != nil {
		return err
	}
	eopts.Sparse, eopts.Raw = sopts, *raw
	mf.apply(&eopts)
	eopts.RerankModel = lf.model
	eng, err := engine.Open(ctx, *dbDir, eopts)
	if err != nil {
		return err
	}
	defer eng.Close()
	pipe := eng.Pipeline()
	if len(stageNames) == 0 {
		stageNames = pipe.Retrievers
	}
	rerankName := *rerankFlag
	if rerankName == "" {
		rerankName = pipe.Rerank
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
	// The engine reranks, except for a cross-validated learned reranker,
	// which reranks each query's fused candidates with its fold's model.
	engineRerank := rerankName
	var cv *crossValidated
	if rerankName == rerank.NameLearned {
		if lf.folds > 0 {
			if cv, err = c.crossValidate(ctx, lf, *dbDir, eng, b, stageNames, *depth, *raw, eopts, prog); err != nil {
				return err
			}
			engineRerank = rerank.NameNone
		} else if err := c.checkLearnedModel(eng, stageNames); err != nil {
			return err
		}
	}
	stages := eval.PipelineStages(stageNames, rerankName != "" && rerankName != rerank.NameNone, *pick)
	qopts := citefind.QueryOptions{Retrievers: stageNames, Raw: *raw, Rerank: engineRerank, Pick: *pick}
	var picks pickTally

	results, sweepOpts, err := c.runSets(ctx, eng, b, stages, qopts, *depth, cv, &picks, prog)
	if err != nil {
		return err
	}
	if len(b.Sets) > 1 {
		lat := eval.PooledLatencies(results, stages[len(stages)-1])
		fmt.Fprintf(c.stderr, "latency over all %d queries: p50 %.1f ms, p99 %.1f ms\n", len(lat),
			ms(eval.Percentile(lat, 50)), ms(eval.Percentile(lat, 99)))
	}
	if *runOut != "" {
		if err := c.writeRunFiles(*runOut, results, len(b.Sets) > 1, len(stages) > 1); err != nil {
			return err
		}
	}
	rf := &eval.RunFile{
		Label: *label, Created: time.Now().UTC(), Version: Version,
		Command:  append([]string{"citefind", "eval"}, args...),
		Settings: runSettings(*bench, b, *depth, *raw, sopts, stageNames, rerankName),
		Results:  results,
	}
	lf.settings(rerankName, rf.Settings)
	if len(stageNames) > 1 {
		p := eng.Pipeline()
		rf.Settings["fusion"] = string(p.Method)
		rf.Settings["fusion_weights"] = formatWeights(p.Weights)
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
	fmt.Fprintf(c.stdout, "%s: %d papers in the collection (%s); pipeline: %s\n\n", b.Name, eng.Count(ctx), *dbDir, describePipeline(stageNames, eng.Pipeline(), rerankName))
	if err := eval.WriteMarkdown(c.stdout, results); err != nil {
		return err
	}
	if *pick {
		fmt.Fprintln(c.stdout)
		picks.write(c.stdout, results)
	}
	if sf.sweep {
		return c.runSweep(ctx, &sf, *dbDir, stageNames, grid, eng.Pipeline().Method, b.Sets, results, sweepOpts)
	}
	return nil
}

// runSets runs every topic set of b through the engine, one search per
// query, and scores each stage; with cv, the reranked stage is each
// query's cross-validated reranking. It returns the results in set and
// stage order and each set's options (for the weight sweep).
func (c *evalCmd) runSets(ctx context.Context, eng *engine.Engine, b *eval.Bench, stages []string, qopts citefind.QueryOptions,
	depth int, cv *crossValidated, picks *pickTally, prog io.Writer) ([]*eval.Result, map[string]eval.Options, error) {
	judge := eval.NewJudge(eng.Store())
	var results []*eval.Result
	optsBySet := map[string]eval.Options{}
	search := func(ctx context.Context, text string, k int) (*citefind.Result, error) {
		o := qopts
		o.K = k
		return eng.Search(ctx, text, o)
	}
	for _, set := range b.Sets {
		opts, err := judge.Options(ctx, set, eval.Options{K: depth, Bench: b.Name})
		if err != nil {
			return nil, nil, err
		}
		var bar *progress.Bar
		if prog != nil {
			bar = progress.New(prog, "eval "+b.Name+":"+set.Name, int64(len(set.Queries)), "queries")
		}
		opts.Progress = func(done, total int) { bar.Set(int64(done), 0) }
		then := func(q eval.Query, r *citefind.Result, lists map[string]eval.StageList) error {
			if cv != nil {
				l, err := cv.rerank(ctx, q.Text, r)
				if err != nil {
					return err
				}
				lists[eval.StageReranked] = l
			}
			if r.Picked != nil {
				picks.add(set.Name, r)
			}
			return nil
		}
		res, err := eval.RunPipeline(ctx, set, stages, search, then, opts)
		bar.Done()
		if err != nil {
			return nil, nil, err
		}
		results = append(results, res...)
		optsBySet[set.Name] = opts
	}
	return results, optsBySet, nil
}

// writeRunFiles writes one TREC run file per result: path, with the topic
// set's and the stage's names inserted before the extension when there
// are several.
func (c *evalCmd) writeRunFiles(path string, results []*eval.Result, sets, stages bool) error {
	for _, res := range results {
		p := path
		if sets {
			ext := filepath.Ext(p)
			p = strings.TrimSuffix(p, ext) + "." + res.Set + ext
		}
		if stages {
			ext := filepath.Ext(p)
			p = strings.TrimSuffix(p, ext) + "." + res.Stage + ext
		}
		if err := writeFile(p, func(w io.Writer) error { return eval.WriteRun(w, res, "citefind-"+res.Stage) }); err != nil {
			return err
		}
		fmt.Fprintf(c.stderr, "wrote run file %s\n", p)
	}
	return nil
}

// describePipeline is one line on the pipeline a run measured.
func describePipeline(names []string, p engine.Pipeline, rerankName string) string {
	s := strings.Join(names, " + ")
	if len(names) > 1 {
		var ws []string
		for _, n := range names {
			w, ok := p.Weights[n]
			if !ok {
				w = 1
			}
			ws = append(ws, n+"="+strconv.FormatFloat(w, 'g', -1, 64))
		}
		s = fmt.Sprintf("%s fusion of %s", p.Method, strings.Join(ws, ", "))
	}
	if rerankName != "" && rerankName != rerank.NameNone {
		s += ", reranked by " + rerankName
	}
	return s
}

// benchDB loads the benchmark and makes sure its database exists and is
// up to date: the benchmark's own collection is indexed into *dir
// (default $CITEFIND_DB/bench/NAME) once; a benchmark without a collection
// evaluates the existing database --db as it is.
func (c *evalCmd) benchDB(ctx context.Context, cmd, spec string, o eval.BenchOptions, embedder string, dir *string, prog io.Writer) (*eval.Bench, error) {
	b, err := eval.LoadBench(spec, o)
	if err != nil {
		return nil, benchErr(cmd, err)
	}
	if b.Collection == "" && *dir == "" {
		return nil, usageErr("%s: --bench %s ships no collection: give --corpus PATH (a file or folder index reads) or the --db DIR of an existing database", cmd, b.Name)
	}
	if *dir == "" {
		*dir = filepath.Join(db.DefaultDir(), "bench", b.DBName)
	}
	if b.Collection == "" {
		return b, nil
	}
	msg, err := b.PrepareCorpus(ctx, *dir, func(pe *corpus.ParseError) { fmt.Fprintln(c.stderr, pe) })
	if err != nil {
		return nil, err
	}
	if msg != "" {
		fmt.Fprintln(c.stderr, msg)
	}
	rep, err := build.Ensure(ctx, *dir, build.EnsureOptions{
		Files: b.Files, Keep: b.Keep, Collection: b.Collection, Progress: prog, Embedder: embedder,
		OnWait:  waitingFor(c.env, *dir, db.DefaultLockWait),
		OnError: func(err error) { fmt.Fprintln(c.stderr, err) },
		OnNew:   func() { fmt.Fprintf(c.stderr, "building the %s benchmark database in %s (once)\n", b.Name, *dir) },
	})
	if err != nil {
		return nil, err
	}
	if n := rep.Ingest.Skipped(); n > 0 {
		fmt.Fprintf(c.stderr, "warning: %s skipped while reading the benchmark collection\n", plural(n, "bad record"))
	}
	if rep.PipelineWarning != "" {
		fmt.Fprintln(c.stderr, "warning:", rep.PipelineWarning)
	}
	return b, nil
}

// runSettings are the settings recorded in a saved run.
func runSettings(bench string, b *eval.Bench, depth int, raw bool, so sparse.Options, stages []string, rerankName string) map[string]string {
	s := map[string]string{
		"bench":         bench,
		"k":             strconv.Itoa(depth),
		"raw":           strconv.FormatBool(raw),
		"bm25-k1":       strconv.FormatFloat(so.K1, 'g', -1, 64),
		"bm25-b":        strconv.FormatFloat(so.B, 'g', -1, 64),
		"bm25-k3":       strconv.FormatFloat(so.K3, 'g', -1, 64),
		"field-weights": formatWeights(so.FieldWeights),
		"retrievers":    strings.Join(stages, ","),
		"rerank":        rerankName,
	}
	if b.Corpus != "" {
		s["corpus"] = b.Corpus
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

// compare reads two runs (saved runs, or TREC run files scored against
// --bench) and reports their paired comparison.
func (c *evalCmd) compare(ctx context.Context, paths []string, bench string, bo eval.BenchOptions, dir string, k int, report string, asJSON bool) error {
	var b *eval.Bench
	var judge *eval.Judge
	if bench != "" {
		var err error
		if b, err = eval.LoadBench(bench, bo); err != nil {
			return benchErr("eval --compare", err)
		}
		if dir == "" && b.DBName != "" {
			dir = filepath.Join(db.DefaultDir(), "bench", b.DBName)
		}
		if d, err := db.Open(ctx, dir); err == nil {
			defer d.Close()
			judge = eval.NewJudge(d.Store)
		} else if !errors.Is(err, db.ErrNoDatabase) {
			return err
		}
	}
	runs, err := eval.ReadCompared(ctx, paths, b, judge, k)
	switch {
	case errors.Is(err, eval.ErrBenchUsage) && b != nil && judge == nil:
		return fmt.Errorf("the judgements of %s need its benchmark database (run `citefind eval --bench %s` first): no database at %s", bench, bench, dir)
	case err != nil:
		return benchErr("eval --compare", err)
	}
	if report != "" {
		if err := writeReport(report, runs); err != nil {
			return err
		}
		fmt.Fprintf(c.stderr, "wrote report %s\n", report)
	}
	if asJSON {
		return eval.WriteComparisonsJSON(c.stdout, runs)
	}
	return eval.WriteReport(c.stdout, runs, eval.ReportOptions{})
}

// benchErr turns eval.ErrBenchUsage errors into usage errors (exit 2).
func benchErr(cmd string, err error) error {
	if errors.Is(err, eval.ErrBenchUsage) {
		return usageErr("%s: %s", cmd, strings.TrimPrefix(err.Error(), eval.ErrBenchUsage.Error()+": "))
	}
	return err
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func writeFile(path string, fn func(io.Writer) error) error {
	return atomicfile.Write(path, 0o644, func(f *os.File) error { return fn(f) })
}
