// Package buildinfo says which deltavacuum this is: the module version, the commit and the
// date it was built from, and the Go version, from the build information the Go toolchain
// embeds (runtime/debug.ReadBuildInfo and its vcs.* settings). A release build may set
// Version, Commit and Date with -ldflags "-X …" (make dist does); what is set wins.
package buildinfo

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// Module is the path of the deltavacuum module.
const Module = "github.com/deltavacuum/deltavacuum"

// Set by -ldflags "-X github.com/deltavacuum/deltavacuum/internal/buildinfo.Version=v1.2.3" (and
// .Commit, .Date): a release build names itself even when built without VCS information.
var (
	Version string
	Commit  string
	Date    string
)

// Info is what `deltavacuum version` prints.
type Info struct {
	Version   string `json:"version"`   // module version: v1.2.3, a pseudo-version, or "devel"
	Commit    string `json:"commit"`    // VCS revision, "" when unknown
	Date      string `json:"date"`      // commit or build time (RFC 3339), "" when unknown
	Modified  bool   `json:"modified"`  // built from a work tree with uncommitted changes
	GoVersion string `json:"goVersion"` // the Go toolchain that built the binary
	Platform  string `json:"platform"`  // GOOS/GOARCH
}

// Get returns the build information of the running program. Where deltavacuum is a library
// of another program, the version is that of the deltavacuum module the program requires.
func Get() Info {
	info := Info{GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		info = fromBuildInfo(bi, info)
	}
	if Version != "" {
		info.Version = Version
	}
	if Commit != "" {
		info.Commit = Commit
	}
	if Date != "" {
		info.Date = Date
	}
	if info.Version == "" {
		info.Version = "devel"
	}
	return info
}

func fromBuildInfo(bi *debug.BuildInfo, info Info) Info {
	if bi.GoVersion != "" {
		info.GoVersion = bi.GoVersion
	}
	mod := &bi.Main
	if mod.Path != Module {
		mod = nil
		for _, d := range bi.Deps {
			if d.Path == Module {
				mod = d
				if d.Replace != nil && d.Replace.Version != "" {
					mod = d.Replace
				}
			}
		}
	}
	if mod != nil && mod.Version != "" && mod.Version != "(devel)" {
		info.Version = mod.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Commit = s.Value
		case "vcs.time":
			info.Date = s.Value
		case "vcs.modified":
			info.Modified = s.Value == "true"
		}
	}
	// A pseudo-version names its commit: v0.0.0-20261201175600-9a335e9c0f1e.
	if info.Commit == "" {
		if i := strings.LastIndexByte(info.Version, '-'); i > 0 && strings.Count(info.Version, "-") >= 2 {
			info.Commit = strings.TrimSuffix(info.Version[i+1:], "+dirty")
		}
	}
	return info
}

// EngineInfo is the engineInfo of the commits deltavacuum writes: deltavacuum/VERSION.
func EngineInfo() string { return "deltavacuum/" + Get().Version }
