package vacuum_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/internal/fixtures"
	"github.com/deltavacuum/deltavacuum/storage/local"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

var update = flag.Bool("update", false, "rewrite the golden plans in testdata/golden")

// refusedFixtures are fixture tables the contract says to refuse, with the reason.
var refusedFixtures = map[string]error{
	// Its 'p' deletion vector is an unfilled template, file:{{FOLDER_WITH_SPECIAL_CHAR}}/…,
	// which is not a valid URI: the file the table references cannot be located.
	"delta/table-with-dv-special-char": deltalog.ErrBadPath,
}

// TestFixtureVacuum vacuums a copy of every fixture table with every file 30 days old,
// RETAIN 0 HOURS and the check off, compares the plan with its golden file and the count
// INDEX.md gives for the reference rules, runs it, and checks nothing the table needs is lost.
func TestFixtureVacuum(t *testing.T) {
	now := time.Now()
	for _, tbl := range fixtures.Tables(t) {
		t.Run(tbl.Name, func(t *testing.T) {
			dir := fixtures.Copy(t, tbl.Name, now.Add(-30*24*time.Hour))
			store, err := local.New(dir)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			opts := vacuum.Options{RetainHours: ptr(0.0), DisableRetentionCheck: true, Now: now}
			planner, err := vacuum.NewPlanner(ctx, store, opts)
			if want, ok := refusedFixtures[tbl.Name]; ok {
				if !errors.Is(err, want) {
					t.Fatalf("got %v, want refusal %v", err, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			plan, err := planner.Plan(ctx)
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, tbl.Name, plan)
			if tbl.SparkLikeDeletes >= 0 && int(plan.NumFilesToDelete) != tbl.SparkLikeDeletes {
				t.Errorf("plan deletes %d files, INDEX.md says the reference rules delete %d", plan.NumFilesToDelete, tbl.SparkLikeDeletes)
			}

			before := fixtures.Files(t, dir)
			needed := neededKeys(t, planner.Snapshot(), store)
			res, err := vacuum.Execute(ctx, store, plan, vacuum.ExecOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if res.NumDeletedFiles != plan.NumFilesToDelete {
				t.Errorf("deleted %d files, planned %d", res.NumDeletedFiles, plan.NumFilesToDelete)
			}
			after := map[string]bool{}
			for _, f := range fixtures.Files(t, dir) {
				after[f] = true
			}
			wantGone := map[string]bool{}
			for _, f := range plan.Files.MustCollect() {
				wantGone[f.Path] = true
				if f.Checksum != "" {
					wantGone[f.Checksum] = true
				}
			}
			for _, f := range before {
				switch {
				case wantGone[f] && after[f]:
					t.Errorf("%s was planned for deletion but is still there", f)
				case !wantGone[f] && !after[f]:
					t.Errorf("%s was deleted but not planned", f)
				case strings.HasPrefix(f, "_delta_log/") && !after[f]:
					t.Errorf("%s under _delta_log was deleted", f)
				case needed[f] && !after[f]:
					t.Errorf("%s is referenced by the table but was deleted", f)
				}
			}
			if _, err := deltalog.Load(ctx, store); err != nil {
				t.Errorf("the table no longer loads after vacuum: %v", err)
			}
		})
	}
}

// neededKeys returns every key a live add or any tombstone references (files and DVs) that
// exists on disk; none of the live ones may be deleted.
func neededKeys(t *testing.T, snap *deltalog.Snapshot, store *local.Store) map[string]bool {
	t.Helper()
	m := map[string]bool{}
	err := snap.Files(context.Background(), store, func(f deltalog.File) error {
		if f.Removed {
			return nil
		}
		if f.Key != "" {
			m[f.Key] = true
		}
		if f.DVKey != "" {
			m[f.DVKey] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func checkGolden(t *testing.T, name string, plan *vacuum.Plan) {
	t.Helper()
	var lines []string
	for _, f := range plan.Files.MustCollect() {
		l := fmt.Sprintf("file %-15s %s", f.Reason, f.Path)
		if f.Checksum != "" {
			l += "  (+ " + f.Checksum + ")"
		}
		lines = append(lines, l)
	}
	sort.Strings(lines)
	for _, d := range plan.Dirs {
		lines = append(lines, "dir  "+d.Path+"/")
	}
	got := strings.Join(lines, "\n") + "\n"
	path := filepath.Join("testdata", "golden", strings.ReplaceAll(name, "/", "__")+".txt")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden plan missing (run go test ./vacuum -run TestFixtureVacuum -update): %v", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("plan differs from %s (-golden +got):\n%s", path, diff)
	}
}

func ptr[T any](v T) *T { return &v }

// TestFixturePathDeletionVector fills in the template of the fixture's 'p' deletion vector,
// as the reference's own suite does before using the table, and checks the file it names in
// the table root is protected [safer]: the reference never protects 'p' files and deletes it.
func TestFixturePathDeletionVector(t *testing.T) {
	now := time.Now()
	dir := fixtures.Copy(t, "delta/table-with-dv-special-char", now.Add(-30*24*time.Hour))
	commit := filepath.Join(dir, "_delta_log", "00000000000000000000.json")
	b, err := os.ReadFile(commit)
	if err != nil {
		t.Fatal(err)
	}
	folder := "//" + filepath.ToSlash(dir) + "/folder&with%25special%20char"
	b = []byte(strings.ReplaceAll(string(b), "{{FOLDER_WITH_SPECIAL_CHAR}}", folder))
	if err := os.WriteFile(commit, b, 0o644); err != nil {
		t.Fatal(err)
	}
	store, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	planner, err := vacuum.NewPlanner(context.Background(), store, vacuum.Options{RetainHours: ptr(0.0), DisableRetentionCheck: true, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := planner.Plan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if plan.Files.Len() != 0 {
		t.Errorf("plan deletes %v; the 'p' deletion vector inside the table must be kept", plan.Files)
	}
}
