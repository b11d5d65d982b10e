package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/internal/fixtures"
)

func TestInspectJSONHasEveryFigure(t *testing.T) {
	dir := fixtures.Copy(t, "delta/dv-partitioned-with-checkpoint", time.Now().Add(-30*24*time.Hour))
	code, out, errs := run(t, "inspect", dir, "--json", "--price-per-gb-month", "0.02", "--currency", "EUR", "--what-if-hours", "0,24", "--top", "1")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("stdout is not one JSON document: %v\n%s", err, out)
	}
	for _, k := range []string{"table", "version", "source", "retentionHours", "cutoff", "files", "reclaimable", "forecast",
		"whatIf", "price", "partitions", "numPartitions", "smallFiles", "oldestVersion", "deletionVectors"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	if p := doc["price"].(map[string]any); p["currency"] != "EUR" || p["perGBMonth"] != 0.02 || p["source"] != "given" {
		t.Errorf("price %v, want the one given", p)
	}
	if n := len(doc["whatIf"].([]any)); n != 2 {
		t.Errorf("%d what-if rows, want 2", n)
	}
	if n := len(doc["partitions"].([]any)); n != 1 {
		t.Errorf("%d partitions, want the top 1", n)
	}
	if r := doc["reclaimable"].(map[string]any); r["files"] != float64(18) || r["checksumFiles"] != float64(18) {
		t.Errorf("reclaimable %v, want the 18 files (and their 18 checksums) the DRY RUN deletes", r)
	}
}

func TestInspectText(t *testing.T) {
	dir := fixtures.Copy(t, "delta/dv-partitioned-with-checkpoint", time.Now().Add(-30*24*time.Hour))
	code, out, errs := run(t, "inspect", dir)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"Reclaimable now: 18 files", "KiB", "What if VACUUM ran now", "61320 h", "Partitions (top", "Small files:", "Last VACUUM:",
		"Deletion vectors: 2 live files (1.44 KiB)", "2 of 6 rows marked deleted (33.3%)", "past 5% deleted, which OPTIMIZE rewrites: 2 files", "APPLY (PURGE), then a VACUUM once 168 h"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestInspectAndExplainHostileFlags(t *testing.T) {
	dir := fixtures.Copy(t, "delta/basic-with-inserts-deletes-checkpoint", time.Now().Add(-30*24*time.Hour))
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"inspect", dir, "--retain-hours", "NaN"}, ExitFailure, "NaN"},
		{[]string{"inspect", dir, "--retain-hours", "-1"}, ExitFailure, "negative"},
		{[]string{"inspect", dir, "--retain-hours", "1e300"}, ExitFailure, "too large"},
		{[]string{"inspect", dir, "--retain-hours", "x"}, ExitUsage, "invalid argument"},
		{[]string{"inspect", dir, "--what-if-hours", "24,-5"}, ExitFailure, "negative"},
		{[]string{"inspect", dir, "--what-if-hours", ""}, ExitUsage, "invalid argument"},
		{[]string{"inspect", dir, "--price-per-gb-month", "NaN"}, ExitFailure, "price"},
		{[]string{"inspect", dir, "--price-per-gb-month", "-1"}, ExitFailure, "price"},
		{[]string{"inspect", dir, "--price-per-gb-month", "+Inf"}, ExitFailure, "price"},
		{[]string{"inspect", dir, "--currency", "EUR"}, ExitFailure, "needs a price"},
		{[]string{"inspect", dir, "--forecast-days", "99999999"}, ExitFailure, "forecast"},
		{[]string{"inspect", dir, "--forecast-days", "-1"}, ExitFailure, "forecast"},
		{[]string{"inspect", dir, "--top", "-3"}, ExitFailure, "top"},
		{[]string{"inspect", dir, "--small-file-bytes", "0"}, ExitUsage, "small-file-bytes"},
		{[]string{"inspect", dir, "--lite", "--inventory", dir + "/inv.csv"}, ExitUsage, "LITE"},
		{[]string{"inspect", dir, "--inventory-format", "csv"}, ExitUsage, "needs --inventory"},
		{[]string{"inspect", dir + "/no-such-table"}, ExitFailure, "does not exist"},
		{[]string{"inspect"}, ExitUsage, "one TABLE"},
		{[]string{"explain", dir}, ExitUsage, "at least one PATH"},
		{[]string{"explain", dir, "x", "--retain-hours", "NaN"}, ExitFailure, "NaN"},
		{[]string{"explain", dir, "x", "--retain-hours", "-2"}, ExitFailure, "negative"},
	}
	for _, c := range cases {
		code, _, errs := run(t, c.args...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d mentioning %q", c.args[1:], code, errs, c.code, c.want)
		}
		if code == ExitFailure && !strings.Contains(errs, "file://") && !strings.Contains(errs, dir) {
			t.Errorf("%v: the error does not name the table: %s", c.args[1:], errs)
		}
	}
}

