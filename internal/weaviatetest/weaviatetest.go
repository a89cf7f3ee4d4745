package weaviatetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Version is the Weaviate server version the tests run.
const Version = "1.35.2"

// EnvBin names an environment variable that, when set, is the path of the
// weaviate-server binary to run instead of the cached build.
const EnvBin = "CITEFIND_WEAVIATE_BIN"

// ReadyTimeout is how long Start waits for a node to answer
// /v1/.well-known/ready (a 3-node cluster needs about 25 s on 2 cores).
const ReadyTimeout = 120 * time.Second

// ErrNoBinary: the weaviate-server binary is not built.
var ErrNoBinary = errors.New("weaviate-server not built")

// CachePath returns where scripts/install-weaviate.sh builds the server:
// ${XDG_CACHE_HOME:-$HOME/.cache}/citefind/weaviate-VERSION/weaviate-server.
func CachePath() string {
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, _ := os.UserHomeDir()
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "citefind", "weaviate-"+Version, "weaviate-server")
}

// Binary returns the path of the weaviate-server binary ($CITEFIND_WEAVIATE_BIN,
// else CachePath), or an error wrapping ErrNoBinary.
func Binary() (string, error) {
	p := os.Getenv(EnvBin)
	if p == "" {
		p = CachePath()
	}
	fi, err := os.Stat(p)
	if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		return "", fmt.Errorf("%w at %s (run scripts/install-weaviate.sh, or set %s)", ErrNoBinary, p, EnvBin)
	}
	return p, nil
}

// Require returns the binary's path, or skips the test with a message
// saying how to build it.
func Require(t testing.TB) string {
	t.Helper()
	p, err := Binary()
	if err != nil {
		t.Skipf("Weaviate tests skipped: %v", err)
	}
	return p
}

// Node is one weaviate-server process with its own folder and ports.
type Node struct {
	Name     string
	HTTPPort int // REST and GraphQL
	GRPCPort int
	Gossip   int // memberlist; Gossip+1 is the data port
	Raft     int // Raft; Raft+1 is its internal RPC port
	Dir      string

	bin   string
	env   []string
	extra []string // SetEnv: settings of the next starts, over env
	t     testing.TB

	cluster *Cluster
	started bool // launched at least once

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
	log  *os.File
}

// Addr returns the node's REST address, 127.0.0.1:PORT.
func (n *Node) Addr() string { return "127.0.0.1:" + strconv.Itoa(n.HTTPPort) }

// Running reports whether the node's process is alive.
func (n *Node) Running() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.done == nil {
		return false
	}
	select {
	case <-n.done:
		return false
	default:
		return true
	}
}

// Start starts the node's process (again, after Kill: same folder and
// ports) and waits until it answers /v1/.well-known/ready.
func (n *Node) Start(ctx context.Context) error {
	if err := n.launch(); err != nil {
		return err
	}
	return n.WaitReady(ctx)
}

// SetEnv sets Weaviate settings ("NAME=value") for the node's next
// starts, over the test defaults; SetEnv() goes back to the defaults.
func (n *Node) SetEnv(kv ...string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.extra = slices.Clone(kv)
}

func (n *Node) launch() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.done != nil {
		select {
		case <-n.done:
		default:
			return fmt.Errorf("weaviatetest: node %s is already running", n.Name)
		}
	}
	lf, err := os.OpenFile(filepath.Join(n.Dir, "weaviate.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(n.bin, "--host", "127.0.0.1", "--port", strconv.Itoa(n.HTTPPort), "--scheme", "http")
	cmd.Env = append(append(os.Environ(), n.env...), n.extra...) // the last of a name wins
	if n.cluster != nil && len(n.cluster.Nodes) > 1 {
		// Join the memberlist through the nodes started before (all the
		// others on a restart): node 1 starts alone the first time.
		var peers []string
		for _, p := range n.cluster.Nodes {
			if p != n && (n.started || p.started) {
				peers = append(peers, fmt.Sprintf("localhost:%d", p.Gossip))
			}
		}
		if len(peers) > 0 {
			cmd.Env = append(cmd.Env, "CLUSTER_JOIN="+strings.Join(peers, ","))
		}
	}
	n.started = true
	cmd.Stdout, cmd.Stderr = lf, lf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		lf.Close()
		return fmt.Errorf("weaviatetest: start %s: %w", n.Name, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); lf.Close(); close(done) }()
	n.cmd, n.done, n.log = cmd, done, lf
	return nil
}

