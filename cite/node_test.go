package cite_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/cite/csl"
	"github.com/citefind/citefind/internal/nodejs"
)

// nodeRunner renders documents with citeproc-js — the same
// citeproc_commonjs.js citefind embeds, unpatched — on Node.js (V8 and
// ICU, as Zotero runs it on Firefox's SpiderMonkey and ICU), making the
// calls csl.Engine.Render makes on a new processor (with its one change
// of citeproc-js's state after building the style, the date queue's):
// updateItems with
// every item, then each citation with makeCitationCluster (or the whole
// sequence with rebuildProcessorState for a style whose citations depend
// on their position, with the uncited items as uncited), then
// makeBibliography. Locales are read from the
// same folders as citefind's resolver, in the same order.
const nodeRunner = `
const fs = require("fs"), path = require("path");
const input = JSON.parse(fs.readFileSync(0, "utf8"));
const CSL = require(path.resolve(input.citeproc));
const stripDecl = (s) => s.replace(/^\s*<\?[^>]*\?>\s*/, "");
const out = [];
for (const job of input.jobs) {
  try {
    const items = {};
    for (const it of job.items) items[it.id] = it;
    const sys = {
      retrieveItem: (id) => items[id],
      retrieveLocale: (lang) => {
        for (const d of input.localeDirs) {
          const f = path.join(d, "locales-" + lang + ".xml");
          if (fs.existsSync(f)) return stripDecl(fs.readFileSync(f, "utf8"));
        }
        return false;
      },
    };
    const engine = new CSL.Engine(sys, fs.readFileSync(job.style, "utf8"));
    // As citefind's processor does (cite/csl/processor.go): the date
    // queue as the first date range leaves it.
    if (engine.tmp.date_token) {
      engine.dateput.string(engine, engine.dateput.queue);
      engine.dateput.openLevel(engine.tmp.date_token);
    }
    engine.updateItems(job.ids);
    let cites;
    if (job.positional) {
      const cs = job.citations.map((c) => ({citationID: c.id, citationItems: c.items, properties: {noteIndex: c.noteIndex}}));
      const cited = new Set(job.citations.flatMap((c) => c.items.map((ci) => ci.id)));
      cites = engine.rebuildProcessorState(cs, "html", job.ids.filter((id) => !cited.has(id))).map((r) => r[2]);
    } else {
      cites = job.citations.map((c) => engine.makeCitationCluster(c.items));
    }
    const bib = engine.makeBibliography();
    out.push(bib ? {citations: cites, hasBib: true, ids: bib[0].entry_ids, entries: bib[1]} : {citations: cites, hasBib: false});
  } catch (e) {
    out.push({error: String(e && e.stack || e)});
  }
}
process.stdout.write(JSON.stringify({node: process.version, icu: process.versions.icu, results: out}));
`

type nodeResult struct {
	Citations []string   `json:"citations"`
	HasBib    bool       `json:"hasBib"`
	IDs       [][]string `json:"ids"`
	Entries   []string   `json:"entries"`
	Error     string     `json:"error"`
}

// nodeRender renders doc in each style with citeproc-js on Node.js
// (nodeRunner); nil, "" when node is not installed.
func nodeRender(t *testing.T, styles []*csl.Style, doc csl.Document, localeDirs []string) ([]nodeResult, string) {
	t.Helper()
	if nodejs.Path() == "" {
		return nil, ""
	}
	type cite struct {
		ID        string         `json:"id"`
		Items     []csl.CiteItem `json:"items"`
		NoteIndex int            `json:"noteIndex"`
	}
	type job struct {
		Style      string            `json:"style"`
		Positional bool              `json:"positional"`
		IDs        []string          `json:"ids"`
		Items      []json.RawMessage `json:"items"`
		Citations  []cite            `json:"citations"`
	}
	var jobs []job
	for _, st := range styles {
		j := job{Style: st.File, Positional: st.Positional()}
		for _, it := range doc.Items {
			j.IDs = append(j.IDs, it.ID)
			j.Items = append(j.Items, it.JSON)
		}
		for i, c := range doc.Citations {
			n := c.NoteIndex
			if st.Class == "note" && n == 0 {
				n = i + 1 // Render: a citation without a note number is a footnote of its own
			}
			j.Citations = append(j.Citations, cite{c.ID, c.Items, n})
		}
		jobs = append(jobs, j)
	}
	dirs := append(append([]string(nil), localeDirs...), filepath.Join("csl", "dist", "locales"))
	var res struct {
		Node    string
		ICU     string
		Results []nodeResult
	}
	in := map[string]any{"citeproc": filepath.Join("csl", "dist", "citeproc_commonjs.js"), "localeDirs": dirs, "jobs": jobs}
	require.NoError(t, nodejs.Run(t.Context(), nodeRunner, in, &res))
	require.Len(t, res.Results, len(styles))
	return res.Results, "Node.js " + res.Node + ", ICU " + res.ICU
}

// compareNode compares citefind's rendering with citeproc-js's on
// Node.js, string for string (no normalisation): the citations in order,
// and the bibliography's entries in order with their items (citeproc-js
// leaves an entry that prints nothing out of its strings; its IDs are
// compared when it left none out). It returns the counts and the
// differences.
func compareNode(out *csl.Rendered, n nodeResult) (entries, entriesSame, cites, citesSame int, diffs []string) {
	if n.Error != "" {
		return len(out.Entries), 0, len(out.Citations), 0, []string{"citeproc-js on Node.js failed: " + n.Error}
	}
	cites = len(out.Citations)
	for i, c := range out.Citations {
		if i < len(n.Citations) && string(c) == n.Citations[i] {
			citesSame++
		} else if i < len(n.Citations) {
			diffs = append(diffs, "citation "+itoa(i+1)+"\n    node:     "+n.Citations[i]+"\n    citefind: "+string(c))
		}
	}
	if len(n.Citations) != len(out.Citations) {
		diffs = append(diffs, "citations: node "+itoa(len(n.Citations))+", citefind "+itoa(len(out.Citations)))
	}
	if out.HasBibliography != n.HasBib {
		return len(out.Entries), 0, cites, citesSame, append(diffs, "bibliography: only one engine has one")
	}
	var texts, ids []string
	aligned := len(n.Entries) == len(n.IDs)
	for k, e := range n.Entries {
		if e == "" {
			continue
		}
		texts = append(texts, e)
		if aligned && len(n.IDs[k]) > 0 {
			ids = append(ids, n.IDs[k][0])
		}
	}
	entries = max(len(out.Entries), len(texts))
	for k, e := range out.Entries {
		switch {
		case k >= len(texts):
			diffs = append(diffs, e.ID+": no entry from node")
		case string(e.Text) != texts[k] || aligned && e.ID != ids[k]:
			id := e.ID
			if aligned {
				id += " (node: " + ids[k] + ")"
			}
			diffs = append(diffs, id+"\n    node:     "+texts[k]+"\n    citefind: "+string(e.Text))
		default:
			entriesSame++
		}
	}
	return entries, entriesSame, cites, citesSame, diffs
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }
