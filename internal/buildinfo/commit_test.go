package buildinfo

import (
	"regexp"
	"strings"
	"testing"
)

func TestVersionOf(t *testing.T) {
	for _, tc := range []struct {
		describe          string
		commits           int
		want, pep440, tag string
	}{
		{"v1.2.3", 0, "v1.2.3", "1.2.3", "v1.2.3"},
		{"v1.2.3-dirty", 0, "v1.2.3+dirty", "1.2.3+dirty", "v1.2.3-dirty"},
		{"v1.2.3-4-gabc1234", 0, "v1.2.4-dev.4+gabc1234", "1.2.4.dev4+gabc1234", "v1.2.4-dev.4-gabc1234"},
		{"v0.9.0-1-gabc1234-dirty", 0, "v0.9.1-dev.1+gabc1234.dirty", "0.9.1.dev1+gabc1234.dirty", "v0.9.1-dev.1-gabc1234.dirty"},
		{"v1.2.3-0-gabc1234", 0, "v1.2.3", "1.2.3", "v1.2.3"},
		{"6ecb83c", 287, "v0.1.0-dev.287+g6ecb83c", "0.1.0.dev287+g6ecb83c", "v0.1.0-dev.287-g6ecb83c"},
		{"abc1234-dirty", 7, "v0.1.0-dev.7+gabc1234.dirty", "0.1.0.dev7+gabc1234.dirty", "v0.1.0-dev.7-gabc1234.dirty"},
	} {
		got, err := VersionOf(tc.describe, tc.commits)
		if err != nil || got != tc.want {
			t.Errorf("VersionOf(%q, %d) = %q, %v; want %q", tc.describe, tc.commits, got, err, tc.want)
			continue
		}
		if p, err := PEP440(got); err != nil || p != tc.pep440 {
			t.Errorf("PEP440(%q) = %q, %v; want %q", got, p, err, tc.pep440)
		}
		if tag := ImageTag(got); tag != tc.tag || !dockerTag.MatchString(tag) {
			t.Errorf("ImageTag(%q) = %q; want %q, a tag Docker accepts", got, tag, tc.tag)
		}
	}
	for _, bad := range []string{"", "release-1", "v1.2-3-gabc", "v1.2.3-x", "1.2.3; rm -rf /", "v1.2.3-4-gXYZ"} {
		if v, err := VersionOf(bad, 1); err == nil {
			t.Errorf("VersionOf(%q) = %q, want an error", bad, v)
		}
	}
}

// dockerTag is Docker's rule for a tag (distribution/reference: [\w][\w.-]{0,127}).
var dockerTag = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)

func TestPEP440RefusesWhatItCannotMap(t *testing.T) {
	for _, bad := range []string{"", "devel", "v1.2", "v1.2.3-rc.1", "v1.2.3+x;y"} {
		if p, err := PEP440(bad); err == nil {
			t.Errorf("PEP440(%q) = %q, want an error", bad, p)
		}
	}
	if p, err := PEP440("1.2.3"); err != nil || p != "1.2.3" { // a version given without its v
		t.Errorf("PEP440(1.2.3) = %q, %v", p, err)
	}
}

func TestImageTagIsAlwaysADockerTag(t *testing.T) {
	for _, v := range []string{"devel", "+x", "-v1", strings.Repeat("a", 300), "v1.0.0+ä/b:c"} {
		if tag := ImageTag(v); !dockerTag.MatchString(tag) {
			t.Errorf("ImageTag(%q) = %q, not a Docker tag", v, tag)
		}
	}
}
