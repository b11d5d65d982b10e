package service

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage/local"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// previewDigest previews table id through the API and returns its plan digest.
func previewDigest(t *testing.T, f *fixture, id string) (string, map[string]any) {
	t.Helper()
	code, body := f.do(t, "POST", "/api/tables/"+id+"/preview", "{}")
	if code != 200 {
		t.Fatalf("preview of %s: %d %v", id, code, body)
	}
	d, _ := body["planDigest"].(string)
	if !strings.HasPrefix(d, "plan1-") || body["previewUrl"] != "/tables/"+id+"/previews/"+d {
		t.Fatalf("preview of %s: digest %q, url %v", id, d, body["previewUrl"])
	}
	return d, body
}

// runPlan starts a run of a executing plan and waits for its end.
func runPlan(t *testing.T, f *fixture, plan string) map[string]any {
	t.Helper()
	code, body := f.do(t, "POST", "/api/tables/a/runs", `{"plan": "`+plan+`"}`)
	if code != 202 {
		t.Fatalf("run: %d %v", code, body)
	}
	f.srv.Wait()
	_, run := f.do(t, "GET", "/api/runs/"+body["id"].(string), "")
	return run
}

// TestRunExactlyThePreview: Run now with a preview's digest deletes that plan; when the table
// moved between the preview (a file added, a planned file removed, a commit), the run deletes
// nothing, commits nothing, writes no run record, and ends FAILED saying the plan changed.
func TestRunExactlyThePreview(t *testing.T) {
	moves := map[string]func(t *testing.T, a string){
		"file added": func(t *testing.T, a string) { manyStray(t, a, 1) },
		"planned file removed": func(t *testing.T, a string) {
			if err := os.Remove(filepath.Join(a, "stray.parquet")); err != nil {
				t.Fatal(err)
			}
		},
		"commit": func(t *testing.T, a string) {
			store, _ := local.New(a)
			add := map[string]any{"add": map[string]any{"path": "live.parquet", "size": 4, "modificationTime": t0.UnixMilli(), "dataChange": false}}
			if err := deltalog.WriteCommit(context.Background(), store, 1, []any{add}); err != nil {
				t.Fatal(err)
			}
		},
	}
	for name, move := range moves {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, "tables:\n  - {id: a, path: TABLES/a}\n", nil, nil)
			a := filepath.Join(f.dir, "a")
			plan, _ := previewDigest(t, f, "a")
			move(t, a)
			commits, _ := filepath.Glob(filepath.Join(a, "_delta_log", "*.json"))
			run := runPlan(t, f, plan)
			figs, _ := run["figures"].(map[string]any)
			if run["status"] != "FAILED" || figs["planChanged"] != true || !strings.Contains(run["error"].(string), "nothing was deleted") {
				t.Fatalf("got %v, want FAILED with planChanged", run)
			}
			if !exists(t, filepath.Join(a, "old.parquet")) {
				t.Error("old.parquet was deleted by a run whose plan changed")
			}
			if name != "planned file removed" && !exists(t, filepath.Join(a, "stray.parquet")) {
				t.Error("stray.parquet was deleted by a run whose plan changed")
			}
			if after, _ := filepath.Glob(filepath.Join(a, "_delta_log", "*.json")); len(after) != len(commits) {
				t.Errorf("%d commits after the refused run, %d before", len(after), len(commits))
			}
			if exists(t, filepath.Join(a, "_deltavacuum", "runs")) {
				t.Error("the refused run wrote a run record")
			}
			if tk := openTickets(t, a); len(tk) != 0 {
				t.Errorf("the refused run left its lock ticket open: %+v", tk)
			}
			// The run page's next step: a new preview, which runs.
			plan2, _ := previewDigest(t, f, "a")
			if plan2 == plan {
				t.Fatal("the new preview has the old digest")
			}
			if run := runPlan(t, f, plan2); run["status"] != "COMPLETED" || exists(t, filepath.Join(a, "old.parquet")) {
				t.Errorf("the new preview's run: %v", run)
			}
		})
	}
	t.Run("unchanged", func(t *testing.T) {
		f := newFixture(t, "tables:\n  - {id: a, path: TABLES/a}\n", nil, nil)
		a := filepath.Join(f.dir, "a")
		plan, _ := previewDigest(t, f, "a")
		f.clock.set(t0.Add(30 * time.Second)) // a later clock, the same files
		run := runPlan(t, f, plan)
		if run["status"] != "COMPLETED" || run["figures"].(map[string]any)["planDigest"] != plan {
			t.Fatalf("got %v", run)
		}
		if exists(t, filepath.Join(a, "old.parquet")) || exists(t, filepath.Join(a, "stray.parquet")) || !exists(t, filepath.Join(a, "live.parquet")) {
			t.Error("the previewed plan was not executed exactly")
		}
	})
}

