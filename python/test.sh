#!/usr/bin/env bash
# make test-python: builds this machine's wheel of make build's binary (and the sdist), installs
# the wheel in a FRESH virtual environment with the pinned test requirements (tests/requirements.txt, downloaded once
# into .cache/python/wheels), and runs the tests there, outside the source tree, so that they
# test the installed package. The Azure tests use the Azurite test server when the
# DELTAVACUUM_TEST_AZURE_* variables are set; on CI (CI=true) without them, the test servers are
# started here as scripts/test.sh does, and stopped at the end.
# Environment: PYTHON (default python3.11, else python3), GO. Arguments go to pytest.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(dirname "$here")"
cache="$repo/.cache/python"
PYTHON="${PYTHON:-$(command -v python3.11 || command -v python3)}"

work="$(mktemp -d)"
servers=
cleanup() {
  rm -rf "$work"
  if [ -n "$servers" ]; then "$repo/scripts/testservers/stop.sh" >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT
if [ -z "${DELTAVACUUM_TEST_AZURE_ENDPOINT:-}" ] && [ "${CI:-}" = true ]; then
  servers=1
  "$repo/scripts/testservers/start.sh"
  set -a
  . "${DELTAVACUUM_TESTSERVERS_ENV:-$repo/.cache/testservers.env}"
  set +a
fi
dist="$work/dist"
# The wheel packs make build's binary (the release build's flags, the commit's version): after
# make test, which builds the release binary of this machine (internal/tools/version's test),
# the Go build cache holds every package so built, and this is a link, not a compile.
make -s -C "$repo" build GO="${GO:-go}"
"$PYTHON" "$here/build_wheels.py" --platform host --binary "$repo/bin/deltavacuum" --out "$dist" >/dev/null
wheel="$(ls "$dist"/*.whl)"
sdist="$(ls "$dist"/*.tar.gz)"

mkdir -p "$cache/wheels"
if ! "$PYTHON" -m pip download -q --no-index --find-links "$cache/wheels" -d "$cache/wheels" -r "$here/tests/requirements.txt" >/dev/null 2>&1; then
  "$PYTHON" -m pip download -q -d "$cache/wheels" -r "$here/tests/requirements.txt"
fi
"$PYTHON" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install -q --no-index --find-links "$cache/wheels" -r "$here/tests/requirements.txt"
"$work/venv/bin/python" -m pip install -q --no-index --no-deps "$wheel"

# The oldest Python supported, 3.9: the sdist built and installed with pip (the Go toolchain
# compiles the binary), then a smoke test on a fixture table. Skipped without a Python 3.9.
if [ -z "${PYTHON_MIN:-}" ]; then
  for c in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.9*/bin/python3.9 python3.9; do
    if "$c" -c 'import sys; assert sys.version_info[:2] == (3, 9)' >/dev/null 2>&1; then PYTHON_MIN="$c"; break; fi
  done
fi
fixture="${DELTAVACUUM_FIXTURES:-$repo/../shared/fixtures/delta-tables}/delta-rs/delta-0.2.0"
if [ -n "${PYTHON_MIN:-}" ] && [ -d "$fixture" ]; then
  "$PYTHON_MIN" -m venv "$work/venv-min"
  "$work/venv-min/bin/python" -m pip install -q --no-index "$sdist"
  (cd "$work" && "$work/venv-min/bin/python" "$here/tests/smoke_min_python.py" "$fixture")
else
  echo "test-python: no Python 3.9 (PYTHON_MIN) or no fixture $fixture: the sdist on Python 3.9 is not tested" >&2
fi

cd "$work"
DELTAVACUUM_PY_REPO="$repo" DELTAVACUUM_PY_WHEEL="$wheel" DELTAVACUUM_PY_SDIST="$sdist" \
  "$work/venv/bin/python" -m pytest -p no:cacheprovider --rootdir "$here/tests" \
  -c /dev/null -q -rs "$here/tests" "$@"
