package ociimage

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/internal/fixtures"
)

func readJSON(t *testing.T, path string, v any) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return b
}

func blob(t *testing.T, layout string, d Descriptor) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(layout, "blobs", "sha256", strings.TrimPrefix(d.Digest, "sha256:")))
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(b)
	if "sha256:"+hex.EncodeToString(h[:]) != d.Digest || int64(len(b)) != d.Size {
		t.Fatalf("blob %s: digest or size does not match its descriptor", d.Digest)
	}
	return b
}

// The image is built from the real binary (CGO_ENABLED=0, as make image builds it), its file
// system is extracted from the OCI layout as a container runtime would, and the binary in it
// runs: version, and a DRY RUN of a temporary table.
func TestImageRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command (-short)")
	}
	if runtime.GOOS != "linux" {
		t.Skip("the image is linux; running its binary needs a linux host")
	}
	certs := "/etc/ssl/certs/ca-certificates.crt"
	if _, err := os.Stat(certs); err != nil {
		t.Skipf("no CA bundle at %s (apt-get install ca-certificates)", certs)
	}
	work := t.TempDir()
	bin := filepath.Join(work, "deltavacuum")
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w -X github.com/deltavacuum/deltavacuum/internal/buildinfo.Version=v0.0.0-dev.1+gabc1234", "-o", bin, "./cmd/deltavacuum")
	build.Dir = "../.."
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	layout := filepath.Join(work, "layout")
	spec := Spec{Binary: bin, CACerts: certs, Arch: runtime.GOARCH, Version: "v0.0.0-dev.1+gabc1234", Created: time.Unix(0, 0).UTC()}
	desc, err := Write(layout, spec)
	if err != nil {
		t.Fatal(err)
	}
	var idx Index
	readJSON(t, filepath.Join(layout, "index.json"), &idx)
	if idx.SchemaVersion != 2 || len(idx.Manifests) != 1 || idx.Manifests[0].Digest != desc.Digest || idx.Manifests[0].MediaType != MediaManifest {
		t.Fatalf("index.json: %+v", idx)
	}
	// Docker takes no '+' in a tag: the ref name is the version's tag, the label the version.
	if got := idx.Manifests[0].Annotations["org.opencontainers.image.ref.name"]; got != "v0.0.0-dev.1-gabc1234" {
		t.Errorf("ref name %q, want v0.0.0-dev.1-gabc1234", got)
	}
	var m Manifest
	if err := json.Unmarshal(blob(t, layout, idx.Manifests[0]), &m); err != nil || len(m.Layers) != 1 || m.Layers[0].MediaType != MediaLayer {
		t.Fatalf("manifest: %+v %v", m, err)
	}
	var cfg struct {
		Architecture string `json:"architecture"`
		OS           string `json:"os"`
		Config       struct{ Entrypoint []string }
		RootFS       struct {
			DiffIDs []string `json:"diff_ids"`
		} `json:"rootfs"`
	}
	if err := json.Unmarshal(blob(t, layout, m.Config), &cfg); err != nil || cfg.OS != "linux" || cfg.Architecture != runtime.GOARCH || cfg.Config.Entrypoint[0] != "/deltavacuum" {
		t.Fatalf("config: %+v %v", cfg, err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(blob(t, layout, m.Layers[0])))
	if err != nil {
		t.Fatal(err)
	}
	layer, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(layer)
	if len(cfg.RootFS.DiffIDs) != 1 || cfg.RootFS.DiffIDs[0] != "sha256:"+hex.EncodeToString(h[:]) {
		t.Fatalf("diff_id %v does not match the layer", cfg.RootFS.DiffIDs)
	}
	// Extract the file system.
	rootfs := filepath.Join(work, "rootfs")
	tr := tar.NewReader(bytes.NewReader(layer))
	for {
		hd, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(rootfs, filepath.FromSlash(hd.Name))
		if !strings.HasPrefix(p, rootfs+string(filepath.Separator)) {
			t.Fatalf("layer entry %q escapes the root", hd.Name)
		}
		switch hd.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			b, _ := io.ReadAll(tr)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b, os.FileMode(hd.Mode)&0o777); err != nil {
				t.Fatal(err)
			}
		}
	}
	if b, err := os.ReadFile(filepath.Join(rootfs, "etc/ssl/certs/ca-certificates.crt")); err != nil || !bytes.Contains(b, []byte("BEGIN CERTIFICATE")) {
		t.Fatalf("CA certificates missing from the image: %v", err)
	}
	exe := filepath.Join(rootfs, "deltavacuum")
	out, err := exec.Command(exe, "version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "deltavacuum v0.0.0-dev.1+gabc1234\n") {
		t.Fatalf("version from the image: %v\n%s", err, out)
	}
	dir := fixtures.Copy(t, "delta/basic-with-inserts-deletes-checkpoint", time.Now().Add(-30*24*time.Hour))
	out, err = exec.Command(exe, "vacuum", dir, "--dry-run", "--retain-hours", "0", "--conf", "spark.databricks.delta.retentionDurationCheck.enabled=false").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Found 7 files") {
		t.Fatalf("vacuum --dry-run from the image: %v\n%s", err, out)
	}
	// Reproducible: the same inputs give the same image.
	again, err := Write(filepath.Join(work, "layout2"), spec)
	if err != nil || again.Digest != desc.Digest {
		t.Errorf("a second build gives %s, the first %s", again.Digest, desc.Digest)
	}
}
