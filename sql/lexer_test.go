package sql

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLex(t *testing.T) {
	type tok struct {
		Kind tokenKind
		Text string
	}
	tests := []struct {
		in   string
		want []tok
	}{
		{"a.b", []tok{{tokWord, "a"}, {tokPunct, "."}, {tokWord, "b"}}},
		{"1a 2024_sales _x", []tok{{tokWord, "1a"}, {tokWord, "2024_sales"}, {tokWord, "_x"}}},
		{"12 1.5 .5 5. 1e3 2.5E-3 1.e2", []tok{{tokNumber, "12"}, {tokNumber, "1.5"}, {tokNumber, ".5"}, {tokNumber, "5."}, {tokNumber, "1e3"}, {tokNumber, "2.5E-3"}, {tokNumber, "1.e2"}}},
		{"1ex 1e+x", []tok{{tokWord, "1ex"}, {tokWord, "1e"}, {tokPunct, "+"}, {tokWord, "x"}}},
		{"123.abc", []tok{{tokNumber, "123"}, {tokPunct, "."}, {tokWord, "abc"}}},
		{"a.5x", []tok{{tokWord, "a"}, {tokPunct, "."}, {tokWord, "5x"}}},
		{"`a`.5", []tok{{tokIdent, "`a`"}, {tokPunct, "."}, {tokNumber, "5"}}},
		{"(.5x", []tok{{tokPunct, "("}, {tokPunct, "."}, {tokWord, "5x"}}},
		{"-5", []tok{{tokPunct, "-"}, {tokNumber, "5"}}},
		{"a--b\nc", []tok{{tokWord, "a"}, {tokWord, "c"}}},
		{"a/*b*/c/d", []tok{{tokWord, "a"}, {tokWord, "c"}, {tokPunct, "/"}, {tokWord, "d"}}},
		{"= == != <> < <= > >= <=>", []tok{{tokPunct, "="}, {tokPunct, "=="}, {tokPunct, "!="}, {tokPunct, "<>"}, {tokPunct, "<"}, {tokPunct, "<="}, {tokPunct, ">"}, {tokPunct, ">="}, {tokPunct, "<="}, {tokPunct, ">"}}},
		{"a;b", []tok{{tokWord, "a"}, {tokSemi, ";"}, {tokWord, "b"}}},
		{"r'x' R\"y\" rr'z'", []tok{{tokString, "r'x'"}, {tokString, `R"y"`}, {tokWord, "rr"}, {tokString, "'z'"}}},
		{"é\xff", []tok{{tokPunct, "é"}, {tokPunct, "\xff"}}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			toks, err := lex(tt.in)
			if err != nil {
				t.Fatalf("lex(%q): %v", tt.in, err)
			}
			var got []tok
			for _, t := range toks {
				got = append(got, tok{t.kind, t.text})
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("lex(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestStringLiteral(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{`'plain'`, "plain"},
		{`"double"`, "double"},
		{`''`, ""},
		{`''''`, "'"},
		{`'it''s'`, "it's"},
		{`"a""b"`, `a"b`},
		{`"it's"`, "it's"},
		{`'say "hi"'`, `say "hi"`},
		{`'\'\"\\'`, `'"\`},
		{`'\n\t\r\b\0\Z'`, "\n\t\r\b\x00\x1a"},
		{`'\%\_'`, `\%\_`}, // kept for LIKE, as in Spark
		{`'\a\.\é'`, "a.é"},
		{`'\u00e9\u20AC'`, "é€"},
		{`'\U0001F600'`, "😀"},
		{`'\u00g9'`, "u00g9"},
		{`'\101\0101\18'`, "A\b118"}, // \010 is a backspace; \18 is not octal
		{`'\1'`, "1"},
		{"'a;--/*b'", "a;--/*b"},
		{"'line\nbreak'", "line\nbreak"},
		{`r'\n\'`, `\n\`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			toks, err := lex(tt.in)
			if err != nil {
				t.Fatalf("lex(%q): %v", tt.in, err)
			}
			if len(toks) != 1 || toks[0].kind != tokString {
				t.Fatalf("lex(%q) = %+v, want one string literal", tt.in, toks)
			}
			if got := toks[0].val; got != tt.want {
				t.Errorf("value of %s = %q, want %q", tt.in, got, tt.want)
			}
			if toks, err := lex(quoteString(tt.want)); err != nil || len(toks) != 1 || toks[0].val != tt.want {
				t.Errorf("quoteString(%q) = %s does not lex back", tt.want, quoteString(tt.want))
			}
		})
	}
}
