# deltavacuum: make demo runs the bundled example, make test runs every test.
GO ?= go
export DELTAVACUUM_FIXTURES ?= $(abspath ../shared/fixtures/delta-tables)

.PHONY: all build demo test test-go vet testservers testservers-stop conformance bench clean wheel test-python

all: build

build:
	$(GO) build -o bin/deltavacuum ./cmd/deltavacuum

demo:
	$(GO) run ./cmd/deltavacuum demo

vet:
	$(GO) vet ./...
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi

# Every Go test, with the S3, Azure and GCS test servers started on 127.0.0.1.
test: vet
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

# The Python package (docs/python.md): the wheels of the five platforms and the sdist, into
# dist/python/ (python/build_wheels.py --help: one platform, or the binaries of make dist).
PYTHON ?= python3
wheel:
	$(PYTHON) python/build_wheels.py

# The Python package's tests: this machine's wheel, installed in a fresh virtual environment.
test-python:
	python/test.sh

clean:
	rm -rf bin