// TestWebHostileParameters: every new parameter refuses what it does not take (400 or 404,
// never a crash, a run or a 500), and a digest of another table runs nothing.
func TestWebHostileParameters(t *testing.T) {
	f := newFixture(t, "tables:\n  - {id: a, path: TABLES/a}\n  - {id: b, path: TABLES/b}\n", nil, nil)
	planB, _ := previewDigest(t, f, "b")
	valid := "plan1-" + strings.Repeat("0", 64)
	bad := []string{"-1", "0", "abc", "1e3", "99999999999999999999", "1.5", " 1", "0x10", "%00"}
	for _, v := range bad {
		for _, p := range []string{
			"/api/tables/a/history?limit=", "/api/tables/a/history?offset=", "/api/tables/a/inspections?limit=",
			"/api/tables/a/runs?limit=", "/api/tables/b/previews/" + planB + "?limit=", "/api/tables/b/previews/" + planB + "?offset=",
			"/tables/b/previews/" + planB + "?page=",
		} {
			if v == "0" && strings.Contains(p, "offset=") {
				continue // offset 0 is the first page
			}
			code, body := f.do(t, "GET", p+v, "")
			if code != 400 {
				t.Errorf("GET %s%s: %d %v, want 400", p, v, code, body)
			}
		}
	}
	for _, p := range []string{"/api/tables/a/history?limit=1&limit=2", "/api/tables/a/history?limit=1001", "/api/tables/a/runs?limit=1001",
		"/api/tables/a/inspections?limit=1001", "/tables/b/previews/" + planB + "?page=2"} {
		if code, body := f.do(t, "GET", p, ""); code != 400 {
			t.Errorf("GET %s: %d %v, want 400", p, code, body)
		}
	}
	for _, d := range []string{"x", "plan1-", strings.ToUpper(planB), planB + "0", "plan1-" + strings.Repeat("g", 64), "..%2F..%2Fetc", "%3Cscript%3E"} {
		for _, p := range []string{"/api/tables/b/previews/" + d, "/tables/b/previews/" + d} {
			if code, body := f.do(t, "GET", p, ""); code != 400 && code != 404 {
				t.Errorf("GET %s: %d %v, want 400 or 404", p, code, body)
			}
		}
	}
	// A digest of the right form that no preview has, and another table's preview.
	for _, p := range []string{"/api/tables/b/previews/" + valid, "/tables/b/previews/" + valid, "/api/tables/a/previews/" + planB, "/tables/a/previews/" + planB} {
		if code, _ := f.do(t, "GET", p, ""); code != 404 {
			t.Errorf("GET %s: %d, want 404", p, code)
		}
	}
	for _, body := range []string{`{"plan": "bogus"}`, `{"plan": 5}`, `{"plan": "` + strings.ToUpper(planB) + `"}`, `{"plan": "` + planB + `", "x": 1}`} {
		if code, resp := f.do(t, "POST", "/api/tables/a/runs", body); code != 400 {
			t.Errorf("run with %s: %d %v, want 400", body, code, resp)
		}
	}
	// b's digest on a: a is not b, the plan differs, nothing is deleted.
	if run := runPlan(t, f, planB); run["status"] != "FAILED" || run["figures"].(map[string]any)["planChanged"] != true {
		t.Errorf("a run of a with b's plan: %v", run)
	}
	if run := runPlan(t, f, valid); run["status"] != "FAILED" {
		t.Errorf("a run with a digest no preview made: %v", run)
	}
	if !exists(t, filepath.Join(f.dir, "a", "old.parquet")) || !exists(t, filepath.Join(f.dir, "a", "stray.parquet")) {
		t.Error("a run with a stale or foreign digest deleted a file")
	}
	for _, id := range []string{"nope", "' OR '1'='1", "%3Cscript%3E", strings.Repeat("x", 5000)} {
		for _, p := range []string{"/api/runs/" + id + "/progress", "/runs/" + id, "/tables/" + id, "/api/tables/" + id + "/history", "/api/tables/" + id + "/inspections", "/api/tables/" + id + "/runs"} {
			if code, body := f.do(t, "GET", p, ""); code != 404 {
				t.Errorf("GET %s: %d %v, want 404", p, code, body)
			}
		}
	}
	// The pages have the API's Host check (DNS rebinding).
	for _, p := range []string{"/", "/tables/a", "/static/app.js", "/login"} {
		if code, _ := f.do(t, "GET", p, "", "Host", "evil.example:8080"); code != 421 {
			t.Errorf("GET %s with a rebound Host: %d, want 421", p, code)
		}
	}
	// The page's moved= names a run only when it is a run of this table.
	_, prev := f.do(t, "GET", "/tables/b/previews/"+planB+"?moved=%3Cscript%3Ealert(1)%3C/script%3E", "")
	if html := prev["text"].(string); strings.Contains(html, "alert(1)") || strings.Contains(html, `id="moved"`) {
		t.Error("the preview page shows a moved= that is not a run of the table")
	}
}

