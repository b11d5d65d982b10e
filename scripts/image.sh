#!/usr/bin/env bash
# make image: the OCI image of deltavacuum, built without a Docker daemon, a registry or a
# base image: one layer with the static linux binary (scripts/dist.sh) and Debian's CA
# certificates (/etc/ssl/certs/ca-certificates.crt, package ca-certificates), written by
# internal/ociimage as an OCI image layout in dist/image-ARCH/ and as dist/deltavacuum-image-ARCH.tar
# (docker load -i …, podman load -i …, skopeo copy oci-archive:… docker://REGISTRY/…).
# ARCH=arm64 for the other architecture.
set -euo pipefail
cd "$(dirname "$0")/.."
arch=${ARCH:-$(go env GOARCH)}
out=${DIST_DIR:-dist}
TARGETS="linux/$arch" scripts/dist.sh
# The version of the commit, as the binary names it, and its spelling as a Docker tag (no '+').
if [ -n "${VERSION:-}" ]; then export DELTAVACUUM_VERSION=$VERSION; fi
version=$(go run ./internal/tools/version)
tag=$(go run ./internal/tools/version -image-tag)
bin="$out/deltavacuum_${version}_linux_$arch"
rm -rf "$out/image-$arch"
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)} \
  go run ./internal/tools/ociimage -binary "$bin" -arch "$arch" -version "$version" -tag "$tag" -out "$out/image-$arch"
tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf "$out/deltavacuum-image-$arch.tar" -C "$out/image-$arch" .
echo "image: $out/deltavacuum-image-$arch.tar (tag $tag)"
