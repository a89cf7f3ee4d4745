package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strconv"
	"sync"
	"time"
)

// drain holds the end of an MCP stdio input back until every request read
// before it has been answered. The SDK ends a session at end of input and
// drops what it has not answered, so a client that pipes its requests and
// closes standard input (echo … | citefind mcp) would get nothing.
//
// Messages are newline-delimited JSON (the MCP stdio transport: no
// embedded newlines). Requests are counted by id as they are read, before
// the SDK sees them; responses by id as they are written.
type drain struct {
	mu      sync.Mutex
	pending map[string]int // request id → requests read less answers written
	total   int            // the sum of pending
	idle    chan struct{}  // closed when total falls to 0, while wait waits
}

func newDrain() *drain { return &drain{pending: map[string]int{}} }

// maxTrackedLine bounds the partial line a drainReader or drainWriter
// keeps; a longer one is not tracked (the SDK refuses lines over 16 MiB).
const maxTrackedLine = 16 << 20

// message is what drain reads of a JSON-RPC message.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// idKey returns a JSON-RPC id as a map key, the same for 1 and 1.0;
// "" for no id or null.
func idKey(raw json.RawMessage) string {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return ""
	}
	switch x := v.(type) {
	case string:
		return "s" + x
	case float64:
		return "n" + strconv.FormatFloat(x, 'g', -1, 64)
	}
	return ""
}

// messages parses one line: an object or a batch (array) of them.
func messages(line []byte) []message {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	if line[0] == '[' {
		var batch []message
		if json.Unmarshal(line, &batch) != nil {
			return nil
		}
		return batch
	}
	var m message
	if json.Unmarshal(line, &m) != nil {
		return nil
	}
	return []message{m}
}

// read counts the requests (a method and an id) of a line of input.
func (d *drain) read(line []byte) {
	for _, m := range messages(line) {
		if k := idKey(m.ID); k != "" && m.Method != "" {
			d.mu.Lock()
			if d.pending[k]++; d.pending[k] == 0 {
				delete(d.pending, k)
			}
			d.total++
			d.mu.Unlock()
		}
	}
}

// wrote counts the responses (an id, a result or an error, no method) of
// a line of output.
func (d *drain) wrote(line []byte) {
	for _, m := range messages(line) {
		k := idKey(m.ID)
		if k == "" || m.Method != "" || (m.Result == nil && m.Error == nil) {
			continue
		}
		// A request's answer may come before the request is counted
		// (the last line of input, counted at end of input): counts may
		// go below 0 for a while. By the end of input every request is
		// counted, and the total is what is left to answer.
		d.mu.Lock()
		if d.pending[k]--; d.pending[k] == 0 {
			delete(d.pending, k)
		}
		d.total--
		if d.total == 0 && d.idle != nil {
			close(d.idle)
			d.idle = nil
		}
		d.mu.Unlock()
	}
}

// wait returns when every request read has been answered, ctx ends or
// timeout passes.
func (d *drain) wait(ctx context.Context, timeout time.Duration) {
	d.mu.Lock()
	if d.total == 0 {
		d.mu.Unlock()
		return
	}
	idle := make(chan struct{})
	d.idle = idle
	d.mu.Unlock()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-idle:
	case <-ctx.Done():
	case <-t.C:
	}
}

// lines splits a byte stream into lines for fn, keeping the partial last
// one (up to maxTrackedLine).
type lines struct {
	buf  []byte
	skip bool // the current line grew too long: not tracked
}

func (l *lines) feed(p []byte, fn func([]byte)) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if !l.skip {
				l.buf = append(l.buf, p...)
				if len(l.buf) > maxTrackedLine {
					l.buf, l.skip = l.buf[:0], true
				}
			}
			return
		}
		if !l.skip {
			l.buf = append(l.buf, p[:i]...)
			fn(l.buf)
		}
		l.buf, l.skip = l.buf[:0], false
		p = p[i+1:]
	}
}

// drainReader counts the requests it reads and, at end of input, waits
// for their answers (at most timeout) before returning io.EOF.
type drainReader struct {
	r       io.Reader
	d       *drain
	ctx     context.Context
	timeout time.Duration
	lines   lines
	eofNext bool // the input has ended; the bytes before it are handed over
	eof     bool // io.EOF was returned
}

func (r *drainReader) Read(p []byte) (int, error) {
	if r.eof {
		return 0, io.EOF
	}
	if r.eofNext {
		r.d.wait(r.ctx, r.timeout)
		r.eof = true
		return 0, io.EOF
	}
	n, err := r.r.Read(p)
	r.lines.feed(p[:n], r.d.read)
	if err == io.EOF {
		if len(r.lines.buf) > 0 && !r.lines.skip {
			r.d.read(r.lines.buf) // a last line without a newline
			r.lines.buf = r.lines.buf[:0]
		}
		if n > 0 {
			// Hand these bytes over first: their requests are answered
			// only once the SDK has them.
			r.eofNext = true
			return n, nil
		}
		r.d.wait(r.ctx, r.timeout)
		r.eof = true
	}
	return n, err
}

// drainWriter counts the responses written through it.
type drainWriter struct {
	w     io.Writer
	d     *drain
	mu    sync.Mutex
	lines lines
}

func (w *drainWriter) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	w.mu.Lock()
	w.lines.feed(p[:n], w.d.wrote)
	w.mu.Unlock()
	return n, err
}
