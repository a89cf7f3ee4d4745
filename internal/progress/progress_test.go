package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func TestPlainLinesEveryInterval(t *testing.T) {
	var buf bytes.Buffer
	c := &clock{t: time.Unix(0, 0)}
	b := newBar(&buf, "indexing", 1000, "papers", false, c.now)
	b.Add(100) // same instant: nothing printed
	assert.Empty(t, buf.String())
	c.t = c.t.Add(Interval)
	b.Add(400) // 500 done in 5 s: 100/s, 500 left → ETA 5s
	assert.Equal(t, "indexing: 500/1000 papers  50%, 100 papers/s, ETA 5s\n", buf.String())
	c.t = c.t.Add(time.Second)
	b.Add(100) // under Interval since last line: quiet
	assert.Equal(t, 1, strings.Count(buf.String(), "\n"))
	c.t = c.t.Add(4 * time.Second)
	b.Add(400) // 1000 in 10 s
	b.Done()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	assert.Equal(t, "indexing: 1000/1000 papers 100%, 100 papers/s, 10s", lines[len(lines)-1])
}

func TestLiveBarRedrawsInPlace(t *testing.T) {
	var buf bytes.Buffer
	c := &clock{t: time.Unix(0, 0)}
	b := newBar(&buf, "embedding", 10, "papers", true, c.now)
	c.t = c.t.Add(time.Second)
	b.Add(5)
	assert.Equal(t, "\r\x1b[Kembedding: 5/10 papers [============            ]  50%, 5 papers/s, ETA 1s", buf.String())
	b.Done()
	assert.True(t, strings.HasSuffix(buf.String(), "\n"))
}

func TestNilBarIsQuiet(t *testing.T) {
	var b *Bar
	b.Add(1)
	b.SetTotal(3)
	b.Done()
}

func TestUnknownTotal(t *testing.T) {
	var buf bytes.Buffer
	c := &clock{t: time.Unix(0, 0)}
	b := newBar(&buf, "reading", 0, "records", false, c.now)
	c.t = c.t.Add(2 * time.Second)
	b.Add(10)
	b.Done()
	assert.Equal(t, "reading: 10 records, 5 records/s, 2s\n", buf.String())
}
