package vacuum

import (
	"fmt"
	"time"
)

// trapHours is 2555: the number of days in seven years, often written as hours by mistake.
const trapHours = 2555

// SevenYearsHours is seven years of 365 days in hours (2555 days): the retention regulated
// tables usually mean.
const SevenYearsHours = trapHours * 24

// RetentionNote warns of a retention of exactly 2555 hours (what is named: "RETAIN 2555 HOURS",
// "the table's delta.deletedFileRetentionDuration"): 2555 is the number of days in seven years,
// and 2555 hours are about 106 days. It is "" for any other retention. Every entry point that
// takes a retention says it: RETAIN and --retain-hours (a run's warnings), ALTER TABLE, the
// service's policies, Python (through the run's warnings).
func RetentionNote(what string, d time.Duration) string {
	if d != trapHours*time.Hour {
		return ""
	}
	return fmt.Sprintf("%s is 2555 hours, about 106 days, not 7 years: seven years are 2555 days (%d hours: RETAIN %d HOURS, or 'interval 2555 days')",
		what, SevenYearsHours, SevenYearsHours)
}
