package sql

import (
	"strconv"
	"strings"
)

// Statement is a parsed statement: one of *Vacuum, *Set, *Reset,
// *AlterTableSetProperties, *AlterTableUnsetProperties, *ShowTblProperties, *ShowTables,
// *DescribeHistory, *DescribeDetail, *Inspect and *ExplainVacuum.
type Statement interface {
	// String returns the statement in canonical SQL, which parses to an equal value.
	String() string
	statement()
}

func (*Vacuum) statement()                    {}
func (*Set) statement()                       {}
func (*Reset) statement()                     {}
func (*AlterTableSetProperties) statement()   {}
func (*AlterTableUnsetProperties) statement() {}
func (*ShowTblProperties) statement()         {}
func (*ShowTables) statement()                {}
func (*DescribeHistory) statement()           {}
func (*DescribeDetail) statement()            {}

// TableRef names a table, either by name or by path.
//
// A name has one to three parts (table, schema.table or catalog.schema.table) and
// Path is empty. A path is given either as a string literal ('/data/t'), with Format
// empty, or as format.`path` (delta.`/data/t`), with Format the lower-case format:
// "delta", or for an inventory also "parquet", "csv" or "json". As in Spark, a
// two-part name is read as format and path only when the first part is one of those
// formats and the second is backquoted: delta.events is the table events of schema
// delta.
type TableRef struct {
	Name   []string
	Path   string
	Format string
}

// IsPath reports whether t is a path rather than a name.
func (t TableRef) IsPath() bool { return t.Name == nil }

// String returns the table as SQL.
func (t TableRef) String() string {
	switch {
	case t.Name != nil:
		parts := make([]string, len(t.Name))
		for i, p := range t.Name {
			parts[i] = nameString(p)
		}
		return strings.Join(parts, ".")
	case t.Format != "":
		return t.Format + "." + quoteIdent(t.Path)
	}
	return quoteString(t.Path)
}

// Number is a numeric literal, kept both as written and as a float64.
type Number struct {
	Text  string // as written, sign included, without blanks: "-1.50"
	Float float64
}

func (n Number) String() string { return n.Text }

// Vacuum is VACUUM table [LITE|FULL] [USING INVENTORY inventory] [RETAIN n HOURS] [DRY RUN].
type Vacuum struct {
	Table TableRef
	// Mode is "LITE", "FULL", or "" when not given.
	Mode string
	// Inventory is nil when there is no USING INVENTORY clause.
	Inventory *Inventory
	// Retain is the retention period in hours, nil when there is no RETAIN clause.
	// It may be negative or fractional; the caller decides what it accepts.
	Retain *Number
	DryRun bool
}

func (s *Vacuum) String() string {
	var b strings.Builder
	b.WriteString("VACUUM ")
	b.WriteString(s.Table.String())
	if s.Mode != "" {
		b.WriteString(" " + s.Mode)
	}
	if s.Inventory != nil {
		b.WriteString(" USING INVENTORY ")
		b.WriteString(s.Inventory.String())
	}
	if s.Retain != nil {
		b.WriteString(" RETAIN " + s.Retain.Text + " HOURS")
	}
	if s.DryRun {
		b.WriteString(" DRY RUN")
	}
	return b.String()
}

// Inventory is the USING INVENTORY clause of VACUUM: exactly one of Table and Query
// is set.
type Inventory struct {
	Table *TableRef
	Query *Query
}

func (inv *Inventory) String() string {
	if inv.Query != nil {
		return "(" + inv.Query.String() + ")"
	}
	if inv.Table != nil {
		return inv.Table.String()
	}
	return ""
}

// Query is SELECT * | column, ... FROM table [WHERE condition].
type Query struct {
	// Columns are the selected columns, nil for SELECT *.
	Columns []string
	From    TableRef
	// Where is nil when there is no WHERE clause.
	Where Expr
}

func (q *Query) String() string {
	var b strings.Builder
	b.WriteString("SELECT ")
	if q.Columns == nil {
		b.WriteString("*")
	}
	for i, c := range q.Columns {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(columnString(c))
	}
	b.WriteString(" FROM ")
	b.WriteString(q.From.String())
	if q.Where != nil {
		b.WriteString(" WHERE ")
		b.WriteString(q.Where.String())
	}
	return b.String()
}

