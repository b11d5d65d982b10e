#!/usr/bin/env bash
# Runs the conformance harness (see docs/conformance.md): installs what it needs (setup.sh),
# builds deltavacuum unless DELTAVACUUM_BIN names a binary, and runs every scenario with pytest.
# Arguments go to pytest (e.g. -k spark_cdf). The report is printed at the end and written to
# $DELTAVACUUM_CONFORMANCE_REPORT (default <repo>/.cache/conformance/report.md).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(dirname "$here")"
VENV="${VENV:-$repo/.cache/conformance-venv}"
export VENV
export DELTAVACUUM_IVY="${DELTAVACUUM_IVY:-$repo/.cache/ivy}"

"$here/setup.sh"

if [ -z "${DELTAVACUUM_BIN:-}" ]; then
  mkdir -p "$repo/.cache/conformance"
  (cd "$repo" && ${GO:-go} build -o .cache/conformance/deltavacuum ./cmd/deltavacuum)
  export DELTAVACUUM_BIN="$repo/.cache/conformance/deltavacuum"
fi

cd "$here"
# pytest's exit status is the script's: 0 all passed (xfail included), 1 a test failed,
# 5 no test ran (a failure for CI too).
exec "$VENV/bin/python" -m pytest -v --durations=10 "$@"
