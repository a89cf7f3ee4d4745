package csl

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/dop251/goja"
)

// shim gives the CommonJS build of citeproc-js the module and exports it
// expects; nothing else of it is changed.
const shimPrefix = "var module = {exports: {}}; var exports = module.exports;\n"

// glue is citefind's side of the sys object citeproc-js calls back:
// items are kept as parsed JSON in the runtime, locales come from Go.
const glue = `(function (CSL, styleXML, lang, forceLang, retrieveLocale) {
  var items = {};
  var sys = {
    retrieveItem: function (id) { return items[id]; },
    retrieveLocale: retrieveLocale
  };
  var engine = new CSL.Engine(sys, styleXML, lang, forceLang);
  // Building the style leaves citeproc-js's queue of date output with a
  // level opened for the style's last cs:date, affixes and all. The
  // first date range a processor renders puts its end in that level
  // (acm-sig-proceedings "1988–Accessed: 2009": its accessed date's
  // prefix), then opens a clean level, where every later range goes
  // ("1988–2009", as pandoc prints it). Leave the queue as that first
  // range leaves it, so that a new processor renders as a used one does.
  if (engine.tmp.date_token) {
    engine.dateput.string(engine, engine.dateput.queue);
    engine.dateput.openLevel(engine.tmp.date_token);
  }
  return {
    CSL: CSL,
    engine: engine,
    setItem: function (id, json) { items[id] = JSON.parse(json); },
    hasItem: function (id) { return Object.prototype.hasOwnProperty.call(items, id); },
    dropItem: function (id) { delete items[id]; },
    registryState: function () {
      var reg = engine.registry, order = [], state = {};
      for (var i = 0; i < reg.reflist.length; i++) {
        var r = reg.reflist[i];
        order.push(r.id);
        state[r.id] = {seq: r.seq, disambig: r.disambig || null};
      }
      return JSON.stringify({order: order, items: state});
    },
    nameRegState: function (families) {
      // What citeproc-js's global name disambiguation (evalname) reads:
      // per family, how many initials forms; per form, how many given
      // names. Rendering a name registers it, also in a bibliography.
      // Only families with a word among families (lower-cased) count.
      var reg = engine.registry.namereg.namereg, out = [], want = {};
      for (var i = 0; i < families.length; i++) {
        want[families[i]] = true;
      }
      var pkeys = Object.keys(reg).filter(function (k) {
        var ws = k.toLowerCase().split(/\s+/);
        for (var i = 0; i < ws.length; i++) {
          if (want[ws[i]]) {
            return true;
          }
        }
        return false;
      }).sort();
      for (var i = 0; i < pkeys.length; i++) {
        var p = reg[pkeys[i]], forms = [];
        var ikeys = Object.keys(p.ikey).sort();
        for (var j = 0; j < ikeys.length; j++) {
          forms.push([ikeys[j], p.ikey[ikeys[j]].count]);
        }
        out.push([pkeys[i], p.count, forms]);
      }
      return JSON.stringify(out);
    }
  };
})`

// speedupsJS is citefind's speed-ups of citeproc-js on goja (see the file).
//
//go:embed speedups.js
var speedupsJS string

// speedupsFor is the sha256 of the citeproc_commonjs.js speedups.js was
// written for (citeproc 2.4.63): on any other file the speed-ups are left
// out and citeproc-js runs as it is.
const speedupsFor = "55abba1a8b8b48c14323fd053f9646013b4b7a0c977938064ecf5195a502b9f1"

// Program is citeproc-js compiled once for all processors of a process.
type Program struct {
	once     sync.Once
	prog     *goja.Program
	glue     *goja.Program
	speedups *goja.Program // nil when citeproc-js is not the pinned file
	err      error
}

// compile compiles citeproc-js (about 50 ms) on first use.
func (p *Program) compile() (*goja.Program, *goja.Program, error) {
	p.once.Do(func() {
		src, err := citeprocSource()
		if err != nil {
			p.err = err
			return
		}
		p.prog, p.err = goja.Compile("citeproc_commonjs.js", shimPrefix+src, false)
		if p.err != nil {
			p.err = fmt.Errorf("compile citeproc-js: %w", p.err)
			return
		}
		p.glue, p.err = goja.Compile("citefind-glue.js", glue, false)
		if p.err != nil {
			return
		}
		if sum := sha256.Sum256([]byte(src)); hex.EncodeToString(sum[:]) == speedupsFor {
			p.speedups, p.err = goja.Compile("citefind-speedups.js", speedupsJS, false)
		}
	})
	return p.prog, p.glue, p.err
}

