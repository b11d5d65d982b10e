package service

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"html"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/deltavacuum/deltavacuum/insight"
	"github.com/deltavacuum/deltavacuum/internal/fixtures"
	"github.com/deltavacuum/deltavacuum/run"
	"github.com/deltavacuum/deltavacuum/service/config"
	"github.com/deltavacuum/deltavacuum/service/runner"
	"github.com/deltavacuum/deltavacuum/storage"
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
	for _, o := range []string{run.OutcomeRestored, run.OutcomeWouldRestore, run.OutcomePresent, run.OutcomeLost, run.OutcomeFailed} {
		need("outcome."+o, "run.html")
	}
	for _, o := range []string{run.OutcomePresent, run.OutcomeLost, run.OutcomeFailed} {
		need("undo.summary."+o, "undoSummary")
	}
	for _, v := range []string{run.ViaTrash, run.ViaRecovery} {
		need("via."+v, "run.html")
	}
	for _, p := range []string{vacuum.UndoYes, vacuum.UndoNo, vacuum.UndoUnknown} {
		need("undoability."+p, "run.html")
	}
	for _, r := range []string{runner.OfferRunning, runner.OfferUnreadable, runner.OfferNoRecord, runner.OfferUndone, runner.OfferNothingKept, runner.OfferRestLost,
		runner.OfferNothingDeleted, runner.OfferRetry, runner.OfferUnknown, runner.OfferPossible, runner.OfferInterrupted, runner.OfferPurged} {
		need("undo."+r, "undoOfferOf")
		need("undocol."+r, "runstable")
	}
	for _, tr := range []string{"api", "schedule"} {
		need("trigger."+tr, "run.html")
	}
	for _, k := range []string{storage.RecoveryNone, storage.RecoveryVersioning, storage.RecoverySoftDelete, storage.RecoveryUnknown} {
		need("recovery."+k, "recoveryText")
	}
	for _, from := range []string{"", runner.OneOffPreview, runner.OneOffFabric, "other"} {
		need(oneOffID(from), "run.html")
	}
	for _, m := range []string{"full", "lite", "auto"} {
		need("mode."+m, "table.html")
	}
	for _, p := range config.Presets {
		need("policy.preset."+p.Name, "table.html")
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

	// The table types of insight's retention presets, from its source, and the table's own.
	src, err := os.ReadFile("../insight/inspect.go")
	if err != nil {
		t.Fatal(err)
	}
	presets := regexp.MustCompile(`\{"([^"]+)", [0-9]+, [0-9]+\}`).FindAllStringSubmatch(string(src), -1)
	if len(presets) < 4 {
		t.Fatalf("found %d presets in package insight", len(presets))
	}
	for _, p := range presets {
		need("preset."+p[1], "insight's presets")
	}
	need("preset.table retention", "insight's whatIf")
	for _, code := range []int{400, 403, 404, 409, 422, 500, 502, 503} {
		if kindCode := http.StatusText(code); kindCode != "" {
			need("http."+strconv.Itoa(code), "statusOf")
		}
	}

	for _, l := range locales {
		for id, where := range want {
			m, ok := l.messages[id]
			if !ok {
				t.Errorf("%s: message %q (used in %s) is not in the catalogue", l.tag, id, where)
				continue
			}
			if r := strings.TrimPrefix(id, "rule."); r != id && strings.Contains(r, "_") && strings.Contains(m, r) {
				t.Errorf("%s: message %q names the rule by its id: %q", l.tag, id, m)
			}
		}
		for id, m := range l.messages {
			if strings.Count(m, "{") != strings.Count(m, "}") {
				t.Errorf("%s: message %q: unbalanced braces in %q", l.tag, id, m)
			}
			if strings.HasSuffix(id, ".one") {
				if _, ok := l.messages[strings.TrimSuffix(id, ".one")+".other"]; !ok {
					t.Errorf("%s: message %q has no .other form", l.tag, id)
				}
			}
		}
	}
}

