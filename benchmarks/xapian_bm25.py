#!/usr/bin/python3
"""Reference BM25 run with Xapian on ACM-CR, for peer comparison with citefind.

Reads the ACM-CR BibTeX files, applies the upstream indexing rules
(src/bibtex_to_trec.py of boudinfl/acm-cr), indexes title + abstract + keywords
with Xapian (English stemmer, STEM_SOME), runs both topic sets with BM25 and
scores them the way trec_eval does.

Standard library + the Debian python3-xapian binding only, so run it with
/usr/bin/python3 (the binding is not installed for pyenv interpreters):

    /usr/bin/python3 benchmarks/xapian_bm25.py --data ../shared/data/acm-cr \
        --out benchmarks/out/xapian [--k1 1.2 --b 0.75] [--depth 100] [--json]

See benchmarks/README.md for the choices made and measured results.
"""

import argparse
import glob
import html
import json
import math
import os
import re
import resource
import shutil
import sys
import tempfile
import time
import unicodedata

try:
    import xapian
except ImportError:  # pragma: no cover - environment problem, explain it
    sys.exit("xapian_bm25.py: cannot import xapian; run it with /usr/bin/python3 "
             "(Debian python3-xapian, see benchmarks/setup-xapian.sh); "
             "this interpreter is %s" % sys.executable)

EXPECTED_DOCS = 108857  # data/README.md, "documents after the upstream indexing rules"
RUN_TAG = "xapian-bm25"
RECALL_KS = (1, 5, 10, 20, 50, 100)
DUP_TOPIC = "340982510"

# --------------------------------------------------------------------------
# BibTeX reading (brace matching; ACM DL export incl. the jasist.bib layout)
# --------------------------------------------------------------------------

_ENTRY_RE = re.compile(r"@\s*([A-Za-z]+)\s*\{\s*([^,\s{}]+)\s*,")
_FIELD_RE = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_:.+-]*)\s*=\s*")
_BRACE_RE = re.compile(r"[{}]")
_BARE_RE = re.compile(r"[^,}\s]*")
_WS_RE = re.compile(r"\s+")


def _match_brace(text, pos):
    """text[pos] == '{'; return the index just after its matching '}'."""
    depth = 0
    n = len(text)
    while pos < n:
        m = _BRACE_RE.search(text, pos)
        if m is None:
            break
        if m.group() == "{":
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return m.end()
        pos = m.end()
    raise ValueError("unbalanced braces")


def parse_bibtex(text, path=""):
    """Yield (type, key, {field: raw value}) for every entry in text.

    Values: braced (nested braces kept as-is, outer pair removed), quoted, or
    bare (month macros, numbers). Whitespace of any kind (TABs, line breaks of
    hard-wrapped values) is collapsed to single spaces.
    """
    pos = 0
    n = len(text)
    while True:
        m = _ENTRY_RE.search(text, pos)
        if m is None:
            return
        etype, key = m.group(1), m.group(2)
        pos = m.end()
        fields = {}
        while pos < n:
            # skip separators between fields
            while pos < n and (text[pos].isspace() or text[pos] == ","):
                pos += 1
            if pos >= n:
                break
            if text[pos] == "}":  # end of entry
                pos += 1
                break
            fm = _FIELD_RE.match(text, pos)
            if fm is None:
                # malformed; resynchronise on the next entry
                sys.stderr.write("warning: %s: cannot parse field near %r in %s\n"
                                 % (path, text[pos:pos + 40], key))
                break
            name = fm.group(1).lower()
            pos = fm.end()
            if pos < n and text[pos] == "{":
                end = _match_brace(text, pos)
                value = text[pos + 1:end - 1]
                pos = end
            elif pos < n and text[pos] == '"':
                end = text.index('"', pos + 1)
                value = text[pos + 1:end]
                pos = end + 1
            else:
                bm = _BARE_RE.match(text, pos)
                value = bm.group()
                pos = bm.end()
            fields[name] = _WS_RE.sub(" ", value).strip()
        yield etype, key, fields


# --------------------------------------------------------------------------
# Text clean-up: LaTeX -> Unicode (roughly), HTML entities and tags
# --------------------------------------------------------------------------

