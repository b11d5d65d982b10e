// Command ociimage writes the OCI image layout of deltavacuum (make image): see
// internal/ociimage.
//
//	go run ./internal/tools/ociimage -binary dist/deltavacuum_linux_amd64 -arch amd64 -version v1.2.3 -out dist/image-amd64
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/deltavacuum/deltavacuum/internal/ociimage"
)

func main() {
	var s ociimage.Spec
	out := flag.String("out", "", "directory of the OCI image layout (created)")
	flag.StringVar(&s.Binary, "binary", "", "static linux binary of deltavacuum")
	flag.StringVar(&s.CACerts, "ca-certs", "/etc/ssl/certs/ca-certificates.crt", "CA bundle to install")
	flag.StringVar(&s.Arch, "arch", "amd64", "GOARCH of the binary")
	flag.StringVar(&s.Version, "version", "devel", "the version the binary names (org.opencontainers.image.version)")
	flag.StringVar(&s.Tag, "tag", "", "the image's ref name, the tag docker load gives it (default: the version with '+' as '-')")
	flag.Parse()
	s.Created = time.Unix(0, 0).UTC()
	if e := os.Getenv("SOURCE_DATE_EPOCH"); e != "" {
		if n, err := strconv.ParseInt(e, 10, 64); err == nil {
			s.Created = time.Unix(n, 0).UTC()
		}
	}
	if *out == "" || s.Binary == "" {
		fmt.Fprintln(os.Stderr, "ociimage: -out and -binary are required")
		os.Exit(2)
	}
	d, err := ociimage.Write(*out, s)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ociimage:", err)
		os.Exit(1)
	}
	fmt.Printf("ociimage: %s (%s, linux/%s) in %s\n", s.Version, d.Digest, s.Arch, *out)
}
