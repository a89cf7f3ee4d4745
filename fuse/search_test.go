package fuse_test

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/fuse"
	"github.com/citefind/citefind/retrieve"
)

var errDown = errors.New("ollama down")

// returns is a retriever that answers ids at once.
func returns(ids ...string) retrieve.Retriever {
	return retrieve.RetrieverFunc(func(ctx context.Context, _ string, k int) ([]corpus.Hit, error) {
		return ranked(ids...), nil
	})
}

// failing is a retriever that fails with err.
func failing(err error) retrieve.Retriever {
	return retrieve.RetrieverFunc(func(context.Context, string, int) ([]corpus.Hit, error) { return nil, err })
}

// slow answers ids after d, or fails when ctx is done first.
func slow(d time.Duration, ids ...string) retrieve.Retriever {
	return retrieve.RetrieverFunc(func(ctx context.Context, _ string, _ int) ([]corpus.Hit, error) {
		select {
		case <-time.After(d):
			return ranked(ids...), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
}

// stuck ignores its context and blocks until the test ends.
func stuck(t *testing.T) retrieve.Retriever {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	return retrieve.RetrieverFunc(func(context.Context, string, int) ([]corpus.Hit, error) {
		<-release
		return ranked("late"), nil
	})
}

// panicking panics.
func panicking() retrieve.Retriever {
	return retrieve.RetrieverFunc(func(context.Context, string, int) ([]corpus.Hit, error) {
		var m map[string]int
		m["boom"]++ // assignment to entry in nil map
		return nil, nil
	})
}

func TestSearch(t *testing.T) {
	bm25 := fuse.Named{Name: "bm25", Retriever: returns("a", "b", "c")}
	tests := []struct {
		name     string
		rs       func(t *testing.T) []fuse.Named
		opts     fuse.Options
		wantIDs  []string
		wantFail map[string]string // retriever → warning
		wantErr  []error           // all must match with errors.Is
	}{
		{
			// b: 1/61 + 1/62; a: 1/61; d: 1/62; c: 1/63.
			name: "fuses all retrievers",
			rs: func(*testing.T) []fuse.Named {
				return []fuse.Named{bm25, {Name: "dense", Retriever: returns("b", "d")}}
			},
			wantIDs: []string{"b", "a", "d", "c"},
		},
		{
			// dense 0.3: a 1/61 = .016393; b 1/62 + .3/61 = .021047; d .3/62 = .004839; c 1/63 = .015873.
			name: "weights",
			rs: func(*testing.T) []fuse.Named {
				return []fuse.Named{bm25, {Name: "dense", Retriever: returns("b", "d"), Weight: 0.3}}
			},
			wantIDs: []string{"b", "a", "c", "d"},
		},
		{
			name: "shadow cannot change the order",
			rs: func(*testing.T) []fuse.Named {
				return []fuse.Named{bm25, {Name: "dense", Retriever: returns("c", "z"), Shadow: true}}
			},
			wantIDs: []string{"a", "b", "c"},
		},
		{
			name: "error with AllowPartial",
			rs: func(*testing.T) []fuse.Named {
				return []fuse.Named{bm25, {Name: "dense", Retriever: failing(errDown)}}
			},
			opts:     fuse.Options{AllowPartial: true},
			wantIDs:  []string{"a", "b", "c"},
			wantFail: map[string]string{"dense": "retriever dense: ollama down"},
		},
		{
			name: "slow retriever past its timeout with AllowPartial",
			rs: func(*testing.T) []fuse.Named {
				return []fuse.Named{bm25, {Name: "dense", Retriever: slow(time.Minute, "x"), Timeout: 20 * time.Millisecond}}
			},
			opts:     fuse.Options{AllowPartial: true},
			wantIDs:  []string{"a", "b", "c"},
			wantFail: map[string]string{"dense": "retriever dense: missed its deadline of 20ms"},
		},
		{
			name: "retriever ignoring its context past Options.Timeout",
			rs: func(t *testing.T) []fuse.Named {
				return []fuse.Named{bm25, {Name: "dense", Retriever: stuck(t)}}
			},
			opts:     fuse.Options{AllowPartial: true, Timeout: 20 * time.Millisecond},
			wantIDs:  []string{"a", "b", "c"},
			wantFail: map[string]string{"dense": "retriever dense: missed its deadline of 20ms"},
		},
		{
			name: "Named.Timeout overrides Options.Timeout",
			rs: func(*testing.T) []fuse.Named {
				return []fuse.Named{bm25, {Name: "dense", Retriever: slow(30*time.Millisecond, "b", "d"), Timeout: time.Minute}}
			},
			opts:    fuse.Options{Timeout: 5 * time.Millisecond},
			wantErr: nil,
			wantIDs: []string{"b", "a", "d", "c"},
		},
		{
			name: "panic with AllowPartial",
			rs: func(*testing.T) []fuse.Named {
				return []fuse.Named{bm25, {Name: "dense", Retriever: panicking()}}
			},
			opts:     fuse.Options{AllowPartial: true},
			wantIDs:  []string{"a", "b", "c"},
			wantFail: map[string]string{"dense": "retriever dense: retriever panicked: assignment to entry in nil map"},
		},
		{
			name: "two of three fail with AllowPartial",
			rs: func(*testing.T) []fuse.Named {
				return []fuse.Named{
					{Name: "dense", Retriever: failing(errDown)}, bm25,
					{Name: "llm", Retriever: panicking()},
				}
			},
			opts:    fuse.Options{AllowPartial: true},
			wantIDs: []string{"a", "b", "c"},
			wantFail: map[string]string{
				"dense": "retriever dense: ollama down",
				"llm":   "retriever llm: retriever panicked: assignment to entry in nil map",
			},
		},
		{
			name: "strict error",
			rs: func(*testing.T) []fuse.Named {
				return []fuse.Named{bm25, {Name: "dense", Retriever: failing(errDown)}}
			},
			wantErr: []error{errDown},
		},
		{
			name: "strict deadline",
			rs: func(*testing.T) []fuse.Named {
				return []fuse.Named{bm25, {Name: "dense", Retriever: slow(time.Minute), Timeout: 10 * time.Millisecond}}
			},
			wantErr: []error{context.DeadlineExceeded},
		},
		{
			name: "strict panic",
			rs: func(*testing.T) []fuse.Named {
				return []fuse.Named{bm25, {Name: "dense", Retriever: panicking()}}
			},
			wantErr: []error{fuse.ErrPanic},
		},
		{
			name: "all fail with AllowPartial",
			rs: func(t *testing.T) []fuse.Named {
				return []fuse.Named{
					{Name: "bm25", Retriever: failing(errDown)},
					{Name: "dense", Retriever: stuck(t), Timeout: 10 * time.Millisecond},
				}
			},
			opts:    fuse.Options{AllowPartial: true},
			wantErr: []error{fuse.ErrAllFailed, errDown, context.DeadlineExceeded},
		},
		{
			name: "only a shadow left with AllowPartial",
			rs: func(*testing.T) []fuse.Named {
				return []fuse.Named{
					{Name: "bm25", Retriever: failing(errDown)},
					{Name: "dense", Retriever: returns("a"), Shadow: true},
				}
			},
			opts:    fuse.Options{AllowPartial: true},
			wantErr: []error{fuse.ErrAllFailed, errDown},
		},
		{
			name:    "no retrievers",
			rs:      func(*testing.T) []fuse.Named { return nil },
			wantErr: []error{fuse.ErrNoRetrievers},
		},
		{
			name: "duplicate names",
			rs: func(*testing.T) []fuse.Named {
				return []fuse.Named{bm25, bm25}
			},
			wantErr: []error{fuse.ErrInvalidOptions},
		},
		{
			name:    "empty name",
			rs:      func(*testing.T) []fuse.Named { return []fuse.Named{{Retriever: returns("a")}} },
			wantErr: []error{fuse.ErrInvalidOptions},
		},
		{
			name:    "nil retriever",
			rs:      func(*testing.T) []fuse.Named { return []fuse.Named{{Name: "bm25"}} },
			wantErr: []error{fuse.ErrInvalidOptions},
		},
		{
			name: "negative weight",
			rs: func(*testing.T) []fuse.Named {
				return []fuse.Named{{Name: "bm25", Retriever: returns("a"), Weight: -1}}
			},
			wantErr: []error{fuse.ErrInvalidOptions},
		},
		{
			name: "negative timeout",
			rs: func(*testing.T) []fuse.Named {
				return []fuse.Named{{Name: "bm25", Retriever: returns("a"), Timeout: -time.Second}}
			},
			wantErr: []error{fuse.ErrInvalidOptions},
		},
		{
			name:    "bad options",
			rs:      func(*testing.T) []fuse.Named { return []fuse.Named{bm25} },
			opts:    fuse.Options{Method: "borda"},
			wantErr: []error{fuse.ErrInvalidOptions},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rs := tc.rs(t)
			start := time.Now()
			res, err := fuse.Search(t.Context(), "dense retrieval", rs, tc.opts)
			assert.Less(t, time.Since(start), 5*time.Second, "Search must not wait for a stuck retriever")
			if tc.wantErr != nil {
				require.Error(t, err)
				for _, want := range tc.wantErr {
					require.ErrorIs(t, err, want)
				}
				assert.Nil(t, res)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.wantIDs, ids(res.Hits))

			gotFail := map[string]string{}
			for i, f := range res.Failures {
				gotFail[f.Retriever] = f.Error()
				assert.Equal(t, f.Error(), res.Warnings[i])
				require.Error(t, f.Err)
			}
			if tc.wantFail == nil {
				tc.wantFail = map[string]string{}
			}
			assert.Equal(t, tc.wantFail, gotFail)
			assert.Len(t, res.Warnings, len(res.Failures))
			for _, r := range rs {
				assert.Contains(t, res.Latency, r.Name)
			}
		})
	}
}

// A strict failure names its retriever and can be inspected.
func TestSearchStrictFailure(t *testing.T) {
	_, err := fuse.Search(t.Context(), "q", []fuse.Named{
		{Name: "bm25", Retriever: returns("a")},
		{Name: "dense", Retriever: slow(time.Minute), Timeout: 15 * time.Millisecond},
	}, fuse.Options{})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	var f fuse.Failure
	require.ErrorAs(t, err, &f)
	assert.Equal(t, "dense", f.Retriever)
	assert.Equal(t, 15*time.Millisecond, f.Timeout)
	assert.Equal(t, "fuse: search: retriever dense: missed its deadline of 15ms", err.Error())

	_, err = fuse.Search(t.Context(), "q", []fuse.Named{
		{Name: "bm25", Retriever: failing(errDown)},
		{Name: "dense", Retriever: panicking()},
	}, fuse.Options{AllowPartial: true})
	require.ErrorIs(t, err, fuse.ErrAllFailed)
	assert.Equal(t, "fuse: search: all retrievers failed: retriever bm25: ollama down; "+
		"retriever dense: retriever panicked: assignment to entry in nil map", err.Error())
}

// In strict mode the first failure cancels the retrievers still running.
func TestSearchStrictCancelsOthers(t *testing.T) {
	started := make(chan struct{})
	saw := make(chan error, 1)
	waiter := retrieve.RetrieverFunc(func(ctx context.Context, _ string, _ int) ([]corpus.Hit, error) {
		close(started)
		select {
		case <-ctx.Done():
			saw <- ctx.Err()
			return nil, ctx.Err()
		case <-time.After(time.Minute):
			saw <- nil
			return nil, nil
		}
	})
	failsOnceStarted := retrieve.RetrieverFunc(func(ctx context.Context, _ string, _ int) ([]corpus.Hit, error) {
		<-started
		return nil, errDown
	})
	start := time.Now()
	_, err := fuse.Search(t.Context(), "q", []fuse.Named{
		{Name: "dense", Retriever: waiter},
		{Name: "bm25", Retriever: failsOnceStarted},
	}, fuse.Options{})
	require.ErrorIs(t, err, errDown)
	assert.NotErrorIs(t, err, context.Canceled, "the cancelled retriever is not the failure")
	select {
	case got := <-saw:
		assert.ErrorIs(t, got, context.Canceled)
	case <-time.After(10 * time.Second):
		t.Fatal("the other retriever was not cancelled")
	}
	assert.Less(t, time.Since(start), 5*time.Second)
}

// With AllowPartial a failure does not cancel the others.
func TestSearchPartialDoesNotCancel(t *testing.T) {
	res, err := fuse.Search(t.Context(), "q", []fuse.Named{
		{Name: "bm25", Retriever: failing(errDown)},
		{Name: "dense", Retriever: slow(40*time.Millisecond, "a")},
	}, fuse.Options{AllowPartial: true})
	require.NoError(t, err)
	assert.Equal(t, []string{"a"}, ids(res.Hits))
	assert.Equal(t, []string{"retriever bm25: ollama down"}, res.Warnings)
}

func TestSearchContextCanceled(t *testing.T) {
	t.Run("ContextCanceled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		called := false
		r := retrieve.RetrieverFunc(func(context.Context, string, int) ([]corpus.Hit, error) {
			called = true
			return nil, nil
		})
		_, err := fuse.Search(ctx, "q", []fuse.Named{{Name: "bm25", Retriever: r}}, fuse.Options{AllowPartial: true})
		require.ErrorIs(t, err, context.Canceled)
		assert.False(t, called)
	})
	t.Run("canceled while running", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(20*time.Millisecond, cancel)
		_, err := fuse.Search(ctx, "q", []fuse.Named{
			{Name: "bm25", Retriever: returns("a")},
			{Name: "dense", Retriever: slow(time.Minute)},
			{Name: "stuck", Retriever: stuck(t)},
		}, fuse.Options{AllowPartial: true})
		require.ErrorIs(t, err, context.Canceled)
		assert.NotErrorIs(t, err, fuse.ErrAllFailed)
	})
	t.Run("parent deadline", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
		defer cancel()
		_, err := fuse.Search(ctx, "q", []fuse.Named{
			{Name: "dense", Retriever: slow(time.Minute), Timeout: time.Minute},
		}, fuse.Options{AllowPartial: true})
		require.ErrorIs(t, err, context.DeadlineExceeded)
		var f fuse.Failure
		assert.False(t, errors.As(err, &f), "the caller's deadline is not a retriever failure")
	})
}

