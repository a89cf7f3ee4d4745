// citefind web page: talks to the JSON API of the same server. No
// framework, nothing loaded from elsewhere; results are built with
// textContent, never innerHTML, since titles and abstracts are data.
"use strict";

const $ = (sel) => document.querySelector(sel);
const state = { hits: [], draftEdited: false, citeSeq: 0, citeTimer: 0 };

function el(tag, props, ...children) {
  const e = document.createElement(tag);
  Object.assign(e, props || {});
  for (const c of children) if (c != null) e.append(c);
  return e;
}

async function api(method, path, body) {
  const resp = await fetch(path, {
    method,
    headers: body ? { "Content-Type": "application/json" } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  const data = await resp.json().catch(() => ({ error: resp.statusText }));
  if (!resp.ok) {
    const err = new Error(data.field ? `${data.field}: ${data.error}` : data.error);
    err.data = data;
    throw err;
  }
  return data;
}

function setStatus(text, isError) {
  const s = $("#status");
  s.textContent = text;
  s.classList.toggle("error", !!isError);
}

function authorsShort(as) {
  if (!as || as.length === 0) return "";
  return as.length > 3 ? as[0] + " et al." : as.join(", ");
}

async function search(ev) {
  if (ev) ev.preventDefault();
  const query = $("#q").value.trim();
  if (!query) { setStatus("Type some text to search for.", true); $("#q").focus(); return; }
  const req = { query, k: Number($("#k").value), pick: $("#pick").checked };
  // The option is shown only for a database with a dense index (/healthz).
  if (!$("#dense-option").hidden && $("#dense").checked) req.retrievers = ["bm25", "dense"];
  setStatus("Searching…");
  $("#go").disabled = true;
  try {
    const res = await api("POST", "/v1/search", req);
    render(res);
  } catch (e) {
    setStatus(e.message, true);
  } finally {
    $("#go").disabled = false;
  }
}

function render(res) {
  state.hits = res.hits;
  const list = $("#results");
  list.replaceChildren();
  // A pick is a model's choice; without a model the server falls back to
  // the top rank ("fallback": true), which is shown as that, not as a pick.
  const picked = res.picked && !res.picked.fallback ? res.picked.id : "";
  const fallback = res.picked && res.picked.fallback ? res.picked.id : "";
  res.hits.forEach((h, i) => {
    const absID = "abs-" + i;
    const title = el("h3", {}, el("span", { className: "rank", textContent: h.rank + "." }),
      el("span", { className: "title-text", textContent: h.title || "(untitled)" }));
    const meta = [authorsShort(h.authors), h.year || "n.d.", h.venue].filter(Boolean).join(" · ");
    const scores = el("p", { className: "scores" });
    scores.append(el("span", { className: "badge", title: "fused score", textContent: "score " + h.score.toFixed(3) }));
    for (const [name, src] of Object.entries(h.sources || {}).sort()) {
      scores.append(el("span", { className: "badge source", title: `${name} score ${src.score.toFixed(3)}`,
        textContent: `${name} #${src.rank}` }));
    }
    const item = el("li", { className: "hit" });
    item.dataset.id = h.id;
    if (h.key) item.dataset.key = h.key;
    if (h.id === picked) {
      item.classList.add("picked");
      title.append(" ", el("span", { className: "badge pick", textContent: "Picked",
        title: res.picked.reason || "the candidate to cite" }));
    } else if (h.id === fallback) {
      title.append(" ", el("span", { className: "badge pick-fallback", textContent: "Top rank (no picker)",
        title: res.picked.reason || "no model picked a candidate: this is the top rank" }));
    }
    const abs = el("div", { className: "abstract", id: absID, hidden: true });
    const expand = el("button", { type: "button", className: "expand", textContent: "Show abstract" });
    expand.setAttribute("aria-expanded", "false");
    expand.setAttribute("aria-controls", absID);
    expand.addEventListener("click", () => toggleAbstract(h.id, expand, abs));
    const citeBtn = el("button", { type: "button", className: "cite-btn", textContent: "Cite" });
    citeBtn.setAttribute("aria-label", "Add a citation of “" + (h.title || h.id) + "” to the draft");
    citeBtn.addEventListener("click", () => addToDraft(h.key || h.id));
    item.append(title, el("p", { className: "meta", textContent: meta }), scores,
      el("p", { className: "meta muted", textContent: "id " + h.id + (h.key ? " · key " + h.key : "") }),
      el("div", { className: "actions" }, expand, citeBtn), abs);
    list.append(item);
  });
  const warn = (res.warnings || []).filter((w) => !w.startsWith("no LLM picker"));
  setStatus(`${res.hits.length} candidate${res.hits.length === 1 ? "" : "s"}` +
    (res.cleaned && res.cleaned !== res.query ? ` for “${res.cleaned}”` : "") +
    (warn.length ? " — " + warn.join("; ") : ""));
  if (!state.draftEdited && res.hits.length > 0) {
    $("#draft").value = sampleDraft(res.hits);
    renderDraft();
  }
}

function sampleDraft(hits) {
  const a = hits[0].id, b = hits.length > 1 ? hits[1].id : null;
  let s = `The closest match is ${hits[0].title ? "“" + hits[0].title + "”" : "the first result"} [[cite:${a}]].`;
  if (b) s += ` A related approach is described by [[cite:${b}]], and both are compared in [[cite:${a},${b}]].`;
  return s;
}

async function toggleAbstract(id, button, box) {
  const open = button.getAttribute("aria-expanded") === "true";
  if (open) {
    button.setAttribute("aria-expanded", "false");
    button.textContent = "Show abstract";
    box.hidden = true;
    return;
  }
  if (!box.dataset.loaded) {
    box.textContent = "Loading…";
    box.hidden = false;
    try {
      // The whole ID is one path segment (its "/" escaped too), so that no
      // ID can walk out of /v1/papers/ ("..").
      const p = await api("GET", "/v1/papers/" + encodeURIComponent(id));
      box.replaceChildren(el("p", { textContent: p.abstract || "No abstract in the corpus." }));
      if (p.keywords && p.keywords.length) box.append(el("p", { className: "muted", textContent: "Keywords: " + p.keywords.join(", ") }));
      if (p.doi) box.append(el("p", {}, "DOI ", el("a", { href: "https://doi.org/" + p.doi, textContent: p.doi, rel: "noreferrer" })));
      box.dataset.loaded = "1";
    } catch (e) {
      box.textContent = e.message;
    }
  }
  box.hidden = false;
  button.setAttribute("aria-expanded", "true");
  button.textContent = "Hide abstract";
}

function addToDraft(id) {
  const d = $("#draft");
  d.value = (d.value.trimEnd() + ` [[cite:${id}]]`).trimStart();
  state.draftEdited = true;
  renderDraft();
}

function currentStyle() {
  const r = document.querySelector('input[name="style"]:checked');
  if (r && r.value === "other") return $("#style-other").value.trim() || "apa";
  return r ? r.value : "apa";
}

// clearRendered empties the notes, bibliography and warnings under the text.
function clearRendered() {
  for (const id of ["#notes", "#bib", "#cite-warnings"]) $(id).replaceChildren();
  $("#notes-h").hidden = true;
  $("#bib-h").hidden = true;
}

async function renderDraft() {
  const draft = $("#draft").value;
  const seq = ++state.citeSeq;
  const out = $("#rendered-text"), bib = $("#bib"), warns = $("#cite-warnings");
  if (!draft.trim()) {
    out.textContent = ""; clearRendered();
    return;
  }
  try {
    const res = await api("POST", "/v1/cite", { draft, style: currentStyle(), format: "text", lenient: true });
    if (seq !== state.citeSeq) return; // a newer rendering is on its way
    // The text output ends with the bibliography; show it as a list instead.
    let text = res.text;
    if (res.bibliography) {
      const at = text.lastIndexOf("\n\n" + res.bibliography.heading + "\n\n");
      if (at >= 0) text = text.slice(0, at);
      $("#bib-h").textContent = res.bibliography.heading;
    }
    // A note style's footnotes (chicago-note-bibliography, …) come before
    // it, under "Notes": show them as a numbered list too.
    const notes = res.notes || [];
    if (notes.length) {
      const at = text.lastIndexOf("\n\nNotes\n\n");
      if (at >= 0) text = text.slice(0, at);
    }
    out.textContent = text.trim();
    $("#notes").replaceChildren(...notes.map((n) => el("li", { textContent: n })));
    $("#notes-h").hidden = !notes.length;
    bib.replaceChildren(...(res.bibliography ? res.bibliography.entries.map((e) => el("li", { textContent: e })) : []));
    $("#bib-h").hidden = !res.bibliography;
    warns.replaceChildren(...res.warnings.map((w) => el("li", { textContent: `${w.id}: ${w.message}` })));
    $("#rendered").dataset.style = currentStyle();
  } catch (e) {
    if (seq !== state.citeSeq) return;
    out.textContent = e.message;
    clearRendered();
  }
}

async function health() {
  try {
    const h = await api("GET", "/healthz");
    $("#health").textContent = `${h.papers.toLocaleString()} papers indexed.`;
    $("#dense-option").hidden = !h.dense;
    if (!h.dense) $("#dense").checked = false;
  } catch (e) {
    $("#health").textContent = "The index is not available: " + e.message;
  }
}

document.addEventListener("DOMContentLoaded", () => {
  $("#search").addEventListener("submit", search);
  $("#q").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) search(e);
  });
  document.addEventListener("keydown", (e) => {
    const t = e.target;
    const typing = t instanceof HTMLTextAreaElement || t instanceof HTMLInputElement || t instanceof HTMLSelectElement;
    if (e.key === "/" && !typing) { e.preventDefault(); $("#q").focus(); }
  });
  for (const r of document.querySelectorAll('input[name="style"]')) r.addEventListener("change", renderDraft);
  // Any CSL style by name (nature, acm-sig-proceedings, …): typing picks "Other".
  $("#style-other").addEventListener("input", () => {
    $("#style-other-radio").checked = true;
    clearTimeout(state.citeTimer);
    state.citeTimer = setTimeout(renderDraft, 400);
  });
  $("#draft").addEventListener("input", () => {
    state.draftEdited = true;
    clearTimeout(state.citeTimer);
    state.citeTimer = setTimeout(renderDraft, 250);
  });
  health();
  const q = new URLSearchParams(location.search).get("q");
  if (q) { $("#q").value = q; search(); }
});
