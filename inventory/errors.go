package inventory

import (
	"errors"
	"strings"
)

// ErrInvalidSchema is matched (errors.Is) by every *SchemaError: the inventory lacks one of the
// required columns or holds it with another type. Spark's error class is
// DELTA_INVALID_INVENTORY_SCHEMA.
var ErrInvalidSchema = errors.New("DELTA_INVALID_INVENTORY_SCHEMA")

// ErrInvalidRow is returned (wrapped) for a row inside the table root that cannot be listed: a
// file without length or modification time, a row without isDir, a negative length. The message
// names the inventory file and row.
var ErrInvalidRow = errors.New("invalid inventory row")

// RequiredSchema is the schema every inventory must have, as Spark states it.
const RequiredSchema = "path STRING, length BIGINT, isDir BOOLEAN, modificationTime BIGINT"

// Field is a column of an inventory and its SQL type, as shown in messages.
type Field struct {
	Name string
	Type string
}

// SchemaError reports an inventory whose schema lacks a required column or holds it with a type
// that cannot be read as the required one. It matches ErrInvalidSchema.
type SchemaError struct {
	// Location is the inventory (file, directory or table).
	Location string
	// Found is the schema of the inventory (of the query's output for a query).
	Found []Field
	// Problems says what is wrong, one entry per column ("modificationTime is missing").
	Problems []string
}

func (e *SchemaError) Error() string {
	var b strings.Builder
	b.WriteString("[DELTA_INVALID_INVENTORY_SCHEMA] The schema for the specified INVENTORY does not contain all of the required fields. Required fields are: ")
	b.WriteString(RequiredSchema)
	b.WriteString(".")
	if e.Location != "" || e.Found != nil {
		b.WriteString(" Found")
		if e.Location != "" {
			b.WriteString(" in " + e.Location)
		}
		b.WriteString(": ")
		for i, f := range e.Found {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(f.Name + " " + f.Type)
		}
		if len(e.Found) == 0 {
			b.WriteString("no columns")
		}
	}
	if len(e.Problems) > 0 {
		b.WriteString(" (" + strings.Join(e.Problems, "; ") + ")")
	}
	return b.String()
}

// Is makes errors.Is(err, ErrInvalidSchema) true.
func (e *SchemaError) Is(target error) bool { return target == ErrInvalidSchema }
