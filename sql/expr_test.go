package sql

import (
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// parseQuery parses the inventory query of a VACUUM statement.
func parseQuery(t *testing.T, query string) *Query {
	t.Helper()
	in := "VACUUM t USING INVENTORY (" + query + ")"
	s, err := Parse(in)
	if err != nil {
		t.Fatalf("Parse(%q): %v", in, err)
	}
	return s.(*Vacuum).Inventory.Query
}

// parseCond parses a WHERE condition.
func parseCond(t *testing.T, cond string) Expr {
	t.Helper()
	return parseQuery(t, "SELECT * FROM i WHERE "+cond).Where
}

// testRow has a column of each kind.
var testRow = map[string]Value{
	"n":     NullValue(),
	"t":     BoolValue(true),
	"f":     BoolValue(false),
	"i":     IntValue(42),
	"neg":   IntValue(-7),
	"big":   IntValue(9007199254740993), // 2^53 + 1
	"x":     FloatValue(2.5),
	"nan":   FloatValue(math.NaN()),
	"s":     StringValue("abc"),
	"empty": StringValue(""),
	"path":  StringValue("abfss://c@a.dfs.core.windows.net/t/part-0001.parquet"),
	"uni":   StringValue("naïve€"),
	"odd":   StringValue("100%_a\\b\nc"),
	"a b":   StringValue("spaced"),
}

func rowOf(m map[string]Value) Row {
	return func(c string) (Value, bool) {
		v, ok := m[c]
		return v, ok
	}
}

var (
	vNull  = NullValue()
	vTrue  = BoolValue(true)
	vFalse = BoolValue(false)
)

func TestEval(t *testing.T) {
	tests := []struct {
		cond string
		want Value
	}{
		// Literals and columns.
		{"TRUE", vTrue},
		{"false", vFalse},
		{"NULL", vNull},
		{"42", IntValue(42)},
		{"-9223372036854775808", IntValue(math.MinInt64)},
		{"9223372036854775808", FloatValue(9223372036854775808)},
		{"1.50", FloatValue(1.5)},
		{"'x'", StringValue("x")},
		{"i", IntValue(42)},
		{"`a b`", StringValue("spaced")},

		// Comparisons.
		{"i = 42", vTrue},
		{"i == 42", vTrue},
		{"i != 42", vFalse},
		{"i <> 41", vTrue},
		{"i < 43", vTrue},
		{"i <= 42", vTrue},
		{"i > 42", vFalse},
		{"i >= 43", vFalse},
		{"neg < -6", vTrue},
		{"i = 42.0", vTrue},
		{"42.0 = i", vTrue},
		{"i < 42.5", vTrue},
		{"i > 41.9", vTrue},
		{"neg < -6.5", vTrue},
		{"neg > -7.5", vTrue},
		{"big = 9007199254740992.0", vFalse}, // exact, not via float64
		{"big > 9007199254740992.0", vTrue},
		{"i < 1e300", vTrue},
		{"i > -1e300", vTrue},
		{"x = 2.5", vTrue},
		{"x > 2", vTrue},
		{"x < 3", vTrue},
		{"nan = nan", vTrue},
		{"nan > 1e300", vTrue},
		{"i < nan", vTrue},
		{"s = 'abc'", vTrue},
		{"s = \"abc\"", vTrue},
		{"s = 'ABC'", vFalse},
		{"s < 'abd'", vTrue},
		{"s > 'ab'", vTrue},
		{"empty < s", vTrue},
		{"'B' < 'a'", vTrue}, // byte-wise
		{"uni > 'naive'", vTrue},
		{"t = TRUE", vTrue},
		{"f < t", vTrue},
		{"t != f", vTrue},
		{"(i = 42) = t", vTrue},

		// NULL in comparisons.
		{"n = 1", vNull},
		{"1 = n", vNull},
		{"n = n", vNull},
		{"n != 1", vNull},
		{"n < 'x'", vNull},
		{"NULL = NULL", vNull},

		// Three-valued logic.
		{"t AND t", vTrue},
		{"t AND f", vFalse},
		{"t AND n", vNull},
		{"f AND n", vFalse},
		{"n AND f", vFalse},
		{"n AND n", vNull},
		{"t OR f", vTrue},
		{"f OR f", vFalse},
		{"t OR n", vTrue},
		{"n OR t", vTrue},
		{"f OR n", vNull},
		{"n OR n", vNull},
		{"NOT t", vFalse},
		{"NOT f", vTrue},
		{"NOT n", vNull},
		{"NOT NOT t", vTrue},

		// Precedence: NOT > AND > OR, comparisons tighter than all three.
		{"t OR t AND f", vTrue},
		{"(t OR t) AND f", vFalse},
		{"f AND f OR t", vTrue},
		{"f AND (f OR t)", vFalse},
		{"NOT f AND f", vFalse},
		{"NOT (f AND f)", vTrue},
		{"NOT i = 1", vTrue},
		{"NOT i = 42 OR s = 'abc'", vTrue},
		{"i = 1 OR i = 42 AND s = 'abc'", vTrue},
		{"i = 42 AND s = 'x' OR x = 2.5", vTrue},

		// IS [NOT] NULL is never NULL.
		{"n IS NULL", vTrue},
		{"n IS NOT NULL", vFalse},
		{"i IS NULL", vFalse},
		{"empty IS NOT NULL", vTrue},
		{"(n = 1) IS NULL", vTrue},

		// IN.
		{"i IN (1, 42)", vTrue},
		{"i IN (1, 2)", vFalse},
		{"i IN (42.0)", vTrue},
		{"i NOT IN (1, 2)", vTrue},
		{"i NOT IN (42)", vFalse},
		{"s IN ('x', 'abc')", vTrue},
		{"i IN (1, NULL)", vNull},
		{"i IN (42, NULL)", vTrue},
		{"i NOT IN (1, NULL)", vNull},
		{"i NOT IN (42, NULL)", vFalse},
		{"n IN (1)", vNull},
		{"n NOT IN (1)", vNull},
		{"t IN (FALSE, TRUE)", vTrue},

		// LIKE.
		{"path LIKE 'abfss://%'", vTrue},
		{"path LIKE '%.parquet'", vTrue},
		{"path LIKE '%/part-____.parquet'", vTrue},
		{"path LIKE '%/part-___.parquet'", vFalse},
		{"path NOT LIKE 's3://%'", vTrue},
		{"s LIKE 'abc'", vTrue},
		{"s LIKE 'ab'", vFalse},
		{"s LIKE 'ABC'", vFalse},
		{"s LIKE 'a%'", vTrue},
		{"s LIKE '%c'", vTrue},
		{"s LIKE '%b%'", vTrue},
		{"s LIKE '%%%'", vTrue},
		{"s LIKE 'a%b%c'", vTrue},
		{"s LIKE 'a%c%'", vTrue},
		{"s LIKE 'a%b%b'", vFalse},
		{"s LIKE '___'", vTrue},
		{"s LIKE '__'", vFalse},
		{"s LIKE '_%_'", vTrue},
		{"empty LIKE ''", vTrue},
		{"empty LIKE '%'", vTrue},
		{"empty LIKE '_'", vFalse},
		{"s LIKE ''", vFalse},
		{"'xaybz' LIKE '%a%b%'", vTrue},
		{"'aaa' LIKE '%aa'", vTrue},
		{"'abab' LIKE '%ab%ab'", vTrue},
		{"'a.c' LIKE 'a.c'", vTrue},
		{"'abc' LIKE 'a.c'", vFalse}, // no regular expressions
		{"'a*c[' LIKE 'a*c['", vTrue},
		{"uni LIKE 'na_ve_'", vTrue}, // _ is one character, not one byte
		{"uni LIKE 'na__ve%'", vFalse},
		{"'a\nb' LIKE 'a_b'", vTrue},
		{"'a\nb' LIKE 'a%'", vTrue},
		// Escapes: '\%' in SQL is the pattern \% (Spark keeps the backslash), which
		// matches a literal %.
		{`odd LIKE '100\%\_a%'`, vTrue},
		{`'100x_a' LIKE '100\%%'`, vFalse},
		{`'a%' LIKE 'a\%'`, vTrue},
		{`'ab' LIKE 'a\%'`, vFalse},
		{`'a_' LIKE 'a\_'`, vTrue},
		{`'ab' LIKE 'a\_'`, vFalse},
		{`'a\\b' LIKE 'a\\\\b'`, vTrue}, // a\b LIKE a\\b: an escaped backslash
		{`odd LIKE '%\\\\b%'`, vTrue},
		{`'ac' LIKE '\a\c'`, vTrue},  // 'ac' after unescaping
		{`'a\b' LIKE 'a\b'`, vTrue},  // \b is a backspace
		{`'ac' LIKE r'\a\c'`, vTrue}, // escaped letters match themselves
		{"n LIKE 'a'", vNull},
		{"n NOT LIKE 'a'", vNull},
	}
	for _, tt := range tests {
		t.Run(tt.cond, func(t *testing.T) {
			e := parseCond(t, tt.cond)
			got, err := e.Eval(rowOf(testRow))
			if err != nil {
				t.Fatalf("Eval(%s): %v", tt.cond, err)
			}
			if !got.Equal(tt.want) {
				t.Errorf("Eval(%s) = %v, want %v", tt.cond, got, tt.want)
			}
		})
	}
}

func TestEvalErrors(t *testing.T) {
	tests := []struct {
		cond string
		want string
	}{
		{"missing = 1", "unknown column 'missing'"},
		{"t OR missing", "unknown column 'missing'"},
		{"f AND missing", "unknown column 'missing'"}, // no short-circuit
		{"n IN (1) OR `Missing Col` IS NULL", "unknown column 'Missing Col'"},
		{"s = 1", "cannot compare STRING with BIGINT"},
		{"1.5 < s", "cannot compare DOUBLE with STRING"},
		{"t = 1", "cannot compare BOOLEAN with BIGINT"},
		{"i IN ('a')", "cannot compare BIGINT with STRING"},
		{"i LIKE '4%'", "LIKE needs a STRING operand, got BIGINT"},
		{"i AND t", "AND needs BOOLEAN operands, got BIGINT"},
		{"t OR s", "OR needs BOOLEAN operands, got STRING"},
		{"NOT x", "NOT needs BOOLEAN operands, got DOUBLE"},
	}
	for _, tt := range tests {
		t.Run(tt.cond, func(t *testing.T) {
			e := parseCond(t, tt.cond)
			got, err := e.Eval(rowOf(testRow))
			if err == nil {
				t.Fatalf("Eval(%s) = %v, want error %q", tt.cond, got, tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("Eval(%s) error = %q, want %q", tt.cond, err, tt.want)
			}
		})
	}
	t.Run("UnknownColumnError", func(t *testing.T) {
		_, err := parseCond(t, "size > 0").Eval(rowOf(testRow))
		var unk *UnknownColumnError
		if !errors.As(err, &unk) || unk.Name != "size" {
			t.Errorf("Eval error = %v (%T), want *UnknownColumnError for size", err, err)
		}
	})
}

func TestQueryMatch(t *testing.T) {
	tests := []struct {
		query   string
		want    bool
		wantErr string
	}{
		{query: "SELECT * FROM i", want: true},
		{query: "SELECT * FROM i WHERE TRUE", want: true},
		{query: "SELECT * FROM i WHERE i = 42", want: true},
		{query: "SELECT * FROM i WHERE i = 1", want: false},
		{query: "SELECT * FROM i WHERE n = 1", want: false}, // NULL drops the row
		{query: "SELECT * FROM i WHERE NOT (n = 1)", want: false},
		{query: "SELECT * FROM i WHERE n IS NULL", want: true},
		{query: "SELECT * FROM i WHERE NULL", want: false},
		{query: "SELECT * FROM i WHERE s", wantErr: "WHERE needs BOOLEAN operands, got STRING"},
		{query: "SELECT * FROM i WHERE 1", wantErr: "WHERE needs BOOLEAN operands, got BIGINT"},
		{query: "SELECT * FROM i WHERE nope", wantErr: "unknown column 'nope'"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			q := parseQuery(t, tt.query)
			got, err := q.Match(rowOf(testRow))
			switch {
			case tt.wantErr != "":
				if err == nil || err.Error() != tt.wantErr {
					t.Errorf("Match = %v, %v; want error %q", got, err, tt.wantErr)
				}
			case err != nil:
				t.Errorf("Match: %v", err)
			case got != tt.want:
				t.Errorf("Match = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestReferencedColumns(t *testing.T) {
	tests := []struct {
		query string
		want  []string
	}{
		{"SELECT * FROM i", nil},
		{"SELECT path, size FROM i", []string{"path", "size"}},
		{"SELECT * FROM i WHERE path LIKE 'a%' AND (size > 0 OR `is dir` IS NULL) AND path != 'x'", []string{"path", "size", "is dir"}},
		{"SELECT path, length FROM i WHERE NOT modificationTime IN (1, 2) AND length = path", []string{"path", "length", "modificationTime"}},
		{"SELECT * FROM i WHERE 1 = 1", nil},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			q := parseQuery(t, tt.query)
			if diff := cmp.Diff(tt.want, q.ReferencedColumns()); diff != "" {
				t.Errorf("ReferencedColumns() mismatch (-want +got):\n%s", diff)
			}
			var whereCols []string
			if q.Where != nil {
				whereCols = ReferencedColumns(q.Where)
			}
			for _, c := range whereCols {
				found := false
				for _, w := range tt.want {
					found = found || w == c
				}
				if !found {
					t.Errorf("ReferencedColumns(Where) has %q, not in %q", c, tt.want)
				}
			}
		})
	}
}

func TestValueString(t *testing.T) {
	tests := []struct {
		v    Value
		want string
	}{
		{NullValue(), "NULL"},
		{BoolValue(true), "TRUE"},
		{BoolValue(false), "FALSE"},
		{IntValue(-12), "-12"},
		{FloatValue(100), "100.0"},
		{FloatValue(0.25), "0.25"},
		{FloatValue(1e21), "1e+21"},
		{StringValue(`it's a \ test` + "\n"), `'it\'s a \\ test\n'`},
	}
	for _, tt := range tests {
		if got := tt.v.String(); got != tt.want {
			t.Errorf("%#v.String() = %q, want %q", tt.v, got, tt.want)
		}
	}
}
