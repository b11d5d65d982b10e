package service

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/service/runner"

	"github.com/chromedp/chromedp"

	"github.com/deltavacuum/deltavacuum"
	"github.com/deltavacuum/deltavacuum/run"
	"github.com/deltavacuum/deltavacuum/service/tables"
	"github.com/deltavacuum/deltavacuum/undo"
)

// The pages in each state a run and a table can be in (issue 27): after a run, after an
// undo, a trashed run, a broken table; and the runs of every table, and a preview at a
// one-off retention. Each in a real Chromium against the service on 127.0.0.1 over local
// tables, with screenshots at 1280 and 390 px (artifacts).

// TestBrowserAfterRun: after a run that deleted its files for good (local disk, no trash),
// the run page says completed, what it deleted, and that it cannot be undone and why, with no
// Undo button; the table page's runs and the tables list say completed, and the table was
// inspected after the run (nothing reclaimable now).
func TestBrowserAfterRun(t *testing.T) {
	f := newFixture(t, "tables:\n  - {id: a, path: TABLES/a, policy: {inspectEvery: off}}\n", nil, nil)
	b := newBrowser(t, f.http.URL)
	b.nav("/tables/a")
	b.run(chromedp.Click("#preview", chromedp.ByQuery), chromedp.WaitVisible("#run-now", chromedp.ByQuery), b.ready())
	b.run(chromedp.Click("#run-now", chromedp.ByQuery), chromedp.WaitVisible(`#run[data-state="completed"]`, chromedp.ByQuery), b.ready())
	f.srv.Wait()
	if got := b.text("#run-counts"); !strings.Contains(got, "2 files deleted") {
		t.Errorf("counts: %q", got)
	}
	if got := b.text("#undo-why"); !strings.Contains(got, "cannot be undone") || !strings.Contains(got, "trash: true") {
		t.Errorf("why no undo: %q", got)
	}
	if b.has("#undo-dry") {
		t.Error("the run page offers to undo a run nothing can undo")
	}
	var id string
	b.run(chromedp.AttributeValue("#run", "data-run", &id, nil, chromedp.ByQuery))
	if got := b.text("h1"); got != "Run "+id {
		t.Errorf("heading %q: the run's one id is %s", got, id)
	}
	b.shot("run")
	b.nav("/tables/a")
	if got := b.attr(`#runs tr[data-run="`+id+`"]`, "data-state"); got != "completed" {
		t.Errorf("the table page's run: %q", got)
	}
	if got := b.text("#figures"); !strings.Contains(got, "reclaimable now 0 B (0 files)") {
		t.Errorf("the table's figures after the run: %q", got)
	}
	b.shot("table")
	b.nav("/")
	if got := b.text(`#tables tr[data-table="a"] td[data-label="Last run"]`); !strings.Contains(got, "completed") {
		t.Errorf("the tables list's last run: %q", got)
	}
	b.timesOnOneLine()
	b.shot("tables")
}