_ACCENTS = {
    "'": "\u0301", "`": "\u0300", "^": "\u0302", '"': "\u0308", "~": "\u0303",
    "=": "\u0304", ".": "\u0307", "u": "\u0306", "v": "\u030c", "H": "\u030b",
    "c": "\u0327", "k": "\u0328", "r": "\u030a", "d": "\u0323", "b": "\u0331",
}
_SYMBOLS = {
    "i": "i", "j": "j", "o": "\u00f8", "O": "\u00d8", "l": "\u0142",
    "L": "\u0141", "ae": "\u00e6", "AE": "\u00c6", "oe": "\u0153", "OE": "\u0152",
    "aa": "\u00e5", "AA": "\u00c5", "ss": "\u00df", "dh": "\u00f0", "DH": "\u00d0",
    "th": "\u00fe", "TH": "\u00de", "texttimes": "\u00d7", "times": "\u00d7",
    "&": "&", "%": "%", "_": "_", "#": "#", "$": "$",
}
# accent command + argument: \'{e}  \'e  \c{c}  \c c  \'{\i}  \"{}
_ACCENT_RE = re.compile(
    r"\\([`'^\"~=.]|[uvHckrdb](?![A-Za-z]))\s*(?:\{\s*(\\[A-Za-z]+|[^{}\\]?)\s*\}|(\\[A-Za-z]+|[A-Za-z]))")
_SYMBOL_RE = re.compile(r"\\([A-Za-z]+|[&%_#$])(?:\{\})?")
_TAG_RE = re.compile(r"</?[A-Za-z][^<>]*>")


def _accent(m):
    cmd, base = m.group(1), m.group(2) if m.group(2) is not None else m.group(3)
    if base and base.startswith("\\"):
        base = _SYMBOLS.get(base[1:], base[1:])
    if base in ("\u0131", "i"):
        base = "i"  # \'{\i} -> í
    mark = _ACCENTS.get(cmd, "")
    return unicodedata.normalize("NFC", (base or "") + mark) if base else ""


def _symbol(m):
    name = m.group(1)
    if name in _SYMBOLS:
        return _SYMBOLS[name]
    return " " + name + " "  # \epsilon, \log, ... -> the word itself


def clean_text(s):
    """LaTeX accents/commands -> Unicode, strip HTML tags, unescape entities."""
    if "\\" in s:
        s = _ACCENT_RE.sub(_accent, s)
        s = _SYMBOL_RE.sub(_symbol, s)
    if "{" in s or "}" in s or "$" in s:
        s = s.replace("{", "").replace("}", "").replace("$", " ")
    if "<" in s:
        s = _TAG_RE.sub(" ", s)
    if "&" in s:
        s = html.unescape(s)
        if "&" in s:  # double-escaped (&amp;lt;)
            s = html.unescape(s)
        if "<" in s:
            s = _TAG_RE.sub(" ", s)
    return _WS_RE.sub(" ", s).strip()


# --------------------------------------------------------------------------
# Collection (upstream rules)
# --------------------------------------------------------------------------

def load_collection(data_dir):
    """Return (docs, stats): docs = {key: (title, abstract, keywords)}.

    Upstream rules (src/bibtex_to_trec.py): per entry, keep only types
    article/inproceedings, drop "session" records (title starts with
    "session", case-insensitive, and no abstract field), drop blacklisted
    keys; the surviving entry read last wins for a duplicate key. Files are
    read in sorted path order.
    """
    bibdir = os.path.join(data_dir, "data", "acm-dl")
    files = sorted(glob.glob(os.path.join(bibdir, "**", "*.bib"), recursive=True))
    if not files:
        sys.exit("no .bib files under %s" % bibdir)
    with open(os.path.join(data_dir, "data", "topics+qrels", "blacklist.txt"),
              encoding="utf-8") as f:
        blacklist = set(line.strip() for line in f if line.strip())
    raw = {}
    st = {"files": len(files), "entries": 0, "wrong_type": 0, "session": 0,
          "blacklisted": 0, "overwritten": 0}
    for path in files:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for etype, key, fields in parse_bibtex(text, path):
            st["entries"] += 1
            if etype.lower() not in ("article", "inproceedings"):
                st["wrong_type"] += 1
                continue
            if fields.get("title", "").lower().startswith("session") and "abstract" not in fields:
                st["session"] += 1
                continue
            if key in blacklist:
                st["blacklisted"] += 1
                continue
            if key in raw:
                st["overwritten"] += 1
            raw[key] = (fields.get("title", ""), fields.get("abstract", ""),
                        fields.get("keywords", ""))
    docs = {k: tuple(clean_text(v) for v in vals) for k, vals in raw.items()}
    st["with_abstract"] = sum(1 for v in docs.values() if v[1])
    st["with_keywords"] = sum(1 for v in docs.values() if v[2])
    return docs, st


