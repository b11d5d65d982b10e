// Command version prints the version of the commit checked out, the one every build names
// (buildinfo.VersionOf): make build, make dist and make image take it from here, and so does
// the Python build (python/_build/dvbuild.py), each in the spelling its format allows.
//
//	go run ./internal/tools/version              # v0.1.0-dev.287+g6ecb83c
//	go run ./internal/tools/version -pep440      # 0.1.0.dev287+g6ecb83c
//	go run ./internal/tools/version -image-tag   # v0.1.0-dev.287-g6ecb83c
//	go run ./internal/tools/version -ldflags     # the -X flags of the version, commit and date
//	go run ./internal/tools/version -json        # all of them
//
// $DELTAVACUUM_VERSION, when set, is the version (a release build from a tarball, say); the
// commit and its date still come from git when there is one.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/deltavacuum/deltavacuum/internal/buildinfo"
)

func main() {
	pep440 := flag.Bool("pep440", false, "print the Python package's version")
	imageTag := flag.Bool("image-tag", false, "print the container image's tag")
	ldflags := flag.Bool("ldflags", false, "print the -X linker flags of the version, commit and date")
	asJSON := flag.Bool("json", false, "print version, pep440, imageTag, commit and date as one JSON object")
	flag.Parse()
	v, err := current()
	if err != nil {
		fmt.Fprintln(os.Stderr, "version: "+err.Error())
		os.Exit(1)
	}
	switch {
	case *pep440:
		fmt.Println(v.PEP440)
	case *imageTag:
		fmt.Println(v.ImageTag)
	case *ldflags:
		bi := "github.com/deltavacuum/deltavacuum/internal/buildinfo"
		out := "-X " + bi + ".Version=" + v.Version
		if v.Commit != "" {
			out += " -X " + bi + ".Commit=" + v.Commit
		}
		if v.Date != "" {
			out += " -X " + bi + ".Date=" + v.Date
		}
		fmt.Println(out)
	case *asJSON:
		b, _ := json.Marshal(v)
		fmt.Println(string(b))
	default:
		fmt.Println(v.Version)
	}
}

type version struct {
	Version  string `json:"version"`
	PEP440   string `json:"pep440"`
	ImageTag string `json:"imageTag"`
	Commit   string `json:"commit"`
	Date     string `json:"date"`
}

func current() (version, error) {
	var v version
	v.Commit, _ = git("rev-parse", "HEAD")
	v.Date, _ = git("log", "-1", "--format=%cI")
	if env := os.Getenv("DELTAVACUUM_VERSION"); env != "" {
		v.Version = env
		if !strings.HasPrefix(env, "v") {
			v.Version = "v" + env
		}
	} else {
		describe, err := git("describe", "--tags", "--always", "--dirty", "--match", "v[0-9]*")
		if err != nil {
			return v, fmt.Errorf("no git repository to take the version from (set DELTAVACUUM_VERSION): %w", err)
		}
		count := 0
		if c, err := git("rev-list", "--count", "HEAD"); err == nil {
			count, _ = strconv.Atoi(c)
		}
		if v.Version, err = buildinfo.VersionOf(describe, count); err != nil {
			return v, err
		}
	}
	var err error
	if v.PEP440, err = buildinfo.PEP440(v.Version); err != nil {
		return v, err
	}
	v.ImageTag = buildinfo.ImageTag(v.Version)
	return v, nil
}

func git(args ...string) (string, error) {
	out, err := exec.Command("git", args...).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok && len(ee.Stderr) > 0 {
			return "", fmt.Errorf("git %s: %s", args[0], strings.TrimSpace(string(ee.Stderr)))
		}
		return "", fmt.Errorf("git %s: %w", args[0], err)
	}
	return strings.TrimSpace(string(out)), nil
}