// TestBrowserAfterUndo: after an undo that brought every file back, the run page says undone,
// offers no undo any more, and lists what came back; the table was inspected after the undo,
// so the tables list and the table page show the files reclaimable again (not "reclaimable
// now 0 B") and the run undone.
func TestBrowserAfterUndo(t *testing.T) {
	f := newFixture(t, "tables:\n  - {id: a, path: TABLES/a, policy: {trash: true, inspectEvery: off}}\n", nil, nil)
	a := filepath.Join(f.dir, "a")
	id := startRun(t, f, "a")
	b := newBrowser(t, f.http.URL)
	b.nav("/")
	if got := b.text(`#tables tr[data-table="a"] td[data-label="Reclaimable now"]`); !strings.Contains(got, "0 files") {
		t.Errorf("after the run, reclaimable: %q", got)
	}
	f.clock.set(t0.Add(10 * time.Second))
	b.nav("/runs/" + id)
	b.run(chromedp.Click("#undo-dry", chromedp.ByQuery), chromedp.WaitVisible(`#undo[data-undo="dry"]`, chromedp.ByQuery), b.ready())
	b.run(chromedp.Click("#undo-run", chromedp.ByQuery), chromedp.WaitVisible(`#run[data-state="undone"]`, chromedp.ByQuery), b.ready())
	f.srv.Wait()
	if !exists(t, filepath.Join(a, "old.parquet")) || !exists(t, filepath.Join(a, "stray.parquet")) {
		t.Fatal("the files are not back")
	}
	if got := b.text("#run-detail"); !strings.Contains(got, "all 2 files back") {
		t.Errorf("detail: %q", got)
	}
	if b.has("#undo-dry") || b.has("#undo-run") {
		t.Error("the page of an undone run offers an undo")
	}
	// Issue 36, item 4: one answer everywhere; the page no longer says the trash keeps what
	// the run deleted once it is all back.
	if b.has("#undoability") {
		t.Errorf("the page of an undone run says %q", b.text("#undoability"))
	}
	if got := b.text("#undo-why"); !strings.Contains(got, "Undone: every file it deleted is back") {
		t.Errorf("why no undo: %q", got)
	}
	b.timesOnOneLine()
	b.shot("run")
	b.nav("/")
	if got := b.text(`#tables tr[data-table="a"] td[data-label="Reclaimable now"]`); !strings.Contains(got, "2 files") {
		t.Errorf("after the undo, the tables list says reclaimable: %q (the undo brought 2 files back)", got)
	}
	if got := b.text(`#tables tr[data-table="a"] td[data-label="Last run"]`); !strings.Contains(got, "undone") {
		t.Errorf("the tables list's last run: %q", got)
	}
	b.shot("tables")
	b.nav("/tables/a")
	if got := b.text("#figures"); !strings.Contains(got, "reclaimable now 8 B (2 files)") {
		t.Errorf("the table page's figures: %q", got)
	}
	if got := b.attr(`#runs tr[data-run="`+id+`"]`, "data-state"); got != "undone" {
		t.Errorf("the table page's run: %q", got)
	}
	b.shot("table")
}

// TestBrowserTrashedRun: a run whose policy moves files to the trash says "moved to the
// trash" in the preview, the run page and the runs list, and offers the undo from the trash.
func TestBrowserTrashedRun(t *testing.T) {
	f := newFixture(t, "tables:\n  - {id: a, path: TABLES/a, policy: {trash: true, inspectEvery: off}}\n", nil, nil)
	b := newBrowser(t, f.http.URL)
	b.nav("/tables/a")
	b.run(chromedp.Click("#preview", chromedp.ByQuery), chromedp.WaitVisible("#run-now", chromedp.ByQuery), b.ready())
	if got := b.text("#summary"); !strings.Contains(got, "moves 2 files (8 B) to the trash") {
		t.Errorf("the preview: %q", got)
	}
	b.shot("preview")
	b.run(chromedp.Click("#run-now", chromedp.ByQuery), chromedp.WaitVisible(`#run[data-state="completed"]`, chromedp.ByQuery), b.ready())
	f.srv.Wait()
	if got := b.text("#run-counts"); !strings.Contains(got, "2 files moved to the trash") || strings.Contains(got, "deleted") {
		t.Errorf("counts: %q", got)
	}
	if got := b.text("#undoability"); !strings.Contains(got, "the trash keeps it") {
		t.Errorf("undoability: %q", got)
	}
	if !b.has("#undo-dry") {
		t.Error("no undo offered for a trashed run")
	}
	b.shot("run")
	b.nav("/runs")
	if got := b.text("#runs tbody tr"); !strings.Contains(got, "moved to the trash") || !strings.Contains(got, "can be undone (trash)") {
		t.Errorf("the runs list: %q", got)
	}
	b.shot("runs")
}

