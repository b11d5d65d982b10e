package state

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// v1 writes a database of schema version 1 (the runs with their own status, figures, error and
// end, as the builds before kept them) in dir, with rows.
func v1(t *testing.T, dir string, rows ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range append([]string{migrations[0], "PRAGMA user_version = 1"}, rows...) {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// columns are the columns of table in db.
func columns(t *testing.T, db *DB, table string) []string {
	t.Helper()
	rows, err := db.db.Query("SELECT name FROM pragma_table_info(?)", table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	return out
}

// TestNoRunStateKept: the runs table keeps no status, figures, error or end of a run: those are
// the run record's, beside the table (issue 33). The schema of the builds before kept them all.
func TestNoRunStateKept(t *testing.T) {
	db := open(t, t.TempDir())
	got := columns(t, db, "runs")
	for _, c := range got {
		switch c {
		case "status", "figures", "error", "ended_ms", "started_ms":
			t.Errorf("the runs table has a column %q: a run's state is its run record's", c)
		}
	}
	want := []string{"id", "table_id", "requester", "mode", "dry_run", "asked_ms", "record_id", "retain_hours", "one_off_from", "plan_digest", "cancelled", "refusal", "refused_ms", "plan_changed"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the columns of runs (-want +got):\n%s", diff)
	}
}

// TestMigrateVersion1: a database of the builds before opens, and keeps each run's history
// readable: who asked (its trigger), when, the link to its record, what was asked (a one-off
// retention, a preview, from its figures), a FAILED run's error as its refusal when it never
// named a record (a refusal: the table holds no record to say it), a cancel through the API,
// a plan that changed. Figures that are no JSON object, or hold values of other types, are
// passed over, not fatal. The schedules and the inspections are kept as they were.
func TestMigrateVersion1(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	ms := func(d time.Duration) string { return strconv.FormatInt(t0.Add(d).UnixMilli(), 10) }
	v1(t, dir,
		`INSERT INTO runs VALUES ('done', 'sales', 'api', 'LITE', 0, 'COMPLETED', `+ms(0)+`, `+ms(time.Minute)+`, '',
			'{"mode":"FULL","retentionHours":300,"oneOffRetention":true,"oneOffFrom":"preview","planDigest":"sha256:aa","numDeletedFiles":2}', '0196f5a2-3c41-7d2e-9b1a-5c3e8f7a6b21')`,
		`INSERT INTO runs VALUES ('refused', 'sales', 'schedule', 'FULL', 0, 'FAILED', `+ms(time.Hour)+`, `+ms(time.Hour+time.Second)+`,
			'the retention check refused it', '{}', '')`,
		`INSERT INTO runs VALUES ('cancelled', 'orders', 'api', 'FULL', 0, 'FAILED', `+ms(2*time.Hour)+`, `+ms(3*time.Hour)+`,
			'cancelled through the API: vacuum of orders stopped', '{"mode":"FULL"}', '0196f5a2-3c41-7d2e-9b1a-000000000001')`,
		`INSERT INTO runs VALUES ('moved', 'orders', 'api', 'FULL', 0, 'FAILED', `+ms(4*time.Hour)+`, `+ms(4*time.Hour)+`,
			'the plan is not the previewed one', '{"mode":"FULL","planDigest":"sha256:bb","planChanged":true}', '')`,
		`INSERT INTO runs VALUES ('left', 'orders', 'api', 'FULL', 0, 'RUNNING', `+ms(5*time.Hour)+`, NULL, '', '{}', '')`,
		`INSERT INTO runs VALUES ('serve-20261201T020000Z-1a2b3c4d', 'orders', 'schedule', 'FULL', 0, 'COMPLETED', `+ms(6*time.Hour)+`, `+ms(6*time.Hour)+`, '', '{}', '20261201T020000Z-1a2b3c4d')`,
		`INSERT INTO runs VALUES ('garbled', 'x', 'api', 'FULL', 0, 'COMPLETED', `+ms(7*time.Hour)+`, `+ms(7*time.Hour)+`, '', 'not json', '')`,
		`INSERT INTO runs VALUES ('array', 'x', 'api', 'FULL', 0, 'COMPLETED', `+ms(8*time.Hour)+`, `+ms(8*time.Hour)+`, '', '[1, 2]', '')`,
		`INSERT INTO runs VALUES ('typed', 'x', 'api', 'FULL', 0, 'FAILED', `+ms(9*time.Hour)+`, NULL, 'boom',
			'{"oneOffRetention":"yes","retentionHours":"300","oneOffFrom":5,"planDigest":null,"planChanged":1}', '')`,
		`INSERT INTO runs VALUES ('null', 'x', 'api', 'FULL', 0, 'COMPLETED', `+ms(10*time.Hour)+`, NULL, '', 'null', '')`,
		`INSERT INTO schedules VALUES ('sales', `+ms(0)+`, `+ms(-time.Hour)+`)`,
		`INSERT INTO inspections VALUES ('sales', `+ms(0)+`, 3, '{"reclaimableBytes":1}')`,
	)
	db := open(t, dir)
	var v int
	if err := db.db.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != SchemaVersion() {
		t.Fatalf("schema version %d (%v), want %d", v, err, SchemaVersion())
	}
	h := 300.0
	at := func(d time.Duration) *time.Time { x := t0.Add(d); return &x }
	want := map[string]Run{
		"done": {ID: "done", Table: "sales", Requester: ByAPI, Mode: "LITE", Asked: t0, RecordID: "0196f5a2-3c41-7d2e-9b1a-5c3e8f7a6b21",
			RetainHours: &h, OneOffFrom: "preview", PlanDigest: "sha256:aa"},
		"refused": {ID: "refused", Table: "sales", Requester: BySchedule, Mode: "FULL", Asked: t0.Add(time.Hour),
			Refusal: "the retention check refused it", Refused: at(time.Hour + time.Second)},
		"cancelled": {ID: "cancelled", Table: "orders", Requester: ByAPI, Mode: "FULL", Asked: t0.Add(2 * time.Hour),
			RecordID: "0196f5a2-3c41-7d2e-9b1a-000000000001", Cancelled: "cancelled through the API"},
		"moved": {ID: "moved", Table: "orders", Requester: ByAPI, Mode: "FULL", Asked: t0.Add(4 * time.Hour), PlanDigest: "sha256:bb",
			Refusal: "the plan is not the previewed one", Refused: at(4 * time.Hour), PlanChanged: true},
		"left": {ID: "left", Table: "orders", Requester: ByAPI, Mode: "FULL", Asked: t0.Add(5 * time.Hour)},
		"serve-20261201T020000Z-1a2b3c4d": {ID: "serve-20261201T020000Z-1a2b3c4d", Table: "orders", Requester: BySchedule, Mode: "FULL",
			Asked: t0.Add(6 * time.Hour), RecordID: "20261201T020000Z-1a2b3c4d"},
		"garbled": {ID: "garbled", Table: "x", Requester: ByAPI, Mode: "FULL", Asked: t0.Add(7 * time.Hour)},
		"array":   {ID: "array", Table: "x", Requester: ByAPI, Mode: "FULL", Asked: t0.Add(8 * time.Hour)},
		"typed": {ID: "typed", Table: "x", Requester: ByAPI, Mode: "FULL", Asked: t0.Add(9 * time.Hour),
			Refusal: "boom", Refused: at(9 * time.Hour)},
		"null": {ID: "null", Table: "x", Requester: ByAPI, Mode: "FULL", Asked: t0.Add(10 * time.Hour)},
	}
	runs, err := db.Runs(ctx, "", 100)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Run{}
	for _, r := range runs {
		got[r.ID] = r
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the runs after the migration (-want +got):\n%s", diff)
	}
	if runs[0].ID != "null" || runs[len(runs)-1].ID != "done" {
		t.Errorf("not newest first: %s … %s", runs[0].ID, runs[len(runs)-1].ID)
	}
	if sch, err := db.Schedules(ctx); err != nil || !sch["sales"].Handled.Equal(t0) || !sch["sales"].LastFull.Equal(t0.Add(-time.Hour)) {
		t.Errorf("schedules %v, %v", sch, err)
	}
	if ins, err := db.Inspections(ctx, "sales", time.Time{}, 10); err != nil || len(ins) != 1 || ins[0].Version != 3 {
		t.Errorf("inspections %v, %v", ins, err)
	}
	// The migrated runs go on as any other: the one left RUNNING links to its record.
	if err := db.SetRecord(ctx, "left", "0196f5a2-3c41-7d2e-9b1a-000000000002"); err != nil {
		t.Error(err)
	}
	if err := db.Refuse(ctx, "refused", t0, "again", false); !errors.Is(err, ErrEnded) {
		t.Errorf("refusing a migrated refusal again: %v", err)
	}
}

// TestMigrationRefusedChangesNothing: a migration that fails (here a table in its way) leaves the
// database as it was, at its version, and the service does not start on it.
func TestMigrationRefusedChangesNothing(t *testing.T) {
	dir := t.TempDir()
	v1(t, dir,
		`INSERT INTO runs VALUES ('done', 'sales', 'api', 'FULL', 0, 'COMPLETED', 1, 2, '', '{}', '')`,
		`CREATE TABLE runs2 (x)`)
	_, err := Open(context.Background(), dir)
	if err == nil || !strings.Contains(err.Error(), "migration 2") {
		t.Fatalf("got %v, want migration 2 refused", err)
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v int
	var status string
	if err := db.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != 1 {
		t.Errorf("version %d (%v), want 1", v, err)
	}
	if err := db.QueryRow("SELECT status FROM runs WHERE id = 'done'").Scan(&status); err != nil || status != "COMPLETED" {
		t.Errorf("the old run: %q, %v", status, err)
	}
}
