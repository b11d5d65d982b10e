// Command dvbench generates Delta tables for benchmarks and measures deltavacuum and its
// baselines on them (wall time and peak RSS of a child process, medians of several runs).
//
//	dvbench gen -dir DIR -live N -tombstones M -untracked K -partitions P -dv-fraction F
//	dvbench reset [-verify] DIR
//	dvbench suite -table DIR [-reps R] [-cases floor,dv-dry,dv-full,...] [-out FILE.jsonl]
//	dvbench measure -- COMMAND ARGS...
//	dvbench replay DIR                       (log replay through the library, one JSON line)
//	dvbench plan-synthetic DIR               (planner on bench/synthetic, one JSON line)
//	dvbench run-synthetic DIR                (a real run, logging on, on bench/synthetic)
//	dvbench s3 -endpoint http://127.0.0.1:PORT -latency 20ms -concurrency 1,4,16,64
//	dvbench listing -store s3|gcs|azure -folders 100 -files 60 [-hours 24] -commits 20
//
// Generated tables must live in temporary directories: vacuum and reset delete files in them.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
)

const usage = `usage: dvbench COMMAND [flags]

commands:
  gen             write a synthetic Delta table into a new directory
  reset           restore a generated table after a vacuum (re-create stale files, reset the log)
  verify          check that every live file of a generated table is present
  suite           run the benchmark cases on a generated table, interleaved, with medians
  measure         run a command, print its wall time and peak RSS as JSON
  replay          read a table's log through the library (log replay), print JSON
  plan-synthetic  plan a FULL vacuum of a synthetic (unwritten) table, print time and memory
  run-synthetic   a real FULL run (logging on) of a synthetic table, print wall and CPU time
  s3              FULL vacuum on an S3 test server with added latency, at several concurrencies
  azure           the same on an Azure (Azurite) test server
  listing         requests by kind and time of deltavacuum (this build and an older one) and
                  delta-rs on a table laid out on an S3, GCS or Azure test server
  profile         one FULL (or -dry-run) vacuum of a generated table through the library, with
                  a CPU profile

Run "dvbench COMMAND -h" for the flags of a command.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	cmds := map[string]func(context.Context, []string) error{
		"gen":            cmdGen,
		"reset":          cmdReset,
		"verify":         cmdVerify,
		"suite":          cmdSuite,
		"measure":        cmdMeasure,
		"replay":         cmdReplay,
		"plan-synthetic": cmdPlanSynthetic,
		"run-synthetic":  cmdRunSynthetic,
		"s3":             cmdS3,
		"azure":          cmdAzure,
		"listing":        cmdListing,
		"profile":        cmdProfile,
	}
	cmd, ok := cmds[os.Args[1]]
	if !ok {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	if err := cmd(ctx, os.Args[2:]); err != nil {
		var u usageError
		if errors.As(err, &u) {
			fmt.Fprintln(os.Stderr, "dvbench:", err)
			os.Exit(2)
		}
		fmt.Fprintln(os.Stderr, "dvbench:", err)
		os.Exit(1)
	}
}

type usageError struct{ msg string }

func (u usageError) Error() string { return u.msg }
