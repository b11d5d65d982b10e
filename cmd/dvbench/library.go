package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/deltavacuum/deltavacuum/bench"
	"github.com/deltavacuum/deltavacuum/bench/synthetic"
	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/inventory"
	"github.com/deltavacuum/deltavacuum/storage/local"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

func printJSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Println(string(b))
	return err
}

const mib = 1 << 20

// cmdReplay reads the log of a table and streams its reconciled file actions: what the
// planner does before it lists anything.
func cmdReplay(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile to this file")
	if err := fs.Parse(args); err != nil {
		return usageError{err.Error()}
	}
	if fs.NArg() != 1 {
		return usageError{"replay: one table directory"}
	}
	store, err := local.New(fs.Arg(0))
	if err != nil {
		return err
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	base := bench.LiveHeap()
	h := bench.StartHeapSampler()
	start := time.Now()
	snap, err := deltalog.Load(ctx, store)
	if err != nil {
		return err
	}
	var adds, removes int64
	err = snap.Files(ctx, store, func(f deltalog.File) error {
		if f.Removed {
			removes++
		} else {
			adds++
		}
		return nil
	})
	if err != nil {
		return err
	}
	elapsed := time.Since(start)
	peakHeap, peakSys := h.Stop()
	return printJSON(map[string]any{
		"version": snap.Version, "adds": adds, "removes": removes, "seconds": elapsed.Seconds(),
		"peakHeapMiB": float64(peakHeap-base) / mib, "peakRuntimeMiB": float64(peakSys) / mib,
	})
}

// cmdPlanSynthetic plans a FULL vacuum (retention 0) of a table whose log was written by
// "dvbench gen -synthetic", served by bench/synthetic, and prints time and memory.
func cmdPlanSynthetic(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("plan-synthetic", flag.ContinueOnError)
	lite := fs.Bool("lite", false, "plan a LITE vacuum instead")
	heapProfile := fs.String("heapprofile", "", "write a heap profile (live objects) to this file after planning")
	useInventory := fs.Bool("inventory", false, "plan from DIR.inventory.parquet (written by gen -synthetic -inventory) instead of listing")
	digest := fs.Bool("digest", false, "also compute the plan's digest (the files sorted by path: sorted runs merged when the plan spilled) and time it")
	rowsInMemory := fs.Int("inventory-rows-in-memory", 0, "with -inventory, the inventory rows held in memory before the rest spill to a temporary file (0: the default, 2,000,000)")
	filesInMemory := fs.Int("files-in-memory", 0, "the plan's files held in memory before the rest spills to a temporary file (0: the default, vacuum.DefaultFilesInMemory; -1: never spill)")
	if err := fs.Parse(args); err != nil {
		return usageError{err.Error()}
	}
	if fs.NArg() != 1 {
		return usageError{"plan-synthetic: one directory written by dvbench gen -synthetic"}
	}
	t, dir, err := loadTable(fs.Arg(0))
	if err != nil {
		return err
	}
	store, err := synthetic.New(t, dir)
	if err != nil {
		return err
	}
	zero := 0.0
	opts := vacuum.Options{RetainHours: &zero, DisableRetentionCheck: true, FilesInMemory: *filesInMemory}
	if *lite {
		opts.Mode = vacuum.ModeLite
	}
	base := bench.LiveHeap()
	h := bench.StartHeapSampler()
	start := time.Now()
	var inventoryRows int64
	if *useInventory {
		l, err := inventory.Open(ctx, inventory.Source{Location: inventoryPath(dir), Format: inventory.FormatParquet}, store.Location(), inventory.Options{RowsInMemory: *rowsInMemory})
		if err != nil {
			return err
		}
		defer l.Close()
		opts.Inventory, inventoryRows = l, l.Rows()
	}
	pl, err := vacuum.NewPlanner(ctx, store, opts)
	if err != nil {
		return err
	}
	protected := time.Since(start)
	plan, err := pl.Plan(ctx)
	if err != nil {
		return err
	}
	elapsed := time.Since(start)
	var digestSeconds float64
	if *digest {
		d0 := time.Now()
		if d := vacuum.Digest(plan); !vacuum.ValidDigest(d) {
			return fmt.Errorf("plan-synthetic: %s", d)
		}
		digestSeconds = time.Since(d0).Seconds()
	}
	peakHeap, peakSys := h.Stop()
	retained := bench.LiveHeap()
	if *heapProfile != "" {
		f, err := os.Create(*heapProfile)
		if err != nil {
			return err
		}
		if err := pprof.WriteHeapProfile(f); err != nil {
			return err
		}
		f.Close()
	}
	runtime.KeepAlive(pl)
	// The plan's own share (one File per candidate) is reported apart: it grows with the
	// files to delete, not with the live files.
	files := int64(plan.Files.Len())
	spilled, spillBytes := plan.Files.Spilled(), plan.Files.SpillBytes()
	_ = plan.Close()
	plan.Files = vacuum.FileList{}
	withoutPlan := bench.LiveHeap()
	runtime.KeepAlive(pl)
	return printJSON(map[string]any{
		"inventoryRows": inventoryRows, "source": plan.Source,
		"live": t.Live, "stale": t.Stale(), "candidates": files, "spilled": spilled, "spillBytes": spillBytes, "listed": store.Listed.Load(),
		"protected": plan.Protected, "secondsReadingLog": protected.Seconds(), "seconds": elapsed.Seconds(), "digestSeconds": digestSeconds,
		"baseHeapMiB":           float64(base) / mib,
		"peakHeapMiB":           float64(peakHeap) / mib,
		"peakRuntimeMiB":        float64(peakSys) / mib,
		"retainedHeapMiB":       float64(retained) / mib,
		"retainedNoPlanHeapMiB": float64(withoutPlan) / mib,
		"gogc":                  os.Getenv("GOGC"),
	})
}
