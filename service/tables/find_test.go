package tables

import "testing"

func TestTableLocation(t *testing.T) {
	for _, c := range [][3]string{
		{"/data/lake", "a/b c/", "/data/lake/a/b c"},
		{"/data/lake/", "", "/data/lake/"},
		{"s3://b/lake", "a/b c/", "s3://b/lake/a/b%20c"},
		{"s3://b/lake/", "x%y/", "s3://b/lake/x%25y"},
	} {
		if got := tableLocation(c[0], c[1]); got != c[2] {
			t.Errorf("tableLocation(%q, %q) = %q, want %q", c[0], c[1], got, c[2])
		}
	}
}
