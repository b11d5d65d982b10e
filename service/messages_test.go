package service

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/run"
	"github.com/deltavacuum/deltavacuum/undo"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// TestCatalogue: every message a page can show is in the catalogue: each id the templates,
// the Go that fills them and the script name; each state, outcome and undo offer; and a
// plain-word name for every rule (vacuum.Rule) and reason (vacuum.Reason) of the planner,
// found in package vacuum's source, so that a new rule without words fails here. A count has
// both its forms.
func TestCatalogue(t *testing.T) {
	want := map[string]string{} // id -> where it is used
	need := func(id, where string) { want[id] = where }
	needPlural := func(id, where string) { need(id+".one", where); need(id+".other", where) }

	// The templates: t "id", tt "id", tn "id".
	tmpl := regexp.MustCompile(`\b(t|tt|tn) "([^"]+)"`)
	err := fs.WalkDir(webFiles, "web/templates", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(webFiles, p)
		for _, m := range tmpl.FindAllStringSubmatch(string(b), -1) {
			if m[1] == "tn" {
				needPlural(m[2], p)
			} else {
				need(m[2], p)
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// The Go: text("id"), markup("id"), plural("id"); ids ending in "."
	// are prefixes, checked below.
	goCall := regexp.MustCompile(`\b(text|markup|plural)\("([^"]+)"`)
	files, _ := filepath.Glob("*.go")
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range goCall.FindAllStringSubmatch(string(b), -1) {
			switch {
			case strings.HasSuffix(m[2], "."):
			case m[1] == "plural":
				needPlural(m[2], f)
			default:
				need(m[2], f)
			}
		}
	}
	// The script: msg("id"), plural("id").
	js, err := fs.ReadFile(webFiles, "web/static/app.js")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`\b(msg|plural)\("(js\.[^"]+)"`).FindAllStringSubmatch(string(js), -1) {
		if strings.HasSuffix(m[2], ".") {
			continue // a prefix: the phases, below
		}
		if m[1] == "plural" {
			needPlural(m[2], "app.js")
		} else {
			need(m[2], "app.js")
		}
	}
	for _, v := range []string{"js.progress.deleted", "js.progress.moved", "js.progress.listed"} {
		needPlural(v, "app.js")
	}
	for _, p := range []string{"starting", "reading the log", "listing", "looking for nested tables", "re-checking the log", "recording the run", "deleting", "done"} {
		need("js.phase."+p, "app.js (vacuum.Counters phases)")
	}
	// What the pages name by a prefix.
	for _, s := range []string{run.StatePlanned, run.StateRunning, run.StateCompleted, run.StateFailed, run.StatePartiallyUndone, run.StateUndone, run.StateUnreadable} {
		need("state."+s, "stateHTML")
	}
	for _, o := range []string{undo.OutcomeRestored, undo.OutcomeWouldRestore, undo.OutcomePresent, undo.OutcomeLost, undo.OutcomeFailed} {
		need("outcome."+o, "run.html")
	}
	for _, o := range []string{undo.OutcomePresent, undo.OutcomeLost, undo.OutcomeFailed} {
		need("undo.summary."+o, "undoSummary")
	}
	for _, v := range []string{undo.ViaTrash, undo.ViaRecovery} {
		need("via."+v, "run.html")
	}
	for _, p := range []string{vacuum.UndoYes, vacuum.UndoNo, vacuum.UndoUnknown} {
		need("undoability."+p, "run.html")
	}
	for _, r := range []string{offerRunning, offerUnreadable, offerNoRecord, offerUndone, offerNothingKept, offerRestLost,
		offerNothingDeleted, offerRetry, offerUnknown, offerPossible, offerInterrupted, offerPurged} {
		need("undo."+r, "undoOfferOf")
		need("undocol."+r, "runstable")
	}
	for _, tr := range []string{"api", "schedule"} {
		need("trigger."+tr, "run.html")
	}
	// Every rule and reason of the planner, from package vacuum's source.
	rules, reasons := planWords(t)
	if len(rules) < 10 || len(reasons) < 4 {
		t.Fatalf("found %d rules and %d reasons in package vacuum", len(rules), len(reasons))
	}
	for _, r := range rules {
		need("rule."+r, "vacuum.Rule")
	}
	for _, r := range reasons {
		need("reason."+r, "vacuum.Reason")
	}

	for id, where := range want {
		m, ok := lang[id]
		if !ok {
			t.Errorf("message %q (used in %s) is not in the catalogue", id, where)
			continue
		}
		if r := strings.TrimPrefix(id, "rule."); r != id && strings.Contains(r, "_") && strings.Contains(m, r) {
			t.Errorf("message %q names the rule by its id: %q", id, m)
		}
	}
	for id, m := range lang {
		if strings.Count(m, "{") != strings.Count(m, "}") {
			t.Errorf("message %q: unbalanced braces in %q", id, m)
		}
		if strings.HasSuffix(id, ".one") {
			if _, ok := lang[strings.TrimSuffix(id, ".one")+".other"]; !ok {
				t.Errorf("message %q has no .other form", id)
			}
		}
	}
}

// planWords are the values of package vacuum's Rule and Reason constants, from its source.
func planWords(t *testing.T) (rules, reasons []string) {
	t.Helper()
	fset := token.NewFileSet()
	names, err := filepath.Glob("../vacuum/*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, sp := range g.Specs {
				vs := sp.(*ast.ValueSpec)
				id, ok := vs.Type.(*ast.Ident)
				if !ok || len(vs.Values) != 1 {
					continue
				}
				lit, ok := vs.Values[0].(*ast.BasicLit)
				if !ok {
					continue
				}
				v, _ := strconv.Unquote(lit.Value)
				switch id.Name {
				case "Rule":
					rules = append(rules, v)
				case "Reason":
					reasons = append(reasons, v)
				}
			}
		}
	}
	return rules, reasons
}

