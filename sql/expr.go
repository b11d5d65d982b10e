package sql

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Row gives an expression the values of a row's columns: the value of the named
// column, and false when the row has no such column. Names are passed as written in
// the query; a Row may match them case-insensitively, as Spark does.
type Row func(column string) (Value, bool)

// Expr is a WHERE condition or one of its operands. It is one of *Literal, *Column,
// *Comparison, *Like, *In, *IsNull, *Not, *And and *Or.
type Expr interface {
	// Eval evaluates the expression on a row. Comparisons and logic follow SQL's
	// three-valued logic: a comparison with NULL is NULL, NULL AND FALSE is FALSE,
	// NULL OR TRUE is TRUE. A column the row does not have is an *UnknownColumnError;
	// operands of the wrong type are errors too.
	Eval(row Row) (Value, error)
	// String returns the expression in canonical SQL.
	String() string
	expr()
}

// Literal is a constant.
type Literal struct {
	Value Value
}

// Column is a reference to a column by name.
type Column struct {
	Name string
}

// CompareOp is a comparison operator.
type CompareOp string

// The comparison operators. The parser reads == as OpEq and <> as OpNe.
const (
	OpEq CompareOp = "="
	OpNe CompareOp = "!="
	OpLt CompareOp = "<"
	OpLe CompareOp = "<="
	OpGt CompareOp = ">"
	OpGe CompareOp = ">="
)

var compareOps = map[string]CompareOp{
	"=": OpEq, "==": OpEq, "!=": OpNe, "<>": OpNe,
	"<": OpLt, "<=": OpLe, ">": OpGt, ">=": OpGe,
}

// Comparison is Left Op Right.
type Comparison struct {
	Op          CompareOp
	Left, Right Expr
}

// Like is Expr [NOT] LIKE Pattern. In Pattern, % matches any sequence of characters,
// _ matches one character and a backslash matches the character after it literally.
// Pattern is the value of the string literal: '\%' in SQL is the two characters \%.
type Like struct {
	Expr    Expr
	Pattern string
	Not     bool
}

// In is Expr [NOT] IN (List...).
type In struct {
	Expr Expr
	List []Value
	Not  bool
}

// IsNull is Expr IS [NOT] NULL.
type IsNull struct {
	Expr Expr
	Not  bool
}

// Not is NOT Expr.
type Not struct {
	Expr Expr
}

// And is Left AND Right.
type And struct {
	Left, Right Expr
}

// Or is Left OR Right.
type Or struct {
	Left, Right Expr
}

func (*Literal) expr()    {}
func (*Column) expr()     {}
func (*Comparison) expr() {}
func (*Like) expr()       {}
func (*In) expr()         {}
func (*IsNull) expr()     {}
func (*Not) expr()        {}
func (*And) expr()        {}
func (*Or) expr()         {}

// Operator precedence, loosest first.
const (
	precOr = iota + 1
	precAnd
	precNot
	precPredicate
	precPrimary
)

func precedence(e Expr) int {
	switch e.(type) {
	case *Or:
		return precOr
	case *And:
		return precAnd
	case *Not:
		return precNot
	case *Comparison, *Like, *In, *IsNull:
		return precPredicate
	}
	return precPrimary
}

// operand formats e as an operand of an operator of precedence prec, adding
// parentheses when e binds less tightly. Operands of predicates must be primaries.
func operand(e Expr, prec int) string {
	p := precedence(e)
	if p < prec || prec == precPredicate && p != precPrimary {
		return "(" + e.String() + ")"
	}
	return e.String()
}

// reserved are the words that cannot be column names without backquotes.
var reserved = map[string]bool{
	"AND": true, "OR": true, "NOT": true, "LIKE": true, "IN": true, "IS": true,
	"NULL": true, "TRUE": true, "FALSE": true, "SELECT": true, "FROM": true, "WHERE": true,
}

func isReserved(word string) bool { return reserved[strings.ToUpper(word)] }

// columnString returns a column name, backquoted when needed.
func columnString(name string) string {
	if isWordText(name) && !isReserved(name) {
		return name
	}
	return quoteIdent(name)
}

func (e *Literal) String() string { return e.Value.String() }

func (e *Column) String() string { return columnString(e.Name) }

func (e *Comparison) String() string {
	return operand(e.Left, precPredicate) + " " + string(e.Op) + " " + operand(e.Right, precPredicate)
}

func (e *Like) String() string {
	op := " LIKE "
	if e.Not {
		op = " NOT LIKE "
	}
	return operand(e.Expr, precPredicate) + op + quoteString(e.Pattern)
}

