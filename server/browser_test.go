package server_test

import (
	"context"
	"flag"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind"
	"github.com/citefind/citefind/cite/csl"
	"github.com/citefind/citefind/engine"
	"github.com/citefind/citefind/internal/ollamatest"
	"github.com/citefind/citefind/server"
	"github.com/citefind/citefind/server/internal/sampledb"
)

var screenshots = flag.String("screenshots", "", "save the browser test's screenshots as DIR/serve-*.png (e.g. ../docs/img)")

// chromium finds the browser: $CITEFIND_CHROMIUM, else Debian's chromium
// on the PATH (scripts/install-test-deps.sh installs it).
func chromium() string {
	if p := os.Getenv("CITEFIND_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// browser starts headless Chromium with a fresh profile and returns a
// chromedp context for one tab.
func browser(t *testing.T) context.Context {
	path := chromium()
	if path == "" {
		t.Skip("chromium is not installed: skipping the browser test (`make test-deps` or `apt-get install chromium` installs it; CITEFIND_CHROMIUM names another binary)")
	}
	profile, err := os.MkdirTemp("", "citefind-chromium-")
	require.NoError(t, err)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1200, 900),
		// Without these, Chromium's own connections to the outside are
		// refused on a closed network and slow every page down.
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.WithoutCancel(t.Context()), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
		// The browser's helpers may still write the profile for a moment
		// after it exits; the folder is temporary either way.
		for range 20 {
			if os.RemoveAll(profile) == nil {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
	// The first Run starts the browser; a failure to start is a failure
	// of the installed browser, reported as such.
	_, err = chromedp.Run(ctx, chromedp.Evaluate[int](`1`))
	require.NoError(t, err, "start %s", path)
	return ctx
}

// shoot saves the visible part of the page, scrolled to the element sel,
// as serve-NAME.png when -screenshots is set.
func shoot(t *testing.T, ctx context.Context, name, sel string) {
	if *screenshots == "" {
		return
	}
	eval[bool](t, ctx, `document.querySelector(`+strconv.Quote(sel)+`).scrollIntoView(), true`)
	buf, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(*screenshots, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(*screenshots, "serve-"+name+".png"), buf, 0o644))
}

// eval runs a JavaScript expression in the page and returns its value.
func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	require.NoError(t, err, js)
	return v
}

// waitFor waits until a JavaScript predicate holds in the page (at most
// a minute: a safety net, not a measurement).
func waitFor(t *testing.T, ctx context.Context, js string) {
	t.Helper()
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(time.Minute)))
	require.NoError(t, err, "waiting for %s", js)
}

// press sends a key as a keyboard does: one keyDown carrying its text,
// which the browser does not insert when a keydown handler prevents the
// default. (chromedp.KeyEvent sends the text as a separate char event,
// which the page cannot prevent: "/" and Enter would land in the box.)
func press(key, code, text string, keyCode int64) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		down := input.DispatchKeyEventParams{Type: input.DispatchKeyEventTypeKeyDown, Key: key, Code: code, Text: text,
			WindowsVirtualKeyCode: keyCode, NativeVirtualKeyCode: keyCode}
		if _, err := cdp.Call(ctx, t, input.DispatchKeyEvent, down); err != nil {
			return err
		}
		up := down
		up.Type, up.Text = input.DispatchKeyEventTypeKeyUp, ""
		_, err := cdp.Call(ctx, t, input.DispatchKeyEvent, up)
		return err
	})
}

