package sql

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Kind is the type of a Value.
type Kind uint8

// The kinds of values.
const (
	KindNull Kind = iota
	KindBool
	KindInt
	KindFloat
	KindString
)

func (k Kind) String() string {
	switch k {
	case KindNull:
		return "NULL"
	case KindBool:
		return "BOOLEAN"
	case KindInt:
		return "BIGINT"
	case KindFloat:
		return "DOUBLE"
	case KindString:
		return "STRING"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Value is a SQL value: NULL, a boolean, a 64-bit integer, a float or a string.
// The zero Value is NULL.
type Value struct {
	kind Kind
	b    bool
	i    int64
	f    float64
	s    string
}

// NullValue returns NULL.
func NullValue() Value { return Value{} }

// BoolValue returns a BOOLEAN value.
func BoolValue(b bool) Value { return Value{kind: KindBool, b: b} }

// IntValue returns a BIGINT value.
func IntValue(i int64) Value { return Value{kind: KindInt, i: i} }

// FloatValue returns a DOUBLE value.
func FloatValue(f float64) Value { return Value{kind: KindFloat, f: f} }

// StringValue returns a STRING value.
func StringValue(s string) Value { return Value{kind: KindString, s: s} }

// Kind returns the type of v.
func (v Value) Kind() Kind { return v.kind }

// IsNull reports whether v is NULL.
func (v Value) IsNull() bool { return v.kind == KindNull }

// Bool returns the value of a BOOLEAN, false for other kinds.
func (v Value) Bool() bool { return v.b }

// Int returns the value of a BIGINT, 0 for other kinds.
func (v Value) Int() int64 { return v.i }

// Float returns the value of a DOUBLE, 0 for other kinds.
func (v Value) Float() float64 { return v.f }

// Str returns the value of a STRING, "" for other kinds.
func (v Value) Str() string { return v.s }

// Equal reports whether v and w are the same value of the same kind. Unlike SQL's =,
// NULL equals NULL and NaN equals NaN.
func (v Value) Equal(w Value) bool {
	if v.kind != w.kind {
		return false
	}
	switch v.kind {
	case KindBool:
		return v.b == w.b
	case KindInt:
		return v.i == w.i
	case KindFloat:
		return v.f == w.f || math.IsNaN(v.f) && math.IsNaN(w.f)
	case KindString:
		return v.s == w.s
	}
	return true
}

// String returns v as a SQL literal: NULL, TRUE, 42, 1.5, 'text'.
func (v Value) String() string {
	switch v.kind {
	case KindBool:
		if v.b {
			return "TRUE"
		}
		return "FALSE"
	case KindInt:
		return strconv.FormatInt(v.i, 10)
	case KindFloat:
		s := strconv.FormatFloat(v.f, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eIN") { // keep it a float literal: 100.0, not 100
			s += ".0"
		}
		return s
	case KindString:
		return quoteString(v.s)
	}
	return "NULL"
}

// compareValues orders two non-NULL values: BOOLEANs (FALSE < TRUE), numbers
// (BIGINT and DOUBLE compared numerically, NaN above everything and equal to itself)
// and STRINGs (byte-wise). Values of other combinations of kinds cannot be compared.
func compareValues(a, b Value) (int, error) {
	switch {
	case a.kind == KindBool && b.kind == KindBool:
		switch {
		case a.b == b.b:
			return 0, nil
		case b.b:
			return -1, nil
		}
		return 1, nil
	case a.kind == KindInt && b.kind == KindInt:
		return cmpInt(a.i, b.i), nil
	case a.kind == KindFloat && b.kind == KindFloat:
		return cmpFloat(a.f, b.f), nil
	case a.kind == KindInt && b.kind == KindFloat:
		return cmpIntFloat(a.i, b.f), nil
	case a.kind == KindFloat && b.kind == KindInt:
		return -cmpIntFloat(b.i, a.f), nil
	case a.kind == KindString && b.kind == KindString:
		return strings.Compare(a.s, b.s), nil
	}
	return 0, fmt.Errorf("cannot compare %v with %v", a.kind, b.kind)
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpFloat(a, b float64) int {
	switch {
	case math.IsNaN(a) && math.IsNaN(b):
		return 0
	case math.IsNaN(a):
		return 1
	case math.IsNaN(b):
		return -1
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// cmpIntFloat compares i with f exactly, without rounding i to a float.
func cmpIntFloat(i int64, f float64) int {
	switch {
	case math.IsNaN(f):
		return -1
	case f >= 0x1p63:
		return -1
	case f < -0x1p63:
		return 1
	}
	t := math.Trunc(f)
	if c := cmpInt(i, int64(t)); c != 0 {
		return c
	}
	switch frac := f - t; {
	case frac > 0:
		return -1
	case frac < 0:
		return 1
	}
	return 0
}
