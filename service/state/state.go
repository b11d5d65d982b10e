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

	"github.com/deltavacuum/deltavacuum/vacuum"
)

// FileName is the database file in the data directory.
const FileName = "deltavacuum-serve.db"

// Who asked for a run (Run.Requester), as the service knows it.
const (
	// BySchedule: the table's schedule.
	BySchedule = "schedule"
	// ByAPI: a request of the API: with the bearer token, or, on loopback without a token, from
	// a client that is not a browser on the service's own origin.
	ByAPI = "api"
	// ByPage: the web page: a browser logged in (the login cookie, not the bearer token), or, on
	// loopback without a token, a browser on the service's own origin (Sec-Fetch-Site:
	// same-origin, which a browser sets and a page's script cannot).
	ByPage = "page"
	// ByFabric: Fabric's Table Maintenance job API (the job instance is the run).
	ByFabric = "fabric"
)

var (
	// ErrNotFound is returned (wrapped) for a run id the database does not hold.
	ErrNotFound = errors.New("not found")
	// ErrEnded is returned (wrapped) when a run that is linked to its run record, or was refused,
	// is refused again (or linked after its refusal): a run ends once.
	ErrEnded = errors.New("the run has ended already")
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
	// 2: the service keeps only what it alone knows of a run (who asked, what was asked, a
	// refusal before the run wrote its record, a cancel it asked for): a run's status, figures,
	// error and end are its run record's, beside the table (package run). The old rows keep
	// what the service alone knew: their requester is their trigger, their one-off retention,
	// preview and plan change come from their figures, the error of a FAILED run that never named its
	// record becomes its refusal (shown only while the table holds no record of it), a cancel through the API its cancel.
	`CREATE TABLE runs2 (
		id           TEXT PRIMARY KEY,
		table_id     TEXT NOT NULL,
		requester    TEXT NOT NULL,
		mode         TEXT NOT NULL,
		dry_run      INTEGER NOT NULL,
		asked_ms     INTEGER NOT NULL,
		record_id    TEXT NOT NULL DEFAULT '',
		retain_hours REAL,
		one_off_from TEXT NOT NULL DEFAULT '',
		plan_digest  TEXT NOT NULL DEFAULT '',
		cancelled    TEXT NOT NULL DEFAULT '',
		refusal      TEXT NOT NULL DEFAULT '',
		refused_ms   INTEGER,
		plan_changed INTEGER NOT NULL DEFAULT 0,
		CHECK ((refusal = '') = (refused_ms IS NULL)),
		CHECK (refusal = '' OR record_id = '')
	);
	INSERT INTO runs2 (id, table_id, requester, mode, dry_run, asked_ms, record_id, retain_hours, one_off_from, plan_digest, cancelled, refusal, refused_ms, plan_changed)
	SELECT id, table_id, trigger, mode, dry_run, started_ms,
		record_id,
		CASE WHEN json_valid(figures) AND json_type(figures, '$.oneOffRetention') = 'true' AND json_type(figures, '$.retentionHours') IN ('integer', 'real')
			THEN json_extract(figures, '$.retentionHours') END,
		CASE WHEN json_valid(figures) AND json_type(figures, '$.oneOffFrom') = 'text' THEN json_extract(figures, '$.oneOffFrom') ELSE '' END,
		CASE WHEN json_valid(figures) AND json_type(figures, '$.planDigest') = 'text' THEN json_extract(figures, '$.planDigest') ELSE '' END,
		CASE WHEN error LIKE 'cancelled through the API%' THEN 'cancelled through the API' ELSE '' END,
		CASE WHEN status = 'FAILED' AND error <> '' AND record_id = '' THEN error ELSE '' END,
		CASE WHEN status = 'FAILED' AND error <> '' AND record_id = '' THEN coalesce(ended_ms, started_ms) END,
		CASE WHEN json_valid(figures) AND json_type(figures, '$.planChanged') = 'true' THEN 1 ELSE 0 END
	FROM runs;
	DROP TABLE runs;
	ALTER TABLE runs2 RENAME TO runs;
	CREATE INDEX runs_by_table ON runs (table_id, asked_ms);`,
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

// Run is a run the service asked for, as the service alone knows it: who asked, what was asked,
// when, the link to its run record beside the table, and what no record in the table can say (a
// refusal before the run wrote its record, a cancel the service asked for). Its status, figures,
// error and end are the run record's (package run), read from the table: never kept here.
type Run struct {
	ID    string
	Table string
	// Requester is who asked: BySchedule, ByAPI, ByPage or ByFabric (ByAPI or BySchedule in the
	// rows of builds before this one).
	Requester string
	// Mode is the mode asked (FULL or LITE; the one the run ran in is its record's); DryRun
	// whether a DRY RUN was asked.
	Mode   string
	DryRun bool
	// Asked is when the service was asked (or the schedule fired) and accepted the run.
	Asked time.Time
	// RecordID is the id of the table's run record of the run, once the service has seen it
	// written ("" before; a run of this service writes its record under its own id).
	RecordID string
	// RetainHours is the one-off retention asked (nil: the policy's), and OneOffFrom where it
	// came from (a preview's retentionHours, a Fabric job's retentionPeriod).
	RetainHours *float64
	OneOffFrom  string
	// PlanDigest is the preview the run was asked to execute ("" : none).
	PlanDigest string
	// Cancelled says why the service asked the run to stop ("" : it did not).
	Cancelled string
	// Refusal is why the run ended without writing its record beside the table (refused at its
	// start, its plan no longer the previewed one, failed before its first write), and Refused
	// when; PlanChanged: its plan was not the previewed one. A refusal writes nothing into the
	// table, so only the service can say it.
	Refusal     string
	Refused     *time.Time
	PlanChanged bool
}

// Trigger is what started the run, as the API has always said it: the schedule, or a request
// ("api": the API, the page or Fabric's job API).
func (r Run) Trigger() string {
	if r.Requester == BySchedule {
		return BySchedule
	}
	return ByAPI
}

// validHours refuses a one-off retention no run can have, by the library's one rule
// (vacuum.RetentionOf, RETAIN n HOURS's).
func validHours(h float64) error {
	_, err := vacuum.RetentionOf(h)
	return err
}

func ms(t time.Time) int64 { return t.UnixMilli() }

func fromMS(v int64) time.Time { return time.UnixMilli(v).UTC() }

// AddRun records a run the service has accepted, or refused at its start (Refusal and Refused
// set: nothing was written into the table). An id, a table, a requester it knows, a mode (FULL
// or LITE) and the time it was asked are needed; an id used before is refused.
func (s *DB) AddRun(ctx context.Context, r Run) error {
	switch {
	case r.ID == "" || r.Table == "" || r.Asked.IsZero():
		return errors.New("state: a run needs an id, a table and the time it was asked")
	case r.Requester != BySchedule && r.Requester != ByAPI && r.Requester != ByPage && r.Requester != ByFabric:
		return fmt.Errorf("state: run %s: requester %q is not one the service knows", r.ID, r.Requester)
	case r.Mode != "FULL" && r.Mode != "LITE":
		return fmt.Errorf("state: run %s: mode %q is neither FULL nor LITE", r.ID, r.Mode)
	case r.RetainHours != nil && validHours(*r.RetainHours) != nil:
		return fmt.Errorf("state: run %s: %w", r.ID, validHours(*r.RetainHours))
	case r.RecordID != "" || r.Cancelled != "":
		return fmt.Errorf("state: run %s: a run is added before it is linked to its record or cancelled", r.ID)
	case (r.Refusal == "") != (r.Refused == nil) || (r.PlanChanged && r.Refusal == ""):
		return fmt.Errorf("state: run %s: a refusal needs its reason and its time", r.ID)
	}
	var refused any
	if r.Refused != nil {
		refused = ms(*r.Refused)
	}
	_, err := s.db.ExecContext(ctx,
		`INSERT INTO runs (id, table_id, requester, mode, dry_run, asked_ms, retain_hours, one_off_from, plan_digest, refusal, refused_ms, plan_changed) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, r.Table, r.Requester, r.Mode, r.DryRun, ms(r.Asked), r.RetainHours, r.OneOffFrom, r.PlanDigest, r.Refusal, refused, r.PlanChanged)
	if err != nil {
		return fmt.Errorf("state: recording run %s: %w", r.ID, err)
	}
	return nil
}

// Refuse records that run id ended, at, without writing its record beside the table, and why
// (planChanged: its plan was not the previewed one). A run refused already, or linked to its
// record, is ErrEnded; one the database does not hold, ErrNotFound.
func (s *DB) Refuse(ctx context.Context, id string, at time.Time, why string, planChanged bool) error {
	if why == "" || at.IsZero() {
		return fmt.Errorf("state: run %s: a refusal needs its reason and its time", id)
	}
	return s.update(ctx, id, `UPDATE runs SET refusal = ?, refused_ms = ?, plan_changed = ? WHERE id = ? AND refusal = '' AND record_id = ''`,
		why, ms(at), planChanged, id)
}

// SetRecord links run id to its run record beside the table, recordID. A run refused, or linked
// to another record, is ErrEnded; one the database does not hold, ErrNotFound.
func (s *DB) SetRecord(ctx context.Context, id, recordID string) error {
	if recordID == "" {
		return fmt.Errorf("state: run %s: no record id", id)
	}
	return s.update(ctx, id, `UPDATE runs SET record_id = ? WHERE id = ? AND refusal = '' AND (record_id = '' OR record_id = ?)`, recordID, id, recordID)
}

// SetCancelled records that the service asked run id to stop, and why; the first reason is kept
// (a cancel after the service's shutdown began is still the shutdown's). ErrNotFound for a run
// the database does not hold.
func (s *DB) SetCancelled(ctx context.Context, id, why string) error {
	if why == "" {
		return fmt.Errorf("state: run %s: a cancel needs its reason", id)
	}
	if _, err := s.db.ExecContext(ctx, `UPDATE runs SET cancelled = ? WHERE id = ? AND cancelled = ''`, why, id); err != nil {
		return fmt.Errorf("state: run %s: %w", id, err)
	}
	_, err := s.Run(ctx, id)
	return err
}

// update runs the UPDATE q of run id, which changes its row only while it has not ended:
// ErrNotFound when there is no such run, ErrEnded when the row was not changed.
func (s *DB) update(ctx context.Context, id, q string, args ...any) error {
	res, err := s.db.ExecContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("state: run %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		if _, err := s.Run(ctx, id); err != nil {
			return err
		}
		return fmt.Errorf("run %s: %w", id, ErrEnded)
	}
	return nil
}

const runColumns = `id, table_id, requester, mode, dry_run, asked_ms, record_id, retain_hours, one_off_from, plan_digest, cancelled, refusal, refused_ms, plan_changed`

func scanRun(sc interface{ Scan(...any) error }) (Run, error) {
	var r Run
	var asked int64
	var refused sql.NullInt64
	var hours sql.NullFloat64
	if err := sc.Scan(&r.ID, &r.Table, &r.Requester, &r.Mode, &r.DryRun, &asked, &r.RecordID, &hours, &r.OneOffFrom, &r.PlanDigest,
		&r.Cancelled, &r.Refusal, &refused, &r.PlanChanged); err != nil {
		return Run{}, err
	}
	r.Asked = fromMS(asked)
	if refused.Valid {
		t := fromMS(refused.Int64)
		r.Refused = &t
	}
	if hours.Valid {
		h := hours.Float64
		r.RetainHours = &h
	}
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
	return s.queryRuns(ctx, `SELECT `+runColumns+` FROM runs WHERE (? = '' OR table_id = ?) ORDER BY asked_ms DESC, id DESC LIMIT ?`, table, table, limit)
}

// RunsPage returns a page of the runs of table (every table when ""), newest first: limit
// runs after the first offset, and how many there are in all.
func (s *DB) RunsPage(ctx context.Context, table string, offset, limit int) ([]Run, int, error) {
	var total int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM runs WHERE (? = '' OR table_id = ?)`, table, table).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("state: %w", err)
	}
	out, err := s.queryRuns(ctx, `SELECT `+runColumns+` FROM runs WHERE (? = '' OR table_id = ?) ORDER BY asked_ms DESC, id DESC LIMIT ? OFFSET ?`, table, table, limit, offset)
	if err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

// RunsBefore returns runs of the tables given, newest first (by the time they were asked, then
// id), that come after the run asked at askedMS with id beforeID in that order (from the newest
// when beforeID is ""), at most limit: a list a page at a time, each page from where the one
// before ended, whatever was added since.
func (s *DB) RunsBefore(ctx context.Context, tables []string, askedMS int64, beforeID string, limit int) ([]Run, error) {
	if tables == nil {
		tables = []string{}
	}
	ids, err := json.Marshal(tables)
	if err != nil {
		return nil, fmt.Errorf("state: %w", err)
	}
	return s.queryRuns(ctx, `SELECT `+runColumns+` FROM runs WHERE table_id IN (SELECT value FROM json_each(?))
		 AND (? = '' OR asked_ms < ? OR (asked_ms = ? AND id < ?))
		 ORDER BY asked_ms DESC, id DESC LIMIT ?`, string(ids), beforeID, askedMS, askedMS, beforeID, limit)
}

// queryRuns returns the runs a query of runColumns selects, in its order (an empty list, not
// nil, when none).
func (s *DB) queryRuns(ctx context.Context, query string, args ...any) ([]Run, error) {
	rows, err := s.db.QueryContext(ctx, query, args...)
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
