#!/usr/bin/env bash
# make dist: static release binaries of deltavacuum (CGO_ENABLED=0, -trimpath, -ldflags
# "-s -w" and the version) for Linux, macOS and Windows on amd64 and arm64, in dist/, with
# dist/SHA256SUMS. `scripts/dist.sh --host` builds only this machine's target and runs its
# `version` (what CI does: cheap, and it proves the release flags build and name the version).
# TARGETS="linux/amd64 darwin/arm64" picks the targets.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${DIST_DIR:-dist}
# The version of the commit (internal/buildinfo.VersionOf), as make build and the wheel name it;
# VERSION=v1.2.3 names another (DELTAVACUUM_VERSION for the tool).
if [ -n "${VERSION:-}" ]; then export DELTAVACUUM_VERSION=$VERSION; fi
version=$(go run ./internal/tools/version)
ldflags="-s -w $(go run ./internal/tools/version -ldflags)"
# disable_grpc_modules drops gRPC from the GCS client (its JSON API is all deltavacuum uses;
# the GCS tests pass with the tag): TAGS= builds without it.
tags=${TAGS-disable_grpc_modules}
targets=${TARGETS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64}
host=false
if [ "${1:-}" = --host ]; then
  host=true
  targets="$(go env GOOS)/$(go env GOARCH)"
fi
mkdir -p "$out"
files=()
for t in $targets; do
  os=${t%/*} arch=${t#*/}
  name="deltavacuum_${version}_${os}_${arch}"
  [ "$os" = windows ] && name="$name.exe"
  start=$(date +%s)
  CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath ${tags:+-tags "$tags"} -ldflags "$ldflags" -o "$out/$name" ./cmd/deltavacuum
  echo "dist: $out/$name ($(wc -c <"$out/$name") bytes, $(( $(date +%s) - start ))s)"
  files+=("$name")
done
(cd "$out" && sha256sum deltavacuum_* >SHA256SUMS) # every binary in dist/, for sha256sum -c
echo "dist: $out/SHA256SUMS"
if $host; then
  got=$("$out/${files[0]}" version)
  echo "$got"
  case "$got" in
    "deltavacuum $version"*) ;;
    *) echo "dist: the host binary does not name version $version" >&2; exit 1 ;;
  esac
fi