// TestBrowserPurgedRun (issue 36, item 1): a trashed run whose trash deltavacuum trash purge
// emptied (outside the service) said "What it deletes can come back: the trash keeps it" and
// offered Undo. Now its page, the runs list and the table page say it cannot be undone, since
// when, in both languages, and offer nothing.
func TestBrowserPurgedRun(t *testing.T) {
	f := newFixture(t, "tables:\n  - {id: a, path: TABLES/a, policy: {trash: true, inspectEvery: off}}\n", nil, nil)
	ctx := context.Background()
	id := startRun(t, f, "a")
	tb, err := deltavacuum.Open(ctx, filepath.Join(f.dir, "a"))
	if err != nil {
		t.Fatal(err)
	}
	at := t0.Add(2 * time.Hour)
	if _, err := tb.PurgeTrash(ctx, run.DefaultTrash, undo.PurgeOptions{Now: at}); err != nil {
		t.Fatal(err)
	}
	for lang, want := range map[string]string{
		"en":    "It cannot be undone any more: its trash was purged on " + at.Format("2006-01-02 15:04:05") + " UTC.",
		"pt-BR": "Não pode mais ser desfeita: a sua lixeira foi esvaziada em " + at.Format("02/01/2006 15:04:05") + " UTC.",
	} {
		b := newBrowserIn(t, f.http.URL, lang)
		b.nav("/runs/" + id)
		if got := b.text("#undo-why"); got != want {
			t.Errorf("%s: why no undo: %q, want %q", lang, got, want)
		}
		if b.has("#undo-dry") || b.has("#undoability") {
			t.Errorf("%s: the page of a purged run offers an undo or says what the trash keeps", lang)
		}
		if got := b.attr("#undo", "data-reason"); got != runner.OfferPurged {
			t.Errorf("%s: reason %q", lang, got)
		}
		b.shot("run-" + lang)
		b.nav("/runs")
		if got, col := b.text(`#runs tr[data-run="`+id+`"] td[data-label="`+localeByTag(lang).text("col.undo")+`"]`), localeByTag(lang).text("undocol.purged"); got != col {
			t.Errorf("%s: the runs list's undo column %q, want %q", lang, got, col)
		}
	}
	// The dry run the page's link would make is refused, and says why.
	b := newBrowser(t, f.http.URL)
	b.nav("/runs/" + id + "?undo=dry")
	if got := b.text("body"); !strings.Contains(got, "its trash was purged on") || strings.Contains(got, "no such file") {
		t.Errorf("the dry run of the undo of a purged run: %q", got)
	}
}

// heldRecord holds the first write of a run record until released (the run is planned, and
// the table holds no record of it yet), then the moves into the trash as gatedMover does.
type heldRecord struct {
	gatedMover
	once             sync.Once
	entered, release chan struct{}
}

func (h *heldRecord) Put(ctx context.Context, key string, data []byte) error {
	if strings.HasPrefix(key, run.RunsDir) && strings.HasSuffix(key, ".jsonl.gz") {
		h.once.Do(func() { close(h.entered) })
		<-h.release
	}
	return h.gatedMover.Put(ctx, key, data)
}

