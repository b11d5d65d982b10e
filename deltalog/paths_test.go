package deltalog

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestKey(t *testing.T) {
	root, err := ParseRoot("s3a://bucket/warehouse/t")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path   string
		key    string
		inside bool
		err    error
	}{
		{"part-0.parquet", "part-0.parquet", true, nil},
		{"p=a%3Ab/x.parquet", "p=a:b/x.parquet", true, nil},
		{"p=a%3ab/x.parquet", "p=a:b/x.parquet", true, nil},
		{"p=a%253Ab/x.parquet", "p=a%3Ab/x.parquet", true, nil},
		{"sp%20ace/%C3%BC.parquet", "sp ace/ü.parquet", true, nil},
		{"s3://bucket/warehouse/t/abs.parquet", "abs.parquet", true, nil},
		{"s3n://bucket/warehouse/t/p%3D1/abs.parquet", "p=1/abs.parquet", true, nil},
		{"s3://bucket/warehouse/other/x.parquet", "", false, nil},
		{"s3://other/warehouse/t/x.parquet", "", false, nil},
		{"s3://bucket/warehouse/t2/x.parquet", "", false, nil},
		{"/warehouse/t/y.parquet", "y.parquet", true, nil},
		{"../x.parquet", "", false, ErrBadPath},
		{"a/../../x.parquet", "", false, ErrBadPath},
		{"a/%2E%2E/%2E%2E/x", "", false, ErrBadPath},
		{"a//b", "", false, ErrBadPath},
		{"./a", "", false, ErrBadPath},
		{"p=%zz/a", "", false, ErrBadPath},
		{"p=%4", "", false, ErrBadPath},
		{"", "", false, ErrBadPath},
		{"file:{{TEMPLATE}}/x", "", false, ErrBadPath},
		{"s3://bucket/warehouse/t/../t2/x", "", false, ErrBadPath},
	}
	for _, tt := range tests {
		key, inside, err := root.Key(tt.path)
		if key != tt.key || inside != tt.inside || !errors.Is(err, tt.err) || (tt.err == nil && err != nil) {
			t.Errorf("Key(%q) = %q, %v, %v; want %q, %v, %v", tt.path, key, inside, err, tt.key, tt.inside, tt.err)
		}
	}
}

func TestAzureHostsAreOneAccount(t *testing.T) {
	root, _ := ParseRoot("abfss://c@acct.dfs.core.windows.net/t")
	for _, p := range []string{"abfss://c@acct.dfs.core.windows.net/t/x", "abfs://c@acct.dfs.core.windows.net/t/x", "wasbs://c@acct.blob.core.windows.net/t/x"} {
		if key, inside, err := root.Key(p); key != "x" || !inside || err != nil {
			t.Errorf("Key(%q) = %q %v %v", p, key, inside, err)
		}
	}
	if _, inside, _ := root.Key("abfss://other@acct.dfs.core.windows.net/t/x"); inside {
		t.Error("another container is inside")
	}
}

func TestDVKey(t *testing.T) {
	root, _ := ParseRoot("file:///data/t")
	tests := []struct {
		dv   DeletionVector
		key  string
		ok   bool
		fail bool
	}{
		{DeletionVector{StorageType: "u", PathOrInlineDv: "ab^-aqEH.-t@S}K{vb[*k^"}, "ab/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin", true, false},
		{DeletionVector{StorageType: "u", PathOrInlineDv: "^-aqEH.-t@S}K{vb[*k^"}, "deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin", true, false},
		{DeletionVector{StorageType: "i", PathOrInlineDv: "wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L"}, "", false, false},
		{DeletionVector{StorageType: "p", PathOrInlineDv: "file:///data/t/dv/x.bin"}, "dv/x.bin", true, false},
		{DeletionVector{StorageType: "p", PathOrInlineDv: "file:///elsewhere/x.bin"}, "", false, false},
		{DeletionVector{StorageType: "u", PathOrInlineDv: "short"}, "", false, true},
		{DeletionVector{StorageType: "u", PathOrInlineDv: "~~~~~~~~~~~~~~~~~~~~"}, "", false, true},
		{DeletionVector{StorageType: "z", PathOrInlineDv: "x"}, "", false, true},
	}
	for _, tt := range tests {
		key, ok, err := root.DVKey(&tt.dv)
		if key != tt.key || ok != tt.ok || (err != nil) != tt.fail {
			t.Errorf("DVKey(%+v) = %q %v %v", tt.dv, key, ok, err)
		}
	}
}

