package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/internal/fixtures"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

const fixtureTable = "delta/basic-with-inserts-deletes-checkpoint"

// copyTo copies the fixture table to dst (which must not exist).
func copyTo(t *testing.T, dst string) {
	t.Helper()
	src := fixtures.Copy(t, fixtureTable, time.Now().Add(-30*24*time.Hour))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(src, dst); err != nil {
		t.Fatal(err)
	}
}

func tableOf(t *testing.T, out string) string {
	t.Helper()
	var doc struct {
		Table  string `json:"table"`
		Vacuum *struct {
			Table string `json:"table"`
		} `json:"vacuum"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if doc.Vacuum != nil {
		return doc.Vacuum.Table
	}
	return doc.Table
}

// vacuum NAME and VACUUM NAME in SQL resolve a name by one rule: with a warehouse, the name
// is the warehouse's table, even when a folder of that name is in the working directory.
// Names are case-insensitive.
func TestNameResolvesTheSameInVacuumAndSQL(t *testing.T) {
	wh := t.TempDir()
	copyTo(t, filepath.Join(wh, "Tables", "sales", "Orders"))
	cwd := t.TempDir()
	copyTo(t, filepath.Join(cwd, "sales.orders")) // a decoy table in the working directory
	t.Chdir(cwd)
	want := filepath.Join(wh, "Tables", "sales", "Orders")

	code, out, errs := run(t, "vacuum", "sales.orders", "--warehouse", wh, "--dry-run", "--json")
	if code != ExitOK {
		t.Fatalf("vacuum: exit %d: %s", code, errs)
	}
	if got := tableOf(t, out); !strings.Contains(got, want) {
		t.Errorf("vacuum sales.orders --warehouse resolved to %s, want %s", got, want)
	}
	code, out, errs = run(t, "sql", "--warehouse", wh, "--json", "VACUUM sales.orders DRY RUN")
	if code != ExitOK {
		t.Fatalf("sql: exit %d: %s", code, errs)
	}
	if got := tableOf(t, out); !strings.Contains(got, want) {
		t.Errorf("VACUUM sales.orders resolved to %s, want %s", got, want)
	}
	// ./NAME is a path in every case.
	code, out, errs = run(t, "vacuum", "./sales.orders", "--warehouse", wh, "--dry-run", "--json")
	if code != ExitOK || !strings.Contains(tableOf(t, out), filepath.Join(cwd, "sales.orders")) {
		t.Errorf("./sales.orders: exit %d, %s %s", code, out, errs)
	}
	// In any case: SALES.ORDERS too.
	code, out, errs = run(t, "vacuum", "SALES.ORDERS", "--warehouse", wh, "--dry-run", "--json")
	if code != ExitOK || !strings.Contains(tableOf(t, out), want) {
		t.Errorf("SALES.ORDERS: exit %d, %s %s", code, out, errs)
	}
}

// Two folders that differ only in case are an error naming both, in both commands.
func TestNameAmbiguousByCase(t *testing.T) {
	wh := t.TempDir()
	copyTo(t, filepath.Join(wh, "Tables", "sales", "Orders"))
	copyTo(t, filepath.Join(wh, "Tables", "sales", "orders"))
	for _, args := range [][]string{
		{"vacuum", "sales.orders", "--warehouse", wh, "--dry-run"},
		{"sql", "--warehouse", wh, "VACUUM sales.ORDERS DRY RUN"},
	} {
		code, _, errs := run(t, args...)
		if code != ExitFailure || !strings.Contains(errs, filepath.Join("Tables", "sales", "Orders")) || !strings.Contains(errs, filepath.Join("Tables", "sales", "orders")) ||
			!strings.Contains(errs, "differ only in case") {
			t.Errorf("%v: exit %d, %s", args, code, errs)
		}
	}
}

func TestNameWithoutWarehouseSaysHow(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv("DELTAVACUUM_WAREHOUSE", "")
	code, _, errs := run(t, "vacuum", "sales.orders", "--dry-run")
	if code != ExitFailure || !strings.Contains(errs, "--warehouse") || !strings.Contains(errs, "DELTAVACUUM_WAREHOUSE") || !strings.Contains(errs, "--catalog") {
		t.Errorf("exit %d: %s", code, errs)
	}
	code, _, errs = run(t, "sql", "VACUUM sales.orders")
	if code != ExitFailure || !strings.Contains(errs, "--warehouse") {
		t.Errorf("sql: exit %d: %s", code, errs)
	}
}

func TestHistoryOfANonTable(t *testing.T) {
	empty := t.TempDir()
	code, _, errs := run(t, "history", empty)
	if code != ExitFailure || !strings.Contains(errs, "is not a Delta table, so it has no history") || strings.Contains(errs, "VACUUM is only supported") {
		t.Errorf("empty folder: exit %d: %s", code, errs)
	}
	code, _, errs = run(t, "history", filepath.Join(empty, "gone"))
	if code != ExitFailure || !strings.Contains(errs, "gone does not exist") {
		t.Errorf("missing folder: exit %d: %s", code, errs)
	}
}

func TestRetentionRefusalInSQLNamesSET(t *testing.T) {
	dir := fixtures.Copy(t, fixtureTable, time.Now().Add(-30*24*time.Hour))
	code, _, errs := run(t, "sql", "VACUUM '"+dir+"' RETAIN 1 HOURS DRY RUN")
	if code != ExitFailure || !strings.Contains(errs, "in SQL: SET spark.databricks.delta.retentionDurationCheck.enabled = false;") || strings.Contains(errs, "--conf") {
		t.Errorf("exit %d: %s", code, errs)
	}
}

func TestVacuumHelp(t *testing.T) {
	code, out, _ := run(t, "vacuum", "--help")
	if code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"--inventory SOURCE", "parquet.`/inv`", "abfss://", "s3://", "gs://", "Exit status", "130 interrupted", "--log-level", "case-insensitive"} {
		if !strings.Contains(out, want) {
			t.Errorf("vacuum --help lacks %q", want)
		}
	}
	code, out, _ = run(t, "completion", "bash")
	if code != ExitOK || !strings.Contains(out, "bash completion") {
		t.Errorf("completion bash: exit %d", code)
	}
}

// A DRY RUN whose plan knows no modification time (VACUUM LITE) prints "-", not year 1.
func TestDryRunUnknownTime(t *testing.T) {
	var b strings.Builder
	known := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	printResult(&b, &vacuum.Result{DryRun: true, Plan: &vacuum.Plan{Files: vacuum.NewFileList(vacuum.File{Path: "a.parquet", Size: 1, Reason: "tombstone"}, vacuum.File{Path: "b.parquet", Size: 2, Reason: "tombstone", ModificationTime: known})}})
	out := b.String()
	if strings.Contains(out, "0001-01-01") || !strings.Contains(out, "tombstone\t1\t-\ta.parquet") || !strings.Contains(out, "2026-01-02T03:04:05Z\tb.parquet") {
		t.Errorf("DRY RUN:\n%s", out)
	}
}

func TestExitCodeRules(t *testing.T) {
	ctx := context.Background()
	if c := exitCode(ctx, fmt.Errorf("table t: %w: 2 of 9", vacuum.ErrPartialFailure)); c != ExitPartial {
		t.Errorf("partial failure: %d", c)
	}
	if c := exitCode(ctx, context.Canceled); c != ExitFailure {
		t.Errorf("canceled, not interrupted: %d", c)
	}
	if c := exitCode(ctx, usagef("x")); c != ExitUsage {
		t.Errorf("usage: %d", c)
	}
	// An interrupted run (the context of main is cancelled by SIGINT or SIGTERM) exits 130.
	dir := fixtures.Copy(t, fixtureTable, time.Now().Add(-30*24*time.Hour))
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	var out, errb strings.Builder
	if c := Run(cctx, []string{"vacuum", dir, "--dry-run"}, strings.NewReader(""), &out, &errb); c != ExitInterrupted {
		t.Errorf("interrupted: exit %d: %s", c, errb.String())
	}
	if got := len(fixtures.Files(t, dir)); got != 60 {
		t.Errorf("an interrupted DRY RUN changed the table: %d files", got)
	}
}

func TestSQLJSONError(t *testing.T) {
	dir := fixtures.Copy(t, fixtureTable, time.Now().Add(-30*24*time.Hour))
	for _, tc := range []struct {
		script string
		code   int
		want   string
	}{
		{"VACUUM '" + dir + "' RETAIN 1 HOURS", ExitFailure, "SET spark.databricks.delta.retentionDurationCheck.enabled"},
		{"VACUUM '" + dir + "' RETAIN", ExitUsage, ""},
		{"DESCRIBE HISTORY '" + t.TempDir() + "'", ExitFailure, "not a Delta table"},
	} {
		code, out, errs := run(t, "sql", "--json", tc.script)
		var doc struct {
			Statement string `json:"statement"`
			Error     string `json:"error"`
			ExitCode  int    `json:"exitCode"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Errorf("%s: stdout is not a JSON document: %v\n%s", tc.script, err, out)
			continue
		}
		if code != tc.code || doc.Error == "" || doc.ExitCode != code || !strings.Contains(doc.Error, tc.want) {
			t.Errorf("%s: exit %d, %+v (stderr %s)", tc.script, code, doc, errs)
		}
	}
	code, out, _ := run(t, "vacuum", filepath.Join(dir, "nope"), "--json")
	if !json.Valid([]byte(out)) || !strings.Contains(out, `"error"`) || code != ExitFailure {
		t.Errorf("vacuum --json error: exit %d: %s", code, out)
	}
}

