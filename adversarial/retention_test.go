package adversarial

// The table's retention and the properties that set it: a retention that wraps around
// time.Duration, ALTER TABLE … SET TBLPROPERTIES with a key in another case or with a value
// Spark cannot read. Each test asserts the safe behaviour, so it fails while the bug it names
// is there, and says which review found it.

import (
	"testing"
	"time"
)

// TestRetentionOverflowSkipsSafetyCheck: a table retention of about 292 years, written
// as a number of microseconds that lands within a float64 rounding step of 2^63 ns, passes
// ParseInterval's "too long" test (f > math.MaxInt64 is false for f == 2^63) and converts to
// a negative time.Duration (math.MinInt64 on amd64). Every RETAIN is then "not shorter than
// the table's retention": RETAIN 0 HOURS with the safety check ON is accepted, and the files
// of tombstones an hour old, which the table keeps for 292 years, are deleted. Spark reads the
// same interval as 9.2e15 microseconds (fits a long) and refuses the run.
// Found by the first review, of the deletion paths.
func TestRetentionOverflowSkipsSafetyCheck(t *testing.T) {
	for _, interval := range []string{
		"interval 9223372036854776 microseconds",                     // 2^63 + 192 ns
		"interval 9223372036.854775808 seconds",                      // exactly 2^63 ns
		"interval 106751 days 23 hours 47 minutes 16.854776 seconds", // the same, spelled out
	} {
		t.Run(interval, func(t *testing.T) {
			tb := newLocalTableIn(t, t.TempDir(), protocolLine,
				metadataWith(`{"delta.deletedFileRetentionDuration":`+jsonString(interval)+`}`))
			tb.commit(addLine("recent-tombstone.parquet"))
			tb.commit(removeAt("recent-tombstone.parquet", time.Now().Add(-time.Hour)))
			tb.file("recent-tombstone.parquet", 30*day)
			// No --conf: the retention safety check is on.
			code, stdout, stderr := run(t, "vacuum", tb.dir, "--retain-hours", "0")
			t.Logf("exit %d: %s%s", code, stdout, stderr)
			tb.mustExist("recent-tombstone.parquet")
			if code == 0 {
				t.Errorf("RETAIN 0 HOURS was accepted with the safety check on, for a table whose retention is %q", interval)
			}
		})
	}
}

// TestAlterTableKeyInAnotherCase: ALTER TABLE … SET TBLPROPERTIES stores a delta.* key
// exactly as typed. Spark matches delta.* keys case-insensitively and stores the canonical
// spelling (DeltaConfigs.validateConfigurations: 'DELTA.DeletedFileRetentionDuration' is saved
// as delta.deletedFileRetentionDuration and takes effect), and refuses a delta.* key it does
// not know ([DELTA_UNKNOWN_CONFIGURATION], a typo). deltavacuum validates only the exact
// spelling (intervalProperties[p.Key]) and stores anything else unchecked, where neither it
// nor Spark reads it. A user who lengthens the retention to keep a week of time travel more,
// or to cover a writer that runs for days, is told it worked; the next plain VACUUM still
// uses 7 days and deletes the files the longer retention was meant to keep.
// Found by the second review.
func TestAlterTableKeyInAnotherCase(t *testing.T) {
	for _, key := range []string{
		"DELTA.deletedFileRetentionDuration",  // Spark: the same property
		"delta.deletedfileretentionduration",  // Spark: the same property
		"delta.deletedFileRetentionDurations", // Spark: refused, unknown delta.* key
	} {
		t.Run(key, func(t *testing.T) {
			tb := newLocalTable(t)
			tb.commit(addLine("kept.parquet"))
			// Removed 8 days ago: outside the default week, inside the 10 days asked for.
			tb.commit(removeAt("kept.parquet", time.Now().Add(-8*day)))
			tb.file("kept.parquet", 30*day)
			alter := "ALTER TABLE '" + tb.dir + "' SET TBLPROPERTIES ('" + key + "' = 'interval 10 days')"
			code, stdout, stderr := run(t, "sql", alter)
			t.Logf("%s: exit %d: %s%s", alter, code, stdout, stderr)
			if code != 0 {
				return // refused: the user knows the retention did not change
			}
			// A plain VACUUM, safety check on, the table's own retention.
			code, stdout, stderr = run(t, "sql", "VACUUM '"+tb.dir+"'")
			t.Logf("VACUUM: exit %d: %s%s", code, stdout, stderr)
			if !tb.exists("kept.parquet") {
				t.Errorf("ALTER TABLE set %s = 'interval 10 days' and was accepted, yet VACUUM used the 7-day default and deleted a file removed 8 days ago", key)
			}
		})
	}
}

// TestAlterTableWritesARetentionSparkCannotRead: ParseInterval accepts fractions of any
// unit ("1.5 hours" is a case of interval_test.go) and day counts beyond an int, and ALTER
// TABLE writes such a value into the table. Spark parses interval properties with
// IntervalUtils.stringToInterval, where only seconds may have a fractional part ("'days'
// cannot have fractional part", "'hour' cannot have fractional part") and days are an int
// ("2234567890 days": integer overflow). Spark reads delta.deletedFileRetentionDuration on
// every snapshot it reconstructs (minFileRetentionTimestamp), so after this ALTER the table can
// no longer be read, written, checkpointed or vacuumed by Spark, and Spark's own ALTER TABLE
// to repair it needs a snapshot first. No data is deleted, but deltavacuum broke the table for
// every other engine; a value Spark would refuse must be refused. The other delta.* keys are
// not validated at all (delta.checkpointInterval = 0 makes Spark's post-commit hook divide by
// zero on every write).
// Found by the second review.
func TestAlterTableWritesARetentionSparkCannotRead(t *testing.T) {
	for _, props := range []string{
		"'delta.deletedFileRetentionDuration' = 'interval 1.5 days'",
		"'delta.deletedFileRetentionDuration' = 'interval 36.5 hours'",
		"'delta.deletedFileRetentionDuration' = 'interval 1. hour'",
		// Both beyond an int of days (the file retention may not exceed the log's).
		"'delta.logRetentionDuration' = 'interval 2234567891 days', 'delta.deletedFileRetentionDuration' = 'interval 2234567890 days'",
		// The same class beyond intervals: Spark validates every delta.* key it knows
		// (checkpointInterval must be a positive int; every commit computes version % it).
		"'delta.checkpointInterval' = '0'",
		"'delta.checkpointInterval' = 'ten'",
	} {
		t.Run(props, func(t *testing.T) {
			tb := newLocalTable(t)
			alter := "ALTER TABLE '" + tb.dir + "' SET TBLPROPERTIES (" + props + ")"
			code, stdout, stderr := run(t, "sql", alter)
			t.Logf("exit %d: %s%s", code, stdout, stderr)
			if code == 0 {
				t.Errorf("ALTER TABLE wrote %s, which Spark cannot parse", props)
			}
		})
	}
}
