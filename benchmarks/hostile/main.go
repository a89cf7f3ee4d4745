// Command hostile runs the attacks of issue 13 against a running
// `citefind serve` (and, for MCP over stdio, against `citefind mcp`), and
// prints what each got: the HTTP status (or what happened to the
// connection), the time it took and the server's resident memory (VmRSS
// of /proc/PID/status) after it.
//
// The database must hold the sample corpus (sample/papers.bib with
// server/testdata/abstracts.jsonl): the drafts cite cormack2009rrf.
//
// Usage (see benchmarks/hostile-bench.sh and `make bench-hostile`):
//
//	hostile -url http://127.0.0.1:18182 -pid PID -bin bin/citefind -db DIR
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "hostile:", err)
		os.Exit(1)
	}
}

// bench is the server under attack.
type bench struct {
	base   string // http://HOST:PORT
	host   string // HOST:PORT
	pid    int
	client *http.Client
}

// result is one line of the report.
type result struct {
	item, attack, got string
	took              time.Duration
}

func run() error {
	base := flag.String("url", "http://127.0.0.1:18182", "base URL of citefind serve")
	pid := flag.Int("pid", 0, "server process id, for its RSS")
	bin := flag.String("bin", "bin/citefind", "citefind binary, for the MCP-over-stdio attack")
	db := flag.String("db", "", "the database the server serves, for citefind mcp")
	slowMax := flag.Duration("slow-max", 90*time.Second, "how long the slow-body attacks go on at most")
	flood := flag.Int("flood", 15000, "MCP initialize requests of the session flood")
	only := flag.String("only", "", "run only the attacks of these items (comma-separated: 1,2,3,5,6,7)")
	noHeader := flag.Bool("no-header", false, "print the rows of the table only")
	flag.Parse()
	u, err := url.Parse(*base)
	if err != nil {
		return err
	}
	b := &bench{base: strings.TrimRight(*base, "/"), host: u.Host, pid: *pid,
		client: &http.Client{Timeout: 5 * time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	items := map[string]bool{}
	for _, it := range strings.Split(*only, ",") {
		if it = strings.TrimSpace(it); it != "" {
			items[it] = true
		}
	}
	want := func(item string) bool { return len(items) == 0 || items[item] }

	if !*noHeader {
		fmt.Println("| item | attack | what it got | time | server RSS after |")
		fmt.Println("|---|---|---|--:|--:|")
	}
	fmt.Printf("| %s | (a fresh server) | | | %s |\n", *only, b.rss())
	report := func(r result) {
		fmt.Printf("| %s | %s | %s | %s | %s |\n", r.item, r.attack, r.got, round(r.took), b.rss())
	}
	if want("1") {
		b.citeAttacks(report)
	}
	if want("2") {
		b.originAttacks(report)
	}
	if want("3") {
		b.hostAttacks(report)
	}
	if want("5") {
		b.slowAttacks(report, *slowMax)
	}
	if want("6") {
		b.mcpFlood(report, *flood)
	}
	if want("7") {
		report(stdioDrain(*bin, *db))
	}
	return nil
}

func round(d time.Duration) string {
	switch {
	case d == 0:
		return "—"
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(100 * time.Microsecond).String()
	}
	return d.Round(10 * time.Millisecond).String()
}

// rss is the server's VmRSS.
func (b *bench) rss() string {
	if b.pid == 0 {
		return "—"
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", b.pid))
	if err != nil {
		return "gone"
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kib, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return fmt.Sprintf("%.1f MiB", float64(kib)/1024)
		}
	}
	return "?"
}

// response is what one request got.
type response struct {
	status int
	body   string
	header http.Header
	took   time.Duration
	err    error
}

func (r response) String() string {
	if r.err != nil {
		return "error: " + shorten(r.err.Error(), 80)
	}
	msg := r.body
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal([]byte(r.body), &e) == nil && e.Error != "" {
		msg = e.Error
	}
	if r.status == http.StatusOK {
		return "200"
	}
	return fmt.Sprintf("%d %s", r.status, shorten(strings.TrimSpace(msg), 110))
}

func shorten(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	s = strings.ReplaceAll(s, "|", "\\|")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// do sends one request; header values "" are left out.
func (b *bench) do(method, path, body string, header map[string]string) response {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, b.base+path, rd)
	if err != nil {
		return response{err: err}
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v
		} else if v != "" {
			req.Header.Set(k, v)
		}
	}
	start := time.Now()
	resp, err := b.client.Do(req)
	if err != nil {
		return response{err: err, took: time.Since(start)}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, body: string(data), header: resp.Header, took: time.Since(start), err: err}
}

var jsonCT = map[string]string{"Content-Type": "application/json"}

func citeBody(draft string) string {
	b, _ := json.Marshal(map[string]any{"draft": draft, "style": "ieee", "format": "md"})
	return string(b)
}

// placeholders returns n [[cite:cormack2009rrf]] joined by sep.
func placeholders(n int, sep string) string {
	return strings.TrimSuffix(strings.Repeat("[[cite:cormack2009rrf]]"+sep, n), sep)
}

// item 1: the cite work.
func (b *bench) citeAttacks(report func(result)) {
	// One small draft first: a fresh server's first citation opens the
	// store's connections.
	b.do("POST", "/v1/cite", citeBody(placeholders(2, " ")), jsonCT)
	for _, c := range []struct {
		name  string
		draft string
	}{
		{"/v1/cite, 10,000 placeholders on one line", placeholders(10000, " ")},
		{"/v1/cite, 10,000 placeholders over 10,000 lines", placeholders(10000, "\n")},
		{"/v1/cite, 40,000 placeholders on one line (960 KB)", placeholders(40000, " ")},
		{"/v1/cite, 40,000 placeholders over 40,000 lines", placeholders(40000, "\n")},
	} {
		r := b.do("POST", "/v1/cite", citeBody(c.draft), jsonCT)
		report(result{"1", c.name, r.String(), r.took})
	}

	// Four at once hold the admission slots; a search meanwhile.
	var wg sync.WaitGroup
	cites := make([]response, 4)
	draft := citeBody(placeholders(40000, " "))
	start := time.Now()
	for i := range cites {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cites[i] = b.do("POST", "/v1/cite", draft, jsonCT)
		}()
	}
	time.Sleep(time.Second)
	search := b.do("POST", "/v1/search", `{"query": "reciprocal rank fusion", "k": 3}`, jsonCT)
	wg.Wait()
	var slowest time.Duration
	statuses := map[string]int{}
	for _, c := range cites {
		slowest = max(slowest, c.took)
		statuses[strings.SplitN(c.String(), " ", 2)[0]]++
	}
	report(result{"1", "/v1/cite, 4 × 40,000 on one line at once: the slowest", countStatuses(statuses), slowest})
	report(result{"1", "… /v1/search sent 1 s after them", search.String(), search.took})
	_ = start

	// Quotes that match nothing: each is checked against the paper.
	r := rand.New(rand.NewSource(42))
	var q strings.Builder
	n := 0
	for q.Len() < 900_000 {
		words := make([]string, 10)
		for i := range words {
			w := make([]byte, 3+r.Intn(6))
			for j := range w {
				w[j] = byte('a' + r.Intn(26))
			}
			words[i] = string(w)
		}
		fmt.Fprintf(&q, "[[cite:cormack2009rrf %q]] ", strings.Join(words, " "))
		n++
	}
	resp := b.do("POST", "/v1/cite", citeBody(q.String()), jsonCT)
	report(result{"1", fmt.Sprintf("/v1/cite, %d ten-word quotes that match nothing (%d KB)", n, q.Len()/1000), resp.String(), resp.took})
	// 100 quotes: within the limit.
	var few strings.Builder
	for _, line := range strings.SplitAfter(q.String(), "]] ")[:100] {
		few.WriteString(line)
	}
	resp = b.do("POST", "/v1/cite", citeBody(few.String()), jsonCT)
	report(result{"1", "/v1/cite, 100 of those quotes", resp.String(), resp.took})

	// Number ranges multiply a short marker: a map of 1000 numbers and
	// 2000 markers "[1-1000]".
	var m strings.Builder
	m.WriteString(strings.Repeat("[1-1000] ", 2000))
	m.WriteString("\n\n")
	for i := 1; i <= 1000; i++ {
		fmt.Fprintf(&m, "[%d]: cite:cormack2009rrf\n", i)
	}
	resp = b.do("POST", "/v1/cite", citeBody(m.String()), jsonCT)
	report(result{"1", fmt.Sprintf("/v1/cite, 2,000 markers [1-1000] over a map of 1,000 numbers (%d KB, 2 million cited IDs)", m.Len()/1000), resp.String(), resp.took})
}

