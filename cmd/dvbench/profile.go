package main

import (
	"context"
	"flag"
	"os"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/deltavacuum/deltavacuum"
	"github.com/deltavacuum/deltavacuum/bench/tablegen"
	"github.com/deltavacuum/deltavacuum/storage/location"
	_ "github.com/deltavacuum/deltavacuum/storage/location/all"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// cmdProfile runs one vacuum of a table written by dvbench gen through the library, as the
// suite's dv-full and dv-dry cases run the CLI (retention 0, the check off), with a CPU
// profile of the whole run, then resets the table. It is how docs/benchmarks.md says where
// a run's CPU goes. What the CLI adds (printing a DRY RUN's paths, the summary) is not in it.
func cmdProfile(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("profile", flag.ContinueOnError)
	cpuProfile := fs.String("cpuprofile", "", "write the CPU profile of the run to this file (required)")
	dryRun := fs.Bool("dry-run", false, "plan only (DRY RUN)")
	uri := fs.Bool("uri", false, "the argument is a table's location (any store: a DRY RUN only, the table is not reset)")
	var storageOptions []string
	fs.Func("storage-option", "KEY=VALUE for the store of -uri (repeatable)", func(v string) error {
		storageOptions = append(storageOptions, v)
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return usageError{err.Error()}
	}
	if fs.NArg() != 1 || *cpuProfile == "" {
		return usageError{"profile: -cpuprofile FILE and one table directory written by dvbench gen (or -uri -dry-run LOCATION)"}
	}
	if *uri && !*dryRun {
		return usageError{"profile: -uri runs a DRY RUN only (-dry-run)"}
	}
	var t *tablegen.Table
	var table *deltavacuum.Table
	dir := fs.Arg(0)
	if *uri {
		opts, err := location.ParseStorageOptions(storageOptions)
		if err != nil {
			return usageError{err.Error()}
		}
		if table, err = deltavacuum.OpenWith(ctx, dir, opts); err != nil {
			return err
		}
	} else {
		var err error
		if t, dir, err = loadTable(dir); err != nil {
			return err
		}
		if table, err = deltavacuum.Open(ctx, dir); err != nil {
			return err
		}
	}
	f, err := os.Create(*cpuProfile)
	if err != nil {
		return err
	}
	defer f.Close()
	zero := 0.0
	counters := vacuum.NewCounters()
	opts := deltavacuum.VacuumOptions{Options: vacuum.Options{RetainHours: &zero, DisableRetentionCheck: true, Counters: counters}, DryRun: *dryRun}
	opts.Exec.Counters = counters
	phases := watchPhases(counters)
	var before, after syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	if err := pprof.StartCPUProfile(f); err != nil {
		return err
	}
	start := time.Now()
	res, err := table.Vacuum(ctx, opts)
	elapsed := time.Since(start)
	pprof.StopCPUProfile()
	walls := phases()
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	if err != nil {
		return err
	}
	out := map[string]any{"seconds": elapsed.Seconds(), "cpuSeconds": cpuSeconds(after) - cpuSeconds(before),
		"files": res.NumDeletedFiles, "dryRun": *dryRun, "phaseSeconds": walls}
	if t != nil && !*dryRun {
		if err := t.Reset(ctx, dir, false); err != nil {
			return err
		}
	}
	return printJSON(out)
}

// watchPhases samples the run's phase every millisecond; the function it returns stops and
// gives the wall time spent in each phase (to the millisecond; the time before the first
// phase is "starting").
func watchPhases(c *vacuum.Counters) func() map[string]float64 {
	out := map[string]float64{}
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		tk := time.NewTicker(time.Millisecond)
		defer tk.Stop()
		last, at := "", time.Now()
		for {
			select {
			case <-done:
				out[nameOf(last)] += time.Since(at).Seconds()
				return
			case now := <-tk.C:
				if p := c.Phase(); p != last {
					out[nameOf(last)] += now.Sub(at).Seconds()
					last, at = p, now
				}
			}
		}
	}()
	return func() map[string]float64 {
		close(done)
		<-stopped
		return out
	}
}

func nameOf(phase string) string {
	if phase == "" {
		return "starting"
	}
	return phase
}
