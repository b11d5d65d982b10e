package s3

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

func TestListedKey(t *testing.T) {
	for _, c := range []struct {
		enc     types.EncodingType
		in, out string
		bad     bool
	}{
		{types.EncodingTypeUrl, "p%3D1/a+b%2Bc.parquet", "p=1/a b+c.parquet", false},
		{types.EncodingTypeUrl, "a%01.parquet", "a\x01.parquet", false},
		{types.EncodingTypeUrl, "a%EF%BF%BD.parquet", "a\uFFFD.parquet", false}, // encoded: a true U+FFFD
		{types.EncodingTypeUrl, "a%ZZ.parquet", "", true},
		{types.EncodingTypeUrl, "a%", "", true},
		{"", "plain/a+b.parquet", "plain/a+b.parquet", false}, // not encoded: taken as it is
		{"", "a\uFFFD.parquet", "", true},                     // may stand for what XML could not carry
	} {
		got, err := listedKey(c.enc, c.in)
		if (err != nil) != c.bad || got != c.out {
			t.Errorf("listedKey(%q, %q) = %q, %v; want %q, error %v", c.enc, c.in, got, err, c.out, c.bad)
		}
	}
}

func TestXMLSafe(t *testing.T) {
	for in, want := range map[string]bool{
		"p=1/part-0.parquet": true, "tab\there": true, "new\nline": true, "é日本": true, "\U0001F600": true,
		"a\x01": false, "a\r": false, "a\x00": false, "a\uFFFE": false, "a\uFFFF": false,
		"a\xff": false, "a\uFFFD": false, // invalid UTF-8 and a real U+FFFD alike go singly
	} {
		if got := xmlSafe(in); got != want {
			t.Errorf("xmlSafe(%q) = %v, want %v", in, got, want)
		}
	}
}