func (e *In) String() string {
	var b strings.Builder
	b.WriteString(operand(e.Expr, precPredicate))
	if e.Not {
		b.WriteString(" NOT")
	}
	b.WriteString(" IN (")
	for i, v := range e.List {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(v.String())
	}
	b.WriteString(")")
	return b.String()
}

func (e *IsNull) String() string {
	if e.Not {
		return operand(e.Expr, precPredicate) + " IS NOT NULL"
	}
	return operand(e.Expr, precPredicate) + " IS NULL"
}

func (e *Not) String() string { return "NOT " + operand(e.Expr, precNot) }

// String returns the expression in canonical SQL. Operands get parentheses when
// they bind less tightly than AND, and a right operand also when it is an AND,
// since the parser groups to the left.
func (e *And) String() string {
	return operand(e.Left, precAnd) + " AND " + operand(e.Right, precAnd+1)
}

// String returns the expression in canonical SQL, with parentheses as for And.
func (e *Or) String() string {
	return operand(e.Left, precOr) + " OR " + operand(e.Right, precOr+1)
}

// Eval returns the literal's value.
func (e *Literal) Eval(Row) (Value, error) { return e.Value, nil }

// Eval returns the column's value in row.
func (e *Column) Eval(row Row) (Value, error) {
	v, ok := row(e.Name)
	if !ok {
		return Value{}, &UnknownColumnError{Name: e.Name}
	}
	return v, nil
}

// Eval compares the operands: NULL if either is NULL.
func (e *Comparison) Eval(row Row) (Value, error) {
	l, r, err := eval2(e.Left, e.Right, row)
	if err != nil || l.IsNull() || r.IsNull() {
		return Value{}, err
	}
	c, err := compareValues(l, r)
	if err != nil {
		return Value{}, err
	}
	switch e.Op {
	case OpEq:
		return BoolValue(c == 0), nil
	case OpNe:
		return BoolValue(c != 0), nil
	case OpLt:
		return BoolValue(c < 0), nil
	case OpLe:
		return BoolValue(c <= 0), nil
	case OpGt:
		return BoolValue(c > 0), nil
	case OpGe:
		return BoolValue(c >= 0), nil
	}
	return Value{}, fmt.Errorf("unknown comparison operator %q", e.Op)
}

// Eval matches a STRING against the pattern: NULL if the operand is NULL.
func (e *Like) Eval(row Row) (Value, error) {
	v, err := e.Expr.Eval(row)
	if err != nil || v.IsNull() {
		return Value{}, err
	}
	if v.Kind() != KindString {
		return Value{}, fmt.Errorf("LIKE needs a STRING operand, got %v", v.Kind())
	}
	pat, err := compileLike(e.Pattern)
	if err != nil {
		return Value{}, err
	}
	return BoolValue(pat.match(v.Str()) != e.Not), nil
}

// Eval reports whether the operand equals a value of the list: NULL if the operand
// is NULL, or if it equals none and the list holds a NULL.
func (e *In) Eval(row Row) (Value, error) {
	v, err := e.Expr.Eval(row)
	if err != nil || v.IsNull() {
		return Value{}, err
	}
	found, sawNull := false, false
	for _, w := range e.List {
		if w.IsNull() {
			sawNull = true
			continue
		}
		c, err := compareValues(v, w)
		if err != nil {
			return Value{}, err
		}
		if c == 0 {
			found = true
		}
	}
	switch {
	case found:
		return BoolValue(!e.Not), nil
	case sawNull:
		return Value{}, nil
	}
	return BoolValue(e.Not), nil
}

// Eval reports whether the operand is NULL; never NULL itself.
func (e *IsNull) Eval(row Row) (Value, error) {
	v, err := e.Expr.Eval(row)
	if err != nil {
		return Value{}, err
	}
	return BoolValue(v.IsNull() != e.Not), nil
}

// Eval negates a BOOLEAN; NOT NULL is NULL.
func (e *Not) Eval(row Row) (Value, error) {
	v, err := e.Expr.Eval(row)
	if err != nil {
		return Value{}, err
	}
	if err := needBool("NOT", v); err != nil || v.IsNull() {
		return Value{}, err
	}
	return BoolValue(!v.Bool()), nil
}

// Eval is FALSE if either operand is FALSE, else NULL if either is NULL, else TRUE.
// Both operands are evaluated, so that errors do not depend on the data.
func (e *And) Eval(row Row) (Value, error) {
	l, r, err := evalLogic("AND", e.Left, e.Right, row)
	if err != nil {
		return Value{}, err
	}
	switch {
	case !l.IsNull() && !l.Bool() || !r.IsNull() && !r.Bool():
		return BoolValue(false), nil
	case l.IsNull() || r.IsNull():
		return Value{}, nil
	}
	return BoolValue(true), nil
}

