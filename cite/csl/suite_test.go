package csl_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/dop251/goja"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/cite/csl"
	"github.com/citefind/citefind/internal/datadir"
)

// fixture is one test of the CSL processor test suite.
type fixture struct {
	Name, Category, Mode, Result, CSL string
	Input                             []json.RawMessage
	CitationItems                     [][]json.RawMessage // CITATION-ITEMS
	Citations                         json.RawMessage     // CITATIONS: [[citation, pre, post], …]
}

var sectionRe = regexp.MustCompile(`^>>=+ ([A-Z-]+) =+>>`)
var sectionEndRe = regexp.MustCompile(`^<<=+ ([A-Z-]+) =+<<`)

// parseFixture reads a fixture file: each section is the lines between its
// >>== NAME ==>> and <<== NAME ==<< lines.
func parseFixture(path string) (*fixture, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	secs := map[string]string{}
	var cur string
	var lines []string
	for _, line := range strings.Split(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n") {
		if m := sectionRe.FindStringSubmatch(line); m != nil && cur == "" {
			cur, lines = m[1], nil
			continue
		}
		if m := sectionEndRe.FindStringSubmatch(line); m != nil && m[1] == cur {
			secs[cur] = strings.Join(lines, "\n")
			cur = ""
			continue
		}
		if cur != "" {
			lines = append(lines, line)
		}
	}
	for _, need := range []string{"MODE", "RESULT", "CSL", "INPUT"} {
		if _, ok := secs[need]; !ok {
			return nil, fmt.Errorf("%w: no %s section", errNotFixture, need)
		}
	}
	name := strings.TrimSuffix(filepath.Base(path), ".txt")
	f := &fixture{Name: name, Category: strings.SplitN(name, "_", 2)[0], Mode: strings.TrimSpace(secs["MODE"]), Result: secs["RESULT"], CSL: secs["CSL"]}
	if err := json.Unmarshal([]byte(secs["INPUT"]), &f.Input); err != nil {
		return nil, fmt.Errorf("%s: INPUT: %w", path, err)
	}
	if s, ok := secs["CITATION-ITEMS"]; ok {
		if err := json.Unmarshal([]byte(s), &f.CitationItems); err != nil {
			return nil, fmt.Errorf("%s: CITATION-ITEMS: %w", path, err)
		}
	}
	if s, ok := secs["CITATIONS"]; ok {
		f.Citations = json.RawMessage(s)
	}
	return f, nil
}

var errNotFixture = errors.New("not a complete fixture")

// loadSuite reads every fixture; files that are not complete fixtures are
// returned by name with the reason.
func loadSuite(t *testing.T) ([]*fixture, []string) {
	dir := filepath.Join(datadir.Bench("csl-test-suite"), "humans")
	paths, _ := filepath.Glob(filepath.Join(dir, "*.txt"))
	more, _ := filepath.Glob(filepath.Join(dir, "*", "*.txt"))
	paths = append(paths, more...)
	if len(paths) == 0 {
		t.Skipf("CSL test suite not found in %s; set %s to the benchmark data folder", dir, datadir.Env)
	}
	sort.Strings(paths)
	var fs []*fixture
	var skipped []string
	for _, p := range paths {
		f, err := parseFixture(p)
		if errors.Is(err, errNotFixture) {
			skipped = append(skipped, filepath.Base(p)+": "+err.Error())
			continue
		}
		require.NoError(t, err)
		if strings.Contains(p, string(filepath.Separator)+"off-spec"+string(filepath.Separator)) {
			f.Category = "off-spec"
		} else if strings.Contains(p, string(filepath.Separator)+"experiments"+string(filepath.Separator)) {
			f.Category = "experiments"
		}
		fs = append(fs, f)
	}
	return fs, skipped
}

