package service

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/chromedp/chromedp"
)

// TestPagesSpeakTheCatalogue: every page, rendered by headless Chromium in English and in
// Brazilian Portuguese, says only what the catalogue of its language says. Each text of the
// page (its text nodes, hidden ones too, and the attributes a reader sees or hears: title,
// placeholder, aria-label, alt, and the data-label a phone shows before a cell) is stripped
// of the catalogue's words (each message's text between its values) and of data (numbers,
// sizes, dates, ids, paths, file and table names, SQL's and the product's names); what is left
// must hold no letter. Text the catalogue cannot hold (an error of the store or the library,
// the table's own history) is marked as such (data-raw, lang="en") and passed over; nothing
// else is. The pages: the tables, a table (figures, what-if, history), one with deletion
// vectors, a preview, the runs, a run of a local table (what its store keeps), a run's undo
// (a dry run first), a run of a Fabric job at its retentionPeriod, a broken table, an error
// page, and the login page.
func TestPagesSpeakTheCatalogue(t *testing.T) {
	f := newFixture(t, `discover:
  - {id: lh, root: TABLES/lh.Lakehouse, refresh: 1h}
fabric:
  lakehouses:
    - {workspaceId: `+docWorkspace+`, lakehouseId: `+docLakehouse+`, root: TABLES/lh.Lakehouse}
tables:
  - {id: t1, path: TABLES/t1, policy: {retention: dimensional}}
  - {id: t2, path: TABLES/t2, policy: {trash: true, retentionCheck: disabled, mode: auto, fullEvery: 168h}}
  - {id: dv, path: TABLES/dv, policy: {inspectEvery: off}}
  - {id: broken1, path: TABLES/broken1}
`, nil, nil)
	dvTable(t, f)
	makeTable(t, filepath.Join(f.dir, "lh.Lakehouse", "Tables", "orders_1"), t0, nil)
	if err := os.RemoveAll(filepath.Join(f.dir, "broken1", "_delta_log")); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"t1", "t2", "dv"} {
		if code, body := f.do(t, "GET", "/api/tables/"+id+"/inspect", ""); code != 200 {
			t.Fatalf("inspect %s: %d %v", id, code, body)
		}
	}
	if code, _ := f.do(t, "GET", "/api/tables/broken1/inspect", ""); code != 502 {
		t.Fatalf("inspect broken1: %d", code)
	}
	// A preview at 2555 hours (the planner's note), a run of t1 (local disk, nothing kept), a
	// run of t2 (moved to the trash, undone as a dry run), a Fabric job at a retentionPeriod.
	code, prev := f.do(t, "POST", "/api/tables/t1/preview", `{"retentionHours": 2555}`)
	if code != 200 {
		t.Fatalf("preview: %d %v", code, prev)
	}
	run := func(path, body string) string {
		t.Helper()
		code, out := f.do(t, "POST", path, body)
		if code != 202 {
			t.Fatalf("POST %s: %d %v", path, code, out)
		}
		f.srv.Wait()
		return out["id"].(string)
	}
	localRun := run("/api/tables/t1/runs", "{}")
	trashRun := run("/api/tables/t2/runs", "{}")
	resp, b := f.fabricDo(t, "POST", jobsPath, `{"executionData": {"tableName": "orders_1", "vacuumSettings": {"retentionPeriod": "7:00:00:00"}}}`)
	if resp.StatusCode != 202 {
		t.Fatalf("fabric job: %d %s", resp.StatusCode, b)
	}
	f.srv.Wait()
	loc := resp.Header.Get("Location")
	jobRun := loc[strings.LastIndexByte(loc, '/')+1:]

	pages := []struct{ path, wait string }{
		{"/", "#tables"},
		{"/tables/t1", "#whatif"},
		{"/tables/t2", "#policy"},
		{"/tables/dv", "#deletion-vectors"},
		{"/tables/broken1", "#broken"},
		{prev["previewUrl"].(string), "#files"},
		{"/runs", "#runs"},
		{"/runs?table=t1", "#runs"},
		{"/runs/" + localRun, "#undo-why"},
		{"/runs/" + trashRun + "?undo=dry", "#undo-summary"},
		{"/runs/" + jobRun, "#run-oneoff"},
		{"/tables/nothing1", "#page-error"},
		{"/login", "h1"},
	}
	data := []string{"deltavacuum serve", "t1", "t2", "dv", "broken1", "lh", "FULL", "LITE", "UTC", "DRY RUN"}
	for _, lang := range []string{"en", "pt-BR"} {
		t.Run(lang, func(t *testing.T) {
			b := newBrowserIn(t, f.http.URL, lang)
			for _, p := range pages {
				b.run(chromedp.Navigate(b.base+p.path), chromedp.WaitVisible(p.wait, chromedp.ByQuery), b.ready())
				if got := b.attr("html", "lang"); got != lang {
					t.Fatalf("%s: a page in %q, want %q", p.path, got, lang)
				}
				for _, s := range b.shownTexts() {
					if left := notInCatalogue(localeByTag(s.lang), s.text, data); left != "" {
						t.Errorf("%s %s: %q is not the catalogue's (left: %q)", lang, p.path, s.text, left)
					}
				}
			}
			// A refusal the page's script shows: its words, then the service's, marked.
			b.nav("/tables/t1")
			b.run(chromedp.SetValue("#retention", "-1", chromedp.ByQuery), chromedp.Click("#preview", chromedp.ByQuery),
				chromedp.WaitVisible("#action-error", chromedp.ByQuery))
			for _, s := range b.shownTexts() {
				if left := notInCatalogue(localeByTag(s.lang), s.text, data); left != "" {
					t.Errorf("%s /tables/t1, a refused preview: %q is not the catalogue's (left: %q)", lang, s.text, left)
				}
			}
			if got, want := b.text("#action-error"), localeByTag(lang).text("js.error.status", "status", "400"); !strings.HasPrefix(got, want) || !strings.Contains(got, "retentionHours") {
				t.Errorf("the refused preview says %q, want %q and the service's words", got, want)
			}
			// What the issue saw: the store's own words, and where a retention came from.
			b.nav("/runs/" + localRun)
			why := b.text("#undo-why")
			if want := localeByTag(lang).text("recovery.none.local"); !strings.Contains(why, want) {
				t.Errorf("the run of a local table: %q, want %q", why, want)
			}
			b.nav("/runs/" + jobRun)
			if got, want := b.text("#run-oneoff"), localeByTag(lang).text("run.oneoff.fabric", "retention", localeByTag(lang).hoursText(168)); got != want {
				t.Errorf("the run of a Fabric job: %q, want %q", got, want)
			}
			// The preview deletes nothing yet: its column says what it would delete.
			b.nav(prev["previewUrl"].(string))
			if got, want := b.text("#folders thead"), localeByTag(lang).text("col.todelete"); !strings.Contains(got, want) {
				t.Errorf("the preview's folders: %q, want the column %q", got, want)
			}
		})
	}
}