// TestWords: counts say "1 file", never "1 files"; durations read as a person writes them;
// a message's values are escaped, except markup given as such.
func TestWords(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{string(plural("n.files", 1)), "1 file"},
		{string(plural("n.files", 0)), "0 files"},
		{string(plural("n.files", 12345)), "12,345 files"},
		{string(filesHTML(4, 1)), "4 files (+1 checksum companion)"},
		{string(filesHTML(1, 2)), "1 file (+2 checksum companions)"},
		{string(filesHTML(3, 0)), "3 files"},
		{durationText("24h0m0s"), "24 h"},
		{durationText("1h30m0s"), "1 h 30 min"},
		{durationText("20m0s"), "20 min"},
		{durationText("0s"), "0 s"},
		{hoursText(61320), "61320 h"},
		{string(markup("status.undo", "run", "<b>")), "undo of &lt;b&gt;"},
		{text("nope"), "[nope]"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
	for _, m := range lang {
		if regexp.MustCompile(`\b1 [a-z]+s\b`).MatchString(m) && !strings.Contains(m, "1 entry") {
			t.Errorf("a message says one of a plural: %q", m)
		}
	}
}

// TestPagesSayWords: every page, in the states a run goes through, says words: no message
// missing ([id]) or a value left out ({name}), no rule id (tombstone_in_retention), no reason
// said twice ("untracked untracked"), no Go duration (24h0m0s), no "1 files", one run id.
func TestPagesSayWords(t *testing.T) {
	f := newFixture(t, "tables:\n  - {id: a, path: TABLES/a, policy: {trash: true}}\n  - {id: gone, path: TABLES/gone}\n", nil, nil)
	if err := os.RemoveAll(filepath.Join(f.dir, "gone")); err != nil {
		t.Fatal(err)
	}
	f.srv.Tick(context.Background())
	f.srv.Wait()
	plan, _ := previewDigest(t, f, "a")
	pages := []string{"/", "/tables/a", "/tables/gone", "/tables/a/previews/" + plan, "/login", "/runs/nope"}
	id := runPlan(t, f, plan)["id"].(string)
	pages = append(pages, "/runs", "/runs?table=a", "/runs/"+id, "/runs/"+id+"?undo=dry")
	html := map[string]string{}
	for _, p := range pages {
		_, body := f.do(t, "GET", p, "")
		html[p] = body["text"].(string)
	}
	f.clock.set(t0.Add(10 * time.Second))
	if code, _ := f.do(t, "POST", "/api/runs/"+id+"/undo", "{}"); code != 200 {
		t.Fatal("undo failed")
	}
	f.srv.Wait()
	for _, p := range []string{"/", "/tables/a", "/runs", "/runs/" + id} {
		_, body := f.do(t, "GET", p, "")
		html[p+" (undone)"] = body["text"].(string)
	}
	bad := regexp.MustCompile(`\[[a-z]+\.[a-z.-]+\]|\{[a-zA-Z0-9]+\}|tombstone_in_retention|not_older_than_cutoff|live_deletion_vector|untracked untracked|\b\d+h0m0s\b|\b1 files\b|serve-`)
	for p, h := range html {
		// The page's own words, not its data attribute of the script's messages.
		if i := strings.Index(h, `data-messages="`); i >= 0 {
			j := strings.Index(h[i+15:], `"`)
			h = h[:i] + h[i+15+j:]
		}
		if m := bad.FindAllString(h, -1); len(m) > 0 {
			t.Errorf("GET %s says %q", p, m)
		}
	}
}
