package service

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum"
	"github.com/deltavacuum/deltavacuum/run"
	"github.com/deltavacuum/deltavacuum/service/runner"
	"github.com/deltavacuum/deltavacuum/service/state"
	"github.com/deltavacuum/deltavacuum/service/tables"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/local"
	"github.com/deltavacuum/deltavacuum/undo"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// getRun is GET /api/runs/{id}.
func getRun(t *testing.T, f *fixture, id string) map[string]any {
	t.Helper()
	code, body := f.do(t, "GET", "/api/runs/"+id, "")
	if code != 200 {
		t.Fatalf("GET /api/runs/%s: %d %v", id, code, body)
	}
	return body
}

// startRun starts a run of table through the API and waits for its end; it returns its id.
func startRun(t *testing.T, f *fixture, table string) string {
	t.Helper()
	code, body := f.do(t, "POST", "/api/tables/"+table+"/runs", "{}")
	if code != 202 {
		t.Fatalf("run of %s: %d %v", table, code, body)
	}
	f.srv.Wait()
	return body["id"].(string)
}

// offer is the undoOffer of a run document.
func offer(run map[string]any) (action, reason string) {
	o, _ := run["undoOffer"].(map[string]any)
	a, _ := o["action"].(string)
	r, _ := o["reason"].(string)
	return a, r
}

// lastRunOf is the state of the last run of table in GET /api/tables.
func lastRunOf(t *testing.T, f *fixture, table string) map[string]any {
	t.Helper()
	_, body := f.do(t, "GET", "/api/tables", "")
	for _, x := range body["tables"].([]any) {
		if in := x.(map[string]any); in["id"] == table {
			lr, _ := in["lastRun"].(map[string]any)
			return lr
		}
	}
	t.Fatalf("no table %s", table)
	return nil
}

// TestRunStateAfterRunAndUndo: the API's run documents take their state from the table's run
// record (package run's state, as deltavacuum runs shows it), under one id: the run's, its
// lock's and its record's. After the undo the run is undone everywhere (the run, the table's
// runs, the tables list), no undo is offered any more, and the table is inspected again: the
// files are reclaimable once more.
func TestRunStateAfterRunAndUndo(t *testing.T) {
	f := newFixture(t, "tables:\n  - {id: a, path: TABLES/a, policy: {trash: true, inspectEvery: off}}\n", nil, nil)
	a := filepath.Join(f.dir, "a")
	code, body := f.do(t, "POST", "/api/tables/a/runs", "{}")
	if code != 202 || body["state"] != "planned" || !run.ValidID(body["id"].(string)) {
		t.Fatalf("start: %d %v, want 202, state planned and a run id", code, body)
	}
	id := body["id"].(string)
	f.srv.Wait()
	r := getRun(t, f, id)
	if r["state"] != run.StateCompleted || r["status"] != "COMPLETED" || r["recordId"] != id {
		t.Fatalf("after the run: %v, want state completed under one id", r)
	}
	if u := r["undo"].(map[string]any); u["possible"] != vacuum.UndoYes || u["via"] != "trash" || r["trash"] != "_deltavacuum/trash/"+id+"/" {
		t.Errorf("undo of a trashed run: %v", r)
	}
	if a, why := offer(r); a != "undo" || why != runner.OfferPossible {
		t.Errorf("offer after the run: %q %q, want undo", a, why)
	}
	// The table's record says the same (deltavacuum runs reads it).
	store, _ := local.New(a)
	infos, err := run.Runs(context.Background(), store, f.clock.now(), 0)
	if err != nil || len(infos) != 1 || infos[0].ID != id || infos[0].State != run.StateCompleted {
		t.Fatalf("run.Runs: %+v %v", infos, err)
	}
	if pts := f.inspectionsOfTable(t, "a"); len(pts) != 1 || pts[0]["reclaimableFiles"].(float64) != 0 {
		t.Fatalf("inspection after the run: %v", pts)
	}

	f.clock.set(t0.Add(time.Minute))
	if code, body := f.do(t, "POST", "/api/runs/"+id+"/undo", "{}"); code != 200 || body["numRestored"].(float64) != 2 {
		t.Fatalf("undo: %d %v", code, body)
	}
	f.srv.Wait()
	r = getRun(t, f, id)
	if r["state"] != run.StateUndone || r["status"] != "COMPLETED" {
		t.Errorf("after the undo: %v, want state undone (the service's status stays COMPLETED)", r)
	}
	if a, why := offer(r); a != "" || why != runner.OfferUndone {
		t.Errorf("offer after the undo: %q %q, want none (undone)", a, why)
	}
	if lr := lastRunOf(t, f, "a"); lr["state"] != run.StateUndone || lr["id"] != id {
		t.Errorf("GET /api/tables, last run: %v", lr)
	}
	_, tr := f.do(t, "GET", "/api/tables/a/runs", "")
	if runs := tr["runs"].([]any); len(runs) != 1 || runs[0].(map[string]any)["state"] != run.StateUndone {
		t.Errorf("the table's runs: %v", tr)
	}
	pts := f.inspectionsOfTable(t, "a")
	if len(pts) != 2 || pts[1]["reclaimableFiles"].(float64) != 2 {
		t.Errorf("inspections after the undo: %v, want a second one with the 2 files back", pts)
	}
	if !exists(t, filepath.Join(a, "old.parquet")) || !exists(t, filepath.Join(a, "stray.parquet")) {
		t.Error("the undo did not bring the files back")
	}
	_, page := f.do(t, "GET", "/runs/"+id, "")
	html := page["text"].(string)
	if strings.Contains(html, `id="undo-dry"`) || !strings.Contains(html, text("undo.undone")) {
		t.Errorf("the run page of an undone run offers an undo, or does not say it is undone:\n%s", html)
	}
	if strings.Count(html, id) < 1 || strings.Contains(html, "serve-") {
		t.Error("the run page does not show the run's one id")
	}
}

