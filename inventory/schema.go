package inventory

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/deltavacuum/deltavacuum/sql"
)

// kind is how the values of a column are held once read.
type kind uint8

const (
	kindOther     kind = iota // binary, decimal, date, nested...: shown in the schema, never read
	kindString                // STRING: sql.StringValue
	kindInt                   // integers of any width and signedness: sql.IntValue
	kindBool                  // BOOLEAN: sql.BoolValue
	kindFloat                 // FLOAT, DOUBLE: sql.FloatValue
	kindTimestamp             // TIMESTAMP: sql.IntValue of milliseconds since the epoch
	kindText                  // CSV text: sql.StringValue, converted where a type is required
)

// column is one column of a table: its name, its SQL type for messages, and how it is read.
type column struct {
	name string
	typ  string
	kind kind
}

// table is a source of rows: a file, a set of files, a Delta table, or a cloud inventory report
// mapped onto the required columns.
type table interface {
	// location names the table in messages.
	location() string
	columns() []column
	// scan streams the rows. Only the columns i with need[i] are read; the other cells are NULL.
	// The row slice is reused: fn must not keep it. An error of fn is returned wrapped with the
	// file and row it happened on.
	scan(ctx context.Context, need []bool, fn func(row []sql.Value) error) error
}

// The required columns, in the order of RequiredSchema.
const (
	colPath = iota
	colLength
	colIsDir
	colModTime
	numRequired
)

var requiredNames = [numRequired]string{"path", "length", "isDir", "modificationTime"}

// accepts reports whether a column of kind k can be read as required column r.
func accepts(r int, k kind) bool {
	if k == kindText {
		return true // CSV: the values are converted, and a value that is not of the type is an error
	}
	switch r {
	case colPath:
		return k == kindString
	case colLength, colModTime:
		return k == kindInt
	case colIsDir:
		return k == kindBool
	}
	return false
}

var requiredTypes = [numRequired]string{"STRING", "an integer type", "BOOLEAN", "an integer type"}

// lookup finds a column by name: the exact name, else the only one equal ignoring case (Spark
// resolves names case-insensitively). It returns -1 when there is none, -2 when the name is
// ambiguous.
func lookup(cols []column, name string) int {
	found := -1
	for i, c := range cols {
		if c.name == name {
			return i
		}
		if strings.EqualFold(c.name, name) {
			if found >= 0 {
				found = -2
			} else if found == -1 {
				found = i
			}
		}
	}
	return found
}

func fields(cols []column) []Field {
	out := make([]Field, len(cols))
	for i, c := range cols {
		out[i] = Field{Name: c.name, Type: c.typ}
	}
	return out
}

// checkRequired resolves the required columns among cols, the inventory's (or the query's output)
// schema, and returns their indexes, or a *SchemaError.
func checkRequired(loc string, cols []column) ([numRequired]int, error) {
	var idx [numRequired]int
	var problems []string
	for r, name := range requiredNames {
		i := lookup(cols, name)
		switch {
		case i == -1:
			problems = append(problems, name+" is missing")
		case i == -2:
			problems = append(problems, name+" is ambiguous: several columns have that name in different cases")
		case !accepts(r, cols[i].kind):
			problems = append(problems, fmt.Sprintf("%s is %s, not %s", cols[i].name, cols[i].typ, requiredTypes[r]))
		}
		idx[r] = i
	}
	if problems != nil {
		return idx, &SchemaError{Location: loc, Found: fields(cols), Problems: problems}
	}
	return idx, nil
}

// textValue converts a CSV cell to the kind a required column needs. An empty cell is NULL.
func textValue(v sql.Value, want kind) (sql.Value, bool) {
	if v.Kind() != sql.KindString {
		return v, true
	}
	s := strings.TrimSpace(v.Str())
	if s == "" {
		return sql.NullValue(), true
	}
	switch want {
	case kindInt:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return v, false
		}
		return sql.IntValue(n), true
	case kindBool:
		switch strings.ToLower(s) {
		case "true":
			return sql.BoolValue(true), true
		case "false":
			return sql.BoolValue(false), true
		}
		return v, false
	}
	return v, true
}

var requiredKinds = [numRequired]kind{kindString, kindInt, kindBool, kindInt}
