package azure

import (
	"context"
	"errors"
	"net"
	"net/url"
	"os"
	"testing"

	"github.com/deltavacuum/deltavacuum/storage"
)

// The Shared Key signer of the DFS requests is checked by a server that verifies signatures:
// Azurite (which has no DFS endpoint, but signs and verifies the Blob API alike). The request
// is a DELETE of a blob with an escaped name and a query, as the DFS delete sends.
func TestSharedKeySignerAgainstAzurite(t *testing.T) {
	ep := os.Getenv("DELTAVACUUM_TEST_AZURE_ENDPOINT")
	if ep == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("DELTAVACUUM_TEST_AZURE_ENDPOINT is unset (CI=true): run scripts/testservers/start.sh")
		}
		t.Skip("Azure test server not configured: DELTAVACUUM_TEST_AZURE_ENDPOINT is unset; run scripts/testservers/start.sh")
	}
	u, err := url.Parse(ep)
	if err != nil || (u.Hostname() != "localhost" && !net.ParseIP(u.Hostname()).IsLoopback()) {
		t.Fatalf("DELTAVACUUM_TEST_AZURE_ENDPOINT=%q is not a loopback URL", ep)
	}
	ctx := context.Background()
	cfg := Config{
		ServiceURL: ep,
		Container:  "deltavacuum-signer-test",
		Prefix:     "signer",
		Account:    os.Getenv("DELTAVACUUM_TEST_AZURE_ACCOUNT"),
		AccountKey: os.Getenv("DELTAVACUUM_TEST_AZURE_KEY"),
		AllowHTTP:  true,
	}
	s, err := New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Client().Create(ctx, nil); err != nil && !isAlreadyExists(err) {
		t.Fatal(err)
	}
	key := "p=00%3A00/a b+é.parquet"
	if err := s.Put(ctx, key, []byte("x")); err != nil {
		t.Fatal(err)
	}
	auth, err := newSharedKeyPolicy(cfg.Account, cfg.AccountKey)
	if err != nil {
		t.Fatal(err)
	}
	// The DFS client, pointed at the Blob endpoint: DELETE /account/container/name?recursive=false.
	d := newDFS(ep, cfg.Container, auth, s.b.dfsOptions)
	if err := d.deleteDir(ctx, "signer/"+key); err != nil {
		t.Fatalf("signed DELETE refused: %v", err)
	}
	if _, err := s.Stat(ctx, key); !errors.Is(err, storage.ErrNotExist) {
		t.Fatalf("the blob is still there: %v", err)
	}
	t.Log("good delete done")
	// A wrong key is refused: the server does check signatures.
	bad, _ := newSharedKeyPolicy(cfg.Account, "d3Jvbmcga2V5")
	if err := s.Put(ctx, key, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := newDFS(ep, cfg.Container, bad, s.b.dfsOptions).deleteDir(ctx, "signer/"+key); err == nil {
		t.Fatal("a request signed with a wrong key was accepted")
	}
}

func isAlreadyExists(err error) bool {
	var e interface{ Error() string }
	return errors.As(err, &e) && contains(e.Error(), "ContainerAlreadyExists")
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
