#!/usr/bin/env bash
# Fetches what cite/csl embeds in the binary, each pinned by version and
# sha256, into cite/csl/dist/ (gitignored; nothing of it is committed):
#
#   citeproc_commonjs.js  npm package citeproc 2.4.63 (citeproc-js 1.4.63;
#                         CPAL-1.0 or AGPL-3.0), unmodified, with its LICENSE
#   styles/*.csl          apa, ieee, modern-language-association,
#                         chicago-author-date, harvard-cite-them-right,
#                         vancouver, from Debian's
#                         citation-style-language-styles (CC BY-SA 3.0)
#   locales/locales-{en-US,en-GB}.xml  from Debian's citation-style-language-locales
#                         (CC BY-SA 3.0)
#   NOTICE                the attribution the licences ask for, with the
#                         packages' copyright files
#
# Downloads go through the ordinary clients (npm pack, apt-get download) into
# .cache/csl/, are checked against the pinned sha256 and only then unpacked.
# Idempotent: a complete dist/ with the same stamp is left alone.
set -euo pipefail
cd "$(dirname "$0")/.."

CITEPROC_VERSION=2.4.63
CITEPROC_SHA256=7f2b7714bfd1f4480aad9c34972eb5d48dc1b85876ba21b5aa9aee74156e2ccf
STYLES_DEB=citation-style-language-styles
STYLES_VERSION=0~20230209.153790a-1
STYLES_SHA256=8c086a7db98ae037fdeb4dec03f3cb253f44d757c127eb2127a8ba9b5682ceea
LOCALES_DEB=citation-style-language-locales
LOCALES_VERSION=0~20230122.9b9366b-1
LOCALES_SHA256=1fd1c4937b6fca6d494c5e78bff926cf647873fd6f6dc095e82520f6aff17311
LOCALES=(en-US en-GB) # en-GB: harvard-cite-them-right's default-locale
STYLES=(apa ieee modern-language-association chicago-author-date harvard-cite-them-right vancouver)

DIST=cite/csl/dist
CACHE=.cache/csl
STAMP="citeproc $CITEPROC_VERSION $CITEPROC_SHA256; $STYLES_DEB $STYLES_VERSION $STYLES_SHA256; $LOCALES_DEB $LOCALES_VERSION $LOCALES_SHA256; ${STYLES[*]}; ${LOCALES[*]}"

if [ -f "$DIST/STAMP" ] && [ "$(cat "$DIST/STAMP")" = "$STAMP" ]; then
  exit 0
fi

mkdir -p "$CACHE"
cache_abs=$(cd "$CACHE" && pwd)

die() { echo "fetch-csl: $*" >&2; exit 1; }

# check FILE SHA256: the file's digest must be the pinned one.
check() {
  local got
  got=$(sha256sum "$1" | cut -d' ' -f1)
  [ "$got" = "$2" ] || { rm -f "$1"; die "$1: sha256 $got, want $2 (file removed; run again)"; }
}

# citeproc-js from the npm registry.
tgz="$CACHE/citeproc-$CITEPROC_VERSION.tgz"
if [ ! -f "$tgz" ]; then
  command -v npm >/dev/null || die "npm is needed to fetch citeproc@$CITEPROC_VERSION (apt-get install npm)"
  echo "fetch-csl: npm pack citeproc@$CITEPROC_VERSION"
  (cd "$cache_abs" && npm pack --silent "citeproc@$CITEPROC_VERSION" >/dev/null) ||
    die "npm pack citeproc@$CITEPROC_VERSION failed"
fi
check "$tgz" "$CITEPROC_SHA256"

# A Debian package by exact version: apt-get download (after apt-get update
# when the package lists do not know it yet).
deb() {
  local name=$1 version=$2 sha=$3 file
  file="$CACHE/${name}_${version//:/%3a}_all.deb"
  if [ ! -f "$file" ]; then
    command -v apt-get >/dev/null || die "apt-get is needed to fetch $name=$version"
    echo "fetch-csl: apt-get download $name=$version" >&2
    if ! (cd "$cache_abs" && apt-get download -qq "$name=$version" 2>/dev/null); then
      SUDO=""
      if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
      $SUDO apt-get update -qq >&2 || true
      (cd "$cache_abs" && apt-get download -qq "$name=$version") >&2 || die "apt-get download $name=$version failed"
    fi
  fi
  check "$file" "$sha"
  echo "$file"
}
styles_deb=$(deb "$STYLES_DEB" "$STYLES_VERSION" "$STYLES_SHA256")
locales_deb=$(deb "$LOCALES_DEB" "$LOCALES_VERSION" "$LOCALES_SHA256")

# Unpack into a fresh folder, then swap it in.
tmp=$(mktemp -d "$CACHE/dist.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/out/styles" "$tmp/out/locales" "$tmp/npm" "$tmp/styles" "$tmp/locales"
tar -xzf "$tgz" -C "$tmp/npm" package/citeproc_commonjs.js package/LICENSE
dpkg-deb -x "$styles_deb" "$tmp/styles"
dpkg-deb -x "$locales_deb" "$tmp/locales"
cp "$tmp/npm/package/citeproc_commonjs.js" "$tmp/out/"
for s in "${STYLES[@]}"; do
  cp "$tmp/styles/usr/share/citation-style-language/styles/$s.csl" "$tmp/out/styles/"
done
for l in "${LOCALES[@]}"; do cp "$tmp/locales/usr/share/citation-style-language/locales/locales-$l.xml" "$tmp/out/locales/"; done
{
  echo "Third-party files embedded in citefind (fetched by scripts/fetch-csl.sh; not part of its source)."
  echo
  echo "== citeproc_commonjs.js: npm package citeproc $CITEPROC_VERSION (citeproc-js), unmodified"
  echo "   https://github.com/Juris-M/citeproc-js — licensed under CPAL-1.0 or AGPL-3.0:"
  echo
  cat "$tmp/npm/package/LICENSE"
  echo
  echo "== styles/*.csl: ${STYLES[*]}"
  echo "   from Debian's $STYLES_DEB $STYLES_VERSION (the Citation Style Language project's styles),"
  echo "   licensed under the Creative Commons Attribution-ShareAlike 3.0 Unported licence"
  echo "   (https://creativecommons.org/licenses/by-sa/3.0/). Each style's authors and contributors are"
  echo "   named in its <info> element. Unmodified."
  echo
  echo "== locales/locales-{${LOCALES[*]}}.xml: from Debian's $LOCALES_DEB $LOCALES_VERSION"
  echo "   (the Citation Style Language project's locales), licensed under CC BY-SA 3.0. Unmodified."
  echo
  echo "== Debian copyright file of $LOCALES_DEB"
  cat "$tmp/locales/usr/share/doc/$LOCALES_DEB/copyright"
} > "$tmp/out/NOTICE"
echo "$STAMP" > "$tmp/out/STAMP"

mkdir -p "$DIST"
rm -rf "$DIST/styles" "$DIST/locales" "$DIST/citeproc_commonjs.js" "$DIST/NOTICE" "$DIST/STAMP"
cp -r "$tmp/out/." "$DIST/"
echo "fetch-csl: $DIST ready (citeproc $CITEPROC_VERSION, ${#STYLES[@]} styles, locales ${LOCALES[*]})"