// TestRunStateNotUndoable: a run that deletes from a store keeping nothing (local disk, no
// trash) is completed, says it cannot be undone and why, and its page offers no undo.
func TestRunStateNotUndoable(t *testing.T) {
	f := newFixture(t, "tables:\n  - {id: a, path: TABLES/a, policy: {inspectEvery: off}}\n", nil, nil)
	id := startRun(t, f, "a")
	r := getRun(t, f, id)
	if r["state"] != run.StateCompleted || r["undo"].(map[string]any)["possible"] != vacuum.UndoNo {
		t.Fatalf("run: %v", r)
	}
	a, why := offer(r)
	if a != "" || why != runner.OfferNothingKept {
		t.Errorf("offer: %q %q, want none (nothing kept)", a, why)
	}
	_, page := f.do(t, "GET", "/runs/"+id, "")
	html := page["text"].(string)
	if strings.Contains(html, `id="undo-dry"`) || !strings.Contains(html, "cannot be undone") {
		t.Errorf("the run page offers an undo of a run nothing can undo:\n%s", html)
	}
	if code, _ := f.do(t, "GET", "/runs/"+id+"?undo=dry", ""); code != 409 {
		t.Errorf("the undo's dry run of a run that cannot be undone: %d, want 409", code)
	}
}

// TestRunStatePartiallyUndone: an undo that cannot bring every file back leaves the run
// partially undone; "undo again" is offered only when files failed (a retry can bring them),
// not when the rest is not restorable (a purged trash), and a retry that brings the rest
// back makes the run undone.
func TestRunStatePartiallyUndone(t *testing.T) {
	t.Run("not restorable", func(t *testing.T) {
		f := newFixture(t, "tables:\n  - {id: a, path: TABLES/a, policy: {trash: true, inspectEvery: off}}\n", nil, nil)
		id := startRun(t, f, "a")
		if err := os.Remove(filepath.Join(f.dir, "a", "_deltavacuum", "trash", id, "old.parquet")); err != nil {
			t.Fatal(err)
		}
		code, body := f.do(t, "POST", "/api/runs/"+id+"/undo", "{}")
		if code != 502 || body["report"] == nil {
			t.Fatalf("undo: %d %v, want 502 with the report", code, body)
		}
		f.srv.Wait()
		r := getRun(t, f, id)
		if r["state"] != run.StatePartiallyUndone {
			t.Fatalf("run: %v, want partially undone", r)
		}
		if a, why := offer(r); a != "" || why != runner.OfferRestLost {
			t.Errorf("offer: %q %q, want none (the rest is lost)", a, why)
		}
		_, page := f.do(t, "GET", "/runs/"+id, "")
		if html := page["text"].(string); strings.Contains(html, `id="undo-dry"`) || !strings.Contains(html, "cannot come back") {
			t.Errorf("the run page offers to undo again where nothing can come back:\n%s", html)
		}
	})
	t.Run("failed then retried", func(t *testing.T) {
		f := newFixture(t, "tables:\n  - {id: a, path: TABLES/a, policy: {trash: true, inspectEvery: off}}\n", nil, nil)
		part := filepath.Join(f.dir, "a", "p=1")
		if err := os.Mkdir(part, 0o755); err != nil {
			t.Fatal(err)
		}
		manyStray(t, part, 1)
		id := startRun(t, f, "a")
		if exists(t, part) {
			t.Fatal("the run left the emptied folder p=1")
		}
		// A file where the folder must be: the file of p=1 cannot be moved back.
		if err := os.WriteFile(part, []byte("in the way"), 0o644); err != nil {
			t.Fatal(err)
		}
		if code, body := f.do(t, "POST", "/api/runs/"+id+"/undo", "{}"); code != 502 {
			t.Fatalf("undo: %d %v, want 502", code, body)
		}
		f.srv.Wait()
		r := getRun(t, f, id)
		if a, why := offer(r); r["state"] != run.StatePartiallyUndone || a != "undo again" || why != runner.OfferRetry {
			t.Fatalf("run: %v; offer %q %q, want partially undone and undo again", r, a, why)
		}
		_, page := f.do(t, "GET", "/runs/"+id, "")
		if html := page["text"].(string); !strings.Contains(html, `id="undo-dry"`) || !strings.Contains(html, "Undo again") {
			t.Errorf("the run page does not offer to undo again:\n%s", html)
		}
		os.Remove(part)
		f.clock.set(t0.Add(time.Minute))
		if code, body := f.do(t, "POST", "/api/runs/"+id+"/undo", "{}"); code != 200 {
			t.Fatalf("undo again: %d %v", code, body)
		}
		f.srv.Wait()
		if r := getRun(t, f, id); r["state"] != run.StateUndone {
			t.Errorf("after the retry: %v, want undone", r)
		}
		if countStray(t, part) != 1 {
			t.Error("the retry did not bring the file back")
		}
	})
}

