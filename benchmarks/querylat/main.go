// Command querylat measures the latency of citefind queries as `citefind
// query` answers them: every ACM-CR query (both topic sets), one at a
// time, through engine.Search with the database's pipeline and k hits,
// after a warm-up pass over the first -warm queries. It prints p50, p90,
// p99 and the mean per topic set and over all queries.
//
//	go run ./benchmarks/querylat -db .cache/bench/suite/acm-cr [-k 10] [-data ../shared/data/acm-cr] [-cpuprofile FILE]
//
// make bench-query BENCH_DB=DIR runs it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/citefind/citefind"
	"github.com/citefind/citefind/engine"
	"github.com/citefind/citefind/eval"
	"github.com/citefind/citefind/internal/datadir"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "querylat:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("querylat", flag.ContinueOnError)
	db := fs.String("db", "", "database `DIR` holding ACM-CR (e.g. made by citefind eval --bench acm-cr)")
	data := fs.String("data", datadir.Bench("acm-cr"), "ACM-CR folder, for the topics")
	k := fs.Int("k", 10, "hits per query (citefind query's default)")
	warm := fs.Int("warm", 50, "queries run first, not measured")
	retrievers := fs.String("retrievers", "", "comma-separated retrievers (default: the database's pipeline)")
	rerank := fs.String("rerank", "", "reranker (none, learned; default: the database's pipeline)")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the measured queries to `FILE`")
	stages := fs.Bool("stages", false, "also print each stage's p50 and p90 per topic set (the engine's own timings: each retriever, fused = retrieval + fusion + fetching the candidates, reranked)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *db == "" {
		return errors.New("-db DIR is required")
	}
	if *k < 1 || *warm < 0 {
		return errors.New("-k must be positive and -warm not negative")
	}
	a, err := eval.LoadACMCR(*data)
	if err != nil {
		return err
	}
	var opts engine.Options
	if *retrievers != "" {
		opts.Retrievers = strings.Split(*retrievers, ",")
	}
	eng, err := engine.Open(ctx, *db, opts)
	if err != nil {
		return err
	}
	defer eng.Close()
	p := eng.Pipeline()
	rr := *rerank
	if rr == "" {
		rr = p.Rerank + " (the database's)"
	}
	fmt.Printf("database %s: %d papers; pipeline %s (%s); rerank %s; k %d\n", *db, eng.Count(ctx), strings.Join(p.Retrievers, ","), p.Method, rr, *k)
	qo := citefind.QueryOptions{K: *k, Rerank: *rerank}
	n := 0
	for _, set := range a.Sets {
		for _, q := range set.Queries {
			if n == *warm {
				break
			}
			if _, err := eng.Search(ctx, q.Text, qo); err != nil {
				return err
			}
			n++
		}
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	var all []time.Duration
	for _, set := range a.Sets {
		var lat []time.Duration
		byStage := map[string][]time.Duration{}
		for _, q := range set.Queries {
			start := time.Now()
			res, err := eng.Search(ctx, q.Text, qo)
			if err != nil {
				return fmt.Errorf("query %s: %w", q.ID, err)
			}
			lat = append(lat, time.Since(start))
			for st, d := range res.Stages.Durations {
				byStage[st] = append(byStage[st], d)
			}
			if len(res.Warnings) > 0 {
				return fmt.Errorf("query %s: %s", q.ID, strings.Join(res.Warnings, "; "))
			}
		}
		report(set.Name, lat)
		if *stages {
			for _, st := range slices.Sorted(maps.Keys(byStage)) {
				report("  "+st, byStage[st])
			}
		}
		all = append(all, lat...)
	}
	report("all", all)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Printf("heap in use at the end: %.0f MiB\n", float64(ms.HeapInuse)/(1<<20))
	return nil
}

func report(name string, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	at := func(q float64) time.Duration {
		return lat[min(len(lat)-1, int(q*float64(len(lat))))].Round(10 * time.Microsecond)
	}
	fmt.Printf("%-10s %4d queries  p50 %-9s p90 %-9s p99 %-9s mean %s\n", name, len(lat), at(0.5), at(0.9), at(0.99), (sum / time.Duration(len(lat))).Round(10*time.Microsecond))
}
