package state

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the pure-Go SQLite driver, registered as "sqlite"
)

// FileName is the database file in the data directory.
const FileName = "deltavacuum-serve.db"

// Run statuses. A run is RUNNING until it ends COMPLETED or FAILED; a cancelled run ends
// FAILED with its error saying so: a run that did not finish is never a success.
const (
	StatusRunning   = "RUNNING"
	StatusCompleted = "COMPLETED"
	StatusFailed    = "FAILED"
)

var (
	// ErrNotFound is returned (wrapped) for a run id the database does not hold.
	ErrNotFound = errors.New("not found")
	// ErrTableBusy is returned (wrapped) when a run is started on a table that has one RUNNING.
	ErrTableBusy = errors.New("a run is already in progress on the table")
	// ErrNotRunning is returned (wrapped) when a run that has ended is ended again.
	ErrNotRunning = errors.New("the run is not running")
)

// migrations are applied in order, each once; the index of the last applied one is the
// schema version. Never edit one that has shipped: add another.
var migrations = []string{
	`CREATE TABLE runs (
		id         TEXT PRIMARY KEY,
		table_id   TEXT NOT NULL,
		trigger    TEXT NOT NULL,
		mode       TEXT NOT NULL,
		dry_run    INTEGER NOT NULL,
		status     TEXT NOT NULL CHECK (status IN ('RUNNING', 'COMPLETED', 'FAILED')),
		started_ms INTEGER NOT NULL,
		ended_ms   INTEGER,
		error      TEXT NOT NULL DEFAULT '',
		figures    TEXT NOT NULL DEFAULT '{}',
		record_id  TEXT NOT NULL DEFAULT ''
	);
	CREATE INDEX runs_by_table ON runs (table_id, started_ms);
	CREATE UNIQUE INDEX runs_one_running ON runs (table_id) WHERE status = 'RUNNING';
	CREATE TABLE schedules (
		table_id     TEXT PRIMARY KEY,
		handled_ms   INTEGER,
		last_full_ms INTEGER
	);
	CREATE TABLE inspections (
		table_id TEXT NOT NULL,
		at_ms    INTEGER NOT NULL,
		version  INTEGER NOT NULL,
		figures  TEXT NOT NULL,
		PRIMARY KEY (table_id, at_ms)
	);`,
}

// DB is the state database.
type DB struct{ db *sql.DB }

// Open opens (creating it and dir when missing) the database in dir and brings its schema up
// to date. A database written by a newer deltavacuum is refused, not guessed at.
func Open(ctx context.Context, dir string) (*DB, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("state: data directory: %w", err)
	}
	path := filepath.Join(dir, FileName)
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=locking_mode(EXCLUSIVE)&_pragma=busy_timeout(1000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)")
	if err != nil {
		return nil, fmt.Errorf("state: %s: %w", path, err)
	}
	// One connection, holding the file exclusively (locking_mode EXCLUSIVE): writes are
	// serialized here, and a second service on the same data directory, which would end this
	// one's runs FAILED at its start, cannot open it.
	db.SetMaxOpenConns(1)
	s := &DB{db: db}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		if strings.Contains(err.Error(), "locked") || strings.Contains(err.Error(), "SQLITE_BUSY") {
			return nil, fmt.Errorf("state: %s is in use by another process (another deltavacuum serve with this dataDir?): give each service its own data directory: %w", path, err)
		}
		return nil, fmt.Errorf("state: %s: %w", path, err)
	}
	return s, nil
}

// Close closes the database.
func (s *DB) Close() error { return s.db.Close() }

// SchemaVersion is the number of migrations this build knows.
func SchemaVersion() int { return len(migrations) }

func (s *DB) migrate(ctx context.Context) error {
	var v int
	if err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return err
	}
	if v > len(migrations) {
		return fmt.Errorf("the database has schema version %d, this deltavacuum knows %d: run a newer deltavacuum, or give serve another data directory", v, len(migrations))
	}
	for i := v; i < len(migrations); i++ {
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, migrations[i]); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %d: %w", i+1, err)
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", i+1)); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %d: %w", i+1, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migration %d: %w", i+1, err)
		}
	}
	return nil
}

// Run is one run the service started.
type Run struct {
	ID    string `json:"id"`
	Table string `json:"table"`
	// Trigger is "schedule" or "api".
	Trigger string     `json:"trigger"`
	Mode    string     `json:"mode"`
	DryRun  bool       `json:"dryRun"`
	Status  string     `json:"status"`
	Started time.Time  `json:"started"`
	Ended   *time.Time `json:"ended,omitempty"`
	Error   string     `json:"error,omitempty"`
	// Figures are the run's result figures (JSON object), as the library returned them.
	Figures json.RawMessage `json:"figures"`
	// RecordID is the id of the run record under the table's _deltavacuum/runs/.
	RecordID string `json:"recordId,omitempty"`
}

func ms(t time.Time) int64 { return t.UnixMilli() }

func fromMS(v int64) time.Time { return time.UnixMilli(v).UTC() }