// TestBrowser drives the web page in headless Chromium as a person would,
// with the keyboard: type a query, read the results, expand an abstract,
// switch the citation style, and read the page on a narrow window.
//
// With CITEFIND_E2E_DB it runs against that database (e.g. a copy of the
// ACM-CR one) and CITEFIND_E2E_QUERY, checking only what holds for any
// corpus; -screenshots DIR saves the pages.
func TestBrowser(t *testing.T) {
	ctx := browser(t)
	var eng *engine.Engine
	query := "We merge the BM25 and dense rankings with reciprocal rank fusion [CITATION], which needs no score calibration."
	sample := os.Getenv("CITEFIND_E2E_DB") == ""
	if sample {
		eng = sampledb.Open(t)
	} else {
		var err error
		eng, err = engine.Open(t.Context(), os.Getenv("CITEFIND_E2E_DB"), engine.Options{})
		require.NoError(t, err)
		defer eng.Close()
		if q := os.Getenv("CITEFIND_E2E_QUERY"); q != "" {
			query = q
		}
	}
	// CITEFIND_E2E_DENSE=1 searches with both retrievers (the database
	// needs a dense index), so that each hit shows both ranks.
	hybrid := os.Getenv("CITEFIND_E2E_DENSE") == "1"
	if hybrid {
		require.NoError(t, eng.DenseAvailable(t.Context()), "CITEFIND_E2E_DENSE=1")
	} else if !sample {
		hybrid = eng.DenseAvailable(t.Context()) == nil // the option is shown, not used
	}
	ts := httptest.NewServer(server.New(eng, server.Options{Styles: testStyles(), RequestTimeout: patientTimeout}).Handler())
	defer ts.Close()

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(ts.URL),
		chromedp.WaitVisible(chromedp.CSS("#q")),
	))
	waitFor(t, ctx, `document.querySelector("#health").textContent.includes("papers indexed")`)

	// "/" focuses the query box; Enter searches.
	eval[bool](t, ctx, `document.activeElement.blur(), true`)
	require.NoError(t, chromedp.Do(ctx, press("/", "Slash", "/", 191)))
	assert.Equal(t, "q", eval[string](t, ctx, `document.activeElement.id`))
	require.NoError(t, chromedp.Do(ctx, chromedp.KeyEvent(query)))
	if hybrid {
		require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#dense"))))
		require.NoError(t, chromedp.Do(ctx, chromedp.Focus(chromedp.CSS("#q"))))
	}
	require.NoError(t, chromedp.Do(ctx, press("Enter", "Enter", "\r", 13)))
	waitFor(t, ctx, `document.querySelectorAll("#results li.hit").length > 0`)
	assert.Equal(t, query, eval[string](t, ctx, `document.querySelector("#q").value`), "the keys typed, without the / and Enter")

	titles := eval[[]string](t, ctx, `Array.from(document.querySelectorAll("#results .hit .title-text")).map(e => e.textContent)`)
	require.NotEmpty(t, titles)
	assert.LessOrEqual(t, len(titles), 10)
	assert.Contains(t, eval[string](t, ctx, `document.querySelector("#status").textContent`), "candidates")
	// Without an LLM picker the top rank is a fallback, shown as such and
	// not as a pick; each hit shows its fused score and each retriever's
	// rank.
	assert.Zero(t, eval[int](t, ctx, `document.querySelectorAll("#results .hit.picked, #results .badge.pick").length`))
	assert.Equal(t, "Top rank (no picker)", eval[string](t, ctx, `document.querySelector("#results .hit:first-child .badge.pick-fallback").textContent`))
	assert.Equal(t, 1, eval[int](t, ctx, `document.querySelectorAll("#results .badge.pick-fallback").length`))
	// The dense option is offered only for a database with a dense index.
	assert.Equal(t, hybrid, eval[bool](t, ctx, `!document.querySelector("#dense-option").hidden`))
	badges := eval[[]string](t, ctx, `Array.from(document.querySelectorAll("#results .hit:first-child .badge")).map(e => e.textContent)`)
	var sources []string
	for _, b := range badges {
		switch {
		case strings.HasPrefix(b, "score "):
			assert.Regexp(t, `^score \d+\.\d{3}$`, b)
		case strings.Contains(b, " #"):
			sources = append(sources, b)
		}
	}
	if hybrid {
		require.Len(t, sources, 2, badges)
		assert.Regexp(t, `^bm25 #\d+$`, sources[0])
		assert.Regexp(t, `^dense #\d+$`, sources[1])
	} else {
		// The sample database runs the default pipeline: bm25, citing
		// and rm3 all rank the RRF paper first.
		assert.Equal(t, []string{"bm25 #1", "citing #1", "rm3 #1"}, sources)
	}
	meta := eval[string](t, ctx, `document.querySelector("#results .hit .meta").textContent`)
	if sample {
		// BibTeX titles are stored in sentence case (CSL data), {C}ondorcet protected.
		assert.Equal(t, "Reciprocal rank fusion outperforms Condorcet and individual rank learning methods", titles[0])
		assert.Equal(t, "Gordon V. Cormack, Charles L. A. Clarke, Stefan Büttcher · 2009 · Proceedings of the ACM SIGIR conference on research and development in information retrieval", meta)
	} else {
		assert.Regexp(t, `\d{4}|n\.d\.`, meta)
	}
	shoot(t, ctx, "results", "body")

	// Expand the first abstract with the keyboard.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Focus(chromedp.CSS("#results .hit:first-child button.expand")),
		press("Enter", "Enter", "\r", 13),
	))
	waitFor(t, ctx, `document.querySelector("#abs-0").dataset.loaded === "1" && !document.querySelector("#abs-0").hidden`)
	assert.Equal(t, "true", eval[string](t, ctx, `document.querySelector("#results .hit:first-child button.expand").getAttribute("aria-expanded")`))
	abstract := eval[string](t, ctx, `document.querySelector("#abs-0").textContent`)
	if sample {
		assert.Contains(t, abstract, "reciprocal of its rank")
	} else {
		assert.NotEmpty(t, abstract)
	}
	shoot(t, ctx, "abstract", "body")

	// The sample draft cites the top results in APA; switching the style
	// re-renders it.
	waitFor(t, ctx, `document.querySelector("#rendered").dataset.style === "apa" && document.querySelectorAll("#bib li").length > 0`)
	apa := eval[string](t, ctx, `document.querySelector("#rendered-text").textContent`)
	assert.NotContains(t, apa, "[[cite:")
	if sample {
		assert.Contains(t, apa, "(Cormack et al., 2009)")
	}
	// Keyboard: from the checked radio, the right arrow selects the next
	// style (IEEE), as in any radio group.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Focus(chromedp.CSS(`input[name="style"][value="apa"]`)),
		chromedp.KeyEvent(kb.ArrowRight),
	))
	waitFor(t, ctx, `document.querySelector("#rendered").dataset.style === "ieee"`)
	ieee := eval[string](t, ctx, `document.querySelector("#rendered-text").textContent`)
	assert.Contains(t, ieee, "[1]")
	assert.NotEqual(t, apa, ieee)
	bib := eval[[]string](t, ctx, `Array.from(document.querySelectorAll("#bib li")).map(e => e.textContent)`)
	require.NotEmpty(t, bib)
	assert.True(t, strings.HasPrefix(bib[0], "[1] "), bib[0])
	if sample {
		assert.True(t, strings.HasPrefix(bib[0], "[1] G. V. Cormack, C. L. A. Clarke, and S. Büttcher,"), bib[0])
	}
	shoot(t, ctx, "ieee", "#draft-section")

	// A note style named under "Other": footnote marks in the text, the
	// notes as a numbered list of their own, not inside the text.
	if _, err := csl.DefaultResolver(os.Getenv).Style("chicago-note-bibliography"); err != nil {
		t.Logf("note style not checked: Debian's CSL styles are not installed (scripts/install-test-deps.sh): %v", err)
	} else {
		require.NoError(t, chromedp.Do(ctx,
			chromedp.Focus(chromedp.CSS("#style-other")),
			chromedp.KeyEvent("chicago-note-bibliography"),
		))
		waitFor(t, ctx, `document.querySelector("#rendered").dataset.style === "chicago-note-bibliography"`)
		notes := eval[[]string](t, ctx, `Array.from(document.querySelectorAll("#notes li")).map(e => e.textContent)`)
		require.NotEmpty(t, notes)
		assert.False(t, eval[bool](t, ctx, `document.querySelector("#notes-h").hidden`))
		text := eval[string](t, ctx, `document.querySelector("#rendered-text").textContent`)
		assert.Contains(t, text, "¹")
		assert.NotContains(t, text, "Notes")
		assert.NotContains(t, text, notes[0])
		if sample {
			assert.True(t, strings.HasPrefix(notes[0], "Cormack, Clarke, and Büttcher,"), notes[0])
		}
		// Back to IEEE: no notes.
		require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`input[name="style"][value="ieee"]`))))
		waitFor(t, ctx, `document.querySelector("#rendered").dataset.style === "ieee"`)
		assert.True(t, eval[bool](t, ctx, `document.querySelector("#notes-h").hidden && document.querySelectorAll("#notes li").length === 0`))
	}

	// "Cite" on the second result adds it to the draft, by the user's key
	// when it has one (the sample's BibTeX keys).
	if len(titles) > 1 {
		require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#results .hit:nth-child(2) button.cite-btn"))))
		id := eval[string](t, ctx, `(d => d.key || d.id)(document.querySelector("#results .hit:nth-child(2)").dataset)`)
		assert.True(t, eval[bool](t, ctx, `document.querySelector("#draft").value.endsWith("[[cite:`+id+`]]")`))
		if sample {
			assert.NotContains(t, id, "/", "a sample paper is cited by its BibTeX key")
			assert.Contains(t, eval[string](t, ctx, `document.querySelector("#results .hit:nth-child(2) .meta.muted").textContent`), "key ")
		}
	}

	// A narrow window: nothing scrolls sideways.
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(375, 800)))
	waitFor(t, ctx, `window.innerWidth === 375`)
	assert.LessOrEqual(t, eval[int](t, ctx, `document.documentElement.scrollWidth`), 375)
	shoot(t, ctx, "narrow", "body")

	// An error is shown, not thrown: an empty search.
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(1200, 900)))
	eval[bool](t, ctx, `document.querySelector("#q").value = "   ", true`)
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#go"))))
	waitFor(t, ctx, `document.querySelector("#status").classList.contains("error")`)
}