// readmeJSONFields are the top-level fields docs/cli.md lists for vacuum --json (the names in
// backquotes of its "With `--json`, one JSON document:" paragraph, outside parentheses).
func readmeJSONFields(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "With `--json`, one JSON document:")
	j := strings.Index(s[i:], "Every path is relative")
	if i < 0 || j < 0 {
		t.Fatal("docs/cli.md no longer has the --json paragraph")
	}
	para := s[i+len("With `--json`, one JSON document:") : i+j]
	for { // drop (nested lists), innermost first
		n := regexp.MustCompile(`\([^()]*\)`).ReplaceAllString(para, "")
		if n == para {
			break
		}
		para = n
	}
	var fields []string
	for _, m := range regexp.MustCompile("`([a-zA-Z]+)`").FindAllStringSubmatch(para, -1) {
		fields = append(fields, m[1])
	}
	if len(fields) < 15 {
		t.Fatalf("found only %v in docs/cli.md's --json paragraph", fields)
	}
	return fields
}

func TestJSONHasEveryREADMEField(t *testing.T) {
	fields := readmeJSONFields(t)
	dir := fixtures.Copy(t, fixtureTable, time.Now().Add(-30*24*time.Hour))
	for _, args := range [][]string{
		{"vacuum", dir, "--dry-run", "--json"},
		{"vacuum", dir, "--lite", "--dry-run", "--json", "--retain-hours", "0", "--conf", checkOff},
		{"vacuum", dir, "--json", "--retain-hours", "0", "--conf", checkOff},
		{"vacuum", dir, "--json", "--no-run-record"},
	} {
		code, out, errs := run(t, args...)
		if code != ExitOK && !(args[2] == "--lite" && code == ExitFailure) {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		if code != ExitOK {
			continue // LITE before any recorded run fails (DELTA_CANNOT_VACUUM_LITE)
		}
		var doc map[string]any
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		for _, f := range fields {
			if _, ok := doc[f]; !ok {
				t.Errorf("%v: the JSON lacks %q, which docs/cli.md lists", args[1:], f)
			}
		}
	}
}

func TestTerminalDetection(t *testing.T) {
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if isTerminal(f) {
		t.Error("/dev/null is taken for a terminal")
	}
	p, err := startProgress("auto", f)
	if err != nil || p.mode != "none" {
		t.Errorf("progress on /dev/null: %v %v", p.mode, err)
	}
	p.Stop()
	// NO_COLOR: the redrawn line carries no escape sequence.
	var b strings.Builder
	pl := &progress{w: &b, mode: "tty", plain: true, counters: vacuum.NewCounters()}
	pl.render(true)
	if strings.Contains(b.String(), "\033") || !strings.HasSuffix(b.String(), "\n") {
		t.Errorf("NO_COLOR progress: %q", b.String())
	}
}
