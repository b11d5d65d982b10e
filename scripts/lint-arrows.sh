#!/usr/bin/env bash
# Proves that the depguard rules of .golangci.yml fail on an import that points up the package
# order (docs/architecture.md): in a temporary copy of the tree, it adds one upward import per
# rule and checks that golangci-lint reports each of them, after checking that the unchanged
# copy passes. Test files are left out (the rules do not apply to them, and a test import could
# close a cycle). Usage: scripts/lint-arrows.sh PATH-TO-GOLANGCI-LINT (make lint passes it).
set -euo pipefail
lint=${1:?usage: scripts/lint-arrows.sh path/to/golangci-lint}
if [[ $lint == */* ]]; then
  lint=$(cd "$(dirname "$lint")" && pwd)/$(basename "$lint") # it runs from a temporary copy
fi
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git ls-files -co --exclude-standard -z | tar --null -cf - -T - | tar -xf - -C "$tmp"
M=github.com/deltavacuum/deltavacuum

# Each case: the directory of the importing package, the imported package, the rule it breaks,
# and optionally the start of the importing file's name (default zz_arrow).
cases=(
  "storage/mem $M/deltalog storage"
  "storage/faulty $M below-root"
  "deltalog $M/catalog log-and-below"
  "vacuum net/http planner"
  "vacuum $M/service/schedule library"
  "storage/local $M/bench/tablegen library"
  "service/zzarrow $M/internal/cli service"
  "internal/parquetguard $M/sql storage"
  "storage/counting $M/internal/checkpointwriter log-and-below"
  "storage/faulty $M/session library"
  "session $M/service/config session"
  "service/runner net/http service-runner"
  "service/state html/template service-runner"
  "service/tables github.com/prometheus/client_golang/prometheus/promhttp service-tables"
  "readers/streaming net/http readers"
)
dirs=()
for c in "${cases[@]}"; do
  read -r dir _ _ <<<"$c"
  dirs+=("./$dir/")
done

# The unchanged copy passes (service/zzarrow does not exist yet).
(cd "$tmp" && "$lint" run --tests=false --enable-only depguard "${dirs[@]:0:6}" ./internal/parquetguard/ ./storage/counting/ ./session/ ./service/ ./service/runner/ ./service/state/ ./service/tables/) >/dev/null

i=0
for c in "${cases[@]}"; do
  read -r dir imp _ name <<<"$c"
  mkdir -p "$tmp/$dir"
  pkg=$(cd "$tmp" && go list -f '{{.Name}}' "./$dir/" 2>/dev/null || echo zzarrow)
  printf 'package %s\n\nimport _ "%s"\n' "$pkg" "$imp" >"$tmp/$dir/${name:-zz_arrow}$i.go"
  i=$((i + 1))
done
out=$(cd "$tmp" && "$lint" run --tests=false --enable-only depguard "${dirs[@]}" 2>&1) && {
  echo "lint-arrows: golangci-lint passed a tree with upward imports:" >&2
  echo "$out" >&2
  exit 1
}
failed=0
i=0
for c in "${cases[@]}"; do
  read -r dir imp rule name <<<"$c"
  file=$dir/${name:-zz_arrow}$i.go
  i=$((i + 1))
  if ! grep -q "^$file:.*depguard" <<<"$out"; then
    echo "lint-arrows: $dir importing $imp was not reported (rule $rule)" >&2
    failed=1
  fi
done
if [ "$failed" -ne 0 ]; then
  echo "$out" >&2
  exit 1
fi
# The refusals themselves are what was expected: printed, they read as failures of the tree.
echo "lint-arrows: ok: each of the ${#cases[@]} upward imports planted in a copy was refused by its depguard rule"
