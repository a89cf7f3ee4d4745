package weaviate

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Defaults of Config.
const (
	// DefaultDepth is the least number of BM25 candidates asked of Weaviate
	// per query; a query for k papers asks for max(DefaultDepth,
	// DefaultDepthFactor·k). The candidates are re-scored exactly (see
	// the package doc), so depth only has to hold the true top k.
	DefaultDepth       = 300
	DefaultDepthFactor = 3
	// DefaultTimeout bounds one read request (a query, a lookup).
	DefaultTimeout = 10 * time.Second
	// DefaultHedge is how long a read waits for its node before it is
	// also sent to the next node of the URL.
	DefaultHedge = 3 * time.Second
	// DefaultWriteTimeout bounds one write request (a batch of papers).
	DefaultWriteTimeout = 60 * time.Second
	// DefaultBatchSize is the number of papers per batch request.
	DefaultBatchSize = 200
	// DefaultFlushWait bounds Sync's wait for Weaviate's memtable flush:
	// Weaviate flushes idle memtables after 60 s by default.
	DefaultFlushWait = 3 * time.Minute
	// DefaultCheckpoint is the least time between two checkpoints of a
	// Sync in the metadata object.
	DefaultCheckpoint = 5 * time.Second
)

// Consistency levels of Weaviate's replication.
const (
	One    = "ONE"
	Quorum = "QUORUM"
	All    = "ALL"
)

// Config is a parsed backend URL,
// weaviate://HOST:PORT/COLLECTION[?shards=N&replicas=R&…].
type Config struct {
	// Addr is HOST:PORT of Weaviate's REST API (any node of a cluster):
	// the first of Addrs.
	Addr string
	// Addrs is every node's HOST:PORT the URL names
	// (weaviate://HOST:PORT,HOST:PORT,…/COLLECTION): requests go to one
	// and move to the next when it fails; reads are hedged to the next.
	Addrs []string
	// Hedge is how long a read waits for its node before it is also sent
	// to the next one (hedge=3s, or hedge=none); 0 means DefaultHedge.
	// Only with several Addrs.
	Hedge time.Duration
	// Collection is the Weaviate collection (class) of the papers: a
	// letter, then letters, digits and _; Weaviate upper-cases the first
	// letter, so it must be upper case here. Its metadata lives in the
	// collection Collection + MetaSuffix.
	Collection string
	// Shards is the number of shards the collection is created with
	// (shards=N); 0 means Weaviate's default (one per node). Only used
	// when Sync creates the collection.
	Shards int
	// Replicas is the replication factor the collection is created with
	// (replicas=R); 0 means 1.
	Replicas int
	// Write and Read are the consistency levels of writes and reads
	// (write=, read=: ONE, QUORUM or ALL). "" means QUORUM for writes, and
	// for reads ONE with at most 2 replicas, else QUORUM, so that every
	// read overlaps the last acknowledged write (W + R > replicas) and one
	// node may be down for reads. See the package doc.
	Write, Read string
	// Depth is the number of BM25 candidates asked per field and query
	// (depth=N; at least k); 0 means max(DefaultDepth, DefaultDepthFactor·k).
	Depth int
	// Timeout bounds one read request (timeout=10s); 0 means
	// DefaultTimeout. Writes get DefaultWriteTimeout or Timeout, whichever
	// is longer.
	Timeout time.Duration
	// BatchSize is the number of papers per write (batch=N); 0 means
	// DefaultBatchSize.
	BatchSize int
	// FlushWait bounds how long Sync waits, after writing, for Weaviate
	// to flush its memtables (flushwait=2m; see the package doc); 0 means
	// DefaultFlushWait; negative (flushwait=none) skips the wait.
	FlushWait time.Duration
	// Checkpoint is the least time between two checkpoints of a Sync
	// (checkpoint=5s); 0 means DefaultCheckpoint.
	Checkpoint time.Duration
}

// MetaSuffix is appended to Config.Collection to name the collection that
// holds the backend's metadata object; MetaSuffix + "_df" names the one of
// its document frequencies.
const MetaSuffix = "_citefind"

var collectionRe = regexp.MustCompile(`^[A-Z][A-Za-z0-9_]*$`)