// installSpeedups replaces the citeproc-js functions speedups.js names in
// a runtime where citeproc-js has run, and returns their names (none when
// citeproc-js is not the file they were written for).
func (p *Program) installSpeedups(vm *goja.Runtime, csl goja.Value) ([]string, error) {
	if p.speedups == nil {
		return nil, nil
	}
	fn, err := vm.RunProgram(p.speedups)
	if err != nil {
		return nil, err
	}
	install, ok := goja.AssertFunction(fn)
	if !ok {
		return nil, errors.New("speedups.js is not a function")
	}
	v, err := install(goja.Undefined(), csl)
	if err != nil {
		return nil, err
	}
	var names []string
	if err := vm.ExportTo(v, &names); err != nil {
		return nil, err
	}
	return names, nil
}

// Speedups returns the names of the citeproc-js functions citefind
// replaces with faster equivalents in every Processor (none when the
// embedded citeproc-js is not the pinned file). NewRuntime leaves them
// out: it is citeproc-js as published.
func (p *Program) Speedups() ([]string, error) {
	if _, _, err := p.compile(); err != nil {
		return nil, err
	}
	if p.speedups == nil {
		return nil, nil
	}
	vm := newVM()
	if _, err := vm.RunProgram(p.prog); err != nil {
		return nil, err
	}
	return p.installSpeedups(vm, vm.Get("module").ToObject(vm).Get("exports"))
}

// LocaleFunc returns the XML of locales-LANG.xml or an error wrapping
// ErrMissingLocale. (*Resolver).Locale is one.
type LocaleFunc func(lang string) ([]byte, error)

// Processor is one citeproc-js engine for one style in its own JavaScript
// runtime. It is not safe for concurrent use: Engine keeps processors in
// a pool and hands each to one caller at a time. After a failure (a
// JavaScript exception or an interrupt) Broken is true and the processor
// must be dropped.
type Processor struct {
	style    *Style
	vm       *goja.Runtime
	engine   *goja.Object
	setItem  goja.Callable
	hasItem  goja.Callable
	regState goja.Callable
	nameReg  goja.Callable
	jsonStr  goja.Callable     // JSON.stringify
	jsonP    goja.Callable     // JSON.parse
	loaded   map[string]string // item ID → JSON loaded into the runtime
	missing  []string          // locales the style asked for that are absent
	broken   bool
	// lastOrder and lastState are the item IDs of the last Engine.render's
	// updateItems and the registry state it left; a render of the same
	// items skips updateItems (citeproc-js re-runs its disambiguation
	// there). Any other registration clears them.
	lastOrder string
	lastState *regState
	// rendered: citeproc-js has registered or rendered items (any
	// method but setOutputFormat), which leaves names in its name
	// register (see register in engine.go).
	rendered bool
}

// NewRuntime returns a fresh JavaScript runtime with citeproc-js loaded
// and its CSL object, for tools that drive citeproc-js directly (the CSL
// test-suite reference runner).
func (p *Program) NewRuntime() (*goja.Runtime, goja.Value, error) {
	prog, _, err := p.compile()
	if err != nil {
		return nil, nil, err
	}
	vm := newVM()
	if _, err := vm.RunProgram(prog); err != nil {
		return nil, nil, fmt.Errorf("run citeproc-js: %w", err)
	}
	return vm, vm.Get("module").ToObject(vm).Get("exports"), nil
}

