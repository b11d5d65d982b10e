package sql

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func name(parts ...string) TableRef { return TableRef{Name: parts} }

func num(text string, f float64) *Number { return &Number{Text: text, Float: f} }

func ptr[T any](v T) *T { return &v }

// runParseTests parses each input and compares the statement with want, then checks
// the round trip through String.
func runParseTests(t *testing.T, tests []struct {
	in   string
	want Statement
}) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Parse(tt.in)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
			checkRoundTrip(t, got)
		})
	}
}

func TestParseVacuum(t *testing.T) {
	runParseTests(t, []struct {
		in   string
		want Statement
	}{
		{"VACUUM t", &Vacuum{Table: name("t")}},
		{"vacuum t", &Vacuum{Table: name("t")}},
		{"VaCuUm t;", &Vacuum{Table: name("t")}},
		{"VACUUM sales.orders", &Vacuum{Table: name("sales", "orders")}},
		{"VACUUM main.sales.orders", &Vacuum{Table: name("main", "sales", "orders")}},
		{"VACUUM main . sales . orders", &Vacuum{Table: name("main", "sales", "orders")}},
		{"VACUUM `my catalog`.`my schema`.`my table`", &Vacuum{Table: name("my catalog", "my schema", "my table")}},
		{"VACUUM `a``b`", &Vacuum{Table: name("a`b")}},
		{"VACUUM `tablé-ünïcode`", &Vacuum{Table: name("tablé-ünïcode")}},
		{"VACUUM `;`", &Vacuum{Table: name(";")}},
		{"VACUUM 2024_sales", &Vacuum{Table: name("2024_sales")}},
		{"VACUUM db.1a", &Vacuum{Table: name("db", "1a")}},
		{"VACUUM 1e5", &Vacuum{Table: name("1e5")}},
		{"VACUUM _t9", &Vacuum{Table: name("_t9")}},
		// Keywords are names where a name is expected.
		{"VACUUM retain RETAIN 1 HOURS", &Vacuum{Table: name("retain"), Retain: num("1", 1)}},
		{"VACUUM lite.full", &Vacuum{Table: name("lite", "full")}},
		// delta.name is a name; only delta.`path` is a path.
		{"VACUUM delta.events", &Vacuum{Table: name("delta", "events")}},
		{"VACUUM delta.`/data/t`", &Vacuum{Table: TableRef{Path: "/data/t", Format: "delta"}}},
		{"VACUUM DELTA.`/data/t`", &Vacuum{Table: TableRef{Path: "/data/t", Format: "delta"}}},
		{"VACUUM `delta`.`/data/t`", &Vacuum{Table: TableRef{Path: "/data/t", Format: "delta"}}},
		{"VACUUM x.delta.`/data/t`", &Vacuum{Table: name("x", "delta", "/data/t")}},
		{"VACUUM delta.`abfss://c@a.dfs.core.windows.net/t`", &Vacuum{Table: TableRef{Path: "abfss://c@a.dfs.core.windows.net/t", Format: "delta"}}},
		{"VACUUM delta.`/a``b`", &Vacuum{Table: TableRef{Path: "/a`b", Format: "delta"}}},
		{"VACUUM '/data/t'", &Vacuum{Table: TableRef{Path: "/data/t"}}},
		{`VACUUM "/data/t"`, &Vacuum{Table: TableRef{Path: "/data/t"}}},
		{"VACUUM 'abfss://container@account.dfs.core.windows.net/tables/t'",
			&Vacuum{Table: TableRef{Path: "abfss://container@account.dfs.core.windows.net/tables/t"}}},
		{"VACUUM 'Files/my table/date=2024-01-01/100%/a:b/ünï €'",
			&Vacuum{Table: TableRef{Path: "Files/my table/date=2024-01-01/100%/a:b/ünï €"}}},
		{"VACUUM '/a;b--c/*d*/'", &Vacuum{Table: TableRef{Path: "/a;b--c/*d*/"}}},
		{`VACUUM 'it\'s'`, &Vacuum{Table: TableRef{Path: "it's"}}},
		{`VACUUM 'it''s'`, &Vacuum{Table: TableRef{Path: "it's"}}},
		{`VACUUM "say ""hi"""`, &Vacuum{Table: TableRef{Path: `say "hi"`}}},
		{`VACUUM "say \"hi\" 'there'"`, &Vacuum{Table: TableRef{Path: `say "hi" 'there'`}}},
		{`VACUUM 'C:\\data\\t'`, &Vacuum{Table: TableRef{Path: `C:\data\t`}}},
		{`VACUUM 'a\nb\tc\rd\0e\bf\Zg'`, &Vacuum{Table: TableRef{Path: "a\nb\tc\rd\x00e\bf\x1ag"}}},
		{`VACUUM '100\%\_'`, &Vacuum{Table: TableRef{Path: `100\%\_`}}},
		{`VACUUM '\u00e9\U0001F600\101\q'`, &Vacuum{Table: TableRef{Path: "é😀Aq"}}},
		{`VACUUM r'C:\data\t'`, &Vacuum{Table: TableRef{Path: `C:\data\t`}}},
		{"VACUUM 'multi\nline'", &Vacuum{Table: TableRef{Path: "multi\nline"}}},

		{"VACUUM t LITE", &Vacuum{Table: name("t"), Mode: "LITE"}},
		{"VACUUM t full", &Vacuum{Table: name("t"), Mode: "FULL"}},
		{"VACUUM t DRY RUN", &Vacuum{Table: name("t"), DryRun: true}},
		{"VACUUM t dry\n  run", &Vacuum{Table: name("t"), DryRun: true}},
		// A line comment ends at a bare CR too (Spark's and Delta's SIMPLE_COMMENT).
		{"VACUUM t -- look first\rDRY RUN", &Vacuum{Table: name("t"), DryRun: true}},
		{"VACUUM t -- a month\rRETAIN 720 HOURS", &Vacuum{Table: name("t"), Retain: num("720", 720)}},
		{"VACUUM t RETAIN 168 HOURS", &Vacuum{Table: name("t"), Retain: num("168", 168)}},
		{"VACUUM t RETAIN 1 HOUR", &Vacuum{Table: name("t"), Retain: num("1", 1)}},
		{"VACUUM t retain 0 hours", &Vacuum{Table: name("t"), Retain: num("0", 0)}},
		{"VACUUM t RETAIN 1.5 HOURS", &Vacuum{Table: name("t"), Retain: num("1.5", 1.5)}},
		{"VACUUM t RETAIN 007.50 HOURS", &Vacuum{Table: name("t"), Retain: num("007.50", 7.5)}},
		{"VACUUM t RETAIN .5 HOURS", &Vacuum{Table: name("t"), Retain: num(".5", 0.5)}},
		{"VACUUM t RETAIN 5. HOURS", &Vacuum{Table: name("t"), Retain: num("5.", 5)}},
		{"VACUUM t RETAIN 1e2 HOURS", &Vacuum{Table: name("t"), Retain: num("1e2", 100)}},
		{"VACUUM t RETAIN -1 HOURS", &Vacuum{Table: name("t"), Retain: num("-1", -1)}},
		{"VACUUM t RETAIN - 2.5 HOURS", &Vacuum{Table: name("t"), Retain: num("-2.5", -2.5)}},
		{"VACUUM t RETAIN +3 HOURS", &Vacuum{Table: name("t"), Retain: num("+3", 3)}},
		{"VACUUM t USING INVENTORY inv", &Vacuum{Table: name("t"), Inventory: &Inventory{Table: &TableRef{Name: []string{"inv"}}}}},
		{"VACUUM t USING INVENTORY cat.db.inv", &Vacuum{Table: name("t"), Inventory: &Inventory{Table: &TableRef{Name: []string{"cat", "db", "inv"}}}}},
		{"VACUUM t USING INVENTORY delta.`/inv`", &Vacuum{Table: name("t"), Inventory: &Inventory{Table: &TableRef{Path: "/inv", Format: "delta"}}}},
		{"VACUUM t USING INVENTORY parquet.`/inv`", &Vacuum{Table: name("t"), Inventory: &Inventory{Table: &TableRef{Path: "/inv", Format: "parquet"}}}},
		{"VACUUM t USING INVENTORY CSV.`/inv.csv`", &Vacuum{Table: name("t"), Inventory: &Inventory{Table: &TableRef{Path: "/inv.csv", Format: "csv"}}}},
		{"VACUUM t USING INVENTORY json.`/inv.json`", &Vacuum{Table: name("t"), Inventory: &Inventory{Table: &TableRef{Path: "/inv.json", Format: "json"}}}},
		// avro is not a known format, so this is a two-part name.
		{"VACUUM t USING INVENTORY avro.`/inv`", &Vacuum{Table: name("t"), Inventory: &Inventory{Table: &TableRef{Name: []string{"avro", "/inv"}}}}},
		{"VACUUM t USING INVENTORY '/inv'", &Vacuum{Table: name("t"), Inventory: &Inventory{Table: &TableRef{Path: "/inv"}}}},
		{"VACUUM t USING INVENTORY (SELECT * FROM inventory WHERE path LIKE 'abfss://%') RETAIN 100 HOURS",
			&Vacuum{
				Table: name("t"),
				Inventory: &Inventory{Query: &Query{
					From:  name("inventory"),
					Where: &Like{Expr: &Column{Name: "path"}, Pattern: "abfss://%"},
				}},
				Retain: num("100", 100),
			}},
		{"vacuum t using inventory (select path, `length`, isDir, modificationTime from parquet.`/inv`)",
			&Vacuum{
				Table: name("t"),
				Inventory: &Inventory{Query: &Query{
					Columns: []string{"path", "length", "isDir", "modificationTime"},
					From:    TableRef{Path: "/inv", Format: "parquet"},
				}},
			}},
		{"VACUUM t USING INVENTORY ( SELECT * FROM '/inv' WHERE size > 0 AND NOT isDir )",
			&Vacuum{
				Table: name("t"),
				Inventory: &Inventory{Query: &Query{
					From: TableRef{Path: "/inv"},
					Where: &And{
						Left:  &Comparison{Op: OpGt, Left: &Column{Name: "size"}, Right: &Literal{Value: IntValue(0)}},
						Right: &Not{Expr: &Column{Name: "isDir"}},
					},
				}},
			}},
		{"VACUUM /* the table */ t -- retain a week\n RETAIN 168 HOURS -- done",
			&Vacuum{Table: name("t"), Retain: num("168", 168)}},
		{"VACUUM t USING INVENTORY (SELECT * FROM i WHERE " + strings.Repeat("(", 1000) + "a" + strings.Repeat(")", 1000) + ")",
			&Vacuum{Table: name("t"), Inventory: &Inventory{Query: &Query{From: name("i"), Where: &Column{Name: "a"}}}}},
		{"VACUUM t FULL USING INVENTORY inv RETAIN 0 HOURS DRY RUN",
			&Vacuum{Table: name("t"), Mode: "FULL", Inventory: &Inventory{Table: &TableRef{Name: []string{"inv"}}}, Retain: num("0", 0), DryRun: true}},
	})
}

