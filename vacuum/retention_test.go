package vacuum

import (
	"errors"
	"math"
	"testing"
	"time"
)

// TestRetentionOf: RETAIN n HOURS is rounded half up to whole hours; NaN, a negative number
// and more hours than a duration holds are refused, each with its error.
func TestRetentionOf(t *testing.T) {
	for _, c := range []struct {
		hours float64
		want  time.Duration
		err   error
	}{
		{0, 0, nil},
		{0.49, 0, nil},
		{0.5, time.Hour, nil},
		{1.5, 2 * time.Hour, nil},
		{2.5, 3 * time.Hour, nil},
		{167.4, 167 * time.Hour, nil},
		{MaxRetentionHours, time.Duration(MaxRetentionHours) * time.Hour, nil},
		{MaxRetentionHours + 1, 0, ErrRetentionTooLarge},
		{math.Inf(1), 0, ErrRetentionTooLarge},
		{math.NaN(), 0, ErrRetentionNotANumber},
		{-0.1, 0, ErrNegativeRetention},
		{math.Inf(-1), 0, ErrNegativeRetention},
	} {
		got, err := RetentionOf(c.hours)
		var he *HoursError
		if got != c.want || !errors.Is(err, c.err) || (c.err != nil) != errors.As(err, &he) {
			t.Errorf("RetentionOf(%v) = %v, %v; want %v, %v", c.hours, got, err, c.want, c.err)
		}
	}
}

// TestPolicyRetainHours: a policy's retention is never shorter than a retention the table sets
// itself; a table without the property takes the policy's as it is; no policy retention is
// the table's own.
func TestPolicyRetainHours(t *testing.T) {
	for _, c := range []struct {
		name     string
		property string // "" leaves it unset
		policy   *float64
		want     *float64
	}{
		{"no policy", "interval 10 days", nil, nil},
		{"policy longer than the table's", "interval 2 days", hours(72), hours(72)},
		{"policy shorter than the table's", "interval 10 days", hours(24), hours(240)},
		{"table without the property", "", hours(24), hours(24)},
	} {
		t.Run(c.name, func(t *testing.T) {
			spec := tableSpec{}
			if c.property != "" {
				spec.configuration = map[string]string{"delta.deletedFileRetentionDuration": c.property}
			}
			p, err := newTable(t, spec).planner(retain0)
			if err != nil {
				t.Fatal(err)
			}
			got, err := PolicyRetainHours(p.Snapshot(), c.policy)
			if err != nil || (got == nil) != (c.want == nil) || (got != nil && *got != *c.want) {
				t.Errorf("got %v, %v; want %v", got, err, c.want)
			}
		})
	}
}
