// Package ociimage writes an OCI image layout (https://github.com/opencontainers/image-spec,
// image-layout.md) holding one layer: a static binary and the CA certificates, on no base
// image. It needs no Docker daemon, no registry and no network: make image runs it, and
// `docker load`, `podman load` or `skopeo copy oci-archive:…` take the tar of the layout.
// The image is reproducible: every time stamp in it is the given one.
package ociimage

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/deltavacuum/deltavacuum/internal/buildinfo"
)

// Media types of the OCI image specification.
const (
	MediaIndex    = "application/vnd.oci.image.index.v1+json"
	MediaManifest = "application/vnd.oci.image.manifest.v1+json"
	MediaConfig   = "application/vnd.oci.image.config.v1+json"
	MediaLayer    = "application/vnd.oci.image.layer.v1.tar+gzip"
)

// Spec is what goes into the image.
type Spec struct {
	Binary  string // path of the static binary, installed as /deltavacuum
	CACerts string // path of a CA bundle (Debian's /etc/ssl/certs/ca-certificates.crt)
	Arch    string // GOARCH of the binary: amd64, arm64
	Version string // org.opencontainers.image.version: the version the binary names
	// Tag is the image's ref name (org.opencontainers.image.ref.name), what docker load tags
	// it with: buildinfo.ImageTag of Version, as Docker takes no '+' (default that of Version).
	Tag     string
	Created time.Time
}

// Descriptor is an OCI content descriptor.
type Descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Platform    *Platform         `json:"platform,omitempty"`
}

// Platform is the platform of a manifest.
type Platform struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
}

// Manifest is an OCI image manifest.
type Manifest struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Config        Descriptor   `json:"config"`
	Layers        []Descriptor `json:"layers"`
}

// Index is the index.json of a layout.
type Index struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Manifests     []Descriptor `json:"manifests"`
}

// Layer is the file system of the image as a tar stream (uncompressed): /deltavacuum,
// /etc/ssl/certs/ca-certificates.crt, /tmp, /etc/passwd naming the user 65532 the image runs as.
func Layer(s Spec) ([]byte, error) {
	bin, err := os.ReadFile(s.Binary)
	if err != nil {
		return nil, err
	}
	certs, err := os.ReadFile(s.CACerts)
	if err != nil {
		return nil, fmt.Errorf("CA certificates: %w (on Debian: apt-get install ca-certificates)", err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dir := func(name string, mode int64) error {
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: mode, ModTime: s.Created, Format: tar.FormatPAX})
	}
	file := func(name string, mode int64, data []byte) error {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(data)), ModTime: s.Created, Format: tar.FormatPAX}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	passwd := []byte("root:x:0:0:root:/:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/tmp:/sbin/nologin\n")
	for _, step := range []func() error{
		func() error { return file("deltavacuum", 0o755, bin) },
		func() error { return dir("etc/", 0o755) },
		func() error { return file("etc/passwd", 0o644, passwd) },
		func() error { return dir("etc/ssl/", 0o755) },
		func() error { return dir("etc/ssl/certs/", 0o755) },
		func() error { return file("etc/ssl/certs/ca-certificates.crt", 0o644, certs) },
		func() error { return dir("tmp/", 0o1777) },
	} {
		if err := step(); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Write writes the OCI image layout of s into dir (created; it must be empty or absent) and
// returns the manifest's descriptor.
func Write(dir string, s Spec) (Descriptor, error) {
	layer, err := Layer(s)
	if err != nil {
		return Descriptor{}, err
	}
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression) // no name, no time: reproducible
	if _, err := zw.Write(layer); err != nil {
		return Descriptor{}, err
	}
	if err := zw.Close(); err != nil {
		return Descriptor{}, err
	}
	if err := os.MkdirAll(filepath.Join(dir, "blobs", "sha256"), 0o755); err != nil {
		return Descriptor{}, err
	}
	layerDesc, err := writeBlob(dir, MediaLayer, gz.Bytes())
	if err != nil {
		return Descriptor{}, err
	}
	config := map[string]any{
		"created":      s.Created.UTC().Format(time.RFC3339),
		"architecture": s.Arch,
		"os":           "linux",
		"config": map[string]any{
			"Entrypoint": []string{"/deltavacuum"},
			"Env":        []string{"SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt", "HOME=/tmp"},
			"User":       "65532:65532",
			"WorkingDir": "/tmp",
			"Labels":     map[string]string{"org.opencontainers.image.version": s.Version, "org.opencontainers.image.licenses": "Apache-2.0"},
		},
		"rootfs":  map[string]any{"type": "layers", "diff_ids": []string{digest(layer)}},
		"history": []map[string]string{{"created": s.Created.UTC().Format(time.RFC3339), "created_by": "deltavacuum make image (internal/ociimage)"}},
	}
	cb, _ := json.Marshal(config)
	configDesc, err := writeBlob(dir, MediaConfig, cb)
	if err != nil {
		return Descriptor{}, err
	}
	mb, _ := json.Marshal(Manifest{SchemaVersion: 2, MediaType: MediaManifest, Config: configDesc, Layers: []Descriptor{layerDesc}})
	manifest, err := writeBlob(dir, MediaManifest, mb)
	if err != nil {
		return Descriptor{}, err
	}
	manifest.Platform = &Platform{Architecture: s.Arch, OS: "linux"}
	tag := s.Tag
	if tag == "" {
		tag = buildinfo.ImageTag(s.Version)
	}
	manifest.Annotations = map[string]string{"org.opencontainers.image.ref.name": tag}
	ib, _ := json.MarshalIndent(Index{SchemaVersion: 2, MediaType: MediaIndex, Manifests: []Descriptor{manifest}}, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, "index.json"), ib, 0o644); err != nil {
		return Descriptor{}, err
	}
	return manifest, os.WriteFile(filepath.Join(dir, "oci-layout"), []byte(`{"imageLayoutVersion":"1.0.0"}`), 0o644)
}

func digest(b []byte) string {
	h := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(h[:])
}

func writeBlob(dir, mediaType string, b []byte) (Descriptor, error) {
	d := Descriptor{MediaType: mediaType, Digest: digest(b), Size: int64(len(b))}
	return d, os.WriteFile(filepath.Join(dir, "blobs", "sha256", d.Digest[len("sha256:"):]), b, 0o644)
}