// shownText is a text of a page and the language of the element it is in.
type shownText struct{ lang, text string }

// shownTexts are the texts of the page a reader sees or hears, with the language of each
// (the nearest lang attribute), but for those marked data-raw and the script and style.
func (b *browser) shownTexts() []shownText {
	b.t.Helper()
	var out [][2]string
	b.run(chromedp.Evaluate(`(() => {
		const out = [];
		const langOf = el => (el.closest('[lang]') || document.documentElement).getAttribute('lang');
		const w = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
		for (let n = w.nextNode(); n; n = w.nextNode()) {
			const el = n.parentElement;
			if (!el || el.closest('[data-raw],script,style,noscript,template')) continue;
			const s = n.textContent.trim();
			if (s) out.push([langOf(el), s]);
		}
		for (const el of document.querySelectorAll('[title],[placeholder],[aria-label],[alt],[data-label]')) {
			if (el.closest('[data-raw]')) continue;
			for (const a of ['title', 'placeholder', 'aria-label', 'alt', 'data-label']) {
				const v = (el.getAttribute(a) || '').trim();
				if (v) out.push([langOf(el), v]);
			}
		}
		out.push([document.documentElement.getAttribute('lang'), document.title]);
		return out;
	})()`, &out))
	texts := make([]shownText, len(out))
	for i, o := range out {
		texts[i] = shownText{o[0], o[1]}
	}
	return texts
}

