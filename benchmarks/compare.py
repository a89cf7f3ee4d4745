#!/usr/bin/python3
"""citefind versus Xapian BM25 on ACM-CR, measured in one run on one machine.

Runs, one after the other (never concurrently, so neither slows the other):
  1. benchmarks/xapian_bm25.py (parse + index + both topic sets), under GNU time;
  2. `citefind index` of the whole collection (every .bib file) into a fresh
     database, under GNU time: ingest + index wall time and peak RSS;
  3. `citefind index` again on the same files (the no-op re-index);
  4. `citefind eval --bench acm-cr` on a fresh benchmark database (built once
     with the upstream rules), then a second, warm run for quality and query
     latency over all queries.
and prints a Markdown report with the ratios citefind / Xapian.

    /usr/bin/python3 benchmarks/compare.py --data ../shared/data/acm-cr [--bin bin/citefind]

(`make bench-compare` builds citefind, installs python3-xapian and runs it.)
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

METRICS = ("recall@10", "recall@100", "ndcg@10", "mrr@10")


def timed(cmd, **kw):
    """Run cmd under GNU time; return (stdout, stderr, wall seconds, peak RSS MiB)."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
        full = ["/usr/bin/time", "-f", "%e %M", "-o", tf.name] + cmd
        p = subprocess.run(full, capture_output=True, text=True, **kw)
        if p.returncode != 0:
            sys.exit("command failed (%d): %s\n%s" % (p.returncode, " ".join(cmd), p.stderr[-3000:]))
        wall, rss = tf.read().split()[-2:]
    return p.stdout, p.stderr, float(wall), int(rss) / 1024.0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=os.path.join(os.environ.get("CITEFIND_DATA", "../shared/data"), "acm-cr"))
    ap.add_argument("--bin", default="bin/citefind")
    ap.add_argument("--out", default="benchmarks/out/compare")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="citefind-compare.")
    res = {"date": time.strftime("%Y-%m-%d"), "machine": "%d cores" % os.cpu_count()}
    try:
        print("1/4 Xapian: parse, index, query ...", file=sys.stderr)
        out, _, wall, rss = timed(["/usr/bin/python3", "benchmarks/xapian_bm25.py", "--data", args.data,
                                   "--out", os.path.join(args.out, "xapian"), "--db", os.path.join(tmp, "xapian"), "--json"])
        x = json.loads(out)
        res["xapian"] = {"process_wall_s": wall, "process_peak_rss_mib": rss, "report": x}

        print("2/4 citefind index of the whole collection ...", file=sys.stderr)
        out, _, wall, rss = timed([args.bin, "index", "--db", os.path.join(tmp, "all"), "--quiet",
                                   os.path.join(args.data, "data", "acm-dl")])
        res["citefind_index"] = {"wall_s": wall, "peak_rss_mib": rss, "summary": out}

        print("3/4 citefind index again (no-op) ...", file=sys.stderr)
        _, _, wall, rss = timed([args.bin, "index", "--db", os.path.join(tmp, "all"), "--quiet",
                                 os.path.join(args.data, "data", "acm-dl")])
        res["citefind_reindex"] = {"wall_s": wall, "peak_rss_mib": rss}

        print("4/4 citefind eval (build the benchmark database, then a warm run) ...", file=sys.stderr)
        bench = os.path.join(tmp, "bench")
        _, _, wall, rss = timed([args.bin, "eval", "--bench", "acm-cr", "--data", args.data, "--db", bench, "--quiet", "--json"])
        res["citefind_eval_cold"] = {"wall_s": wall, "peak_rss_mib": rss}
        out, err, wall, rss = timed([args.bin, "eval", "--bench", "acm-cr", "--data", args.data, "--db", bench, "--quiet", "--json"])
        m = re.search(r"latency over all (\d+) queries: p50 ([\d.]+) ms, p99 ([\d.]+) ms", err)
        res["citefind_eval"] = {"report": json.loads(out),
                                "latency_all_ms": {"queries": int(m.group(1)), "p50": float(m.group(2)), "p99": float(m.group(3))}}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    with open(os.path.join(args.out, "compare.json"), "w") as f:
        json.dump(res, f, indent=2)
    report(res)


def report(res):
    x = res["xapian"]["report"]
    c = {s["bench"].split(":")[1]: s for s in res["citefind_eval"]["report"]}
    print("Measured %s on this machine (%s), one tool after the other.\n" % (res["date"], res["machine"]))
    print("| topic set | metric | citefind | Xapian | difference |")
    print("|---|---|--:|--:|--:|")
    for s in ("contexts", "sentences"):
        for k in METRICS:
            a, b = c[s]["metrics"][k], x["sets"][s][k]
            print("| %s | %s | %.4f | %.4f | %+.4f |" % (s, k, a, b, a - b))
    ci, xl = res["citefind_index"], x["latency_ms"]
    cl = res["citefind_eval"]["latency_all_ms"]
    print()
    print("| measure | citefind | Xapian | ratio citefind/Xapian |")
    print("|---|--:|--:|--:|")
    print("| ingest + index wall time, s | %.1f | %.1f | %.2f |" % (ci["wall_s"], x["ingest_seconds"], ci["wall_s"] / x["ingest_seconds"]))
    print("| peak RSS during ingest + index, MiB | %.0f | %.0f | %.2f |" % (ci["peak_rss_mib"], res["xapian"]["process_peak_rss_mib"],
                                                                      ci["peak_rss_mib"] / res["xapian"]["process_peak_rss_mib"]))
    print("| query latency p50 over all %d queries, ms | %.1f | %.1f | %.2f |" % (cl["queries"], cl["p50"], xl["p50"], cl["p50"] / xl["p50"]))
    print("| query latency p99, ms | %.1f | %.1f | %.2f |" % (cl["p99"], xl["p99"], cl["p99"] / xl["p99"]))
    print()
    print("citefind indexes every record of the 903 files (113,512 records, the whole collection);"
          " Xapian's time covers parsing all files and indexing the 108,857 documents kept by the upstream rules."
          " Xapian's peak RSS is its whole Python process. No-op re-index: %.1f s (%.1f%% of the full build)."
          " Building the benchmark database and evaluating both topic sets from scratch: %.1f s, peak RSS %.0f MiB." % (
              res["citefind_reindex"]["wall_s"], 100 * res["citefind_reindex"]["wall_s"] / ci["wall_s"],
              res["citefind_eval_cold"]["wall_s"], res["citefind_eval_cold"]["peak_rss_mib"]))


if __name__ == "__main__":
    main()
