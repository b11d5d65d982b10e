package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/deltavacuum/deltavacuum"
	"github.com/deltavacuum/deltavacuum/bench/synthetic"
	"github.com/deltavacuum/deltavacuum/bench/tablegen"
	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/counting"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// cmdRunSynthetic makes a real FULL run (retention 0, logging on: VACUUM START and END
// committed, the log re-checked) on a table written by "dvbench gen -synthetic", served by
// bench/synthetic (data files are counted, not deleted; no run record, which the synthetic
// store cannot write), prints wall and CPU time and the storage requests, and then puts the
// log back as generated (the START and END commits removed, _last_vacuum_info rewritten).
func cmdRunSynthetic(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("run-synthetic", flag.ContinueOnError)
	if err := fs.Parse(args); err != nil {
		return usageError{err.Error()}
	}
	if fs.NArg() != 1 {
		return usageError{"run-synthetic: one directory written by dvbench gen -synthetic"}
	}
	t, dir, err := loadTable(fs.Arg(0))
	if err != nil {
		return err
	}
	store, err := synthetic.New(t, dir)
	if err != nil {
		return err
	}
	if err := resetSyntheticLog(ctx, t, dir, store); err != nil {
		return err
	}
	zero, on := 0.0, true
	opts := deltavacuum.VacuumOptions{Options: vacuum.Options{RetainHours: &zero, DisableRetentionCheck: true},
		Logging: &on, NoRunRecord: true}
	var before, after syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	start := time.Now()
	res, err := deltavacuum.OpenStore(counting.Wrap(store)).Vacuum(ctx, opts)
	elapsed := time.Since(start)
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	if err != nil {
		return err
	}
	out := map[string]any{"seconds": elapsed.Seconds(), "cpuSeconds": cpuSeconds(after) - cpuSeconds(before),
		"deleted": res.NumDeletedFiles, "startVersion": res.StartVersion, "status": res.Status,
		"requests": res.Requests}
	if err := resetSyntheticLog(ctx, t, dir, store); err != nil {
		return err
	}
	return printJSON(out)
}

// resetSyntheticLog removes the commits after the generated ones and rewrites
// _last_vacuum_info as generated.
func resetSyntheticLog(ctx context.Context, t *tablegen.Table, dir string, store storage.Store) error {
	for v := t.LatestVersion() + 1; ; v++ {
		res, err := store.Delete(ctx, []string{deltalog.CommitKey(v)})
		if err != nil {
			return err
		}
		if res[0].Err != nil {
			return res[0].Err
		}
		if res[0].Gone {
			break
		}
	}
	err := os.WriteFile(filepath.Join(dir, "_delta_log", "_last_vacuum_info"), t.LastVacuumInfo(), 0o644)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("resetting %s: %w", dir, err)
	}
	return nil
}

// cpuSeconds is the user and system CPU time of a getrusage reading.
func cpuSeconds(r syscall.Rusage) float64 {
	return time.Duration(r.Utime.Nano() + r.Stime.Nano()).Seconds()
}
