package sql

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Position is a place in the parsed input.
type Position struct {
	Offset int // byte offset, from 0
	Line   int // from 1
	Column int // from 1, in characters
}

func (p Position) String() string {
	return fmt.Sprintf("line %d, column %d", p.Line, p.Column)
}

// position returns the Position of byte offset off in src.
func position(src string, off int) Position {
	if off > len(src) {
		off = len(src)
	}
	before := src[:off]
	line := 1 + strings.Count(before, "\n")
	lineStart := strings.LastIndexByte(before, '\n') + 1
	return Position{Offset: off, Line: line, Column: 1 + utf8.RuneCountInString(before[lineStart:])}
}

// SyntaxError reports input that is not a statement of the supported grammar.
type SyntaxError struct {
	// Position is that of the offending token or, for an unterminated literal,
	// comment or parenthesis, that of its start.
	Position
	// Unexpected is the offending token as written, or "end of input".
	Unexpected string
	// Expected lists what the parser would have accepted instead, when known.
	Expected []string
	// Msg, when set, describes the problem in place of Unexpected and Expected,
	// as in "unterminated string literal".
	Msg string
}

func (e *SyntaxError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "syntax error at %v: ", e.Position)
	if e.Msg != "" {
		b.WriteString(e.Msg)
		return b.String()
	}
	if e.Unexpected == endOfInput {
		b.WriteString("unexpected end of input")
	} else {
		fmt.Fprintf(&b, "unexpected '%s'", e.Unexpected)
	}
	if len(e.Expected) > 0 {
		b.WriteString(", expected ")
		b.WriteString(orList(e.Expected))
	}
	return b.String()
}

// orList joins items as "a, b or c".
func orList(items []string) string {
	if len(items) == 1 {
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}

// supportedStatements is the list UnknownStatementError gives.
const supportedStatements = "VACUUM, SET, RESET, ALTER TABLE, SHOW TBLPROPERTIES, SHOW TABLES, DESCRIBE HISTORY, DESCRIBE DETAIL, INSPECT, EXPLAIN VACUUM"

// UnknownStatementError reports a statement of a kind this package does not support,
// such as DROP TABLE or OPTIMIZE.
type UnknownStatementError struct {
	Position
	// Statement is the statement's leading keyword or keywords as written:
	// "DROP", "SHOW VIEWS".
	Statement string
}

func (e *UnknownStatementError) Error() string {
	return fmt.Sprintf("unknown statement '%s': supported statements are %s", e.Statement, supportedStatements)
}

// DuplicateClauseError reports a VACUUM clause given more than once. Its message is
// Spark's, capital letter included, so that users recognise it.
type DuplicateClauseError struct {
	// Position is that of the repeated clause.
	Position
	// Clause is "LITE/FULL", "USING INVENTORY", "RETAIN" or "DRY RUN".
	Clause string
}

func (e *DuplicateClauseError) Error() string {
	return "Found duplicate clauses: " + e.Clause
}

// DuplicateKeyError reports a table property key given twice in one statement.
type DuplicateKeyError struct {
	// Position is that of the repeated key.
	Position
	Key string
}

func (e *DuplicateKeyError) Error() string {
	return fmt.Sprintf("duplicate property key '%s'", e.Key)
}

// UnknownColumnError reports a column that an expression references and the row
// does not have.
type UnknownColumnError struct {
	Name string
}

func (e *UnknownColumnError) Error() string {
	return fmt.Sprintf("unknown column '%s'", e.Name)
}
