#!/usr/bin/env bash
# make sizes: what each storage backend adds to a program's binary. Builds small programs
# that import the library with one backend each (as a library user would), and the command
# line, with the release flags (CGO_ENABLED=0, -trimpath, -ldflags "-s -w"), with and without
# -tags disable_grpc_modules, and prints a Markdown table (docs/dependencies.md holds it).
set -euo pipefail
cd "$(dirname "$0")/.."
work=.cache/sizes
rm -rf "$work"
mkdir -p "$work"
variant() { # name, imports...
  local name=$1; shift
  mkdir -p "$work/$name"
  {
    echo "package main"
    echo 'import ("context"; "fmt"; "os"; "github.com/deltavacuum/deltavacuum"; "github.com/deltavacuum/deltavacuum/vacuum"'
    for i in "$@"; do echo "_ \"github.com/deltavacuum/deltavacuum/$i\""; done
    echo ')'
    echo 'func main() { t, err := deltavacuum.Open(context.Background(), os.Args[1]); if err != nil { fmt.Println(err); return }; p, err := t.Plan(context.Background(), vacuum.Options{}); fmt.Println(p, err) }'
  } >"$work/$name/main.go"
  gofmt -w "$work/$name/main.go"
}
variant core
variant s3 storage/s3
variant azure storage/azure
variant gcs storage/gcs
variant all storage/location/all
# The readers (issue 34) called, not only imported: a blank import of packages without init
# links nothing.
mkdir -p "$work/readers"
cat >"$work/readers/main.go" <<'GO'
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/deltavacuum/deltavacuum"
	"github.com/deltavacuum/deltavacuum/readers/converted"
	"github.com/deltavacuum/deltavacuum/readers/iceberg"
	"github.com/deltavacuum/deltavacuum/readers/streaming"
	"github.com/deltavacuum/deltavacuum/storage/local"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

func main() {
	ctx := context.Background()
	t, err := deltavacuum.Open(ctx, os.Args[1])
	if err != nil {
		fmt.Println(err)
		return
	}
	p, err := t.Plan(ctx, vacuum.Options{})
	fmt.Println(p, err)
	s, _ := local.New(os.Args[1])
	it, err := iceberg.Find(ctx, s, iceberg.Options{})
	if it != nil {
		err = it.DataFiles(ctx, s, func(f iceberg.DataFile) error { fmt.Println(f.Key); return nil })
	}
	fmt.Println(err)
	c, err := converted.Detect(ctx, s, nil)
	fmt.Println(c, err)
	fmt.Println(streaming.Read(ctx, s, os.Args[2]))
}
GO
build() { # package, tags
  local out="$work/bin.$RANDOM"
  CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" ${2:+-tags "$2"} -o "$out" "$1"
  wc -c <"$out"
  rm -f "$out"
}
core=$(build ./$work/core "")
echo "| program (CGO_ENABLED=0, -trimpath, -s -w) | bytes | MiB | added to the library alone |"
echo "| --- | ---: | ---: | ---: |"
mib() { awk -v n="$1" 'BEGIN { printf "%.1f", n / 1048576 }'; }
row() { # label, bytes
  local added="—"
  [ "$2" != "$core" ] && added="+$(mib $(( $2 - core ))) MiB"
  printf '| %s | %d | %s | %s |\n' "$1" "$2" "$(mib "$2")" "$added"
}
row "library + local backend (\`deltavacuum.Open\`, \`Plan\`)" "$core"
for v in s3 azure gcs; do
  row "library + \`storage/$v\`" "$(build ./$work/$v "")"
done
row "library + \`storage/gcs\`, \`-tags disable_grpc_modules\`" "$(build ./$work/gcs disable_grpc_modules)"
row "library + \`readers/iceberg\`, \`readers/streaming\`, \`readers/converted\` called" "$(build ./$work/readers "")"
row "library + \`storage/location/all\` (the three)" "$(build ./$work/all "")"
row "library + \`storage/location/all\`, \`-tags disable_grpc_modules\`" "$(build ./$work/all disable_grpc_modules)"
row "command line (\`cmd/deltavacuum\`: every backend, serve with SQLite and Prometheus)" "$(build ./cmd/deltavacuum "")"
row "command line, \`-tags disable_grpc_modules\` (what make dist builds)" "$(build ./cmd/deltavacuum disable_grpc_modules)"