# --------------------------------------------------------------------------
# Topics, qrels, query cleaning
# --------------------------------------------------------------------------

def read_topics(path):
    """[(qid, desc)] in file order; a repeated id gets '#2', '#3', ..."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    out, seen = [], {}
    for block in re.findall(r"<top>(.*?)</top>", text, re.S):
        num = re.search(r"<num>\s*Number:\s*(\S+)", block).group(1)
        desc = re.search(r"<desc>\s*Description:\s*(.*?)\s*(?:<narr>|$)", block, re.S).group(1)
        seen[num] = seen.get(num, 0) + 1
        qid = num if seen[num] == 1 else "%s#%d" % (num, seen[num])
        out.append((qid, _WS_RE.sub(" ", desc).strip()))
    return out


def read_qrels(path):
    qrels = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            parts = line.split()
            if len(parts) < 4:
                continue
            if int(parts[3]) > 0:
                qrels.setdefault(parts[0], set()).add(parts[2])
    return qrels


_DASH = "-\u2010\u2011\u2012\u2013\u2014\u2212"
_NUM = r"[%s]?\s*\d+(?:\s*[%s]\s*\d+)?" % (_DASH, _DASH)
_MARKER_RE = re.compile(r"\[\s*%s(?:\s*[,;]\s*%s)*\s*\]|\[\s*CITATIONS?\s*\]" % (_NUM, _NUM),
                        re.I)


def clean_query(s):
    """Strip numeric citation markers ([12], [12, 14–16], [3-5], [CITATION])."""
    return _WS_RE.sub(" ", _MARKER_RE.sub(" ", s)).strip()


# Xapian's QueryParser turns words joined by a "phrase generator" character
# (. - / : @ \) into an OP_PHRASE sub-query ("eye-movements" ->
# eye PHRASE movements) even with flags=0, and a double-quoted word becomes an
# unstemmed phrase term.  For bag-of-words BM25 we split such words instead,
# except inside numbers (3.5, 1,000) and dotted acronyms (U.S.A.), which the
# QueryParser and TermGenerator both keep as one term.
_ACRONYM_RE = re.compile(r"\b(?:[A-Z]\.){2,}")
_PHRASEGEN_RE = re.compile(r"(?<=\w)[.\-/:@\\](?=\w)")


def neutralise_phrases(s):
    protected = []

    def keep(m):
        protected.append(m.group())
        return "\x00%d\x00" % (len(protected) - 1)

    s = _ACRONYM_RE.sub(keep, s)

    def split(m):
        i = m.start()
        if m.group() == "." and s[i - 1].isdigit() and s[i + 1].isdigit():
            return "."
        return " "

    s = _PHRASEGEN_RE.sub(split, s)
    s = s.replace('"', " ")
    return re.sub(r"\x00(\d+)\x00", lambda m: protected[int(m.group(1))], s)


# --------------------------------------------------------------------------
# Metrics (as trec_eval: ties by score desc, then docno desc)
# --------------------------------------------------------------------------

def trec_order(hits):
    """hits: [(docid, score_str)] -> docids in trec_eval's evaluation order."""
    return [d for d, _ in sorted(hits, key=lambda h: (-float(h[1]), _Rev(h[0])))]


class _Rev(str):
    __slots__ = ()

    def __lt__(self, other):
        return str.__gt__(self, other)


def query_metrics(ranked, rel):
    m = {}
    for k in RECALL_KS:
        m["recall@%d" % k] = len(rel.intersection(ranked[:k])) / len(rel)
    dcg = sum(1.0 / math.log2(i + 2) for i, d in enumerate(ranked[:10]) if d in rel)
    idcg = sum(1.0 / math.log2(i + 2) for i in range(min(len(rel), 10)))
    m["ndcg@10"] = dcg / idcg
    m["mrr@10"] = next((1.0 / (i + 1) for i, d in enumerate(ranked[:10]) if d in rel), 0.0)
    return m


def percentile(values, p):
    """Nearest-rank percentile (p in 0..100)."""
    if not values:
        return float("nan")
    v = sorted(values)
    k = max(1, math.ceil(p / 100.0 * len(v)))
    return v[k - 1]


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------

