package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/deltavacuum/deltavacuum"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deltavacuum/deltavacuum/catalog"
	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/internal/fixtures"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/local"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

var monthAgo = time.Now().Add(-30 * 24 * time.Hour)

func newSession(t *testing.T, cfg Config) *Session {
	t.Helper()
	s, err := NewSession(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func execAll(t *testing.T, s *Session, script string) []*Result {
	t.Helper()
	rs, err := s.ExecScript(context.Background(), script)
	if err != nil {
		t.Fatalf("%s: %v", script, err)
	}
	return rs
}

// rawMetadata returns the metaData action of the latest commit that has one, as a map.
func lastMetadata(t *testing.T, dir string) map[string]any {
	t.Helper()
	store, _ := local.New(dir)
	snap, err := deltalog.Load(context.Background(), store)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(snap.Metadata.Raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestAlterTablePropertiesThenVacuum(t *testing.T) {
	dir := fixtures.Copy(t, "delta/basic-with-inserts-deletes-checkpoint", monthAgo)
	before := lastMetadata(t, dir)
	s := newSession(t, Config{})
	q := "'" + dir + "'"
	execAll(t, s, "ALTER TABLE "+q+" SET TBLPROPERTIES ('delta.deletedFileRetentionDuration' = 'interval 3 days', 'my.key' = 'v1')")

	after := lastMetadata(t, dir)
	conf := after["configuration"].(map[string]any)
	if conf["delta.deletedFileRetentionDuration"] != "interval 3 days" || conf["my.key"] != "v1" {
		t.Errorf("configuration %v", conf)
	}
	delete(before, "configuration")
	delete(after, "configuration")
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("fields other than configuration changed (-before +after):\n%s", diff)
	}

	// A plain VACUUM now uses 72 hours; RETAIN 72 HOURS passes the check, 71 does not.
	rs := execAll(t, s, "VACUUM "+q+" DRY RUN; VACUUM delta.`"+dir+"` RETAIN 72 HOURS DRY RUN")
	for _, r := range rs {
		if r.Vacuum.RetentionHours != 72 || r.Vacuum.TableRetentionHours != 72 {
			t.Errorf("%s: retention %v hours, table %v; want 72", r.Statement, r.Vacuum.RetentionHours, r.Vacuum.TableRetentionHours)
		}
	}
	if _, err := s.ExecScript(context.Background(), "VACUUM "+q+" RETAIN 71 HOURS DRY RUN"); err == nil || !strings.Contains(err.Error(), "at least 72 hours") {
		t.Errorf("RETAIN 71 HOURS: got %v, want the safety check", err)
	}

	rs = execAll(t, s, "SHOW TBLPROPERTIES "+q+"; SHOW TBLPROPERTIES "+q+" ('my.key')")
	if rs[0].Properties["delta.deletedFileRetentionDuration"] != "interval 3 days" || len(rs[1].Properties) != 1 || rs[1].Properties["my.key"] != "v1" {
		t.Errorf("SHOW TBLPROPERTIES: %v / %v", rs[0].Properties, rs[1].Properties)
	}

	execAll(t, s, "ALTER TABLE "+q+" UNSET TBLPROPERTIES ('my.key'); ALTER TABLE "+q+" UNSET TBLPROPERTIES IF EXISTS ('my.key', 'nope')")
	if _, err := s.ExecScript(context.Background(), "ALTER TABLE "+q+" UNSET TBLPROPERTIES ('my.key')"); !errors.Is(err, deltalog.ErrInvalidProperty) {
		t.Errorf("UNSET of a missing key without IF EXISTS: got %v", err)
	}
	h := execAll(t, s, "DESCRIBE HISTORY "+q+" LIMIT 3")[0].History
	if len(h) != 3 || h[0].Operation != "UNSET TBLPROPERTIES" || h[2].Operation != "SET TBLPROPERTIES" {
		t.Errorf("history: %+v", h)
	}
	if !strings.Contains(string(h[2].OperationParameters), `delta.deletedFileRetentionDuration`) {
		t.Errorf("SET TBLPROPERTIES parameters: %s", h[2].OperationParameters)
	}
}

func TestAlterTableRefusals(t *testing.T) {
	dir := fixtures.Copy(t, "delta/basic-with-inserts-deletes-checkpoint", monthAgo)
	s := newSession(t, Config{})
	q := "'" + dir + "'"
	store, _ := local.New(dir)
	seg, _ := deltalog.ListLog(context.Background(), store)
	for _, stmt := range []string{
		"ALTER TABLE " + q + " SET TBLPROPERTIES ('delta.deletedFileRetentionDuration' = 'interval 1 month')",
		"ALTER TABLE " + q + " SET TBLPROPERTIES ('delta.logRetentionDuration' = '2 years')",
		"ALTER TABLE " + q + " SET TBLPROPERTIES ('delta.deletedFileRetentionDuration' = 'forever')",
		"ALTER TABLE " + q + " SET TBLPROPERTIES ('delta.deletedFileRetentionDuration' = 'interval 60 days')", // > 30-day log retention
		"ALTER TABLE " + q + " SET TBLPROPERTIES ('delta.logRetentionDuration' = 'interval 1 day')",           // < 7-day file retention
		"ALTER TABLE " + q + " SET TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')",
		"ALTER TABLE " + q + " SET TBLPROPERTIES ('delta.feature.deletionVectors' = 'supported')",
		"ALTER TABLE '" + t.TempDir() + "' SET TBLPROPERTIES ('a' = 'b')",
	} {
		if _, err := s.ExecScript(context.Background(), stmt); err == nil {
			t.Errorf("%s: accepted", stmt)
		}
	}
	seg2, _ := deltalog.ListLog(context.Background(), store)
	if seg2.Version != seg.Version {
		t.Errorf("a refused ALTER wrote version %d", seg2.Version)
	}
	// Both lengthened together is fine.
	execAll(t, s, "ALTER TABLE "+q+" SET TBLPROPERTIES ('delta.logRetentionDuration' = 'interval 90 days', 'delta.deletedFileRetentionDuration' = 'interval 60 days')")
}

// TestAlterTableCanonicalKeys: a Delta key in another case is stored in Spark's spelling (so
// that readers, which look keys up exactly, see it), two spellings of one key in a statement
// are refused, UNSET finds the key in any case, and refusals name the table and the key.
func TestAlterTableCanonicalKeys(t *testing.T) {
	dir := fixtures.Copy(t, "delta/basic-with-inserts-deletes-checkpoint", monthAgo)
	s := newSession(t, Config{})
	q := "'" + dir + "'"
	execAll(t, s, "ALTER TABLE "+q+" SET TBLPROPERTIES ('DELTA.DeletedFileRetentionDuration' = 'interval 3 days', 'Delta.CheckpointInterval' = 20, 'My.Key' = 'v')")
	conf := lastMetadata(t, dir)["configuration"].(map[string]any)
	if conf["delta.deletedFileRetentionDuration"] != "interval 3 days" || conf["delta.checkpointInterval"] != "20" || conf["My.Key"] != "v" || len(conf) != 3 {
		t.Errorf("configuration %v; want the canonical delta.* keys and My.Key as typed", conf)
	}
	if r := execAll(t, s, "VACUUM "+q+" DRY RUN")[0]; r.Vacuum.TableRetentionHours != 72 {
		t.Errorf("VACUUM uses a table retention of %v hours, want 72", r.Vacuum.TableRetentionHours)
	}
	for stmt, mention := range map[string]string{
		"ALTER TABLE " + q + " SET TBLPROPERTIES ('delta.checkpointInterval' = 5, 'DELTA.CHECKPOINTINTERVAL' = 6)": "given twice",
		"ALTER TABLE " + q + " SET TBLPROPERTIES ('delta.checkpointIntervall' = 5)":                                "did you mean delta.checkpointInterval?",
		"ALTER TABLE " + q + " SET TBLPROPERTIES ('delta.checkpointInterval' = 0)":                                 "delta.checkpointInterval",
		"ALTER TABLE " + q + " SET TBLPROPERTIES ('delta.logRetentionDuration' = 'interval 30.5 days')":            "fractional",
		"ALTER TABLE " + q + " UNSET TBLPROPERTIES ('DELTA.APPENDONLY')":                                           "protocol",
	} {
		_, err := s.ExecScript(context.Background(), stmt)
		if !errors.Is(err, deltalog.ErrInvalidProperty) || !strings.Contains(err.Error(), mention) || !strings.Contains(err.Error(), dir) {
			t.Errorf("%s: got %v; want a refusal naming the table and %q", stmt, err, mention)
		}
	}
	execAll(t, s, "ALTER TABLE "+q+" UNSET TBLPROPERTIES ('DELTA.CHECKPOINTINTERVAL')")
	if conf := lastMetadata(t, dir)["configuration"].(map[string]any); conf["delta.checkpointInterval"] != nil || len(conf) != 2 {
		t.Errorf("UNSET 'DELTA.CHECKPOINTINTERVAL' left %v", conf)
	}
}

func TestVacuumRecordsHistory(t *testing.T) {
	dir := fixtures.Copy(t, "delta/basic-with-inserts-deletes-checkpoint", monthAgo)
	s := newSession(t, Config{})
	q := "'" + dir + "'"
	rs := execAll(t, s, "SET spark.databricks.delta.retentionDurationCheck.enabled = false; VACUUM "+q+" RETAIN 0 HOURS; DESCRIBE HISTORY "+q+" LIMIT 2; DESCRIBE DETAIL "+q)
	if rs[1].Vacuum.NumDeletedFiles != 7 {
		t.Fatalf("deleted %d, want 7", rs[1].Vacuum.NumDeletedFiles)
	}
	h := rs[2].History
	if len(h) != 2 || h[0].Operation != "VACUUM END" || h[1].Operation != "VACUUM START" {
		t.Fatalf("history %+v", h)
	}
	var startParams, startMetrics, endParams, endMetrics map[string]any
	json.Unmarshal(h[1].OperationParameters, &startParams)
	json.Unmarshal(h[1].OperationMetrics, &startMetrics)
	json.Unmarshal(h[0].OperationParameters, &endParams)
	json.Unmarshal(h[0].OperationMetrics, &endMetrics)
	if startParams["retentionCheckEnabled"] != false || startParams["specifiedRetentionMillis"] != float64(0) || startParams["defaultRetentionMillis"] != float64(604800000) {
		t.Errorf("START parameters %v", startParams)
	}
	if startMetrics["numFilesToDelete"] != "7" || startMetrics["sizeOfDataToDelete"] == nil {
		t.Errorf("START metrics %v", startMetrics)
	}
	if endParams["status"] != "COMPLETED" || endMetrics["numDeletedFiles"] != "7" || endMetrics["numVacuumedDirectories"] != "0" {
		t.Errorf("END %v %v", endParams, endMetrics)
	}
	if *h[0].ReadVersion != h[1].Version || !*h[0].IsBlindAppend || h[0].IsolationLevel != "SnapshotIsolation" {
		t.Errorf("END commitInfo %+v", h[0])
	}
	d := rs[3].Detail
	if d.Version != h[0].Version || d.NumFiles == 0 || d.SizeInBytes == 0 || d.Format != "delta" {
		t.Errorf("detail %+v", d)
	}

	// Without specified retention, specifiedRetentionMillis is absent; logging can be turned off.
	rs = execAll(t, s, "VACUUM "+q+"; SET spark.databricks.delta.vacuum.logging.enabled = false; VACUUM "+q+"; DESCRIBE HISTORY "+q)
	if n := rs[3].History[0].Version; n != h[0].Version+2 {
		t.Errorf("latest version %d, want %d (one logged run, one not)", n, h[0].Version+2)
	}
	if strings.Contains(string(rs[3].History[1].OperationParameters), "specifiedRetentionMillis") {
		t.Errorf("specifiedRetentionMillis without RETAIN: %s", rs[3].History[1].OperationParameters)
	}
}

// failDeletes makes every data-file delete fail, to check VACUUM END records FAILED.
type failDeletes struct{ storage.Store }

func (f failDeletes) Delete(ctx context.Context, keys []string) ([]storage.DeleteResult, error) {
	out := make([]storage.DeleteResult, len(keys))
	for i, k := range keys {
		out[i] = storage.DeleteResult{Key: k, Err: errors.New("injected")}
	}
	return out, nil
}

func TestVacuumEndFailed(t *testing.T) {
	dir := fixtures.Copy(t, "delta/basic-with-inserts-deletes-checkpoint", monthAgo)
	store, _ := local.New(dir)
	tbl := deltavacuum.OpenStore(failDeletes{store})
	_, err := tbl.Vacuum(context.Background(), deltavacuum.VacuumOptions{Options: vacuum.Options{RetainHours: ptr(0.0), DisableRetentionCheck: true}})
	if !errors.Is(err, vacuum.ErrPartialFailure) {
		t.Fatalf("got %v", err)
	}
	h, err := deltalog.History(context.Background(), store, 1)
	if err != nil {
		t.Fatal(err)
	}
	if h[0].Operation != "VACUUM END" || !strings.Contains(string(h[0].OperationParameters), `"FAILED"`) {
		t.Errorf("got %s %s, want VACUUM END with status FAILED", h[0].Operation, h[0].OperationParameters)
	}
}

func ptr[T any](v T) *T { return &v }

func TestInCommitTimestamps(t *testing.T) {
	dir := fixtures.Copy(t, "delta-rs/cdc_ict_table", monthAgo)
	store, _ := local.New(dir)
	ctx := context.Background()
	h0, _ := deltalog.History(ctx, store, 1)
	// A clock behind the last commit: the in-commit timestamp must still increase.
	past := func() time.Time { return h0[0].Timestamp.Add(-time.Hour) }
	v, err := deltalog.SetProperties(ctx, store, []deltalog.Property{{Key: "k", Value: "v"}}, deltalog.CommitOptions{Now: past})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "_delta_log", fmt.Sprintf("%020d.json", v)))
	first, _, _ := strings.Cut(string(b), "\n")
	var line struct {
		CommitInfo struct {
			ICT *int64 `json:"inCommitTimestamp"`
		} `json:"commitInfo"`
	}
	if err := json.Unmarshal([]byte(first), &line); err != nil || line.CommitInfo.ICT == nil {
		t.Fatalf("first line %q must be commitInfo with inCommitTimestamp (%v)", first, err)
	}
	if *line.CommitInfo.ICT != h0[0].Timestamp.UnixMilli()+1 {
		t.Errorf("inCommitTimestamp %d, want previous+1 = %d", *line.CommitInfo.ICT, h0[0].Timestamp.UnixMilli()+1)
	}
}

// lostRaces makes every put-if-absent lose.
type lostRaces struct{ storage.Store }

func (lostRaces) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	return fmt.Errorf("%w: %s", storage.ErrExist, key)
}