// referenceJS drives citeproc-js the way its own test runner
// (citeproc-test-runner's Sys.run) does, inside goja: items from INPUT,
// locales from the locale folders, updateItems of every input item,
// makeCitationCluster per CITATION-ITEMS cluster or processCitationCluster
// per CITATIONS entry (printing ">>[i]" for citations the last call
// changed, "..[i]" for the others), makeBibliography in bibliography mode.
// Written for citefind from the runner's documented behaviour.
const referenceJS = `(function (CSL, f, retrieveLocale) {
  var items = {}, ids = [];
  f.INPUT.forEach(function (it) { items[it.id] = it; ids.push(it.id); });
  var sys = {
    retrieveItem: function (id) { return items[id]; },
    retrieveLocale: retrieveLocale
  };
  var engine = new CSL.Engine(sys, f.CSL);
  if (!f.CITATIONS) engine.updateItems(ids);
  var clusters = f["CITATION-ITEMS"];
  if (!clusters && !f.CITATIONS) {
    var all = [];
    engine.registry.reflist.forEach(function (r) { all.push({id: r.id}); });
    clusters = [all];
  }
  var out = "";
  if (clusters) {
    out = clusters.map(function (c) { return engine.makeCitationCluster(c); }).join("\n");
  } else {
    var doc = [];
    f.CITATIONS.forEach(function (entry) {
      var res = engine.processCitationCluster(entry[0], entry[1], entry[2])[1];
      doc = doc.filter(function (d) { return engine.registry.citationreg.citationById[d.id]; });
      var pos = {};
      entry[1].concat(entry[2]).forEach(function (p, i) { pos[p[0]] = i; });
      doc.sort(function (a, b) { return pos[a.id] - pos[b.id]; });
      doc.forEach(function (d) { d.mark = ".."; });
      res.forEach(function (r) {
        for (var k = 0; k < doc.length; k++) {
          if (doc[k].id === r[2]) { doc[k] = {id: r[2], mark: ">>", text: r[1]}; return; }
        }
        doc.splice(r[0], 0, {id: r[2], mark: ">>", text: r[1]});
      });
    });
    out = doc.map(function (d, i) { return d.mark + "[" + i + "] " + d.text; }).join("\n");
  }
  if (f.MODE === "bibliography") {
    var bib = engine.makeBibliography();
    out = bib[0].bibstart + bib[1].join("") + bib[0].bibend;
  }
  return out;
})`

// runReference runs one fixture with referenceJS in vm.
func runReference(vm *goja.Runtime, cslObj goja.Value, run goja.Callable, r *csl.Resolver, f *fixture) (out string, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	fj := map[string]any{"INPUT": f.Input, "CSL": f.CSL, "MODE": f.Mode}
	if f.CitationItems != nil {
		fj["CITATION-ITEMS"] = f.CitationItems
	}
	if f.Citations != nil {
		fj["CITATIONS"] = f.Citations
	}
	b, _ := json.Marshal(fj)
	parse, _ := goja.AssertFunction(vm.Get("JSON").ToObject(vm).Get("parse"))
	fv, err := parse(goja.Undefined(), vm.ToValue(string(b)))
	if err != nil {
		return "", err
	}
	locale := func(call goja.FunctionCall) goja.Value {
		x, err := r.Locale(call.Argument(0).String())
		if err != nil {
			return vm.ToValue(false)
		}
		return vm.ToValue(regexp.MustCompile(`^\s*<\?[^>]*\?>\s*`).ReplaceAllString(string(x), ""))
	}
	v, err := run(goja.Undefined(), cslObj, fv, vm.ToValue(locale))
	if err != nil {
		return "", err
	}
	return v.String(), nil
}

// citeItems converts a fixture cluster to csl.CiteItem; ok is false when
// it uses fields a CiteItem does not carry.
func citeItems(raw []json.RawMessage) ([]csl.CiteItem, bool) {
	var out []csl.CiteItem
	ok := true
	for _, r := range raw {
		var m map[string]any
		_ = json.Unmarshal(r, &m)
		str := func(k string) string {
			if v, ok := m[k]; ok && v != nil {
				return fmt.Sprint(v)
			}
			return ""
		}
		b := func(k string) bool { v, _ := m[k].(bool); return v }
		ci := csl.CiteItem{ID: str("id"), Locator: str("locator"), Label: str("label"), Prefix: str("prefix"), Suffix: str("suffix"),
			SuppressAuthor: b("suppress-author"), AuthorOnly: b("author-only")}
		for k := range m {
			switch k {
			case "id", "locator", "label", "prefix", "suffix", "suppress-author", "author-only":
			default:
				ok = false
			}
		}
		out = append(out, ci)
	}
	return out, ok
}