// NewProcessor builds a citeproc-js engine for st (0.1–1 s on goja, most
// of it citeproc-js building the style). Locales come from locale; the
// style's own default-locale must be found (ErrMissingLocale), other
// languages citeproc-js asks for fall back to en-US. Lang, when not "",
// forces the output language; a dependent style forces its own
// default-locale on its parent's XML.
func NewProcessor(ctx context.Context, p *Program, st *Style, locale LocaleFunc, lang string) (*Processor, error) {
	prog, glueProg, err := p.compile()
	if err != nil {
		return nil, err
	}
	pr := &Processor{style: st, vm: newVM(), loaded: map[string]string{}}
	force := lang != ""
	if lang == "" && st.Parent != "" && st.Locale != "" {
		lang, force = st.Locale, true
	}
	want := lang
	if want == "" {
		want = st.Locale
	}
	var localeErr error
	retrieveLocale := func(call goja.FunctionCall) goja.Value {
		l := call.Argument(0).String()
		b, err := locale(l)
		if err != nil {
			pr.missing = append(pr.missing, l)
			// A language the CSL project has a locale for must be installed;
			// for any other tag citeproc-js falls back to en-US, as the CSL
			// specification says.
			if want != "" && (l == want || strings.HasPrefix(want, l+"-")) && knownLocale(l) && localeErr == nil {
				localeErr = err
			}
			return pr.vm.ToValue(false)
		}
		if j, ok := citeprocJSON(b); ok {
			return pr.vm.ToValue(j)
		}
		return pr.vm.ToValue(stripXMLDecl(string(b)))
	}
	// The style as citeproc-js's own parser would give it, when it
	// converts (citeprocJSON), else as XML.
	styleSource, ok := citeprocJSON(st.XML)
	if !ok {
		styleSource = string(st.XML)
	}
	err = pr.call(ctx, "load style", nil, func() error {
		if _, err := pr.vm.RunProgram(prog); err != nil {
			return err
		}
		module := pr.vm.Get("module").ToObject(pr.vm)
		csl := module.Get("exports")
		if _, err := p.installSpeedups(pr.vm, csl); err != nil {
			return fmt.Errorf("citefind speed-ups: %w", err)
		}
		fn, err := pr.vm.RunProgram(glueProg)
		if err != nil {
			return err
		}
		mk, ok := goja.AssertFunction(fn)
		if !ok {
			return errors.New("glue is not a function")
		}
		var langV goja.Value = goja.Undefined()
		if lang != "" {
			langV = pr.vm.ToValue(lang)
		}
		res, err := mk(goja.Undefined(), csl, pr.vm.ToValue(styleSource), langV, pr.vm.ToValue(force), pr.vm.ToValue(retrieveLocale))
		if err != nil {
			return err
		}
		o := res.ToObject(pr.vm)
		pr.engine = o.Get("engine").ToObject(pr.vm)
		pr.setItem, _ = goja.AssertFunction(o.Get("setItem"))
		pr.hasItem, _ = goja.AssertFunction(o.Get("hasItem"))
		pr.regState, _ = goja.AssertFunction(o.Get("registryState"))
		pr.nameReg, _ = goja.AssertFunction(o.Get("nameRegState"))
		j := pr.vm.Get("JSON").ToObject(pr.vm)
		pr.jsonStr, _ = goja.AssertFunction(j.Get("stringify"))
		pr.jsonP, _ = goja.AssertFunction(j.Get("parse"))
		return nil
	})
	if localeErr != nil {
		return nil, fmt.Errorf("style %s: %w", st.File, localeErr)
	}
	if err != nil {
		var ee *EngineError
		if errors.As(err, &ee) && ee.Err == nil {
			return nil, fmt.Errorf("%w: %s: citeproc-js refuses it: %s", ErrBadStyle, st.File, ee.Msg)
		}
		return nil, err
	}
	return pr, nil
}

var xmlDeclRe = regexp.MustCompile(`^\s*<\?[^>]*\?>\s*`)

// stripXMLDecl removes the <?xml …?> declaration, as citeproc-js's own
// test runner does.
func stripXMLDecl(s string) string { return xmlDeclRe.ReplaceAllString(s, "") }

// Style returns the processor's style.
func (pr *Processor) Style() *Style { return pr.style }

// Broken reports whether a failure left the processor unusable.
func (pr *Processor) Broken() bool { return pr.broken }

// MissingLocales are the languages citeproc-js asked for and did not get
// (it fell back to en-US for them).
func (pr *Processor) MissingLocales() []string { return pr.missing }

