package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestGenResetVerify(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "t")
	if err := cmdGen(ctx, []string{"-dir", dir, "-live", "500", "-tombstones", "50", "-untracked", "20", "-partitions", "3"}); err != nil {
		t.Fatal(err)
	}
	stale, err := os.ReadFile(stalePath(dir))
	if err != nil {
		t.Fatal(err)
	}
	keys := strings.Fields(string(stale))
	tb, _, err := loadTable(dir)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(keys)) != tb.Stale() {
		t.Fatalf("stale list has %d keys, want %d", len(keys), tb.Stale())
	}
	// Delete what a vacuum would, and one live file; reset must re-create them all and report
	// the live one.
	for _, k := range keys {
		if err := os.Remove(filepath.Join(dir, k)); err != nil {
			t.Fatal(err)
		}
	}
	live := ""
	tb.Files(0, func(k string) {
		if live == "" {
			live = k
		}
	})
	if err := os.Remove(filepath.Join(dir, live)); err != nil {
		t.Fatal(err)
	}
	if err := cmdVerify(ctx, []string{dir}); err == nil {
		t.Fatal("verify passed with a live file missing")
	}
	if err := cmdReset(ctx, []string{"-verify", dir}); err == nil || !strings.Contains(err.Error(), live) {
		t.Fatalf("reset -verify: %v, want an error naming %s", err, live)
	}
	if err := cmdVerify(ctx, []string{dir}); err != nil {
		t.Fatalf("after reset: %v", err)
	}
	for _, k := range keys {
		if _, err := os.Lstat(filepath.Join(dir, k)); err != nil {
			t.Errorf("stale file %s not re-created: %v", k, err)
		}
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := median(c.in); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

// TestProfile: dvbench profile runs a real FULL vacuum of a generated table under the CPU
// profiler, writes the profile, deletes the stale files and puts them back (the table is
// whole after it), and refuses to run without a profile file; -uri -dry-run profiles a table
// by its location, with storage options.
func TestProfile(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "t")
	if err := cmdGen(ctx, []string{"-dir", dir, "-live", "300", "-tombstones", "30", "-untracked", "10", "-partitions", "2"}); err != nil {
		t.Fatal(err)
	}
	prof := filepath.Join(t.TempDir(), "cpu.pb")
	if err := cmdProfile(ctx, []string{"-cpuprofile", prof, dir}); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(prof); err != nil || st.Size() == 0 {
		t.Fatalf("profile %s: %v", prof, err)
	}
	if err := cmdVerify(ctx, []string{dir}); err != nil {
		t.Fatalf("the table is not whole after the profiled run: %v", err)
	}
	tb, _, err := loadTable(dir)
	if err != nil {
		t.Fatal(err)
	}
	stale, err := os.ReadFile(stalePath(dir))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range strings.Fields(string(stale)) {
		if _, err := os.Stat(filepath.Join(dir, k)); err != nil {
			t.Fatalf("stale file %s not put back after the run (%d stale): %v", k, tb.Stale(), err)
		}
	}
	if err := cmdProfile(ctx, []string{dir}); err == nil {
		t.Fatal("profile without -cpuprofile ran")
	}
	// A table by its location: a DRY RUN only.
	if err := cmdProfile(ctx, []string{"-uri", "-cpuprofile", prof, dir}); err == nil {
		t.Fatal("profile -uri without -dry-run ran")
	}
	if err := cmdProfile(ctx, []string{"-uri", "-dry-run", "-storage-option", "concurrency=4", "-cpuprofile", prof, "file://" + dir}); err != nil {
		t.Fatal(err)
	}
	if err := cmdProfile(ctx, []string{"-uri", "-dry-run", "-storage-option", "no_such_option=1", "-cpuprofile", prof, dir}); err == nil {
		t.Fatal("profile -uri took an unknown storage option")
	}
}

// TestConcurrencyLevels: dvbench listing -concurrency takes a comma list of positive numbers,
// and -batch-size a number of keys (0 or more),
// refused before anything is uploaded otherwise; empty is the store's default.
func TestConcurrencyLevels(t *testing.T) {
	for flag, want := range map[string][]string{"": {""}, "4": {"4"}, "1, 4,16,64": {"1", "4", "16", "64"}} {
		got, err := concurrencyLevels(flag)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("concurrencyLevels(%q) = %q, %v; want %q", flag, got, err, want)
		}
	}
	for _, flag := range []string{"0", "-1", "4,", ",4", "4,,8", "x", "4;8", "1e3", "99999999999999999999"} {
		if got, err := concurrencyLevels(flag); err == nil {
			t.Errorf("concurrencyLevels(%q) = %q; want it refused", flag, got)
		}
	}
	if err := cmdListing(context.Background(), []string{"-concurrency", "4,x"}); err == nil || !strings.Contains(err.Error(), `"x"`) {
		t.Errorf("listing -concurrency 4,x: %v; want it refused before any server is opened", err)
	}
	for _, bad := range []string{"-1", "x", "1.5", "99999999999999999999"} {
		if err := cmdListing(context.Background(), []string{"-batch-size", bad}); err == nil || !strings.Contains(err.Error(), "batch-size") {
			t.Errorf("listing -batch-size %s: %v; want it refused before any server is opened", bad, err)
		}
	}
}
