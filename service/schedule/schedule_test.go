package schedule

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func zone(t *testing.T, name string) *time.Location {
	t.Helper()
	l, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func mustCron(t *testing.T, expr string, loc *time.Location) *Cron {
	t.Helper()
	c, err := ParseCron(expr, loc)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestParseClock(t *testing.T) {
	for _, s := range []string{"00:00", "23:59", "01:30"} {
		c, err := ParseClock(s)
		if err != nil || c.String() != s {
			t.Errorf("%s: got %v, %v", s, c, err)
		}
	}
	for _, s := range []string{"", "1:30", "01:3", "24:00", "12:60", "-1:00", "0a:00", "01:00:00", "01-00"} {
		if _, err := ParseClock(s); err == nil {
			t.Errorf("%q accepted", s)
		}
	}
}

func TestParseCron(t *testing.T) {
	for _, e := range []string{"0 2 * * *", "*/15 1-4 * * 1-5", "30 3 1 * *", "0 0 * * SUN"} {
		if _, err := ParseCron(e, time.UTC); err != nil {
			t.Errorf("%s: %v", e, err)
		}
	}
	for _, e := range []string{"", "0 2 * *", "0 0 2 * * *", "@daily", "@every 1h", "TZ=UTC 0 2 * * *", "CRON_TZ=UTC 0 2 * * *", "61 2 * * *", "0 2 32 * *", "x 2 * * *"} {
		if _, err := ParseCron(e, time.UTC); err == nil {
			t.Errorf("%q accepted", e)
		}
	}
	if _, err := ParseCron("0 2 * * *", nil); err == nil {
		t.Error("no zone accepted")
	}
}

// TestCronDST: the night the clocks go forward a time that does not exist does not fire; the
// night they go back a time that happens twice fires once.
func TestCronDST(t *testing.T) {
	ams := zone(t, "Europe/Amsterdam")
	fires := func(expr string, from, to time.Time) []string {
		var out []string
		c := mustCron(t, expr, ams)
		for f := c.Next(from); f.Before(to); f = c.Next(f) {
			out = append(out, f.UTC().Format("01-02T15:04Z"))
		}
		return strings.Fields(strings.Join(out, " "))
	}
	spring := fires("30 2 * * *", time.Date(2026, 3, 28, 12, 0, 0, 0, ams), time.Date(2026, 3, 31, 0, 0, 0, 0, ams))
	// 29 March 02:30 does not exist in Amsterdam.
	if got, want := strings.Join(spring, " "), "03-30T00:30Z"; got != want {
		t.Errorf("spring forward: got %s, want %s", got, want)
	}
	autumn := fires("30 2 * * *", time.Date(2026, 10, 24, 12, 0, 0, 0, ams), time.Date(2026, 10, 27, 0, 0, 0, 0, ams))
	if got, want := strings.Join(autumn, " "), "10-25T00:30Z 10-26T01:30Z"; got != want {
		t.Errorf("fall back: got %s, want %s (once, the first time)", got, want)
	}
	hourly := fires("0 * * * *", time.Date(2026, 10, 25, 1, 30, 0, 0, ams), time.Date(2026, 10, 25, 4, 30, 0, 0, ams))
	// 02:00 CEST (00:00Z), [02:00 CET skipped], 03:00 CET (02:00Z), 04:00 CET (03:00Z).
	if got, want := strings.Join(hourly, " "), "10-25T00:00Z 10-25T02:00Z 10-25T03:00Z"; got != want {
		t.Errorf("hourly on fall back: got %s, want %s", got, want)
	}
	if f := mustCron(t, "0 0 30 2 *", ams).Next(time.Date(2026, 1, 1, 0, 0, 0, 0, ams)); !f.IsZero() {
		t.Errorf("30 February fired at %s", f)
	}
}

func TestSpringForwardDay(t *testing.T) {
	ams := zone(t, "Europe/Amsterdam")
	c := mustCron(t, "30 2 * * *", ams)
	f := c.Next(time.Date(2026, 3, 28, 12, 0, 0, 0, ams))
	if want := time.Date(2026, 3, 30, 2, 30, 0, 0, ams); !f.Equal(want) {
		t.Errorf("got %s, want %s: 29 March 02:30 does not exist in Amsterdam", f, want)
	}
}

func TestWindow(t *testing.T) {
	utc := time.UTC
	at := func(h, m int) time.Time { return time.Date(2026, 6, 10, h, m, 0, 0, utc) }
	cross := Window{Clock{22, 0}, Clock{4, 0}}
	day := Window{Clock{1, 0}, Clock{5, 0}}
	cases := []struct {
		w    Window
		t    time.Time
		in   bool
		from time.Time
	}{
		{cross, at(23, 0), true, at(22, 0)},
		{cross, at(3, 59), true, at(22, 0).AddDate(0, 0, -1)},
		{cross, at(4, 0), false, time.Time{}},
		{cross, at(21, 59), false, time.Time{}},
		{cross, at(22, 0), true, at(22, 0)},
		{cross, at(0, 0), true, at(22, 0).AddDate(0, 0, -1)},
		{day, at(1, 0), true, at(1, 0)},
		{day, at(4, 59), true, at(1, 0)},
		{day, at(5, 0), false, time.Time{}},
		{day, at(0, 59), false, time.Time{}},
	}
	for _, tc := range cases {
		s, _, ok := tc.w.occurrence(tc.t, utc)
		if ok != tc.in || (ok && !s.Equal(tc.from)) {
			t.Errorf("%v..%v at %s: got %v from %s, want %v from %s", tc.w.Start, tc.w.End, tc.t.Format("15:04"), ok, s, tc.in, tc.from)
		}
	}
	if cross.Length() != 6*time.Hour || day.Length() != 4*time.Hour {
		t.Errorf("got lengths %s %s", cross.Length(), day.Length())
	}
}

func TestJitterOf(t *testing.T) {
	if JitterOf("sales", 0) != 0 {
		t.Error("jitter without a maximum")
	}
	seen := map[time.Duration]bool{}
	for i := 0; i < 20; i++ {
		id := fmt.Sprintf("table-%d", i)
		j := JitterOf(id, time.Hour)
		if j < 0 || j >= time.Hour || j != JitterOf(id, time.Hour) {
			t.Errorf("%s: got %s", id, j)
		}
		seen[j] = true
	}
	if len(seen) < 15 {
		t.Errorf("20 tables share %d jitters: they do not spread", len(seen))
	}
}

func TestDue(t *testing.T) {
	utc := time.UTC
	d := func(day, h, m int) time.Time { return time.Date(2026, 6, day, h, m, 0, 0, utc) }
	win := &Window{Clock{1, 0}, Clock{5, 0}}
	daily := &Table{ID: "t", Cron: mustCron(t, "0 2 * * *", utc), Window: win}
	noWin := &Table{ID: "t", Cron: mustCron(t, "0 2 * * *", utc)}
	outside := &Table{ID: "t", Cron: mustCron(t, "0 12 * * *", utc), Window: win}
	cases := []struct {
		name             string
		t                *Table
		handled, now     time.Time
		run, missed      bool
		fire             time.Time
		wantZeroDecision bool
	}{
		{name: "before the fire", t: daily, handled: d(1, 3, 0), now: d(2, 1, 59), wantZeroDecision: true},
		{name: "at the fire", t: daily, handled: d(1, 3, 0), now: d(2, 2, 0), run: true, fire: d(2, 2, 0)},
		{name: "late inside the window", t: daily, handled: d(1, 3, 0), now: d(2, 4, 59), run: true, fire: d(2, 2, 0)},
		{name: "window closed", t: daily, handled: d(1, 3, 0), now: d(2, 5, 0), missed: true, fire: d(2, 2, 0)},
		{name: "already handled", t: daily, handled: d(2, 2, 0), now: d(2, 3, 0), wantZeroDecision: true},
		{name: "downtime, back inside a window: one catch-up", t: daily, handled: d(1, 3, 0), now: d(5, 3, 0), run: true, missed: true, fire: d(5, 2, 0)},
		{name: "downtime, back outside the window: wait", t: daily, handled: d(1, 3, 0), now: d(5, 6, 0), missed: true, fire: d(5, 2, 0)},
		{name: "downtime, back inside the window before its fire", t: daily, handled: d(1, 3, 0), now: d(5, 1, 30), missed: true, fire: d(4, 2, 0)},
		{name: "no window: catch-up any time", t: noWin, handled: d(1, 3, 0), now: d(5, 13, 0), run: true, missed: true, fire: d(5, 2, 0)},
		{name: "fire outside the window never runs", t: outside, handled: d(1, 13, 0), now: d(2, 12, 0), missed: true, fire: d(2, 12, 0)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Due(tc.t, tc.handled, tc.now)
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantZeroDecision {
				if got != (Decision{}) {
					t.Errorf("got %+v, want nothing", got)
				}
				return
			}
			if got.Run != tc.run || got.Missed != tc.missed || !got.Fire.Equal(tc.fire) {
				t.Errorf("got run %v missed %v fire %s, want run %v missed %v fire %s", got.Run, got.Missed, got.Fire, tc.run, tc.missed, tc.fire)
			}
		})
	}
}

func TestDueJitter(t *testing.T) {
	utc := time.UTC
	tb := &Table{ID: "sales", Cron: mustCron(t, "0 2 * * *", utc), Window: &Window{Clock{1, 0}, Clock{5, 0}}, Jitter: time.Hour}
	j := JitterOf("sales", time.Hour)
	if j == 0 {
		t.Fatal("pick another id: its jitter is 0")
	}
	fire := time.Date(2026, 6, 2, 2, 0, 0, 0, utc)
	handled := fire.Add(-time.Hour)
	if d, _ := Due(tb, handled, fire.Add(j-time.Millisecond)); d.Run {
		t.Errorf("ran %s before its jittered start", time.Millisecond)
	}
	if d, _ := Due(tb, handled, fire.Add(j)); !d.Run || !d.Start.Equal(fire.Add(j)) || !d.Fire.Equal(fire) {
		t.Errorf("got %+v, want a run at %s", d, fire.Add(j))
	}
	if got := NextStart(tb, handled); !got.Equal(fire.Add(j)) {
		t.Errorf("NextStart: got %s, want %s", got, fire.Add(j))
	}
	// A jitter that would start the run after the window closes is dropped.
	tight := &Table{ID: "sales", Cron: mustCron(t, "0 2 * * *", utc), Window: &Window{Clock{1, 0}, Clock{2, 0}.add(j - time.Minute)}, Jitter: time.Hour}
	if d, _ := Due(tight, handled, fire); !d.Run || !d.Start.Equal(fire) {
		t.Errorf("got %+v, want a run at the fire itself", d)
	}
}

func (c Clock) add(d time.Duration) Clock {
	m := (c.minutes() + int(d/time.Minute)) % (24 * 60)
	return Clock{m / 60, m % 60}
}

func TestDueLongDowntime(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	every := &Table{ID: "t", Cron: mustCron(t, "* * * * *", time.UTC)}
	for _, handled := range []time.Time{{}, now.AddDate(-3, 0, 0)} {
		d, err := Due(every, handled, now)
		if err != nil || !d.Run || !d.Fire.Equal(now) || !d.Missed {
			t.Errorf("handled %s: got %+v, %v", handled, d, err)
		}
	}
	yearly := &Table{ID: "t", Cron: mustCron(t, "0 0 1 1 *", time.UTC)}
	d, err := Due(yearly, now.AddDate(-5, 0, 0), now)
	if err != nil || !d.Fire.Equal(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("yearly: got %+v, %v", d, err)
	}
	never := &Table{ID: "t", Cron: mustCron(t, "0 0 30 2 *", time.UTC)}
	if d, err := Due(never, time.Time{}, now); err != nil || d != (Decision{}) {
		t.Errorf("never: got %+v, %v", d, err)
	}
}

func TestFullOrLite(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	week := 7 * 24 * time.Hour
	for _, tc := range []struct {
		last time.Time
		want string
	}{
		{time.Time{}, "full"},
		{now.Add(-week), "full"},
		{now.Add(-week + time.Millisecond), "lite"},
	} {
		if got := FullOrLite(tc.last, week, now); got != tc.want {
			t.Errorf("last FULL %s: got %s, want %s", tc.last, got, tc.want)
		}
	}
}

func TestNewRefuses(t *testing.T) {
	c := mustCron(t, "0 2 * * *", time.UTC)
	if _, err := New([]*Table{{ID: "a", Cron: c}}, 0, nil, time.Time{}); err == nil {
		t.Error("limit 0 accepted")
	}
	if _, err := New([]*Table{{ID: "a", Cron: c}, {ID: "a", Cron: c}}, 1, nil, time.Time{}); err == nil {
		t.Error("a table twice accepted")
	}
	if _, err := New([]*Table{{ID: "a"}}, 1, nil, time.Time{}); err == nil {
		t.Error("a table without cron accepted")
	}
}

// TestTickOrder: with one slot, the run whose window closes first goes first, a run without
// a window last; a table marked running (a run through the API) holds a slot, and its
// scheduled run waits for it inside its window.
func TestTickOrder(t *testing.T) {
	utc := time.UTC
	c := mustCron(t, "0 2 * * *", utc)
	tables := []*Table{
		{ID: "a-open", Cron: c},
		{ID: "b-wide", Cron: c, Window: &Window{Clock{1, 0}, Clock{6, 0}}},
		{ID: "c-narrow", Cron: c, Window: &Window{Clock{2, 0}, Clock{3, 0}}},
	}
	since := time.Date(2026, 6, 1, 12, 0, 0, 0, utc)
	s, err := New(tables, 1, nil, since)
	if err != nil {
		t.Fatal(err)
	}
	s.Running("c-narrow")
	at := time.Date(2026, 6, 2, 2, 0, 0, 0, utc)
	var order []string
	for now := at; now.Before(at.Add(5 * time.Hour)); now = now.Add(time.Minute) {
		if now.Equal(at.Add(30 * time.Minute)) {
			s.Finished("c-narrow") // the API run ends; its scheduled run may start now
		}
		started, err := s.Tick(now)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range started {
			order = append(order, st.Table+"@"+now.Format("15:04"))
			s.Finished(st.Table) // each run takes no time
		}
	}
	if got, want := strings.Join(order, " "), "c-narrow@02:30 b-wide@02:31 a-open@02:32"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
