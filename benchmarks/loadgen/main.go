// Command loadgen is the load benchmark of `citefind serve`: N concurrent
// clients send POST /v1/search with ACM-CR topic texts for a fixed time,
// then it prints requests/s, latency percentiles, the error count and the
// server's resident memory (VmRSS of /proc/PID/status) before and after.
//
// It exits with status 1 when any request failed or the server's RSS grew
// by more than -max-growth over the measured window.
//
// Usage (see benchmarks/serve-bench.sh and `make bench-serve`):
//
//	loadgen -url http://127.0.0.1:18181 -pid $(pgrep -n citefind) -clients 32 -duration 30s -data ../shared/data/acm-cr
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/citefind/citefind/eval"
)

// stats is what one client measured.
type stats struct {
	latencies []time.Duration
	errors    int
	firstErr  string
}

// report is the benchmark's result, printed as text or JSON.
type report struct {
	Clients       int     `json:"clients"`
	DurationS     float64 `json:"duration_s"`
	Queries       int     `json:"distinct_queries"`
	K             int     `json:"k"`
	Requests      int     `json:"requests"`
	Errors        int     `json:"errors"`
	FirstError    string  `json:"first_error,omitempty"`
	RequestsPerS  float64 `json:"requests_per_s"`
	P50ms         float64 `json:"p50_ms"`
	P90ms         float64 `json:"p90_ms"`
	P99ms         float64 `json:"p99_ms"`
	MaxMs         float64 `json:"max_ms"`
	RSSColdKiB    int64   `json:"rss_cold_kib"`  // before the warm-up pass over all queries
	RSSStartKiB   int64   `json:"rss_start_kib"` // after the warm-up, when the measured window starts
	RSSEndKiB     int64   `json:"rss_end_kib"`
	RSSGrowthPct  float64 `json:"rss_growth_pct"` // end over start
	RSSAnonEndKiB int64   `json:"rss_anon_end_kib"`
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

func run() error {
	url := flag.String("url", "http://127.0.0.1:8080", "base URL of citefind serve; several, comma-separated, share the clients round robin (serve processes over one cluster)")
	pid := flag.Int("pid", 0, "server process id, for its RSS (0: not measured)")
	clients := flag.Int("clients", 32, "concurrent clients")
	duration := flag.Duration("duration", 30*time.Second, "measured time")
	warmup := flag.Duration("warmup", 0, "more load before the measured window, after the warm-up pass (not counted)")
	warmPass := flag.Bool("pass", true, "warm up with one pass over every query first (slow against a slow backend: use -pass=false -warmup D)")
	data := flag.String("data", "../shared/data/acm-cr", "ACM-CR folder, for the topic texts")
	k := flag.Int("k", 10, "candidates per search")
	maxGrowth := flag.Float64("max-growth", 10, "fail when the server's RSS grows by more than this percentage")
	asJSON := flag.Bool("json", false, "print the report as JSON")
	flag.Parse()
	if *clients <= 0 || *duration <= 0 || *k <= 0 {
		return errors.New("-clients, -duration and -k must be positive")
	}

	a, err := eval.LoadACMCR(*data)
	if err != nil {
		return err
	}
	var bodies [][]byte
	for _, set := range a.Sets {
		for _, q := range set.Queries {
			b, err := json.Marshal(map[string]any{"query": q.Text, "k": *k})
			if err != nil {
				return err
			}
			bodies = append(bodies, b)
		}
	}
	if len(bodies) == 0 {
		return errors.New("no ACM-CR queries")
	}
	rand.New(rand.NewSource(42)).Shuffle(len(bodies), func(i, j int) { bodies[i], bodies[j] = bodies[j], bodies[i] })

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	client := &http.Client{Transport: &http.Transport{MaxIdleConns: *clients, MaxIdleConnsPerHost: *clients}, Timeout: time.Minute}
	rep := report{Clients: *clients, Queries: len(bodies), K: *k}
	if rep.RSSColdKiB, _, err = rss(*pid); err != nil {
		return err
	}
	// Warm-up: every query once (so that the index pages they touch are
	// in memory, as on a server that has run for a while), then -warmup.
	urls := strings.Split(*url, ",")
	if *warmPass {
		if err := pass(ctx, client, urls, bodies, *clients); err != nil {
			return fmt.Errorf("warm-up pass: %w", err)
		}
	}
	if *warmup > 0 {
		load(ctx, client, urls, bodies, *clients, *warmup)
	}
	if rep.RSSStartKiB, _, err = rss(*pid); err != nil {
		return err
	}
	start := time.Now()
	all := load(ctx, client, urls, bodies, *clients, *duration)
	elapsed := time.Since(start)
	if rep.RSSEndKiB, rep.RSSAnonEndKiB, err = rss(*pid); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}

	var lat []time.Duration
	for _, s := range all {
		lat = append(lat, s.latencies...)
		rep.Errors += s.errors
		if rep.FirstError == "" {
			rep.FirstError = s.firstErr
		}
	}
	slices.Sort(lat)
	rep.DurationS = elapsed.Seconds()
	rep.Requests = len(lat) + rep.Errors
	rep.RequestsPerS = float64(len(lat)) / elapsed.Seconds()
	rep.P50ms, rep.P90ms, rep.P99ms = ms(pct(lat, 50)), ms(pct(lat, 90)), ms(pct(lat, 99))
	if len(lat) > 0 {
		rep.MaxMs = ms(lat[len(lat)-1])
	}
	if rep.RSSStartKiB > 0 {
		rep.RSSGrowthPct = 100 * float64(rep.RSSEndKiB-rep.RSSStartKiB) / float64(rep.RSSStartKiB)
	}

	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		fmt.Printf("clients %d, %.1f s measured after a warm-up pass over all %d ACM-CR queries (+%s), k=%d\n", rep.Clients, rep.DurationS, rep.Queries, *warmup, rep.K)
		fmt.Printf("requests %d, errors %d, %.1f requests/s\n", rep.Requests, rep.Errors, rep.RequestsPerS)
		fmt.Printf("latency p50 %.1f ms, p90 %.1f ms, p99 %.1f ms, max %.1f ms\n", rep.P50ms, rep.P90ms, rep.P99ms, rep.MaxMs)
		if *pid > 0 {
			fmt.Printf("server RSS: %.1f MiB before the warm-up, %.1f MiB at the start, %.1f MiB at the end (%+.1f%%; anonymous %.1f MiB)\n",
				mib(rep.RSSColdKiB), mib(rep.RSSStartKiB), mib(rep.RSSEndKiB), rep.RSSGrowthPct, mib(rep.RSSAnonEndKiB))
		}
		if rep.FirstError != "" {
			fmt.Println("first error:", rep.FirstError)
		}
	}
	switch {
	case rep.Errors > 0:
		return fmt.Errorf("%d of %d requests failed", rep.Errors, rep.Requests)
	case *pid > 0 && rep.RSSGrowthPct > *maxGrowth:
		return fmt.Errorf("server RSS grew by %.1f%% (limit %.0f%%)", rep.RSSGrowthPct, *maxGrowth)
	}
	return nil
}

