package service

import (
	"context"
	"database/sql"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/run"
	"github.com/deltavacuum/deltavacuum/service/state"
	"github.com/deltavacuum/deltavacuum/storage/local"
)

// stateV1 is the runs table of the state database's schema version 1 (the builds before issue
// 33), which kept each run's own status, figures, error and end.
const stateV1 = `CREATE TABLE runs (
		id         TEXT PRIMARY KEY,
		table_id   TEXT NOT NULL,
		trigger    TEXT NOT NULL,
		mode       TEXT NOT NULL,
		dry_run    INTEGER NOT NULL,
		status     TEXT NOT NULL CHECK (status IN ('RUNNING', 'COMPLETED', 'FAILED')),
		started_ms INTEGER NOT NULL,
		ended_ms   INTEGER,
		error      TEXT NOT NULL DEFAULT '',
		figures    TEXT NOT NULL DEFAULT '{}',
		record_id  TEXT NOT NULL DEFAULT ''
	);
	CREATE INDEX runs_by_table ON runs (table_id, started_ms);
	CREATE UNIQUE INDEX runs_one_running ON runs (table_id) WHERE status = 'RUNNING';
	CREATE TABLE schedules (table_id TEXT PRIMARY KEY, handled_ms INTEGER, last_full_ms INTEGER);
	CREATE TABLE inspections (table_id TEXT NOT NULL, at_ms INTEGER NOT NULL, version INTEGER NOT NULL, figures TEXT NOT NULL, PRIMARY KEY (table_id, at_ms));
	PRAGMA user_version = 1;`

// TestOldStateDatabaseServes (issue 33): a service started on the state database of a build
// before (schema version 1, each run with a status of its own) opens it, and shows its runs as
// it shows its own: a run with a record beside the table in the record's state (here its
// record says FAILED while the old row said COMPLETED: the record wins), a run refused before it
// wrote a record FAILED with its refusal; and it goes on running the table.
func TestOldStateDatabaseServes(t *testing.T) {
	f := newFixture(t, "tables:\n  - {id: a, path: TABLES/a, policy: {trash: true, inspectEvery: off}}\n", nil, nil)
	ctx := context.Background()
	id := startRun(t, f, "a")
	store, err := local.New(filepath.Join(f.dir, "a"))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := run.ReadRecord(ctx, store, id)
	if err != nil {
		t.Fatal(err)
	}
	rec.Status = run.StatusFailed
	if err := run.WriteRecord(ctx, store, rec); err != nil {
		t.Fatal(err)
	}
	f.srv.Shutdown(ctx)
	f.http.Close()
	f.db.Close()

	// The same data directory, holding a database of version 1 instead.
	dir := f.srv.cfg.DataDir
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(filepath.Join(dir, state.FileName+suffix))
	}
	old, err := sql.Open("sqlite", "file:"+filepath.Join(dir, state.FileName))
	if err != nil {
		t.Fatal(err)
	}
	ms := func(d time.Duration) string { return strconv.FormatInt(t0.Add(d).UnixMilli(), 10) }
	for _, q := range []string{stateV1,
		`INSERT INTO runs VALUES ('` + id + `', 'a', 'api', 'FULL', 0, 'COMPLETED', ` + ms(0) + `, ` + ms(time.Second) + `, '', '{"mode":"FULL","numDeletedFiles":2}', '` + id + `')`,
		`INSERT INTO runs VALUES ('refused', 'a', 'schedule', 'FULL', 0, 'FAILED', ` + ms(-time.Hour) + `, ` + ms(-time.Hour) + `, 'the retention check refused it', '{}', '')`,
	} {
		if _, err := old.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	old.Close()

	db, err := state.Open(ctx, dir)
	if err != nil {
		t.Fatalf("the database of version 1: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	srv, err := New(Options{Config: f.srv.cfg, State: db, Now: f.clock.now, Getenv: func(string) string { return "" },
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		hs.Close()
		srv.Shutdown(context.Background())
	})
	g := &fixture{srv: srv, http: hs, clock: f.clock, dir: f.dir, db: db}

	r := getRun(t, g, id)
	if r["status"] != run.StatusFailed || r["state"] != run.StateFailed || r["recordId"] != id || r["trigger"] != "api" {
		t.Errorf("the old run with a record: %v, want its record's FAILED", r)
	}
	r = getRun(t, g, "refused")
	if r["status"] != run.StatusFailed || !strings.Contains(r["error"].(string), "the retention check refused it") || r["trigger"] != "schedule" {
		t.Errorf("the old refused run: %v", r)
	}
	// And it goes on: a new run of the table, completed.
	g.clock.set(t0.Add(time.Minute))
	id2 := startRun(t, g, "a")
	if r := getRun(t, g, id2); r["status"] != run.StatusCompleted {
		t.Errorf("a new run on the migrated database: %v", r)
	}
	if runs := g.runs(t, "a", 10); len(runs) != 3 || runs[0].ID != id2 {
		t.Errorf("the table's runs: %+v", runs)
	}
}
