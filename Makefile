# deltavacuum: make demo runs the bundled example, make test runs every test.
GO ?= go
export DELTAVACUUM_FIXTURES ?= $(abspath ../shared/fixtures/delta-tables)

.PHONY: all build demo test test-go vet bench clean

all: build

build:
	$(GO) build -o bin/deltavacuum ./cmd/deltavacuum

demo:
	$(GO) run ./cmd/deltavacuum demo

vet:
	$(GO) vet ./...
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi

test: vet test-go

test-go:
	$(GO) test -count=1 ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

clean:
	rm -rf bin
