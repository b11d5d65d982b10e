#!/usr/bin/env bash
# Installs what the conformance harness needs (see docs/conformance.md):
#   - a virtual environment ($VENV, default <repo>/.cache/conformance-venv) with the versions
#     pinned in conformance/requirements.txt, from PyPI;
#   - the Delta Lake jars, resolved by Spark's own package resolution (Ivy) from Maven Central
#     into $DELTAVACUUM_IVY (default <repo>/.cache/ivy), so that test runs find them cached.
# Idempotent: a second run checks and returns in seconds.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(dirname "$here")"
VENV="${VENV:-$repo/.cache/conformance-venv}"
PYTHON="${PYTHON:-python3}"
export DELTAVACUUM_IVY="${DELTAVACUUM_IVY:-$repo/.cache/ivy}"

java_major="$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1)"
if [ -z "$java_major" ] || [ "$java_major" -lt 17 ]; then
  echo "conformance: Spark 4 needs Java 17 or newer on PATH (found: ${java_major:-none})" >&2
  exit 1
fi

stamp="$VENV/.requirements.sha256"
want="$(sha256sum "$here/requirements.txt" | cut -d' ' -f1)"
if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "conformance: installing the pinned requirements into $VENV"
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/requirements.txt"
  echo "$want" > "$stamp"
fi

# Spark and Ivy are verbose: their output is shown only when the resolution fails.
log="$(mktemp "${TMPDIR:-/tmp}/deltavacuum-conformance-setup.XXXXXX")"
if ! "$VENV/bin/python" "$here/resolve_jars.py" 2>"$log"; then
  cat "$log" >&2
  rm -f "$log"
  echo "conformance: resolving the Delta jars failed (output above)" >&2
  exit 1
fi
rm -f "$log"
