#!/usr/bin/env bash
# The test command of README.md (make test): starts the object-store test servers on
# 127.0.0.1 (installing pinned versions on first use), runs every Go test against them, and
# stops them again.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/testservers/start.sh
trap 'scripts/testservers/stop.sh >/dev/null 2>&1 || true' EXIT
set -a
. "${DELTAVACUUM_TESTSERVERS_ENV:-.cache/testservers.env}"
set +a
go test -count=1 -timeout 30m "$@" ./...
# make dist builds with -tags disable_grpc_modules (no gRPC in the GCS client): the GCS tests
# pass with it too.
go test -count=1 -tags disable_grpc_modules ./storage/gcs
go test -count=1 -tags disable_grpc_modules -run GCS ./storage/storagetest
# The release build of this machine's target (the flags of make dist) names its version.
DIST_DIR=.cache/dist-host scripts/dist.sh --host
