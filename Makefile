# deltavacuum: make demo runs the bundled example, make test runs every test.
GO ?= go
export DELTAVACUUM_FIXTURES ?= $(abspath ../shared/fixtures/delta-tables)

.PHONY: all build demo test test-go vet lint testservers testservers-stop conformance bench clean

all: build

build:
	$(GO) build -o bin/deltavacuum ./cmd/deltavacuum

demo:
	$(GO) run ./cmd/deltavacuum demo

vet:
	$(GO) vet ./...
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi

# golangci-lint (.golangci.yml: depguard keeps the package arrows pointing down, plus govet,
# staticcheck, errcheck, ineffassign, unused), installed on first use from the Go proxy at a
# pinned version into .cache/, then the proof that the depguard rules fire.
GOLANGCI_LINT_VERSION := v2.15.0
GOLANGCI_LINT := $(CURDIR)/.cache/golangci-lint-$(GOLANGCI_LINT_VERSION)/golangci-lint

$(GOLANGCI_LINT):
	GOBIN=$(dir $@) $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)

lint: $(GOLANGCI_LINT)
	$(GOLANGCI_LINT) run ./...
	scripts/lint-arrows.sh $(GOLANGCI_LINT)

# Every Go test, with the S3, Azure and GCS test servers started on 127.0.0.1.
test: vet lint
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

clean:
	rm -rf bin
