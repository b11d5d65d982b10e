package schedule

import (
	"errors"
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Clock is a wall-clock time of day, to the minute.
type Clock struct{ Hour, Minute int }

// ParseClock parses HH:MM (00:00 to 23:59).
func ParseClock(s string) (Clock, error) {
	h, m, ok := strings.Cut(s, ":")
	if !ok || len(h) != 2 || len(m) != 2 {
		return Clock{}, fmt.Errorf("%q must be HH:MM, such as 01:30", s)
	}
	hh, err1 := strconv.Atoi(h)
	mm, err2 := strconv.Atoi(m)
	if err1 != nil || err2 != nil || hh < 0 || hh > 23 || mm < 0 || mm > 59 {
		return Clock{}, fmt.Errorf("%q must be HH:MM from 00:00 to 23:59 (midnight is 00:00)", s)
	}
	return Clock{hh, mm}, nil
}

func (c Clock) String() string { return fmt.Sprintf("%02d:%02d", c.Hour, c.Minute) }

func (c Clock) minutes() int { return c.Hour*60 + c.Minute }

// Window is an off-peak window of wall-clock times, [Start, End): a run starts inside it or
// not at all. End before Start crosses midnight (22:00 to 04:00).
type Window struct{ Start, End Clock }

// Length is the nominal length of the window (on a day the clocks change, the real one
// differs by the change).
func (w Window) Length() time.Duration {
	d := w.End.minutes() - w.Start.minutes()
	if d <= 0 {
		d += 24 * 60
	}
	return time.Duration(d) * time.Minute
}

// occurrence returns the window occurrence that holds t (in loc), if one does.
func (w Window) occurrence(t time.Time, loc *time.Location) (start, end time.Time, ok bool) {
	t = t.In(loc)
	m := t.Hour()*60 + t.Minute()
	y, mo, d := t.Date()
	at := func(day int, c Clock) time.Time { return time.Date(y, mo, day, c.Hour, c.Minute, 0, 0, loc) }
	s, e := w.Start.minutes(), w.End.minutes()
	switch {
	case s < e && m >= s && m < e:
		start, end = at(d, w.Start), at(d, w.End)
	case s > e && m >= s:
		start, end = at(d, w.Start), at(d+1, w.End)
	case s > e && m < e:
		start, end = at(d-1, w.Start), at(d, w.End)
	default:
		return time.Time{}, time.Time{}, false
	}
	// A wall-clock boundary the clocks skip over resolves a little off; t decides.
	return start, end, !t.Before(start) && t.Before(end)
}

// Table is the schedule of one table.
type Table struct {
	ID   string
	Cron *Cron
	// Window, when set, is read in the cron's zone.
	Window *Window
	Jitter time.Duration
}

// JitterOf is the delay of every run of table id: a fixed fraction of max chosen by a hash of
// the id, so tables that share a cron spread out, and the same table always starts at the
// same offset (tests are exact, restarts change nothing).
func JitterOf(id string, max time.Duration) time.Duration {
	if max <= 0 {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(id))
	return time.Duration(h.Sum64() % uint64(max))
}

// startOf is when the run of the cron fire f is planned to start, and whether that start is
// allowed: inside a window occurrence when there is a window. A jitter that would carry the
// start out of the window the fire is in is dropped for that fire.
func (t *Table) startOf(f time.Time) (time.Time, bool) {
	s := f.Add(JitterOf(t.ID, t.Jitter))
	if t.Window == nil {
		return s, true
	}
	loc := t.Cron.Location()
	if _, _, ok := t.Window.occurrence(s, loc); ok {
		return s, true
	}
	if _, _, ok := t.Window.occurrence(f, loc); ok {
		return f, true
	}
	return time.Time{}, false
}

// maxScan bounds the fires looked at in one call: a cron that fires every minute outside a
// narrow window needs at most 1440 a day.
const maxScan = 100000

// Decision is what one table should do at a moment.
type Decision struct {
	// Run is true when a run is due now.
	Run bool
	// Fire is the cron time the run honours (or the newest lost one); record it as the
	// table's Handled time once the run has started (or been lost).
	Fire time.Time
	// Start is the planned start of that run (jitter included).
	Start time.Time
	// Missed is true when fires since Handled are lost: missed while the service was down,
	// outside every window, or whose window closed before they could start. Fires older
	// than the due one are merged into it: after downtime there is one catch-up run.
	Missed bool
}

// Due decides at now for table t, whose fires up to handled are done. It is the misfire
// policy: the newest fire whose planned start has passed runs now if now is inside the
// window occurrence of that start (any time, without a window); otherwise it is lost and the
// table waits for the next fire. Older fires are never run on their own.
func Due(t *Table, handled, now time.Time) (Decision, error) {
	if t.Cron == nil {
		return Decision{}, errors.New("schedule: table has no cron")
	}
	from := t.scanFrom(handled, now)
	var d Decision
	d.Missed = from.After(handled) && !t.Cron.Next(handled).After(from)
	var last, lastStart time.Time
	lastOK := false
	n := 0
	for f := t.Cron.Next(from); !f.IsZero(); f = t.Cron.Next(f) {
		if n++; n > maxScan {
			return Decision{}, fmt.Errorf("schedule of %s: more than %d fires to look at before %s", t.ID, maxScan, now.UTC().Format(time.RFC3339))
		}
		s, ok := t.startOf(f)
		if f.After(now) || (ok && s.After(now)) {
			break
		}
		if !last.IsZero() {
			d.Missed = true
		}
		last, lastStart, lastOK = f, s, ok
	}
	if last.IsZero() {
		return Decision{}, nil
	}
	d.Fire, d.Start = last, lastStart
	if !lastOK {
		d.Missed = true
		return d, nil
	}
	if t.Window == nil {
		d.Run = true
		return d, nil
	}
	ws, we, ok := t.Window.occurrence(lastStart, t.Cron.Location())
	if ok && !now.Before(ws) && now.Before(we) {
		d.Run = true
		return d, nil
	}
	d.Missed = true
	return d, nil
}

// scanFrom is where Due starts looking at fires: handled, or, after a long downtime, a time
// late enough to bound the scan yet early enough that the newest fire whose start has passed
// comes after it. Doubling back from now finds a fire at or before now-jitter; every fire
// from there on is looked at.
func (t *Table) scanFrom(handled, now time.Time) time.Time {
	j := JitterOf(t.ID, t.Jitter)
	for back := time.Hour; back < 1<<62; back *= 2 {
		from := now.Add(-j - back)
		if !from.After(handled) {
			return handled
		}
		if f := t.Cron.Next(from); !f.IsZero() && !f.After(now.Add(-j)) {
			return from
		}
		if now.Sub(from) > 100*366*24*time.Hour {
			return from // nothing fired for a century: nothing will be found before either
		}
	}
	return handled
}

// NextStart is the planned start of the first fire after handled that may run (whose start
// is inside a window when there is one), or the zero time if none comes within the scan.
func NextStart(t *Table, handled time.Time) time.Time {
	if t.Cron == nil {
		return time.Time{}
	}
	n := 0
	for f := t.Cron.Next(handled); !f.IsZero() && n < maxScan; f = t.Cron.Next(f) {
		n++
		if s, ok := t.startOf(f); ok {
			return s
		}
	}
	return time.Time{}
}

// Scheduler keeps, for a set of tables, which fires are handled and which tables are
// running, and starts runs within a limit across tables and one at a time per table. It
// holds no clock: the caller passes the time to every call. It is not safe for concurrent
// use.
type Scheduler struct {
	tables  []*Table
	limit   int
	handled map[string]time.Time
	running map[string]bool
}

// New returns a scheduler of tables with at most limit runs at once. handled is the Handled
// time of each table (from the state database); a table missing from it is handled up to
// since, so a table added to the configuration does not catch up on fires before it was.
func New(tables []*Table, limit int, handled map[string]time.Time, since time.Time) (*Scheduler, error) {
	if limit < 1 {
		return nil, errors.New("schedule: the limit of concurrent runs must be at least 1")
	}
	s := &Scheduler{limit: limit, handled: map[string]time.Time{}, running: map[string]bool{}}
	for _, t := range tables {
		if t.Cron == nil {
			return nil, fmt.Errorf("schedule: table %s has no cron", t.ID)
		}
		if _, dup := s.handled[t.ID]; dup {
			return nil, fmt.Errorf("schedule: table %s given twice", t.ID)
		}
		h, ok := handled[t.ID]
		if !ok {
			h = since
		}
		s.handled[t.ID] = h
		s.tables = append(s.tables, t)
	}
	return s, nil
}

// Start is a run the scheduler started.
type Start struct {
	Table string
	Fire  time.Time
	// Mode is left to the caller (see ModeFor).
}

// Tick starts the runs due at now: one per table at most, tables that are running
// (Running) left waiting, and no more than the limit across tables. When more are due than
// the limit allows, the run whose window closes first goes first (runs without a window
// last), then the earliest planned start, then the table whose fires are handled least far
// (it has waited longest), then the table id. Fires that can no longer run are
// marked handled.
func (s *Scheduler) Tick(now time.Time) ([]Start, error) {
	type due struct {
		t        *Table
		d        Decision
		deadline time.Time // the end of the window the start is in; zero: none
	}
	var ready []due
	for _, t := range s.tables {
		d, err := Due(t, s.handled[t.ID], now)
		if err != nil {
			return nil, err
		}
		if !d.Run {
			if !d.Fire.IsZero() {
				s.handled[t.ID] = d.Fire // lost: the next fire decides
			}
			continue
		}
		if s.running[t.ID] {
			continue // waits, inside its window, for the run in progress
		}
		r := due{t: t, d: d}
		if t.Window != nil {
			_, r.deadline, _ = t.Window.occurrence(d.Start, t.Cron.Location())
		}
		ready = append(ready, r)
	}
	sort.Slice(ready, func(i, j int) bool {
		a, b := ready[i].deadline, ready[j].deadline
		if !a.Equal(b) {
			return b.IsZero() || (!a.IsZero() && a.Before(b))
		}
		if !ready[i].d.Start.Equal(ready[j].d.Start) {
			return ready[i].d.Start.Before(ready[j].d.Start)
		}
		// Missed fires merge into the newest, so tables left waiting share its start: the one
		// handled longest ago (waiting longest) goes first, or the same tables would win every
		// tick and the others never run.
		if ha, hb := s.handled[ready[i].t.ID], s.handled[ready[j].t.ID]; !ha.Equal(hb) {
			return ha.Before(hb)
		}
		return ready[i].t.ID < ready[j].t.ID
	})
	var out []Start
	for _, r := range ready {
		if len(s.running) >= s.limit {
			break
		}
		s.running[r.t.ID] = true
		s.handled[r.t.ID] = r.d.Fire
		out = append(out, Start{Table: r.t.ID, Fire: r.d.Fire})
	}
	return out, nil
}

// Running marks table id as running (a run started through the API, or seen in the table's
// own log): scheduled runs of it wait.
func (s *Scheduler) Running(id string) { s.running[id] = true }

// Finished marks the run of table id as ended.
func (s *Scheduler) Finished(id string) { delete(s.running, id) }

// Handled is the time up to which table id's fires are done (to keep in the state database).
func (s *Scheduler) Handled(id string) time.Time { return s.handled[id] }

// FullOrLite is the mode of a run in mode auto: FULL when there was never a FULL run or the
// last one is at least every ago, LITE otherwise. (A LITE run the log cannot serve, the
// DELTA_CANNOT_VACUUM_LITE error, is run FULL by the caller.)
func FullOrLite(lastFull time.Time, every time.Duration, now time.Time) string {
	if lastFull.IsZero() || now.Sub(lastFull) >= every {
		return "full"
	}
	return "lite"
}