// TestBrowserLiveRunDetail (issue 36, item 6): the live run page kept "Accepted: it is
// planning…" while the run deleted (66 %): its script updated the state, not the detail under
// it. The page is shown while the run is planned, then the run records itself and deletes.
func TestBrowserLiveRunDetail(t *testing.T) {
	f := newFixture(t, "tables:\n  - {id: a, path: TABLES/a, policy: {trash: true, inspectEvery: off}}\n", nil, nil)
	g := gate(t, f)
	h := &heldRecord{gatedMover: gatedMover{g}, entered: make(chan struct{}), release: make(chan struct{})}
	f.srv.tables.SetOpenHook(func(context.Context, *tables.Table) (*deltavacuum.Table, error) { return deltavacuum.OpenStore(h), nil })
	b := newBrowser(t, f.http.URL)
	b.nav("/tables/a")
	b.run(chromedp.Click("#preview", chromedp.ByQuery), chromedp.WaitVisible("#run-now", chromedp.ByQuery), b.ready())
	b.run(chromedp.Click("#run-now", chromedp.ByQuery), chromedp.WaitVisible(`#run[data-state="planned"]`, chromedp.ByQuery))
	<-h.entered
	if got := b.text("#run-detail"); !strings.HasPrefix(got, "Accepted: it is planning") {
		t.Errorf("the detail of a planned run: %q", got)
	}
	close(h.release)
	b.run(chromedp.WaitVisible(`#run[data-phase="deleting"]`, chromedp.ByQuery), chromedp.WaitVisible(`#run[data-state="running"]`, chromedp.ByQuery))
	if got := b.text("#run-detail"); got != "In progress." {
		t.Errorf("the detail of a run that deletes: %q", got)
	}
	b.shot("deleting")
	close(g.release)
	b.run(chromedp.WaitVisible(`#run[data-state="completed"]`, chromedp.ByQuery), b.ready())
	f.srv.Wait()
	if got := b.text("#run-detail"); got != "Completed." {
		t.Errorf("the detail of the ended run: %q", got)
	}
}

// TestBrowserBrokenTable: a table whose location does not exist and one that is not a Delta
// table are listed broken with the reason, not "not inspected yet" and idle; the table page
// says so at its top.
func TestBrowserBrokenTable(t *testing.T) {
	f := newFixture(t, "tables:\n  - {id: a, path: TABLES/a}\n  - {id: gone, path: TABLES/gone}\n  - {id: plain, path: TABLES/plain}\n", nil, nil)
	breakTables(t, f)
	f.srv.Tick(context.Background())
	f.srv.Wait()
	b := newBrowser(t, f.http.URL)
	b.nav("/")
	for id, want := range map[string]string{"gone": "does not exist", "plain": "is not a Delta table"} {
		row := `#tables tr[data-table="` + id + `"]`
		if got := b.attr(row, "data-health"); got != "broken" {
			t.Errorf("%s: health %q", id, got)
		}
		got := b.text(row)
		if !strings.Contains(got, "Broken: ") || !strings.Contains(got, want) || !strings.Contains(got, "broken") ||
			strings.Contains(got, "not inspected yet") || strings.Contains(got, "idle") {
			t.Errorf("%s's row: %q", id, got)
		}
	}
	if got := b.attr(`#tables tr[data-table="a"]`, "data-health"); got != "ok" {
		t.Errorf("a: health %q", got)
	}
	b.timesOnOneLine()
	b.shot("tables")
	b.nav("/tables/gone")
	if got := b.text("#broken"); !strings.Contains(got, "does not exist") {
		t.Errorf("the table page's banner: %q", got)
	}
	// Issue 36, item 6: the service's words (its configuration), not the command line's
	// (--warehouse), said once on the page, not in the banner and again under the history.
	page := b.text("body")
	if strings.Contains(page, "--warehouse") || strings.Contains(page, "--catalog") || !strings.Contains(page, "check its path in the service's configuration") {
		t.Errorf("the broken table's page gives the wrong advice:\n%s", page)
	}
	if n := strings.Count(page, "does not exist"); n != 1 {
		t.Errorf("the page says the reason %d times:\n%s", n, page)
	}
	if got := b.text("#history-broken"); !strings.Contains(got, "cannot be read while the table is broken") {
		t.Errorf("the history: %q", got)
	}
	b.shot("table")
	b.nav("/tables/plain")
	if page := b.text("body"); strings.Count(page, "is not a Delta table") != 1 {
		t.Errorf("the page of a folder that is not a table says it %d times:\n%s", strings.Count(page, "is not a Delta table"), page)
	}
}

