#!/usr/bin/env bash
# The packages of make test's second pass, one per line: every package but
# retrieve/weaviate (its kill tests run in a step of their own), the slowest
# first. go test starts packages in the order it is given them, as many at
# a time as there are cores; listed alphabetically, engine's ACM-CR
# regression (about 220 s) started only when cite/csl and cmd/citefind
# (about 320 s and 270 s) had freed a slot, so the pass took about
# 2 minutes longer on the 2-core CI machine.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
slow=(cite/csl cmd/citefind engine)
mod=$("$GO" list -m)
all=$("$GO" list ./... | grep -v -x "$mod/retrieve/weaviate")
pat=()
for p in "${slow[@]}"; do
	grep -x -F "$mod/$p" <<<"$all" || { echo "long-test-packages.sh: no package $p" >&2; exit 1; }
	pat+=(-e "$mod/$p")
done
grep -v -x -F "${pat[@]}" <<<"$all"
