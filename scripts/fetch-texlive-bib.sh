#!/usr/bin/env bash
# Fetches BibTeX files from TeX Live, for measuring the BibTeX → CSL-JSON
# conversion on data it was not written for (make bench-bibtex-texlive,
# docs/bibtex.md): Debian's texlive-bibtex-extra, pinned by version and
# sha256, downloaded with apt-get download into .cache/texlive/ (gitignored;
# nothing of it is committed), checked, and its .bib files unpacked into
# .cache/texlive/bib/:
#
#   biblatex/biblatex-examples.bib  biblatex's example database
#   beebe/*.bib                      Nelson H. F. Beebe's bibliographies of
#                                    TeX, typesetting and fonts
# (their licences: the package's copyright file, kept as .cache/texlive/bib/copyright).
#
# Idempotent: a complete .cache/texlive/bib with the same stamp is left alone.
set -euo pipefail
cd "$(dirname "$0")/.."

DEB=texlive-bibtex-extra
VERSION=2022.20230122-4
SHA256=66eee0362a9db0408d5fb436ba7e8bd57e0e87441eeb9f8ec0166fbb4aa5be6d
CACHE=.cache/texlive
OUT=$CACHE/bib
STAMP="$DEB $VERSION $SHA256"

if [ -f "$OUT/STAMP" ] && [ "$(cat "$OUT/STAMP")" = "$STAMP" ]; then
  exit 0
fi
mkdir -p "$CACHE"
DEBFILE="$CACHE/${DEB}_${VERSION}_all.deb"
if [ ! -f "$DEBFILE" ] || ! echo "$SHA256  $DEBFILE" | sha256sum -c --quiet - 2>/dev/null; then
  (cd "$CACHE" && apt-get download "$DEB=$VERSION") || {
    echo "fetch-texlive-bib: apt-get download $DEB=$VERSION failed (run apt-get update first?)" >&2
    exit 1
  }
fi
if ! echo "$SHA256  $DEBFILE" | sha256sum -c --quiet -; then
  echo "fetch-texlive-bib: $DEBFILE does not have the pinned sha256 $SHA256" >&2
  exit 1
fi
rm -rf "$OUT" "$CACHE/x"
dpkg-deb -x "$DEBFILE" "$CACHE/x"
mkdir -p "$OUT/biblatex" "$OUT/beebe"
cp "$CACHE/x/usr/share/texlive/texmf-dist/bibtex/bib/biblatex/biblatex/biblatex-examples.bib" "$OUT/biblatex/"
cp "$CACHE"/x/usr/share/texlive/texmf-dist/bibtex/bib/beebe/*.bib "$OUT/beebe/"
cp "$CACHE/x/usr/share/doc/$DEB/copyright" "$OUT/copyright"
rm -rf "$CACHE/x"
echo "$STAMP" > "$OUT/STAMP"
