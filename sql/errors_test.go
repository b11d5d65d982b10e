package sql

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const unknownSuffix = ": supported statements are VACUUM, SET, RESET, ALTER TABLE, SHOW TBLPROPERTIES, SHOW TABLES, DESCRIBE HISTORY, DESCRIBE DETAIL, INSPECT, EXPLAIN VACUUM"

func TestParseErrors(t *testing.T) {
	const inv = "VACUUM t USING INVENTORY (SELECT * FROM i WHERE "
	tests := []struct {
		in   string
		want string
	}{
		// Syntax errors name the unexpected token and what was expected.
		{"VACUUM events FOO", "syntax error at line 1, column 15: unexpected 'FOO', expected RETAIN, DRY RUN, LITE, FULL, USING INVENTORY or end of statement"},
		{"VACUUM t RETAIN 1 HOURS 'x'", "syntax error at line 1, column 25: unexpected ''x'', expected RETAIN, DRY RUN, LITE, FULL, USING INVENTORY or end of statement"},
		{"VACUUM", "syntax error at line 1, column 7: unexpected end of input, expected a table name or path"},
		{"VACUUM;", "syntax error at line 1, column 7: unexpected ';', expected a table name or path"},
		{"VACUUM 123", "syntax error at line 1, column 8: unexpected '123', expected a table name or path"},
		{"VACUUM a.", "syntax error at line 1, column 10: unexpected end of input, expected an identifier"},
		{"VACUUM a.'b'", "syntax error at line 1, column 10: unexpected ''b'', expected an identifier"},
		{"VACUUM t RETAIN 5", "syntax error at line 1, column 18: unexpected end of input, expected HOURS"},
		{"VACUUM t RETAIN 5 DAYS", "syntax error at line 1, column 19: unexpected 'DAYS', expected HOURS"},
		{"VACUUM t RETAIN HOURS", "syntax error at line 1, column 17: unexpected 'HOURS', expected a number"},
		{"VACUUM t RETAIN '5' HOURS", "syntax error at line 1, column 17: unexpected ''5'', expected a number"},
		{"VACUUM t DRY", "syntax error at line 1, column 13: unexpected end of input, expected RUN"},
		{"VACUUM t USING t2", "syntax error at line 1, column 16: unexpected 't2', expected INVENTORY"},
		{"VACUUM t USING INVENTORY", "syntax error at line 1, column 25: unexpected end of input, expected '(' or a table name or path"},
		{"VACUUM t USING INVENTORY (SELECT path FROM i LIMIT 5)", "syntax error at line 1, column 46: unexpected 'LIMIT', expected WHERE or ')'"},
		{"VACUUM t USING INVENTORY (SELECT FROM i)", "syntax error at line 1, column 34: unexpected 'FROM', expected '*' or a column name"},
		{"VACUUM t USING INVENTORY (SELECT a b FROM i)", "syntax error at line 1, column 36: unexpected 'b', expected ',' or FROM"},
		{"VACUUM t USING INVENTORY (SELECT a, FROM i)", "syntax error at line 1, column 37: unexpected 'FROM', expected a column name"},
		{"VACUUM t USING INVENTORY (DELETE FROM i)", "syntax error at line 1, column 27: unexpected 'DELETE', expected SELECT"},
		{inv + "p LIKE 5)", "syntax error at line 1, column 56: unexpected '5', expected a string literal"},
		{inv + "a NOT b)", "syntax error at line 1, column 55: unexpected 'b', expected LIKE or IN"},
		{inv + "a IN ())", "syntax error at line 1, column 55: unexpected ')', expected a literal"},
		{inv + "a IN (1 2))", "syntax error at line 1, column 57: unexpected '2', expected ',' or ')'"},
		{inv + "a IN 1)", "syntax error at line 1, column 54: unexpected '1', expected '('"},
		{inv + "a IN (b))", "syntax error at line 1, column 55: unexpected 'b', expected a literal"},
		{inv + "AND)", "syntax error at line 1, column 49: unexpected 'AND', expected an expression"},
		{inv + "a = )", "syntax error at line 1, column 53: unexpected ')', expected an expression"},
		{inv + "a IS 5)", "syntax error at line 1, column 54: unexpected '5', expected NULL"},
		{inv + "a = 1 b)", "syntax error at line 1, column 55: unexpected 'b', expected AND, OR or ')'"},
		{inv + "(a = 1 b))", "syntax error at line 1, column 56: unexpected 'b', expected AND, OR or ')'"},
		{inv + "a = 1))", "syntax error at line 1, column 55: unexpected ')', expected RETAIN, DRY RUN, LITE, FULL, USING INVENTORY or end of statement"},
		{inv + "a = - x)", "syntax error at line 1, column 55: unexpected 'x', expected a number"},
		{"SET a b", "syntax error at line 1, column 7: unexpected 'b', expected '=' or end of statement"},
		{"SET = 1", "syntax error at line 1, column 5: unexpected '=', expected a configuration key or end of statement"},
		{"RESET a b", "syntax error at line 1, column 9: unexpected 'b', expected end of statement"},
		{"ALTER TABLE t", "syntax error at line 1, column 14: unexpected end of input, expected SET TBLPROPERTIES or UNSET TBLPROPERTIES"},
		{"ALTER TABLE t ADD COLUMNS (x INT)", "syntax error at line 1, column 15: unexpected 'ADD', expected SET TBLPROPERTIES or UNSET TBLPROPERTIES"},
		{"ALTER TABLE t SET LOCATION '/x'", "syntax error at line 1, column 19: unexpected 'LOCATION', expected TBLPROPERTIES"},
		{"ALTER TABLE t SET TBLPROPERTIES 'a' = 'b'", "syntax error at line 1, column 33: unexpected ''a'', expected '('"},
		{"ALTER TABLE t SET TBLPROPERTIES ()", "syntax error at line 1, column 34: unexpected ')', expected a property key"},
		{"ALTER TABLE t SET TBLPROPERTIES ('a')", "syntax error at line 1, column 37: unexpected ')', expected '=' or a property value"},
		{"ALTER TABLE t SET TBLPROPERTIES ('a' = )", "syntax error at line 1, column 40: unexpected ')', expected a property value"},
		{"ALTER TABLE t SET TBLPROPERTIES ('a' = 'b' 'c' = 'd')", "syntax error at line 1, column 44: unexpected ''c'', expected ',' or ')'"},
		{"ALTER TABLE t SET TBLPROPERTIES ('a' = 'b') x", "syntax error at line 1, column 45: unexpected 'x', expected end of statement"},
		{"ALTER TABLE t UNSET TBLPROPERTIES ('a' = 'b')", "syntax error at line 1, column 40: unexpected '=', expected ',' or ')'"},
		{"ALTER TABLE t UNSET TBLPROPERTIES IF ('a')", "syntax error at line 1, column 38: unexpected '(', expected EXISTS"},
		{"ALTER TABLE t UNSET TBLPROPERTIES a", "syntax error at line 1, column 35: unexpected 'a', expected IF EXISTS or '('"},
		{"ALTER 'x'", "syntax error at line 1, column 7: unexpected ''x'', expected TABLE"},
		{"SHOW TBLPROPERTIES t x", "syntax error at line 1, column 22: unexpected 'x', expected '(' or end of statement"},
		{"SHOW TBLPROPERTIES t ('a', 'b')", "syntax error at line 1, column 26: unexpected ',', expected ')'"},
		{"SHOW TBLPROPERTIES t ('')", "syntax error at line 1, column 23: empty property key"},
		{"DESCRIBE HISTORY t x", "syntax error at line 1, column 20: unexpected 'x', expected LIMIT or end of statement"},
		{"DESCRIBE HISTORY t LIMIT -1", "syntax error at line 1, column 26: unexpected '-', expected a non-negative integer"},
		{"DESCRIBE HISTORY t LIMIT 1.5", "syntax error at line 1, column 26: unexpected '1.5', expected a non-negative integer"},
		{"DESCRIBE HISTORY t LIMIT 1 x", "syntax error at line 1, column 28: unexpected 'x', expected end of statement"},
		{"DESCRIBE HISTORY t LIMIT 99999999999", "syntax error at line 1, column 26: LIMIT out of range: 99999999999"},
		{"DESCRIBE DETAIL t LIMIT 1", "syntax error at line 1, column 19: unexpected 'LIMIT', expected end of statement"},
		{"(VACUUM t)", "syntax error at line 1, column 1: unexpected '(', expected VACUUM, SET, RESET, ALTER TABLE, SHOW TBLPROPERTIES, SHOW TABLES, DESCRIBE HISTORY, DESCRIBE DETAIL, INSPECT or EXPLAIN VACUUM"},
		{"", "syntax error at line 1, column 1: unexpected end of input, expected a statement"},
		{"  -- nothing but a comment\n", "syntax error at line 2, column 1: unexpected end of input, expected a statement"},
		{"VACUUM t; VACUUM u", "syntax error at line 1, column 11: unexpected 'VACUUM', expected end of input"},
		{"VACUUM t ü", "syntax error at line 1, column 10: unexpected 'ü', expected RETAIN, DRY RUN, LITE, FULL, USING INVENTORY or end of statement"},
		{"VACUUM `é` FOO", "syntax error at line 1, column 12: unexpected 'FOO', expected RETAIN, DRY RUN, LITE, FULL, USING INVENTORY or end of statement"},
		{"VACUUM\n  t\n  RETAIN 1 HOURS\n  FOO", "syntax error at line 4, column 3: unexpected 'FOO', expected RETAIN, DRY RUN, LITE, FULL, USING INVENTORY or end of statement"},
		{"VACUUM '" + "very long path that goes on and on and on and on" + "' x", "syntax error at line 1, column 59: unexpected 'x', expected RETAIN, DRY RUN, LITE, FULL, USING INVENTORY or end of statement"},
		{"VACUUM t '" + "very long path that goes on and on and on and on" + "'", "syntax error at line 1, column 10: unexpected ''very long path that goes on and on and ...', expected RETAIN, DRY RUN, LITE, FULL, USING INVENTORY or end of statement"},

		// Tables.
		{"VACUUM parquet.`/x`", "syntax error at line 1, column 8: format 'parquet' is not allowed here, only delta"},
		{"VACUUM a.b.c.d", "syntax error at line 1, column 8: table name has more than three parts"},
		{"VACUUM ''", "syntax error at line 1, column 8: empty path"},
		{"VACUUM delta.``", "syntax error at line 1, column 14: empty path"},
		{"VACUUM a.``", "syntax error at line 1, column 10: empty identifier"},
		{"VACUUM t RETAIN 1e999 HOURS", "syntax error at line 1, column 17: number out of range: 1e999"},
		{"VACUUM t USING INVENTORY (SELECT * FROM i WHERE p LIKE 'a\\\\')", "syntax error at line 1, column 56: LIKE pattern 'a\\\\' ends with an escape character"},

		// Unterminated literals and comments are reported where they start.
		{"VACUUM 'abc", "syntax error at line 1, column 8: unterminated string literal"},
		{`VACUUM "abc\"`, "syntax error at line 1, column 8: unterminated string literal"},
		{`VACUUM 'abc\`, "syntax error at line 1, column 8: unterminated string literal"},
		{"VACUUM 'it''s", "syntax error at line 1, column 8: unterminated string literal"},
		{"VACUUM r'abc", "syntax error at line 1, column 8: unterminated string literal"},
		{"VACUUM `abc", "syntax error at line 1, column 8: unterminated quoted identifier"},
		{"VACUUM `a``", "syntax error at line 1, column 8: unterminated quoted identifier"},
		{"VACUUM t /* retain", "syntax error at line 1, column 10: unterminated comment"},
		{"VACUUM t /* a b", "syntax error at line 1, column 10: unterminated comment"},
		// Nested comments: Spark nests them, Delta's grammar does not; refused.
		{"VACUUM t /* a /* b */", "syntax error at line 1, column 10: a comment inside a comment: Spark and Delta read nested comments differently; remove the inner /*"},
		{"VACUUM t /* /* */ DRY RUN */", "syntax error at line 1, column 10: a comment inside a comment: Spark and Delta read nested comments differently; remove the inner /*"},
		{"SET a = 1;\nVACUUM t RETAIN 'x", "syntax error at line 2, column 17: unterminated string literal"},
		{"VACUUM t USING INVENTORY (SELECT * FROM i", "syntax error at line 1, column 26: unclosed '('"},
		{"VACUUM t USING INVENTORY (SELECT * FROM i WHERE (a = 1 OR (b = 2)", "syntax error at line 1, column 49: unclosed '('"},
		{"VACUUM t USING INVENTORY (SELECT * FROM i WHERE a IN (1, 2", "syntax error at line 1, column 54: unclosed '('"},
		{"ALTER TABLE t SET TBLPROPERTIES ('a' = 'b';", "syntax error at line 1, column 33: unclosed '('"},

		{inv + strings.Repeat("(", 1001) + "a" + strings.Repeat(")", 1001) + ")", "syntax error at line 1, column 1049: expression nested too deeply"},
		{inv + strings.Repeat("NOT ", 1001) + "a)", "syntax error at line 1, column 4049: expression nested too deeply"},

		// Unknown statements.
		{"DROP TABLE t", "unknown statement 'DROP'" + unknownSuffix},
		{"optimize t", "unknown statement 'optimize'" + unknownSuffix},
		{"SELECT * FROM t", "unknown statement 'SELECT'" + unknownSuffix},
		{"SHOW VIEWS", "unknown statement 'SHOW VIEWS'" + unknownSuffix},
		{"SHOW TABLES sales", "syntax error at line 1, column 13: unexpected 'sales', expected IN, FROM or end of statement"},
		{"SHOW TABLES IN", "syntax error at line 1, column 15: unexpected end of input, expected a schema name"},
		{"SHOW TABLES IN lh.sales", "syntax error at line 1, column 16: a schema name has one part (the schema of the lakehouse: SHOW TABLES IN sales)"},
		{"SHOW TABLES IN ``", "syntax error at line 1, column 16: empty identifier"},
		{"SHOW TABLES IN sales LIKE 'o*'", "syntax error at line 1, column 22: unexpected 'LIKE', expected end of statement"},
		{"SHOW TABLES IN 'sales'", "syntax error at line 1, column 16: unexpected ''sales'', expected a schema name"},
		{"ALTER VIEW v SET TBLPROPERTIES ('a' = 'b')", "unknown statement 'ALTER VIEW'" + unknownSuffix},
		{"DESCRIBE TABLE EXTENDED t", "unknown statement 'DESCRIBE TABLE'" + unknownSuffix},
		{"desc t", "unknown statement 'desc'" + unknownSuffix},
		{"DESC", "syntax error at line 1, column 5: unexpected end of input, expected HISTORY or DETAIL"},
		{"SHOW", "syntax error at line 1, column 5: unexpected end of input, expected TBLPROPERTIES"},
		{"`VACUUM` t", "syntax error at line 1, column 1: unexpected '`VACUUM`', expected VACUUM, SET, RESET, ALTER TABLE, SHOW TBLPROPERTIES, SHOW TABLES, DESCRIBE HISTORY, DESCRIBE DETAIL, INSPECT or EXPLAIN VACUUM"},

		// Duplicates.
		{"VACUUM t LITE FULL", "Found duplicate clauses: LITE/FULL"},
		{"VACUUM t LITE LITE", "Found duplicate clauses: LITE/FULL"},
		{"VACUUM t USING INVENTORY a RETAIN 1 HOURS USING INVENTORY b", "Found duplicate clauses: USING INVENTORY"},
		{"VACUUM t RETAIN 1 HOURS RETAIN 1 HOURS", "Found duplicate clauses: RETAIN"},
		{"VACUUM t DRY RUN DRY RUN", "Found duplicate clauses: DRY RUN"},
		{"ALTER TABLE t SET TBLPROPERTIES ('a' = 'b', a = 'c')", "duplicate property key 'a'"},
		{"ALTER TABLE t UNSET TBLPROPERTIES (a.b, 'a.b')", "duplicate property key 'a.b'"},
		// A syntax error wins over a duplicate, as in Spark.
		{"VACUUM t RETAIN 1 HOURS RETAIN 2 HOURS FOO", "syntax error at line 1, column 40: unexpected 'FOO', expected RETAIN, DRY RUN, LITE, FULL, USING INVENTORY or end of statement"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			s, err := Parse(tt.in)
			if err == nil {
				t.Fatalf("Parse(%q) = %v, want error %q", tt.in, s, tt.want)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("Parse(%q) error:\n got %s\nwant %s", tt.in, got, tt.want)
			}
			checkError(t, tt.in, err)
		})
	}
}

