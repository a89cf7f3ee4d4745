#!/usr/bin/env bash
# The attacks of issue 13 against `citefind serve` on loopback (run via
# `make bench-hostile`): indexes the sample corpus into a temp database,
# starts BIN serve on it, runs benchmarks/hostile (every attack: status,
# time, server RSS), stops the server with SIGTERM and checks that it exits
# cleanly. docs/robustness.md records a run.
# Usage: benchmarks/hostile-bench.sh [BIN]   (BIN: default bin/citefind)
#   ADDR (default 127.0.0.1:18182), SLOW_MAX (how long a slow-body attack
#   goes on at most, default 90s), FLOOD (MCP initialize requests, 15000),
#   ONLY (items to run, e.g. "1 5"). Each item runs against a fresh server,
#   so that its RSS column is its own.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-bin/citefind}")
addr=${ADDR:-127.0.0.1:18182}
out=benchmarks/out
mkdir -p "$out"
go build -o bin/hostile ./benchmarks/hostile
work=$(mktemp -d /tmp/citefind-hostile.XXXXXX)
"$bin" index --db "$work/db" --quiet sample/papers.bib server/testdata/abstracts.jsonl > /dev/null

start() {
  "$bin" serve --db "$work/db" --addr "$addr" --log-format json 2>> "$out/hostile-serve.log" &
  pid=$!
  for _ in $(seq 1 300); do
    curl -fsS "http://$addr/healthz" > /dev/null 2>&1 && return 0
    kill -0 "$pid" 2>/dev/null || { echo "citefind serve exited:"; tail -5 "$out/hostile-serve.log"; exit 1; }
    sleep 0.1
  done
}
stop() {
  kill -TERM "$pid"
  if wait "$pid"; then stopped="$stopped ok"; else stopped="$stopped exit-$?"; status=1; fi
}
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT
: > "$out/hostile-serve.log"
start
echo "== $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(uname -sm), $("$bin" version 2>/dev/null || echo "$bin"), commit $(git describe --always --dirty 2>/dev/null || echo dev)"
echo "== server: $(curl -fsS "http://$addr/healthz"), $bin serve --addr $addr (defaults otherwise), a fresh one for each item"
echo
echo "| item | attack | what it got | time | server RSS after |"
echo "|---|---|---|--:|--:|"
status=0
stopped=
for item in ${ONLY:-1 2 3 5 6 7}; do
  [ -n "$pid" ] || start
  bin/hostile -no-header -url "http://$addr" -pid "$pid" -bin "$bin" -db "$work/db" \
    -slow-max "${SLOW_MAX:-90s}" -flood "${FLOOD:-15000}" -only "$item" || status=$?
  stop
  pid=
done
echo
echo "== each server stopped on SIGTERM:$stopped"
exit $status
