package sql

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseInspectAndExplainVacuum(t *testing.T) {
	n := func(text string, f float64) *Number { return &Number{Text: text, Float: f} }
	cases := []struct {
		src  string
		want Statement
	}{
		{"INSPECT t", &Inspect{Table: TableRef{Name: []string{"t"}}}},
		{"inspect '/data/t' retain 24 hours lite", &Inspect{Table: TableRef{Path: "/data/t"}, Lite: true, Retain: n("24", 24)}},
		{"INSPECT delta.`/d` LITE", &Inspect{Table: TableRef{Path: "/d", Format: "delta"}, Lite: true}},
		{"EXPLAIN VACUUM s.t PATHS ('a.parquet')", &ExplainVacuum{Table: TableRef{Name: []string{"s", "t"}}, Paths: []string{"a.parquet"}}},
		{"explain vacuum '/d' paths ('x=1/a b.parquet', '_tmp/', '../x') retain 0 hours",
			&ExplainVacuum{Table: TableRef{Path: "/d"}, Retain: n("0", 0), Paths: []string{"x=1/a b.parquet", "_tmp/", "../x"}}},
	}
	for _, c := range cases {
		got, err := Parse(c.src)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.src, err)
			continue
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("Parse(%q) (-want +got):\n%s", c.src, diff)
		}
		again, err := Parse(got.String())
		if err != nil || !cmp.Equal(got, again) {
			t.Errorf("%q: String() %q does not parse back: %v", c.src, got.String(), err)
		}
	}
}

func TestParseInspectAndExplainVacuumErrors(t *testing.T) {
	cases := []struct{ src, want string }{
		{"INSPECT", "expected a table"},
		{"INSPECT t RETAIN", "expected a number"},
		{"INSPECT t RETAIN 1", "expected HOURS"},
		{"INSPECT t LITE LITE", "LITE"},
		{"INSPECT t RETAIN 1 HOURS RETAIN 2 HOURS", "RETAIN"},
		{"INSPECT t DRY RUN", "expected LITE, RETAIN or end of statement"},
		{"EXPLAIN t", "expected VACUUM"},
		{"EXPLAIN VACUUM t", "expected PATHS"},
		{"EXPLAIN VACUUM t PATHS", "expected '('"},
		{"EXPLAIN VACUUM t PATHS ()", "expected a path in quotes"},
		{"EXPLAIN VACUUM t PATHS (a)", "expected a path in quotes"},
		{"EXPLAIN VACUUM t PATHS ('a' 'b')", "expected ',' or ')'"},
		{"EXPLAIN VACUUM t PATHS ('a'", "unclosed '('"},
		{"EXPLAIN VACUUM t PATHS ('a') PATHS ('b')", "PATHS"},
		{"EXPLAIN SELECT 1", "expected VACUUM"},
	}
	for _, c := range cases {
		_, err := Parse(c.src)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q): got %v, want an error mentioning %q", c.src, err, c.want)
		}
	}
}
