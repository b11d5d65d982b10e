package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/internal/fixtures"
)

func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Run(context.Background(), args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

const checkOff = "spark.databricks.delta.retentionDurationCheck.enabled=false"

func TestVacuumJSON(t *testing.T) {
	dir := fixtures.Copy(t, "delta/basic-with-inserts-deletes-checkpoint", time.Now().Add(-30*24*time.Hour))
	code, out, errs := run(t, "vacuum", dir, "--retain-hours", "0", "--conf", checkOff, "--dry-run", "--json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("stdout is not one JSON document: %v\n%s", err, out)
	}
	for _, k := range []string{"table", "version", "mode", "dryRun", "retentionHours", "cutoff", "files", "directories",
		"numFilesToDelete", "sizeOfDataToDelete", "numDeletedFiles", "numDeletedDirectories"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	if doc["mode"] != "FULL" || doc["dryRun"] != true || doc["numFilesToDelete"] != float64(7) || doc["numDeletedFiles"] != float64(0) {
		t.Errorf("got mode %v dryRun %v numFilesToDelete %v numDeletedFiles %v", doc["mode"], doc["dryRun"], doc["numFilesToDelete"], doc["numDeletedFiles"])
	}
	if _, err := time.Parse(time.RFC3339, doc["cutoff"].(string)); err != nil {
		t.Errorf("cutoff is not RFC 3339: %v", err)
	}
	f := doc["files"].([]any)[0].(map[string]any)
	for _, k := range []string{"path", "size", "modificationTime", "reason"} {
		if _, ok := f[k]; !ok {
			t.Errorf("file entry lacks %q", k)
		}
	}
	if p := f["path"].(string); strings.HasPrefix(p, "/") || strings.Contains(p, "file:") {
		t.Errorf("path %q must be relative to the table root", p)
	}
	if len(fixtures.Files(t, dir)) != 60 {
		t.Error("DRY RUN deleted something")
	}

	// A real run through a file:// URI deletes the 7 files and their 7 checksums.
	code, out, errs = run(t, "vacuum", "file://"+dir, "--retain-hours", "0", "--conf", checkOff, "--json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc["numDeletedFiles"] != float64(7) || doc["dryRun"] != false {
		t.Errorf("numDeletedFiles %v dryRun %v", doc["numDeletedFiles"], doc["dryRun"])
	}
	// + VACUUM START and END, _last_vacuum_info, the run record; the lock leaves nothing.
	if got := len(fixtures.Files(t, dir)); got != 60-14+4 {
		t.Errorf("%d files left, want 50", got)
	}
	if id, _ := doc["runId"].(string); id == "" {
		t.Error("a real run names no run record")
	} else if _, err := os.Stat(filepath.Join(dir, "_deltavacuum", "runs", id+".jsonl.gz")); err != nil {
		t.Errorf("run record: %v", err)
	}
	if rc, _ := doc["storageReclaim"].(map[string]any); rc["when"] != "now" || rc["bytesReclaimedNow"] != doc["sizeOfDeletedData"] {
		t.Errorf("storageReclaim %v, want everything reclaimed now", doc["storageReclaim"])
	}
}

func TestVacuumText(t *testing.T) {
	dir := fixtures.Copy(t, "delta/basic-with-inserts-deletes-checkpoint", time.Now().Add(-30*24*time.Hour))
	code, out, errs := run(t, "vacuum", dir, "--retain-hours", "0.4", "--conf", checkOff, "--dry-run")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "Found 7 files (") || !strings.Contains(out, "and 0 directories in a total of 1 directory that are safe to delete.") {
		t.Errorf("summary missing:\n%s", out)
	}
	if strings.Count(out, "\ntombstone\t")+strings.Count(out, "tombstone\t") < 7 {
		t.Errorf("the DRY RUN must list the files:\n%s", out)
	}
}

func TestExitCodes(t *testing.T) {
	dir := fixtures.Copy(t, "delta/basic-with-inserts-deletes-checkpoint", time.Now().Add(-30*24*time.Hour))
	notTable := t.TempDir()
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"no table", []string{"vacuum"}, ExitUsage, "expects one TABLE"},
		{"unknown flag", []string{"vacuum", dir, "--retian-hours", "1"}, ExitUsage, "unknown flag"},
		{"bad number", []string{"vacuum", dir, "--retain-hours", "x"}, ExitUsage, "invalid argument"},
		{"unknown conf", []string{"vacuum", dir, "--conf", "spark.foo=1"}, ExitUsage, "unknown setting"},
		{"conf without value", []string{"vacuum", dir, "--conf", "spark.foo"}, ExitUsage, "KEY=VALUE"},
		{"not a table", []string{"vacuum", notTable, "--dry-run"}, ExitFailure, "is not a Delta table. VACUUM is only supported for Delta tables."},
		{"inside a table", []string{"vacuum", filepath.Join(dir, "_delta_log"), "--dry-run"}, ExitFailure, "lies inside the Delta table"},
		{"missing directory", []string{"vacuum", filepath.Join(notTable, "nope"), "--dry-run"}, ExitFailure, "nope does not exist: check the path"},
		{"retention check", []string{"vacuum", dir, "--retain-hours", "1", "--dry-run"}, ExitFailure, "retentionDurationCheck.enabled = false"},
		{"negative retention", []string{"vacuum", dir, "--retain-hours", "-1", "--conf", checkOff}, ExitUsage, "can't be less than 0 hours"},
		{"NaN retention", []string{"vacuum", dir, "--retain-hours", "NaN", "--conf", checkOff}, ExitUsage, "not a number"},
		{"infinite retention", []string{"vacuum", dir, "--retain-hours", "+Inf", "--conf", checkOff}, ExitUsage, "not a number"},
		{"retention check names the flag", []string{"vacuum", dir, "--retain-hours", "1", "--dry-run"}, ExitFailure, "on the command line: --conf spark.databricks.delta.retentionDurationCheck.enabled=false"},
		{"bad log level", []string{"vacuum", dir, "--log-level", "loud"}, ExitUsage, "--log-level must be"},
		{"quiet and verbose", []string{"vacuum", dir, "-q", "-v"}, ExitUsage, "exclude each other"},
		{"unknown scheme", []string{"vacuum", "foo://bucket/t", "--dry-run"}, ExitFailure, "foo"},
		{"bad storage option", []string{"vacuum", dir, "--storage-option", "nokey"}, ExitUsage, "KEY=VALUE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errs := run(t, tt.args...)
			if code != tt.code || !strings.Contains(errs, tt.msg) {
				t.Errorf("got exit %d, stderr %q; want exit %d and %q", code, errs, tt.code, tt.msg)
			}
		})
	}
	if got := len(fixtures.Files(t, dir)); got != 60 {
		t.Errorf("a refused or failed run deleted something: %d files left of 60", got)
	}
}

