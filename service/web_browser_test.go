package service

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/deltavacuum/deltavacuum"
	"github.com/deltavacuum/deltavacuum/service/tables"
)

// The web page in a real browser: headless Chromium (Debian's chromium package) driven by
// chromedp, against the service on 127.0.0.1 over a temporary local table.

// chromium returns the browser to drive, skipping the test without one, except in CI
// (CI=true), where a missing browser fails it: scripts/test.sh installs it.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium-headless-shell", "chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no Chromium found (chromium-headless-shell, chromium): the browser tests need Debian's chromium package (apt-get install -y chromium; scripts/test.sh installs it when run as root)"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// artifacts is the folder screenshots are saved in: $DELTAVACUUM_ARTIFACTS/browser when set
// (scripts/test.sh sets .artifacts/ in the checkout), else a temporary one.
func artifacts(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if a := os.Getenv("DELTAVACUUM_ARTIFACTS"); a != "" {
		dir = filepath.Join(a, "browser")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// browser is a headless Chromium tab.
type browser struct {
	t    *testing.T
	ctx  context.Context
	dir  string
	base string
}

func newBrowser(t *testing.T, base string) *browser {
	t.Helper()
	return newBrowserIn(t, base, "")
}

// newBrowserIn is newBrowser whose Accept-Language is lang ("": Chromium's own, English).
func newBrowserIn(t *testing.T, base, lang string) *browser {
	t.Helper()
	// The profile is not t.TempDir(): Chromium's helper processes may still write to it
	// after the browser has exited, which failed the test in TempDir's cleanup. It is
	// removed after the browser (cleanups run last first), again while the helpers still
	// write into it, for up to ten seconds (a profile left behind is one more folder in the
	// temporary directory, not a failure).
	profile, err := os.MkdirTemp("", "deltavacuum-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeProfile(profile, 10*time.Second) })
	// Chromium's own temporary files (the org.chromium.Chromium.* folder of its singleton
	// socket, left behind when the browser is stopped rather than closed) go into the
	// profile too, so that they are removed with it.
	tmp := filepath.Join(profile, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.Env("TMPDIR="+tmp),
		chromedp.ExecPath(chromium(t)),
		chromedp.NoSandbox, // containers and CI run as root
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1280, 900),
	)
	if lang != "" {
		opts = append(opts, chromedp.Flag("accept-lang", lang), chromedp.Flag("lang", lang))
	}
	// A deadline against a hung browser only: every step waits for a state of the page.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(acancel)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(bcancel)
	b := &browser{t: t, ctx: bctx, dir: artifacts(t), base: base}
	b.run(chromedp.EmulateViewport(1280, 900))
	return b
}

// removeProfile removes a browser profile folder, trying again while what Chromium's helpers
// still write makes it come back, until it stays gone or within is over.
func removeProfile(dir string, within time.Duration) {
	deadline := time.Now().Add(within)
	for {
		err := os.RemoveAll(dir)
		if _, statErr := os.Lstat(dir); err == nil && os.IsNotExist(statErr) || time.Now().After(deadline) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (b *browser) run(actions ...chromedp.Action) {
	b.t.Helper()
	if err := chromedp.Run(b.ctx, actions...); err != nil {
		var loc string
		_ = chromedp.Run(b.ctx, chromedp.Location(&loc))
		b.shot("failure")
		b.t.Fatalf("browser at %s: %v", loc, err)
	}
}

// text is the text of the first element sel matches, once it is visible.
func (b *browser) text(sel string) string {
	b.t.Helper()
	var s string
	b.run(chromedp.WaitVisible(sel, chromedp.ByQuery), chromedp.Text(sel, &s, chromedp.ByQuery))
	return s
}

// shot saves a full-page screenshot at the desktop width and at a phone's.
func (b *browser) shot(name string) {
	b.t.Helper()
	for _, w := range []struct {
		name string
		w, h int64
		m    bool
	}{{"desktop", 1280, 900, false}, {"phone", 390, 844, true}} {
		var png []byte
		emulate := chromedp.EmulateViewport(w.w, w.h)
		if w.m {
			emulate = chromedp.EmulateViewport(w.w, w.h, chromedp.EmulateScale(2), chromedp.EmulateMobile)
		}
		if err := chromedp.Run(b.ctx, emulate, chromedp.FullScreenshot(&png, 100)); err != nil {
			b.t.Logf("screenshot %s: %v", name, err)
			continue
		}
		p := filepath.Join(b.dir, b.t.Name()+"-"+name+"-"+w.name+".png")
		p = filepath.Join(filepath.Dir(p), strings.ReplaceAll(filepath.Base(p), "/", "_"))
		if err := os.WriteFile(p, png, 0o644); err != nil {
			b.t.Fatal(err)
		}
	}
	_ = chromedp.Run(b.ctx, chromedp.EmulateViewport(1280, 900))
}

// timesOnOneLine checks, at a phone's width, that no time stamp of the page breaks across
// lines (a <time> that wraps has more than one box).
func (b *browser) timesOnOneLine() {
	b.t.Helper()
	var broken []string
	b.run(chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile),
		chromedp.Evaluate(`Array.from(document.querySelectorAll("time")).filter(e => e.getClientRects().length > 1).map(e => e.textContent)`, &broken),
		chromedp.EmulateViewport(1280, 900))
	if len(broken) > 0 {
		b.t.Errorf("time stamps broken across lines at 390 px: %q", broken)
	}
}

// gatedMover holds the moves into the trash (a run with trash: true moves, not deletes)
// until released, as gatedStore holds deletes.
type gatedMover struct{ *gatedStore }

func (g gatedMover) Move(ctx context.Context, from, to string) error {
	if strings.HasPrefix(to, "_deltavacuum/trash/") {
		g.once.Do(func() { close(g.entered) })
		<-g.release
	}
	return g.Store.Move(ctx, from, to)
}

// nav opens path and waits until the page's script is ready (its buttons work).
func (b *browser) nav(path string) {
	b.t.Helper()
	b.run(chromedp.Navigate(b.base+path), b.ready())
}

// ready waits for the page's script to have set up its buttons.
func (b *browser) ready() chromedp.Action {
	return chromedp.WaitVisible(`body[data-ready="1"]`, chromedp.ByQuery)
}

// attr is the attribute name of the first element sel matches, once it is there.
func (b *browser) attr(sel, name string) string {
	b.t.Helper()
	var v string
	b.run(chromedp.WaitReady(sel, chromedp.ByQuery), chromedp.AttributeValue(sel, name, &v, nil, chromedp.ByQuery))
	return v
}

// has reports whether sel matches an element now.
func (b *browser) has(sel string) bool {
	b.t.Helper()
	var n int
	b.run(chromedp.Evaluate(`document.querySelectorAll(`+strconv.Quote(sel)+`).length`, &n))
	return n > 0
}

// TestBrowserPreviewRunUndo: the tables page, the table page, the preview, Run now with the
// run's live progress and its result, the files moved to the trash, then the undo (a dry run
// first) and the files back.
func TestBrowserPreviewRunUndo(t *testing.T) {
	f := newFixture(t, "tables:\n  - {id: a, path: TABLES/a, policy: {trash: true, retention: merge-heavy-fact, retentionCheck: disabled}}\n", nil, nil)
	a := filepath.Join(f.dir, "a")
	manyStray(t, a, 10)
	g := gate(t, f)
	mover := gatedMover{g}
	f.srv.tables.SetOpenHook(func(context.Context, *tables.Table) (*deltavacuum.Table, error) {
		return deltavacuum.OpenStore(mover), nil
	})
	if code, body := f.do(t, "GET", "/api/tables/a/inspect", ""); code != 200 {
		t.Fatalf("inspect: %d %v", code, body)
	}
	b := newBrowser(t, f.http.URL)

	b.nav("/")
	if got := b.text(`#tables tr[data-table="a"] td[data-label="Reclaimable now"]`); !strings.Contains(got, "12 files") {
		t.Errorf("tables page, reclaimable: %q", got)
	}
	b.shot("tables")
	b.run(chromedp.Click(`#tables a[href="/tables/a"]`, chromedp.ByQuery), b.ready(), chromedp.WaitVisible(`#bytes-chart svg`, chromedp.ByQuery))
	if got := b.text("#whatif"); !strings.Contains(got, "merge-heavy-fact") && !strings.Contains(got, "72 h") {
		t.Errorf("what-if table: %q", got)
	}
	b.shot("table")

	b.run(chromedp.Click("#preview", chromedp.ByQuery), chromedp.WaitVisible("#run-now", chromedp.ByQuery), b.ready())
	if got := b.attr("#summary", "data-files"); got != "12" {
		t.Errorf("the preview deletes %q files, want 12", got)
	}
	if got := b.text("#summary"); !strings.Contains(got, "moves 12 files") {
		t.Errorf("the preview of a trashed run: %q", got)
	}
	if got := b.text("#files"); !strings.Contains(got, "stray-00003.parquet") || !strings.Contains(got, "no commit names it") || !strings.Contains(got, "old.parquet") || strings.Contains(got, "untracked") {
		t.Errorf("the preview's files: %q", got)
	}
	b.shot("preview")

	b.run(chromedp.Click("#run-now", chromedp.ByQuery), chromedp.WaitVisible(`#run[data-phase="deleting"]`, chromedp.ByQuery))
	if got := b.text("#run-counts"); !strings.Contains(got, "of 12 files moved to the trash") {
		t.Errorf("progress: %q", got)
	}
	b.shot("run-progress")
	close(g.release)
	b.run(chromedp.WaitVisible(`#run[data-state="completed"]`, chromedp.ByQuery), chromedp.WaitVisible("#undo-dry", chromedp.ByQuery), b.ready())
	if got := b.text("#run-counts"); !strings.Contains(got, "12 files moved to the trash") {
		t.Errorf("result: %q", got)
	}
	b.shot("run-completed")
	f.srv.Wait()
	if left := countStray(t, a); left != 0 || exists(t, filepath.Join(a, "old.parquet")) || !exists(t, filepath.Join(a, "live.parquet")) {
		t.Fatalf("after the run: %d stray files left, old.parquet there: %v", left, exists(t, filepath.Join(a, "old.parquet")))
	}

	b.run(chromedp.Click("#undo-dry", chromedp.ByQuery), chromedp.WaitVisible(`#undo[data-undo="dry"]`, chromedp.ByQuery), b.ready())
	if got := b.text("#undo-summary"); !strings.Contains(got, "would restore 12 files") {
		t.Errorf("undo dry run: %q", got)
	}
	if got := b.text("#undo-run"); got != "Restore 12 files" {
		t.Errorf("the restore button says %q", got)
	}
	if countStray(t, a) != 0 {
		t.Fatal("the undo's dry run restored files")
	}
	b.shot("undo-dry-run")
	b.run(chromedp.Click("#undo-run", chromedp.ByQuery), chromedp.WaitVisible(`#run[data-state="undone"]`, chromedp.ByQuery), b.ready())
	if got := b.text("#last-undo-summary"); !strings.Contains(got, "restored 12 files") {
		t.Errorf("undo: %q", got)
	}
	if b.has("#undo-dry") || b.has("#undo-run") {
		t.Error("the page of an undone run offers an undo")
	}
	b.shot("undo-done")
	if countStray(t, a) != 10 || !exists(t, filepath.Join(a, "old.parquet")) {
		t.Errorf("after the undo: %d stray files, old.parquet there: %v", countStray(t, a), exists(t, filepath.Join(a, "old.parquet")))
	}
	// The history shows the run's VACUUM START and END.
	f.srv.Wait()
	b.nav("/tables/a")
	if got := b.text("#history tr.vacuum"); !strings.Contains(got, "VACUUM END") {
		t.Errorf("history: %q", got)
	}
	b.shot("table-after")
}

// TestBrowserTableMoved: a file added between the preview and Run now: the run deletes
// nothing, and the page says so and shows the new preview, which counts the new file.
func TestBrowserTableMoved(t *testing.T) {
	f := newFixture(t, "tables:\n  - {id: a, path: TABLES/a}\n", nil, nil)
	a := filepath.Join(f.dir, "a")
	b := newBrowser(t, f.http.URL)
	b.nav("/tables/a")
	b.run(chromedp.Click("#preview", chromedp.ByQuery), chromedp.WaitVisible("#run-now", chromedp.ByQuery), b.ready())
	if got := b.attr("#summary", "data-files"); got != "2" {
		t.Fatalf("the preview deletes %q files, want 2", got)
	}
	var first string
	b.run(chromedp.AttributeValue("#run-now", "data-plan", &first, nil, chromedp.ByQuery))
	manyStray(t, a, 1) // the table moves
	b.run(chromedp.Click("#run-now", chromedp.ByQuery), chromedp.WaitVisible("#moved", chromedp.ByQuery), b.ready())
	if got := b.text("#moved"); !strings.Contains(got, "deleted nothing") {
		t.Errorf("banner: %q", got)
	}
	if got := b.attr("#summary", "data-files"); got != "3" {
		t.Errorf("the new preview deletes %q files, want 3", got)
	}
	var second string
	b.run(chromedp.AttributeValue("#run-now", "data-plan", &second, nil, chromedp.ByQuery))
	if second == first || second == "" {
		t.Errorf("the new preview has the old plan %s", first)
	}
	b.shot("moved")
	f.srv.Wait()
	if !exists(t, filepath.Join(a, "old.parquet")) || !exists(t, filepath.Join(a, "stray.parquet")) || countStray(t, a) != 1 {
		t.Fatal("a run whose table moved deleted files")
	}
	runs := f.runs(t, "a", 10)
	if len(runs) != 1 || runs[0].Status != "FAILED" || !strings.Contains(runs[0].Error, "plan changed") {
		t.Errorf("runs: %+v", runs)
	}
}

// TestBrowserLogin: with a token, the page sends to the login form, which offers no logout
// before anyone logged in; a wrong token is refused there; the right one sets the cookie and
// opens the page asked for, whose requests (a preview) then pass, and which offers to log
// out; logging out sends back to the form.
func TestBrowserLogin(t *testing.T) {
	const token = "br0wser-t0ken-0123456789"
	f := newFixture(t, "listen: 127.0.0.1:0\ntoken: ${DV_TOKEN}\ntables:\n  - {id: a, path: TABLES/a}\n", map[string]string{"DV_TOKEN": token}, nil)
	b := newBrowser(t, f.http.URL)
	b.run(chromedp.Navigate(b.base+"/tables/a"), chromedp.WaitVisible("#token", chromedp.ByQuery), b.ready())
	if b.has("#logout") {
		t.Error("the login page offers to log out before anyone logged in")
	}
	b.run(chromedp.SendKeys("#token", "not-the-token", chromedp.ByQuery), chromedp.Click("#login-submit", chromedp.ByQuery))
	if got := b.text("#login-error"); !strings.Contains(got, "not the token") {
		t.Errorf("a wrong token: %q", got)
	}
	b.shot("login")
	var html string
	b.run(chromedp.SetValue("#token", token, chromedp.ByQuery), chromedp.Click("#login-submit", chromedp.ByQuery),
		chromedp.WaitVisible("#preview", chromedp.ByQuery), b.ready(), chromedp.OuterHTML("html", &html, chromedp.ByQuery))
	if strings.Contains(html, token) {
		t.Error("the token is in the page")
	}
	b.run(chromedp.Click("#preview", chromedp.ByQuery), chromedp.WaitVisible("#run-now", chromedp.ByQuery), b.ready())
	b.run(chromedp.Click("#logout", chromedp.ByQuery), chromedp.WaitVisible("#token", chromedp.ByQuery), b.ready())
	if b.has("#logout") {
		t.Error("the login page offers to log out after the logout")
	}
	b.run(chromedp.Navigate(b.base+"/"), chromedp.WaitVisible("#token", chromedp.ByQuery))
}
