#!/usr/bin/env bash
# make mutation: mutation testing of the rules that decide a deletion (vacuum/doc.go names
# them, file by file) and of the run package, with go-gremlins/gremlins (pinned). Slow (1 h 40
# min on 2 cores), so not part of make test or CI. Writes the raw results to
# .cache/mutation/ and the score and every surviving mutant to docs/mutation-results.md;
# docs/mutation.md explains the survivors.
#
#   scripts/mutation.sh            both targets
#   scripts/mutation.sh rules      only vacuum's rule files
#   scripts/mutation.sh run        only the run package
set -euo pipefail
cd "$(dirname "$0")/.."
GREMLINS_VERSION=v0.6.0
GO=${GO:-go}
bin="$PWD/.cache/gremlins-$GREMLINS_VERSION/gremlins"
if [ ! -x "$bin" ]; then
  GOBIN="$(dirname "$bin")" "$GO" install "github.com/go-gremlins/gremlins/cmd/gremlins@$GREMLINS_VERSION"
fi
out=.cache/mutation
# vacuum's TestSuiteWithSpilledPlans reruns the whole suite with spilled plans; a rule's mutant
# fails the first run as it fails the rerun, so the rerun is skipped (half of each mutant's time).
export DELTAVACUUM_MUTATION=1
mkdir -p "$out"
if [ -z "${DELTAVACUUM_FIXTURES:-}" ] && [ -f ../shared/fixtures/delta-tables/INDEX.md ]; then
  DELTAVACUUM_FIXTURES="$(cd ../shared/fixtures/delta-tables && pwd)"
  export DELTAVACUUM_FIXTURES
fi

# The rule files of vacuum: every file vacuum/doc.go names in its list of rules. Every other
# non-test file of the package is left unmutated (its mutants would be counted against the
# rules' tests).
rule_files() {
  grep -o '[a-z_]*\.go' vacuum/doc.go | grep -v '_test\.go$' | sort -u
}
excludes=()
for f in vacuum/*.go; do
  base=$(basename "$f")
  case "$base" in *_test.go) continue ;; esac
  if ! rule_files | grep -qx "$base"; then
    excludes+=(-E "(^|/)${base//./\\.}\$")
  fi
done

targets=("${@:-rules run}")
# shellcheck disable=SC2068
for t in ${targets[@]}; do
  case "$t" in
  rules)
    echo "mutation: vacuum's rule files: $(rule_files | tr '\n' ' ')"
    "$bin" unleash ./vacuum "${excludes[@]}" --timeout-coefficient 3 -o "$out/rules.json" | tee "$out/rules.log"
    ;;
  run)
    # The tests that guard run/ live in its own package and in those that drive a run end to
    # end with the fixtures: scripts/mutation-go/go makes every "go test" of ./run (coverage
    # and each mutant) a test of all of them, and -coverpkg counts their coverage of run/.
    guards="./run/ . ./session/ ./undo/ ./internal/cli/"
    echo "mutation: the run package, with the tests of $guards"
    DELTAVACUUM_REAL_GO="$(command -v "$GO")" DELTAVACUUM_MUTATION_TARGET=run DELTAVACUUM_MUTATION_GUARDS="$guards" \
      PATH="$PWD/scripts/mutation-go:$PATH" \
      "$bin" unleash ./run --coverpkg ./run --timeout-coefficient 3 -o "$out/run.json" | tee "$out/run.log"
    ;;
  *)
    echo "mutation: unknown target $t (rules or run)" >&2
    exit 2
    ;;
  esac
done
python3 scripts/mutation_report.py "$out" docs/mutation-results.md
echo "mutation: docs/mutation-results.md written"