// TestErrorTypes checks that callers can match errors by type and read their fields.
func TestErrorTypes(t *testing.T) {
	t.Run("syntax", func(t *testing.T) {
		_, err := ParseScript("SET a = 1;\n  VACUUM t RETAIN x HOURS")
		var got *SyntaxError
		if !errors.As(err, &got) {
			t.Fatalf("ParseScript error %v is %T, want *SyntaxError", err, err)
		}
		want := &SyntaxError{Position: Position{Offset: 29, Line: 2, Column: 19}, Unexpected: "x", Expected: []string{"a number"}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("SyntaxError mismatch (-want +got):\n%s", diff)
		}
	})
	t.Run("unterminated", func(t *testing.T) {
		_, err := Parse("VACUUM\n 'x")
		var got *SyntaxError
		if !errors.As(err, &got) {
			t.Fatalf("Parse error %v is %T, want *SyntaxError", err, err)
		}
		want := &SyntaxError{Position: Position{Offset: 8, Line: 2, Column: 2}, Msg: "unterminated string literal"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("SyntaxError mismatch (-want +got):\n%s", diff)
		}
	})
	t.Run("unknown statement", func(t *testing.T) {
		_, err := ParseScript("VACUUM t; OPTIMIZE t")
		var got *UnknownStatementError
		if !errors.As(err, &got) {
			t.Fatalf("ParseScript error %v is %T, want *UnknownStatementError", err, err)
		}
		want := &UnknownStatementError{Position: Position{Offset: 10, Line: 1, Column: 11}, Statement: "OPTIMIZE"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("UnknownStatementError mismatch (-want +got):\n%s", diff)
		}
	})
	t.Run("duplicate clause", func(t *testing.T) {
		_, err := Parse("VACUUM t RETAIN 1 HOURS DRY RUN RETAIN 2 HOURS")
		var got *DuplicateClauseError
		if !errors.As(err, &got) {
			t.Fatalf("Parse error %v is %T, want *DuplicateClauseError", err, err)
		}
		want := &DuplicateClauseError{Position: Position{Offset: 32, Line: 1, Column: 33}, Clause: "RETAIN"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("DuplicateClauseError mismatch (-want +got):\n%s", diff)
		}
	})
	t.Run("duplicate key", func(t *testing.T) {
		_, err := Parse("ALTER TABLE t SET TBLPROPERTIES (a = 1, b = 2, a = 3)")
		var got *DuplicateKeyError
		if !errors.As(err, &got) {
			t.Fatalf("Parse error %v is %T, want *DuplicateKeyError", err, err)
		}
		want := &DuplicateKeyError{Position: Position{Offset: 47, Line: 1, Column: 48}, Key: "a"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("DuplicateKeyError mismatch (-want +got):\n%s", diff)
		}
	})
}