func TestSearchDepth(t *testing.T) {
	var gotK atomic.Int64
	r := retrieve.RetrieverFunc(func(_ context.Context, q string, k int) ([]corpus.Hit, error) {
		gotK.Store(int64(k))
		assert.Equal(t, "the query", q)
		return ranked("a", "b", "c", "d", "e"), nil // more than asked
	})
	res, err := fuse.Search(t.Context(), "the query", []fuse.Named{{Name: "bm25", Retriever: r}}, fuse.Options{Depth: 3, K: 10})
	require.NoError(t, err)
	assert.EqualValues(t, 3, gotK.Load())
	assert.Equal(t, []string{"a", "b", "c"}, ids(res.Hits))

	res, err = fuse.Search(t.Context(), "the query", []fuse.Named{{Name: "bm25", Retriever: r}}, fuse.Options{})
	require.NoError(t, err)
	assert.EqualValues(t, fuse.DefaultDepth, gotK.Load())
	assert.Len(t, res.Hits, 5)
}

func TestSearchLimit(t *testing.T) {
	var running, peak atomic.Int32
	r := retrieve.RetrieverFunc(func(ctx context.Context, _ string, _ int) ([]corpus.Hit, error) {
		n := running.Add(1)
		defer running.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(10 * time.Millisecond)
		return ranked("a"), nil
	})
	var rs []fuse.Named
	for _, name := range []string{"r1", "r2", "r3", "r4", "r5", "r6"} {
		rs = append(rs, fuse.Named{Name: name, Retriever: r})
	}
	res, err := fuse.Search(t.Context(), "q", rs, fuse.Options{Limit: 2})
	require.NoError(t, err)
	assert.LessOrEqual(t, peak.Load(), int32(2))
	require.Len(t, res.Hits, 1)
	assert.Equal(t, 6, res.Hits[0].Count)
}