// call runs f in the runtime: a cancelled ctx interrupts it, and a
// JavaScript exception, an interrupt or a Go panic becomes an
// *EngineError and marks the processor broken.
func (pr *Processor) call(ctx context.Context, op string, items []string, f func() error) (err error) {
	if pr.broken {
		return &EngineError{Style: pr.style.File, Op: op, Items: items, Msg: "the engine failed before and was not rebuilt"}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	interrupted := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		pr.vm.Interrupt(ctx.Err())
		close(interrupted)
	})
	defer func() {
		if !stop() {
			// The interrupt fired (or is firing): let it finish before
			// clearing it, so that it cannot hit the next call.
			<-interrupted
		}
		pr.vm.ClearInterrupt()
		if r := recover(); r != nil {
			pr.broken = true
			err = &EngineError{Style: pr.style.File, Op: op, Items: items, Msg: fmt.Sprintf("panic: %v", r)}
		}
	}()
	if ferr := f(); ferr != nil {
		pr.broken = true
		ee := &EngineError{Style: pr.style.File, Op: op, Items: items, Msg: ferr.Error()}
		var ie *goja.InterruptedError
		if errors.As(ferr, &ie) {
			ee.Msg = "interrupted"
			if ce, ok := ie.Value().(error); ok {
				ee.Err = ce
			} else {
				ee.Err = context.Canceled
			}
		}
		var ex *goja.Exception
		if errors.As(ferr, &ex) {
			ee.Msg = strings.TrimSpace(ex.Value().String())
		}
		return ee
	}
	return nil
}

// Item is one CSL-JSON item: its "id" must equal ID.
type Item struct {
	ID   string
	JSON json.RawMessage
}

// load puts items into the runtime; an item whose JSON changed since it
// was loaded is replaced. It returns whether any loaded item changed
// (citeproc-js's registry then has to be rebuilt).
func (pr *Processor) load(items []Item) (changed bool, err error) {
	for _, it := range items {
		s := string(it.JSON)
		old, ok := pr.loaded[it.ID]
		if ok && old == s {
			continue
		}
		if ok {
			changed = true
		}
		if _, err := pr.setItem(goja.Undefined(), pr.vm.ToValue(it.ID), pr.vm.ToValue(s)); err != nil {
			var ie *goja.InterruptedError
			if errors.As(err, &ie) {
				return changed, err
			}
			return changed, &ItemError{ID: it.ID, Msg: "not valid JSON: " + jsErr(err)}
		}
		pr.loaded[it.ID] = s
	}
	return changed, nil
}

func jsErr(err error) string {
	var ex *goja.Exception
	if errors.As(err, &ex) {
		return strings.TrimSpace(ex.Value().String())
	}
	return err.Error()
}

// method calls engine.name(args…).
func (pr *Processor) method(name string, args ...any) (goja.Value, error) {
	if name != "setOutputFormat" {
		pr.rendered = true
	}
	fn, ok := goja.AssertFunction(pr.engine.Get(name))
	if !ok {
		return nil, fmt.Errorf("engine has no method %s", name)
	}
	vs := make([]goja.Value, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case goja.Value:
			vs[i] = v
		case json.RawMessage:
			pv, err := pr.jsonP(goja.Undefined(), pr.vm.ToValue(string(v)))
			if err != nil {
				return nil, err
			}
			vs[i] = pv
		default:
			b, err := json.Marshal(v)
			if err != nil {
				return nil, err
			}
			pv, err := pr.jsonP(goja.Undefined(), pr.vm.ToValue(string(b)))
			if err != nil {
				return nil, err
			}
			vs[i] = pv
		}
	}
	return fn(pr.engine, vs...)
}

// export turns a JS value into Go through JSON.
func (pr *Processor) export(v goja.Value, into any) error {
	s, err := pr.jsonStr(goja.Undefined(), v)
	if err != nil {
		return err
	}
	if goja.IsUndefined(s) || goja.IsNull(s) {
		return nil
	}
	return json.Unmarshal([]byte(s.String()), into)
}

// SetOutputFormat sets citeproc-js's output format: "html" (what Engine
// uses and converts), "text", "rtf", "asciidoc".
func (pr *Processor) SetOutputFormat(ctx context.Context, format string) error {
	return pr.call(ctx, "set output format", nil, func() error {
		_, err := pr.method("setOutputFormat", pr.vm.ToValue(format))
		return err
	})
}

// SetDevelopmentExtension sets one of citeproc-js's
// opt.development_extensions (its test fixtures' OPTIONS).
func (pr *Processor) SetDevelopmentExtension(name string, value any) {
	opt := pr.engine.Get("opt").ToObject(pr.vm)
	opt.Get("development_extensions").ToObject(pr.vm).Set(name, value)
}

