#!/usr/bin/env bash
# The listing benchmarks of issue 28 (docs/benchmarks.md, "Listing on object stores"):
# deltavacuum (this build), an older build (OLD, default .cache/deltavacuum-old: build it
# from the commit to compare with) and delta-rs on tables laid out on the S3, GCS and Azure
# test servers, requests counted by kind at a loopback proxy that adds LATENCY to each.
#
#   scripts/testservers/start.sh && . .cache/testservers.env
#   go build -o bin/deltavacuum ./cmd/deltavacuum && go build -o bin/dvbench ./cmd/dvbench
#   python3 -m venv .cache/bench-venv && .cache/bench-venv/bin/pip install deltalake==1.6.6
#   OUT=.cache/bench-listing/results.jsonl bench/listing.sh [s3] [gcs] [azure] [sweep]
#   .cache/bench-venv/bin/python bench/listing_report.py .cache/bench-listing/results.jsonl
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-.cache/bench-listing/results.jsonl}
LATENCY=${LATENCY:-20ms}
OLD=${OLD:-.cache/deltavacuum-old}
mkdir -p "$(dirname "$OUT")"
posix=""
if [ -f .cache/testservers/data-dir ]; then posix="$(cat .cache/testservers/data-dir)/s3"; fi
if [ -n "${DATA_DIR:-}" ]; then posix="$DATA_DIR/s3"; fi
run() { # label store args...
	local label=$1 store=$2
	shift 2
	echo "== $label ($(uptime | sed 's/.*load/load/'))" >&2
	local extra=()
	if [ "$store" = s3 ] && [ -n "$posix" ]; then extra=(-posix-root "$posix"); fi
	bin/dvbench listing -store "$store" -latency "$LATENCY" -old "$OLD" -label "$label" -out "$OUT" "${extra[@]}" "$@"
}
parts=${*:-s3 gcs azure sweep}
for p in $parts; do
	case $p in
	s3 | gcs | azure)
		cases=dv-dry,old-dry,deltars-dry,dv-full,old-full,deltars-full
		[ "$p" = gcs ] && cases=dv-dry,old-dry,dv-full,old-full # delta-rs cannot list fake-gcs-server (docs)
		run "$p-100x60" "$p" -folders 100 -files 50 -stale 0.2 -commits 20 -cases "$cases"
		run "$p-100x600" "$p" -folders 100 -files 500 -stale 0.2 -commits 20 -cases "$cases"
		run "$p-datehour" "$p" -folders 100 -hours 24 -files 3 -stale 0.34 -commits 20 -cases "$cases"
		if [ "$p" = azure ]; then
			# Azurite takes about 135 uploads a second: 2 000 folders, not 10 000.
			run "$p-2000x3" "$p" -folders 2000 -files 3 -stale 0.34 -commits 20 -cases "$cases"
		else
			run "$p-10000x3" "$p" -folders 10000 -files 3 -stale 0.34 -commits 20 -cases "$cases"
			run "$p-log100k" "$p" -folders 100 -files 50 -stale 0.2 -commits 100000 -cases "$cases"
		fi
		;;
	sweep)
		for c in 1 4 16 64; do
			run "s3-100x600-c$c" s3 -folders 100 -files 500 -stale 0.2 -commits 20 -concurrency "$c" -cases dv-dry,old-dry
		done
		;;
	esac
done
