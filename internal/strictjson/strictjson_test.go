package strictjson

import (
	"errors"
	"strings"
	"testing"
)

type body struct {
	Plan   string `json:"plan"`
	DryRun bool   `json:"dryRun"`
	Nested struct {
		A int `json:"a"`
	} `json:"nested"`
}

func TestUnmarshalKnown(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		key      string // the JSON Pointer the error names
		msg      string // what the message says; "" for no error
	}{
		{"good", `{"plan":"p","dryRun":true,"nested":{"a":1}}`, "", ""},
		{"duplicate key", `{"plan":"a","plan":"b"}`, "/plan", `key "plan" appears twice`},
		{"duplicate key after an unknown one", `{"x":1,"plan":"a","plan":"b"}`, "/plan", `key "plan" appears twice`},
		{"duplicate nested key", `{"nested":{"a":1,"a":2}}`, "/nested/a", `key "a" in /nested appears twice`},
		{"duplicate key of an unknown member", `{"x":{"k":1,"k":2}}`, "/x/k", `key "k" in /x appears twice`},
		{"key in another case", `{"Plan":"a"}`, "/Plan", `unknown key "Plan" (keys are case-sensitive)`},
		{"unknown key", `{"plan":"a","more":1}`, "/more", `unknown key "more"`},
		{"invalid UTF-8 in a value", "{\"plan\":\"\xff\"}", "", "invalid UTF-8 at byte 9"},
		{"invalid UTF-8 in a key", "{\"pl\xc3an\":1}", "", "invalid UTF-8 at byte 4"},
		{"a lone surrogate", `{"plan":"\ud800"}`, "/plan", `invalid surrogate pair`},
		{"trailing garbage", `{"plan":"a"} x`, "", "data after the JSON value (from byte 12)"},
		{"a second value", `{"plan":"a"}{"plan":"b"}`, "", "data after the JSON value (from byte 12)"},
		{"wrong type", `{"plan":1}`, "/plan", `the value of "plan" is a JSON number, want a string`},
		{"not an object", `[1]`, "", "the value is a JSON array, want an object"},
		{"truncated", `{"plan":`, "/plan", "not valid JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v body
			err := UnmarshalKnown([]byte(tc.in), &v)
			if tc.msg == "" {
				if err != nil {
					t.Fatalf("got %v, want no error", err)
				}
				if v.Plan != "p" || !v.DryRun || v.Nested.A != 1 {
					t.Errorf("got %+v", v)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v (%T), want an *Error", err, err)
			}
			if !strings.Contains(e.Error(), tc.msg) {
				t.Errorf("got %q, want it to say %q", e.Error(), tc.msg)
			}
			if e.Key != tc.key {
				t.Errorf("got key %q, want %q", e.Key, tc.key)
			}
		})
	}
}

// Unmarshal skips unknown keys (a Delta reader ignores fields it does not know) but is as
// strict as UnmarshalKnown about the text.
func TestUnmarshal(t *testing.T) {
	var v body
	if err := Unmarshal([]byte(`{"plan":"p","other":{"x":1}}`), &v); err != nil || v.Plan != "p" {
		t.Fatalf("got %+v, %v", v, err)
	}
	for _, in := range []string{`{"plan":"a","plan":"b"}`, `{"other":{"x":1,"x":2}}`, "{\"plan\":\"\xff\"}", `{"plan":"a"} {}`} {
		if err := Unmarshal([]byte(in), &v); err == nil {
			t.Errorf("%q: got no error", in)
		}
	}
	// Keys match exactly: Plan is another, unknown, key, so plan keeps its zero value.
	v = body{}
	if err := Unmarshal([]byte(`{"Plan":"p"}`), &v); err != nil || v.Plan != "" {
		t.Errorf(`{"Plan":"p"}: got %+v, %v; want Plan empty`, v, err)
	}
}
