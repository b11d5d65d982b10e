package location

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestLocalPath(t *testing.T) {
	wd := t.TempDir()
	t.Chdir(wd)
	tests := []struct {
		uri, want string // want "" means refused
	}{
		{"/data/t", "/data/t"},
		{"data/t", filepath.Join(wd, "data/t")},
		{"../t4", filepath.Join(filepath.Dir(wd), "t4")},
		{"file:///data/t", "/data/t"},
		{"file:/data/t", "/data/t"},
		{"file://localhost/data/t", "/data/t"},
		{"FILE://LOCALHOST/data/t", "/data/t"},
		{"file:///data/my%20t", "/data/my t"},
		{"file:../t4", filepath.Join(filepath.Dir(wd), "t4")},
		{"file:t4", filepath.Join(wd, "t4")},
		{"file:my%20t", filepath.Join(wd, "my t")},
		{"file:", ""},
		{"file://", ""},
		{"file:///", "/"},
		{"file://otherhost/data/t", ""},
		{"file:///data/t?x=1", ""},
		{"file:///data/t#frag", ""},
		{"file:///data/t?", ""},
		{"file:///data/t#", ""},
		{"file:%zz", ""},
		{"", ""},
	}
	for _, tt := range tests {
		got, err := LocalPath(tt.uri)
		if tt.want == "" {
			if err == nil {
				t.Errorf("LocalPath(%q) = %q, want a refusal", tt.uri, got)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("LocalPath(%q) = %q, %v; want %q", tt.uri, got, err, tt.want)
		}
	}
	if _, err := LocalPath("file://evil.example/t"); err == nil || !strings.Contains(err.Error(), "another host") {
		t.Errorf("got %v", err)
	}
}

// TestObjectLocationsThatNameAnotherPrefix: '#', a query that is not a SAS, and empty, "." or
// ".." components would make a reader take another prefix than the one meant: refused.
func TestObjectLocationsThatNameAnotherPrefix(t *testing.T) {
	for _, uri := range []string{
		"s3://bucket/t#1", "s3://bucket/data?x/t", "s3://bucket/t?", "gs://bucket//t", "s3://bucket/a/./t",
		"s3://bucket/a/../t", "abfss://c@acct.dfs.core.windows.net/t?x=1", "az://c/t#x", "gs://bucket/t/#",
	} {
		if _, err := parse(uri); err == nil {
			t.Errorf("parse(%q): accepted", uri)
		}
	}
	for _, uri := range []string{"s3://bucket/t", "s3://bucket/t/", "s3://bucket", "gs://b/a%23b/t", "abfss://c@acct.dfs.core.windows.net/t?sv=1&sig=x",
		"https://acct.blob.core.windows.net/c/t?sv=1&sig=x"} {
		if _, err := parse(uri); err != nil {
			t.Errorf("parse(%q): %v", uri, err)
		}
	}
}

// TestRelative: the locations that name a place relative to the working directory, which a
// location shared between programs (a table property) must not be, among hostile spellings.
func TestRelative(t *testing.T) {
	for uri, want := range map[string]bool{
		"cp": true, "./cp": true, "../cp": true, "~/cp": true, "a/b/c": true, " cp": true,
		`C:\cp`:      true, // a Windows path is not absolute here (Linux, macOS)
		"file:cp":    true,
		"file:../cp": true,
		"file:./cp":  true,
		"/cp":        false, "/": false, "//host/cp": false,
		"file:/cp": false, "file:///cp": false, "file://localhost/cp": false,
		"file://otherhost/cp": false, // refused by LocalPath: not a place at all
		"file:cp?x=1":         false, // refused: a query
		"":                    false, // refused: no location
		"s3://bucket/cp":      false, "s3a://bucket/cp": false, "gs://bucket/cp": false,
		"abfss://c@a.dfs.core.windows.net/cp": false, "https://a.blob.core.windows.net/c/cp": false,
		"hdfs://nn/cp": false, // an unknown scheme is refused, not taken for a path
	} {
		if got := Relative(uri); got != want {
			t.Errorf("Relative(%q) = %v, want %v", uri, got, want)
		}
	}
}
