// Package topk keeps the k best items of a stream in a bounded min-heap
// whose root is the worst item kept, the structure every retriever uses to
// cut its ranked list.
//
//	h := topk.New[cand](k)
//	for _, c := range cands {
//		h.Push(c) // kept only while it is among the k best so far
//	}
//	best := h.Sorted() // best first
package topk

import "slices"

// Ranked is an item that knows when it ranks below another one. Worse
// must be a strict order, with ties broken (e.g. by ID), so that the kept
// set and its order are deterministic.
type Ranked[T any] interface {
	Worse(than T) bool
}

// Heap keeps at most k items: the best ones pushed so far.
type Heap[T Ranked[T]] struct {
	k     int
	items []T
}

// New returns an empty heap that keeps the k best items (k ≥ 0).
func New[T Ranked[T]](k int) *Heap[T] {
	return &Heap[T]{k: k, items: make([]T, 0, max(k, 0))}
}

// Reset empties the heap for k items, keeping its storage.
func (h *Heap[T]) Reset(k int) {
	h.k = k
	h.items = h.items[:0]
}

// Len is the number of items kept.
func (h *Heap[T]) Len() int { return len(h.items) }

// Full reports whether the heap holds k items.
func (h *Heap[T]) Full() bool { return len(h.items) >= h.k }

// Min returns the worst item kept; the heap must not be empty.
func (h *Heap[T]) Min() T { return h.items[0] }

// Push offers c: it is kept when the heap is not full or c is better than
// the worst item kept (which then goes). It reports whether c was kept.
func (h *Heap[T]) Push(c T) bool {
	if len(h.items) < h.k {
		h.items = append(h.items, c)
		h.up(len(h.items) - 1)
		return true
	}
	if h.k == 0 || !h.items[0].Worse(c) {
		return false
	}
	h.items[0] = c
	h.down(0)
	return true
}

// Items returns the kept items in heap order (not sorted); the slice is
// the heap's own and valid until the next Push or Reset.
func (h *Heap[T]) Items() []T { return h.items }

// Sorted returns the kept items best first, in a new slice; the heap is
// unchanged.
func (h *Heap[T]) Sorted() []T {
	out := slices.Clone(h.items)
	slices.SortFunc(out, func(a, b T) int {
		switch {
		case b.Worse(a):
			return -1
		case a.Worse(b):
			return 1
		}
		return 0
	})
	return out
}

func (h *Heap[T]) up(i int) {
	s := h.items
	for i > 0 {
		p := (i - 1) / 2
		if !s[i].Worse(s[p]) {
			return
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *Heap[T]) down(i int) {
	s := h.items
	n := len(s)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && s[r].Worse(s[l]) {
			m = r
		}
		if !s[m].Worse(s[i]) {
			return
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
}