func inputItems(f *fixture) []csl.Item {
	var items []csl.Item
	for _, raw := range f.Input {
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		items = append(items, csl.Item{ID: fmt.Sprint(m["id"]), JSON: raw})
	}
	return items
}

// runProcessor runs one fixture through citefind's Processor API:
// NewProcessor with the resolver's locales, items loaded from Go,
// UpdateItems, MakeCitationCluster / ProcessCitationCluster,
// MakeBibliography.
func runProcessor(t *testing.T, prog *csl.Program, r *csl.Resolver, f *fixture) (string, error) {
	ctx := t.Context()
	st, err := r.StyleFromXML(f.Name+".csl", []byte(f.CSL))
	if err != nil {
		return "", err
	}
	pr, err := csl.NewProcessor(ctx, prog, st, r.Locale, "")
	if err != nil {
		return "", err
	}
	items := inputItems(f)
	var out string
	if f.Citations == nil {
		if err := pr.UpdateItems(ctx, items, false); err != nil {
			return "", err
		}
		clusters := f.CitationItems
		var lines []string
		if clusters == nil {
			// The runner cites the registered items in registry order.
			order, err := pr.RegistryOrder()
			if err != nil {
				return "", err
			}
			var all []csl.CiteItem
			for _, id := range order {
				all = append(all, csl.CiteItem{ID: id})
			}
			s, err := pr.MakeCitationCluster(ctx, all)
			if err != nil {
				return "", err
			}
			lines = append(lines, s)
		}
		for _, c := range clusters {
			cj, _ := json.Marshal(c)
			s, err := pr.MakeCitationClusterJSON(ctx, cj)
			if err != nil {
				return "", err
			}
			lines = append(lines, s)
		}
		out = strings.Join(lines, "\n")
	} else {
		if err := pr.SetItems(ctx, items); err != nil {
			return "", err
		}
		var raw [][3]json.RawMessage
		if err := json.Unmarshal(f.Citations, &raw); err != nil {
			return "", err
		}
		type line struct{ id, mark, text string }
		var doc []line
		for _, e := range raw {
			var pre, post [][2]any
			_ = json.Unmarshal(e[1], &pre)
			_ = json.Unmarshal(e[2], &post)
			ups, err := pr.ProcessCitationClusterJSON(ctx, e[0], pre, post)
			if err != nil {
				return "", err
			}
			live, err := pr.CitationIDs(ctx)
			if err != nil {
				return "", err
			}
			kept := doc[:0]
			for _, d := range doc {
				if live[d.id] {
					kept = append(kept, d)
				}
			}
			doc = kept
			pos := map[string]int{}
			for i, p := range append(append([][2]any{}, pre...), post...) {
				pos[fmt.Sprint(p[0])] = i
			}
			sort.SliceStable(doc, func(i, j int) bool { return pos[doc[i].id] < pos[doc[j].id] })
			for i := range doc {
				doc[i].mark = ".."
			}
		next:
			for _, u := range ups {
				for k := range doc {
					if doc[k].id == u.CitationID {
						doc[k] = line{u.CitationID, ">>", u.Text}
						continue next
					}
				}
				i := min(u.Index, len(doc))
				doc = append(doc[:i], append([]line{{u.CitationID, ">>", u.Text}}, doc[i:]...)...)
			}
		}
		var lines []string
		for i, d := range doc {
			lines = append(lines, fmt.Sprintf("%s[%d] %s", d.mark, i, d.text))
		}
		out = strings.Join(lines, "\n")
	}
	if f.Mode == "bibliography" {
		ps, entries, _, err := pr.MakeBibliography(ctx, nil)
		if err != nil {
			return "", err
		}
		out = ps.BibStart + strings.Join(entries, "") + ps.BibEnd
	}
	return out, nil
}