// heldRecords holds the first write of a run record until released: a run accepted and not
// yet recorded beside the table.
type heldRecords struct {
	*local.Store
	once    sync.Once
	entered chan struct{}
	release chan struct{}
}

func (h *heldRecords) Put(ctx context.Context, key string, data []byte) error {
	if strings.HasPrefix(key, "_deltavacuum/runs/") && strings.HasSuffix(key, ".jsonl.gz") {
		h.once.Do(func() { close(h.entered) })
		<-h.release
	}
	return h.Store.Put(ctx, key, data)
}

// TestRunStatePlannedRunning: a run the service accepted is planned until its record is
// written beside the table, then running while it deletes (the progress too), then completed.
func TestRunStatePlannedRunning(t *testing.T) {
	f := newFixture(t, "tables:\n  - {id: a, path: TABLES/a, policy: {inspectEvery: off}}\n", nil, nil)
	st, err := local.New(filepath.Join(f.dir, "a"))
	if err != nil {
		t.Fatal(err)
	}
	h := &heldRecords{Store: st, entered: make(chan struct{}), release: make(chan struct{})}
	g := &gatedStore{Store: st, entered: make(chan struct{}), release: make(chan struct{})}
	f.srv.tables.SetOpenHook(func(context.Context, *tables.Table) (*deltavacuum.Table, error) {
		return deltavacuum.OpenStore(recordsHeldDeletesGated{h, g}), nil
	})
	code, body := f.do(t, "POST", "/api/tables/a/runs", "{}")
	if code != 202 {
		t.Fatalf("start: %d %v", code, body)
	}
	id := body["id"].(string)
	<-h.entered
	if r := getRun(t, f, id); r["state"] != run.StatePlanned || r["status"] != "RUNNING" {
		t.Errorf("before its record: %v, want planned", r)
	}
	if a, why := offer(getRun(t, f, id)); a != "" || why != runner.OfferRunning {
		t.Errorf("offer of a planned run: %q %q", a, why)
	}
	close(h.release)
	<-g.entered
	if r := getRun(t, f, id); r["state"] != run.StateRunning {
		t.Errorf("while deleting: %v, want running", r)
	}
	_, p := f.do(t, "GET", "/api/runs/"+id+"/progress", "")
	if p["run"].(map[string]any)["state"] != run.StateRunning {
		t.Errorf("progress while deleting: %v", p)
	}
	close(g.release)
	f.srv.Wait()
	if r := getRun(t, f, id); r["state"] != run.StateCompleted {
		t.Errorf("after: %v, want completed", r)
	}
}

// recordsHeldDeletesGated holds the record's first write (heldRecords) and the deletes
// (gatedStore) of one table.
type recordsHeldDeletesGated struct {
	*heldRecords
	g *gatedStore
}

func (s recordsHeldDeletesGated) Delete(ctx context.Context, keys []string) ([]storage.DeleteResult, error) {
	return s.g.Delete(ctx, keys)
}