def peak_rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default="../shared/data/acm-cr", help="ACM-CR folder")
    ap.add_argument("--out", default="benchmarks/out/xapian", help="output folder")
    ap.add_argument("--k1", type=float, default=1.2)
    ap.add_argument("--b", type=float, default=0.75)
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--json", action="store_true", help="print the JSON summary")
    ap.add_argument("--db", default=None,
                    help="index folder (default: a temp dir, removed at the end); "
                         "if given it is overwritten and kept")
    ap.add_argument("--raw-queries", action="store_true",
                    help="pass the cleaned text to the QueryParser as-is (hyphenated "
                         "words become phrase queries), for comparison")
    ap.add_argument("--keep-markers", action="store_true",
                    help="do not strip citation markers from the queries")
    ap.add_argument("--reuse-db", action="store_true",
                    help="with --db: query an existing index instead of rebuilding it "
                         "(for query-side experiments; no ingest timings)")
    ap.add_argument("--expect-docs", type=int, default=EXPECTED_DOCS,
                    help="fail if the collection size differs (0: do not check)")
    args = ap.parse_args()

    os.makedirs(args.out, exist_ok=True)
    log = sys.stderr

    # ---- ingest ---------------------------------------------------------
    if args.reuse_db and not args.db:
        sys.exit("--reuse-db needs --db")
    reuse = bool(args.reuse_db and os.path.exists(args.db))
    tmpdir = None
    if args.db:
        dbpath = args.db
    else:
        tmpdir = tempfile.mkdtemp(prefix="xapian-acmcr-")
        dbpath = os.path.join(tmpdir, "db")
    stem = xapian.Stem("english")
    parse_s = index_s = None
    rss_after_parse = None
    try:
        if reuse:
            db = xapian.Database(dbpath)
            keys = [None] * (db.get_lastdocid() + 1)
            for did in range(1, db.get_lastdocid() + 1):
                keys[did] = db.get_document(did).get_data().decode("utf-8")
            log.write("reusing index %s (%d documents)\n" % (dbpath, db.get_doccount()))
        else:
            t0 = time.perf_counter()
            docs, st = load_collection(args.data)
            parse_s = time.perf_counter() - t0
            rss_after_parse = peak_rss_mib()
            log.write("parsed %d entries from %d files in %.1fs -> %d documents "
                      "(%d with abstract, %d with keywords; dropped: %d other types, "
                      "%d session, %d blacklisted; %d duplicate keys overwritten)\n"
                      % (st["entries"], st["files"], parse_s, len(docs), st["with_abstract"],
                         st["with_keywords"], st["wrong_type"], st["session"],
                         st["blacklisted"], st["overwritten"]))
            if args.expect_docs and len(docs) != args.expect_docs:
                sys.exit("document count %d != expected %d" % (len(docs), args.expect_docs))

            t1 = time.perf_counter()
            db = xapian.WritableDatabase(dbpath, xapian.DB_CREATE_OR_OVERWRITE)
            tg = xapian.TermGenerator()
            tg.set_stemmer(stem)
            tg.set_stemming_strategy(xapian.TermGenerator.STEM_SOME)
            keys = [None]  # docid -> key (docids are assigned 1, 2, 3, ...)
            for key in sorted(docs):
                title, abstract, keywords = docs[key]
                doc = xapian.Document()
                tg.set_document(doc)
                tg.index_text(title)
                tg.increase_termpos()
                tg.index_text(abstract)
                tg.increase_termpos()
                tg.index_text(keywords)
                doc.set_data(key)
                doc.add_boolean_term("Q" + key)
                did = db.add_document(doc)
                if did != len(keys):
                    raise RuntimeError("unexpected docid %d" % did)
                keys.append(key)
            db.commit()
            index_s = time.perf_counter() - t1
            del docs
        ndocs = db.get_doccount()
        avlen = db.get_avlength()
        if index_s is not None:
            log.write("indexed %d documents in %.1fs (avg length %.1f terms)\n"
                      % (ndocs, index_s, avlen))

        # ---- queries ----------------------------------------------------
        qp = xapian.QueryParser()
        qp.set_stemmer(stem)
        qp.set_stemming_strategy(xapian.QueryParser.STEM_SOME)
        qp.set_default_op(xapian.Query.OP_OR)
        qp.set_database(db)
        enq = xapian.Enquire(db)
        enq.set_weighting_scheme(xapian.BM25Weight(args.k1, 0.0, 1.0, args.b, 0.5))

        tq = os.path.join(args.data, "data", "topics+qrels")
        summary_sets = {}
        all_lat = []
        case_note = {}
        for name in ("contexts", "sentences"):
            topics = read_topics(os.path.join(tq, name + ".topics"))
            qrels = read_qrels(os.path.join(tq, name + ".qrels"))
            lat, run = [], {}
            empty = 0
            for qid, desc in topics:
                text = desc if args.keep_markers else clean_query(desc)
                if not args.raw_queries:
                    text = neutralise_phrases(text)
                s = time.perf_counter()
                query = qp.parse_query(text, 0)
                enq.set_query(query)
                mset = enq.get_mset(0, args.depth)
                lat.append((time.perf_counter() - s) * 1000.0)
                hits = [(keys[it.docid], "%.6f" % it.weight) for it in mset]
                if not hits:
                    empty += 1
                run[qid] = hits
            all_lat.extend(lat)
            runfile = os.path.join(args.out, "%s.%s.run" % (RUN_TAG, name))
            with open(runfile, "w", encoding="utf-8") as f:
                for qid, _ in topics:
                    for rank, (d, sc) in enumerate(run[qid], 1):
                        f.write("%s Q0 %s %d %s %s\n" % (qid, d, rank, sc, RUN_TAG))

            def evaluate(fold):
                per = []
                missing = 0
                coll = set(fold(k) for k in keys[1:])
                for qid, _ in topics:
                    base = qid.split("#")[0]
                    rel = qrels.get(base)
                    if not rel:
                        continue
                    rel = set(fold(d) for d in rel)
                    missing += sum(1 for d in rel if d not in coll)
                    ranked = [fold(d) for d in trec_order(run[qid])]
                    per.append(query_metrics(ranked, rel))
                agg = {k: sum(p[k] for p in per) / len(per) for k in per[0]}
                return len(per), agg, missing

            nq, agg, missing = evaluate(lambda x: x)
            _, agg_ci, _ = evaluate(str.lower)
            case_note[name] = max(abs(agg[k] - agg_ci[k]) for k in agg)
            entry = {"queries": nq, "topics": len(topics)}
            entry.update({k: round(v, 4) for k, v in agg.items()})
            entry["relevant_missing_from_collection"] = missing
            entry["empty_results"] = empty
            entry["latency_ms"] = {"p50": round(percentile(lat, 50), 3),
                                   "p99": round(percentile(lat, 99), 3),
                                   "mean": round(sum(lat) / len(lat), 3)}
            entry["run_file"] = runfile
            summary_sets[name] = entry
    finally:
        if tmpdir:
            shutil.rmtree(tmpdir, ignore_errors=True)

    summary = {
        "engine": "xapian",
        "version": xapian.version_string(),
        "k1": args.k1, "b": args.b, "k2": 0.0, "k3": 1.0, "min_normlen": 0.5,
        "depth": args.depth,
        "stemming": "english, STEM_SOME",
        "query_parser": "flags=0, OP_OR" + ("" if args.raw_queries
                                            else ", phrase generators split"),
        "markers_stripped": not args.keep_markers,
        "docs": ndocs,
        "avg_doc_length": round(avlen, 2),
        "parse_seconds": None if reuse else round(parse_s, 2),
        "index_seconds": None if reuse else round(index_s, 2),
        "ingest_seconds": None if reuse else round(parse_s + index_s, 2),
        "peak_rss_mib": round(peak_rss_mib(), 1),
        "rss_after_parse_mib": None if reuse else round(rss_after_parse, 1),
        "case_insensitive_ids_max_metric_diff": round(max(case_note.values()), 6),
        "latency_ms": {"p50": round(percentile(all_lat, 50), 3),
                       "p99": round(percentile(all_lat, 99), 3)},
        "sets": summary_sets,
    }
    with open(os.path.join(args.out, "summary.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=2)
        f.write("\n")

    if args.json:
        json.dump(summary, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print("Xapian %s BM25 k1=%g b=%g  docs=%d  parse %ss  index %ss  peak RSS %.0f MiB"
              % (summary["version"], args.k1, args.b, ndocs, summary["parse_seconds"],
                 summary["index_seconds"], summary["peak_rss_mib"]))
        cols = ["recall@1", "recall@5", "recall@10", "recall@20", "recall@50",
                "recall@100", "ndcg@10", "mrr@10"]
        print("%-10s %5s " % ("set", "n") + " ".join("%10s" % c for c in cols)
              + " %8s %8s" % ("p50 ms", "p99 ms"))
        for name, e in summary_sets.items():
            print("%-10s %5d " % (name, e["queries"]) + " ".join("%10.4f" % e[c] for c in cols)
                  + " %8.2f %8.2f" % (e["latency_ms"]["p50"], e["latency_ms"]["p99"]))
        if summary["case_insensitive_ids_max_metric_diff"]:
            print("note: comparing ids case-insensitively changes metrics by up to %g"
                  % summary["case_insensitive_ids_max_metric_diff"])


if __name__ == "__main__":
    main()
