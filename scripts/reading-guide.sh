#!/usr/bin/env bash
# make reading-guide: the files a FULL run on local disk executes with real logic, measured:
# the binary is built with coverage (go build -cover), runs one real FULL VACUUM of a copy of
# a fixture (delta/basic-with-inserts-deletes-checkpoint, every file aged 30 days), and every
# file with at least 8 statements run is written to docs/reading-guide.txt, which
# docs/architecture.md's reading guide must name, file by file (TestReadingGuide). Files that
# only build the command line's commands (a constructor run at every start, whatever the
# command) are left out, each named below.
set -euo pipefail
cd "$(dirname "$0")/.."
fixtures="${DELTAVACUUM_FIXTURES:-$(cd ../shared/fixtures/delta-tables && pwd)}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
go build -cover -coverpkg=./... -o "$work/dv" ./cmd/deltavacuum
cp -r "$fixtures/delta/basic-with-inserts-deletes-checkpoint" "$work/t"
chmod -R u+w "$work/t"
find "$work/t" -exec touch -d '30 days ago' {} +
mkdir "$work/cov"
GOCOVERDIR="$work/cov" "$work/dv" vacuum "$work/t" --retain-hours 0 --conf spark.databricks.delta.retentionDurationCheck.enabled=false >/dev/null
go tool covdata textfmt -i="$work/cov" -o "$work/cov.txt"
# Constructors of other commands, run at every start: no logic of the run.
constructors='internal/cli/(inspect|pins|undo|unlock|sql|version|explain|demo|serve|options_cmd|complete)\.go'
awk -F'[: ,]' 'NR>1 && $NF>0 {n[$1]+=$(NF-1)} END {for (f in n) if (n[f] >= 8) print f}' "$work/cov.txt" |
  sed 's#^github.com/deltavacuum/deltavacuum/##' | grep -Ev "^($constructors)$" | sort > docs/reading-guide.txt
echo "reading-guide: $(wc -l < docs/reading-guide.txt) files in docs/reading-guide.txt"
