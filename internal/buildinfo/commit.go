package buildinfo

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// The version of a commit is decided here, and only here: make build, make dist, make image,
// the Python wheel and sdist and `deltavacuum version` all take it from VersionOf (through
// go run ./internal/tools/version), each in the spelling its format allows: the version itself
// (SemVer, as Go modules write it) for the binary and its file names, PEP440 for Python,
// ImageTag for the container image.

// BaseVersion is the release the commits lead to while no v* tag is reachable.
const BaseVersion = "v0.1.0"

var (
	describeRE = regexp.MustCompile(`^v(\d+)\.(\d+)\.(\d+)(?:-(\d+)-g([0-9a-f]{4,40}))?$`)
	hashRE     = regexp.MustCompile(`^[0-9a-f]{4,40}$`)
	versionRE  = regexp.MustCompile(`^v?(\d+\.\d+\.\d+)(?:-dev\.(\d+))?(?:\+(g[0-9a-f]{4,40}(?:\.dirty)?|dirty))?$`)
	tagBad     = regexp.MustCompile(`[^A-Za-z0-9_.-]`)
)

// VersionOf is the version of a commit from `git describe --tags --always --dirty --match
// 'v[0-9]*'` and, for a commit no tag reaches, the number of commits (git rev-list --count):
//
//	v1.2.3                  at the tag v1.2.3
//	v1.2.4-dev.4+gabc1234   4 commits after v1.2.3, at abc1234
//	v0.1.0-dev.287+g6ecb83c 287 commits from the start, no tag (BaseVersion)
//
// A work tree with changes adds dirty to the build metadata (+dirty, +gabc1234.dirty). The
// order of versions is that of the commits on one branch: a dev version comes before its
// release in SemVer, PEP 440 and Go's module order alike.
func VersionOf(describe string, commits int) (string, error) {
	d, dirty := strings.CutSuffix(describe, "-dirty")
	meta := func(hash string) string {
		m := "g" + hash
		if dirty {
			m += ".dirty"
		}
		return "+" + m
	}
	if m := describeRE.FindStringSubmatch(d); m != nil {
		if m[4] == "" || m[4] == "0" {
			v := "v" + m[1] + "." + m[2] + "." + m[3]
			if dirty {
				v += "+dirty"
			}
			return v, nil
		}
		patch, _ := strconv.Atoi(m[3])
		return fmt.Sprintf("v%s.%s.%d-dev.%s%s", m[1], m[2], patch+1, m[4], meta(m[5])), nil
	}
	if hashRE.MatchString(d) {
		return fmt.Sprintf("%s-dev.%d%s", BaseVersion, commits, meta(d)), nil
	}
	return "", fmt.Errorf("cannot make a version of git describe output %q (tags are vMAJOR.MINOR.PATCH)", describe)
}

// PEP440 is the Python package's spelling of a version VersionOf made: 1.2.3,
// 1.2.4.dev4+gabc1234, 0.1.0.dev287+g6ecb83c.dirty.
func PEP440(version string) (string, error) {
	m := versionRE.FindStringSubmatch(version)
	if m == nil {
		return "", fmt.Errorf("version %q is not vMAJOR.MINOR.PATCH[-dev.N][+META]", version)
	}
	v := m[1]
	if m[2] != "" {
		v += ".dev" + m[2]
	}
	if m[3] != "" {
		v += "+" + m[3]
	}
	return v, nil
}

// ImageTag is the container image's tag of a version: Docker takes [A-Za-z0-9_.-] only, at most
// 128 characters, not starting with '.' or '-', so '+' becomes '-': v1.2.4-dev.4-gabc1234.
func ImageTag(version string) string {
	t := tagBad.ReplaceAllString(version, "-")
	t = strings.TrimLeft(t, ".-")
	if t == "" {
		t = "latest"
	}
	if len(t) > 128 {
		t = t[:128]
	}
	return t
}
