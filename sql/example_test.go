package sql_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/deltavacuum/deltavacuum/sql"
)

func ExampleParseScript() {
	script := `
SET spark.databricks.delta.retentionDurationCheck.enabled = false;
-- keep one day
VACUUM sales.orders
  USING INVENTORY (SELECT * FROM inventory WHERE path LIKE 'abfss://%')
  RETAIN 24 HOURS DRY RUN;
`
	stmts, err := sql.ParseScript(script)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range stmts {
		switch s := s.(type) {
		case *sql.Set:
			fmt.Printf("set %s to %s\n", s.Key, *s.Value)
		case *sql.Vacuum:
			fmt.Printf("vacuum %v, retain %v hours, dry run %v\n", s.Table.Name, s.Retain.Float, s.DryRun)
			fmt.Println(s)
		}
	}
	// Output:
	// set spark.databricks.delta.retentionDurationCheck.enabled to false
	// vacuum [sales orders], retain 24 hours, dry run true
	// VACUUM sales.orders USING INVENTORY (SELECT * FROM inventory WHERE path LIKE 'abfss://%') RETAIN 24 HOURS DRY RUN
}

func ExampleQuery_Match() {
	s, err := sql.Parse("VACUUM t USING INVENTORY (SELECT * FROM inv WHERE path LIKE '%.parquet' AND size > 0)")
	if err != nil {
		fmt.Println(err)
		return
	}
	q := s.(*sql.Vacuum).Inventory.Query
	fmt.Println(q.ReferencedColumns())
	rows := []map[string]sql.Value{
		{"path": sql.StringValue("a.parquet"), "size": sql.IntValue(10)},
		{"path": sql.StringValue("b.parquet"), "size": sql.NullValue()},
		{"path": sql.StringValue("c.json"), "size": sql.IntValue(10)},
	}
	for _, row := range rows {
		ok, err := q.Match(func(col string) (sql.Value, bool) {
			for name, v := range row {
				if strings.EqualFold(name, col) {
					return v, true
				}
			}
			return sql.Value{}, false
		})
		fmt.Println(row["path"], ok, err)
	}
	// Output:
	// [path size]
	// 'a.parquet' true <nil>
	// 'b.parquet' false <nil>
	// 'c.json' false <nil>
}

func ExampleParse_error() {
	_, err := sql.Parse("VACUUM t RETAIN 24 HOURS RETAIN 48 HOURS")
	var dup *sql.DuplicateClauseError
	if errors.As(err, &dup) {
		fmt.Println(err, "at", dup.Position)
	}
	_, err = sql.Parse("VACUUM t RETAIN 24 DAYS")
	var syn *sql.SyntaxError
	if errors.As(err, &syn) {
		fmt.Println(syn.Line, syn.Column, syn.Unexpected, syn.Expected)
		fmt.Println(err)
	}
	// Output:
	// Found duplicate clauses: RETAIN at line 1, column 26
	// 1 20 DAYS [HOURS]
	// syntax error at line 1, column 20: unexpected 'DAYS', expected HOURS
}
