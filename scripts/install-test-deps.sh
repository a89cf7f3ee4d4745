#!/usr/bin/env bash
# Installs what the citation-style tests compare against: pandoc (its
# citeproc) and Debian's CSL styles. Idempotent: does nothing when both are
# present. Needs root (or sudo) and Debian/Ubuntu apt.
set -euo pipefail
if command -v pandoc >/dev/null 2>&1 && [ -f /usr/share/citation-style-language/styles/apa.csl ]; then
  echo "pandoc and CSL styles already installed"; exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
# A failed install does not fail `make test`: the pandoc conformance test
# then skips with a message saying pandoc is missing.
if ! { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends pandoc citation-style-language-styles; }; then
  echo "install-test-deps: could not install pandoc and citation-style-language-styles; the citeproc conformance test will skip" >&2
fi