func TestCommitRaceLostTenTimes(t *testing.T) {
	dir := fixtures.Copy(t, "delta/basic-with-inserts-deletes-checkpoint", monthAgo)
	store, _ := local.New(dir)
	_, err := deltalog.SetProperties(context.Background(), lostRaces{store}, []deltalog.Property{{Key: "k", Value: "v"}}, deltalog.CommitOptions{})
	if !errors.Is(err, deltalog.ErrCommitRace) {
		t.Errorf("got %v, want ErrCommitRace", err)
	}
}

// TestConcurrentCommitsFromTwoProcesses starts two processes that commit to one table at
// once; each commit must get its own version and none may be lost.
func TestConcurrentCommitsFromTwoProcesses(t *testing.T) {
	if dir := os.Getenv("DELTAVACUUM_COMMIT_HELPER"); dir != "" {
		store, _ := local.New(dir)
		id := os.Getenv("DELTAVACUUM_COMMIT_ID")
		for i := 0; i < 15; i++ {
			_, err := deltalog.SetProperties(context.Background(), store, []deltalog.Property{{Key: "writer." + id + "." + strconv.Itoa(i), Value: "x"}},
				deltalog.CommitOptions{MaxAttempts: 100})
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
		}
		os.Exit(0)
	}
	dir := fixtures.Copy(t, "delta/basic-with-inserts-deletes-checkpoint", monthAgo)
	store, _ := local.New(dir)
	seg, _ := deltalog.ListLog(context.Background(), store)
	var wg sync.WaitGroup
	for _, id := range []string{"a", "b"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^TestConcurrentCommitsFromTwoProcesses$")
			cmd.Env = append(os.Environ(), "DELTAVACUUM_COMMIT_HELPER="+dir, "DELTAVACUUM_COMMIT_ID="+id)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Run(); err != nil {
				t.Errorf("writer %s: %v: %s", id, err, stderr.String())
			}
		}()
	}
	wg.Wait()
	snap, err := deltalog.Load(context.Background(), store)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Version != seg.Version+30 {
		t.Errorf("version %d, want %d: commits were lost or overwritten", snap.Version, seg.Version+30)
	}
	// Each SET read the latest configuration, so every key of both writers is there.
	for _, id := range []string{"a", "b"} {
		for i := 0; i < 15; i++ {
			if _, ok := snap.Property("writer." + id + "." + strconv.Itoa(i)); !ok {
				t.Errorf("property of writer %s commit %d lost", id, i)
			}
		}
	}
}

