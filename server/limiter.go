package server

import (
	"context"
	"runtime"
)

// Limiter admits a bounded number of callers at a time to work on the
// engine; the others wait their turn within their context. One Limiter
// shared by the HTTP API and the MCP tools (mcp.Options.Limiter) bounds
// both together. It is safe for concurrent use.
type Limiter struct {
	slots chan struct{}
}

// DefaultConcurrency is the admission limit of a zero Options.MaxConcurrent
// and of NewLimiter(0): 2 × GOMAXPROCS, at least 4.
func DefaultConcurrency() int { return max(4, 2*runtime.GOMAXPROCS(0)) }

// NewLimiter returns a limiter of n slots; n <= 0 means
// DefaultConcurrency().
func NewLimiter(n int) *Limiter {
	if n <= 0 {
		n = DefaultConcurrency()
	}
	return &Limiter{slots: make(chan struct{}, n)}
}

// Acquire waits for a slot and returns its release, or the context's
// error when ctx ends first.
func (l *Limiter) Acquire(ctx context.Context) (release func(), err error) {
	select {
	case l.slots <- struct{}{}:
		return func() { <-l.slots }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Cap returns the number of slots.
func (l *Limiter) Cap() int { return cap(l.slots) }

// InUse returns the number of slots held.
func (l *Limiter) InUse() int { return len(l.slots) }
