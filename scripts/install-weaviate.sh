#!/usr/bin/env bash
# Builds the pinned Weaviate server that the retrieve/weaviate tests start
# (one node and a 3-node cluster on loopback), once, into a cache folder:
#   ${XDG_CACHE_HOME:-$HOME/.cache}/citefind/weaviate-$WEAVIATE_VERSION/weaviate-server
# Idempotent: does nothing when the binary is there. Needs only Go and the
# Go module proxy (about 7 minutes on 2 cores, a 168 MB binary). The binary
# is never part of the repository. Tests find it there, or at
# $CITEFIND_WEAVIATE_BIN, and skip with a message when it is absent.
set -euo pipefail
WEAVIATE_VERSION="${WEAVIATE_VERSION:-1.35.2}"
dir="${XDG_CACHE_HOME:-$HOME/.cache}/citefind/weaviate-${WEAVIATE_VERSION}"
bin="$dir/weaviate-server"
if [ -x "$bin" ]; then
  echo "weaviate-server ${WEAVIATE_VERSION} already built at $bin"; exit 0
fi
GO="${GO:-go}"
if ! command -v "$GO" >/dev/null 2>&1; then
  echo "install-weaviate: no Go toolchain; the Weaviate tests will skip" >&2; exit 0
fi
mkdir -p "$dir"
tmp="$(mktemp -d "$dir/.build-XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
echo "building weaviate-server ${WEAVIATE_VERSION} into $dir (several minutes, once)"
# Built in a temp folder and renamed into place, so an interrupted build
# never leaves a half-written binary where the tests look.
if GOBIN="$tmp" GOFLAGS=-buildvcs=false "$GO" install "github.com/weaviate/weaviate/cmd/weaviate-server@v${WEAVIATE_VERSION}"; then
  mv "$tmp/weaviate-server" "$bin"
  echo "weaviate-server built: $bin"
else
  # A failed build does not fail `make test`: the Weaviate tests skip
  # with a message naming this script.
  echo "install-weaviate: could not build weaviate-server ${WEAVIATE_VERSION}; the Weaviate tests will skip" >&2
fi