// FuzzKey: decoding never panics and never yields a key that escapes the root.
func FuzzKey(f *testing.F) {
	for _, s := range []string{"a", "p=a%253A/x", "../x", "file:///data/t/x", "file:{{x}}", "%", "a/./b", "s3://b/x"} {
		f.Add(s)
	}
	for _, s := range []string{"a#b", "a?b#c", "c+d%20e", "caf%C3%A9", "file://localhost/data/t/x%23y", "p=%25/x+y"} {
		f.Add(s)
	}
	root, _ := ParseRoot("file:///data/t")
	f.Fuzz(func(t *testing.T, p string) {
		key, inside, err := root.Key(p)
		if err != nil || !inside {
			return
		}
		if !cleanRelative(key) || strings.HasPrefix(key, "/") {
			t.Errorf("Key(%q) = %q escapes or is not clean", p, key)
		}
		for _, c := range strings.Split(key, "/") {
			if c == ".." || c == "." || c == "" {
				t.Errorf("Key(%q) = %q", p, key)
			}
		}
		if !utf8.ValidString(key) {
			t.Errorf("Key(%q) = %q is not valid UTF-8", p, key)
		}
		for _, k := range root.OtherReadings(p, key) {
			if k == key || !cleanRelative(k) || !utf8.ValidString(k) {
				t.Errorf("OtherReadings(%q) holds %q (key %q)", p, k, key)
			}
		}
	})
}

func TestKeyRefusesInvalidUTF8(t *testing.T) {
	root, _ := ParseRoot("file:///data/t")
	for _, p := range []string{"a\xff.parquet", "a%FF.parquet", "p=%C3/x.parquet", "file:///data/t/%ED%A0%80.parquet"} {
		if _, _, err := root.Key(p); !errors.Is(err, ErrBadPath) {
			t.Errorf("Key(%q): got %v, want ErrBadPath", p, err)
		}
	}
}

func TestFileLocalhostIsTheRoot(t *testing.T) {
	root, _ := ParseRoot("file:///data/t")
	for _, p := range []string{"file://localhost/data/t/x", "file:/data/t/x", "file:///data/t/x", "FILE://LOCALHOST/data/t/x"} {
		if key, inside, err := root.Key(p); key != "x" || !inside || err != nil {
			t.Errorf("Key(%q) = %q %v %v; want x inside", p, key, inside, err)
		}
	}
	if _, inside, _ := root.Key("file://otherhost/data/t/x"); inside {
		t.Error("file://otherhost/ is inside")
	}
}

func TestOtherReadings(t *testing.T) {
	root, _ := ParseRoot("s3://bucket/t")
	tests := []struct {
		path string
		want []string
	}{
		{"part-0.parquet", nil},
		{"p=1/part-0.parquet", nil},
		{"a#1.parquet", []string{"a"}},
		{"b?x=1", []string{"b"}},
		{"s3://bucket/t/a#1.parquet", []string{"a#1.parquet"}},
		{"s3://bucket/t/b?versionId=1", []string{"b?versionId=1"}},
		{"p=a%3Ab/x.parquet", []string{"p=a%3Ab/x.parquet"}},
		{"c+d.parquet", []string{"c d.parquet"}},
		{"caf%C3%A9.parquet", []string{"caf%C3%A9.parquet", "cafe\u0301.parquet"}},
		{"cafe\u0301.parquet", []string{"caf\u00e9.parquet"}},
		{"%23x", []string{"%23x"}},
		{"#x", nil}, // the URI reading is empty: no file
	}
	for _, tt := range tests {
		key, _, err := root.Key(tt.path)
		if err != nil {
			t.Fatalf("Key(%q): %v", tt.path, err)
		}
		got := root.OtherReadings(tt.path, key)
		if strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("OtherReadings(%q) = %q, want %q", tt.path, got, tt.want)
		}
	}
}
