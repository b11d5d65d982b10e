package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/deltavacuum/deltavacuum/bench/synthetic"
	"github.com/deltavacuum/deltavacuum/bench/tablegen"
)

func specFlags(fs *flag.FlagSet) *tablegen.Spec {
	s := &tablegen.Spec{}
	fs.Int64Var(&s.Live, "live", 1_000_000, "live files (add actions)")
	fs.Int64Var(&s.Tombstones, "tombstones", 150_000, "tombstoned files still on disk (expired remove actions)")
	fs.Int64Var(&s.Untracked, "untracked", 50_000, "untracked files (no action names them)")
	fs.IntVar(&s.Partitions, "partitions", 100, "partition directories (0: unpartitioned)")
	fs.Float64Var(&s.DVFraction, "dv-fraction", 0.05, "fraction of live adds and tombstones with a deletion vector (64 per DV file)")
	fs.IntVar(&s.Commits, "commits", 3, "JSON commits after the checkpoint")
	fs.Float64Var(&s.JSONTombstoneFraction, "json-tombstones", 0.5, "fraction of the tombstones written in the JSON commits (the rest are in the checkpoint)")
	fs.BoolVar(&s.NoStats, "no-stats", false, "leave add.stats out")
	fs.Int64Var(&s.CheckpointPartRows, "checkpoint-part-rows", 0, "split a larger checkpoint into a multi-part checkpoint of parts of this many rows (0: one file)")
	fs.Uint64Var(&s.Seed, "seed", 1, "seed of the UUIDs in the names")
	return s
}

// StalePath is the list of stale keys (one per line) the generator writes beside a table, for
// the find + rm floor.
func stalePath(dir string) string { return strings.TrimSuffix(dir, "/") + ".stale.txt" }

func cmdGen(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	dir := fs.String("dir", "", "directory to create the table in (must not exist or be empty; use a temporary directory)")
	logOnly := fs.Bool("synthetic", false, "write only _delta_log/ (for plan-synthetic, which serves the data files without writing them)")
	inv := fs.Bool("inventory", false, "with -synthetic: also write DIR.inventory.parquet, an inventory of every file (for plan-synthetic -inventory)")
	spec := specFlags(fs)
	if err := fs.Parse(args); err != nil {
		return usageError{err.Error()}
	}
	if *dir == "" {
		return usageError{"gen: -dir is required"}
	}
	t, err := tablegen.New(*spec)
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(*dir)
	if err != nil {
		return err
	}
	start := time.Now()
	if *logOnly {
		if ents, err := os.ReadDir(abs); err == nil && len(ents) > 0 {
			return fmt.Errorf("%s is not empty; the generator writes only into a new directory", abs)
		}
		if err := t.SaveSpec(tablegen.SpecPath(abs)); err != nil {
			return err
		}
		if err := t.WriteLog(abs); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "dvbench gen: log of %d live, %d stale files (synthetic data files) written in %.1fs\n",
			t.Live, t.Stale(), time.Since(start).Seconds())
		if *inv {
			store, err := synthetic.New(t, abs)
			if err != nil {
				return err
			}
			n, err := writeInventory(ctx, store, inventoryPath(abs))
			if err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "dvbench gen: inventory of %d rows in %s\n", n, inventoryPath(abs))
		}
		return nil
	}
	fmt.Fprintf(os.Stderr, "dvbench gen: %s: %d live, %d tombstoned, %d untracked files, %d partitions, %d+%d DV files; %d files to delete\n",
		abs, t.Live, t.Tombstones, t.Untracked, t.Partitions, t.LiveDVFiles(), t.StaleDVFiles(), t.Stale())
	err = t.WriteLocal(ctx, abs, func(n int64) {
		fmt.Fprintf(os.Stderr, "\rdvbench gen: %d files written (%.0fs)", n, time.Since(start).Seconds())
	})
	fmt.Fprintln(os.Stderr)
	if err != nil {
		return err
	}
	if err := writeStaleList(t, abs); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "dvbench gen: done in %.1fs; spec in %s, stale list in %s\n",
		time.Since(start).Seconds(), tablegen.SpecPath(abs), stalePath(abs))
	return nil
}

func writeStaleList(t *tablegen.Table, dir string) error {
	f, err := os.Create(stalePath(dir))
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	t.StaleKeys(func(k string) {
		w.WriteString(k)
		w.WriteByte('\n')
	})
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func loadTable(dir string) (*tablegen.Table, string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, "", err
	}
	t, err := tablegen.LoadSpec(tablegen.SpecPath(abs))
	if err != nil {
		return nil, "", fmt.Errorf("%s is not a table written by dvbench gen: %w", abs, err)
	}
	return t, abs, nil
}

func cmdReset(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("reset", flag.ContinueOnError)
	verify := fs.Bool("verify", false, "also check that every live file is present")
	if err := fs.Parse(args); err != nil {
		return usageError{err.Error()}
	}
	if fs.NArg() != 1 {
		return usageError{"reset: one table directory"}
	}
	t, dir, err := loadTable(fs.Arg(0))
	if err != nil {
		return err
	}
	return t.Reset(ctx, dir, *verify)
}

func cmdVerify(ctx context.Context, args []string) error {
	if len(args) != 1 {
		return usageError{"verify: one table directory"}
	}
	t, dir, err := loadTable(args[0])
	if err != nil {
		return err
	}
	return t.Verify(dir)
}
