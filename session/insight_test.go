package session

import (
	"context"
	"github.com/deltavacuum/deltavacuum"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/internal/fixtures"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// TestSQLInsight checks that DESCRIBE DETAIL carries the DRY RUN's figures, and that INSPECT
// and EXPLAIN VACUUM report what the library does.
func TestSQLInsight(t *testing.T) {
	dir := fixtures.Copy(t, "delta/dv-partitioned-with-checkpoint", monthAgo)
	now := time.Now()
	s := newSession(t, Config{Now: func() time.Time { return now }})
	rs := execAll(t, s, "DESCRIBE DETAIL '"+dir+"'; INSPECT '"+dir+"' RETAIN 0 HOURS; "+
		"EXPLAIN VACUUM '"+dir+"' PATHS ('_delta_log/00000000000000000000.json', '../x')")
	tbl, err := deltavacuum.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := tbl.Plan(context.Background(), vacuum.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if rc := rs[0].Reclaimable; rc == nil || rc.Files != plan.NumFilesToDelete || rc.Bytes != plan.SizeOfDataToDelete || rc.Directories != int64(len(plan.Dirs)) {
		t.Errorf("DESCRIBE DETAIL reclaimable %+v, the DRY RUN deletes %d files, %d bytes", rs[0].Reclaimable, plan.NumFilesToDelete, plan.SizeOfDataToDelete)
	}
	if r := rs[1].Inspect; r == nil || r.RetentionHours != 0 || !r.BelowTableRetention || rs[1].Kind != "INSPECT" {
		t.Errorf("INSPECT: %+v", rs[1])
	}
	if x := rs[2].Explain; x == nil || len(x.Paths) != 2 || !strings.HasPrefix(x.Paths[0].Text, "kept: part of the Delta log") || x.Paths[1].Verdict != "not in the table" {
		t.Errorf("EXPLAIN VACUUM: %+v", rs[2].Explain)
	}
	for _, bad := range []string{"INSPECT '" + dir + "' RETAIN -1 HOURS", "EXPLAIN VACUUM '" + dir + "' RETAIN -5 HOURS PATHS ('a')", "INSPECT '" + dir + "/nope'"} {
		if _, err := s.ExecScript(context.Background(), bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