// waitPort waits until the node accepts TCP connections on port.
func (n *Node) waitPort(ctx context.Context, port int) error {
	ctx, cancel := context.WithTimeout(ctx, ReadyTimeout)
	defer cancel()
	for {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		if !n.Running() {
			return fmt.Errorf("weaviatetest: node %s exited (log: %s)", n.Name, n.LogTail(20))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("weaviatetest: node %s does not listen on %d: %w", n.Name, port, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// WaitReady waits until the node answers /v1/.well-known/ready with 200,
// at most ReadyTimeout.
func (n *Node) WaitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, ReadyTimeout)
	defer cancel()
	url := "http://" + n.Addr() + "/v1/.well-known/ready"
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if !n.Running() {
			return fmt.Errorf("weaviatetest: node %s exited before it was ready (log: %s)", n.Name, n.LogTail(20))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("weaviatetest: node %s not ready: %w (log: %s)", n.Name, ctx.Err(), n.LogTail(20))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Kill sends SIGKILL (kill -9) to the node and waits for it to exit.
func (n *Node) Kill() error {
	n.mu.Lock()
	cmd, done := n.cmd, n.done
	n.mu.Unlock()
	if cmd == nil {
		return nil
	}
	select {
	case <-done:
		return nil
	default:
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("weaviatetest: kill %s: %w", n.Name, err)
	}
	<-done
	return nil
}

// LogTail returns the last lines of the node's log, each JSON line
// condensed to its time, level, message and the fields that say what
// happened (the build_* fields Weaviate repeats on every line are left
// out), so that a failed test's own messages stay in view above them.
func (n *Node) LogTail(lines int) string {
	b, err := os.ReadFile(filepath.Join(n.Dir, "weaviate.log"))
	if err != nil {
		return ""
	}
	ls := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(ls) > lines {
		ls = ls[len(ls)-lines:]
	}
	for i, l := range ls {
		ls[i] = condense(l)
	}
	return strings.Join(ls, "\n")
}

// condense shortens one Weaviate log line (JSON) for a test log; a line
// that is no JSON object is returned as it is.
func condense(line string) string {
	var f map[string]any
	if json.Unmarshal([]byte(line), &f) != nil {
		return line
	}
	var b strings.Builder
	if ts, ok := f["time"].(string); ok {
		if tm, err := time.Parse(time.RFC3339, ts); err == nil {
			ts = tm.UTC().Format("15:04:05")
		}
		b.WriteString(ts)
	}
	for _, k := range []string{"level", "action", "msg"} {
		if v, ok := f[k]; ok {
			fmt.Fprintf(&b, " %v", v)
		}
	}
	keys := make([]string, 0, len(f))
	for k := range f {
		switch {
		case k == "time", k == "level", k == "action", k == "msg", strings.HasPrefix(k, "build_"):
		default:
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := fmt.Sprint(f[k])
		if len(v) > 120 {
			v = v[:120] + "…"
		}
		fmt.Fprintf(&b, " %s=%s", k, v)
	}
	return b.String()
}

// Cluster is several nodes forming one Weaviate cluster.
type Cluster struct {
	Nodes []*Node
}

// Addrs returns the nodes' REST addresses.
func (c *Cluster) Addrs() []string {
	out := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		out[i] = n.Addr()
	}
	return out
}

// StartNode starts a one-node Weaviate and waits until it is ready. It
// skips the test when the binary is not built.
func StartNode(t testing.TB) *Node {
	t.Helper()
	c := start(t, 1)
	return c.Nodes[0]
}

// StartCluster starts n nodes that form one cluster (Raft with n voters,
// memberlist joined through node 1) and waits until all are ready. It
// skips the test when the binary is not built.
func StartCluster(t testing.TB, n int) *Cluster {
	t.Helper()
	return start(t, n)
}

func start(t testing.TB, count int) *Cluster {
	t.Helper()
	bin := Require(t)
	root, err := os.MkdirTemp("", "weaviatetest-")
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{}
	var join []string
	for i := range count {
		name := fmt.Sprintf("node%d", i+1)
		nd := &Node{Name: name, Dir: filepath.Join(root, name), bin: bin, t: t}
		if err := os.MkdirAll(filepath.Join(nd.Dir, "data"), 0o755); err != nil {
			t.Fatal(err)
		}
		nd.HTTPPort = freePorts(t, 1)
		nd.GRPCPort = freePorts(t, 1)
		nd.Gossip = freePorts(t, 2)
		nd.Raft = freePorts(t, 2)
		join = append(join, fmt.Sprintf("%s:%d", name, nd.Raft))
		c.Nodes = append(c.Nodes, nd)
	}
	for _, nd := range c.Nodes {
		nd.env = []string{
			"PERSISTENCE_DATA_PATH=" + filepath.Join(nd.Dir, "data"),
			"AUTHENTICATION_ANONYMOUS_ACCESS_ENABLED=true",
			"DEFAULT_VECTORIZER_MODULE=none",
			"ENABLE_MODULES=",
			"DISABLE_TELEMETRY=true",
			"PROMETHEUS_MONITORING_ENABLED=false",
			"PROMETHEUS_MONITORING_PORT=" + strconv.Itoa(freePorts(t, 1)),
			"LOG_LEVEL=" + logLevel(),
			"CLUSTER_HOSTNAME=" + nd.Name,
			"CLUSTER_ADVERTISE_ADDR=127.0.0.1",
			"CLUSTER_IN_LOCALHOST=true",
			"CLUSTER_GOSSIP_BIND_PORT=" + strconv.Itoa(nd.Gossip),
			"CLUSTER_DATA_BIND_PORT=" + strconv.Itoa(nd.Gossip+1),
			"RAFT_PORT=" + strconv.Itoa(nd.Raft),
			"RAFT_INTERNAL_RPC_PORT=" + strconv.Itoa(nd.Raft+1),
			"RAFT_JOIN=" + strings.Join(join, ","),
			"RAFT_BOOTSTRAP_EXPECT=" + strconv.Itoa(count),
			"GRPC_PORT=" + strconv.Itoa(nd.GRPCPort),
			"GO_PROFILING_DISABLE=true",
			// Weaviate 1.35.2's BM25 ranks objects still in a memtable
			// wrong; idle memtables are flushed after this many seconds
			// (default 60), which Sync waits for.
			"PERSISTENCE_MEMTABLES_FLUSH_IDLE_AFTER_SECONDS=1",
			// Async replication repairs a restarted node's replicas every
			// 30 s by default, leaving objects younger than 30 s alone:
			// faster here, so that catch-up tests take seconds.
			"ASYNC_REPLICATION_FREQUENCY=1s",
			"ASYNC_REPLICATION_PROPAGATION_DELAY=1s",
			"ASYNC_REPLICATION_ALIVE_NODES_CHECKING_FREQUENCY=1s",
			"GO_PROFILING_PORT=" + strconv.Itoa(freePorts(t, 1)),
		}
		nd.cluster = c
	}
	t.Cleanup(func() {
		for _, nd := range c.Nodes {
			_ = nd.Kill()
			if t.Failed() {
				t.Logf("weaviate %s log tail:\n%s", nd.Name, nd.LogTail(15))
			}
		}
		_ = os.RemoveAll(root)
	})
	ctx := context.Background()
	for i, nd := range c.Nodes {
		if err := nd.launch(); err != nil {
			t.Fatal(err)
		}
		if i == 0 && count > 1 {
			// The others join node 1's memberlist: it must listen first.
			if err := nd.waitPort(ctx, nd.Gossip); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, nd := range c.Nodes {
		if err := nd.WaitReady(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if count > 1 {
		if err := c.WaitHealthy(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// WaitHealthy waits until the first running node reports every node of the
// cluster HEALTHY (GET /v1/nodes) and the cluster's Raft state settled
// (GET /v1/cluster/statistics: every node ready, its database loaded, the
// same leader known to all, and "synchronized"), at most ReadyTimeout. A
// restarted node is HEALTHY in the memberlist before it has caught up
// with the Raft log; tests that go on at once (kill another node) then
// leave a cluster without a working majority.
func (c *Cluster) WaitHealthy(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, ReadyTimeout)
	defer cancel()
	var last string
	for {
		for _, nd := range c.Nodes {
			if !nd.Running() {
				continue
			}
			healthy, status, err := nodesHealthy(ctx, nd.Addr())
			if err == nil && healthy == len(c.Nodes) {
				if status, err = raftSettled(ctx, nd.Addr(), len(c.Nodes)); err == nil && status == "" {
					return nil
				}
			}
			last = status
			if err != nil {
				last = err.Error()
			}
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("weaviatetest: cluster not healthy: %w (last: %s)", ctx.Err(), last)
		case <-time.After(300 * time.Millisecond):
		}
	}
}

func nodesHealthy(ctx context.Context, addr string) (int, string, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/v1/nodes", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	var body struct {
		Nodes []struct {
			Name   string `json:"name"`
			Status string `json:"status"`
		} `json:"nodes"`
	}
	if err := decodeJSON(resp, &body); err != nil {
		return 0, "", err
	}
	n := 0
	var parts []string
	for _, nd := range body.Nodes {
		parts = append(parts, nd.Name+"="+nd.Status)
		if nd.Status == "HEALTHY" {
			n++
		}
	}
	return n, strings.Join(parts, " "), nil
}

// raftSettled returns "" when GET /v1/cluster/statistics says that every
// one of n nodes is ready with its database loaded, all follow the same
// leader and the cluster is synchronized; else what is not so.
func raftSettled(ctx context.Context, addr string, n int) (string, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/v1/cluster/statistics", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var body struct {
		Synchronized bool `json:"synchronized"`
		Statistics   []struct {
			Name     string `json:"name"`
			Ready    bool   `json:"ready"`
			DBLoaded bool   `json:"dbLoaded"`
			LeaderID string `json:"leaderId"`
		} `json:"statistics"`
	}
	if err := decodeJSON(resp, &body); err != nil {
		return "", err
	}
	var not []string
	leaders := map[string]bool{}
	for _, st := range body.Statistics {
		if !st.Ready || !st.DBLoaded || st.LeaderID == "" {
			not = append(not, fmt.Sprintf("%s ready=%v dbLoaded=%v leader=%q", st.Name, st.Ready, st.DBLoaded, st.LeaderID))
		}
		leaders[st.LeaderID] = true
	}
	if len(body.Statistics) != n {
		not = append(not, fmt.Sprintf("%d of %d nodes in the statistics", len(body.Statistics), n))
	}
	if len(leaders) > 1 {
		not = append(not, fmt.Sprintf("%d different leaders", len(leaders)))
	}
	if !body.Synchronized {
		not = append(not, "not synchronized")
	}
	return strings.Join(not, "; "), nil
}

// handedOut holds the ports freePorts has returned in this process. A
// port is free only until a node binds it, and the kernel hands a closed
// port out again: without this, one node once got the same port for gRPC
// and Raft ("bind: address already in use", a failed CI run).
var handedOut = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

// freePorts returns a free loopback TCP port p such that p … p+n-1 are
// all free (and, for the memberlist ports, p is free for UDP too) and
// none of them was returned before in this process.
func freePorts(t testing.TB, n int) int {
	t.Helper()
	handedOut.Lock()
	defer handedOut.Unlock()
	for range 200 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		ok := true
		for i := range n {
			if handedOut.ports[p+i] {
				ok = false
			}
		}
		var held []interface{ Close() error }
		held = append(held, l)
		for i := range n {
			if i > 0 {
				li, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p+i))
				if err != nil {
					ok = false
					break
				}
				held = append(held, li)
			}
			u, err := net.ListenPacket("udp", "127.0.0.1:"+strconv.Itoa(p+i))
			if err != nil {
				ok = false
				break
			}
			held = append(held, u)
		}
		for _, h := range held {
			_ = h.Close()
		}
		if ok && p+n < 65535 {
			for i := range n {
				handedOut.ports[p+i] = true
			}
			return p
		}
	}
	t.Fatal("weaviatetest: no free ports")
	return 0
}

// logLevel is the nodes' LOG_LEVEL: $CITEFIND_WEAVIATE_LOG_LEVEL, else
// warning.
func logLevel() string {
	if l := os.Getenv("CITEFIND_WEAVIATE_LOG_LEVEL"); l != "" {
		return l
	}
	return "warning"
}

// PID returns the process id of the node's running process, 0 when it
// is not running.
func (n *Node) PID() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil || n.cmd.Process == nil {
		return 0
	}
	return n.cmd.Process.Pid
}

// DataDir returns the node's PERSISTENCE_DATA_PATH.
func (n *Node) DataDir() string { return filepath.Join(n.Dir, "data") }