// UpdateItems loads items and registers them with citeproc-js
// (engine.updateItems), in this order.
func (pr *Processor) UpdateItems(ctx context.Context, items []Item, nosort bool) error {
	pr.lastOrder, pr.lastState = "", nil
	ids := itemIDs(items)
	return pr.call(ctx, "load items", ids, func() error {
		if _, err := pr.load(items); err != nil {
			return err
		}
		_, err := pr.method("updateItems", ids, nosort)
		return err
	})
}

// SetItems loads items into the runtime without registering them (for
// citation calls that register items themselves).
func (pr *Processor) SetItems(ctx context.Context, items []Item) error {
	return pr.call(ctx, "load items", itemIDs(items), func() error {
		_, err := pr.load(items)
		return err
	})
}

func itemIDs(items []Item) []string {
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = it.ID
	}
	return ids
}

// CiteItem is one cited item of a citation cluster, as citeproc-js takes
// it (CSL citation JSON).
type CiteItem struct {
	ID             string `json:"id"`
	Locator        string `json:"locator,omitempty"`
	Label          string `json:"label,omitempty"`
	Prefix         string `json:"prefix,omitempty"`
	Suffix         string `json:"suffix,omitempty"`
	SuppressAuthor bool   `json:"suppress-author,omitempty"`
	AuthorOnly     bool   `json:"author-only,omitempty"`
}

// Citation is one citation cluster of a document.
type Citation struct {
	ID        string     // unique within the document
	NoteIndex int        // footnote number for note styles; 0 in-text
	Items     []CiteItem // in the order written
}

func (c Citation) js() map[string]any {
	return map[string]any{
		"citationID":    c.ID,
		"citationItems": c.Items,
		"properties":    map[string]any{"noteIndex": c.NoteIndex},
	}
}

// MakeCitationCluster renders one cluster on its own
// (engine.makeCitationCluster): no positions, nothing registered.
func (pr *Processor) MakeCitationCluster(ctx context.Context, items []CiteItem) (string, error) {
	var out string
	err := pr.call(ctx, "render citation", ciIDs(items), func() error {
		v, err := pr.method("makeCitationCluster", items)
		if err != nil {
			return err
		}
		out = v.String()
		return nil
	})
	return out, err
}

// MakeCitationClusterJSON is MakeCitationCluster for cite items given as
// CSL citation-item JSON (every field citeproc-js knows kept).
func (pr *Processor) MakeCitationClusterJSON(ctx context.Context, items json.RawMessage) (string, error) {
	var out string
	err := pr.call(ctx, "render citation", nil, func() error {
		v, err := pr.method("makeCitationCluster", items)
		if err != nil {
			return err
		}
		out = v.String()
		return nil
	})
	return out, err
}

// RegistryOrder returns the registered item IDs in citeproc-js's registry
// (bibliography) order.
func (pr *Processor) RegistryOrder() ([]string, error) {
	v, err := pr.regState(goja.Undefined())
	if err != nil {
		return nil, err
	}
	var st struct {
		Order []string `json:"order"`
	}
	err = json.Unmarshal([]byte(v.String()), &st)
	return st.Order, err
}

// nameRegState returns citeproc-js's register of the names it has
// rendered (family → initials forms → given names, as counts), which its
// given-name disambiguation reads: a name first rendered in a
// bibliography entry (an editor) can expand a name in a later entry.
// Only the families with a word among families (itemNames' keys) are in it.
func (pr *Processor) nameRegState(ctx context.Context, families []string) (string, error) {
	var out string
	err := pr.call(ctx, "read the name register", nil, func() error {
		v, err := pr.nameReg(goja.Undefined(), pr.vm.ToValue(families))
		if err != nil {
			return err
		}
		out = v.String()
		return nil
	})
	return out, err
}

// CitationIDs returns the IDs of the citations citeproc-js holds (after
// ProcessCitationCluster calls).
func (pr *Processor) CitationIDs(ctx context.Context) (map[string]bool, error) {
	out := map[string]bool{}
	err := pr.call(ctx, "list citations", nil, func() error {
		reg := pr.engine.Get("registry").ToObject(pr.vm).Get("citationreg").ToObject(pr.vm).Get("citationById").ToObject(pr.vm)
		for _, k := range reg.Keys() {
			out[k] = true
		}
		return nil
	})
	return out, err
}

func ciIDs(items []CiteItem) []string {
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = it.ID
	}
	return ids
}

