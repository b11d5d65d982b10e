#!/usr/bin/env bash
# The test command of README.md (make test; docs/testing.md): go vet, gofmt and make lint, then every Go test
# against the object-store test servers on 127.0.0.1, which it starts and stops again.
#
# The first run on a machine installs the servers (pinned versions, into
# ~/.cache/deltavacuum-testservers, kept for every later run and clone): that install runs in
# the background while vet and lint compile, and is waited for only before the tests start.
# The web page's browser tests need Chromium: it is installed from Debian's packages when
# missing and this runs as root with apt-get (otherwise they skip, or fail when CI=true). Their
# screenshots go to .artifacts/browser/ in the checkout (DELTAVACUUM_ARTIFACTS).
#
# go test runs with -json through internal/tools/testsummary, which prints what go test prints
# without -v (each package's ok or FAIL, the output of a failed test) and ends with the count
# of passed, failed and skipped tests and every skip's reason, grouped: a test that skipped for
# want of a server, a browser or the fixtures is counted, never silent. The events are kept in
# .cache/test-results.jsonl.
#
# Arguments go to go test (-run, -v, ...). DELTAVACUUM_TEST_PKGS picks the packages (default
# ./...); DELTAVACUUM_TEST_NO_LINT=1 skips vet and lint (an iteration on a few packages).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .cache
install_log=.cache/testservers-install.log
scripts/testservers/start.sh --install-only >"$install_log" 2>&1 &
install_pid=$!

if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-headless-shell >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "test.sh: installing chromium (Debian) for the browser tests" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium >/dev/null ||
      { apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium >/dev/null; }
  else
    echo "test.sh: no chromium and no root apt-get: the browser tests skip (fail with CI=true)" >&2
  fi
fi

if [ "${DELTAVACUUM_TEST_NO_LINT:-}" != 1 ]; then
  ${MAKE:-make} --no-print-directory vet lint
fi
summary=.cache/testsummary
go build -o "$summary" ./internal/tools/testsummary

if ! wait "$install_pid"; then
  cat "$install_log" >&2
  exit 1
fi
cat "$install_log" >&2

export DELTAVACUUM_ARTIFACTS="${DELTAVACUUM_ARTIFACTS:-$PWD/.artifacts}"
mkdir -p "$DELTAVACUUM_ARTIFACTS"
results=.cache/test-results.jsonl
: >"$results"
scripts/testservers/start.sh
trap '"$summary" -summarize "$results" || true; scripts/testservers/stop.sh >/dev/null 2>&1 || true' EXIT
set -a
. "${DELTAVACUUM_TESTSERVERS_ENV:-.cache/testservers.env}"
set +a
pkgs=${DELTAVACUUM_TEST_PKGS:-./...}
# shellcheck disable=SC2086 # the packages are words
go test -json -count=1 -timeout 30m "$@" $pkgs | "$summary" -log "$results"
if [ "$pkgs" = ./... ]; then
  # make dist builds with -tags disable_grpc_modules (no gRPC in the GCS client): the GCS tests
  # pass with it too. (The release build of this machine's target, its version and the image's:
  # internal/tools/version's TestOneVersionEverywhere.)
  go test -json -count=1 -tags disable_grpc_modules ./storage/gcs | "$summary" -log "$results"
  go test -json -count=1 -tags disable_grpc_modules -run GCS ./storage/storagetest | "$summary" -log "$results"
fi