// renderApplies reports whether a fixture can be expressed as a
// csl.Document for Engine.Render: no CITATIONS sequence, cite items with
// CiteItem's fields only, independent clusters (an in-text style without
// position conditions, as Render renders those cluster by cluster).
func renderApplies(f *fixture) bool {
	if f.Citations != nil || strings.Contains(f.CSL, `class="note"`) || strings.Contains(f.CSL, "position=") ||
		strings.Contains(f.CSL, "first-reference-note-number") {
		return false
	}
	if f.CitationItems == nil && f.Mode != "bibliography" {
		return false
	}
	for _, c := range f.CitationItems {
		if _, ok := citeItems(c); !ok {
			return false
		}
	}
	return true
}

// runRender runs a fixture through Engine.Render, the path cite uses.
func runRender(t *testing.T, e *csl.Engine, r *csl.Resolver, f *fixture) (string, error) {
	st, err := r.StyleFromXML(f.Name+".csl", []byte(f.CSL))
	if err != nil {
		return "", err
	}
	doc := csl.Document{Items: inputItems(f), NoBibliography: f.Mode != "bibliography"}
	for i, c := range f.CitationItems {
		cis, _ := citeItems(c)
		doc.Citations = append(doc.Citations, csl.Citation{ID: fmt.Sprint("c", i), Items: cis})
	}
	out, err := e.Render(t.Context(), st, doc)
	if err != nil {
		return "", err
	}
	if f.Mode == "bibliography" {
		var b strings.Builder
		b.WriteString(out.Params.BibStart)
		for _, en := range out.Entries {
			b.WriteString(string(en.Text))
		}
		b.WriteString(out.Params.BibEnd)
		return b.String(), nil
	}
	var lines []string
	for _, c := range out.Citations {
		lines = append(lines, string(c))
	}
	return strings.Join(lines, "\n"), nil
}

