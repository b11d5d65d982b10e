package sql

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var fuzzSeeds = []string{
	"VACUUM t USING INVENTORY (SELECT * FROM inventory WHERE path LIKE 'abfss://%') RETAIN 100 HOURS",
	"vacuum delta.`/data/my table` lite retain -1.5 hour dry run;",
	"VACUUM 'abfss://c@a.dfs.core.windows.net/t' FULL DRY RUN",
	"VACUUM cat.`my schema`.t USING INVENTORY parquet.`/inv` RETAIN 0 HOURS",
	"VACUUM t USING INVENTORY (SELECT path, length, isDir, modificationTime FROM csv.`/i` " +
		"WHERE NOT (size >= 10 AND x IN (1, 2.5, 'a', NULL)) OR y IS NOT NULL OR z NOT LIKE '\\%a_')",
	"SET spark.databricks.delta.retentionDurationCheck.enabled = false",
	"SET `my key` = 'a;b'; SET; SET a.b; RESET; RESET a.b",
	"ALTER TABLE t SET TBLPROPERTIES ('delta.logRetentionDuration' = 'interval 30 days', delta.appendOnly true, k 1)",
	"ALTER TABLE t UNSET TBLPROPERTIES IF EXISTS ('a', b.c)",
	"SHOW TBLPROPERTIES t ('delta.minReaderVersion')",
	"SHOW TABLES IN `a b`",
	"DESCRIBE HISTORY delta.`/t` LIMIT 10; DESC DETAIL t",
	"-- comment\n/* block /* nested */ */ VACUUM `a``b`",
	"VACUUM t RETAIN 1 HOURS RETAIN 2 HOURS",
	"SELECT 1",
	"VACUUM 'it''s' RETAIN .5e3 HOURS",
	"VACUUM t USING INVENTORY (SELECT * FROM i WHERE `where` = -9223372036854775808 AND b = 1e400)",
}

func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, input string) {
		stmts, err := ParseScript(input)
		checkError(t, input, err)
		for _, s := range stmts {
			checkRoundTrip(t, s)
			checkEval(t, s)
		}
		if err == nil {
			texts, err := Split(input)
			if err != nil {
				t.Fatalf("Split(%q): %v, but ParseScript succeeded", input, err)
			}
			if len(texts) != len(stmts) {
				t.Fatalf("Split(%q) = %d statements, ParseScript = %d", input, len(texts), len(stmts))
			}
			for i, text := range texts {
				s, err := Parse(text)
				if err != nil {
					t.Fatalf("Parse(%q) (statement %d of %q): %v", text, i, input, err)
				}
				if diff := cmp.Diff(stmts[i], s); diff != "" {
					t.Fatalf("Parse(%q) differs from statement %d of ParseScript(%q) (-script +single):\n%s", text, i, input, diff)
				}
			}
		}
		s, err := Parse(input)
		checkError(t, input, err)
		if err == nil {
			checkRoundTrip(t, s)
		}
	})
}

// checkRoundTrip checks that s prints to SQL that parses back to s, and that the
// printed form is a fixed point.
func checkRoundTrip(t *testing.T, s Statement) {
	t.Helper()
	text := s.String()
	again, err := Parse(text)
	if err != nil {
		t.Fatalf("Parse(%q), printed from %#v: %v", text, s, err)
	}
	if diff := cmp.Diff(s, again); diff != "" {
		t.Fatalf("Parse(%q) differs from the statement printed (-printed +reparsed):\n%s", text, diff)
	}
	if got := again.String(); got != text {
		t.Fatalf("String() of Parse(%q) = %q, want the same", text, got)
	}
}

// checkError checks that err is one of the documented types with a sane position.
func checkError(t *testing.T, input string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var pos Position
	var syn *SyntaxError
	var unk *UnknownStatementError
	var dupc *DuplicateClauseError
	var dupk *DuplicateKeyError
	switch {
	case errors.As(err, &syn):
		pos = syn.Position
	case errors.As(err, &unk):
		pos = unk.Position
	case errors.As(err, &dupc):
		pos = dupc.Position
	case errors.As(err, &dupk):
		pos = dupk.Position
	default:
		t.Fatalf("parsing %q: error %v of type %T", input, err, err)
	}
	if pos.Offset < 0 || pos.Offset > len(input) || pos.Line < 1 || pos.Column < 1 {
		t.Fatalf("parsing %q: error %v at invalid position %+v", input, err, pos)
	}
	if want := position(input, pos.Offset); pos != want {
		t.Fatalf("parsing %q: error %v at %+v, want %+v", input, err, pos, want)
	}
}

// checkEval evaluates the inventory condition of s, if any, on rows of every kind,
// to check that evaluation does not panic.
func checkEval(t *testing.T, s Statement) {
	v, ok := s.(*Vacuum)
	if !ok || v.Inventory == nil || v.Inventory.Query == nil {
		return
	}
	q := v.Inventory.Query
	for _, val := range []Value{NullValue(), BoolValue(true), IntValue(-3), FloatValue(2.5), StringValue("a%b_c\\")} {
		q.Match(func(string) (Value, bool) { return val, true })
	}
	q.Match(func(string) (Value, bool) { return Value{}, false })
	q.ReferencedColumns()
}