// StartRun records a RUNNING run; ErrTableBusy when the table has a run RUNNING.
func (s *DB) StartRun(ctx context.Context, r Run) error {
	if r.ID == "" || r.Table == "" || r.Started.IsZero() {
		return errors.New("state: a run needs an id, a table and a start time")
	}
	_, err := s.db.ExecContext(ctx,
		`INSERT INTO runs (id, table_id, trigger, mode, dry_run, status, started_ms) VALUES (?, ?, ?, ?, ?, 'RUNNING', ?)`,
		r.ID, r.Table, r.Trigger, r.Mode, r.DryRun, ms(r.Started))
	if err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed: runs.table_id") {
		return fmt.Errorf("table %s: %w", r.Table, ErrTableBusy)
	}
	if err != nil {
		return fmt.Errorf("state: recording run %s: %w", r.ID, err)
	}
	return nil
}

// EndRun records the end of a RUNNING run: status COMPLETED or FAILED (a FAILED one needs its
// error), its figures and run record id. ErrNotRunning when the run has ended already.
func (s *DB) EndRun(ctx context.Context, id, status string, ended time.Time, figures json.RawMessage, recordID, errMsg string) error {
	switch {
	case status == StatusCompleted && errMsg != "":
		return errors.New("state: a COMPLETED run has no error")
	case status == StatusFailed && errMsg == "":
		return errors.New("state: a FAILED run needs its error")
	case status != StatusCompleted && status != StatusFailed:
		return fmt.Errorf("state: a run ends COMPLETED or FAILED, not %q", status)
	}
	if len(figures) == 0 {
		figures = json.RawMessage("{}")
	}
	if !json.Valid(figures) {
		return errors.New("state: the figures are not valid JSON")
	}
	res, err := s.db.ExecContext(ctx,
		`UPDATE runs SET status = ?, ended_ms = ?, figures = ?, record_id = ?, error = ? WHERE id = ? AND status = 'RUNNING'`,
		status, ms(ended), string(figures), recordID, errMsg, id)
	if err != nil {
		return fmt.Errorf("state: ending run %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		if _, err := s.Run(ctx, id); err != nil {
			return err
		}
		return fmt.Errorf("run %s: %w", id, ErrNotRunning)
	}
	return nil
}

// FailInterrupted ends FAILED every run still RUNNING: at start-up, those are runs a previous
// process did not see to their end. It returns their ids.
func (s *DB) FailInterrupted(ctx context.Context, now time.Time) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id FROM runs WHERE status = 'RUNNING' ORDER BY started_ms, id`)
	if err != nil {
		return nil, fmt.Errorf("state: %w", err)
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, fmt.Errorf("state: %w", err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("state: %w", err)
	}
	for _, id := range ids {
		if err := s.EndRun(ctx, id, StatusFailed, now, nil, "", "interrupted: the service stopped before the run ended; see the table's run record and history"); err != nil {
			return nil, err
		}
	}
	return ids, nil
}

const runColumns = `id, table_id, trigger, mode, dry_run, status, started_ms, ended_ms, error, figures, record_id`

func scanRun(sc interface{ Scan(...any) error }) (Run, error) {
	var r Run
	var started int64
	var ended sql.NullInt64
	var figures string
	if err := sc.Scan(&r.ID, &r.Table, &r.Trigger, &r.Mode, &r.DryRun, &r.Status, &started, &ended, &r.Error, &figures, &r.RecordID); err != nil {
		return Run{}, err
	}
	r.Started = fromMS(started)
	if ended.Valid {
		e := fromMS(ended.Int64)
		r.Ended = &e
	}
	r.Figures = json.RawMessage(figures)
	return r, nil
}

// Run returns the run with that id.
func (s *DB) Run(ctx context.Context, id string) (*Run, error) {
	r, err := scanRun(s.db.QueryRowContext(ctx, `SELECT `+runColumns+` FROM runs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("run %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("state: %w", err)
	}
	return &r, nil
}

