# deltavacuum: make demo runs the bundled example, make test runs every test.
GO ?= go
export DELTAVACUUM_FIXTURES ?= $(abspath ../shared/fixtures/delta-tables)

.PHONY: all build version demo demo-serve test test-go vet lint testservers testservers-stop conformance bench mutation reading-guide lock-model clean dist dist-host image licenses sizes install-test wheel test-python

all: build

# The version of the commit, with the commit and its date, as every build names them: one
# decision, internal/buildinfo.VersionOf, through go run ./internal/tools/version (make dist,
# make image and the Python wheel take it from there too; make version prints it).
GIT_LDFLAGS = $(shell $(GO) run ./internal/tools/version -ldflags)

# The flags of the release build (scripts/dist.sh): a static binary, no gRPC in the GCS client,
# stripped, so that bin/deltavacuum is the binary make dist builds for this machine and the
# Python wheel packs it as it is (python/test.sh), with nothing compiled again.
build:
	CGO_ENABLED=0 $(GO) build -trimpath -tags disable_grpc_modules -ldflags "-s -w $(GIT_LDFLAGS)" -o bin/deltavacuum ./cmd/deltavacuum

version:
	@$(GO) run ./internal/tools/version -json

demo:
	$(GO) run ./cmd/deltavacuum demo

# The example table in the maintenance service's web page (http://127.0.0.1:8080/; Ctrl-C stops).
demo-serve:
	$(GO) run ./cmd/deltavacuum demo --serve

vet:
	$(GO) vet ./...
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi

# golangci-lint (.golangci.yml: depguard keeps the package arrows pointing down, plus govet,
# staticcheck, errcheck, ineffassign, unused), installed on first use from the Go proxy at a
# pinned version into a cache outside the work tree (DELTAVACUUM_TOOLS, default
# ~/.cache/deltavacuum-tools), as the test servers' binaries are, so that every clone on this
# machine builds it once; then the proof that the depguard rules fire.
GOLANGCI_LINT_VERSION := v2.15.0
DELTAVACUUM_TOOLS ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/deltavacuum-tools
GOLANGCI_LINT := $(DELTAVACUUM_TOOLS)/golangci-lint-$(GOLANGCI_LINT_VERSION)/golangci-lint

$(GOLANGCI_LINT):
	GOBIN=$(dir $@) $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)

lint: $(GOLANGCI_LINT)
	$(GOLANGCI_LINT) run ./...
	scripts/lint-arrows.sh $(GOLANGCI_LINT)

# vet, lint, then every Go test, with the S3, Azure and GCS test servers started on 127.0.0.1
# (installed on first use while vet and lint compile); it ends with the count of the tests
# passed, failed and skipped, and why each skipped.
test:
	scripts/test.sh

# Go tests only, without servers (their tests skip with a message).
test-go:
	$(GO) test -count=1 ./...

testservers:
	scripts/testservers/start.sh

testservers-stop:
	scripts/testservers/stop.sh

# The same tables vacuumed by Delta Spark, delta-rs and deltavacuum.
conformance:
	conformance/setup.sh
	conformance/run.sh

bench:
	bench/run.sh

# Mutation testing of the rules (vacuum's rule files) and the run package, with gremlins
# (pinned): about an hour on 2 cores, so not part of make test; docs/mutation.md.
mutation:
	scripts/mutation.sh

# The files a FULL run on local disk executes with real logic, measured with a coverage build
# (docs/reading-guide.txt, which docs/architecture.md's reading guide must name).
reading-guide:
	scripts/reading-guide.sh

# The lock's model test with its large configurations (minutes each; docs/lock.md).
lock-model:
	DELTAVACUUM_LOCK_MODEL=full $(GO) test -count=1 -run TestLockModel -timeout 60m -v ./run/

# Release: static binaries for Linux, macOS and Windows (amd64, arm64) with SHA256SUMS in
# dist/; the OCI image (no Docker daemon needed); the licences of the dependencies; the size
# each backend adds; go install from a clean module cache (downloads every module: minutes).
dist:
	scripts/dist.sh

dist-host:
	scripts/dist.sh --host

image:
	scripts/image.sh

licenses:
	scripts/licenses.sh

sizes:
	scripts/sizes.sh

install-test:
	DELTAVACUUM_INSTALL_TEST=1 $(GO) test -count=1 -run TestGoInstallFromCleanCache -timeout 30m -v ./cmd/deltavacuum

# The Python package (docs/python.md): the wheels of the five platforms and the sdist, into
# dist/python/ (python/build_wheels.py --help: one platform, or the binaries of make dist).
PYTHON ?= python3
wheel:
	$(PYTHON) python/build_wheels.py

# The Python package's tests: this machine's wheel, installed in a fresh virtual environment.
test-python:
	python/test.sh

clean:
	rm -rf bin dist
