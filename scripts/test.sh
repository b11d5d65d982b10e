#!/usr/bin/env bash
# The test command of README.md (make test): starts the object-store test servers on
# 127.0.0.1 (installing pinned versions on first use), runs every Go test against them, and
# stops them again. The web page's browser tests need Chromium: it is installed from Debian's
# packages when missing and this runs as root with apt-get (otherwise they skip, or fail when
# CI=true). Their screenshots go to .artifacts/browser/ in the checkout (DELTAVACUUM_ARTIFACTS).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-headless-shell >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "test.sh: installing chromium (Debian) for the browser tests" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium >/dev/null ||
      { apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium >/dev/null; }
  else
    echo "test.sh: no chromium and no root apt-get: the browser tests skip (fail with CI=true)" >&2
  fi
fi
export DELTAVACUUM_ARTIFACTS="${DELTAVACUUM_ARTIFACTS:-$PWD/.artifacts}"
mkdir -p "$DELTAVACUUM_ARTIFACTS"
scripts/testservers/start.sh
trap 'scripts/testservers/stop.sh >/dev/null 2>&1 || true' EXIT
set -a
. "${DELTAVACUUM_TESTSERVERS_ENV:-.cache/testservers.env}"
set +a
go test -count=1 -timeout 30m "$@" ./...