// sameInBoth are the messages written alike in English and Portuguese: units, separators,
// product and SQL names, the words both languages share. Any other message the same in both
// was not translated.
var sameInBoth = map[string]bool{
	"list.sep": true, "files.with.companions": true, "dur.h": true, "dur.min": true, "dur.s": true, "via.": true,
	"col.bytes": true, "login.token": true, "price.s3": true, "price.onelake": true, "policy.retention.preset": true,
	"mode.full": true, "mode.lite": true, "preview.retention.what.run": true, // SQL's words
}

// TestCatalogueComplete: every language of the pages has every message of every other, with
// the same values ({name}) and both plural forms, none empty, and says it in its own words
// (only the messages of sameInBoth read alike); each names itself for the switch.
func TestCatalogueComplete(t *testing.T) {
	names := func(m string) []string {
		out := placeholder.FindAllString(m, -1)
		slices.Sort(out)
		return slices.Compact(out)
	}
	for _, l := range locales[1:] {
		for id, en := range english.messages {
			m, ok := l.messages[id]
			switch {
			case !ok:
				t.Errorf("%s lacks message %q (en: %q)", l.tag, id, en)
			case !slices.Equal(names(m), names(en)):
				t.Errorf("%s: message %q has the values %v, en %v", l.tag, id, names(m), names(en))
			case m == en && !sameInBoth[id]:
				t.Errorf("%s: message %q is the English one: %q", l.tag, id, m)
			case m != en && sameInBoth[id]:
				t.Errorf("%s: message %q differs from English though sameInBoth says it does not: %q", l.tag, id, m)
			case m == "" && id != "via.":
				t.Errorf("%s: message %q is empty", l.tag, id)
			}
		}
		for id := range l.messages {
			if _, ok := english.messages[id]; !ok {
				t.Errorf("%s has message %q, which English lacks", l.tag, id)
			}
		}
	}
	for _, l := range locales {
		if l.messages["lang"] != l.tag || l.messages["lang.name"] == "" || localeByTag(l.tag) != l {
			t.Errorf("locale %s: lang %q, name %q", l.tag, l.messages["lang"], l.messages["lang.name"])
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
	en, pt := english, portuguese
	at := time.Date(2026, 12, 2, 6, 47, 23, 0, time.UTC)
	price := insight.Price{PerGBMonth: 0.0235, Currency: "USD"}
	for _, c := range []struct{ got, want string }{
		{string(en.plural("n.files", 1)), "1 file"},
		{string(en.plural("n.files", 0)), "0 files"},
		{string(en.plural("n.files", 12345)), "12,345 files"},
		{string(en.filesHTML(4, 1)), "4 files (+1 checksum companion)"},
		{string(en.filesHTML(1, 2)), "1 file (+2 checksum companions)"},
		{string(en.filesHTML(3, 0)), "3 files"},
		{en.durationText("24h0m0s"), "24 h"},
		{en.durationText("1h30m0s"), "1 h 30 min"},
		{en.durationText("20m0s"), "20 min"},
		{en.durationText("0s"), "0 s"},
		{en.hoursText(61320), "61320 h"},
		{en.hoursText(36.5), "36.5 h"},
		{string(en.markup("status.undo", "run", "<b>")), "undo of &lt;b&gt;"},
		{text("nope"), "[nope]"},
		{en.bytes(1536), "1.5 KiB"},
		{en.bytes(-512), "-512 B"},
		{en.money(1234.567, price), "USD 1,234.57"},
		{en.money(0.001, price), "< USD 0.01"},
		{en.unitPrice(price), "USD 0.0235"},
		{en.when(at), "2026-12-02 06:47:23 UTC"},
		{en.count(-1234567), "-1,234,567"},
		{en.shareText(12.34), "12.3"},
		// Brazilian Portuguese: a comma marks the decimals, a point the thousands; dates are
		// day/month/year.
		{string(pt.plural("n.files", 1)), "1 arquivo"},
		{string(pt.plural("n.files", 0)), "0 arquivos"},
		{string(pt.plural("n.files", 12345)), "12.345 arquivos"},
		{string(pt.filesHTML(4, 1)), "4 arquivos (+1 arquivo de checksum)"},
		{pt.durationText("1h30m0s"), "1 h 30 min"},
		{pt.hoursText(36.5), "36,5 h"},
		{pt.bytes(1536), "1,5 KiB"},
		{pt.bytes(3 << 30), "3,0 GiB"},
		{pt.money(1234.567, price), "US$ 1.234,57"},
		{pt.money(0.001, price), "< US$ 0,01"},
		{pt.unitPrice(price), "US$ 0,0235"},
		{pt.when(at), "02/12/2026 06:47:23 UTC"},
		{string(pt.whenHTML(at)), `<time datetime="2026-12-02T06:47:23Z">02/12/2026 06:47:23 UTC</time>`},
		{pt.count(-1234567), "-1.234.567"},
		{pt.shareText(12.34), "12,3"},
		{pt.presetText("dimensional, table retention"), "tabela de dimensão, retenção da tabela"},
		{pt.text("table.title", "id", "<x>"), "Tabela <x>"},
		{string(pt.markup("run.started", "at", at)), `iniciada em <time datetime="2026-12-02T06:47:23Z">02/12/2026 06:47:23 UTC</time>`},
		{pt.statusTitle(404), "Não encontrado"},
		{pt.statusTitle(418), "Erro 418"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
	for _, l := range locales {
		for _, m := range l.messages {
			if regexp.MustCompile(`\b1 [a-z]+s\b`).MatchString(m) && !strings.Contains(m, "1 entry") {
				t.Errorf("%s: a message says one of a plural: %q", l.tag, m)
			}
		}
	}
}

// TestPagesSayWords: every page, in the states a run goes through, says words, in English and
// in Brazilian Portuguese (as the browser asks, Accept-Language): no message missing ([id]) or
// a value left out ({name}), no rule id (tombstone_in_retention), no reason said twice
// ("untracked untracked"), no Go duration (24h0m0s), no "1 files"; each page says its
// language (<html lang>), and says nothing of the other's catalogue: no English words left in
// a Portuguese page, nor Portuguese in an English one (pageWords). The pages: the tables, a
// table (after a run, after its undo, broken, with deletion vectors), a preview, a run (with
// the untracked files of its plan; an undo's dry run; undone), the runs, login, an error.
func TestPagesSayWords(t *testing.T) {
	f := newFixture(t, "tables:\n  - {id: a, path: TABLES/a, policy: {trash: true}}\n  - {id: gone, path: TABLES/gone}\n  - {id: dv, path: TABLES/dv}\n", nil, nil)
	if err := os.RemoveAll(filepath.Join(f.dir, "gone")); err != nil {
		t.Fatal(err)
	}
	// dv: a table whose live files carry deletion vectors (a Spark-written fixture).
	dv := fixtures.Copy(t, "dat/deletion_vectors", t0.Add(-30*24*time.Hour))
	if err := os.RemoveAll(filepath.Join(f.dir, "dv")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dv, filepath.Join(f.dir, "dv")); err != nil {
		t.Fatal(err)
	}
	f.srv.Tick(context.Background())
	f.srv.Wait()
	if code, body := f.do(t, "GET", "/api/tables/dv/inspect", ""); code != 200 {
		t.Fatalf("inspect dv: %d %v", code, body)
	}
	plan, _ := previewDigest(t, f, "a")
	pages := []string{"/", "/tables/a", "/tables/gone", "/tables/dv", "/tables/a/previews/" + plan, "/login", "/runs/nope", "/tables/nope"}
	id := runPlan(t, f, plan)["id"].(string)
	pages = append(pages, "/runs", "/runs?table=a", "/runs/"+id, "/runs/"+id+"?undo=dry")
	html := map[string]string{}
	get := func(p, suffix string) {
		for _, l := range locales {
			_, body := f.do(t, "GET", p, "", "Accept-Language", l.tag+",en;q=0.5")
			html[l.tag+" "+p+suffix] = body["text"].(string)
		}
	}
	for _, p := range pages {
		get(p, "")
	}
	f.clock.set(t0.Add(10 * time.Second))
	if code, _ := f.do(t, "POST", "/api/runs/"+id+"/undo", "{}"); code != 200 {
		t.Fatal("undo failed")
	}
	f.srv.Wait()
	for _, p := range []string{"/", "/tables/a", "/runs", "/runs/" + id} {
		get(p, " (undone)")
	}
	bad := regexp.MustCompile(`\[[a-z]+\.[a-z.-]+\]|\{[a-zA-Z0-9]+\}|tombstone_in_retention|not_older_than_cutoff|live_deletion_vector|untracked untracked|\b\d+h0m0s\b|\b1 files\b|\b1 arquivos\b|serve-`)
	words := map[*locale][]string{english: pageWords(english, portuguese), portuguese: pageWords(portuguese, english)}
	for key, h := range html {
		tag, p, _ := strings.Cut(key, " ")
		l := localeByTag(tag)
		other := english
		if l == english {
			other = portuguese
		}
		if !strings.Contains(h, `<html lang="`+l.tag+`">`) {
			t.Errorf("%s GET %s: not a page in %s", tag, p, l.tag)
		}
		text := pageText(h)
		if m := bad.FindAllString(text, -1); len(m) > 0 {
			t.Errorf("%s GET %s says %q", tag, p, m)
		}
		var left []string
		for _, w := range words[other] {
			if strings.Contains(text, w) {
				left = append(left, w)
			}
		}
		if len(left) > 0 {
			t.Errorf("%s GET %s says words of %s: %q", tag, p, other.tag, left)
		}
	}
	// What each page is for, said in its language.
	for key, want := range map[string]string{
		"pt-BR /tables/dv":                "Vetores de exclusão: o que o VACUUM não consegue recuperar",
		"en /tables/dv":                   "4 of their 5 rows are marked deleted (80.0 %)",
		"pt-BR /runs/" + id:               "não referenciado por nenhum commit",
		"en /runs/" + id:                  "Its plan held 1 file (4 B) that no commit names",
		"pt-BR /tables/nope":              "<title>Não encontrado",
		"pt-BR /":                         "Recuperável agora",
		"pt-BR /runs/" + id + "?undo=dry": "Simulação: restauraria 2 arquivos",
	} {
		if !strings.Contains(html[key], want) {
			t.Errorf("%s does not say %q", key, want)
		}
	}
}

// pageWords are the words of l's catalogue a page in another language must not say: each
// message's text between its values, of four characters or more with a letter, that no
// message of other says too (product, SQL and API names are the same in both), except the
// language switch, which names each language in itself.
func pageWords(l, other *locale) []string {
	seen := map[string]bool{}
	var out []string
	for id, m := range l.messages {
		if id == "lang" || id == "lang.name" {
			continue
		}
		for _, w := range placeholder.Split(m, -1) {
			w = strings.Trim(w, " .,:;·()+–-…→←")
			if len([]rune(w)) < 4 || !strings.ContainsFunc(w, unicode.IsLetter) || seen[w] {
				continue
			}
			shared := false
			for _, o := range other.messages {
				if strings.Contains(o, w) {
					shared = true
					break
				}
			}
			if !shared {
				seen[w] = true
				out = append(out, w)
			}
		}
	}
	return out
}

// pageText is what a page says: its text (tags dropped, entities read) and the words of the
// attributes a reader meets (a cell's label on a phone, a chart's label, a placeholder), not
// the script's catalogue in data-messages; the values the page shows as data (the table's
// location, a path, a commit's parameters, an error of the service, which the API words in
// English) are left out.
func pageText(h string) string {
	if i := strings.Index(h, `data-messages="`); i >= 0 {
		j := strings.Index(h[i+15:], `"`)
		h = h[:i] + h[i+15+j+1:]
	}
	data := regexp.MustCompile(`(?s)<(p|div|td|code)[^>]* class="(?:sub loc|loc|path|error|errtext)"[^>]*>.*?</(?:p|div|td|code)>|(?s)<code>.*?</code>|(?s)<(span|code|strong)[^>]* data-raw[^>]*>.*?</(?:span|code|strong)>`)
	h = data.ReplaceAllString(h, "\n")
	var b strings.Builder
	for _, m := range regexp.MustCompile(`\b(?:data-label|aria-label|placeholder|alt)="([^"]*)"`).FindAllStringSubmatch(h, -1) {
		b.WriteString(m[1] + "\n")
	}
	b.WriteString(regexp.MustCompile(`<[^>]*>`).ReplaceAllString(h, "\n"))
	return html.UnescapeString(b.String())
}