func TestTableNamesAndSettings(t *testing.T) {
	wh := t.TempDir()
	src := fixtures.Copy(t, "delta/basic-with-inserts-deletes-checkpoint", monthAgo)
	if err := os.MkdirAll(filepath.Join(wh, "Tables", "sales"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(src, filepath.Join(wh, "Tables", "sales", "orders")); err != nil {
		t.Fatal(err)
	}
	s := newSession(t, Config{Catalog: &catalog.Catalog{Warehouse: wh, IsTable: LocalIsTable}})
	rs := execAll(t, s, "set spark.databricks.delta.retentionDurationCheck.enabled=false; SET spark.sql.shuffle.partitions = 8; vacuum sales.orders retain 0 hours dry run")
	if len(rs[1].Warnings) != 1 || !strings.Contains(rs[1].Warnings[0], "no effect") {
		t.Errorf("unknown setting: warnings %v", rs[1].Warnings)
	}
	if rs[2].Vacuum.NumFilesToDelete != 7 || !strings.HasSuffix(rs[2].Table, "/Tables/sales/orders") {
		t.Errorf("vacuum by name: %d files in %s", rs[2].Vacuum.NumFilesToDelete, rs[2].Table)
	}
	if _, err := s.ExecScript(context.Background(), "VACUUM sales.nope"); !errors.Is(err, catalog.ErrUnknownTable) {
		t.Errorf("unknown name: %v", err)
	}
	if _, err := s.ExecScript(context.Background(), "SET spark.databricks.delta.retentionDurationCheck.enabled = maybe"); err == nil {
		t.Error("a non-boolean value for a boolean setting was accepted")
	}
	// LITE by the clause or by the session default; FULL forces FULL.
	rs = execAll(t, s, "VACUUM sales.orders LITE RETAIN 0 HOURS DRY RUN; SET spark.databricks.delta.vacuum.lite.enabled = true; VACUUM sales.orders RETAIN 0 HOURS DRY RUN; VACUUM sales.orders FULL RETAIN 0 HOURS DRY RUN")
	if rs[0].Vacuum.Mode != vacuum.ModeLite || rs[2].Vacuum.Mode != vacuum.ModeLite || rs[3].Vacuum.Mode != vacuum.ModeFull {
		t.Errorf("modes %s %s %s, want LITE LITE FULL", rs[0].Vacuum.Mode, rs[2].Vacuum.Mode, rs[3].Vacuum.Mode)
	}
	execAll(t, s, "RESET spark.databricks.delta.vacuum.lite.enabled")
	if _, err := s.ExecScript(context.Background(), "VACUUM sales.orders LITE USING INVENTORY inv"); err == nil || !strings.Contains(err.Error(), "Inventory option is not compatible with LITE") {
		t.Errorf("LITE with inventory: %v", err)
	}
	// RESET restores the check.
	if _, err := s.ExecScript(context.Background(), "RESET; VACUUM sales.orders RETAIN 0 HOURS DRY RUN"); err == nil {
		t.Error("RESET did not restore the retention check")
	}
	if _, err := s.ExecScript(context.Background(), "VACUUM sales.orders RETAIN -1 HOURS"); err == nil || !strings.Contains(err.Error(), "can't be less than 0 hours") {
		t.Errorf("negative RETAIN: %v", err)
	}
}