// TestRealDataCSLSuite runs the CSL processor test suite three ways:
// citeproc-js driven as its own test runner drives it (the reference),
// citefind's Processor API, and Engine.Render (the cached path cite uses,
// on the fixtures a csl.Document can express). No fixture the reference
// passes may fail through citefind, and the Processor API (citeproc-js
// with citefind's speed-ups) must print exactly what the reference prints
// on every fixture. It runs every fixture (about 2.5 minutes on two
// cores), every 20th with -short, every 100th under -race;
// CITEFIND_CSL_SUITE=all runs all of them in any mode (make csl-suite).
// CSL_SUITE_REPORT=FILE writes the per-category table and every failure.
func TestRealDataCSLSuite(t *testing.T) {
	fs, skipped := loadSuite(t)
	if only := os.Getenv("CSL_SUITE_ONLY"); only != "" {
		var some []*fixture
		for _, f := range fs {
			if strings.Contains(f.Name, only) {
				some = append(some, f)
			}
		}
		fs = some
	}
	// Every fixture with CITEFIND_CSL_SUITE=all (make csl-suite), every
	// 100th under the race detector, every 20th with -short, else all.
	step := 1
	switch {
	case os.Getenv("CITEFIND_CSL_SUITE") == "all":
		step = 1
	case raceEnabled:
		step = 100
	case testing.Short():
		step = 20
	}
	if step > 1 {
		var some []*fixture
		for i := 0; i < len(fs); i += step {
			some = append(some, fs[i])
		}
		fs = some
	}
	r := csl.DefaultResolver(func(string) string { return "" })
	r.StyleDirs = nil
	var prog csl.Program
	vm, cslObj, err := prog.NewRuntime()
	require.NoError(t, err)
	fn, err := vm.RunString(referenceJS)
	require.NoError(t, err)
	run, _ := goja.AssertFunction(fn)
	eng := csl.New(csl.Options{Resolver: r})

	type row struct{ total, ref, proc, applies, render int }
	cats := map[string]*row{}
	var failures []string
	for _, f := range fs {
		c := cats[f.Category]
		if c == nil {
			c = &row{}
			cats[f.Category] = c
		}
		c.total++
		want := f.Result
		ref, rerr := runReference(vm, cslObj, run, r, f)
		refOK := rerr == nil && ref == want
		proc, perr := runProcessor(t, &prog, r, f)
		procOK := perr == nil && proc == want
		if refOK {
			c.ref++
		} else {
			failures = append(failures, fmt.Sprintf("%s: reference fails: %s", f.Name, describe(ref, rerr, want)))
		}
		if procOK {
			c.proc++
		} else {
			failures = append(failures, fmt.Sprintf("%s: processor API fails: %s", f.Name, describe(proc, perr, want)))
		}
		if os.Getenv("CSL_SUITE_ONLY") != "" {
			t.Logf("%s:\nwant %q\nref  %q (%v)\nproc %q (%v)", f.Name, want, ref, rerr, proc, perr)
		}
		// The Processor API runs citeproc-js with citefind's speed-ups
		// (speedups.js), the reference without: they must agree on every
		// fixture, not only on those the suite expects right.
		if rerr == nil && perr == nil && ref != proc {
			t.Errorf("%s: citefind's Processor API and citeproc-js disagree:\nciteproc-js %q\ncitefind    %q", f.Name, oneLine(ref, 300), oneLine(proc, 300))
		}
		if refOK && !procOK {
			t.Errorf("%s: citeproc-js passes, citefind's Processor API does not: %s", f.Name, describe(proc, perr, want))
		}
		if renderApplies(f) {
			c.applies++
			got, err := runRender(t, eng, r, f)
			if err == nil && got == want {
				c.render++
			} else {
				failures = append(failures, fmt.Sprintf("%s: Engine.Render fails: %s", f.Name, describe(got, err, want)))
				if refOK {
					t.Errorf("%s: citeproc-js passes, Engine.Render does not: %s", f.Name, describe(got, err, want))
				}
			}
		}
	}
	var names []string
	for k := range cats {
		names = append(names, k)
	}
	sort.Strings(names)
	var rep strings.Builder
	fmt.Fprintf(&rep, "| category | fixtures | citeproc-js (reference) | citefind Processor API | Render applies | Engine.Render |\n|---|---:|---:|---:|---:|---:|\n")
	var tot row
	for _, k := range names {
		c := cats[k]
		fmt.Fprintf(&rep, "| %s | %d | %d | %d | %d | %d |\n", k, c.total, c.ref, c.proc, c.applies, c.render)
		tot.total += c.total
		tot.ref += c.ref
		tot.proc += c.proc
		tot.applies += c.applies
		tot.render += c.render
	}
	fmt.Fprintf(&rep, "| **all** | %d | %d | %d | %d | %d |\n\n", tot.total, tot.ref, tot.proc, tot.applies, tot.render)
	for _, s := range skipped {
		fmt.Fprintf(&rep, "Not run: %s\n", s)
	}
	rep.WriteString("\nFailures:\n\n")
	for _, fl := range failures {
		rep.WriteString("- " + fl + "\n")
	}
	t.Logf("CSL test suite: %d fixtures; reference %d, Processor API %d, Engine.Render %d of %d", tot.total, tot.ref, tot.proc, tot.render, tot.applies)
	if p := os.Getenv("CSL_SUITE_REPORT"); p != "" {
		require.NoError(t, os.WriteFile(p, []byte(rep.String()), 0o644))
	}
	assert.GreaterOrEqual(t, tot.proc, tot.ref)
}

func describe(got string, err error, want string) string {
	if err != nil {
		return "error: " + oneLine(err.Error(), 300)
	}
	return fmt.Sprintf("got %q, want %q", oneLine(got, 300), oneLine(want, 300))
}

