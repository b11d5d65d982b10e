package service

import (
	"html"
	"html/template"
	"net/http"
	"net/url"
	"strings"

	"github.com/deltavacuum/deltavacuum/run"
	"github.com/deltavacuum/deltavacuum/service/runner"
)

// undoFilesShown is how many files of an undo report the run page lists.
const undoFilesShown = 200

// undoFiles are the first files of an undo report, for the page's list.
type undoFiles struct {
	Rows []run.UndoFile
	More int
}

func undoFilesOf(rep *run.UndoReport) undoFiles {
	uf := undoFiles{Rows: rep.Files}
	if len(uf.Rows) > undoFilesShown {
		uf.Rows, uf.More = uf.Rows[:undoFilesShown], len(rep.Files)-undoFilesShown
	}
	return uf
}

// outcomeCount is how many files, and checksum companions among the run record's entries,
// had one outcome in an undo: a run counts its files without their companions, and so does
// every page that speaks of them.
type outcomeCount struct{ files, companions int64 }

// undoCounts counts a report's files by outcome, companions apart.
func undoCounts(rep *run.UndoReport) map[string]outcomeCount {
	out := map[string]outcomeCount{}
	for _, f := range rep.Files {
		c := out[f.Outcome]
		if f.Companion {
			c.companions++
		} else {
			c.files++
		}
		out[f.Outcome] = c
	}
	return out
}

// undoSummary says what an undo did (or, dry, would do), in the same files and companions
// the run counts.
func (l *locale) undoSummary(rep *run.UndoReport) template.HTML {
	c := undoCounts(rep)
	restored := c[run.OutcomeRestored]
	id := "undo.summary.done"
	if rep.DryRun {
		restored, id = c[run.OutcomeWouldRestore], "undo.summary.dry"
	}
	rest := []template.HTML{}
	for _, o := range []string{run.OutcomePresent, run.OutcomeLost, run.OutcomeFailed} {
		if n := c[o]; n.files+n.companions > 0 {
			rest = append(rest, l.markup("undo.summary."+o, "files", l.filesHTML(n.files, n.companions)))
		}
	}
	sum := l.markup(id, "files", l.filesHTML(restored.files, restored.companions), "bytes", l.bytes(rep.BytesRestored), "via", l.text("via."+rep.Via), "at", rep.At)
	if len(rest) > 0 {
		var parts []string
		for _, r := range rest {
			parts = append(parts, string(r))
		}
		sum += l.markup("undo.summary.rest", "rest", template.HTML(strings.Join(parts, l.text("list.sep"))))
	}
	return sum
}

// restoreLabel is the label of the button that restores what a dry run would restore.
func (l *locale) restoreLabel(rep *run.UndoReport) template.HTML {
	c := undoCounts(rep)[run.OutcomeWouldRestore]
	return l.markup("undo.restore", "files", l.filesHTML(c.files, c.companions))
}

// runDetail says the state of the run page's run in words: how many files it deleted (or
// moved to the trash), and what its undo brought back (from the last undo's report, whose
// counts are the run's files and companions).
func (l *locale) runDetail(rr runRow, last *run.UndoReport) template.HTML {
	switch rr.State {
	case run.StatePlanned:
		return l.markup("detail.planned")
	case run.StateRunning:
		return l.markup("detail.running")
	case run.StateUnreadable:
		return l.markup("detail.unreadable", "error", rawHTML(rr.StateDetail))
	case run.StateUndone, run.StatePartiallyUndone:
		if last == nil { // the report of its undo cannot be read: the state's own words
			return rawHTML(rr.StateDetail)
		}
		c := undoCounts(last)
		back := c[run.OutcomeRestored]
		back.files += c[run.OutcomePresent].files
		back.companions += c[run.OutcomePresent].companions
		if rr.State == run.StateUndone {
			return l.markup("detail.undone", "at", last.At, "files", l.filesHTML(back.files, back.companions))
		}
		all := back
		for _, o := range []string{run.OutcomeLost, run.OutcomeFailed} {
			all.files += c[o].files
			all.companions += c[o].companions
		}
		return l.markup("detail.partial", "at", last.At, "back", l.filesHTML(back.files, back.companions), "all", l.filesHTML(all.files, all.companions))
	}
	if rr.Interrupted {
		return l.markup("detail.interrupted")
	}
	if rr.State == run.StateFailed {
		return l.markup("detail.failed")
	}
	return l.markup("detail.completed")
}