// The fused order does not depend on the order of rs or on which
// retriever finishes first.
func TestSearchDeterministic(t *testing.T) {
	rng := rand.New(rand.NewSource(42))
	var mu sync.Mutex // guards rng
	jitter := func(ids ...string) retrieve.Retriever {
		return retrieve.RetrieverFunc(func(ctx context.Context, _ string, _ int) ([]corpus.Hit, error) {
			mu.Lock()
			d := time.Duration(rng.Intn(500)) * time.Microsecond
			mu.Unlock()
			time.Sleep(d)
			return ranked(ids...), nil
		})
	}
	rs := []fuse.Named{
		{Name: "bm25", Retriever: jitter("a", "b", "c", "d", "e")},
		{Name: "dense", Retriever: jitter("e", "d", "c", "b", "a")},
		{Name: "title", Retriever: jitter("c", "x", "y")},
		{Name: "abstract", Retriever: jitter("y", "x", "c")},
	}
	first, err := fuse.Search(t.Context(), "q", rs, fuse.Options{})
	require.NoError(t, err)
	for range 100 {
		mu.Lock()
		rng.Shuffle(len(rs), func(i, j int) { rs[i], rs[j] = rs[j], rs[i] })
		shuffled := append([]fuse.Named(nil), rs...)
		mu.Unlock()
		got, err := fuse.Search(t.Context(), "q", shuffled, fuse.Options{})
		require.NoError(t, err)
		require.Equal(t, first.Hits, got.Hits)
	}
}