// TestVacuumClauseOrder parses the four VACUUM clauses in every order.
func TestVacuumClauseOrder(t *testing.T) {
	clauses := []string{"LITE", "USING INVENTORY inv", "RETAIN 7 HOURS", "DRY RUN"}
	want := &Vacuum{
		Table:     name("t"),
		Mode:      "LITE",
		Inventory: &Inventory{Table: &TableRef{Name: []string{"inv"}}},
		Retain:    num("7", 7),
		DryRun:    true,
	}
	n := 0
	for _, order := range permutations(clauses) {
		n++
		in := "VACUUM t " + strings.Join(order, " ")
		t.Run(in, func(t *testing.T) {
			got, err := Parse(in)
			if err != nil {
				t.Fatalf("Parse(%q): %v", in, err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Parse(%q) mismatch (-want +got):\n%s", in, diff)
			}
		})
	}
	if n != 24 {
		t.Fatalf("tested %d orders, want 24", n)
	}
}

func permutations(s []string) [][]string {
	if len(s) <= 1 {
		return [][]string{append([]string(nil), s...)}
	}
	var all [][]string
	for i := range s {
		rest := append(append([]string(nil), s[:i]...), s[i+1:]...)
		for _, p := range permutations(rest) {
			all = append(all, append([]string{s[i]}, p...))
		}
	}
	return all
}

func TestParseSetReset(t *testing.T) {
	runParseTests(t, []struct {
		in   string
		want Statement
	}{
		{"SET", &Set{}},
		{"set;", &Set{}},
		{"SET spark.databricks.delta.retentionDurationCheck.enabled",
			&Set{Key: "spark.databricks.delta.retentionDurationCheck.enabled"}},
		{"SET spark.databricks.delta.retentionDurationCheck.enabled = false",
			&Set{Key: "spark.databricks.delta.retentionDurationCheck.enabled", Value: ptr("false")}},
		{"set spark.sql.shuffle.partitions=200;", &Set{Key: "spark.sql.shuffle.partitions", Value: ptr("200")}},
		{"SET  a.b  =   x  ", &Set{Key: "a.b", Value: ptr("x")}},
		{"SET k = 'quoted value'", &Set{Key: "k", Value: ptr("quoted value")}},
		{`SET k = "double; quoted"`, &Set{Key: "k", Value: ptr("double; quoted")}},
		{`SET k = 'it\'s'`, &Set{Key: "k", Value: ptr("it's")}},
		{"SET k = 'a' 'b'", &Set{Key: "k", Value: ptr("'a' 'b'")}},
		{"SET k = several words here", &Set{Key: "k", Value: ptr("several words here")}},
		{"SET k = abfss://c@a.dfs.core.windows.net/p?x=1", &Set{Key: "k", Value: ptr("abfss://c@a.dfs.core.windows.net/p?x=1")}},
		{"SET k = 168 hours -- a week", &Set{Key: "k", Value: ptr("168 hours")}},
		{"SET k =", &Set{Key: "k", Value: ptr("")}},
		{"SET k = ''", &Set{Key: "k", Value: ptr("")}},
		{"SET `my key` = 1", &Set{Key: "my key", Value: ptr("1")}},
		{"SET `spark.sql.x` = 1", &Set{Key: "spark.sql.x", Value: ptr("1")}},
		{"SET spark.hadoop.fs.s3a.bucket.my-bucket.endpoint = e", &Set{Key: "spark.hadoop.fs.s3a.bucket.my-bucket.endpoint", Value: ptr("e")}},
		{"SET a.1.b2", &Set{Key: "a.1.b2"}},
		{"RESET", &Reset{}},
		{"reset spark.sql.shuffle.partitions", &Reset{Key: "spark.sql.shuffle.partitions"}},
		{"RESET `weird key`", &Reset{Key: "weird key"}},
	})
}

func TestParseTableProperties(t *testing.T) {
	runParseTests(t, []struct {
		in   string
		want Statement
	}{
		{"ALTER TABLE t SET TBLPROPERTIES ('delta.deletedFileRetentionDuration' = 'interval 7 days')",
			&AlterTableSetProperties{Table: name("t"), Properties: []Property{{"delta.deletedFileRetentionDuration", "interval 7 days"}}}},
		{"alter table db.t set tblproperties (delta.appendOnly = true, 'b' 'x', c.`d e` = -1, e 1.5, f = FALSE, g = v2, \"h\" = \"i\")",
			&AlterTableSetProperties{Table: name("db", "t"), Properties: []Property{
				{"delta.appendOnly", "true"}, {"b", "x"}, {"c.d e", "-1"}, {"e", "1.5"}, {"f", "false"}, {"g", "v2"}, {"h", "i"},
			}}},
		{"ALTER TABLE delta.`/data/t` SET TBLPROPERTIES ('z' = '1', 'a' = '2')",
			&AlterTableSetProperties{Table: TableRef{Path: "/data/t", Format: "delta"}, Properties: []Property{{"z", "1"}, {"a", "2"}}}},
		{"ALTER TABLE t UNSET TBLPROPERTIES ('a', b.c)",
			&AlterTableUnsetProperties{Table: name("t"), Keys: []string{"a", "b.c"}}},
		{"ALTER TABLE t UNSET TBLPROPERTIES IF EXISTS ('delta.appendOnly')",
			&AlterTableUnsetProperties{Table: name("t"), IfExists: true, Keys: []string{"delta.appendOnly"}}},
		{"SHOW TBLPROPERTIES t", &ShowTblProperties{Table: name("t")}},
		{"SHOW TABLES", &ShowTables{}},
		{"show tables;", &ShowTables{}},
		{"SHOW TABLES IN sales", &ShowTables{Schema: "sales"}},
		{"SHOW TABLES FROM `my schema`", &ShowTables{Schema: "my schema"}},
		{"show tblproperties cat.db.t ('delta.minReaderVersion')", &ShowTblProperties{Table: name("cat", "db", "t"), Key: "delta.minReaderVersion"}},
		{"SHOW TBLPROPERTIES t (delta.minReaderVersion)", &ShowTblProperties{Table: name("t"), Key: "delta.minReaderVersion"}},
	})
}

func TestParseDescribe(t *testing.T) {
	runParseTests(t, []struct {
		in   string
		want Statement
	}{
		{"DESCRIBE HISTORY t", &DescribeHistory{Table: name("t")}},
		{"desc history t limit 10", &DescribeHistory{Table: name("t"), Limit: ptr(10)}},
		{"DESCRIBE HISTORY '/data/t' LIMIT 0", &DescribeHistory{Table: TableRef{Path: "/data/t"}, Limit: ptr(0)}},
		{"DESCRIBE HISTORY delta.`/data/t`", &DescribeHistory{Table: TableRef{Path: "/data/t", Format: "delta"}}},
		{"DESCRIBE DETAIL t", &DescribeDetail{Table: name("t")}},
		{"Desc Detail `a b`.c", &DescribeDetail{Table: name("a b", "c")}},
	})
}

func TestString(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"vacuum t dry run retain 1 hour lite", "VACUUM t LITE RETAIN 1 HOURS DRY RUN"},
		{"VACUUM `a b`.c2.`1`", "VACUUM `a b`.c2.`1`"},
		{"VACUUM \"it's\"", `VACUUM 'it\'s'`},
		{"VACUUM 'a\\\\b\nc'", `VACUUM 'a\\b\nc'`},
		{"VACUUM delta.`x``y`", "VACUUM delta.`x``y`"},
		{"VACUUM t USING INVENTORY (select `a b`, `from`, c from i where x == 1 or y <> 'z' and not z)",
			"VACUUM t USING INVENTORY (SELECT `a b`, `from`, c FROM i WHERE x = 1 OR y != 'z' AND NOT z)"},
		{"VACUUM t USING INVENTORY (SELECT * FROM i WHERE (a OR b) AND (c OR (d AND e)))",
			"VACUUM t USING INVENTORY (SELECT * FROM i WHERE (a OR b) AND (c OR d AND e))"},
		{"VACUUM t USING INVENTORY (SELECT * FROM i WHERE a AND (b AND c) OR (d OR e))",
			"VACUUM t USING INVENTORY (SELECT * FROM i WHERE a AND (b AND c) OR (d OR e))"},
		{"VACUUM t USING INVENTORY (SELECT * FROM i WHERE NOT (a = 1) AND (NOT b) = TRUE)",
			"VACUUM t USING INVENTORY (SELECT * FROM i WHERE NOT a = 1 AND (NOT b) = TRUE)"},
		{"VACUUM t USING INVENTORY (SELECT * FROM i WHERE a not in (1, -2.50, 'x', null, true) and b is not null and c not like '\\%')",
			"VACUUM t USING INVENTORY (SELECT * FROM i WHERE a NOT IN (1, -2.5, 'x', NULL, TRUE) AND b IS NOT NULL AND c NOT LIKE '\\\\%')"},
		{"VACUUM t USING INVENTORY (SELECT * FROM i WHERE `1e5` = 1e5 AND x = 100.0)",
			"VACUUM t USING INVENTORY (SELECT * FROM i WHERE `1e5` = 100000.0 AND x = 100.0)"},
		{"SET k = 'plain'", "SET k = plain"},
		{"SET k = 'needs; quotes'", `SET k = 'needs; quotes'`},
		{"SET k = ' padded '", `SET k = ' padded '`},
		{"SET k = ''", `SET k = ''`},
		{"SET k = '''quoted'''", `SET k = '\'quoted\''`},
		{"SET `a b` = 1", "SET `a b` = 1"},
		{"ALTER TABLE t SET TBLPROPERTIES (a.b TRUE)", "ALTER TABLE t SET TBLPROPERTIES ('a.b' = 'true')"},
		{"ALTER TABLE t UNSET TBLPROPERTIES if exists (a)", "ALTER TABLE t UNSET TBLPROPERTIES IF EXISTS ('a')"},
		{"SHOW TBLPROPERTIES t (a.b)", "SHOW TBLPROPERTIES t ('a.b')"},
		{"show tables from sales", "SHOW TABLES IN sales"},
		{"SHOW TABLES IN `a``b`", "SHOW TABLES IN `a``b`"},
		{"DESC HISTORY t LIMIT 007", "DESCRIBE HISTORY t LIMIT 7"},
		{"desc detail t", "DESCRIBE DETAIL t"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			s, err := Parse(tt.in)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
			if got := s.String(); got != tt.want {
				t.Errorf("Parse(%q).String() = %q, want %q", tt.in, got, tt.want)
			}
			checkRoundTrip(t, s)
		})
	}
}