// dataToken is a word that is data, not language: one with a digit, an underscore, a slash,
// an equals sign, a colon, or a dot between letters (a number, a size, a date, an id, a path,
// a file or table name), and the units the pages write as symbols.
var dataToken = regexp.MustCompile(`[\p{L}\p{N}_.\-/=:+*@~#%]*(?:[\p{N}_/=#]|\p{L}\.\p{L})[\p{L}\p{N}_.\-/=:+*@~#%]*|\b(?:B|KiB|MiB|GiB|TiB|PiB|EiB)\b`)

// notInCatalogue is what is left of s once the words of l's catalogue and the data are taken
// out of it, when that holds a letter ("" otherwise). data are words the test knows are data
// (the tables' ids, the product's name).
func notInCatalogue(l *locale, s string, data []string) string {
	if l == nil {
		return s
	}
	for _, frag := range catalogueFragments(l) {
		s = replaceWords(s, frag)
	}
	for _, d := range data {
		s = replaceWords(s, d)
	}
	s = dataToken.ReplaceAllString(s, " ")
	if strings.IndexFunc(s, unicode.IsLetter) < 0 {
		return ""
	}
	return strings.Join(strings.Fields(s), " ")
}

// replaceWords blanks each occurrence of frag in s that does not cut a word: a fragment that
// starts (ends) with a letter or digit must not follow (be followed by) one.
func replaceWords(s, frag string) string {
	word := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
	first, _ := utf8.DecodeRuneInString(frag)
	last, _ := utf8.DecodeLastRuneInString(frag)
	var b strings.Builder
	for {
		i := strings.Index(s, frag)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		before, _ := utf8.DecodeLastRuneInString(s[:i])
		after, _ := utf8.DecodeRuneInString(s[i+len(frag):])
		if (i > 0 && word(first) && word(before)) || (i+len(frag) < len(s) && word(last) && word(after)) {
			_, n := utf8.DecodeRuneInString(s[i:])
			b.WriteString(s[:i+n])
			s = s[i+n:]
			continue
		}
		b.WriteString(s[:i])
		b.WriteString(" ")
		s = s[i+len(frag):]
	}
}

// catalogueFragments are the texts of l's messages between their values, longest first.
func catalogueFragments(l *locale) []string {
	seen := map[string]bool{}
	for _, m := range l.messages {
		for _, frag := range placeholder.Split(m, -1) {
			if strings.IndexFunc(frag, unicode.IsLetter) >= 0 { // a fragment without a letter hides none
				seen[frag] = true
				seen[strings.TrimSpace(frag)] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for f := range seen {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) || len(out[i]) == len(out[j]) && out[i] < out[j] })
	return out
}

// TestNotInCatalogue: the check itself finds a sentence of the other language, a store's own
// words, a word of English in a Portuguese sentence; and passes the catalogue's messages with
// data in their places.
func TestNotInCatalogue(t *testing.T) {
	for _, c := range []struct {
		l    *locale
		s    string
		want bool // left over
	}{
		{portuguese, "(local disk: a delete frees the space at once and keeps nothing)", true},
		{portuguese, portuguese.text("undo.nothing-kept", "detail", portuguese.text("recovery.none.local")), false},
		{portuguese, portuguese.text("run.oneoff.fabric", "retention", portuguese.hoursText(168)), false},
		{portuguese, "Executada com uma retenção personalizada de 168 h (from its preview), não a da política.", true},
		{portuguese, english.text("col.todelete"), true},
		{portuguese, "Log out", true},
		{portuguese, "Tabela lh.orders_1", false},
		{portuguese, "1.502 arquivos · 1,5 KiB", false},
		{portuguese, "02/12/2026 06:47:23 UTC", false},
		{portuguese, "stray.parquet", false},
		{english, "Sair", true},
		{english, english.text("preview.what", "mode", "FULL", "retention", "168 h", "cutoff", "2026-12-02 06:47:23 UTC", "version", 3, "at", "2026-12-02 06:47:23 UTC"), false},
		{english, "the store keeps what this run deletes (bucket b is versioned)", true},
	} {
		if left := notInCatalogue(c.l, c.s, []string{"FULL", "UTC"}); (left != "") != c.want {
			t.Errorf("%s %q: left %q, want something left: %v", c.l.tag, c.s, left, c.want)
		}
	}
}
