#!/usr/bin/env bash
# Installs what the tests compare against or drive: pandoc (its citeproc)
# and Debian's CSL styles, for the citation-style conformance test, and
# Chromium, for the browser test of the web page (server/browser_test.go),
# and (scripts/install-weaviate.sh) the pinned Weaviate server the
# retrieve/weaviate tests start.
# Idempotent: installs only what is missing. Needs root (or sudo) and
# Debian/Ubuntu apt.
set -euo pipefail
bash "$(dirname "$0")/install-weaviate.sh"
pkgs=()
if ! command -v pandoc >/dev/null 2>&1 || [ ! -f /usr/share/citation-style-language/styles/apa.csl ]; then
  pkgs+=(pandoc citation-style-language-styles)
fi
if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then
  pkgs+=(chromium fonts-dejavu-core)
fi
if [ ${#pkgs[@]} -eq 0 ]; then
  echo "pandoc, CSL styles and chromium already installed"; exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
# A failed install does not fail `make test`: the pandoc conformance test
# and the browser test then skip with a message saying what is missing.
if ! { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${pkgs[@]}"; }; then
  echo "install-test-deps: could not install ${pkgs[*]}; the tests that need them will skip" >&2
fi
