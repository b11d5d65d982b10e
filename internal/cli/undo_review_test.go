package cli

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/internal/fixtures"
)

func gzipped(s string) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	_, _ = w.Write([]byte(s))
	_ = w.Close()
	return b.Bytes()
}

func writeFile(t *testing.T, p string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func plantRecord(t *testing.T, dir, id, trash string, paths ...string) {
	t.Helper()
	rec := `{"format":1,"id":"` + id + `","table":"x","status":"COMPLETED","complete":true,"startedAt":"2020-01-01T00:00:00Z","mode":"FULL","snapshotVersion":0,"retentionHours":0,"recovery":{"kind":"none","detail":"x"},"trash":"` + trash + `","numFiles":1,"bytes":4,"numDirectories":0}` + "\n"
	for _, p := range paths {
		rec += `{"path":"` + p + `","size":1}` + "\n"
	}
	writeFile(t, filepath.Join(dir, "_deltavacuum", "runs", id+".jsonl.gz"), gzipped(rec))
}

// A planted record whose trash is a partition folder of a column named with '_' (hidden by
// name, not by the table) must not make undo move a live file out of its partition.
func TestUndoRefusesAPartitionFolderAsTrash(t *testing.T) {
	dir := t.TempDir()
	log := `{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}
{"metaData":{"id":"11111111-1111-1111-1111-111111111111","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[{\"name\":\"v\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}},{\"name\":\"_p\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}}]}","partitionColumns":["_p"],"configuration":{},"createdTime":1700000000000}}
{"add":{"path":"_p=1/part-0.parquet","partitionValues":{"_p":"1"},"size":4,"modificationTime":1700000000000,"dataChange":true}}
`
	writeFile(t, filepath.Join(dir, "_delta_log", "00000000000000000000.json"), []byte(log))
	writeFile(t, filepath.Join(dir, "_p=1", "part-0.parquet"), []byte("LIVE"))
	const id = "20261201T153000Z-1a2b3c4d"
	plantRecord(t, dir, id, "_p=1/"+id+"/", "part-0.parquet") // the id-shaped form
	plantRecord(t, dir, "20261201T153001Z-1a2b3c4d", "_p=1/", "part-0.parquet")
	for _, run := range []string{id, "20261201T153001Z-1a2b3c4d"} {
		if code, _, _ := runCLI(t, "undo", dir, "--run", run); code == ExitOK {
			t.Errorf("undo of the planted run %s succeeded", run)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "_p=1", "part-0.parquet")); err != nil {
		t.Errorf("the live file _p=1/part-0.parquet was moved: %v", err)
	}
	// Nor is a trash folder the table does not hide accepted by vacuum, dry run included.
	for _, args := range [][]string{{"--dry-run"}, {}} {
		a := append([]string{"vacuum", dir, "--trash=_p=1", "--retain-hours", "0", "--conf", checkOff}, args...)
		if code, _, errs := runCLI(t, a...); code == ExitOK || !strings.Contains(errs, "hidden") {
			t.Errorf("%v: exit %d, %s", a, code, errs)
		}
	}
}

// A planted record whose trash holds the runs folder (_deltavacuum/) must not move other runs'
// records or trash into the open, where the next VACUUM would delete them.
func TestUndoRefusesATrashHoldingTheRuns(t *testing.T) {
	dir := fixtures.Copy(t, "delta/basic-with-inserts-deletes-checkpoint", time.Now().Add(-30*24*time.Hour))
	if code, _, errs := runCLI(t, "vacuum", dir, "--retain-hours", "0", "--conf", checkOff, "--trash"); code != ExitOK {
		t.Fatal(errs)
	}
	recs, _ := filepath.Glob(filepath.Join(dir, "_deltavacuum", "runs", "*.jsonl.gz"))
	victim := filepath.Base(recs[0])
	vid := strings.TrimSuffix(victim, ".jsonl.gz")
	trashed, _ := filepath.Glob(filepath.Join(dir, "_deltavacuum", "trash", vid, "*.parquet"))
	const id = "20200101T000000Z-0badbad0"
	for _, trash := range []string{"_deltavacuum/", "_deltavacuum/" + id + "/", "_DeltaVacuum/runs/" + id + "/"} {
		plantRecord(t, dir, id, trash, "runs/"+victim, "trash/"+vid+"/"+filepath.Base(trashed[0]))
		if code, _, _ := runCLI(t, "undo", dir, "--run", id); code == ExitOK {
			t.Errorf("undo of a record with trash %q succeeded", trash)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "_deltavacuum", "runs", victim)); err != nil {
		t.Errorf("the run record of %s was moved: %v", vid, err)
	}
	if _, err := os.Stat(trashed[0]); err != nil {
		t.Errorf("the trash of %s was moved: %v", vid, err)
	}
	for _, bad := range []string{"--trash=_deltavacuum", "--trash=_DELTA_LOG/x", "--trash=_deltavacuum/runs/x"} {
		if code, _, _ := runCLI(t, "vacuum", dir, bad, "--retain-hours", "0", "--conf", checkOff); code != ExitUsage {
			t.Errorf("vacuum %s: exit %d, want a usage error", bad, code)
		}
	}
}

// An undo that could not restore everything is retried by the next plain undo; it never
// silently moves on to the run before.
func TestPartialUndoIsRetriedNotSkipped(t *testing.T) {
	dir := fixtures.Copy(t, "delta/basic-with-inserts-deletes-checkpoint", time.Now().Add(-30*24*time.Hour))
	if code, _, errs := runCLI(t, "vacuum", dir, "--retain-hours", "0", "--conf", checkOff, "--trash"); code != ExitOK {
		t.Fatal(errs)
	}
	junk := filepath.Join(dir, "junk.parquet")
	writeFile(t, junk, []byte("junk"))
	old := time.Now().Add(-30 * 24 * time.Hour)
	_ = os.Chtimes(junk, old, old)
	if code, _, errs := runCLI(t, "vacuum", dir, "--retain-hours", "0", "--conf", checkOff, "--trash"); code != ExitOK {
		t.Fatal(errs)
	}
	m, _ := filepath.Glob(filepath.Join(dir, "_deltavacuum", "trash", "*", "junk.parquet"))
	if len(m) != 1 {
		t.Fatalf("trash: %v", m)
	}
	_ = os.Remove(m[0]) // the second run's trash is lost
	second := filepath.Base(filepath.Dir(m[0]))
	code, out, _ := runCLI(t, "undo", dir)
	if code != ExitFailure || !strings.Contains(out, "Restored 0 files") || !strings.Contains(out, second) {
		t.Fatalf("undo: exit %d, want the second run tried:\n%s", code, out)
	}
	// Again: the second run is still the one, and its state now says the rest cannot come
	// back: refused with that reason, never moved on to the first run.
	code, out, errs := runCLI(t, "undo", dir)
	if code != ExitFailure || out != "" || !strings.Contains(errs, second) || !strings.Contains(errs, "cannot be undone further") {
		t.Fatalf("undo again: exit %d, want the second run refused:\n%s%s", code, out, errs)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "_deltavacuum", "trash", "*", "*.parquet")); len(left) != 7 {
		t.Errorf("the first run's trash holds %d files, want its 7 untouched", len(left))
	}
	_, out, _ = runCLI(t, "runs", dir)
	if !strings.Contains(out, "partial") {
		t.Errorf("runs does not show the partial undo:\n%s", out)
	}
}