// TestWebPagesEscape: a file path and a table location holding markup are shown as text,
// never as markup, and the pages carry a strict Content-Security-Policy.
func TestWebPagesEscape(t *testing.T) {
	const evil = `x"><img src=1 onerror=alert(1)><script>alert(2)<`
	f := newFixture(t, "tables:\n  - {id: a, path: 'TABLES/"+strings.ReplaceAll(evil, `'`, `''`)+"'}\n", nil, nil)
	dir := filepath.Join(f.dir, evil)
	p := filepath.Join(dir, "<script>alert(3)<.parquet")
	if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := t0.Add(-240 * time.Hour)
	os.Chtimes(p, old, old)
	if code, _ := f.do(t, "GET", "/api/tables/a/inspect", ""); code != 200 {
		t.Fatal("inspect failed")
	}
	plan, _ := previewDigest(t, f, "a")
	for _, page := range []string{"/", "/tables/a", "/tables/a/previews/" + plan, "/tables/%3Cscript%3Ealert(4)%3C", "/runs/%3Cscript%3Ealert(5)%3C"} {
		req, _ := http.NewRequest("GET", f.http.URL+page, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b := make([]byte, 1<<20)
		n, _ := resp.Body.Read(b)
		for n2 := n; n2 > 0; {
			n2, _ = resp.Body.Read(b[n:])
			n += n2
		}
		resp.Body.Close()
		html := string(b[:n])
		if want := 200; strings.Contains(page, "%3C") {
			want = 404
			if resp.StatusCode != want {
				t.Fatalf("GET %s: %d %s", page, resp.StatusCode, html)
			}
		} else if resp.StatusCode != want {
			t.Fatalf("GET %s: %d %s", page, resp.StatusCode, html)
		}
		for _, raw := range []string{"<script>alert", "<img src=1", "onerror=alert(1)>"} {
			if strings.Contains(html, raw) {
				t.Errorf("GET %s renders %q unescaped", page, raw)
			}
		}
		if !strings.Contains(html, "&lt;script&gt;alert(") {
			t.Errorf("GET %s does not show the escaped name", page)
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe") {
			t.Errorf("GET %s: Content-Security-Policy %q", page, csp)
		}
	}
}

// TestWebLogin: with a token, pages send to the login page, the API answers 401; the login
// sets an HttpOnly SameSite=Strict cookie that then authorizes pages and POSTs (which still
// pass the cross-origin check); the token is never in a page; next= goes only to this service.
func TestWebLogin(t *testing.T) {
	const token = "s3cr3t-t0ken-0123456789"
	f := newFixture(t, "listen: 127.0.0.1:0\ntoken: ${DV_TOKEN}\ntables:\n  - {id: a, path: TABLES/a}\n", map[string]string{"DV_TOKEN": token}, nil)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path string, cookie *http.Cookie) *http.Response {
		req, _ := http.NewRequest("GET", f.http.URL+path, nil)
		if cookie != nil {
			req.AddCookie(cookie)
		}
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if resp := get("/tables/a", nil); resp.StatusCode != 303 || resp.Header.Get("Location") != "/login?next="+url.QueryEscape("/tables/a") {
		t.Errorf("a page without login: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp := get("/api/tables", nil); resp.StatusCode != 401 {
		t.Errorf("the API without a token: %d", resp.StatusCode)
	}
	for _, p := range []string{"/login", "/static/app.js", "/static/app.css"} {
		if resp := get(p, nil); resp.StatusCode != 200 {
			t.Errorf("GET %s without login: %d", p, resp.StatusCode)
		}
	}
	if resp := get("/static/../server.go", nil); resp.StatusCode == 200 {
		t.Error("the static files reach outside their folder")
	}
	for _, body := range []string{`{"token": "wrong"}`, `{"token": ""}`, `{}`, `{"token": "` + token + `x"}`} {
		if code, _ := f.do(t, "POST", "/api/login", body); code != 401 {
			t.Errorf("login with %s: %d, want 401", body, code)
		}
	}
	if code, _ := f.do(t, "POST", "/api/login", `{"token": "`+token+`"}`, "Sec-Fetch-Site", "cross-site"); code != 403 {
		t.Errorf("a cross-site login: %d, want 403", code)
	}
	req, _ := http.NewRequest("POST", f.http.URL+"/api/login", strings.NewReader(`{"token": "`+token+`"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var c *http.Cookie
	for _, k := range resp.Cookies() {
		if k.Name == cookieName {
			c = k
		}
	}
	if resp.StatusCode != 200 || c == nil || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" {
		t.Fatalf("login: %d, cookie %+v", resp.StatusCode, c)
	}
	for _, p := range []string{"/", "/tables/a", "/api/tables"} {
		if resp := get(p, c); resp.StatusCode != 200 {
			t.Errorf("GET %s with the cookie: %d", p, resp.StatusCode)
		}
	}
	bad := &http.Cookie{Name: cookieName, Value: token[:len(token)-1]}
	if resp := get("/api/tables", bad); resp.StatusCode != 401 {
		t.Errorf("a wrong cookie: %d", resp.StatusCode)
	}
	code, body := f.do(t, "GET", "/tables/a", "", "Cookie", cookieName+"="+token)
	if code != 200 || strings.Contains(body["text"].(string), token) {
		t.Errorf("the table page with the cookie: %d; the token rendered: %v", code, strings.Contains(body["text"].(string), token))
	}
	if code, _ := f.do(t, "POST", "/api/tables/a/preview", "{}", "Cookie", cookieName+"="+token, "Sec-Fetch-Site", "cross-site"); code != 403 {
		t.Errorf("a cross-site POST with the cookie: %d, want 403", code)
	}
	if code, _ := f.do(t, "POST", "/api/tables/a/preview", "{}", "Cookie", cookieName+"="+token, "Content-Type", "text/plain"); code != 415 {
		t.Errorf("a text/plain POST with the cookie: %d, want 415", code)
	}
	if code, _ := f.do(t, "POST", "/api/tables/a/preview", "{}", "Cookie", cookieName+"="+token); code != 200 {
		t.Errorf("a POST with the cookie: %d", code)
	}
	// A browser drops tabs and newlines from a URL ("/\t/evil" is "//evil"), and C0 controls
	// and spaces from its ends.
	for _, next := range []string{"//evil.example/", "https://evil.example/", `/\evil.example`, "javascript:alert(1)",
		"/\t/evil.example/", "/\n/evil.example/", "/\r/evil.example", "/\x00/evil.example", "/ /evil.example", "/\x7f/evil"} {
		_, body := f.do(t, "GET", "/login?next="+url.QueryEscape(next), "")
		if !strings.Contains(body["text"].(string), `data-next="/"`) {
			t.Errorf("login?next=%s is not sent home", next)
		}
	}
}

// TestRunProgress: while a run deletes, GET /api/runs/{id}/progress has its live counters;
// after, the run's end without counters.
func TestRunProgress(t *testing.T) {
	f := newFixture(t, "tables:\n  - {id: a, path: TABLES/a}\n", nil, nil)
	manyStray(t, filepath.Join(f.dir, "a"), 10)
	g := gate(t, f)
	code, body := f.do(t, "POST", "/api/tables/a/runs", "{}")
	if code != 202 {
		t.Fatalf("start: %d %v", code, body)
	}
	id := body["id"].(string)
	<-g.entered // the first batch is being deleted: the planning is done
	code, p := f.do(t, "GET", "/api/runs/"+id+"/progress", "")
	prog, _ := p["progress"].(map[string]any)
	if code != 200 || p["run"].(map[string]any)["status"] != "RUNNING" || prog["phase"] != "deleting" || prog["candidates"].(float64) != 12 {
		t.Errorf("progress mid-run: %d %v", code, p)
	}
	close(g.release)
	f.srv.Wait()
	_, p = f.do(t, "GET", "/api/runs/"+id+"/progress", "")
	if p["run"].(map[string]any)["status"] != "COMPLETED" || p["progress"] != nil {
		t.Errorf("progress after the run: %v", p)
	}
}

// TestPreviewsBounded: the kept previews are at most maxPreviews, and their files at most
// maxPreviewFiles (the newest preview is kept whatever its size); the oldest goes first.
func TestPreviewsBounded(t *testing.T) {
	var w webState
	mk := func(i, files int) *preview {
		return &preview{Table: "a", Digest: fmt.Sprint(i), Result: &vacuum.Result{Plan: &vacuum.Plan{Files: vacuum.NewFileList(make([]vacuum.File, files)...)}}}
	}
	for i := range maxPreviews + 3 {
		w.keep(mk(i, 1))
	}
	if len(w.previews) != maxPreviews || w.find("a", "0") != nil || w.find("a", fmt.Sprint(maxPreviews+2)) == nil {
		t.Errorf("%d previews kept, the oldest there: %v", len(w.previews), w.find("a", "0") != nil)
	}
	w.keep(mk(100, maxPreviewFiles))
	if len(w.previews) != 1 || w.find("a", "100") == nil {
		t.Errorf("after a preview of %d files: %d kept", maxPreviewFiles, len(w.previews))
	}
	w.keep(mk(101, maxPreviewFiles+1))
	if len(w.previews) != 1 || w.find("a", "101") == nil {
		t.Error("the newest preview is not kept")
	}
	w.keep(mk(101, 1)) // the same plan again replaces the older
	if len(w.previews) != 1 {
		t.Errorf("the same plan kept twice: %d", len(w.previews))
	}
}

// TestPreviewPaged: a large preview is shown 100 files a page, says how many there are, and
// its JSON pages hold what was asked.
func TestPreviewPaged(t *testing.T) {
	f := newFixture(t, "tables:\n  - {id: a, path: TABLES/a}\n", nil, nil)
	manyStray(t, filepath.Join(f.dir, "a"), 250) // 252 files to delete
	plan, _ := previewDigest(t, f, "a")
	rows := func(html string) int { return strings.Count(html, `<td data-label="Path" class="path">`) }
	for page, want := range map[string]int{"": 100, "?page=2": 100, "?page=3": 52} {
		code, body := f.do(t, "GET", "/tables/a/previews/"+plan+page, "")
		html := body["text"].(string)
		if code != 200 || rows(html) != want || !strings.Contains(html, "of 252 (page") {
			t.Errorf("page %q: %d, %d rows, want %d", page, code, rows(html), want)
		}
	}
	if code, _ := f.do(t, "GET", "/tables/a/previews/"+plan+"?page=4", ""); code != 400 {
		t.Errorf("page 4 of 3: %d, want 400", code)
	}
	_, body := f.do(t, "GET", "/api/tables/a/previews/"+plan+"?offset=250&limit=10", "")
	files := body["files"].(map[string]any)
	if files["total"].(float64) != 252 || len(files["items"].([]any)) != 2 {
		t.Errorf("the last JSON page: %v", files)
	}
	_, body = f.do(t, "GET", "/api/tables/a/previews/"+plan+"?offset=5000", "")
	if files := body["files"].(map[string]any); len(files["items"].([]any)) != 0 {
		t.Errorf("a page past the end: %v", files)
	}
}

// TestOpenPathsDoNotOpenTheAPI: a path that only starts like one needing no token
// (/static/../api/…, escaped dots, /login/…) does not reach the API without it: answered
// with a redirect to the clean path (which then needs the token) or a 401, never the data.
func TestOpenPathsDoNotOpenTheAPI(t *testing.T) {
	const token = "s3cr3t-t0ken-0123456789"
	f := newFixture(t, "listen: 127.0.0.1:0\ntoken: ${DV_TOKEN}\ntables:\n  - {id: a, path: TABLES/a}\n", map[string]string{"DV_TOKEN": token}, nil)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, p := range []string{"/static/../api/tables", "/static/%2e%2e/api/tables", "/static/..%2fapi/tables", "/login/../api/tables", "/healthz/../api/tables", "/static//../api/tables"} {
		for _, method := range []string{"GET", "POST"} {
			req, err := http.NewRequest(method, f.http.URL+p, strings.NewReader("{}"))
			if err != nil {
				t.Fatal(err)
			}
			req.URL.Opaque = "//" + req.URL.Host + p // sent as written, dots and escapes kept
			req.Header.Set("Content-Type", "application/json")
			resp, err := noRedirect.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 || strings.Contains(string(b), `"tables"`) {
				t.Errorf("%s %s without the token: %d %s", method, p, resp.StatusCode, b)
			}
		}
	}
}
