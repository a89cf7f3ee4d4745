#!/usr/bin/env bash
# Cold `citefind cite`: each run is a new process that compiles citeproc-js,
# builds the style's engine and renders sample/draft20.md (20 citations of
# the sample corpus, one secondary source) as Markdown, with --no-track.
# Prints, per style, the median, fastest and slowest wall time of RUNS runs
# after one warm-up run (docs/cite.md, issue 15's targets: APA ≤ 2 s, the
# other styles ≤ 0.7 s). Run it on an idle machine: the engine uses both
# cores, so another busy process shows in the figures.
#
#   bash benchmarks/cite-cold.sh [BIN]      (make bench-cite-cold)
#   STYLES="apa chicago" RUNS=9 bash benchmarks/cite-cold.sh
set -euo pipefail
bin=${1:-bin/citefind}
styles=${STYLES:-apa ieee mla chicago harvard vancouver acm-sig-proceedings nature association-for-computational-linguistics springer-lecture-notes-in-computer-science elsevier-harvard american-medical-association}
runs=${RUNS:-5}
here=$(cd "$(dirname "$0")/.." && pwd)
[ -x "$bin" ] || { echo "cite-cold: no binary at $bin (make build)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin" index --db "$tmp/db" --embedder none "$here/sample/papers.bib" "$here/server/testdata/abstracts.jsonl" >/dev/null 2>"$tmp/index.log" ||
  { cat "$tmp/index.log" >&2; exit 1; }
ms() { echo $(( $(date +%s%N) / 1000000 )); }
echo "# cold citefind cite, sample/draft20.md, $runs runs after 1 warm-up ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg))"
echo
echo "| style | median | fastest | slowest |"
echo "|---|--:|--:|--:|"
for s in $styles; do
  run() { "$bin" cite --db "$tmp/db" --no-track --style "$s" --format md "$here/sample/draft20.md" >"$tmp/out.md" 2>"$tmp/err.log" ||
    { echo "cite-cold: $s failed:" >&2; cat "$tmp/err.log" >&2; exit 1; }; }
  run
  times=()
  for _ in $(seq "$runs"); do
    t0=$(ms); run; times+=($(( $(ms) - t0 )))
  done
  sorted=($(printf '%s\n' "${times[@]}" | sort -n))
  n=${#sorted[@]}
  printf '| %s | %d ms | %d ms | %d ms |\n' "$s" "${sorted[$((n / 2))]}" "${sorted[0]}" "${sorted[$((n - 1))]}"
done