func TestParseScript(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		want  []Statement
		texts []string
	}{
		{name: "empty", in: ""},
		{name: "only comments and semicolons", in: " -- nothing\n ;; /* here */ ;\n"},
		{
			name: "notebook cell",
			in: `-- Clean up the sales table
SET spark.databricks.delta.retentionDurationCheck.enabled = false;

/* Keep one day;
   not the default seven. */
VACUUM sales.orders RETAIN 24 HOURS DRY RUN;
VACUUM sales.orders RETAIN 24 HOURS;  -- for real
RESET spark.databricks.delta.retentionDurationCheck.enabled`,
			want: []Statement{
				&Set{Key: "spark.databricks.delta.retentionDurationCheck.enabled", Value: ptr("false")},
				&Vacuum{Table: name("sales", "orders"), Retain: num("24", 24), DryRun: true},
				&Vacuum{Table: name("sales", "orders"), Retain: num("24", 24)},
				&Reset{Key: "spark.databricks.delta.retentionDurationCheck.enabled"},
			},
			texts: []string{
				"SET spark.databricks.delta.retentionDurationCheck.enabled = false",
				"VACUUM sales.orders RETAIN 24 HOURS DRY RUN",
				"VACUUM sales.orders RETAIN 24 HOURS",
				"RESET spark.databricks.delta.retentionDurationCheck.enabled",
			},
		},
		{
			name: "semicolons in literals, identifiers and comments",
			in:   "VACUUM 'a;b' -- c;d\n; VACUUM `e;f` /* g;h */; SET k = \"i;j\";;",
			want: []Statement{
				&Vacuum{Table: TableRef{Path: "a;b"}},
				&Vacuum{Table: name("e;f")},
				&Set{Key: "k", Value: ptr("i;j")},
			},
			texts: []string{"VACUUM 'a;b'", "VACUUM `e;f`", `SET k = "i;j"`},
		},
		{
			name:  "no spaces",
			in:    "SET a=1;SET b=2;VACUUM t",
			want:  []Statement{&Set{Key: "a", Value: ptr("1")}, &Set{Key: "b", Value: ptr("2")}, &Vacuum{Table: name("t")}},
			texts: []string{"SET a=1", "SET b=2", "VACUUM t"},
		},
		{
			name:  "comment markers in strings",
			in:    "VACUUM '--not a comment' RETAIN 1 HOURS; VACUUM '/*nor this*/'",
			want:  []Statement{&Vacuum{Table: TableRef{Path: "--not a comment"}, Retain: num("1", 1)}, &Vacuum{Table: TableRef{Path: "/*nor this*/"}}},
			texts: []string{"VACUUM '--not a comment' RETAIN 1 HOURS", "VACUUM '/*nor this*/'"},
		},
		{
			name:  "block comment and unicode blanks",
			in:    "\uFEFF/* a * b; / c; */\u00a0VACUUM\u2003t\r\n",
			want:  []Statement{&Vacuum{Table: name("t")}},
			texts: []string{"VACUUM\u2003t"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseScript(tt.in)
			if err != nil {
				t.Fatalf("ParseScript(%q): %v", tt.in, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseScript(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
			texts, err := Split(tt.in)
			if err != nil {
				t.Fatalf("Split(%q): %v", tt.in, err)
			}
			if diff := cmp.Diff(tt.texts, texts); diff != "" {
				t.Errorf("Split(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}
