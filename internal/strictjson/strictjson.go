// Package strictjson is the one JSON decoder of what this program reads from others: the
// lines and columns of a Delta log (deltalog), the request bodies of the service and the
// private arguments of the command line. It decodes exactly: a duplicate key, a key in
// another case than the one expected, invalid UTF-8 and data after the value are errors.
//
// encoding/json matches keys case-insensitively, lets the last of two equal keys win and
// replaces invalid UTF-8 with U+FFFD, so a careless or hostile writer could make it read
// {"REMOVE":…} as a remove, {"plan": A, "plan": B} as B where a proxy or a log saw A, or a
// path other than the one written. The decoder here is go-json-experiment/json (the prototype
// of encoding/json/v2), strict by construction; the options are spelled out so that a changed
// default cannot loosen it. It must never be loosened for one caller: every reader of JSON
// that others write goes through Options.
package strictjson

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Options are the decoding options of every strict read: keys match exactly, a duplicate key
// and invalid UTF-8 are errors.
var Options = json.JoinOptions(
	json.MatchCaseInsensitiveNames(false),
	jsontext.AllowDuplicateNames(false),
	jsontext.AllowInvalidUTF8(false),
)

// Unmarshal decodes b, exactly one JSON value, into v. Object members that v does not declare
// are skipped (a Delta reader must ignore fields it does not know), but their text is checked
// all the same.
func Unmarshal(b []byte, v any) error {
	return json.Unmarshal(b, v, Options)
}

// UnmarshalKnown decodes b, exactly one JSON value, into v and also refuses object members
// that v does not declare. The text is checked whole before it is mapped onto v, so that a
// duplicate key or invalid UTF-8 is reported as such wherever it is, even after an unknown
// key. The error is an *Error naming the key.
func UnmarshalKnown(b []byte, v any) error {
	if !utf8.Valid(b) {
		i := 0
		for i < len(b) {
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			i += n
		}
		return &Error{Msg: fmt.Sprintf("invalid UTF-8 at byte %d", i), err: errors.New("invalid UTF-8")}
	}
	dec := jsontext.NewDecoder(bytes.NewReader(b), Options)
	if _, err := dec.ReadValue(); err != nil {
		return describe(err)
	}
	end := dec.InputOffset()
	if _, err := dec.ReadToken(); err != io.EOF {
		return &Error{Msg: fmt.Sprintf("data after the JSON value (from byte %d): send one JSON value", end), err: errTrailing}
	}
	if err := json.Unmarshal(b, v, Options, json.RejectUnknownMembers(true)); err != nil {
		return describe(err)
	}
	return nil
}

// errTrailing is the cause of an *Error for data after the value.
var errTrailing = errors.New("data after the JSON value")

// Error is a strict decoding error that says where and what: Key is the JSON Pointer of the
// member concerned ("/plan"; "" for the value as a whole).
type Error struct {
	Key string
	Msg string
	err error
}

func (e *Error) Error() string { return e.Msg }
func (e *Error) Unwrap() error { return e.err }

// describe turns an error of go-json-experiment into an *Error whose message names the key in
// words a user of an API reads, without the Go types of the decoder.
func describe(err error) error {
	var syn *jsontext.SyntacticError
	var sem *json.SemanticError
	switch {
	case errors.As(err, &syn):
		key := string(syn.JSONPointer)
		switch {
		case errors.Is(err, jsontext.ErrDuplicateName):
			return &Error{Key: key, Msg: fmt.Sprintf("key %s appears twice: keep one", keyName(syn.JSONPointer)), err: err}
		}
		msg := "not valid JSON"
		if syn.Err != nil {
			msg += ": " + syn.Err.Error()
		}
		return &Error{Key: key, Msg: fmt.Sprintf("%s (in %s, at byte %d)", msg, where(syn.JSONPointer), syn.ByteOffset), err: err}
	case errors.As(err, &sem):
		key := string(sem.JSONPointer)
		if errors.Is(err, json.ErrUnknownName) {
			return &Error{Key: key, Msg: fmt.Sprintf("unknown key %s (keys are case-sensitive)", keyName(sem.JSONPointer)), err: err}
		}
		want := "another type"
		if sem.GoType != nil {
			want = goKind(sem.GoType)
		}
		got := "a JSON value"
		if k := kindName(sem.JSONKind); k != "" {
			got = "a JSON " + k
		}
		return &Error{Key: key, Msg: fmt.Sprintf("%s is %s, want %s", where(sem.JSONPointer), got, want), err: err}
	}
	return &Error{Msg: err.Error(), err: err}
}

// keyName is the last key of p, quoted, with its parent when it is nested ("b" in /a).
func keyName(p jsontext.Pointer) string {
	name := fmt.Sprintf("%q", p.LastToken())
	if parent := p.Parent(); parent != "" {
		name += " in " + string(parent)
	}
	return name
}

// where names the value at p.
func where(p jsontext.Pointer) string {
	if p == "" {
		return "the value"
	}
	return "the value of " + keyName(p)
}

// kindName is the name of a JSON kind, "" when it is unknown.
func kindName(k jsontext.Kind) string {
	switch k {
	case 'n':
		return "null"
	case 'f', 't':
		return "boolean"
	case '"':
		return "string"
	case '0':
		return "number"
	case '{':
		return "object"
	case '[':
		return "array"
	}
	return ""
}

// goKind names what a Go type takes, in JSON's words.
func goKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Pointer:
		return goKind(t.Elem())
	}
	return "another type"
}
