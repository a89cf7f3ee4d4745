package learned

import (
	"hash/maphash"
	"sync"

	"github.com/citefind/citefind/rerank"
)

// DefaultDocCache is how many analysed candidate texts a Reranker keeps
// across queries (about 30 KB each for SciFact's abstracts: title, abstract and keyword terms,
// their sets, counts and bigrams). Analysing a candidate's texts is most
// of a rerank's work, and the candidates of one user's queries, or of a
// benchmark's, overlap.
const DefaultDocCache = 1024

// docCache keeps analysed candidate texts by paper ID, each with a
// fingerprint of the texts it was made from: a paper whose title,
// abstract, keywords or authors changed is analysed again. It holds at
// most max entries in two generations: when the current one is full it
// becomes the previous one, and the old previous one is dropped; a hit in
// the previous generation moves the entry to the current one. Safe for
// concurrent use.
type docCache struct {
	mu        sync.Mutex
	half      int
	cur, prev map[string]cachedDoc
}

type cachedDoc struct {
	sum uint64
	d   *docText
}

// newDocCache returns a cache of at most max entries (nil when max < 2).
func newDocCache(max int) *docCache {
	if max < 2 {
		return nil
	}
	return &docCache{half: max / 2, cur: map[string]cachedDoc{}, prev: map[string]cachedDoc{}}
}

// fingerprintSeed keys the fingerprints of this process.
var fingerprintSeed = maphash.MakeSeed()

// fingerprint hashes the texts analyzeDoc reads (maphash: an entry lives
// only as long as the process).
func fingerprint(c *rerank.Candidate) uint64 {
	var h maphash.Hash
	h.SetSeed(fingerprintSeed)
	put := func(s string) {
		h.WriteString(s)
		h.WriteByte(0)
	}
	put(c.Title)
	put(c.Abstract)
	for _, k := range c.Keywords {
		put(k)
	}
	h.WriteByte(1)
	for _, a := range c.Authors {
		put(a)
	}
	return h.Sum64()
}

// lookup fills docs[i] for each candidate the cache holds with the same
// fingerprint.
func (c *docCache) lookup(cands []rerank.Candidate, sums []uint64, docs []*docText) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range cands {
		id := cands[i].ID
		if e, ok := c.cur[id]; ok && e.sum == sums[i] {
			docs[i] = e.d
			continue
		}
		if e, ok := c.prev[id]; ok && e.sum == sums[i] {
			docs[i] = e.d
			c.add(id, e)
		}
	}
}

// store adds the candidates todo names.
func (c *docCache) store(cands []rerank.Candidate, sums []uint64, docs []*docText, todo []int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, i := range todo {
		c.add(cands[i].ID, cachedDoc{sums[i], docs[i]})
	}
}

func (c *docCache) add(id string, e cachedDoc) {
	if len(c.cur) >= c.half {
		c.prev, c.cur = c.cur, make(map[string]cachedDoc, c.half)
	}
	c.cur[id] = e
	delete(c.prev, id)
}

// len returns the number of entries held.
func (c *docCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.cur) + len(c.prev)
}

// maxPrepared bounds the analysed queries a Reranker keeps (Prepare, then
// Rerank of the same query).
const maxPrepared = 64

// queryMemo keeps analysed queries by their text: Prepare analyses a
// query while the engine retrieves its candidates, Rerank takes the
// result (waiting for it when Prepare is still running). When full, it
// starts over. Safe for concurrent use.
type queryMemo struct {
	mu  sync.Mutex
	max int
	m   map[string]*preparedQuery
}

type preparedQuery struct {
	once sync.Once
	q    *queryText
}

func newQueryMemo(max int) *queryMemo {
	return &queryMemo{max: max, m: map[string]*preparedQuery{}}
}

// get returns the analysed query, analysing it once.
func (m *queryMemo) get(query string) *queryText {
	m.mu.Lock()
	p, ok := m.m[query]
	if !ok {
		if len(m.m) >= m.max {
			clear(m.m)
		}
		p = &preparedQuery{}
		m.m[query] = p
	}
	m.mu.Unlock()
	p.once.Do(func() { p.q = analyzeQuery(query) })
	return p.q
}

func (m *queryMemo) len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.m)
}
