package deltalog

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestParseInterval(t *testing.T) {
	max := time.Duration(math.MaxInt64)
	tests := []struct {
		in   string
		want time.Duration
		bad  bool
	}{
		{in: "interval 1 week", want: 7 * 24 * time.Hour},
		{in: "interval 3 days 12 hours", want: 84 * time.Hour},
		// Spark: "'hours' cannot have fractional part". An earlier deltavacuum read 90 minutes
		// and vacuumed a table no other engine can read.
		{in: "1.5 hours", bad: true},
		{in: "INTERVAL 2 DAYS", want: 48 * time.Hour},
		{in: "interval 1 month", bad: true},
		{in: "interval -1 days", bad: true},
		{in: "interval 0x10 days", bad: true},
		{in: "interval 1_000 days", bad: true},
		{in: "interval 1e3 days", bad: true},
		{in: "interval 1/2 days", bad: true},
		{in: "interval 1.2.3 days", bad: true},
		{in: "interval . days", bad: true},
		{in: "interval 7", bad: true},
		// Longer than a Duration: as long as one can be, never a wrapped negative duration
		// (which would turn the retention check off).
		{in: "interval 9223372036854776 microseconds", want: max},
		{in: "interval 9223372036854775807 microseconds", want: max},
		// One microsecond beyond a long: Spark's addExact fails, so does the reader (it used
		// to read the longest Duration, which was safe too).
		{in: "interval 9223372036854775 milliseconds 808 microseconds", bad: true},
		{in: "interval 15260 weeks", want: max},
		{in: "interval 15250 weeks", want: 15250 * 7 * 24 * time.Hour},
		{in: "interval 9223372036854775806 microseconds -9223372036854775806 microseconds", want: 0},
	}
	for _, tt := range tests {
		got, err := ParseInterval(tt.in)
		if tt.bad {
			if err == nil {
				t.Errorf("ParseInterval(%q) = %v, want an error", tt.in, got)
			}
			continue
		}
		if err != nil || got != tt.want || got < 0 {
			t.Errorf("ParseInterval(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

// TestParseIntervalAsSpark: ParseInterval accepts exactly what Delta Spark's
// parseCalendarInterval and IntervalUtils.stringToInterval accept, with Spark's value (each case
// walked through Spark's state machine), and refuses what Spark cannot read. A case that
// fails names the rule that broke.
func TestParseIntervalAsSpark(t *testing.T) {
	const day = 24 * time.Hour
	max := time.Duration(math.MaxInt64)
	good := []struct {
		in   string
		want time.Duration
	}{
		{"interval 7 days", 7 * day},
		{"7 days", 7 * day},                        // "interval " is added when absent
		{"  interval 7 days  ", 7 * day},           // Java String.trim
		{"\x00\x01interval 7 days\x1f", 7 * day},   // String.trim drops every char <= U+0020
		{"InTeRvAl 7 DaYs", 7 * day},               // case
		{"interval   7 \t days", 7 * day},          // any run of whitespace inside
		{"interval 7\x1cdays", 7 * day},            // Character.isWhitespace(0x1c)
		{"interval 007 days", 7 * day},             // leading zeros
		{"interval 1 day", day},                    // singular
		{"interval 1 days", day},                   // the 's' is optional on any count
		{"+5 days", 5 * day},                       // a '+' sign
		{"+ 5 days", 5 * day},                      // whitespace after a sign
		{"interval 1 day -1 hour", 23 * time.Hour}, // a negative part, non-negative total
		{"interval 1 day 1 day", 2 * day},          // a unit twice adds up
		{"interval 1 day 0 months", day},           // zero months are no months
		{"interval 0 days", 0},                     // Spark accepts a zero retention
		{"-0 days", 0},                             // minus zero
		{"interval 1.5 seconds", 1500 * time.Millisecond},
		{"interval 1. second", time.Second}, // a point without digits, on seconds
		{"interval .5 seconds", 500 * time.Millisecond},
		{"interval -.5 seconds 1 second", 500 * time.Millisecond},
		{"interval 1.123456789 seconds", 1123456 * time.Microsecond}, // truncated to microseconds
		{"interval 2 weeks 1 day 3 hours 4 minutes 5 seconds 6 milliseconds 7 microseconds",
			15*day + 3*time.Hour + 4*time.Minute + 5*time.Second + 6*time.Millisecond + 7*time.Microsecond},
		{"interval 2147483647 days", max},                  // the largest day count: longer than a Duration
		{"interval 9223372036854775807 microseconds", max}, // the largest long
		{"interval 213503983 days", max},                   // Spark wraps this total to 16 hours; the reader keeps every file
	}
	for _, tt := range good {
		got, err := ParseInterval(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseInterval(%q) = %v, %v; Spark reads %v", tt.in, got, err, tt.want)
		}
	}
	for _, in := range []string{
		// Empty, or only the keyword.
		"", "   ", "interval", "interval ", "INTERVAL",
		// Fractions on anything but seconds ("'days' cannot have fractional part").
		"interval 1.5 days", "interval 36.5 hours", "interval 1. hour", "interval 1.0 days",
		"interval .5 minutes", "interval 1.5 weeks", "interval 0.5 milliseconds", "interval 1.5 microseconds",
		// Ten digits after the point ("nanosecond precision").
		"interval 1.1234567890 seconds",
		// Months and years (their length varies; Spark asserts on reading them).
		"interval 1 month", "2 years", "interval 1 month -30 days", "interval 1 year",
		// Negative totals.
		"interval -1 days", "-1 days", "- 5 days", "interval 1 day -2 days", "interval -1 microsecond",
		// Not Spark's numbers.
		"interval 0x10 days", "interval 1_000 days", "interval 1e3 days", "1e3 days", "interval 1/2 days",
		"interval 1.2.3 days", "interval . days", "interval . seconds", "interval --5 days",
		"interval +-5 days", "interval 1,5 seconds", "interval five days",
		// Units: missing, glued, abbreviated, doubled, unknown.
		"interval 7", "interval days", "interval 7 days 3", "interval 7days", "interval 7 days5 hours",
		"interval 7 dayss", "interval 7 d", "interval 7 hrs", "interval 7 secs", "interval 7 ms",
		"interval 7 fortnights", "interval 7 days,", "interval 7 days; 1 hour",
		// The keyword must be followed by a space (Delta prefixes "interval " otherwise).
		"interval\t7 days", "intervals 7 days", "interval interval 7 days", "interval7 days",
		// Anything but ASCII: fullwidth digits, no-break and ideographic spaces, lookalike letters.
		"interval \uff17 days", "interval 7\u00a0days", "interval 7 d\u0430ys", "interval 7 days\u3000",
		"\u0131nterval 7 days", "interval 7 days\u200b", "interval 7 \u212a",
		// Overflow of Spark's fields: days an int, digits and microseconds a long.
		"interval 2147483648 days", "interval 2234567890 days", "interval 2147483647 days 1 day",
		"interval 306783379 weeks", "interval 99999999999999999999 days",
		"interval 9223372036854775808 microseconds", "interval -9223372036854775808 microseconds",
		"interval 2562047789 hours", "interval 153722867281 minutes", "interval 9223372036855 seconds",
		"interval 9223372036854776 milliseconds", "interval 178956971 years",
		// Each overflow is checked where Spark checks it, not only on the total: a day count
		// beyond an int although the sum fits, weeks that wrap an int to 3 days, digits that
		// wrap a long to 1 microsecond.
		"interval -1 days 2147483648 days", "interval 613566757 weeks",
		"interval 18446744073709551617 microseconds",
	} {
		if got, err := ParseInterval(in); err == nil {
			t.Errorf("ParseInterval(%q) = %v; Spark cannot read it, want an error", in, got)
		}
		if err := ValidateInterval(in); err == nil {
			t.Errorf("ValidateInterval(%q) accepted a value Spark cannot read", in)
		}
	}
}

// TestParseIntervalNonASCII: a value with a character outside ASCII is refused as such (Spark
// fails on its bytes), not as a confusing unknown unit.
func TestParseIntervalNonASCII(t *testing.T) {
	for _, in := range []string{"interval \uff17 days", "interval 7\u00a0days", "interval 7 d\u0430ys"} {
		if _, err := ParseInterval(in); err == nil || !strings.Contains(err.Error(), "ASCII") {
			t.Errorf("ParseInterval(%q): %v; want a refusal naming ASCII", in, err)
		}
	}
}

// TestValidateInterval: what ALTER TABLE may write. Every value the reader accepts is
// accepted, except a total beyond the 2^63-1 microseconds Spark computes it in (Spark's long
// wraps, and its own validation then passes values it reads as a few hours).
func TestValidateInterval(t *testing.T) {
	for _, in := range []string{
		"interval 7 days", "1 week", "interval 1.5 seconds", "+5 days", "interval 1 day -1 hour",
		"interval 106751991 days", "interval 106751991 days 4 hours", // just within a long of microseconds
		"interval 9223372036854775807 microseconds", "interval 2147483647 hours",
	} {
		if err := ValidateInterval(in); err != nil {
			t.Errorf("ValidateInterval(%q): %v", in, err)
		}
	}
	for _, in := range []string{
		"interval 106751992 days", "interval 106751991 days 5 hours", "interval 213503983 days",
		"interval 2147483647 days", "interval 15250285 weeks",
	} {
		if err := ValidateInterval(in); err == nil {
			t.Errorf("ValidateInterval(%q) accepted a total Spark's long cannot hold", in)
		}
		if d, err := ParseInterval(in); err != nil || d != time.Duration(math.MaxInt64) {
			t.Errorf("ParseInterval(%q) = %v, %v; want the longest Duration (keep every file)", in, d, err)
		}
	}
}