// ReferencedColumns returns the columns the query names, in the select list or in
// the WHERE condition, each once, in the order they first appear. For SELECT * it
// returns only those of the condition.
func (q *Query) ReferencedColumns() []string {
	var names []string
	seen := map[string]bool{}
	add := func(name string) {
		if !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	for _, c := range q.Columns {
		add(c)
	}
	if q.Where != nil {
		walkColumns(q.Where, add)
	}
	return names
}

// Match reports whether the WHERE condition keeps row, which it does only when the
// condition is TRUE: FALSE and NULL drop the row. Without a condition every row
// matches. A condition that is not BOOLEAN is an error.
func (q *Query) Match(row Row) (bool, error) {
	if q.Where == nil {
		return true, nil
	}
	v, err := q.Where.Eval(row)
	if err != nil {
		return false, err
	}
	if err := needBool("WHERE", v); err != nil {
		return false, err
	}
	return v.Bool(), nil
}

// Set is SET (Key empty: show all settings), SET key (Value nil: show one) or
// SET key = value.
type Set struct {
	Key string
	// Value is the text after '=' to the end of the statement, trimmed; if that text
	// is a single string literal, its value. Nil when there is no '='.
	Value *string
}

func (s *Set) String() string {
	if s.Key == "" {
		return "SET"
	}
	str := "SET " + keyString(s.Key)
	if s.Value != nil {
		str += " = " + setValueString(*s.Value)
	}
	return str
}

// Reset is RESET (Key empty: reset all settings) or RESET key.
type Reset struct {
	Key string
}

func (s *Reset) String() string {
	if s.Key == "" {
		return "RESET"
	}
	return "RESET " + keyString(s.Key)
}

// keyString returns a configuration key as SET and RESET read it: as is when that
// reads back the same, else in backquotes.
func keyString(key string) string {
	if st, err := Parse("RESET " + key); err == nil {
		if r, ok := st.(*Reset); ok && r.Key == key {
			return key
		}
	}
	return quoteIdent(key)
}

// setValueString returns the value of a SET statement as is when that reads back the
// same, else (and when empty) as a string literal.
func setValueString(v string) string {
	if v == "" {
		return "''"
	}
	if st, err := Parse("SET k = " + v); err == nil {
		if s, ok := st.(*Set); ok && s.Value != nil && *s.Value == v {
			return v
		}
	}
	return quoteString(v)
}

// Property is a table property.
type Property struct {
	Key, Value string
}

// AlterTableSetProperties is ALTER TABLE table SET TBLPROPERTIES (key = value, ...).
type AlterTableSetProperties struct {
	Table TableRef
	// Properties are in the order written; keys are distinct. Unquoted values are
	// kept as written, except that true and false are lower-cased as in Spark.
	Properties []Property
}

func (s *AlterTableSetProperties) String() string {
	var b strings.Builder
	b.WriteString("ALTER TABLE " + s.Table.String() + " SET TBLPROPERTIES (")
	for i, p := range s.Properties {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quoteString(p.Key) + " = " + quoteString(p.Value))
	}
	b.WriteString(")")
	return b.String()
}

// AlterTableUnsetProperties is ALTER TABLE table UNSET TBLPROPERTIES [IF EXISTS] (key, ...).
type AlterTableUnsetProperties struct {
	Table    TableRef
	IfExists bool
	// Keys are in the order written, and distinct.
	Keys []string
}

func (s *AlterTableUnsetProperties) String() string {
	var b strings.Builder
	b.WriteString("ALTER TABLE " + s.Table.String() + " UNSET TBLPROPERTIES ")
	if s.IfExists {
		b.WriteString("IF EXISTS ")
	}
	b.WriteString("(")
	for i, k := range s.Keys {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quoteString(k))
	}
	b.WriteString(")")
	return b.String()
}

// ShowTblProperties is SHOW TBLPROPERTIES table [(key)].
type ShowTblProperties struct {
	Table TableRef
	// Key is "" to show all properties.
	Key string
}

func (s *ShowTblProperties) String() string {
	str := "SHOW TBLPROPERTIES " + s.Table.String()
	if s.Key != "" {
		str += " (" + quoteString(s.Key) + ")"
	}
	return str
}

// ShowTables is SHOW TABLES [IN schema]: the tables of the warehouse, a Fabric lakehouse.
type ShowTables struct {
	// Schema is "" for the tables of every schema.
	Schema string
}

func (s *ShowTables) String() string {
	if s.Schema == "" {
		return "SHOW TABLES"
	}
	return "SHOW TABLES IN " + nameString(s.Schema)
}

// DescribeHistory is DESCRIBE HISTORY table [LIMIT n].
type DescribeHistory struct {
	Table TableRef
	// Limit is nil when there is no LIMIT clause; never negative.
	Limit *int
}

func (s *DescribeHistory) String() string {
	str := "DESCRIBE HISTORY " + s.Table.String()
	if s.Limit != nil {
		str += " LIMIT " + strconv.Itoa(*s.Limit)
	}
	return str
}

// DescribeDetail is DESCRIBE DETAIL table.
type DescribeDetail struct {
	Table TableRef
}

func (s *DescribeDetail) String() string {
	return "DESCRIBE DETAIL " + s.Table.String()
}
