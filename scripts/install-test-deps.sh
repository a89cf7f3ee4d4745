#!/usr/bin/env bash
# Installs what the tests compare against or drive: pandoc (its citeproc) and
# Debian's CSL styles and locales, for the citation conformance tests (cite/,
# cite/csl/; the styles also give `citefind cite --style` its 2,549 styles),
# Node.js, which runs the same citeproc-js with ICU's collation as the
# reference citefind's renderings and sorting are compared with,
# Chromium, for the browser test of the web page (server/browser_test.go),
# and (scripts/install-weaviate.sh) the pinned Weaviate server the
# retrieve/weaviate tests start.
# Idempotent: installs only what is missing. Needs root (or sudo) and
# Debian/Ubuntu apt.
set -euo pipefail
bash "$(dirname "$0")/install-weaviate.sh"
pkgs=()
command -v pandoc >/dev/null 2>&1 || pkgs+=(pandoc)
command -v node >/dev/null 2>&1 || pkgs+=(nodejs)
[ -f /usr/share/citation-style-language/styles/apa.csl ] || pkgs+=(citation-style-language-styles)
[ -f /usr/share/citation-style-language/locales/locales-de-DE.xml ] || pkgs+=(citation-style-language-locales)
if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then
  pkgs+=(chromium fonts-dejavu-core)
fi
if [ ${#pkgs[@]} -eq 0 ]; then
  echo "pandoc, Node.js, CSL styles and locales, chromium already installed"; exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
# A failed install does not fail `make test`: the pandoc conformance test,
# the Node.js comparisons and the browser test then skip with a message
# saying what is missing.
if ! { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${pkgs[@]}"; }; then
  echo "install-test-deps: could not install ${pkgs[*]}; the tests that need them will skip" >&2
fi
