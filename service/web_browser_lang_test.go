package service

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/deltavacuum/deltavacuum"
	"github.com/deltavacuum/deltavacuum/internal/fixtures"
	"github.com/deltavacuum/deltavacuum/service/tables"
)

// The pages in Brazilian Portuguese (issue 29, item 5): a browser that asks for pt-BR gets
// every page in it, the script's words and numbers included; the switch on the page changes
// the language and keeps it. In a real Chromium against the service on 127.0.0.1, with
// screenshots at 1280 and 390 px.

// dvTable puts a copy of a fixture whose live files carry deletion vectors at TABLES/dv.
func dvTable(t *testing.T, f *fixture) {
	t.Helper()
	dv := fixtures.Copy(t, "dat/deletion_vectors", t0.Add(-30*24*time.Hour))
	if err := os.RemoveAll(filepath.Join(f.dir, "dv")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dv, filepath.Join(f.dir, "dv")); err != nil {
		t.Fatal(err)
	}
}

// TestBrowserPortuguese: the tables page, a table with its deletion vectors, the preview, Run
// now with its live progress (the script's words), the run's result and the untracked files of
// its plan, the undo (a dry run first) and the files back, all in Portuguese, with numbers and
// dates as Brazilians write them; then the switch to English, which the next pages keep over
// the browser's language, and back.
func TestBrowserPortuguese(t *testing.T) {
	f := newFixture(t, "tables:\n  - {id: a, path: TABLES/a, policy: {trash: true, retention: merge-heavy-fact, retentionCheck: disabled}}\n  - {id: dv, path: TABLES/dv, policy: {inspectEvery: off}}\n", nil, nil)
	a := filepath.Join(f.dir, "a")
	manyStray(t, a, 1500)
	dvTable(t, f)
	g := gate(t, f)
	mover := gatedMover{g}
	f.srv.tables.SetOpenHook(func(ctx context.Context, tb *tables.Table) (*deltavacuum.Table, error) {
		if tb.Cfg.ID != "a" {
			return tb.Open(ctx)
		}
		return deltavacuum.OpenStore(mover), nil
	})
	for _, id := range []string{"a", "dv"} {
		if code, body := f.do(t, "GET", "/api/tables/"+id+"/inspect", ""); code != 200 {
			t.Fatalf("inspect %s: %d %v", id, code, body)
		}
	}
	b := newBrowserIn(t, f.http.URL, "pt-BR")

	b.nav("/")
	if got := b.attr("html", "lang"); got != "pt-BR" {
		t.Fatalf("a browser asking for pt-BR got a page in %q", got)
	}
	if got := b.text(`#tables tr[data-table="a"] td[data-label="Recuperável agora"]`); !strings.Contains(got, "1.502 arquivos") {
		t.Errorf("tables page, reclaimable: %q", got)
	}
	if got := b.text(`#tables thead`); !strings.Contains(got, "Última execução") || !strings.Contains(got, "Custo / mês") {
		t.Errorf("tables page, headers: %q", got)
	}
	b.timesOnOneLine()
	b.shot("tables")

	b.nav("/tables/dv")
	if got := b.text("#deletion-vectors"); !strings.Contains(got, "Vetores de exclusão") || !strings.Contains(got, "4 das suas 5 linhas") ||
		!strings.Contains(got, "(80,0 %)") || !strings.Contains(got, "REORG TABLE … APPLY (PURGE)") || !strings.Contains(got, "Mais de 5 %") {
		t.Errorf("the deletion vectors: %q", got)
	}
	b.shot("table-dv")

	b.nav("/tables/a")
	if got := b.text("#whatif"); !strings.Contains(got, "tabela de fatos com alta rotatividade") || !strings.Contains(got, "retenção da tabela") {
		t.Errorf("what-if table: %q", got)
	}
	if got := b.text("#figures"); !strings.Contains(got, "recuperável agora") || !strings.Contains(got, "/2026 ") {
		t.Errorf("figures: %q", got)
	}
	b.shot("table")

	b.run(chromedp.Click("#preview", chromedp.ByQuery), chromedp.WaitVisible("#run-now", chromedp.ByQuery), b.ready())
	if got := b.text("#summary"); !strings.Contains(got, "move 1.502 arquivos") || !strings.Contains(got, "Executar agora") {
		t.Errorf("the preview: %q", got)
	}
	if got := b.text("#files"); !strings.Contains(got, "não referenciado por nenhum commit") || strings.Contains(got, "no commit names") {
		t.Errorf("the preview's files: %q", got)
	}
	b.shot("preview")

	b.run(chromedp.Click("#run-now", chromedp.ByQuery), chromedp.WaitVisible(`#run[data-phase="deleting"]`, chromedp.ByQuery))
	if got := b.text("#run-counts"); !strings.Contains(got, "de 1.502 arquivos movidos para a lixeira") {
		t.Errorf("progress: %q", got)
	}
	if got := b.text("#run-phase"); got != "excluindo" {
		t.Errorf("phase: %q", got)
	}
	if got := b.text("#run-state"); got != "em andamento" {
		t.Errorf("state: %q", got)
	}
	b.shot("run-progress")
	close(g.release)
	b.run(chromedp.WaitVisible(`#run[data-state="completed"]`, chromedp.ByQuery), chromedp.WaitVisible("#undo-dry", chromedp.ByQuery), b.ready())
	if got := b.text("#run-counts"); !strings.Contains(got, "1.502 arquivos movidos para a lixeira") {
		t.Errorf("result: %q", got)
	}
	if got := b.text("#run-untracked"); !strings.Contains(got, "1.501 arquivos") || !strings.Contains(got, "não referenciados por nenhum commit") || !strings.Contains(got, "a raiz da tabela (1.501)") {
		t.Errorf("untracked: %q", got)
	}
	if got := b.text("#run-state"); got != "concluída" {
		t.Errorf("state: %q", got)
	}
	b.timesOnOneLine()
	b.shot("run-completed")
	f.srv.Wait()

	b.run(chromedp.Click("#undo-dry", chromedp.ByQuery), chromedp.WaitVisible(`#undo[data-undo="dry"]`, chromedp.ByQuery), b.ready())
	if got := b.text("#undo-summary"); !strings.Contains(got, "restauraria 1.502 arquivos") || !strings.Contains(got, "da lixeira") {
		t.Errorf("undo dry run: %q", got)
	}
	if got := b.text("#undo-run"); got != "Restaurar 1.502 arquivos" {
		t.Errorf("the restore button says %q", got)
	}
	b.shot("undo-dry-run")
	b.run(chromedp.Click("#undo-run", chromedp.ByQuery), chromedp.WaitVisible(`#run[data-state="undone"]`, chromedp.ByQuery), b.ready())
	if got := b.text("#last-undo-summary"); !strings.Contains(got, "restaurados 1.502 arquivos") {
		t.Errorf("undo: %q", got)
	}
	b.shot("undo-done")
	f.srv.Wait()

	// The switch: English, kept by the next pages over the browser's pt-BR; then back.
	b.run(chromedp.Click(`#lang-switch a[data-lang="en"]`, chromedp.ByQuery), chromedp.WaitVisible(`html[lang="en"]`, chromedp.ByQuery), b.ready())
	if got := b.text("#run-state"); got != "undone" {
		t.Errorf("after the switch, state: %q", got)
	}
	b.nav("/tables/dv")
	if got := b.attr("html", "lang"); got != "en" {
		t.Errorf("the switch to English is not kept: the next page is in %q", got)
	}
	if got := b.text("#deletion-vectors"); !strings.Contains(got, "4 of their 5 rows are marked deleted (80.0 %)") || !strings.Contains(got, "More than 5 %") {
		t.Errorf("the deletion vectors in English: %q", got)
	}
	b.shot("table-dv-en")
	b.run(chromedp.Click(`#lang-switch a[data-lang="pt-BR"]`, chromedp.ByQuery), chromedp.WaitVisible(`html[lang="pt-BR"]`, chromedp.ByQuery), b.ready())
	b.nav("/runs")
	if got := b.text("#runs thead"); !strings.Contains(got, "Execução") || !strings.Contains(got, "Duração") {
		t.Errorf("the runs page after switching back: %q", got)
	}
	b.shot("runs")
}
