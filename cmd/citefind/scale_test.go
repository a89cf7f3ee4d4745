package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/internal/datadir"
	"github.com/citefind/citefind/internal/weaviatetest"
)

// scaleEnv gates TestScaleServe (make bench-scale): ACM-CR through a
// 3-node Weaviate cluster (3 shards × 2 replicas), served by one and by
// three serve processes, against the local backend; then a node killed -9
// during a load. Figures are logged and written to CITEFIND_SCALE_REPORT.
const scaleEnv = "CITEFIND_SCALE"

func TestScaleServe(t *testing.T) {
	if os.Getenv(scaleEnv) == "" {
		t.Skip("set " + scaleEnv + "=1 (make bench-scale): builds ACM-CR into a 3-node Weaviate cluster and loads serve")
	}
	acm := datadir.Bench("acm-cr")
	if _, err := os.Stat(acm); err != nil {
		t.Skipf("ACM-CR not found at %s: %v", acm, err)
	}
	ctx := t.Context()
	dir := t.TempDir()
	bin := filepath.Join(dir, "citefind")
	loadgen := filepath.Join(dir, "loadgen")
	for _, b := range [][2]string{{bin, "."}, {loadgen, "../../benchmarks/loadgen"}} {
		out, err := exec.Command("go", "build", "-o", b[0], b[1]).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	run := func(args ...string) string {
		t.Helper()
		start := time.Now()
		out, err := exec.Command(bin, args...).CombinedOutput()
		require.NoError(t, err, "%s", out)
		t.Logf("citefind %s: %s", strings.Join(args, " "), time.Since(start).Round(time.Second))
		return string(out)
	}
	report := map[string]any{"date": time.Now().UTC().Format(time.RFC3339)}

	localDB := filepath.Join(dir, "local")
	run("eval", "--bench", "acm-cr", "--db", localDB, "--quiet", "--embedder", "none", "--retrievers", "bm25")
	cluster := weaviatetest.StartCluster(t, 3)
	// Every node in the URL: requests move to the next node when one fails,
	// and reads are hedged to it.
	url := fmt.Sprintf("weaviate://%s,%s,%s/Scale?shards=3&replicas=2", cluster.Nodes[0].Addr(), cluster.Nodes[1].Addr(), cluster.Nodes[2].Addr())
	remoteDB := filepath.Join(dir, "remote")
	require.NoError(t, exec.Command("cp", "-r", localDB, remoteDB).Run())
	start := time.Now()
	out := run("index", "--db", remoteDB, "--quiet", "--backend", url)
	report["sync_s"] = time.Since(start).Seconds()
	t.Logf("sync:\n%s", out)
	t.Logf("status:\n%s", run("status", "--db", remoteDB))

	serve := func(args ...string) (string, *exec.Cmd) {
		addr := freeAddr(t)
		cmd := exec.Command(bin, append([]string{"serve", "--addr", addr, "--no-mcp", "--log-format", "json"}, args...)...)
		cmd.Stderr, cmd.Stdout = nil, nil
		if keep := os.Getenv("CITEFIND_SCALE_KEEP"); keep != "" {
			f, err := os.Create(filepath.Join(keep, "serve-"+strings.ReplaceAll(addr, ":", "_")+".log"))
			require.NoError(t, err)
			cmd.Stderr, cmd.Stdout = f, f
		}
		require.NoError(t, cmd.Start())
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		base := "http://" + addr
		waitHealthy(t, base)
		return base, cmd
	}
	// Against Weaviate, a warm-up pass over all 821 queries takes minutes
	// (about 1 s a query on this machine) and a slow query fails it: warm
	// up with 15 s of load instead.
	load := func(name string, urls []string, pid, clients int, duration string, during func()) map[string]any {
		t.Helper()
		args := []string{"-url", strings.Join(urls, ","), "-clients", fmt.Sprint(clients), "-duration", duration, "-data", acm, "-json", "-max-growth", "1000"}
		if !strings.HasPrefix(name, "local") {
			args = append(args, "-pass=false", "-warmup", "15s")
		}
		if pid > 0 {
			args = append(args, "-pid", fmt.Sprint(pid))
		}
		cmd := exec.CommandContext(ctx, loadgen, args...)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		require.NoError(t, cmd.Start())
		if during != nil {
			during()
		}
		err := cmd.Wait()
		var r map[string]any
		require.NoError(t, json.Unmarshal([]byte(stdout.String()), &r), "%s (loadgen: %v: %s)", stdout.String(), err, stderr.String())
		t.Logf("%s: %.1f requests/s, p50 %.0f ms, p99 %.0f ms, %v errors of %v (first: %v)", name,
			r["requests_per_s"], r["p50_ms"], r["p99_ms"], r["errors"], r["requests"], r["first_error"])
		report[name] = r
		return r
	}

	// A node killed -9 20 s into a 60 s load: with 2 replicas, no request
	// should fail. The node killed is the first of the URL, the one every
	// request goes to until it fails.
	killed := func(urls []string) {
		clients := 8
		if n, err := strconv.Atoi(os.Getenv("CITEFIND_SCALE_KILL_CLIENTS")); err == nil && n > 0 {
			clients = n
		}
		load(fmt.Sprintf("weaviate 3x2, 3 serve, %d clients, node killed", clients), urls, 0, clients, "60s", func() {
			time.Sleep(20 * time.Second)
			victim := 0
			if n, err := strconv.Atoi(os.Getenv("CITEFIND_SCALE_KILL_NODE")); err == nil && n >= 1 && n <= len(cluster.Nodes) {
				victim = n - 1
			}
			require.NoError(t, cluster.Nodes[victim].Kill())
			t.Logf("killed %s (node %d of the URL) at %s", cluster.Nodes[victim].Name, victim+1, time.Now().Format("15:04:05.000"))
		})
	}
	if keep := os.Getenv("CITEFIND_SCALE_KEEP"); keep != "" {
		t.Cleanup(func() {
			for _, n := range cluster.Nodes {
				_ = exec.Command("cp", filepath.Join(n.Dir, "weaviate.log"), filepath.Join(keep, n.Name+".log")).Run()
			}
		})
	}
	if os.Getenv("CITEFIND_SCALE_ONLY") == "kill" {
		one, _ := serve("--backend", url)
		two, _ := serve("--backend", url)
		three, _ := serve("--backend", url)
		urls := []string{one, two, three}
		load("weaviate 3x2, 3 serve, 8 clients", urls, 0, 8, "20s", nil)
		killed(urls)
		return
	}
	base, lc := serve("--db", localDB)
	load("local, 1 serve", []string{base}, lc.Process.Pid, 32, "30s", nil)
	_ = lc.Process.Kill()

	one, oc := serve("--backend", url)
	load("weaviate 3x2, 1 serve", []string{one}, oc.Process.Pid, 32, "30s", nil)
	two, _ := serve("--backend", url)
	three, _ := serve("--backend", url)
	urls := []string{one, two, three}
	load("weaviate 3x2, 3 serve", urls, 0, 32, "30s", nil)
	// The same below saturation (8 clients: the 3 processes admit 12
	// searches at once), so that the kill below is measured on a cluster
	// that is not already past serve's request deadline.
	load("weaviate 3x2, 3 serve, 8 clients", urls, 0, 8, "30s", nil)

	killed(urls)
	if path := os.Getenv("CITEFIND_SCALE_REPORT"); path != "" {
		b, err := json.MarshalIndent(report, "", "  ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, b, 0o644))
	}
}
