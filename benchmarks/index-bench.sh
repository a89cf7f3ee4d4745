#!/usr/bin/env bash
# citefind on ACM-CR: whole-collection ingest + index wall time and peak RSS,
# then query latency over all ACM-CR queries (both topic sets).
# Usage: benchmarks/index-bench.sh [ACMCR_DIR]   (run via `make bench-index`)
set -euo pipefail
cd "$(dirname "$0")/.."
acm=${1:-${CITEFIND_DATA:-../shared/data}/acm-cr}
bin=bin/citefind
out=benchmarks/out
mkdir -p "$out"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/citefind-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
command -v /usr/bin/time >/dev/null || { echo "needs GNU time (apt-get install -y time)"; exit 1; }
timed() { # label, command...
  local label=$1; shift
  /usr/bin/time -f "$label wall_seconds=%e peak_rss_kib=%M" -o "$out/$label.time" "$@"
  cat "$out/$label.time"
}
echo "== 1. index the whole collection (all 903 .bib files, every record) into a fresh database"
timed index-all "$bin" index --db "$tmp/all" --quiet "$acm/data/acm-dl" > "$out/index-all.txt"
cat "$out/index-all.txt"
echo "== 2. re-run index on the same files (no-op)"
timed index-noop "$bin" index --db "$tmp/all" --quiet "$acm/data/acm-dl" > /dev/null
echo "== 3. build the benchmark database (upstream rules: 108,857 papers) and evaluate"
timed eval-cold "$bin" eval --bench acm-cr --data "$acm" --db "$tmp/bench" --quiet > "$out/eval-cold.md"
echo "== 4. evaluate again on the built database: query latency"
"$bin" eval --bench acm-cr --data "$acm" --db "$tmp/bench" --quiet --json > "$out/eval-warm.json"
"$bin" eval --bench acm-cr --data "$acm" --db "$tmp/bench" --quiet