func TestExplainPaths(t *testing.T) {
	dir := fixtures.Copy(t, "delta/basic-with-inserts-deletes-checkpoint", time.Now().Add(-30*24*time.Hour))
	code, out, errs := run(t, "explain", dir, "--retain-hours", "0", "--conf", checkOff,
		"_delta_log/00000000000000000000.json", "../../etc/passwd", "/etc/passwd", "%2E%2E/x", "no-such.parquet", "--json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc struct {
		Paths []struct{ Path, Verdict, Explanation string }
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	want := []string{"kept", "not in the table", "not in the table", "not in the table", "not in the table"}
	for i, p := range doc.Paths {
		if p.Verdict != want[i] {
			t.Errorf("%s: %s (%s), want %s", p.Path, p.Verdict, p.Explanation, want[i])
		}
	}
}

func TestInspectRedactsTheSAS(t *testing.T) {
	code, out, errs := run(t, "inspect", "abfss://c@acct.dfs.core.windows.net/t?sv=2022&sig=SECRETSIG123", "--storage-option", "azure_storage_account_key=S3CR3TKEY")
	if code == ExitOK {
		t.Fatalf("inspect of an unreachable account succeeded: %s", out)
	}
	if strings.Contains(out+errs, "SECRETSIG123") || strings.Contains(out+errs, "S3CR3TKEY") {
		t.Errorf("a secret is printed: %s%s", out, errs)
	}
	for _, st := range []string{"INSPECT '%s'", "EXPLAIN VACUUM '%s' PATHS ('a')", "DESCRIBE DETAIL '%s'"} {
		st = strings.Replace(st, "%s", "file:///tmp/t?sv=2022&sig=SECRETSIG123", 1) // refused at once, and never printed
		code, out, errs := run(t, "sql", st, "--json")
		if code == ExitOK || strings.Contains(out+errs, "SECRETSIG123") {
			t.Errorf("%s: exit %d, a secret may be printed: %s%s", st, code, out, errs)
		}
	}
}

func TestInspectInventory(t *testing.T) {
	dir := fixtures.Copy(t, "delta/basic-with-inserts-deletes-checkpoint", time.Now().Add(-30*24*time.Hour))
	inv := filepath.Join(t.TempDir(), "inv.csv")
	old := strconv.FormatInt(time.Now().Add(-30*24*time.Hour).UnixMilli(), 10)
	body := "path,length,isDir,modificationTime\nfile:" + dir + "/stray.parquet,5,false," + old + "\n"
	if err := os.WriteFile(inv, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "stray.parquet"), []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := run(t, "inspect", dir, "--inventory", inv, "--inventory-format", "csv", "--retain-hours", "0", "--json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc struct {
		Source      string
		Reclaimable struct{ Files, Bytes int64 }
		Files       struct {
			Untracked struct{ Files int64 }
			DeltaLog  struct{ Commits struct{ Files int64 } }
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Source != "inventory" || doc.Reclaimable.Files != 1 || doc.Reclaimable.Bytes != 5 || doc.Files.Untracked.Files != 1 || doc.Files.DeltaLog.Commits.Files != 14 {
		t.Errorf("inspect with an inventory listing only stray.parquet: %+v", doc)
	}
}
