package sparse

import (
	"sync"
)

// minCachedDF is the shortest postings list the postings cache keeps:
// shorter ones cost little to read from the index.
const minCachedDF = 256

// maxExactFloat32 bounds the integers (term frequencies, field lengths)
// a float32 holds exactly.
const maxExactFloat32 = 1 << 24

// postingsBytes is the memory of one cached posting: document number,
// term frequency and field length.
const postingsBytes = 12

// postingsCache keeps decoded postings lists of one index snapshot (the
// Retriever's, which never changes) by field and term, up to a budget of
// bytes; lists are kept as queries first read them, none is evicted. Safe
// for concurrent use; a nil cache keeps nothing.
type postingsCache struct {
	mu   sync.RWMutex
	m    map[postingsKey]*cachedPostings
	left int64 // bytes of budget left
}

type postingsKey struct {
	field int // index into the Retriever's scorers
	term  string
}

// cachedPostings is one term's postings in one field over every segment,
// in the order the index yields them (segment by segment), with the
// term's document frequency.
type cachedPostings struct {
	df     uint64
	num    []uint32  // document numbers across segments (segment offset added)
	tf, dl []float32 // term frequency, field length: integers, exact
}

func newPostingsCache(budget int64) *postingsCache {
	return &postingsCache{m: map[postingsKey]*cachedPostings{}, left: budget}
}

func (c *postingsCache) get(field int, term []byte) *cachedPostings {
	if c == nil {
		return nil
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.m[postingsKey{field, string(term)}]
}

// wants reports whether a list of df postings would be kept.
func (c *postingsCache) wants(df uint64) bool {
	if c == nil || df < minCachedDF {
		return false
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	return int64(df)*postingsBytes <= c.left
}

// put keeps p when the budget allows and no other query kept it first.
func (c *postingsCache) put(field int, term []byte, p *cachedPostings) {
	size := int64(len(p.num)) * postingsBytes
	c.mu.Lock()
	defer c.mu.Unlock()
	k := postingsKey{field, string(term)}
	if _, ok := c.m[k]; ok || size > c.left {
		return
	}
	c.m[k] = p
	c.left -= size
}

// size returns the number of lists kept and their bytes.
func (c *postingsCache) size() (lists int, bytes int64) {
	if c == nil {
		return 0, 0
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, p := range c.m {
		bytes += int64(len(p.num)) * postingsBytes
	}
	return len(c.m), bytes
}