func countStatuses(m map[string]int) string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%d × %s", m[k], k))
	}
	return strings.Join(parts, ", ")
}

// item 2: another web page drives the server.
func (b *bench) originAttacks(report func(result)) {
	evil := "http://evil.example"
	search := `{"query": "reciprocal rank fusion", "k": 3}`
	for _, c := range []struct {
		name, method, path, body string
		header                   map[string]string
	}{
		{"POST /v1/search, Origin evil.example, text/plain (a simple request: no preflight)", "POST", "/v1/search", search,
			map[string]string{"Origin": evil, "Content-Type": "text/plain"}},
		{"POST /v1/cite, Origin evil.example, text/plain", "POST", "/v1/cite", citeBody("[[cite:cormack2009rrf]]"),
			map[string]string{"Origin": evil, "Content-Type": "text/plain"}},
		{"POST /v1/search, Origin evil.example, application/json", "POST", "/v1/search", search,
			map[string]string{"Origin": evil, "Content-Type": "application/json"}},
		{"GET /v1/papers/cormack2009rrf, Origin evil.example", "GET", "/v1/papers/cormack2009rrf", "",
			map[string]string{"Origin": evil}},
		{"OPTIONS /v1/search (preflight), Origin evil.example", "OPTIONS", "/v1/search", "",
			map[string]string{"Origin": evil, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type"}},
		{"POST /v1/search, no Origin, text/plain", "POST", "/v1/search", search,
			map[string]string{"Content-Type": "text/plain"}},
		{"POST /v1/search, no Origin, form-encoded (curl -d)", "POST", "/v1/search", search,
			map[string]string{"Content-Type": "application/x-www-form-urlencoded"}},
		{"control: POST /v1/search, Origin of the page itself, application/json", "POST", "/v1/search", search,
			map[string]string{"Origin": b.base, "Content-Type": "application/json"}},
	} {
		r := b.do(c.method, c.path, c.body, c.header)
		got := r.String()
		if c.method == "OPTIONS" && r.err == nil {
			got += fmt.Sprintf(" (Access-Control-Allow-Origin: %q)", r.header.Get("Access-Control-Allow-Origin"))
		}
		report(result{"2", c.name, got, r.took})
	}
}

// item 3: DNS rebinding (another Host), and framing.
func (b *bench) hostAttacks(report func(result)) {
	bad := "attacker.example:" + strings.SplitN(b.host, ":", 2)[1]
	for _, c := range []struct {
		name, method, path, body string
		header                   map[string]string
	}{
		{"GET / with Host: " + bad, "GET", "/", "", map[string]string{"Host": bad}},
		{"POST /v1/search with Host: " + bad, "POST", "/v1/search", `{"query": "reciprocal rank fusion", "k": 3}`,
			map[string]string{"Host": bad, "Content-Type": "application/json"}},
		{"GET /v1/papers/cormack2009rrf with Host: " + bad, "GET", "/v1/papers/cormack2009rrf", "", map[string]string{"Host": bad}},
		{"GET /healthz with Host: " + bad, "GET", "/healthz", "", map[string]string{"Host": bad}},
		{"POST /mcp initialize with Host: " + bad, "POST", "/mcp", initialize(1),
			map[string]string{"Host": bad, "Content-Type": "application/json", "Accept": "application/json, text/event-stream"}},
		{"control: POST /v1/search with Host: localhost", "POST", "/v1/search", `{"query": "reciprocal rank fusion", "k": 3}`,
			map[string]string{"Host": "localhost:" + strings.SplitN(b.host, ":", 2)[1], "Content-Type": "application/json"}},
	} {
		r := b.do(c.method, c.path, c.body, c.header)
		report(result{"3", c.name, r.String(), r.took})
	}
	r := b.do("GET", "/", "", nil)
	csp := r.header.Get("Content-Security-Policy")
	fa := "none"
	for _, d := range strings.Split(csp, ";") {
		if d = strings.TrimSpace(d); strings.HasPrefix(d, "frame-ancestors") {
			fa = d
		}
	}
	xfo := r.header.Get("X-Frame-Options")
	if xfo == "" {
		xfo = "none"
	}
	report(result{"3", "GET /: may another site frame the page?", fmt.Sprintf("CSP frame-ancestors: %s; X-Frame-Options: %s", fa, xfo), r.took})
}

// item 5: a body sent one byte every 2 s (and headers, for comparison).
func (b *bench) slowAttacks(report func(result), limit time.Duration) {
	for _, c := range []struct {
		name, head string
		body       bool
	}{
		{"POST /v1/search, body of 100 bytes sent one byte every 2 s", "POST /v1/search HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n", true},
		{"POST /mcp, body of 100 bytes sent one byte every 2 s", "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n", true},
		{"headers sent one byte every 2 s", "GET /healthz HTTP/1.1\r\nHost: %s\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n", false},
	} {
		got, took := b.slow(fmt.Sprintf(c.head, b.host), c.body, limit)
		report(result{"5", c.name, got, took})
	}
}

// slow writes head (at once when body, else one byte every 2 s), then a
// body one byte every 2 s, until the server answers or closes, or limit
// passes.
func (b *bench) slow(head string, body bool, limit time.Duration) (string, time.Duration) {
	conn, err := net.Dial("tcp", b.host)
	if err != nil {
		return "error: " + err.Error(), 0
	}
	defer conn.Close()
	start := time.Now()
	answered := make(chan string, 1)
	go func() {
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				answered <- "connection closed by the server without an answer"
			} else {
				answered <- "connection ended: " + err.Error()
			}
			return
		}
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		answered <- response{status: resp.StatusCode, body: string(data)}.String()
	}()
	var drip []byte
	if body {
		if _, err := io.WriteString(conn, head); err != nil {
			return "error: " + err.Error(), 0
		}
		drip = []byte(`{"query": "` + strings.Repeat("a", 87) + `"}`) // 100 bytes of JSON
	} else {
		drip = []byte(head)
	}
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	deadline := time.After(limit)
	sent := 0
	for {
		select {
		case got := <-answered:
			return fmt.Sprintf("%s, after %d bytes", got, sent), time.Since(start)
		case <-deadline:
			return fmt.Sprintf("still open after %s (%d bytes sent); the attack stopped there", limit, sent), time.Since(start)
		case <-tick.C:
			if sent < len(drip) {
				if _, err := conn.Write(drip[sent : sent+1]); err != nil {
					select {
					case got := <-answered:
						return fmt.Sprintf("%s, after %d bytes", got, sent), time.Since(start)
					case <-time.After(time.Second):
						return "write failed: " + err.Error(), time.Since(start)
					}
				}
				sent++
			}
		}
	}
}