// TestRunStateInterrupted: a run whose process died mid-run (its record RUNNING beside the
// table, ended FAILED by the next start, no record id in the state database) is failed and
// interrupted, under its one id; the undo it is offered brings back what it moved (undo
// --unfinished), and the run is then undone.
func TestRunStateInterrupted(t *testing.T) {
	f := newFixture(t, "tables:\n  - {id: a, path: TABLES/a, policy: {trash: true, inspectEvery: off}}\n", nil, nil)
	ctx := context.Background()
	a := filepath.Join(f.dir, "a")
	store, err := local.New(a)
	if err != nil {
		t.Fatal(err)
	}
	id := run.NewID(t0)
	trash := vacuum.RunTrash(run.DefaultTrash, id)
	rec := &run.Record{ID: id, Table: store.Location(), Status: run.StatusRunning, StartedAt: t0, Mode: "FULL", Trash: trash,
		NumFiles: 1, Bytes: 4, Files: []run.Entry{{Path: "stray.parquet", Size: 4}}}
	if err := run.WriteRecord(ctx, store, rec); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(a, filepath.FromSlash(trash)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(a, "stray.parquet"), filepath.Join(a, filepath.FromSlash(trash), "stray.parquet")); err != nil {
		t.Fatal(err)
	}
	if err := f.db.AddRun(ctx, state.Run{ID: id, Table: "a", Requester: state.ByAPI, Mode: "FULL", Asked: t0}); err != nil {
		t.Fatal(err)
	}
	r := getRun(t, f, id)
	if r["state"] != run.StateFailed || r["interrupted"] != true {
		t.Fatalf("run: %v, want failed and interrupted", r)
	}
	o := r["undoOffer"].(map[string]any)
	if o["action"] != "undo" || o["unfinished"] != true {
		t.Errorf("offer: %v, want an undo of the unfinished run", o)
	}
	if code, body := f.do(t, "POST", "/api/runs/"+id+"/undo", "{}"); code != 200 || body["numRestored"].(float64) != 1 {
		t.Fatalf("undo: %d %v", code, body)
	}
	f.srv.Wait()
	if r := getRun(t, f, id); r["state"] != run.StateUndone {
		t.Errorf("after the undo: %v", r)
	}
	if !exists(t, filepath.Join(a, "stray.parquet")) {
		t.Error("the file is not back")
	}
}

// TestOfferWords: every reason of an undo offer has its words in the API's English.
func TestOfferWords(t *testing.T) {
	for _, reason := range []string{runner.OfferRunning, runner.OfferUnreadable, runner.OfferNoRecord, runner.OfferUndone, runner.OfferNothingKept,
		runner.OfferRestLost, runner.OfferNothingDeleted, runner.OfferRetry, runner.OfferPurged, runner.OfferUnknown, runner.OfferPossible, runner.OfferInterrupted} {
		if why := offerWhy(runner.UndoOffer{Reason: reason}, runner.RunDoc{}); why == "" || strings.HasPrefix(why, "[") {
			t.Errorf("reason %s: %q", reason, why)
		}
	}
}

// TestRunStateRecordGone: a run whose record was written is unreadable when the record can no
// longer be read (its table removed), not a run that recorded nothing; nothing is offered.
func TestRunStateRecordGone(t *testing.T) {
	f := newFixture(t, "tables:\n  - {id: a, path: TABLES/a, policy: {trash: true, inspectEvery: off}}\n", nil, nil)
	id := startRun(t, f, "a")
	if err := os.RemoveAll(filepath.Join(f.dir, "a")); err != nil {
		t.Fatal(err)
	}
	r := getRun(t, f, id)
	if a, why := offer(r); r["state"] != run.StateUnreadable || a != "" || why != runner.OfferUnreadable {
		t.Errorf("run of a removed table: %v; offer %q %q", r, a, why)
	}
}