// runCounts says what the run deleted (or moved to the trash), as its record says: once it has
// recorded its end, what it deleted; an interrupted run's record, what it planned (it never
// recorded what it deleted). Nothing while it runs, nor for a run the table holds no record of
// (its detail says it deleted nothing).
func (l *locale) runCounts(rr runRow) template.HTML {
	f := rr.F
	if rr.Status == run.StatusRunning || f.PlanChanged || rr.RecordID == "" || rr.State == run.StateUnreadable {
		return ""
	}
	if f.NumFilesToDelete != nil {
		return l.markup("counts.planned", "files", l.filesHTML(*f.NumFilesToDelete, 0), "bytes", l.bytes(*f.SizeOfDataToDelete))
	}
	id := "counts.deleted"
	if rr.Trash != "" {
		id = "counts.moved"
	}
	return l.markup(id, "files", l.filesHTML(f.NumDeletedFiles, rr.Companions()), "bytes", l.bytes(f.SizeOfDeletedData))
}

// runPage shows a run: its state, what it deleted, what an undo can do and what the last one
// did; ?undo=dry adds the undo's dry run (what would come back) and the button that restores.
func (s *Server) runPage(w http.ResponseWriter, r *http.Request) {
	l := localeOf(r)
	d, err := s.runner.Run(r.Context(), r.PathValue("id"))
	if err != nil {
		s.errorPage(w, r, err, "")
		return
	}
	d = docWithWhy(d)
	rr := runRowOf(d)
	if rr.companions, err = s.runner.Companions(r.Context(), d); err != nil {
		s.Log.Warn("counting the checksum companions of the run", "run", d.ID, "error", s.Red.String(err.Error()))
	}
	body := map[string]any{"R": rr, "Recovery": l.recoveryText(d.Recovery(), s.locationOf(d.Table))}
	var last *run.UndoReport
	if d.LastUndo != nil {
		if last, err = s.runner.LastUndo(r.Context(), d); err == nil {
			body["Last"], body["LastSummary"], body["LastFiles"] = last, l.undoSummary(last), undoFilesOf(last)
		}
	}
	body["Detail"], body["Counts"] = l.runDetail(rr, last), l.runCounts(rr)
	if r.URL.Query().Get("undo") == "dry" {
		if d.UndoOffer.Action == "" {
			s.errorPage(w, r, of(errConflict, &offerError{d.UndoOffer.Why}), d.Table)
			return
		}
		rep, err := s.runner.Undo(r.Context(), d.ID, true)
		if err != nil {
			s.errorPage(w, r, err, d.Table)
			return
		}
		body["Dry"], body["DrySummary"], body["RestoreLabel"], body["DryFiles"] = rep, l.undoSummary(rep), l.restoreLabel(rep), undoFilesOf(rep)
	}
	s.render(w, r, http.StatusOK, "run.html", l.text("run.title", "id", d.ID), body)
}

// offerError is the refusal of an undo the run's state does not offer.
type offerError struct{ why string }

func (e *offerError) Error() string { return e.why }

// holdHTML says what holds a table in this service (runner.Runner.Held): a run, the undo of a run
// (each linked to its page), or a trash purge.
func (l *locale) holdHTML(what string) template.HTML {
	link := func(id string) template.HTML {
		return template.HTML(`<a href="/runs/`+html.EscapeString(url.PathEscape(id))+`">`) + l.markup("status.run", "id", id) + `</a>`
	}
	switch {
	case run.ValidID(what):
		return link(what)
	case strings.HasPrefix(what, runner.HoldUndo):
		return l.markup("status.undo", "run", link(strings.TrimPrefix(what, runner.HoldUndo)))
	case what == runner.HoldPurge:
		return l.markup("status.purge")
	}
	return rawHTML(what)
}