func TestPartitionDirectoryIsRefused(t *testing.T) {
	dir := fixtures.Copy(t, "delta/dv-partitioned-with-checkpoint", time.Now().Add(-30*24*time.Hour))
	code, _, errs := run(t, "vacuum", filepath.Join(dir, "part=0"), "--retain-hours", "0", "--conf", checkOff)
	if code != ExitFailure || !strings.Contains(errs, "is not a Delta table") {
		t.Errorf("got exit %d, %q", code, errs)
	}
}

func TestDemo(t *testing.T) {
	code, out, errs := run(t, "demo")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"Found 4 files", "Deleted 4 files", "region=eu/part-00002-5e6f.c000.snappy.parquet", "_spark_staging/part-00097"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out[strings.Index(out, "What is left"):], "part-00099-dead") {
		t.Error("the demo left the untracked old file")
	}
}

func TestSymlinksAreNotFollowed(t *testing.T) {
	dir := fixtures.Copy(t, "delta/basic-with-inserts-deletes-checkpoint", time.Now().Add(-30*24*time.Hour))
	outside := t.TempDir()
	victim := filepath.Join(outside, "precious.parquet")
	if err := os.WriteFile(victim, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-30 * 24 * time.Hour)
	os.Chtimes(victim, old, old)
	if err := os.Symlink(outside, filepath.Join(dir, "linked-dir")); err != nil {
		t.Fatal(err)
	}
	code, _, errs := run(t, "vacuum", dir, "--retain-hours", "0", "--conf", checkOff)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if _, err := os.Stat(victim); err != nil {
		t.Errorf("a file outside the table, behind a symbolic link, was deleted: %v", err)
	}
}

