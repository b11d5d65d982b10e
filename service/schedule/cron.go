package schedule

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Cron is a parsed five-field cron expression (minute hour day-of-month month day-of-week)
// evaluated in a time zone.
type Cron struct {
	expr  string
	loc   *time.Location
	sched cron.Schedule
}

// fiveFields is the standard cron syntax without descriptors (@daily, @every): what the
// documentation promises and nothing more.
var fiveFields = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow)

// ParseCron parses a five-field cron expression to be evaluated in loc. A time zone prefix
// (TZ=, CRON_TZ=) is refused: the zone is given on its own, once.
func ParseCron(expr string, loc *time.Location) (*Cron, error) {
	if loc == nil {
		return nil, errors.New("cron: no time zone")
	}
	e := strings.TrimSpace(expr)
	if strings.HasPrefix(e, "TZ=") || strings.HasPrefix(e, "CRON_TZ=") {
		return nil, fmt.Errorf("cron %q: give the time zone with the timezone key, not in the expression", expr)
	}
	if strings.HasPrefix(e, "@") {
		return nil, fmt.Errorf("cron %q: descriptors (@daily, @every …) are not accepted; write the five fields (minute hour day-of-month month day-of-week)", expr)
	}
	if n := len(strings.Fields(e)); n != 5 {
		return nil, fmt.Errorf("cron %q: has %d fields, want 5 (minute hour day-of-month month day-of-week)", expr, n)
	}
	s, err := fiveFields.Parse(e)
	if err != nil {
		return nil, fmt.Errorf("cron %q: %v", expr, err)
	}
	return &Cron{expr: e, loc: loc, sched: s}, nil
}

// String is the expression as parsed.
func (c *Cron) String() string { return c.expr }

// Location is the zone the expression is evaluated in.
func (c *Cron) Location() *time.Location { return c.loc }

// Next is the first time the expression fires strictly after t, or the zero time if it
// never does (a 30 February). On a day when the clocks go forward, a time that does not exist
// (02:30 in Europe/Amsterdam on the last Sunday of March) does not fire; on a day they go
// back, a time that happens twice fires once, the first time (see docs/service.md).
func (c *Cron) Next(t time.Time) time.Time {
	n := c.sched.Next(t.In(c.loc))
	// The cron library fires a repeated wall-clock time twice; a table vacuumed once a day
	// must not be vacuumed twice the night the clocks go back.
	for i := 0; i < 3 && !n.IsZero() && repeated(n); i++ {
		n = c.sched.Next(n)
	}
	return n
}

// repeated reports whether the wall-clock minute of t (in its zone) already happened earlier,
// within the three hours before (the clocks went back in between).
func repeated(t time.Time) bool {
	y, mo, d := t.Date()
	h, mi, _ := t.Clock()
	for back := 15 * time.Minute; back <= 3*time.Hour; back += 15 * time.Minute {
		p := t.Add(-back)
		py, pmo, pd := p.Date()
		ph, pmi, _ := p.Clock()
		if py == y && pmo == mo && pd == d && ph == h && pmi == mi {
			return true
		}
	}
	return false
}
