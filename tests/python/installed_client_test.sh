#!/usr/bin/env bash
# The Python client as a user gets it: `pip install ./python` (no build step, no dependencies)
# into a fresh folder, then its tests run from a copy outside the source tree, so they import
# the installed package and nothing else. Works on a fresh Debian 12 machine with what
# scripts/setup.sh installs (python3-pip brings setuptools and wheel; no network: no build
# isolation, no dependencies to fetch).
#   installed_client_test.sh SOURCE_DIR PTXBENCH_TESTING
set -euo pipefail
SRC=$1
CLI=$2
# Debian's interpreter, the one python3-pip, python3-setuptools and python3-wheel belong to
# (a python3 earlier on PATH, e.g. pyenv's, may lack wheel); PTXB_PYTHON overrides.
PY=${PTXB_PYTHON:-/usr/bin/python3}
[[ -x "$PY" ]] || PY=python3
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# From a copy: pip builds in the folder it is given, and the source tree stays clean.
cp -r "$SRC/python" "$TMP/src"
rm -rf "$TMP/src/tests"
"$PY" -m pip install -q --disable-pip-version-check --root-user-action=ignore --no-deps --no-build-isolation \
  --no-cache-dir --target "$TMP/site" "$TMP/src"
rm -rf "$TMP/src"
cp -r "$SRC/python/tests" "$TMP/tests"
cd "$TMP"
PYTHONPATH="$TMP/site" PTXB_CLIENT_INSTALLED_AT="$TMP/site" PTXB_TESTING_CLI="$CLI" \
  "$PY" -m unittest discover -s "$TMP/tests" -v
