#!/bin/sh
# Install the Xapian Python binding used by benchmarks/xapian_bm25.py.
#
# Debian's python3-xapian installs the binding for the system interpreter
# /usr/bin/python3 only (not for pyenv/venv interpreters), so the benchmark is
# always run as `/usr/bin/python3 benchmarks/xapian_bm25.py ...`.
#
# Idempotent: does nothing when the package is already installed and
# importable. Needs root (CI runs as root) for apt-get.
set -eu

PY=/usr/bin/python3

if command -v "$PY" >/dev/null 2>&1 \
    && dpkg -s python3-xapian >/dev/null 2>&1 \
    && "$PY" -c 'import xapian' >/dev/null 2>&1; then
    echo "python3-xapian already installed: Xapian $("$PY" -c 'import xapian; print(xapian.version_string())')"
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    echo "setup-xapian.sh: python3-xapian is missing; run this script as root" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends python3 python3-xapian

"$PY" -c 'import xapian; print("installed Xapian", xapian.version_string())'