// ClusterUpdate is one citation (re)rendered by ProcessCitationCluster:
// its index in document order and its text.
type ClusterUpdate struct {
	Index      int
	Text       string
	CitationID string
}

// ProcessCitationCluster adds or edits citation c between pre and post
// (each [citationID, noteIndex] of the document's other citations), as
// engine.processCitationCluster does, and returns every citation whose
// text changed.
func (pr *Processor) ProcessCitationCluster(ctx context.Context, c Citation, pre, post [][2]any) ([]ClusterUpdate, error) {
	b, err := json.Marshal(c.js())
	if err != nil {
		return nil, err
	}
	return pr.ProcessCitationClusterJSON(ctx, b, pre, post)
}

// ProcessCitationClusterJSON is ProcessCitationCluster for a citation given
// as CSL citation JSON ({"citationID", "citationItems", "properties"}).
func (pr *Processor) ProcessCitationClusterJSON(ctx context.Context, citation json.RawMessage, pre, post [][2]any) ([]ClusterUpdate, error) {
	pr.lastOrder, pr.lastState = "", nil
	var out []ClusterUpdate
	if pre == nil {
		pre = [][2]any{}
	}
	if post == nil {
		post = [][2]any{}
	}
	err := pr.call(ctx, "render citation", nil, func() error {
		v, err := pr.method("processCitationCluster", citation, pre, post)
		if err != nil {
			return err
		}
		var res []json.RawMessage
		if err := pr.export(v, &res); err != nil {
			return err
		}
		if len(res) < 2 {
			return errors.New("processCitationCluster: unexpected result")
		}
		var rows [][3]any
		if err := json.Unmarshal(res[1], &rows); err != nil {
			return err
		}
		for _, r := range rows {
			idx, _ := r[0].(float64)
			txt, _ := r[1].(string)
			id, _ := r[2].(string)
			out = append(out, ClusterUpdate{Index: int(idx), Text: txt, CitationID: id})
		}
		return nil
	})
	return out, err
}

// readState returns the registry's order and each item's
// disambiguation state; called within pr.call.
func (pr *Processor) readState() (regState, error) {
	var state regState
	v, err := pr.regState(goja.Undefined())
	if err != nil {
		return state, err
	}
	err = json.Unmarshal([]byte(v.String()), &state)
	return state, err
}

// registryState is readState for callers outside pr.call.
func (pr *Processor) registryState(ctx context.Context) (regState, error) {
	var state regState
	err := pr.call(ctx, "read the registry", nil, func() error {
		var err error
		state, err = pr.readState()
		return err
	})
	return state, err
}

// RebuildProcessorState renders a whole document's citations from scratch
// (engine.rebuildProcessorState), registering uncited items too, and
// returns each citation's text in document order.
func (pr *Processor) RebuildProcessorState(ctx context.Context, cs []Citation, format string, uncited []string) ([]string, error) {
	pr.lastOrder, pr.lastState = "", nil
	var ids []string
	for _, c := range cs {
		ids = append(ids, ciIDs(c.Items)...)
	}
	ids = append(ids, uncited...)
	out := make([]string, len(cs))
	err := pr.call(ctx, "render citations", ids, func() error {
		js := make([]map[string]any, len(cs))
		for i, c := range cs {
			js[i] = c.js()
		}
		if uncited == nil {
			uncited = []string{}
		}
		v, err := pr.method("rebuildProcessorState", js, format, uncited)
		if err != nil {
			return err
		}
		var rows [][3]any
		if err := pr.export(v, &rows); err != nil {
			return err
		}
		if len(rows) != len(cs) {
			return fmt.Errorf("rebuildProcessorState returned %d citations for %d", len(rows), len(cs))
		}
		for i, r := range rows {
			out[i], _ = r[2].(string)
		}
		return nil
	})
	return out, err
}

// BibParams are the layout parameters of a rendered bibliography
// (citeproc-js's makeBibliography()[0]).
type BibParams struct {
	MaxOffset        int                        `json:"maxoffset"`
	EntrySpacing     int                        `json:"entryspacing"`
	LineSpacing      int                        `json:"linespacing"`
	HangingIndent    bool                       `json:"-"`
	SecondFieldAlign string                     `json:"-"` // "flush", "margin" or ""
	BibStart         string                     `json:"bibstart"`
	BibEnd           string                     `json:"bibend"`
	EntryIDs         [][]any                    `json:"entry_ids"`
	Raw              map[string]json.RawMessage `json:"-"`
}

