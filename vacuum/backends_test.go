package vacuum_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deltavacuum/deltavacuum/internal/fixtures"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/local"
	"github.com/deltavacuum/deltavacuum/storage/storagetest"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// upload puts every file of the local table dir into store.
func upload(t *testing.T, dir string, store storage.Store) {
	t.Helper()
	for _, rel := range fixtures.Files(t, dir) {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		if err := store.Put(context.Background(), rel, b); err != nil {
			t.Fatalf("uploading %s: %v", rel, err)
		}
	}
}

// deletedKeys returns the files (and checksum companions) a plan deletes, sorted.
func deletedKeys(plan *vacuum.Plan) []string {
	out := []string{}
	for _, f := range plan.Files.MustCollect() {
		out = append(out, f.Path+" "+string(f.Reason))
		if f.Checksum != "" {
			out = append(out, f.Checksum+" checksum")
		}
	}
	sort.Strings(out)
	return out
}

// TestFixturesOnEveryBackend uploads every fixture table to each backend (local disk, memory,
// and the S3, Azure and GCS test servers when they run) and checks that the plan and the keys
// deleted equal the local result for the same table.
func TestFixturesOnEveryBackend(t *testing.T) {
	if testing.Short() {
		t.Skip("uploads every fixture to every server")
	}
	// Objects on servers get the server's clock: plan 48 hours ahead, RETAIN 0 HOURS.
	clock := time.Now().Add(48 * time.Hour)
	opts := vacuum.Options{RetainHours: ptr(0.0), DisableRetentionCheck: true, Now: clock}
	for _, tbl := range fixtures.Tables(t) {
		if _, refused := refusedFixtures[tbl.Name]; refused {
			continue
		}
		t.Run(tbl.Name, func(t *testing.T) {
			src := fixtures.Copy(t, tbl.Name, time.Now())
			ls, _ := local.New(src)
			p, err := vacuum.NewPlanner(context.Background(), ls, opts)
			if err != nil {
				t.Fatal(err)
			}
			want, err := p.Plan(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range storagetest.Backends(t) {
				t.Run(b.Name, func(t *testing.T) {
					store := b.New(t)
					upload(t, src, store)
					p, err := vacuum.NewPlanner(context.Background(), store, opts)
					if err != nil {
						t.Fatal(err)
					}
					plan, err := p.Plan(context.Background())
					if err != nil {
						t.Fatal(err)
					}
					if diff := cmp.Diff(deletedKeys(want), deletedKeys(plan)); diff != "" {
						t.Fatalf("plan differs from local disk (-local +%s):\n%s", b.Name, diff)
					}
					res, err := vacuum.Execute(context.Background(), store, plan, vacuum.ExecOptions{})
					if err == nil {
						err = vacuum.RecordCoverage(context.Background(), store, res) // as a run does
					}
					if err != nil {
						t.Fatal(err)
					}
					if res.NumDeletedFiles+res.NumAlreadyGone != plan.NumFilesToDelete {
						t.Errorf("deleted %d (+%d gone), planned %d", res.NumDeletedFiles, res.NumAlreadyGone, plan.NumFilesToDelete)
					}
					gone := map[string]bool{}
					for _, k := range deletedKeys(plan) {
						gone[strings.Fields(k)[0]] = true
					}
					var left []string
					err = store.Walk(context.Background(), "", func(o storage.Object) error {
						if !o.IsDir {
							left = append(left, o.Key)
						}
						return nil
					})
					if err != nil {
						t.Fatal(err)
					}
					var wantLeft []string
					for _, f := range fixtures.Files(t, src) {
						if !gone[f] {
							wantLeft = append(wantLeft, f)
						}
					}
					wantLeft = append(wantLeft, "_delta_log/_last_vacuum_info")
					sort.Strings(left)
					sort.Strings(wantLeft)
					if diff := cmp.Diff(dedupe(wantLeft), left); diff != "" {
						t.Errorf("keys left (-want +got):\n%s", diff)
					}
				})
			}
		})
	}
}

func dedupe(s []string) []string {
	out := s[:0]
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}
