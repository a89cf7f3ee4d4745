package fuse

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/retrieve"
)

// Named is a retriever taking part in a Search.
type Named struct {
	// Name identifies the retriever in Hit.Sources, Result and errors
	// ("bm25", "dense"). It must be non-empty and unique within a Search.
	Name string
	// Retriever is asked for Options.Depth hits. It must not be nil.
	Retriever retrieve.Retriever
	// Weight scales the retriever's contribution to fused scores, finite
	// and >= 0. 0 means DefaultWeight (1); use Shadow for weight 0.
	Weight float64
	// Shadow gives the retriever weight 0: it runs, and its ranks and
	// scores appear in Hit.Sources, but it cannot change the fused order
	// (see Fuse). Its failures still count as failures.
	Shadow bool
	// Timeout overrides Options.Timeout for this retriever, >= 0. 0 means
	// Options.Timeout.
	Timeout time.Duration
}

// Failure is a retriever that failed during a Search: it returned an
// error, missed its deadline or panicked.
type Failure struct {
	// Retriever is the Named.Name of the retriever.
	Retriever string
	// Err is the cause. It wraps context.DeadlineExceeded when the
	// retriever missed its deadline, and ErrPanic when it panicked.
	Err error
	// Timeout is the deadline the retriever missed, or 0 when it failed
	// otherwise.
	Timeout time.Duration
}

// Error returns "retriever NAME: CAUSE", or "retriever NAME: missed its
// deadline of TIMEOUT".
func (f Failure) Error() string {
	if f.Timeout > 0 {
		return fmt.Sprintf("retriever %s: missed its deadline of %v", f.Retriever, f.Timeout)
	}
	return fmt.Sprintf("retriever %s: %v", f.Retriever, f.Err)
}

// Unwrap returns Err.
func (f Failure) Unwrap() error { return f.Err }

// Result is the outcome of a Search.
type Result struct {
	// Hits are the fused hits, best first, at most Options.K of them.
	// Empty (not nil) when no retriever found anything.
	Hits []Hit `json:"hits"`
	// Failures lists the retrievers that failed, in the order they were
	// given to Search. Only non-empty with Options.AllowPartial.
	Failures []Failure `json:"-"`
	// Warnings holds one line for each Failure (its Error()), for
	// output such as the "warnings" field of `query --json`.
	Warnings []string `json:"warnings,omitempty"`
	// Latency maps each retriever's name to how long it ran: until it
	// returned, or until Search stopped waiting for it.
	Latency map[string]time.Duration `json:"-"`
	// Lists maps the name of each retriever that succeeded to its list
	// as it returned it (best first, up to Options.Depth hits).
	Lists map[string][]corpus.Hit `json:"-"`
}

