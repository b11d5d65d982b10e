package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	for _, tc := range []struct {
		name        string
		bi          debug.BuildInfo
		wantVersion string
		wantCommit  string
		wantDate    string
		wantMod     bool
	}{
		{"go install @version", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: Module, Version: "v1.2.3"}}, "v1.2.3", "", "", false},
		{"local build with VCS", debug.BuildInfo{Main: debug.Module{Path: Module, Version: "v0.0.0-20261201175600-9a335e9c0f1e+dirty"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "9a335e9c0f1e0000"}, {Key: "vcs.time", Value: "2026-12-01T17:56:00Z"}, {Key: "vcs.modified", Value: "true"}}},
			"v0.0.0-20261201175600-9a335e9c0f1e+dirty", "9a335e9c0f1e0000", "2026-12-01T17:56:00Z", true},
		{"pseudo-version without VCS settings", debug.BuildInfo{Main: debug.Module{Path: Module, Version: "v0.0.0-20261201175600-9a335e9c0f1e"}}, "v0.0.0-20261201175600-9a335e9c0f1e", "9a335e9c0f1e", "", false},
		{"devel", debug.BuildInfo{Main: debug.Module{Path: Module, Version: "(devel)"}}, "", "", "", false},
		{"library of another program", debug.BuildInfo{Main: debug.Module{Path: "example.com/app", Version: "v9.9.9"},
			Deps: []*debug.Module{{Path: "golang.org/x/sys", Version: "v0.1.0"}, {Path: Module, Version: "v0.4.0"}}}, "v0.4.0", "", "", false},
		{"replaced", debug.BuildInfo{Main: debug.Module{Path: "example.com/app"},
			Deps: []*debug.Module{{Path: Module, Version: "v0.4.0", Replace: &debug.Module{Path: "example.com/fork", Version: "v0.4.1"}}}}, "v0.4.1", "", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := fromBuildInfo(&tc.bi, Info{})
			if got.Version != tc.wantVersion || got.Commit != tc.wantCommit || got.Date != tc.wantDate || got.Modified != tc.wantMod {
				t.Errorf("got %+v, want version %q commit %q date %q modified %v", got, tc.wantVersion, tc.wantCommit, tc.wantDate, tc.wantMod)
			}
		})
	}
}

func TestLdflagsWin(t *testing.T) {
	defer func(v, c, d string) { Version, Commit, Date = v, c, d }(Version, Commit, Date)
	Version, Commit, Date = "v1.0.0", "abc", "2026-12-01T00:00:00Z"
	got := Get()
	if got.Version != "v1.0.0" || got.Commit != "abc" || got.Date != "2026-12-01T00:00:00Z" || got.GoVersion == "" {
		t.Fatalf("Get() = %+v", got)
	}
	if EngineInfo() != "deltavacuum/v1.0.0" {
		t.Fatalf("EngineInfo() = %q", EngineInfo())
	}
}

func TestNeverEmpty(t *testing.T) {
	defer func(v string) { Version = v }(Version)
	Version = ""
	if v := Get().Version; v == "" {
		t.Fatal("empty version")
	}
}