func oneLine(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", `\n`)
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// speedupJS renders items in a style with citeproc-js as a caller would:
// updateItems, a citation of each item, one of all of them, the
// bibliography; the result as JSON, or the exception's message.
const speedupJS = `(function (CSL, style, itemsJSON, retrieveLocale) {
  var items = {}, ids = [];
  JSON.parse(itemsJSON).forEach(function (it) { items[it.id] = it; ids.push(it.id); });
  try {
    var engine = new CSL.Engine({retrieveItem: function (id) { return items[id]; }, retrieveLocale: retrieveLocale}, style);
    engine.updateItems(ids);
    var out = {cites: ids.map(function (id) { return engine.makeCitationCluster([{id: id}]); })};
    out.all = engine.makeCitationCluster(ids.map(function (id) { return {id: id}; }));
    var bib = engine.makeBibliography();
    out.bib = bib ? bib[1] : null;
    return JSON.stringify(out);
  } catch (e) {
    return "exception: " + e;
  }
})`

// TestRealDataSpeedupsAcrossStyles renders items taken from the CSL test
// suite's fixtures (items citefind did not write) in a sample of the
// installed styles (Debian's citation-style-language-styles; dependent
// ones through their parent) with citeproc-js as published and with
// citefind's speed-ups, and requires the same citations and bibliography
// from both. Every 60th style by name (CITEFIND_SPEEDUP_STYLES=all: every
// style; CITEFIND_SPEEDUP_STEP=N: every Nth).
func TestRealDataSpeedupsAcrossStyles(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("builds dozens of styles twice")
	}
	fs, _ := loadSuite(t)
	r := csl.DefaultResolver(func(string) string { return "" })
	infos, err := r.List("")
	require.NoError(t, err)
	var names []string
	for _, in := range infos {
		if !in.Dependent {
			names = append(names, in.Name)
		}
	}
	if len(names) < 100 {
		t.Skipf("only %d independent styles installed (want Debian's citation-style-language-styles: make test-deps)", len(names))
	}
	step := 60
	if os.Getenv("CITEFIND_SPEEDUP_STYLES") == "all" {
		step = 1
	}
	// Items: the first input item of every 25th fixture, renamed apart.
	var items []map[string]any
	for i := 0; i < len(fs); i += 25 {
		if len(fs[i].Input) == 0 {
			continue
		}
		var it map[string]any
		if json.Unmarshal(fs[i].Input[0], &it) != nil {
			continue
		}
		it["id"] = fmt.Sprintf("item%d", i)
		items = append(items, it)
	}
	require.GreaterOrEqual(t, len(items), 20)
	itemsJSON, err := json.Marshal(items)
	require.NoError(t, err)

	var prog csl.Program
	render := func(name string, patched bool) string {
		vm, cslObj, err := prog.NewRuntime()
		require.NoError(t, err)
		if patched {
			got, err := prog.InstallSpeedups(vm, cslObj)
			require.NoError(t, err)
			require.NotEmpty(t, got)
		}
		st, err := r.Style(name)
		require.NoError(t, err)
		fn, err := vm.RunString(speedupJS)
		require.NoError(t, err)
		run, _ := goja.AssertFunction(fn)
		locale := func(call goja.FunctionCall) goja.Value {
			x, err := r.Locale(call.Argument(0).String())
			if err != nil {
				return vm.ToValue(false)
			}
			return vm.ToValue(regexp.MustCompile(`^\s*<\?[^>]*\?>\s*`).ReplaceAllString(string(x), ""))
		}
		v, err := run(goja.Undefined(), cslObj, vm.ToValue(string(st.XML)), vm.ToValue(string(itemsJSON)), vm.ToValue(locale))
		require.NoError(t, err)
		return v.String()
	}
	if s := os.Getenv("CITEFIND_SPEEDUP_STEP"); s != "" {
		step, err = strconv.Atoi(s)
		require.NoError(t, err)
	}
	n, exceptions, entries := 0, 0, 0
	for i := 0; i < len(names); i += step {
		want, got := render(names[i], false), render(names[i], true)
		assert.Equal(t, want, got, "style %s: citeproc-js with citefind's speed-ups renders otherwise", names[i])
		if strings.HasPrefix(want, "exception: ") {
			exceptions++
		} else {
			var out struct{ Bib []string }
			require.NoError(t, json.Unmarshal([]byte(want), &out), names[i])
			entries += len(out.Bib)
		}
		n++
	}
	t.Logf("%d styles, %d items: the same output with and without the speed-ups (%d bibliography entries; %d styles threw the same exception both ways)", n, len(items), entries, exceptions)
	assert.Greater(t, entries, n*len(items)/2, "most styles render a bibliography of the items")
}
