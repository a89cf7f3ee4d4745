// Package progress shows the progress of long work: a count, a rate and an
// ETA. On a terminal it redraws one live line with a bar; otherwise (a log
// file, CI) it prints a plain line at most every Interval.
//
//	p := progress.New(os.Stderr, "indexing", 108857, "papers")
//	for … { p.Add(500) }
//	p.Done()
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
)

// Interval is how often a plain (non-terminal) progress line is printed.
const Interval = 5 * time.Second

// Bar reports progress of one job. It is safe for concurrent use. A nil
// *Bar is valid and does nothing, so callers can pass nil for "quiet".
type Bar struct {
	mu       sync.Mutex
	w        io.Writer
	label    string
	unit     string
	total    int64
	done     int64
	start    time.Time
	last     time.Time
	live     bool
	finished bool
	now      func() time.Time
}

// New starts a progress display on w. total may be 0 when unknown. When w
// is a terminal the line is redrawn in place (at most 10 times a second).
func New(w io.Writer, label string, total int64, unit string) *Bar {
	live := false
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		live = true
	}
	return newBar(w, label, total, unit, live, time.Now)
}

func newBar(w io.Writer, label string, total int64, unit string, live bool, now func() time.Time) *Bar {
	t := now()
	return &Bar{w: w, label: label, unit: unit, total: total, start: t, last: t, live: live, now: now}
}

// SetTotal changes the expected total (e.g. once a file count is known).
func (b *Bar) SetTotal(total int64) {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.total = total
	b.mu.Unlock()
}

// Add records n more units done.
func (b *Bar) Add(n int64) { b.Set(-1, n) }

// Set records the absolute count done (when done >= 0), plus add.
func (b *Bar) Set(done, add int64) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if done >= 0 {
		b.done = done
	}
	b.done += add
	t := b.now()
	every := Interval
	if b.live {
		every = 100 * time.Millisecond
	}
	if t.Sub(b.last) < every {
		return
	}
	b.last = t
	b.print(t, false)
}

// Done prints the final line: the count, the elapsed time and the mean rate.
func (b *Bar) Done() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.finished {
		return
	}
	b.finished = true
	b.print(b.now(), true)
}

func (b *Bar) print(t time.Time, final bool) {
	el := t.Sub(b.start)
	rate := 0.0
	if el > 0 {
		rate = float64(b.done) / el.Seconds()
	}
	var s strings.Builder
	fmt.Fprintf(&s, "%s: %d", b.label, b.done)
	if b.total > 0 {
		fmt.Fprintf(&s, "/%d", b.total)
	}
	fmt.Fprintf(&s, " %s", b.unit)
	if b.total > 0 {
		pct := 100 * float64(b.done) / float64(b.total)
		if b.live && !final {
			const width = 24
			filled := int(pct / 100 * width)
			filled = max(0, min(width, filled))
			fmt.Fprintf(&s, " [%s%s]", strings.Repeat("=", filled), strings.Repeat(" ", width-filled))
		}
		fmt.Fprintf(&s, " %3.0f%%", pct)
	}
	fmt.Fprintf(&s, ", %.0f %s/s", rate, b.unit)
	if final {
		fmt.Fprintf(&s, ", %s", el.Round(10*time.Millisecond))
	} else if b.total > 0 && rate > 0 && b.done < b.total {
		eta := time.Duration(float64(b.total-b.done) / rate * float64(time.Second))
		fmt.Fprintf(&s, ", ETA %s", eta.Round(time.Second))
	}
	if b.live {
		// \r + clear line; newline only at the end.
		fmt.Fprintf(b.w, "\r\x1b[K%s", s.String())
		if final {
			fmt.Fprintln(b.w)
		}
		return
	}
	fmt.Fprintln(b.w, s.String())
}
