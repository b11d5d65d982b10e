package deltavacuum_test

import (
	"os/exec"
	"strings"
	"testing"
)

// cloudSDKs are the module path prefixes of the object-store SDKs.
var cloudSDKs = []string{"github.com/aws/", "github.com/Azure/", "github.com/AzureAD/", "cloud.google.com/go/storage", "google.golang.org/api/", "google.golang.org/grpc"}

func linkedSDKs(t *testing.T, pkgs ...string) []string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list", "-deps"}, pkgs...)...).Output()
	if err != nil {
		t.Skipf("go list: %v", err) // no go command: nothing to check with
	}
	var found []string
	for _, p := range strings.Fields(string(out)) {
		for _, sdk := range cloudSDKs {
			if strings.HasPrefix(p, sdk) {
				found = append(found, p)
			}
		}
	}
	return found
}

// A program that imports the library and the local backend links none of the cloud SDKs: each
// object-store backend registers itself when its package is imported (storage/location).
func TestRootPackageLinksNoCloudSDK(t *testing.T) {
	if found := linkedSDKs(t, ".", "./storage/local", "./vacuum", "./insight"); len(found) > 0 {
		t.Errorf("the library links cloud SDKs: %v", found)
	}
	// The check can fail: the command line links all of them, an S3-only program only AWS's.
	if found := linkedSDKs(t, "./cmd/deltavacuum"); len(found) == 0 {
		t.Error("the command line links no cloud SDK: the check above proves nothing")
	}
	for _, f := range linkedSDKs(t, ".", "./storage/s3") {
		if !strings.HasPrefix(f, "github.com/aws/") {
			t.Errorf("root + storage/s3 links %s", f)
		}
	}
}