// A purge removes the run's folders too, and a second purge finds nothing.
func TestPurgeRemovesTheRunFolder(t *testing.T) {
	dir := fixtures.Copy(t, "delta/basic-with-inserts-deletes-checkpoint", time.Now().Add(-30*24*time.Hour))
	if code, _, errs := runCLI(t, "vacuum", dir, "--retain-hours", "0", "--conf", checkOff, "--trash"); code != ExitOK {
		t.Fatal(errs)
	}
	if code, _, errs := runCLI(t, "trash", "purge", dir, "--older-than", "0"); code != ExitOK {
		t.Fatal(errs)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "_deltavacuum", "trash", "*")); len(left) != 0 {
		t.Errorf("left in the trash: %v", left)
	}
	if code, out, _ := runCLI(t, "trash", "purge", dir, "--older-than", "0"); code != ExitOK || !strings.Contains(out, "of 0 runs") {
		t.Errorf("second purge: %s", out)
	}
}

// `--trash FOLDER` with a space takes FOLDER for a second table: the message says how to
// write it.
func TestTrashWithASpaceSaysHow(t *testing.T) {
	dir := fixtures.Copy(t, "delta/basic-with-inserts-deletes-checkpoint", time.Now().Add(-30*24*time.Hour))
	code, _, errs := runCLI(t, "vacuum", dir, "--trash", "_old", "--dry-run")
	if code != ExitUsage || !strings.Contains(errs, "--trash=_old") {
		t.Errorf("exit %d: %s", code, errs)
	}
}

func runCLI(t *testing.T, args ...string) (int, string, string) { return run(t, args...) }
