package main

import (
	"archive/zip"
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const module = "github.com/deltavacuum/deltavacuum"

// TestGoInstallFromCleanCache runs what README.md tells users,
//
//	go install github.com/deltavacuum/deltavacuum/cmd/deltavacuum@latest
//
// with an empty module cache. The module is not published here, so the committed checkout
// (git archive HEAD) is served as v0.1.0 by a file:// proxy put before the Go module proxy,
// which serves every dependency: the install proves go.mod and go.sum are complete and every
// dependency is on the proxy. It downloads every module (minutes), so it runs only with
// DELTAVACUUM_INSTALL_TEST=1 (make install-test), and skips when the proxy is unreachable.
func TestGoInstallFromCleanCache(t *testing.T) {
	if os.Getenv("DELTAVACUUM_INSTALL_TEST") != "1" {
		t.Skip("downloads every dependency from the Go module proxy: run with DELTAVACUUM_INSTALL_TEST=1 (make install-test)")
	}
	proxy := "https://proxy.golang.org"
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, proxy+"/golang.org/x/term/@v/list", nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Skipf("the Go module proxy is unreachable: %v", err)
	} else {
		resp.Body.Close()
	}
	root, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	work := t.TempDir()
	const version = "v0.1.0"
	// The file:// proxy: list, info, mod and zip of the module at the committed HEAD.
	dir := filepath.Join(work, "proxy", module, "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	prefix := module + "@" + version + "/"
	archive := exec.Command("git", "archive", "--format=zip", "--prefix="+prefix, "HEAD")
	archive.Dir = strings.TrimSpace(string(root))
	zipped, err := archive.Output()
	if err != nil {
		t.Fatalf("git archive: %v", err)
	}
	zr, err := zip.NewReader(bytes.NewReader(zipped), int64(len(zipped)))
	if err != nil {
		t.Fatal(err)
	}
	var mod []byte
	for _, f := range zr.File {
		if f.Name == prefix+"go.mod" {
			rc, _ := f.Open()
			var b bytes.Buffer
			_, _ = b.ReadFrom(rc)
			rc.Close()
			mod = b.Bytes()
		}
	}
	for name, data := range map[string][]byte{
		"list": []byte(version + "\n"), version + ".info": []byte(`{"Version":"` + version + `","Time":"2026-12-01T00:00:00Z"}`),
		version + ".mod": mod, version + ".zip": zipped,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	modcache, gobin := filepath.Join(work, "modcache"), filepath.Join(work, "bin")
	env := append(os.Environ(), "GOMODCACHE="+modcache, "GOBIN="+gobin, "GOFLAGS=-modcacherw", "CGO_ENABLED=0",
		"GOPROXY=file://"+filepath.Join(work, "proxy")+","+proxy, "GONOSUMDB="+module, "GOWORK=off")
	t.Cleanup(func() {
		c := exec.Command("go", "clean", "-modcache")
		c.Env = env
		_ = c.Run()
	})
	install := exec.Command("go", "install", module+"/cmd/deltavacuum@latest")
	install.Dir = work // outside any module
	install.Env = env
	start := time.Now()
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("go install …@latest: %v\n%s", err, out)
	}
	t.Logf("go install from an empty module cache: %s", time.Since(start).Round(time.Second))
	out, err := exec.Command(filepath.Join(gobin, "deltavacuum"), "version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "deltavacuum "+version+"\n") {
		t.Fatalf("deltavacuum version: %v\n%s", err, out)
	}
}