// TestPurgedRunEverywhere (issue 36, item 1): a run whose trash was purged offered an undo in
// the API and on its page unless this service's own window purged it (it guessed from its
// last purge), and the undo then found nothing. The purge keeps a note beside the run's
// record, by this service's window or by deltavacuum trash purge (the library) alike, and the
// API reads the run's state from it: cannot be undone, since when; an undo is refused (409)
// and changes nothing.
func TestPurgedRunEverywhere(t *testing.T) {
	f := newFixture(t, "tables:\n  - {id: a, path: TABLES/a, policy: {trash: true, undoWindow: 168h, inspectEvery: off}}\n"+
		"  - {id: b, path: TABLES/b, policy: {trash: true, inspectEvery: off}}\n", nil, nil)
	ctx := context.Background()
	ra, rb := startRun(t, f, "a"), startRun(t, f, "b")
	for _, id := range []string{ra, rb} {
		if a, why := offer(getRun(t, f, id)); a != "undo" || why != runner.OfferPossible {
			t.Fatalf("run %s before any purge: offer %q %q", id, a, why)
		}
	}
	// a: the service's window; b: deltavacuum trash purge, outside the service.
	f.clock.set(t0.Add(169 * time.Hour))
	f.srv.Tick(ctx)
	f.srv.Wait()
	purgeAt := t0.Add(170 * time.Hour)
	tb, err := deltavacuum.Open(ctx, filepath.Join(f.dir, "b"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tb.PurgeTrash(ctx, run.DefaultTrash, undo.PurgeOptions{Now: purgeAt}); err != nil {
		t.Fatal(err)
	}
	for id, at := range map[string]time.Time{ra: t0.Add(169 * time.Hour), rb: purgeAt} {
		r := getRun(t, f, id)
		a, why := offer(r)
		u, _ := r["undo"].(map[string]any)
		p, _ := r["purged"].(map[string]any)
		if a != "" || why != runner.OfferPurged || u["possible"] != "no" || p == nil || p["at"] != at.UTC().Format(time.RFC3339) {
			t.Errorf("run %s after its trash was purged: offer %q %q, undo %v, purged %v", id, a, why, u, p)
		}
		if w, _ := r["undoOffer"].(map[string]any)["why"].(string); !strings.Contains(w, "its trash was purged on "+at.UTC().Format("2006-01-02 15:04:05")) {
			t.Errorf("run %s: the offer says %q", id, w)
		}
		if !strings.Contains(r["stateDetail"].(string), "its trash was purged on") {
			t.Errorf("run %s: detail %q", id, r["stateDetail"])
		}
		code, body := f.do(t, "POST", "/api/runs/"+id+"/undo", `{"dryRun": true}`)
		if code != 409 || !strings.Contains(body["error"].(string), "its trash was purged on") || strings.Contains(body["error"].(string), "_deltavacuum/trash/") {
			t.Errorf("undo of run %s: %d %v, want 409 saying its trash was purged", id, code, body)
		}
	}
}

// TestRunOutcomeFollowsTheRecord (issue 33): the service keeps no status, figures or end of a
// run of its own; the API, the runs lists and the metrics read them from the table's run
// record. A record changed behind the service's back (here: rewritten FAILED, with other
// figures) is what the service says at once. The builds before kept a second status in the
// state database, and went on saying COMPLETED.
func TestRunOutcomeFollowsTheRecord(t *testing.T) {
	f := newFixture(t, "tables:\n  - {id: a, path: TABLES/a, policy: {trash: true, inspectEvery: off}}\n", nil, nil)
	ctx := context.Background()
	id := startRun(t, f, "a")
	r := getRun(t, f, id)
	figs := r["figures"].(map[string]any)
	if r["status"] != run.StatusCompleted || figs["numDeletedFiles"].(float64) != 2 {
		t.Fatalf("after the run: %v", r)
	}
	store, err := local.New(filepath.Join(f.dir, "a"))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := run.ReadRecord(ctx, store, id)
	if err != nil {
		t.Fatal(err)
	}
	ended := t0.Add(time.Hour)
	rec.Status, rec.FinishedAt, rec.NumFiles, rec.Bytes = run.StatusFailed, &ended, 1, 3
	rec.Files = rec.Files[:1]
	if err := run.WriteRecord(ctx, store, rec); err != nil {
		t.Fatal(err)
	}
	r = getRun(t, f, id)
	figs = r["figures"].(map[string]any)
	if r["status"] != run.StatusFailed || r["state"] != run.StateFailed || r["ended"] != ended.UTC().Format(time.RFC3339) ||
		figs["numDeletedFiles"].(float64) != 1 || figs["sizeOfDeletedData"].(float64) != 3 {
		t.Errorf("after the record was rewritten FAILED with 1 file of 3 B: %v", r)
	}
	for _, d := range f.runs(t, "a", 10) {
		if d.ID == id && (d.Status != run.StatusFailed || d.Figures.NumDeletedFiles != 1) {
			t.Errorf("the table's runs say %s with %d files", d.Status, d.Figures.NumDeletedFiles)
		}
	}
	if lr := lastRunOf(t, f, "a"); lr["status"] != run.StatusFailed {
		t.Errorf("GET /api/tables, last run: %v", lr)
	}
	// Nothing of it is in the state database: its row is what the service was asked.
	sr, err := f.db.Run(ctx, id)
	if err != nil || sr.RecordID != id || sr.Refusal != "" {
		t.Errorf("the state database's run: %+v %v", sr, err)
	}
}