// Concurrent Searches over shared retrievers are race-free (go test -race).
func TestSearchConcurrent(t *testing.T) {
	rs := []fuse.Named{
		{Name: "bm25", Retriever: returns("a", "b", "c")},
		{Name: "dense", Retriever: slow(time.Millisecond, "c", "d")},
		{Name: "bad", Retriever: failing(errDown)},
	}
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			res, err := fuse.Search(t.Context(), "q", rs, fuse.Options{AllowPartial: true, Method: fuse.MinMax})
			if assert.NoError(t, err) {
				assert.Len(t, res.Hits, 4)
				assert.Len(t, res.Failures, 1)
			}
		})
	}
	wg.Wait()
}

func TestResultJSON(t *testing.T) {
	res, err := fuse.Search(t.Context(), "q", []fuse.Named{
		{Name: "bm25", Retriever: returns("a")},
		{Name: "dense", Retriever: failing(errDown)},
	}, fuse.Options{AllowPartial: true, Method: fuse.MaxNorm})
	require.NoError(t, err)
	b, err := json.Marshal(res)
	require.NoError(t, err)
	assert.JSONEq(t, `{
		"hits": [{"id": "a", "score": 1, "sources": {"bm25": {"rank": 1, "score": 1}}, "count": 1}],
		"warnings": ["retriever dense: ollama down"]
	}`, string(b))
}
