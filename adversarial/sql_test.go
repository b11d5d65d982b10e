package adversarial

// The SQL front end reads a statement as Spark reads it: a clause Spark sees is never
// swallowed by a comment. Each test asserts the safe behaviour, so it fails while the bug it
// names is there, and says which review found it.

import (
	"testing"
	"time"
)

// tableRemovedTenDaysAgo is a table whose only data file was removed 10 days ago: outside
// the default week of retention, inside a retention of 720 hours (30 days).
func tableRemovedTenDaysAgo(t *testing.T) *localTable {
	t.Helper()
	tb := newLocalTable(t)
	tb.commit(addLine("kept.parquet"))
	tb.commit(removeAt("kept.parquet", time.Now().Add(-10*day)))
	tb.file("kept.parquet", 30*day)
	return tb
}

// TestCarriageReturnEndsALineCommentBeforeRetain: the SQL lexer (sql/lexer.go, lex, the
// "--" case) ends a line comment only at '\n'. Spark's and Delta's lexers end it at '\r' too
// (SIMPLE_COMMENT: '--' ~[\r\n]* '\r'? '\n'?, in SqlBaseLexer.g4 and DeltaSqlBase.g4), so in a
// script whose lines end in a bare CR (classic Mac line ends, text pasted from some editors
// and notebooks) every clause after a comment is read by Spark and silently swallowed by
// deltavacuum. Here "RETAIN 720 HOURS" on the line after a comment is dropped: Spark keeps 30
// days of removed files; deltavacuum runs with the table's 7 days, the safety check has
// nothing to object to, and it deletes a file removed 10 days ago that the user asked to keep
// for time travel.
// Found by the fourth review.
func TestCarriageReturnEndsALineCommentBeforeRetain(t *testing.T) {
	tb := tableRemovedTenDaysAgo(t)
	stmt := "VACUUM '" + tb.dir + "' -- keep a month of time travel\rRETAIN 720 HOURS"
	code, stdout, stderr := run(t, "sql", stmt)
	t.Logf("%q: exit %d: %s%s", stmt, code, stdout, stderr)
	if !tb.exists("kept.parquet") {
		t.Errorf("RETAIN 720 HOURS after a '--' comment ended by '\\r' was swallowed (Spark reads it): kept.parquet, removed 10 days ago, was deleted")
	}
}

// TestCarriageReturnEndsALineCommentBeforeDryRun: the same lexer bug with DRY RUN. Spark
// reads "VACUUM t -- look first<CR>DRY RUN" as a dry run that deletes nothing; deltavacuum
// reads the DRY RUN as part of the comment and runs a real VACUUM, permanently deleting every
// file the dry run was meant to show the user first.
// Found by the fourth review.
func TestCarriageReturnEndsALineCommentBeforeDryRun(t *testing.T) {
	tb := tableRemovedTenDaysAgo(t)
	stmt := "VACUUM '" + tb.dir + "' -- look first\rDRY RUN"
	code, stdout, stderr := run(t, "sql", stmt)
	t.Logf("%q: exit %d: %s%s", stmt, code, stdout, stderr)
	if !tb.exists("kept.parquet") {
		t.Errorf("DRY RUN after a '--' comment ended by '\\r' was swallowed (Spark reads it): a real VACUUM deleted kept.parquet")
	}
}