// ParseURL parses weaviate://HOST:PORT[,HOST:PORT…]/COLLECTION[?query]
// into a Config (a HOST without a port gets 8080).
// Errors name the URL and the cause.
func ParseURL(u *url.URL) (Config, error) {
	var c Config
	bad := func(format string, a ...any) (Config, error) {
		return Config{}, fmt.Errorf("%w %q: %s", ErrBadURL, u.Redacted(), fmt.Sprintf(format, a...))
	}
	if u.Scheme != Scheme {
		return bad("scheme %q, want %s", u.Scheme, Scheme)
	}
	if u.User != nil {
		return bad("user info is not supported")
	}
	if u.Host == "" {
		return bad("no HOST:PORT (want weaviate://HOST:PORT/COLLECTION)")
	}
	for _, h := range strings.Split(u.Host, ",") {
		if h == "" {
			return bad("an empty HOST:PORT in %q", u.Host)
		}
		if _, port, err := net.SplitHostPort(h); err != nil || port == "" {
			if strings.Contains(strings.TrimPrefix(h, "["), ":") && !strings.HasSuffix(h, "]") {
				return bad("%q: want HOST:PORT", h)
			}
			h += ":8080"
		} else if _, err := strconv.ParseUint(port, 10, 16); err != nil {
			return bad("%q: port %q is not a number", h, port)
		}
		if slices.Contains(c.Addrs, h) {
			return bad("%s named twice", h)
		}
		c.Addrs = append(c.Addrs, h)
	}
	c.Addr = c.Addrs[0]
	c.Collection = strings.Trim(u.Path, "/")
	if c.Collection == "" {
		return bad("no collection (want weaviate://HOST:PORT/COLLECTION)")
	}
	if !collectionRe.MatchString(c.Collection) {
		return bad("collection %q: want an upper-case letter, then letters, digits or _", c.Collection)
	}
	for k, vs := range u.Query() {
		v := vs[len(vs)-1]
		var err error
		switch k {
		case "shards":
			c.Shards, err = positive(v)
		case "replicas":
			c.Replicas, err = positive(v)
		case "depth":
			c.Depth, err = positive(v)
		case "batch":
			c.BatchSize, err = positive(v)
		case "hedge":
			c.Hedge, err = durationOrNone(v)
		case "timeout", "checkpoint":
			var d time.Duration
			d, err = time.ParseDuration(v)
			if err == nil && d <= 0 {
				err = fmt.Errorf("must be positive")
			}
			if k == "timeout" {
				c.Timeout = d
			} else {
				c.Checkpoint = d
			}
		case "flushwait":
			c.FlushWait, err = durationOrNone(v)
		case "write", "read":
			l := strings.ToUpper(v)
			if l != One && l != Quorum && l != All {
				err = fmt.Errorf("want ONE, QUORUM or ALL")
			}
			if k == "write" {
				c.Write = l
			} else {
				c.Read = l
			}
		default:
			return bad("unknown parameter %q (known: shards, replicas, write, read, depth, timeout, hedge, batch, flushwait, checkpoint)", k)
		}
		if err != nil {
			return bad("%s=%s: %v", k, v, err)
		}
	}
	if c.Hedge > 0 && len(c.Addrs) < 2 {
		return bad("hedge=%s sends a slow read to the next node: name two or more nodes (weaviate://H1:P1,H2:P2/%s), or leave hedge out", c.Hedge, c.Collection)
	}
	return c, nil
}

// durationOrNone parses a positive duration, or "none" as -1.
func durationOrNone(v string) (time.Duration, error) {
	if v == "none" {
		return -1, nil
	}
	d, err := time.ParseDuration(v)
	if err == nil && d <= 0 {
		err = fmt.Errorf("must be positive, or none")
	}
	return d, err
}

func positive(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("want a positive integer")
	}
	return n, nil
}

func (c Config) replicas() int { return max(c.Replicas, 1) }

func (c Config) writeLevel() string {
	if c.Write != "" {
		return c.Write
	}
	return Quorum
}

func (c Config) readLevel() string {
	if c.Read != "" {
		return c.Read
	}
	if c.replicas() <= 2 {
		return One
	}
	return Quorum
}

func (c Config) depth(k int) int {
	if c.Depth > 0 {
		return max(c.Depth, k)
	}
	return max(DefaultDepth, DefaultDepthFactor*k)
}

func (c Config) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return DefaultTimeout
}

func (c Config) hedge() time.Duration {
	switch {
	case c.Hedge < 0:
		return 0
	case c.Hedge == 0:
		return DefaultHedge
	}
	return c.Hedge
}

func (c Config) writeTimeout() time.Duration { return max(c.timeout(), DefaultWriteTimeout) }

func (c Config) batchSize() int {
	if c.BatchSize > 0 {
		return c.BatchSize
	}
	return DefaultBatchSize
}

func (c Config) flushWait() time.Duration {
	if c.FlushWait == 0 {
		return DefaultFlushWait
	}
	return max(c.FlushWait, 0)
}

func (c Config) checkpoint() time.Duration {
	if c.Checkpoint > 0 {
		return c.Checkpoint
	}
	return DefaultCheckpoint
}

func (c Config) metaClass() string { return c.Collection + MetaSuffix }

func (c Config) dfClass() string { return c.Collection + MetaSuffix + "_df" }