// Eval is TRUE if either operand is TRUE, else NULL if either is NULL, else FALSE.
// Both operands are evaluated, so that errors do not depend on the data.
func (e *Or) Eval(row Row) (Value, error) {
	l, r, err := evalLogic("OR", e.Left, e.Right, row)
	if err != nil {
		return Value{}, err
	}
	switch {
	case l.Bool() || r.Bool():
		return BoolValue(true), nil
	case l.IsNull() || r.IsNull():
		return Value{}, nil
	}
	return BoolValue(false), nil
}

func eval2(a, b Expr, row Row) (Value, Value, error) {
	l, err := a.Eval(row)
	if err != nil {
		return Value{}, Value{}, err
	}
	r, err := b.Eval(row)
	if err != nil {
		return Value{}, Value{}, err
	}
	return l, r, nil
}

func evalLogic(op string, a, b Expr, row Row) (Value, Value, error) {
	l, r, err := eval2(a, b, row)
	if err != nil {
		return Value{}, Value{}, err
	}
	if err := needBool(op, l); err != nil {
		return Value{}, Value{}, err
	}
	if err := needBool(op, r); err != nil {
		return Value{}, Value{}, err
	}
	return l, r, nil
}

func needBool(op string, v Value) error {
	if v.Kind() != KindBool && !v.IsNull() {
		return fmt.Errorf("%s needs BOOLEAN operands, got %v", op, v.Kind())
	}
	return nil
}

// ReferencedColumns returns the names of the columns e references, each once, in the
// order they first appear.
func ReferencedColumns(e Expr) []string {
	var names []string
	seen := map[string]bool{}
	walkColumns(e, func(name string) {
		if !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	})
	return names
}

func walkColumns(e Expr, f func(string)) {
	switch e := e.(type) {
	case *Column:
		f(e.Name)
	case *Comparison:
		walkColumns(e.Left, f)
		walkColumns(e.Right, f)
	case *Like:
		walkColumns(e.Expr, f)
	case *In:
		walkColumns(e.Expr, f)
	case *IsNull:
		walkColumns(e.Expr, f)
	case *Not:
		walkColumns(e.Expr, f)
	case *And:
		walkColumns(e.Left, f)
		walkColumns(e.Right, f)
	case *Or:
		walkColumns(e.Left, f)
		walkColumns(e.Right, f)
	}
}

// likeElem is one element of a compiled LIKE pattern.
type likeElem struct {
	kind byte // 'c': the character r; '_': any one character; '%': any sequence
	r    rune
}

type likePattern []likeElem

// compileLike parses a LIKE pattern. Characters are UTF-8 code points; bytes that are
// not valid UTF-8 are characters of their own.
func compileLike(p string) (likePattern, error) {
	var elems likePattern
	for i := 0; i < len(p); {
		r, size := decodeChar(p, i)
		i += size
		switch r {
		case '%':
			if len(elems) == 0 || elems[len(elems)-1].kind != '%' {
				elems = append(elems, likeElem{kind: '%'})
			}
		case '_':
			elems = append(elems, likeElem{kind: '_'})
		case '\\':
			if i == len(p) {
				return nil, fmt.Errorf("LIKE pattern %s ends with an escape character", quoteString(p))
			}
			r, size = decodeChar(p, i)
			i += size
			elems = append(elems, likeElem{kind: 'c', r: r})
		default:
			elems = append(elems, likeElem{kind: 'c', r: r})
		}
	}
	return elems, nil
}

// match reports whether the whole of s matches the pattern, backtracking only to the
// last %, which takes O(len(s)·len(pattern)) time at worst.
func (p likePattern) match(s string) bool {
	var chars []rune
	for i := 0; i < len(s); {
		r, size := decodeChar(s, i)
		chars = append(chars, r)
		i += size
	}
	pi, si := 0, 0
	star, starS := -1, 0
	for si < len(chars) {
		switch {
		case pi < len(p) && p[pi].kind == '%':
			star, starS = pi, si
			pi++
		case pi < len(p) && (p[pi].kind == '_' || p[pi].r == chars[si]):
			pi++
			si++
		case star >= 0:
			starS++
			pi, si = star+1, starS
		default:
			return false
		}
	}
	for pi < len(p) && p[pi].kind == '%' {
		pi++
	}
	return pi == len(p)
}

// decodeChar decodes the character at s[i]. A byte that is not valid UTF-8 is a
// character of its own, distinct from every code point.
func decodeChar(s string, i int) (rune, int) {
	r, size := utf8.DecodeRuneInString(s[i:])
	if r == utf8.RuneError && size == 1 {
		r = -1 - rune(s[i])
	}
	return r, size
}
