# The deltavacuum image for those who build with Docker (or Podman, Buildah):
#   docker build --build-arg VERSION=$(git describe --tags --always) -t deltavacuum .
#   docker run --rm -v /data:/data deltavacuum vacuum /data/sales --dry-run
# NOT TESTED in this repository's CI: its machines have no Docker daemon and pull no base
# image. `make image` builds the same image (the static binary and Debian's CA certificates
# on no base) without Docker, and its test runs the binary from the image's file system.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=devel
ARG COMMIT=
ARG DATE=
RUN CGO_ENABLED=0 go build -trimpath -tags disable_grpc_modules \
    -ldflags "-s -w -X github.com/deltavacuum/deltavacuum/internal/buildinfo.Version=${VERSION} -X github.com/deltavacuum/deltavacuum/internal/buildinfo.Commit=${COMMIT} -X github.com/deltavacuum/deltavacuum/internal/buildinfo.Date=${DATE}" \
    -o /out/deltavacuum ./cmd/deltavacuum && mkdir -p /out/tmp && chmod 1777 /out/tmp

FROM scratch
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/ /
ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt HOME=/tmp
USER 65532:65532
WORKDIR /tmp
ENTRYPOINT ["/deltavacuum"]
LABEL org.opencontainers.image.licenses="Apache-2.0" org.opencontainers.image.source="https://github.com/deltavacuum/deltavacuum"