func initialize(id int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"hostile","version":"1"}}}`, id)
}

// item 6: MCP sessions without end.
func (b *bench) mcpFlood(report func(result), n int) {
	header := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
	statuses := map[string]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	jobs := make(chan int)
	start := time.Now()
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				r := b.do("POST", "/mcp", initialize(i), header)
				key := strconv.Itoa(r.status)
				if r.err != nil {
					key = "error"
				}
				mu.Lock()
				statuses[key]++
				mu.Unlock()
			}
		}()
	}
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	report(result{"6", fmt.Sprintf("POST /mcp initialize × %d (8 at a time), no session ever closed", n), countStatuses(statuses), time.Since(start)})
	r := b.do("POST", "/mcp", initialize(1), header)
	got := r.String()
	if r.status == http.StatusOK {
		got = "200 (a new session)"
	}
	report(result{"6", "… then one more client's initialize", got, r.took})
	s := b.do("POST", "/v1/search", `{"query": "reciprocal rank fusion", "k": 3}`, jsonCT)
	report(result{"6", "… and a /v1/search", s.String(), s.took})
}

// item 7: MCP over stdio, requests queued before end of input.
func stdioDrain(bin, db string) result {
	name := "citefind mcp: initialize, initialized, tools/list, a search piped at once, then end of input"
	if db == "" {
		return result{"7", name, "skipped (no -db)", 0}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "mcp", "--db", db)
	cmd.Stdin = strings.NewReader(strings.Join([]string{
		initialize(1),
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search_citations","arguments":{"text":"reciprocal rank fusion","k":2}}}`,
	}, "\n") + "\n")
	var out bytes.Buffer
	cmd.Stdout = &out
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	answered := 0
	for _, line := range strings.Split(out.String(), "\n") {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal([]byte(line), &m) == nil && len(m.ID) > 0 && len(m.Result) > 0 {
			answered++
		}
	}
	got := fmt.Sprintf("%d of 3 requests answered", answered)
	if err != nil {
		got += fmt.Sprintf(" (exit: %v)", err)
	} else {
		got += ", exit 0"
	}
	return result{"7", name, got, took}
}