// Runs returns the runs of table (every table when ""), newest first, at most limit.
func (s *DB) Runs(ctx context.Context, table string, limit int) ([]Run, error) {
	rows, err := s.db.QueryContext(ctx,
		`SELECT `+runColumns+` FROM runs WHERE (? = '' OR table_id = ?) ORDER BY started_ms DESC, id DESC LIMIT ?`, table, table, limit)
	if err != nil {
		return nil, fmt.Errorf("state: %w", err)
	}
	defer rows.Close()
	var out []Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("state: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// RunsPage returns a page of the runs of table (every table when ""), newest first: limit
// runs after the first offset, and how many there are in all.
func (s *DB) RunsPage(ctx context.Context, table string, offset, limit int) ([]Run, int, error) {
	var total int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM runs WHERE (? = '' OR table_id = ?)`, table, table).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("state: %w", err)
	}
	rows, err := s.db.QueryContext(ctx,
		`SELECT `+runColumns+` FROM runs WHERE (? = '' OR table_id = ?) ORDER BY started_ms DESC, id DESC LIMIT ? OFFSET ?`, table, table, limit, offset)
	if err != nil {
		return nil, 0, fmt.Errorf("state: %w", err)
	}
	defer rows.Close()
	out := []Run{}
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, 0, fmt.Errorf("state: %w", err)
		}
		out = append(out, r)
	}
	return out, total, rows.Err()
}

// RunsBefore returns runs of the tables given, newest first (by start, then id), that come
// after the run started at startedMS with id beforeID in that order (from the newest when
// beforeID is ""), at most limit: a list a page at a time, each page from where the one before
// ended, whatever was added since.
func (s *DB) RunsBefore(ctx context.Context, tables []string, startedMS int64, beforeID string, limit int) ([]Run, error) {
	if tables == nil {
		tables = []string{}
	}
	ids, err := json.Marshal(tables)
	if err != nil {
		return nil, fmt.Errorf("state: %w", err)
	}
	rows, err := s.db.QueryContext(ctx,
		`SELECT `+runColumns+` FROM runs WHERE table_id IN (SELECT value FROM json_each(?))
		 AND (? = '' OR started_ms < ? OR (started_ms = ? AND id < ?))
		 ORDER BY started_ms DESC, id DESC LIMIT ?`, string(ids), beforeID, startedMS, startedMS, beforeID, limit)
	if err != nil {
		return nil, fmt.Errorf("state: %w", err)
	}
	defer rows.Close()
	out := []Run{}
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("state: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// ScheduleState is how far a table's schedule is handled.
type ScheduleState struct {
	// Handled: the fires up to it are done (run or lost).
	Handled time.Time
	// LastFull is the start of the last FULL run (mode auto), zero if none.
	LastFull time.Time
}

func nullMS(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return ms(t)
}

// SetHandled records that table's fires up to t are done.
func (s *DB) SetHandled(ctx context.Context, table string, t time.Time) error {
	_, err := s.db.ExecContext(ctx,
		`INSERT INTO schedules (table_id, handled_ms) VALUES (?, ?) ON CONFLICT (table_id) DO UPDATE SET handled_ms = excluded.handled_ms`,
		table, nullMS(t))
	if err != nil {
		return fmt.Errorf("state: %w", err)
	}
	return nil
}

// SetLastFull records the start of table's last FULL run.
func (s *DB) SetLastFull(ctx context.Context, table string, t time.Time) error {
	_, err := s.db.ExecContext(ctx,
		`INSERT INTO schedules (table_id, last_full_ms) VALUES (?, ?) ON CONFLICT (table_id) DO UPDATE SET last_full_ms = excluded.last_full_ms`,
		table, nullMS(t))
	if err != nil {
		return fmt.Errorf("state: %w", err)
	}
	return nil
}

// Schedules returns the schedule state of every table that has one.
func (s *DB) Schedules(ctx context.Context) (map[string]ScheduleState, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT table_id, handled_ms, last_full_ms FROM schedules`)
	if err != nil {
		return nil, fmt.Errorf("state: %w", err)
	}
	defer rows.Close()
	out := map[string]ScheduleState{}
	for rows.Next() {
		var id string
		var h, f sql.NullInt64
		if err := rows.Scan(&id, &h, &f); err != nil {
			return nil, fmt.Errorf("state: %w", err)
		}
		var st ScheduleState
		if h.Valid {
			st.Handled = fromMS(h.Int64)
		}
		if f.Valid {
			st.LastFull = fromMS(f.Int64)
		}
		out[id] = st
	}
	return out, rows.Err()
}

// Inspection is the inspect figures of a table at a moment.
type Inspection struct {
	Table   string          `json:"table"`
	At      time.Time       `json:"at"`
	Version int64           `json:"version"`
	Figures json.RawMessage `json:"figures"`
}

// AddInspection records the figures of an inspect run; a second one for the same table at
// the same millisecond replaces the first.
func (s *DB) AddInspection(ctx context.Context, in Inspection) error {
	if !json.Valid(in.Figures) {
		return errors.New("state: the inspect figures are not valid JSON")
	}
	_, err := s.db.ExecContext(ctx,
		`INSERT OR REPLACE INTO inspections (table_id, at_ms, version, figures) VALUES (?, ?, ?, ?)`,
		in.Table, ms(in.At), in.Version, string(in.Figures))
	if err != nil {
		return fmt.Errorf("state: %w", err)
	}
	return nil
}

// Inspections returns table's inspections at or after since, oldest first, at most limit
// (the newest limit of them).
func (s *DB) Inspections(ctx context.Context, table string, since time.Time, limit int) ([]Inspection, error) {
	rows, err := s.db.QueryContext(ctx,
		`SELECT table_id, at_ms, version, figures FROM (
			SELECT * FROM inspections WHERE table_id = ? AND at_ms >= ? ORDER BY at_ms DESC LIMIT ?
		) ORDER BY at_ms`, table, ms(since), limit)
	if err != nil {
		return nil, fmt.Errorf("state: %w", err)
	}
	defer rows.Close()
	var out []Inspection
	for rows.Next() {
		var in Inspection
		var at int64
		var figures string
		if err := rows.Scan(&in.Table, &at, &in.Version, &figures); err != nil {
			return nil, fmt.Errorf("state: %w", err)
		}
		in.At, in.Figures = fromMS(at), json.RawMessage(figures)
		out = append(out, in)
	}
	return out, rows.Err()
}
