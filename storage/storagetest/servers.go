package storagetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/local"
	"github.com/deltavacuum/deltavacuum/storage/mem"
)

// The environment variables the integration tests read; scripts/testservers/start.sh writes
// them to .cache/testservers.env.
const (
	EnvS3Endpoint        = "DELTAVACUUM_TEST_S3_ENDPOINT"
	EnvS3Region          = "DELTAVACUUM_TEST_S3_REGION"
	EnvS3AccessKeyID     = "DELTAVACUUM_TEST_S3_ACCESS_KEY_ID"
	EnvS3SecretAccessKey = "DELTAVACUUM_TEST_S3_SECRET_ACCESS_KEY"
	EnvS3Bucket          = "DELTAVACUUM_TEST_S3_BUCKET"
	// EnvS3VersionedEndpoint is a second S3 test server whose buckets can be versioned
	// (versitygw with --versioning-dir); same credentials and region.
	EnvS3VersionedEndpoint = "DELTAVACUUM_TEST_S3_VERSIONED_ENDPOINT"

	EnvAzureEndpoint  = "DELTAVACUUM_TEST_AZURE_ENDPOINT"
	EnvAzureAccount   = "DELTAVACUUM_TEST_AZURE_ACCOUNT"
	EnvAzureKey       = "DELTAVACUUM_TEST_AZURE_KEY"
	EnvAzureContainer = "DELTAVACUUM_TEST_AZURE_CONTAINER"

	EnvGCSEndpoint = "DELTAVACUUM_TEST_GCS_ENDPOINT"
	EnvGCSBucket   = "DELTAVACUUM_TEST_GCS_BUCKET"
)

// Backend is one storage backend to run tests on.
type Backend struct {
	// Name is "local", "mem", "s3", "azure" or "gcs".
	Name string
	// New returns a new, empty store (a fresh prefix of the test bucket for the servers; it
	// is emptied when the test ends).
	New func(t *testing.T) storage.Store
	// ReportsGone is false where a deleted key that did not exist may be reported as deleted
	// rather than Gone (S3).
	ReportsGone bool
	// ServerModTimes is true where modification times are set by the server and cannot be
	// set back (the object stores): tests then make files "old" by choosing the cutoff.
	ServerModTimes bool
}

// Backends returns local, mem, and each object-store backend whose test server is configured
// (DELTAVACUUM_TEST_*_ENDPOINT). With CI=true a missing server fails the test; otherwise it is
// left out with a message.
func Backends(t *testing.T) []Backend {
	t.Helper()
	bs := []Backend{
		{Name: "local", New: NewLocal, ReportsGone: true},
		{Name: "mem", New: NewMem, ReportsGone: true},
	}
	for _, sb := range serverBackends {
		if os.Getenv(sb.env) == "" {
			missingServer(t, sb.name, sb.env, false)
			continue
		}
		bs = append(bs, Backend{Name: sb.name, New: sb.new, ReportsGone: sb.name != "s3", ServerModTimes: true})
	}
	return bs
}

var serverBackends = []struct {
	name, env string
	new       func(t *testing.T) storage.Store
}{
	{"s3", EnvS3Endpoint, func(t *testing.T) storage.Store { return NewS3(t) }},
	{"azure", EnvAzureEndpoint, func(t *testing.T) storage.Store { return NewAzure(t) }},
	{"gcs", EnvGCSEndpoint, func(t *testing.T) storage.Store { return NewGCS(t) }},
}

// NewLocal returns a local store in a new temporary directory.
func NewLocal(t *testing.T) storage.Store {
	s, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// NewMem returns a new in-memory store.
func NewMem(t *testing.T) storage.Store {
	return mem.New("mem://" + strings.ReplaceAll(t.Name(), "/", "-"))
}

// missingServer skips (or, with CI=true, fails) a test that needs the server env names. With
// soft, outside CI, it only logs.
func missingServer(t *testing.T, name, env string, skip bool) {
	t.Helper()
	msg := name + " test server not configured: " + env + " is unset; run scripts/testservers/start.sh and source .cache/testservers.env"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg + " (CI=true: the integration tests must run)")
	}
	if skip {
		t.Skip(msg)
	}
	t.Log(msg + "; leaving the " + name + " backend out")
}

// requireServer returns the endpoint in env, skipping (or failing in CI) when it is unset,
// and failing when it is not a loopback address: tests delete data, and only ever talk to
// servers on this machine.
func requireServer(t *testing.T, name, env string) string {
	t.Helper()
	ep := os.Getenv(env)
	if ep == "" {
		missingServer(t, name, env, true)
	}
	requireLoopback(t, env, ep)
	return ep
}

func requireLoopback(t *testing.T, env, endpoint string) {
	t.Helper()
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		t.Fatalf("%s=%q is not a URL", env, endpoint)
	}
	host := u.Hostname()
	if host == "localhost" {
		return
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		t.Fatalf("%s=%q: the tests only run against servers on 127.0.0.1 (they delete data)", env, endpoint)
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// UniquePrefix returns a new prefix for one test's objects: "t-<time>-<random>".
func UniquePrefix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "t-" + time.Now().UTC().Format("20060102T150405") + "-" + hex.EncodeToString(b[:])
}

// ensured remembers the buckets and containers created in this process.
var ensured sync.Map

func ensureOnce(t *testing.T, key string, create func(ctx context.Context) error) {
	t.Helper()
	if _, ok := ensured.Load(key); ok {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := create(ctx); err != nil {
		t.Fatalf("creating %s: %v", key, err)
	}
	ensured.Store(key, true)
}

// Empty deletes everything in s: files first, then directories, deepest first.
func Empty(ctx context.Context, s storage.Store) error {
	var files, dirs []string
	err := s.Walk(ctx, "", func(o storage.Object) error {
		if o.IsDir {
			dirs = append(dirs, o.Key)
		} else {
			files = append(files, o.Key)
		}
		return nil
	})
	if err != nil && !errors.Is(err, storage.ErrNotExist) {
		return err
	}
	slices.Reverse(dirs)
	res, err := s.Delete(ctx, append(files, dirs...))
	if err != nil {
		return err
	}
	for _, r := range res {
		if r.Err != nil {
			return r.Err
		}
	}
	return nil
}

func cleanupStore(t *testing.T, s storage.Store) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := Empty(ctx, s); err != nil {
			t.Logf("cleaning up %s: %v", s.Location(), err)
		}
	})
}
