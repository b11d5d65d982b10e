package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/deltavacuum/deltavacuum/internal/buildinfo"
)

// TestOneVersionEverywhere: make build, make dist, make image and the Python wheel name the
// version of the commit checked out, as this tool decides it, each in its spelling: the binary
// the version, the wheel its PEP 440 form, the image a tag Docker accepts.
func TestOneVersionEverywhere(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the release binary, the image and the wheel")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	if _, err := os.Stat("/etc/ssl/certs/ca-certificates.crt"); err != nil {
		t.Skip("no CA bundle for the image (apt-get install ca-certificates)")
	}
	t.Setenv("DELTAVACUUM_VERSION", "")
	os.Unsetenv("DELTAVACUUM_VERSION")
	v, err := current()
	if err != nil {
		t.Skipf("no version of this checkout: %v", err)
	}
	if p, _ := buildinfo.PEP440(v.Version); p != v.PEP440 || buildinfo.ImageTag(v.Version) != v.ImageTag || strings.Contains(v.ImageTag, "+") {
		t.Fatalf("the spellings do not derive from %q: %+v", v.Version, v)
	}
	repo, _ := filepath.Abs("../../..")
	runIn := func(name string, env []string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}

	// make build: its -ldflags name the version (make -n prints the command, builds nothing).
	if _, err := exec.LookPath("make"); err == nil {
		out := runIn("make", nil, "-s", "-n", "build")
		if !strings.Contains(out, "internal/buildinfo.Version="+v.Version+" ") {
			t.Errorf("make build does not link version %s:\n%s", v.Version, out)
		}
	}

	// make dist (this machine's target) and make image.
	dist := t.TempDir()
	runIn("bash", []string{"DIST_DIR=" + dist}, "scripts/image.sh")
	bin := filepath.Join(dist, "deltavacuum_"+v.Version+"_linux_"+runtime.GOARCH)
	if runtime.GOOS == "linux" {
		out, err := exec.Command(bin, "version").Output()
		if err != nil || !strings.HasPrefix(string(out), "deltavacuum "+v.Version+"\n") {
			t.Errorf("%s version: %v\n%s; want deltavacuum %s", bin, err, out, v.Version)
		}
	}
	var index struct {
		Manifests []struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"manifests"`
	}
	b, err := os.ReadFile(filepath.Join(dist, "image-"+runtime.GOARCH, "index.json"))
	if err != nil || json.Unmarshal(b, &index) != nil || len(index.Manifests) != 1 {
		t.Fatalf("the image's index.json: %v\n%s", err, b)
	}
	if tag := index.Manifests[0].Annotations["org.opencontainers.image.ref.name"]; tag != v.ImageTag {
		t.Errorf("image tag %q, want %q", tag, v.ImageTag)
	}

	// The wheel of that binary (build_wheels.py --dist): its version and the binary's.
	python, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("no python3: the wheel's version is not compared")
		}
		t.Skip("no python3: the wheel's version is not compared")
	}
	if runtime.GOOS != "linux" {
		return
	}
	wheels := t.TempDir()
	runIn(python, nil, "python/build_wheels.py", "--platform", "linux-"+runtime.GOARCH, "--dist", dist, "--out", wheels, "--no-sdist")
	found, _ := filepath.Glob(filepath.Join(wheels, "*.whl"))
	if len(found) != 1 || !strings.HasPrefix(filepath.Base(found[0]), "deltavacuum-"+v.PEP440+"-") {
		t.Fatalf("wheels %v, want one of version %s", found, v.PEP440)
	}
	z, err := zip.OpenReader(found[0])
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	files := map[string][]byte{}
	for _, f := range z.File {
		r, _ := f.Open()
		files[f.Name], _ = io.ReadAll(r)
		r.Close()
	}
	if vp := string(files["deltavacuum/_version.py"]); !strings.Contains(vp, "__version__ = '"+v.PEP440+"'") || !strings.Contains(vp, "__git_version__ = '"+v.Version+"'") {
		t.Errorf("the wheel's _version.py:\n%s\nwant %s and %s", vp, v.PEP440, v.Version)
	}
	want, _ := os.ReadFile(bin)
	if !bytes.Equal(files["deltavacuum/bin/deltavacuum"], want) {
		t.Error("the wheel carries another binary than make dist's")
	}
}