// Search asks every retriever in rs for opts.Depth hits for query, all in
// parallel (at most opts.Limit at once), and fuses their lists as Fuse
// does with the weights of rs. The result does not depend on the order of
// rs nor on scheduling.
//
// Each retriever runs with its own deadline (Named.Timeout, else
// opts.Timeout). Search stops waiting for a retriever when its deadline
// passes even if the retriever ignores its context, and it turns a panic
// in a retriever into a Failure. What a failure does is set by
// opts.AllowPartial: by default the first failure cancels the others and
// Search returns an error that wraps it (errors.As with a Failure target
// finds it); with AllowPartial the others' hits are fused
// and the failure is reported in Result.Failures and Result.Warnings,
// unless every retriever failed, or every one but Shadows (ErrAllFailed).
//
// Search fails with ErrNoRetrievers for an empty rs, ErrInvalidOptions for
// bad options or a bad Named, and ctx.Err() (wrapped) when ctx is done
// by the time the retrievers have finished.
func Search(ctx context.Context, query string, rs []Named, opts Options) (*Result, error) {
	if len(rs) == 0 {
		return nil, fmt.Errorf("fuse: search: %w", ErrNoRetrievers)
	}
	o, err := opts.resolve()
	if err != nil {
		return nil, fmt.Errorf("fuse: search: %w", err)
	}
	for i, r := range rs {
		if err := checkNamed(r, rs[:i]); err != nil {
			return nil, fmt.Errorf("fuse: search: %w", err)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("fuse: search: %w", err)
	}

	type outcome struct {
		hits    []corpus.Hit
		fail    *Failure
		latency time.Duration
		ran     bool
	}
	out := make([]outcome, len(rs)) // out[i] is written only by goroutine i
	g, gctx := errgroup.WithContext(ctx)
	if o.Limit > 0 {
		g.SetLimit(o.Limit)
	}
	for i, r := range rs {
		g.Go(func() error {
			timeout := r.Timeout
			if timeout == 0 {
				timeout = o.Timeout
			}
			start := time.Now()
			hits, missed, err := call(gctx, r.Retriever, query, o.Depth, timeout)
			out[i].latency, out[i].ran = time.Since(start), true
			switch {
			case err == nil:
				out[i].hits = hits
				return nil
			case ctx.Err() != nil:
				return nil // the caller gave up; Search reports ctx.Err()
			case !o.AllowPartial && gctx.Err() != nil && !missed:
				return nil // cancelled because another retriever failed first
			}
			f := Failure{Retriever: r.Name, Err: err}
			if missed {
				f.Timeout = timeout
			}
			out[i].fail = &f
			if !o.AllowPartial {
				return f
			}
			return nil
		})
	}
	werr := g.Wait() // gctx is done from here on; don't use it
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("fuse: search: %w", err)
	}
	if werr != nil {
		return nil, fmt.Errorf("fuse: search: %w", werr)
	}

	res := &Result{Latency: make(map[string]time.Duration, len(rs)), Lists: make(map[string][]corpus.Hit, len(rs))}
	lists := make([]list, 0, len(rs))
	weighted := 0 // retrievers that succeeded and can add hits
	for i, r := range rs {
		if out[i].ran {
			res.Latency[r.Name] = out[i].latency
		}
		if f := out[i].fail; f != nil {
			res.Failures = append(res.Failures, *f)
			res.Warnings = append(res.Warnings, f.Error())
			continue
		}
		res.Lists[r.Name] = out[i].hits
		w := r.Weight
		switch {
		case r.Shadow:
			w = 0
		case w == 0:
			w = DefaultWeight
		}
		if w > 0 {
			weighted++
		}
		lists = append(lists, list{name: r.Name, hits: out[i].hits, weight: w})
	}
	if len(res.Failures) > 0 && weighted == 0 {
		return nil, allFailed(res.Failures)
	}
	slices.SortFunc(lists, func(a, b list) int { return strings.Compare(a.name, b.name) })
	res.Hits = fuse(lists, o)
	return res, nil
}

// checkNamed validates r against the retrievers before it.
func checkNamed(r Named, before []Named) error {
	switch {
	case r.Name == "":
		return fmt.Errorf("%w: retriever without a name", ErrInvalidOptions)
	case r.Retriever == nil:
		return fmt.Errorf("%w: retriever %q is nil", ErrInvalidOptions, r.Name)
	case r.Timeout < 0:
		return fmt.Errorf("%w: negative timeout %v of retriever %q", ErrInvalidOptions, r.Timeout, r.Name)
	}
	if err := checkWeight(r.Name, r.Weight); err != nil {
		return err
	}
	if slices.ContainsFunc(before, func(b Named) bool { return b.Name == r.Name }) {
		return fmt.Errorf("%w: two retrievers named %q", ErrInvalidOptions, r.Name)
	}
	return nil
}

// allFailed is the error of a Search whose retrievers all failed: it wraps
// ErrAllFailed and every Failure.
func allFailed(fs []Failure) error {
	format := "fuse: search: %w: " + strings.TrimSuffix(strings.Repeat("%w; ", len(fs)), "; ")
	args := make([]any, 0, len(fs)+1)
	args = append(args, ErrAllFailed)
	for _, f := range fs {
		args = append(args, f)
	}
	return fmt.Errorf(format, args...)
}

// call runs r.Retrieve with its own deadline (none when timeout is 0) in a
// goroutine of its own, so that a retriever ignoring ctx cannot hold up
// Search: when the deadline passes, call returns and leaves the
// retriever's late result to be dropped. A panic becomes an error wrapping
// ErrPanic. missed reports that the error is due to timeout.
func call(ctx context.Context, r retrieve.Retriever, query string, k int, timeout time.Duration) ([]corpus.Hit, bool, error) {
	rctx := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		rctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	type result struct {
		hits []corpus.Hit
		err  error
	}
	var res result
	if res.err = rctx.Err(); res.err == nil {
		done := make(chan result, 1) // buffered: an abandoned call never blocks
		go func() {
			var res result
			defer func() {
				if p := recover(); p != nil {
					res = result{err: fmt.Errorf("%w: %v", ErrPanic, p)}
				}
				done <- res
			}()
			res.hits, res.err = r.Retrieve(rctx, query, k)
		}()
		select {
		case res = <-done:
		case <-rctx.Done():
			select {
			case res = <-done: // it finished just in time
			default:
				res.err = rctx.Err()
			}
		}
	}
	if res.err != nil {
		missed := timeout > 0 && ctx.Err() == nil && errors.Is(rctx.Err(), context.DeadlineExceeded)
		return nil, missed, res.err
	}
	return res.hits, false, nil
}