func TestSQLCommand(t *testing.T) {
	dir := fixtures.Copy(t, "delta/basic-with-inserts-deletes-checkpoint", time.Now().Add(-30*24*time.Hour))
	script := "SET spark.databricks.delta.retentionDurationCheck.enabled = false;\nVACUUM '" + dir + "' RETAIN 0 HOURS DRY RUN"
	code, out, errs := run(t, "sql", script)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "file:"+dir+"/part-") || !strings.Contains(out, "Found 7 files") {
		t.Errorf("DRY RUN must print absolute paths as Spark does and the summary:\n%s", out)
	}

	f := filepath.Join(t.TempDir(), "m.sql")
	os.WriteFile(f, []byte(script+";\nDESCRIBE DETAIL delta.`"+dir+"`;\n"), 0o644)
	code, out, errs = run(t, "sql", "-f", f, "--json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	dec := json.NewDecoder(strings.NewReader(out))
	n := 0
	for dec.More() {
		var doc map[string]any
		if err := dec.Decode(&doc); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 3 {
		t.Errorf("%d JSON documents, want one per statement (3)", n)
	}

	var o, e bytes.Buffer
	code = Run(context.Background(), []string{"sql"}, strings.NewReader("SHOW TBLPROPERTIES '"+dir+"'"), &o, &e)
	if code != ExitOK {
		t.Errorf("from standard input: exit %d: %s", code, e.String())
	}

	code, _, errs = run(t, "sql", "VACUUM '"+dir+"' RETAIN 1 HOURS RETAIN 2 HOURS")
	if code != ExitUsage || !strings.Contains(errs, "Found duplicate clauses: RETAIN") {
		t.Errorf("duplicate clause: exit %d, %s", code, errs)
	}
	code, _, errs = run(t, "sql", "VACUUM '"+dir+"' KEEP 3")
	if code != ExitUsage || !strings.Contains(errs, "column") {
		t.Errorf("syntax error: exit %d, %s", code, errs)
	}
	code, _, errs = run(t, "sql", "VACUUM '"+dir+"' RETAIN 1 HOURS")
	if code != ExitFailure || !strings.Contains(errs, "retentionDurationCheck") {
		t.Errorf("refused statement: exit %d, %s", code, errs)
	}
	code, out, errs = run(t, "history", dir, "--limit", "1")
	if code != ExitOK || !strings.Contains(out, "operation") {
		t.Errorf("history: exit %d, %s %s", code, out, errs)
	}
}

func TestVacuumInventoryFlag(t *testing.T) {
	dir := fixtures.Copy(t, "delta/basic-with-inserts-deletes-checkpoint", time.Now().Add(-30*24*time.Hour))
	inv := filepath.Join(t.TempDir(), "inv.csv")
	old := time.Now().Add(-30 * 24 * time.Hour).UnixMilli()
	body := "path,length,isDir,modificationTime\n" +
		"file:" + dir + "/stray.parquet,5," + "false," + strconv.FormatInt(old, 10) + "\n"
	os.WriteFile(inv, []byte(body), 0o644)
	os.WriteFile(filepath.Join(dir, "stray.parquet"), []byte("12345"), 0o644)
	code, out, errs := run(t, "vacuum", dir, "--inventory", inv, "--inventory-format", "csv", "--retain-hours", "0", "--conf", checkOff, "--dry-run", "--json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc map[string]any
	json.Unmarshal([]byte(out), &doc)
	if doc["numFilesToDelete"] != float64(1) || doc["source"] != "inventory" {
		t.Errorf("inventory run: %v files from %v (the inventory lists only stray.parquet)", doc["numFilesToDelete"], doc["source"])
	}
	code, _, errs = run(t, "vacuum", dir, "--inventory", "(SELECT * FROM csv.`"+inv+"` WHERE length > 10)", "--retain-hours", "0", "--conf", checkOff, "--dry-run")
	if code != ExitOK {
		t.Fatalf("query inventory: exit %d: %s", code, errs)
	}
	code, _, errs = run(t, "vacuum", dir, "--inventory", inv, "--lite")
	// A request wrong whatever the table: a usage error (dvrun.ErrInvalidRequest), refused
	// before the inventory is opened.
	if code != ExitUsage || !strings.Contains(errs, "Inventory option is not compatible with LITE") {
		t.Errorf("LITE with inventory: exit %d %s", code, errs)
	}
}