// TestBrowserPick: when a model picks a candidate, that candidate (here
// the second) carries the "Picked" badge and the top rank none.
func TestBrowserPick(t *testing.T) {
	ctx := browser(t)
	const query = "We merge the BM25 and dense rankings with reciprocal rank fusion [CITATION]."
	plain := sampledb.Open(t)
	want, err := plain.Search(t.Context(), query, citefind.QueryOptions{K: 10})
	require.NoError(t, err)
	require.Greater(t, len(want.Hits), 1)
	second := want.Hits[1]
	fake := ollamatest.New(t, func(ollamatest.Request) ollamatest.Reply {
		return ollamatest.Reply{Content: `{"reasoning": "it fits", "title": ` + strconv.Quote(second.Title) + `}`}
	})
	eng, err := engine.Open(t.Context(), sampledb.Build(t), engine.Options{LLM: "fake-model", Ollama: fake.Client()})
	require.NoError(t, err)
	defer eng.Close()
	ts := httptest.NewServer(server.New(eng, server.Options{RequestTimeout: patientTimeout}).Handler())
	defer ts.Close()
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(ts.URL+"/?q="+url.QueryEscape(query)),
	))
	waitFor(t, ctx, `document.querySelectorAll("#results li.hit").length > 0`)
	assert.Equal(t, second.ID, eval[string](t, ctx, `document.querySelector("#results .hit.picked").dataset.id`))
	assert.Equal(t, "Picked", eval[string](t, ctx, `document.querySelector("#results .hit.picked .badge.pick").textContent`))
	assert.Zero(t, eval[int](t, ctx, `document.querySelectorAll("#results .hit:first-child .badge.pick, #results .badge.pick-fallback").length`))
}
