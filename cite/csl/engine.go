package csl

import (
	"bytes"
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// DefaultCacheEntries is how many rendered citations and bibliography
// entries Engine keeps when Options.CacheEntries is 0.
const DefaultCacheEntries = 20000

// Options configure an Engine. The zero value resolves styles with
// DefaultResolver(nil), keeps one warm processor per style and caches
// DefaultCacheEntries rendered fragments.
type Options struct {
	// Resolver finds styles and locales; nil means DefaultResolver(nil).
	Resolver *Resolver
	// Processors is how many citeproc-js engines each style may have at
	// once (concurrent renders of one style beyond it wait); 0 means 1.
	// With 2 or more, a style's first render of a document with 8 or more
	// entries builds a second engine on another core and shares the
	// bibliography with it (citefind cite; docs/cite.md).
	Processors int
	// CacheEntries bounds the rendered-fragment cache; 0 means
	// DefaultCacheEntries, < 0 turns the cache off.
	CacheEntries int
}

// Engine renders citations and bibliographies with citeproc-js. It is safe
// for concurrent use. Nothing is loaded until the first Render: citeproc-js
// is compiled then, and each style's processor is built on its first use
// and kept warm. Rendered citations and entries are cached per style and
// item content together with what makes them depend on the other items of
// a document (citation number, disambiguation, the previous entry's
// authors for styles that substitute repeated authors), so a warm engine
// runs citeproc-js only for what is new.
type Engine struct {
	opts  Options
	prog  Program
	mu    sync.Mutex
	pools map[string]*pool
	cache *lru
	// styles caches resolved styles by reference (and file stamp).
	styles map[string]cachedStyle
	// helped counts the renders that used a helper's entries.
	helped atomic.Int64
}

type cachedStyle struct {
	st    *Style
	stamp string
}

// New returns an Engine; it loads nothing yet.
func New(opts Options) *Engine {
	if opts.Resolver == nil {
		opts.Resolver = DefaultResolver(nil)
	}
	if opts.Processors <= 0 {
		opts.Processors = 1
	}
	if opts.CacheEntries == 0 {
		opts.CacheEntries = DefaultCacheEntries
	}
	return &Engine{opts: opts, pools: map[string]*pool{}, cache: newLRU(opts.CacheEntries), styles: map[string]cachedStyle{}}
}

// Resolver returns the engine's style resolver.
func (e *Engine) Resolver() *Resolver { return e.opts.Resolver }

// Style resolves a style name or .csl path (see Resolver.Style); results
// are cached until the file changes.
func (e *Engine) Style(ref string) (*Style, error) {
	stamp := ""
	if isPath(ref) {
		if fi, err := os.Stat(ref); err == nil {
			stamp = fi.ModTime().String() + "/" + strconv.FormatInt(fi.Size(), 10)
		}
	}
	e.mu.Lock()
	c, ok := e.styles[ref]
	e.mu.Unlock()
	if ok && c.stamp == stamp {
		return c.st, nil
	}
	st, err := e.opts.Resolver.Style(ref)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	e.styles[ref] = cachedStyle{st, stamp}
	e.mu.Unlock()
	return st, nil
}

// Document is what Render renders: the items, the citations in document
// order, and whether a bibliography is wanted.
type Document struct {
	// Items are every item the citations name, and any uncited item the
	// bibliography should list, in the order they are registered with
	// citeproc-js: numeric styles number them in this order (unless the
	// style sorts its bibliography otherwise), so give them in order of
	// first citation. Each Item.JSON is a CSL-JSON object whose "id" is
	// Item.ID.
	Items []Item
	// Citations in document order. For a note style each citation is a
	// footnote of its own unless NoteIndex says otherwise.
	Citations []Citation
	// NoBibliography skips the bibliography.
	NoBibliography bool
}

// Entry is one bibliography entry.
type Entry struct {
	ID   string // the item's ID
	Text Fragment
}

// Rendered is a rendered document.
type Rendered struct {
	Citations []Fragment // one per Document.Citations, same order
	Entries   []Entry    // in the style's bibliography order
	// Params are the style's bibliography parameters (spacing, hanging
	// indent, second-field alignment) as citeproc-js gave them when it
	// first rendered entries of the style (MaxOffset is that render's);
	// EntryIDs lists Entries' IDs, and Raw is not set.
	Params BibParams
	// HasBibliography is false for a style without a bibliography.
	HasBibliography bool
}

// pool holds the warm processors of one style.
type pool struct {
	st    *Style
	free  chan *Processor
	slots chan struct{} // one token per processor that may exist
}

func (e *Engine) pool(st *Style) *pool {
	e.mu.Lock()
	defer e.mu.Unlock()
	p, ok := e.pools[st.key]
	if !ok {
		p = &pool{st: st, free: make(chan *Processor, e.opts.Processors), slots: make(chan struct{}, e.opts.Processors)}
		for range e.opts.Processors {
			p.slots <- struct{}{}
		}
		e.pools[st.key] = p
	}
	return p
}

// get takes a warm processor, builds one when a slot is free, or waits.
func (e *Engine) get(ctx context.Context, p *pool) (*Processor, error) {
	select {
	case pr := <-p.free:
		return pr, nil
	default:
	}
	select {
	case pr := <-p.free:
		return pr, nil
	case <-p.slots:
		// The engine outlives the request that asked for it: it is built
		// without the request's deadline, and a requester that gives up
		// leaves it warm for the next one.
		type built struct {
			pr  *Processor
			err error
		}
		done := make(chan built, 1)
		go func() {
			pr, err := NewProcessor(context.WithoutCancel(ctx), &e.prog, p.st, e.opts.Resolver.Locale, "")
			done <- built{pr, err}
		}()
		select {
		case b := <-done:
			if b.err != nil {
				p.slots <- struct{}{}
				return nil, b.err
			}
			return b.pr, nil
		case <-ctx.Done():
			go func() {
				if b := <-done; b.err != nil {
					p.slots <- struct{}{}
				} else {
					e.put(p, b.pr)
				}
			}()
			return nil, ctx.Err()
		}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// splitMinEntries is the fewest bibliography entries to render that a
// cold render shares with a helper processor.
const splitMinEntries = 8

// helperMaxStyle is the largest style file a helper is started for. A
// large style's engine takes long to build (APA's 70 KB: 0.7 s, against
// 0.05–0.1 s for Chicago's 23 KB and most styles), and the helper builds
// one too, at the same time, which slows both: a cold APA cite of 20
// citations took 1.57 s with a helper and 1.46 s without (docs/cite.md).
const helperMaxStyle = 40 << 10

// A helper is a second processor of a style that renders part of a cold
// document's bibliography, in parallel with the processor that renders
// the citations and the rest: a new process's first render (citefind
// cite) builds two engines and registers the items on two cores at once
// instead of rendering every entry on one. It registers the same items in
// the same order, so that its entries are those the first processor would
// render; its processor then stays in the pool.
type helper struct {
	once    sync.Once
	section chan helperWork // one send: the entries to render, or none
	res     chan helperResult
}

// helperWork is a helper's share of a bibliography: the citeproc-js
// bibliography section to render (nil: nothing to do) and the family
// keys of its items' names (itemNames), whose part of the name register
// is compared (wait).
type helperWork struct {
	section  json.RawMessage
	families []string
}

type helperResult struct {
	state   regState
	names   string // its name register before rendering (nameRegState)
	params  BibParams
	entries []string
	ok      bool
	err     error
}

// helper starts a helper for doc when it is worth one: the style's pool is
// cold (no warm processor, so nothing is cached yet either), it may hold
// two processors, there are two CPUs, the style is not large and doc has
// enough entries. It returns nil otherwise.
func (e *Engine) helper(ctx context.Context, p *pool, doc Document) *helper {
	if doc.NoBibliography || len(doc.Items) < splitMinEntries || len(p.st.XML) > helperMaxStyle || e.opts.Processors < 2 ||
		runtime.GOMAXPROCS(0) < 2 || len(p.free) > 0 || len(p.slots) < 2 {
		return nil
	}
	select {
	case <-p.slots:
	default:
		return nil
	}
	h := &helper{section: make(chan helperWork, 1), res: make(chan helperResult, 1)}
	go func() {
		pr, err := NewProcessor(context.WithoutCancel(ctx), &e.prog, p.st, e.opts.Resolver.Locale, "")
		if err != nil {
			p.slots <- struct{}{}
			h.res <- helperResult{err: err}
			return
		}
		defer e.put(p, pr)
		state, _, err := register(ctx, pr, doc.Items, false)
		if err != nil {
			h.res <- helperResult{err: err}
			return
		}
		var work helperWork
		select {
		case work = <-h.section:
		case <-ctx.Done():
			h.res <- helperResult{err: ctx.Err()}
			return
		}
		if work.section == nil {
			h.res <- helperResult{err: errors.New("no work")}
			return
		}
		names, err := pr.nameRegState(ctx, work.families)
		if err != nil {
			h.res <- helperResult{err: err}
			return
		}
		ps, entries, ok, err := pr.MakeBibliography(ctx, work.section)
		h.res <- helperResult{state: state, names: names, params: ps, entries: entries, ok: ok, err: err}
	}()
	return h
}

// finish gives the helper its work (nil: none); only the first call
// counts. A nil helper does nothing.
func (h *helper) finish(work helperWork) {
	if h == nil {
		return
	}
	h.once.Do(func() { h.section <- work })
}

// wait returns the helper's entries; an error when it failed, or its
// registry differs from want's, or its name register differed from
// names, the register the first processor rendered the helper's share
// with would have had (nameRegState; nil: not compared).
func (h *helper) wait(ctx context.Context, want regState, names func() (string, error)) helperResult {
	select {
	case r := <-h.res:
		if r.err == nil && !sameState(r.state, want) {
			r.err = errors.New("the helper's registry differs")
		}
		if r.err == nil && names != nil {
			if n, err := names(); err != nil || n != r.names {
				r.err = errors.New("the helper's name register differs")
			}
		}
		return r
	case <-ctx.Done():
		return helperResult{err: ctx.Err()}
	}
}

func sameState(a, b regState) bool {
	if !slices.Equal(a.Order, b.Order) || len(a.Items) != len(b.Items) {
		return false
	}
	for id, s := range a.Items {
		t, ok := b.Items[id]
		if !ok || s.Seq != t.Seq || !bytes.Equal(s.Disambig, t.Disambig) {
			return false
		}
	}
	return true
}

// put returns a processor; a broken one is dropped and its slot freed.
func (e *Engine) put(p *pool, pr *Processor) {
	if pr.Broken() {
		p.slots <- struct{}{}
		return
	}
	p.free <- pr
}

// Warm builds the style's processor now (serve does it for the default
// style in the background), so that the first Render does not wait.
func (e *Engine) Warm(ctx context.Context, st *Style) error {
	p := e.pool(st)
	pr, err := e.get(ctx, p)
	if err != nil {
		return err
	}
	e.put(p, pr)
	return nil
}

// Positional reports whether a style's citations depend on their position
// in the document (ibid, subsequent, near-note, back-references): Render
// renders those with the document's whole sequence
// (rebuildProcessorState), uncached, the others one cluster at a time
// (makeCitationCluster).
func (st *Style) Positional() bool {
	return st.Class == "note" || bytes.Contains(st.XML, []byte(`position=`)) ||
		bytes.Contains(st.XML, []byte(`first-reference-note-number`))
}

// addsGivenNames reports whether a style may disambiguate names by their
// given names (disambiguate-add-givenname), which reads citeproc-js's
// register of the names it has rendered.
func addsGivenNames(st *Style) bool {
	return bytes.Contains(st.XML, []byte(`disambiguate-add-givenname`))
}

// substitutes reports whether a style replaces repeated authors in its
// bibliography (subsequent-author-substitute): an entry then depends on
// the one before it.
func substitutes(st *Style) bool {
	return bytes.Contains(st.XML, []byte(`subsequent-author-substitute`))
}

// itemState is what citeproc-js's registry holds about an item after
// updateItems: its citation number and disambiguation.
type itemState struct {
	Seq      int             `json:"seq"`
	Disambig json.RawMessage `json:"disambig"`
}

type regState struct {
	Order []string             `json:"order"`
	Items map[string]itemState `json:"items"`
}

func hashStrings(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// validate checks that each item is a JSON object with a matching "id".
func validate(items []Item) error {
	seen := map[string]bool{}
	for _, it := range items {
		if it.ID == "" {
			return &ItemError{ID: it.ID, Msg: "empty ID"}
		}
		if seen[it.ID] {
			return &ItemError{ID: it.ID, Msg: "given twice"}
		}
		seen[it.ID] = true
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(it.JSON, &obj); err != nil {
			return &ItemError{ID: it.ID, Msg: "not a CSL-JSON object: " + err.Error()}
		}
		var id any
		if raw, ok := obj["id"]; ok {
			_ = json.Unmarshal(raw, &id)
		}
		if fmt.Sprint(id) != it.ID {
			return &ItemError{ID: it.ID, Msg: fmt.Sprintf(`its "id" is %v, not %q`, id, it.ID)}
		}
	}
	return nil
}

// Render renders doc's citations and bibliography in style st. Errors: *ItemError for an item the
// engine rejects (named), *EngineError for other citeproc-js failures and
// interrupts (ctx), ErrMissingLocale, ErrBadStyle, ErrNotFetched.
func (e *Engine) Render(ctx context.Context, st *Style, doc Document) (*Rendered, error) {
	if err := validate(doc.Items); err != nil {
		return nil, err
	}
	byID := map[string]Item{}
	for _, it := range doc.Items {
		byID[it.ID] = it
	}
	for _, c := range doc.Citations {
		for _, ci := range c.Items {
			if _, ok := byID[ci.ID]; !ok {
				return nil, &ItemError{ID: ci.ID, Msg: "cited but not among the document's items"}
			}
		}
	}
	order := doc.Items
	p := e.pool(st)
	h := e.helper(ctx, p, doc)
	pr, err := e.get(ctx, p)
	if err != nil {
		h.finish(helperWork{})
		return nil, err
	}
	out, err := e.render(ctx, pr, st, doc, order, h)
	e.put(p, pr)
	if err != nil {
		var ee *EngineError
		if errors.As(err, &ee) && ee.Err == nil && len(order) > 0 {
			if ie := e.isolate(ctx, st, order); ie != nil {
				return nil, ie
			}
		}
		return nil, err
	}
	return out, nil
}

// register loads order into pr and registers it with citeproc-js
// (updateItems), reusing the last registration when nothing changed; it
// returns the registry's order and each item's disambiguation state, and
// whether the registration is fresh: pr had rendered nothing before, or
// its registry was emptied first (always with reset). Only on a fresh
// registration does citeproc-js's name register hold no name but those
// of the items' citations (see render).
func register(ctx context.Context, pr *Processor, order []Item, reset bool) (regState, bool, error) {
	ids := itemIDs(order)
	var state regState
	orderKey := strings.Join(ids, "\x00")
	fresh := !pr.rendered
	err := pr.call(ctx, "load items", ids, func() error {
		changed, err := pr.load(order)
		if err != nil {
			return err
		}
		if !changed && !reset && pr.lastState != nil && pr.lastOrder == orderKey {
			state = *pr.lastState
			return nil
		}
		pr.lastOrder, pr.lastState = "", nil
		if changed || reset && pr.rendered {
			// citeproc-js's registry keeps the items it has seen: start over.
			if _, err := pr.method("updateItems", []string{}); err != nil {
				return err
			}
			fresh = true
		}
		if _, err := pr.method("updateItems", ids); err != nil {
			return err
		}
		if state, err = pr.readState(); err != nil {
			return err
		}
		st := state
		pr.lastOrder, pr.lastState = orderKey, &st
		return nil
	})
	return state, fresh, err
}

// uncited returns the IDs of the items of order that no citation of cs
// cites, in order (rebuildProcessorState registers them as uncited, so
// that they keep their bibliography entries).
func uncited(order []Item, cs []Citation) []string {
	cited := map[string]bool{}
	for _, c := range cs {
		for _, ci := range c.Items {
			cited[ci.ID] = true
		}
	}
	var out []string
	for _, it := range order {
		if !cited[it.ID] {
			out = append(out, it.ID)
		}
	}
	return out
}

func (e *Engine) render(ctx context.Context, pr *Processor, st *Style, doc Document, order []Item, h *helper) (*Rendered, error) {
	defer h.finish(helperWork{}) // a helper that was not given work goes back to the pool
	state, fresh, err := register(ctx, pr, order, false)
	if err != nil {
		return nil, err
	}
	hash := map[string]string{}
	for _, it := range order {
		hash[it.ID] = hashStrings(string(it.JSON))
	}
	// A name can be rendered with more of its given name when another
	// item of the document has the same family name (citeproc-js's global
	// name disambiguation keeps that outside the item's own state): the
	// key of an item names the given names its families have in the
	// document.
	names := documentNames(order)
	res := &Rendered{Citations: make([]Fragment, len(doc.Citations))}

	// A style whose citations depend on their position has them rendered
	// first, with the document's whole sequence (rebuildProcessorState),
	// as an editor does before it asks for the bibliography. That
	// re-registers the items and processes every citation, which can
	// change the registry: a name disambiguated in a citation gets its
	// given name in the item's sort key too, so the item moves. The
	// bibliography below follows the registry as it is after the
	// citations (found by comparing with citeproc-js on Node.js, which
	// orders the bibliography so). On a processor that has rendered
	// before, a document whose family names come with several given
	// names is registered afresh first (see the name register below).
	pos := st.Positional()
	if pos {
		if !fresh && addsGivenNames(st) && slices.ContainsFunc(order, func(it Item) bool { return names[it.ID] != "" }) {
			if _, fresh, err = register(ctx, pr, order, true); err != nil {
				return nil, err
			}
		}
		cs := doc.Citations
		if st.Class == "note" {
			// Each citation without a note number is a footnote of its own.
			cs = append([]Citation(nil), cs...)
			for i := range cs {
				if cs[i].NoteIndex == 0 {
					cs[i].NoteIndex = i + 1
				}
			}
		}
		texts, err := pr.RebuildProcessorState(ctx, cs, "html", uncited(order, cs))
		if err != nil {
			return nil, err
		}
		for i, t := range texts {
			res.Citations[i] = Fragment(t)
		}
		if state, err = pr.registryState(ctx); err != nil {
			return nil, err
		}
	}
	itemKey := func(id string) string {
		s := state.Items[id]
		return hash[id] + "|" + strconv.Itoa(s.Seq) + "|" + string(s.Disambig) + "|" + names[id]
	}

	// Bibliography: the cached entries, and the items citeproc-js must
	// render (with, for a style that substitutes repeated authors, the
	// entry before each, which the substitution compares with).
	var slots []bibSlot
	var missing []int // indexes into state.Order of the entries not cached
	sas := substitutes(st)
	paramsKey := hashStrings("params", st.key)
	lookup := func(useCache bool) {
		slots, missing = make([]bibSlot, len(state.Order)), nil
		for i, id := range state.Order {
			prev := ""
			if sas && i > 0 {
				prev = hash[state.Order[i-1]]
			}
			slots[i].key = hashStrings("bib", st.key, itemKey(id), prev)
			if f, ok := e.cache.get(slots[i].key); ok && useCache {
				slots[i].frag, slots[i].ok = f, true
			} else {
				missing = append(missing, i)
			}
		}
	}
	if !doc.NoBibliography {
		lookup(true)
		// citeproc-js registers every name it renders, an editor's in a
		// bibliography entry too, and its given-name disambiguation reads
		// them: an entry's author can be printed with more of the given
		// name because an entry before it, in the same render or an
		// earlier one of this processor, printed an editor with the same
		// family name. So that an entry is what a new processor renders
		// in the whole bibliography, whatever was rendered or cached
		// before, an entry to render whose family name comes with other
		// given names in the document has the whole bibliography rendered
		// on a fresh registration. (A helper's share is checked the same
		// way: wait.)
		if len(missing) > 0 && (!fresh || len(missing) < len(state.Order)) && addsGivenNames(st) &&
			slices.ContainsFunc(missing, func(i int) bool { return names[state.Order[i]] != "" }) {
			if !fresh {
				if state, _, err = register(ctx, pr, order, true); err != nil {
					return nil, err
				}
			}
			lookup(false)
		}
	}

	// Citations: what the cache holds, and the keys of the rest.
	citeKeys := make([]string, len(doc.Citations))
	citeHit := make([]bool, len(doc.Citations))
	citeMisses := len(doc.Citations)
	if !pos {
		citeMisses = 0
		for i, c := range doc.Citations {
			kb, _ := json.Marshal(c.Items)
			parts := []string{"cite", st.key, string(kb)}
			for _, ci := range c.Items {
				parts = append(parts, itemKey(ci.ID))
			}
			citeKeys[i] = hashStrings(parts...)
			if f, ok := e.cache.get(citeKeys[i]); ok {
				res.Citations[i], citeHit[i] = f, true
			} else {
				citeMisses++
			}
		}
	}

	// A cold document's entries are split with a helper processor, which
	// renders its share while this one renders the citations and the rest.
	var mine, theirs []int
	mine = missing
	if h != nil && len(missing) >= splitMinEntries {
		// An entry costs citeproc-js about three times a citation.
		n := (len(missing) - citeMisses/3) / 2
		n = max(n, 0)
		mine, theirs = missing[:n], missing[n:]
		h.finish(helperWork{bibSection(state.Order, theirs, sas), shareFamilies(order, state.Order, theirs, sas)})
	}

	if !pos {
		for i, c := range doc.Citations {
			if citeHit[i] {
				continue
			}
			t, err := pr.MakeCitationCluster(ctx, c.Items)
			if err != nil {
				return nil, err
			}
			res.Citations[i] = Fragment(t)
			e.cache.put(citeKeys[i], Fragment(t))
		}
	}
	if doc.NoBibliography {
		return res, nil
	}

	params, hasBib := BibParams{}, true
	// The params come from a cached copy when every entry is cached.
	if f, ok := e.cache.get(paramsKey); ok && f == "none" {
		hasBib = false
	} else if ok {
		params = decodeParams(f)
	}
	var parts []bibPart
	if len(mine) > 0 || len(theirs) == 0 && (len(missing) > 0 || len(e.cache.peek(paramsKey)) == 0) {
		section := bibSection(state.Order, mine, sas)
		if len(mine) == len(state.Order) {
			section = nil // all of them
		}
		ps, entries, ok, err := pr.MakeBibliography(ctx, section)
		if err != nil {
			return nil, err
		}
		parts = append(parts, bibPart{mine, ps, entries, ok})
	}
	if len(theirs) > 0 {
		// The entries before the helper's share, rendered here, may have
		// registered names (an editor's) that change how the share's
		// names are disambiguated: then it is rendered here instead.
		var names func() (string, error) // only such a style reads the register
		if addsGivenNames(st) {
			fams := shareFamilies(order, state.Order, theirs, sas)
			names = func() (string, error) { return pr.nameRegState(ctx, fams) }
		}
		r := h.wait(ctx, state, names)
		if r.err != nil {
			// The helper failed or disagrees: render its share here.
			ps, entries, ok, err := pr.MakeBibliography(ctx, bibSection(state.Order, theirs, sas))
			if err != nil {
				return nil, err
			}
			r = helperResult{params: ps, entries: entries, ok: ok}
		} else {
			e.helped.Add(1)
		}
		parts = append(parts, bibPart{theirs, r.params, r.entries, r.ok})
	}
	for j, part := range parts {
		hasBib = part.ok
		if !part.ok {
			e.cache.put(paramsKey, "none")
			break
		}
		if j == 0 {
			params = part.params
		} else {
			params.MaxOffset = max(params.MaxOffset, part.params.MaxOffset)
		}
		got := map[string]Fragment{}
		for k, ids := range part.params.EntryIDs {
			if k < len(part.entries) && len(ids) > 0 {
				got[fmt.Sprint(ids[0])] = Fragment(part.entries[k])
			}
		}
		for _, i := range part.idx {
			f, ok := got[state.Order[i]]
			if !ok {
				f = "" // the style leaves this item out of its bibliography
			}
			slots[i].frag, slots[i].ok = f, true
			e.cache.put(slots[i].key, f)
		}
	}
	params.Raw, params.EntryIDs = nil, nil
	if hasBib && len(parts) > 0 {
		e.cache.put(paramsKey, encodeParams(params))
	}
	res.HasBibliography = hasBib
	if hasBib {
		for i, id := range state.Order {
			if slots[i].ok && slots[i].frag != "" {
				res.Entries = append(res.Entries, Entry{ID: id, Text: slots[i].frag})
				params.EntryIDs = append(params.EntryIDs, []any{id})
			}
		}
	}
	res.Params = params
	return res, nil
}

// paramsJSON is how the cache keeps a style's bibliography parameters.
type paramsJSON struct {
	BibParams
	H bool   `json:"hangingindent"`
	S string `json:"second-field-align"`
}

func encodeParams(p BibParams) Fragment {
	b, _ := json.Marshal(paramsJSON{p, p.HangingIndent, p.SecondFieldAlign})
	return Fragment(b)
}

func decodeParams(f Fragment) BibParams {
	var pj paramsJSON
	_ = json.Unmarshal([]byte(f), &pj)
	p := pj.BibParams
	p.HangingIndent, p.SecondFieldAlign = pj.H, pj.S
	return p
}

type bibSlot struct {
	key  string
	frag Fragment
	ok   bool
}

// bibPart is one makeBibliography call: the entries it was for (indexes
// into the registry's order) and what it returned.
type bibPart struct {
	idx     []int
	params  BibParams
	entries []string
	ok      bool
}

// bibSection is the makeBibliography filter that renders the entries at
// idx of order (and, when sas, the entry before each, which
// subsequent-author-substitute compares with); an empty idx gives only
// the bibliography's parameters.
func bibSection(order []string, idx []int, sas bool) json.RawMessage {
	specs := []map[string]string{}
	seen := map[int]bool{}
	add := func(i int) {
		if !seen[i] {
			seen[i] = true
			specs = append(specs, map[string]string{"field": "id", "value": order[i]})
		}
	}
	for _, i := range idx {
		if sas && i > 0 {
			add(i - 1)
		}
		add(i)
	}
	b, _ := json.Marshal(map[string]any{"include": specs})
	return b
}

// shareFamilies returns the family keys (itemNames) of the names of the
// entries at idx of the registry order ids (with each one's previous
// entry when sas, as bibSection renders them), sorted, each once.
func shareFamilies(items []Item, ids []string, idx []int, sas bool) []string {
	byID := make(map[string]json.RawMessage, len(items))
	for _, it := range items {
		byID[it.ID] = it.JSON
	}
	seen := map[string]bool{}
	add := func(i int) {
		for _, n := range itemNames(byID[ids[i]]) {
			seen[n.family] = true
		}
	}
	for _, i := range idx {
		if sas && i > 0 {
			add(i - 1)
		}
		add(i)
	}
	return slices.Sorted(maps.Keys(seen))
}

// familyName is a name of an item (any name variable): the key of its
// family name and its given name.
type familyName struct{ family, given string }

// itemNames returns the names of a CSL-JSON item, in any name variable,
// literal names left out (their given names are never added). The key of
// a family is the last word of it, lower-cased: citeproc-js keys its
// name register by the family without particles (parsed out of the
// family too) or periods, so this key is at least as wide.
func itemNames(js json.RawMessage) []familyName {
	var obj map[string]json.RawMessage
	if json.Unmarshal(js, &obj) != nil {
		return nil
	}
	var out []familyName
	for _, raw := range obj {
		if len(raw) == 0 || raw[0] != '[' {
			continue
		}
		var ps []struct{ Family, Given string }
		if json.Unmarshal(raw, &ps) != nil {
			continue
		}
		for _, p := range ps {
			if words := strings.Fields(strings.ReplaceAll(p.Family, ".", " ")); len(words) > 0 {
				out = append(out, familyName{strings.ToLower(words[len(words)-1]), p.Given})
			}
		}
	}
	return out
}

// documentNames returns, per item, the given names that each of its
// family names has across the items ("smith:anna,amélie|doe:jane"),
// families with one given name left out.
func documentNames(items []Item) map[string]string {
	fams := make([][]string, len(items))
	givens := map[string]map[string]bool{}
	for i, it := range items {
		for _, n := range itemNames(it.JSON) {
			if givens[n.family] == nil {
				givens[n.family] = map[string]bool{}
			}
			givens[n.family][n.given] = true
			fams[i] = append(fams[i], n.family)
		}
	}
	out := make(map[string]string, len(items))
	for i, it := range items {
		fs := fams[i]
		sort.Strings(fs)
		var b strings.Builder
		for k, f := range fs {
			if k > 0 && fs[k-1] == f {
				continue
			}
			if len(givens[f]) < 2 {
				continue // no other given name: nothing to tell apart
			}
			gs := make([]string, 0, len(givens[f]))
			for g := range givens[f] {
				gs = append(gs, g)
			}
			sort.Strings(gs)
			b.WriteString(f + ":" + strings.Join(gs, ",") + "|")
		}
		out[it.ID] = b.String()
	}
	return out
}

// isolate finds the item a failed render tripped on, rendering each on
// its own in a fresh processor; nil when none fails alone.
func (e *Engine) isolate(ctx context.Context, st *Style, items []Item) error {
	pr, err := NewProcessor(ctx, &e.prog, st, e.opts.Resolver.Locale, "")
	if err != nil {
		return nil
	}
	for _, it := range items {
		if pr.Broken() {
			if pr, err = NewProcessor(ctx, &e.prog, st, e.opts.Resolver.Locale, ""); err != nil {
				return nil
			}
		}
		err := pr.UpdateItems(ctx, []Item{it}, false)
		if err == nil {
			_, err = pr.MakeCitationCluster(ctx, []CiteItem{{ID: it.ID}})
		}
		if err == nil {
			_, _, _, err = pr.MakeBibliography(ctx, nil)
		}
		var ee *EngineError
		if errors.As(err, &ee) && ee.Err == nil {
			return &ItemError{ID: it.ID, Style: st.File, Msg: "citeproc-js rejects it: " + ee.Msg}
		}
		if err == nil {
			_ = pr.call(ctx, "reset", nil, func() error {
				_, err := pr.method("updateItems", []string{})
				return err
			})
		}
	}
	return nil
}

// CitationAffixes returns the prefix and suffix of the style's citation
// layout ("(" and ")" for APA), as they appear in rendered citations
// (HTML-escaped).
func (s *Style) CitationAffixes() (prefix, suffix string) {
	esc := strings.NewReplacer("&", "&#38;", "<", "&#60;", ">", "&#62;")
	return esc.Replace(s.layoutPrefix), esc.Replace(s.layoutSuffix)
}

// lru is a bounded map of rendered fragments, least recently used out
// first. It is safe for concurrent use.
type lru struct {
	hits, misses atomic.Int64
	mu           sync.Mutex
	max          int
	ll           *list.List
	items        map[string]*list.Element
}

type lruEntry struct {
	key string
	val Fragment
}

func newLRU(max int) *lru {
	return &lru{max: max, ll: list.New(), items: map[string]*list.Element{}}
}

func (c *lru) get(key string) (Fragment, bool) {
	if c.max < 0 {
		return "", false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok {
		c.misses.Add(1)
		return "", false
	}
	c.hits.Add(1)
	c.ll.MoveToFront(el)
	return el.Value.(*lruEntry).val, true
}

func (c *lru) peek(key string) Fragment {
	f, _ := c.get(key)
	return f
}

func (c *lru) put(key string, val Fragment) {
	if c.max < 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		el.Value.(*lruEntry).val = val
		c.ll.MoveToFront(el)
		return
	}
	c.items[key] = c.ll.PushFront(&lruEntry{key, val})
	for c.ll.Len() > c.max {
		old := c.ll.Back()
		c.ll.Remove(old)
		delete(c.items, old.Value.(*lruEntry).key)
	}
}

// CacheStats returns how many fragment lookups hit and missed the cache.
func (e *Engine) CacheStats() (hits, misses int64) {
	return e.cache.hits.Load(), e.cache.misses.Load()
}

// CacheLen is the number of cached fragments.
func (e *Engine) CacheLen() int {
	e.cache.mu.Lock()
	defer e.cache.mu.Unlock()
	return e.cache.ll.Len()
}
