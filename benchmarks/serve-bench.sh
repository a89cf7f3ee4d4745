#!/usr/bin/env bash
# Load benchmark of `citefind serve` on loopback (run via `make bench-serve`):
# starts bin/citefind serve on the database DB, sends POST /v1/search from
# CLIENTS concurrent clients for DURATION with ACM-CR topic texts (after a
# warm-up pass sending each of the 821 queries once, plus WARMUP), prints requests/s, p50/p99 latency, errors and the server's RSS
# at the start and end, then stops the server with SIGTERM and checks that
# it exits cleanly.
# Usage: benchmarks/serve-bench.sh DB [ACMCR_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
db=${1:?usage: serve-bench.sh DB [ACMCR_DIR]}
acm=${2:-${CITEFIND_DATA:-../shared/data}/acm-cr}
addr=${ADDR:-127.0.0.1:18181}
clients=${CLIENTS:-32}
duration=${DURATION:-30s}
warmup=${WARMUP:-0s}
out=benchmarks/out
mkdir -p "$out"
[ -d "$db" ] || { echo "no database at $db (set BENCH_DB)"; exit 1; }
[ -d "$acm" ] || { echo "ACM-CR not found at $acm (set CITEFIND_DATA)"; exit 1; }
go build -o bin/loadgen ./benchmarks/loadgen

bin/citefind serve --db "$db" --addr "$addr" --log-format json 2> "$out/serve-bench.log" &
pid=$!
trap 'kill "$pid" 2>/dev/null || true' EXIT
for _ in $(seq 1 300); do
  curl -fsS "http://$addr/healthz" > /dev/null 2>&1 && break
  kill -0 "$pid" 2>/dev/null || { echo "citefind serve exited:"; tail -5 "$out/serve-bench.log"; exit 1; }
  sleep 0.1
done
echo "== $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(uname -sm), commit $(git describe --always --dirty 2>/dev/null || echo dev)"
echo "== server: $(curl -fsS "http://$addr/healthz"), pid $pid"
status=0
bin/loadgen -url "http://$addr" -pid "$pid" -clients "$clients" -duration "$duration" -warmup "$warmup" -data "$acm" \
  -json > "$out/serve-bench.json" || status=$?
python3 - "$out/serve-bench.json" <<'PY' 2>/dev/null || cat "$out/serve-bench.json"
import json, sys
r = json.load(open(sys.argv[1]))
print(f"clients {r['clients']}, {r['duration_s']:.1f} s measured after a warm-up pass over the {r['distinct_queries']} ACM-CR queries, k={r['k']}")
print(f"requests {r['requests']}, errors {r['errors']}, {r['requests_per_s']:.1f} requests/s")
print(f"latency p50 {r['p50_ms']:.1f} ms, p90 {r['p90_ms']:.1f} ms, p99 {r['p99_ms']:.1f} ms, max {r['max_ms']:.1f} ms")
m = lambda k: r[k] / 1024
print(f"server RSS {m('rss_cold_kib'):.1f} MiB before the warm-up pass, {m('rss_start_kib'):.1f} MiB at start, {m('rss_end_kib'):.1f} MiB at end ({r['rss_growth_pct']:+.1f}%), anonymous {m('rss_anon_end_kib'):.1f} MiB")
if r.get('first_error'): print("first error:", r['first_error'])
PY
kill -TERM "$pid"
if wait "$pid"; then echo "== server stopped cleanly on SIGTERM"; else echo "== server exited with status $? on SIGTERM"; status=1; fi
trap - EXIT
echo "== $(grep -c '"msg":"request"' "$out/serve-bench.log") requests logged in $out/serve-bench.log"
exit $status
