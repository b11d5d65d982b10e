package deltalog

import (
	"math"
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
		{in: "1.5 hours", want: 90 * time.Minute},
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
		{in: "interval 9223372036854775 milliseconds 808 microseconds", want: max},
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