// pass sends every query once, from the clients in parallel.
func pass(ctx context.Context, client *http.Client, urls []string, bodies [][]byte, clients int) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, clients)
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1) - 1; i < int64(len(bodies)) && ctx.Err() == nil; i = next.Add(1) - 1 {
				if err := search(ctx, client, urls[c%len(urls)], bodies[i]); err != nil && errs[c] == nil {
					errs[c] = err
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// load runs the clients for d and returns what each measured. Client i
// starts at a different place in the shuffled queries.
func load(ctx context.Context, client *http.Client, urls []string, bodies [][]byte, clients int, d time.Duration) []stats {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	out := make([]stats, clients)
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := &out[c]
			for i := c * len(bodies) / clients; ctx.Err() == nil; i++ {
				body := bodies[i%len(bodies)]
				t0 := time.Now()
				err := search(ctx, client, urls[c%len(urls)], body)
				if ctx.Err() != nil {
					return // the window closed during the request: not counted
				}
				if err != nil {
					s.errors++
					if s.firstErr == "" {
						s.firstErr = err.Error()
					}
					continue
				}
				s.latencies = append(s.latencies, time.Since(t0))
			}
		}()
	}
	wg.Wait()
	return out
}

func search(ctx context.Context, client *http.Client, url string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/search", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var res struct {
		Hits []json.RawMessage `json:"hits"`
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d: %s", resp.StatusCode, bytes.TrimSpace(b))
	}
	if err := json.Unmarshal(b, &res); err != nil {
		return fmt.Errorf("bad JSON: %w", err)
	}
	return nil
}

// rss reads VmRSS and RssAnon (KiB) of a process; 0 without a pid.
func rss(pid int) (total, anon int64, err error) {
	if pid <= 0 {
		return 0, 0, nil
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, fmt.Errorf("server RSS: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		name, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		n, _ := strconv.ParseInt(f[0], 10, 64)
		switch name {
		case "VmRSS":
			total = n
		case "RssAnon":
			anon = n
		}
	}
	return total, anon, nil
}

func pct(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p/100+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
func mib(kib int64) float64      { return float64(kib) / 1024 }
