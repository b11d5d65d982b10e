package deltavacuum_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum"
	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/internal/fixtures"
	"github.com/deltavacuum/deltavacuum/run"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/local"
	"github.com/deltavacuum/deltavacuum/storage/storagetest"
	"github.com/deltavacuum/deltavacuum/undo"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

const undoFixture = "delta/basic-with-inserts-deletes-checkpoint"

// tableBytes reads every file of the table but the log and the tool's own folder.
func tableBytes(t *testing.T, store storage.Store) map[string][]byte {
	t.Helper()
	ctx := context.Background()
	out := map[string][]byte{}
	err := store.Walk(ctx, "", func(o storage.Object) error {
		if o.IsDir {
			if o.Key == "_delta_log/" || o.Key == "_deltavacuum/" {
				return storage.SkipDir
			}
			return nil
		}
		b, err := storage.ReadAll(ctx, store, o.Key)
		out[o.Key] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// versionKeys returns, for each version the log still reaches, the keys its files are read
// from (data files and deletion vectors).
func versionKeys(t *testing.T, store storage.Store) map[int64][]string {
	t.Helper()
	ctx := context.Background()
	latest, err := deltalog.Load(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64][]string{}
	for v := int64(0); v <= latest.Version; v++ {
		seg, err := deltalog.ListLogAt(ctx, store, v)
		if err != nil {
			continue
		}
		snap, err := deltalog.LoadSegment(ctx, store, seg)
		if err != nil {
			continue
		}
		err = snap.Files(ctx, store, func(f deltalog.File) error {
			if f.Removed || !f.Inside {
				return nil
			}
			out[v] = append(out[v], f.Key)
			if f.DVKey != "" {
				out[v] = append(out[v], f.DVKey)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// undoRoundTrip vacuums the fixture in store with the retention at 0, checks that old
// versions lost files, undoes the run, and checks every file of every version the log
// reaches is back, byte for byte.
func undoRoundTrip(t *testing.T, store storage.Store, trash string) {
	t.Helper()
	ctx := context.Background()
	before := tableBytes(t, store)
	versions := versionKeys(t, store)
	if len(versions) < 2 {
		t.Fatalf("the fixture has %d readable versions", len(versions))
	}
	zero := 0.0
	off := false
	tbl := deltavacuum.OpenStore(store)
	res, err := tbl.Vacuum(ctx, deltavacuum.VacuumOptions{
		Options: vacuum.Options{RetainHours: &zero, DisableRetentionCheck: true, Now: time.Now().Add(48 * time.Hour)},
		Trash:   trash, Logging: &off,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.NumDeletedFiles == 0 || res.RunID == "" {
		t.Fatalf("the vacuum deleted %d files, run %q", res.NumDeletedFiles, res.RunID)
	}
	missing := 0
	for _, keys := range versions {
		for _, k := range keys {
			if _, err := store.Stat(ctx, k); errors.Is(err, storage.ErrNotExist) {
				missing++
			}
		}
	}
	if missing == 0 {
		t.Fatal("no file of an old version was deleted: the test proves nothing")
	}
	_, onDisk := store.(*local.Store)
	if copyWarned := slices.Contains(res.Warnings, run.TrashCopyCost); copyWarned != (trash != "" && !onDisk) {
		t.Errorf("warnings %q: the copy cost of a trash on an object store is stated only there", res.Warnings)
	}
	if trash != "" {
		if res.Reclaim == nil || res.Reclaim.BytesNow != 0 || res.Reclaim.BytesLater != res.SizeOfDeletedData {
			t.Fatalf("a trashed run reports %+v as reclaimed", res.Reclaim)
		}
	}
	runs, err := tbl.Runs(ctx)
	if err != nil || len(runs) != 1 || runs[0].ID != res.RunID || runs[0].Status != run.StatusCompleted || !runs[0].Complete {
		t.Fatalf("runs: %+v, %v", runs, err)
	}

	dry, err := tbl.Undo(ctx, res.RunID, undo.Options{DryRun: true})
	if err != nil || dry.NumRestored == 0 {
		t.Fatalf("dry undo: %+v, %v", dry, err)
	}
	for _, k := range versions[0] {
		if _, err := store.Stat(ctx, k); err == nil && !bytes.Equal(nil, nil) {
			t.Fatal("unreachable")
		}
	}
	rep, err := tbl.Undo(ctx, "", undo.Options{})
	if err != nil {
		t.Fatalf("undo: %v (%+v)", err, rep)
	}
	if rep.NumRestored < res.NumDeletedFiles {
		t.Fatalf("undo restored %d files, the run deleted %d", rep.NumRestored, res.NumDeletedFiles)
	}
	for v, keys := range versions {
		for _, k := range keys {
			got, err := storage.ReadAll(ctx, store, k)
			if err != nil {
				t.Fatalf("version %d: %s after the undo: %v", v, k, err)
			}
			if !bytes.Equal(got, before[k]) {
				t.Fatalf("version %d: %s differs after the undo", v, k)
			}
		}
	}
	after := tableBytes(t, store)
	for k, b := range before {
		if !bytes.Equal(after[k], b) {
			t.Errorf("%s is not back byte for byte", k)
		}
	}
	if trash != "" {
		for k := range after {
			if strings.HasPrefix(k, trash) {
				t.Errorf("%s is still in the trash", k)
			}
		}
	}
	// Again: everything is back, so the run's state says an undo can bring nothing back
	// (issue 36, item 4), and a second undo is refused with that one reason, changing nothing.
	runs, _ = tbl.Runs(ctx)
	if len(runs) != 1 || runs[0].Undone == nil || runs[0].State != run.StateUndone {
		t.Fatalf("the run is not listed as undone: %+v", runs)
	}
	if u := runs[0].Undo; u == nil || u.Possible != vacuum.UndoNo || !strings.Contains(u.Why, "cannot be undone again") {
		t.Fatalf("an undone run says undo %+v, want no", u)
	}
	again, err := tbl.Undo(ctx, res.RunID, undo.Options{})
	if !errors.Is(err, undo.ErrNotUndoable) || again != nil || !strings.Contains(err.Error(), "cannot be undone again") {
		t.Fatalf("second undo: %+v, %v; want the refusal of an undone run", again, err)
	}
	for k, b := range before {
		if got, _ := storage.ReadAll(ctx, store, k); !bytes.Equal(got, b) {
			t.Errorf("%s changed by the refused second undo", k)
		}
	}
	// Nothing is left for the default undo.
	if _, err := tbl.Undo(ctx, "", undo.Options{}); err == nil {
		t.Fatal("the default undo found a run to undo after the only one was undone")
	}
}

func localFixture(t *testing.T) storage.Store {
	dir := fixtures.Copy(t, undoFixture, time.Now().Add(-30*24*time.Hour))
	s, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func uploadFixture(t *testing.T, store storage.Store) storage.Store {
	t.Helper()
	dir := fixtures.Copy(t, undoFixture, time.Now().Add(-30*24*time.Hour))
	for _, rel := range fixtures.Files(t, dir) {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		if err := store.Put(context.Background(), rel, b); err != nil {
			t.Fatal(err)
		}
	}
	return store
}

func TestUndoFromTrashLocal(t *testing.T) {
	undoRoundTrip(t, localFixture(t), run.DefaultTrash)
}

func TestUndoFromTrashOnObjectStores(t *testing.T) {
	for _, b := range storagetest.Backends(t) {
		if b.Name == "local" {
			continue
		}
		t.Run(b.Name, func(t *testing.T) {
			undoRoundTrip(t, uploadFixture(t, b.New(t)), "_trash/")
		})
	}
}

func TestUndoFromS3Versioning(t *testing.T) {
	undoRoundTrip(t, uploadFixture(t, storagetest.NewS3Versioned(t)), "")
}

// On a store that keeps nothing, a run without a trash cannot be undone: the undo is refused
// before it starts, with one reason (not one line per file), writes nothing, and leaves the
// run completed (issue 36, item 3: it went ahead and marked the run "partially undone").
func TestUndoWithoutRecovery(t *testing.T) {
	ctx := context.Background()
	store := localFixture(t)
	zero := 0.0
	tbl := deltavacuum.OpenStore(store)
	res, err := tbl.Vacuum(ctx, deltavacuum.VacuumOptions{Options: vacuum.Options{RetainHours: &zero, DisableRetentionCheck: true}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Reclaim == nil || res.Reclaim.BytesNow != res.SizeOfDeletedData || res.Reclaim.When != "now" {
		t.Fatalf("reclaim on local disk: %+v", res.Reclaim)
	}
	for _, dry := range []bool{true, false} {
		rep, err := tbl.Undo(ctx, res.RunID, undo.Options{DryRun: dry})
		if !errors.Is(err, undo.ErrNotUndoable) || rep != nil {
			t.Fatalf("undo (dry run %v) without recovery: %+v, %v; want a refusal", dry, rep, err)
		}
		if msg := err.Error(); strings.Count(msg, "\n") != 0 || !strings.Contains(msg, "cannot be undone: nothing keeps deleted files here") || !strings.Contains(msg, "--trash") {
			t.Errorf("the refusal: %q", msg)
		}
	}
	if _, err := store.Stat(ctx, run.RunsDir+res.RunID+".undo.json"); !errors.Is(err, storage.ErrNotExist) {
		t.Errorf("the refused undo wrote a report: %v", err)
	}
	runs, err := tbl.Runs(ctx)
	if err != nil || len(runs) != 1 || runs[0].State != run.StateCompleted || runs[0].Undo.Possible != vacuum.UndoNo {
		t.Fatalf("after the refused undo: %+v, %v; want completed, undo no", runs, err)
	}
}

// A trash folder VACUUM would not take for hidden, in the log, or outside the table is refused
// before anything is deleted.
func TestTrashFolderRefused(t *testing.T) {
	for _, bad := range []string{"trash", "../x", "/abs", "_delta_log", "_delta_log/t", "_deltavacuum/runs", "_change_data/t", "a/_t", "", ".", "_a//b"} {
		if f, err := vacuum.TrashFolder(nil, bad); err == nil {
			t.Errorf("--trash %q accepted as %q", bad, f)
		}
	}
	for _, good := range []string{"_trash", "_trash/", "./_trash", ".trash/x", "_deltavacuum/trash"} {
		if _, err := vacuum.TrashFolder(nil, good); err != nil {
			t.Errorf("--trash %q: %v", good, err)
		}
	}
}