// TestBrowserRunsPage: the runs of every table, newest first, with their table, state, start,
// duration, files, bytes and undo; a table's link keeps its runs.
func TestBrowserRunsPage(t *testing.T) {
	f := newFixture(t, "tables:\n  - {id: a, path: TABLES/a, policy: {trash: true, inspectEvery: off}}\n  - {id: b, path: TABLES/b, policy: {inspectEvery: off}}\n", nil, nil)
	ra := startRun(t, f, "a")
	f.clock.set(t0.Add(5 * time.Second))
	rb := startRun(t, f, "b")
	b := newBrowser(t, f.http.URL)
	b.nav("/")
	b.run(chromedp.Click(`nav a[href="/runs"]`, chromedp.ByQuery), chromedp.WaitVisible("#runs", chromedp.ByQuery), b.ready())
	var rows []string
	b.run(chromedp.Evaluate(`Array.from(document.querySelectorAll("#runs tbody tr")).map(r => r.dataset.run)`, &rows))
	if len(rows) != 2 || rows[0] != rb || rows[1] != ra {
		t.Errorf("runs %v, want %s then %s", rows, rb, ra)
	}
	var heads []string
	b.run(chromedp.Evaluate(`Array.from(document.querySelectorAll("#runs thead th")).map(h => h.textContent)`, &heads))
	if got := strings.Join(heads, "|"); got != "Run|Table|State|Started|Duration|Files|Bytes|Undo|Trigger" {
		t.Errorf("columns: %s", got)
	}
	b.shot("all")
	b.run(chromedp.Click(`#runs tr[data-run="`+ra+`"] td[data-label="Table"] a`, chromedp.ByQuery), chromedp.WaitVisible("#all-runs", chromedp.ByQuery), b.ready())
	b.run(chromedp.Click("#all-runs", chromedp.ByQuery), chromedp.WaitVisible("#runs", chromedp.ByQuery), b.ready())
	if got := b.text("h1"); got != "Runs of table a" {
		t.Errorf("heading %q", got)
	}
	if b.has(`#runs tr[data-run="` + rb + `"]`) {
		t.Error("the runs of a list b's")
	}
	b.shot("table")
}

// TestBrowserPreviewRetention: the table page's retention field makes a preview at a one-off
// retention, which the preview page says; what the service refuses (not a number, below the
// safety check) is said on the table page, and nothing is previewed.
func TestBrowserPreviewRetention(t *testing.T) {
	f := newFixture(t, "tables:\n  - {id: a, path: TABLES/a, policy: {inspectEvery: off}}\n", nil, nil)
	b := newBrowser(t, f.http.URL)
	b.nav("/tables/a")
	for _, v := range []string{"abc", "-1", "24"} {
		b.run(chromedp.SetValue("#retention", v, chromedp.ByQuery), chromedp.Click("#preview", chromedp.ByQuery), chromedp.WaitVisible("#action-error", chromedp.ByQuery))
		if got := b.text("#action-error"); !strings.Contains(got, "retentionHours") {
			t.Errorf("retention %q: %q", v, got)
		}
		b.run(chromedp.Evaluate(`document.getElementById("action-error").hidden = true; document.getElementById("preview").disabled = false`, nil))
	}
	b.run(chromedp.SetValue("#retention", "24", chromedp.ByQuery), chromedp.Click("#preview", chromedp.ByQuery), chromedp.WaitVisible("#action-error", chromedp.ByQuery))
	b.shot("refused")
	b.run(chromedp.SetValue("#retention", "300", chromedp.ByQuery), chromedp.Click("#preview", chromedp.ByQuery), chromedp.WaitVisible("#oneoff", chromedp.ByQuery), b.ready())
	if got := b.text("#oneoff"); !strings.Contains(got, "300 h") {
		t.Errorf("the one-off banner: %q", got)
	}
	if got := b.attr("#summary", "data-files"); got != "0" {
		t.Errorf("at 300 h the preview deletes %q files, want 0", got)
	}
	b.shot("preview")
}