// MakeBibliography renders the registered items' bibliography
// (engine.makeBibliography). section is citeproc-js's bibsection filter,
// or nil. ok is false when the style has no bibliography.
func (pr *Processor) MakeBibliography(ctx context.Context, section json.RawMessage) (params BibParams, entries []string, ok bool, err error) {
	err = pr.call(ctx, "render bibliography", nil, func() error {
		var v goja.Value
		var err error
		if section != nil {
			v, err = pr.method("makeBibliography", section)
		} else {
			v, err = pr.method("makeBibliography")
		}
		if err != nil {
			return err
		}
		if b, isBool := v.Export().(bool); isBool && !b {
			return nil
		}
		var res []json.RawMessage
		if err := pr.export(v, &res); err != nil {
			return err
		}
		if len(res) < 2 {
			return errors.New("makeBibliography: unexpected result")
		}
		if err := json.Unmarshal(res[0], &params); err != nil {
			return err
		}
		if err := json.Unmarshal(res[0], &params.Raw); err != nil {
			return err
		}
		if h, ok := params.Raw["hangingindent"]; ok {
			var x any
			_ = json.Unmarshal(h, &x)
			switch t := x.(type) {
			case bool:
				params.HangingIndent = t
			case float64:
				params.HangingIndent = t != 0
			}
		}
		if s, ok := params.Raw["second-field-align"]; ok {
			var x any
			_ = json.Unmarshal(s, &x)
			if str, isStr := x.(string); isStr {
				params.SecondFieldAlign = str
			}
		}
		if err := json.Unmarshal(res[1], &entries); err != nil {
			return err
		}
		if len(entries) < len(params.EntryIDs) {
			if entries, err = pr.alignEntries(params.EntryIDs, entries); err != nil {
				return err
			}
		}
		ok = true
		return nil
	})
	return params, entries, ok, err
}

// alignEntries returns entries with "" where an entry of ids rendered
// as nothing. citeproc-js lists every entry's item IDs but leaves an
// empty entry out of the strings (a style that prints nothing for an
// item: middle-east-critique for a manuscript without archive data), so the strings after
// one would belong to the IDs before them. Each entry is rendered alone
// to find which are empty (as rare as such entries are); called within
// pr.call.
func (pr *Processor) alignEntries(ids [][]any, entries []string) ([]string, error) {
	out := make([]string, 0, len(ids))
	next := 0
	for _, group := range ids {
		if len(group) == 0 {
			return nil, errors.New("makeBibliography: an entry without item IDs")
		}
		section, _ := json.Marshal(map[string]any{"include": []map[string]string{{"field": "id", "value": fmt.Sprint(group[0])}}})
		v, err := pr.method("makeBibliography", json.RawMessage(section))
		if err != nil {
			return nil, err
		}
		var res []json.RawMessage
		var alone []string
		if b, isBool := v.Export().(bool); !isBool || b {
			if err := pr.export(v, &res); err != nil {
				return nil, err
			}
			if len(res) == 2 {
				_ = json.Unmarshal(res[1], &alone)
			}
		}
		if len(alone) == 0 {
			out = append(out, "")
			continue
		}
		if next == len(entries) {
			break
		}
		out = append(out, entries[next])
		next++
	}
	if next != len(entries) || len(out) != len(ids) {
		return nil, fmt.Errorf("makeBibliography: %d entries for %d items, and rendering each alone does not tell which are empty", len(entries), len(ids))
	}
	return out, nil
}

// Eval runs JavaScript in the processor's runtime, where CSL and the
// engine are reachable as the globals citefindCSL and citefindEngine
// once Expose was called. It is for tests and the CSL test-suite runner.
func (pr *Processor) Eval(ctx context.Context, src string) (goja.Value, error) {
	var v goja.Value
	err := pr.call(ctx, "eval", nil, func() error {
		var err error
		v, err = pr.vm.RunString(src)
		return err
	})
	return v, err
}

// Runtime returns the processor's goja runtime (for the CSL test-suite
// runner, which drives citeproc-js the way its own runner does).
func (pr *Processor) Runtime() *goja.Runtime { return pr.vm }

// JSEngine returns citeproc-js's CSL.Engine object.
func (pr *Processor) JSEngine() *goja.Object { return pr.engine }
