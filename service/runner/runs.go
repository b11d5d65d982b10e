package runner

import (
	"context"
	"fmt"

	"github.com/deltavacuum/deltavacuum/run"
	"github.com/deltavacuum/deltavacuum/service/state"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// The runs the service asked for, each with its state read from its table's run record: the
// HTTP side lists and shows runs only through these, never from the state database alone.

// Run returns run id with its state (state.ErrNotFound when the service has no such run;
// ErrNotFound saying so for a start that waits in the queue: it is no run yet).
func (r *Runner) Run(ctx context.Context, id string) (RunDoc, error) {
	if q, ok := r.Queued(id); ok {
		return RunDoc{}, notStartedError(q)
	}
	sr, err := r.st.Run(ctx, id)
	if err != nil {
		return RunDoc{}, err
	}
	return r.doc(ctx, *sr), nil
}

// Runs returns the newest runs of table (every table when ""), newest first, at most limit,
// each with its state.
func (r *Runner) Runs(ctx context.Context, table string, limit int) ([]RunDoc, error) {
	runs, err := r.st.Runs(ctx, table, limit)
	if err != nil {
		return nil, err
	}
	return r.Docs(ctx, runs), nil
}

// LastRuns returns the last run of each of tables, in their order, each with its state (the
// records read at once); a table the service never ran has a RunDoc without an id.
func (r *Runner) LastRuns(ctx context.Context, tables []string) []RunDoc {
	var last []state.Run
	var at []int
	for i, id := range tables {
		if runs, err := r.st.Runs(ctx, id, 1); err == nil && len(runs) == 1 {
			last = append(last, runs[0])
			at = append(at, i)
		}
	}
	out := make([]RunDoc, len(tables))
	for i, d := range r.Docs(ctx, last) {
		out[at[i]] = d
	}
	return out
}

// RunsPage returns a page of the runs of table (every table when ""), newest first, each with
// its state, and how many runs there are in all.
func (r *Runner) RunsPage(ctx context.Context, table string, offset, limit int) ([]RunDoc, int, error) {
	runs, total, err := r.st.RunsPage(ctx, table, offset, limit)
	if err != nil {
		return nil, 0, err
	}
	return r.Docs(ctx, runs), total, nil
}

// RunsBefore returns the runs of the tables given that come after the run asked at askedMS
// with id beforeID (state.DB.RunsBefore), without their states: Fabric's list of jobs merges
// them with the jobs that never ran before it reads the states of the page it shows (Docs).
func (r *Runner) RunsBefore(ctx context.Context, tables []string, askedMS int64, beforeID string, limit int) ([]state.Run, error) {
	return r.st.RunsBefore(ctx, tables, askedMS, beforeID, limit)
}

// LastUndo reads the report of the last undo of run d from its table.
func (r *Runner) LastUndo(ctx context.Context, d RunDoc) (*run.UndoReport, error) {
	t, ok := r.tables.Lookup(d.Table)
	if !ok {
		return nil, Of(ErrNotFound, fmt.Errorf("its table %s is no longer in the configuration", d.Table))
	}
	dt, err := r.tables.Open(ctx, t)
	if err != nil {
		return nil, Of(ErrTable, err)
	}
	rep, err := run.ReadUndoReport(ctx, dt.Store, recordOf(d.asked))
	return rep, Of(ErrTable, err)
}

// Companions counts the checksum companions among the files run d deleted, from its record read
// whole (an undo counts them so: a companion is an entry of unknown size, or the companion of
// another entry's file). A record that has not recorded the run's end counts none; its header
// does not count them, so a list of runs does not either.
func (r *Runner) Companions(ctx context.Context, d RunDoc) (int64, error) {
	if !d.recorded || d.Figures.NumFilesToDelete != nil || d.Figures.NumDeletedFiles == 0 {
		return 0, nil
	}
	t, ok := r.tables.Lookup(d.Table)
	if !ok {
		return 0, Of(ErrNotFound, fmt.Errorf("its table %s is no longer in the configuration", d.Table))
	}
	dt, err := r.tables.Open(ctx, t)
	if err != nil {
		return 0, Of(ErrTable, err)
	}
	rec, err := run.ReadRecord(ctx, dt.Store, d.RecordID)
	if err != nil {
		return 0, Of(ErrTable, err)
	}
	companion := map[string]bool{}
	for _, e := range rec.Files {
		companion[vacuum.ChecksumCompanion(e.Path)] = true
	}
	var n int64
	for _, e := range rec.Files {
		if e.Size < 0 || companion[e.Path] {
			n++
		}
	}
	return n, nil
}
