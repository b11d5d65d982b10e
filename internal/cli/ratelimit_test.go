package cli

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/internal/fixtures"
	"github.com/deltavacuum/deltavacuum/storage/location"
	"github.com/deltavacuum/deltavacuum/storage/ratelimit"
	"github.com/deltavacuum/deltavacuum/storage/storagetest"
)

// --storage-option max_requests_per_second: a bad value is a usage error naming the option,
// before anything is opened; nothing is deleted.
func TestMaxRequestsPerSecondFlagHostile(t *testing.T) {
	dir := fixtures.Copy(t, "delta/basic-with-inserts-deletes-checkpoint", time.Now().Add(-30*24*time.Hour))
	for _, v := range []string{"0", "-3", "NaN", "Inf", "1e12", "fast", ""} {
		code, _, errs := run(t, "vacuum", dir, "--retain-hours", "0", "--conf", checkOff, "--storage-option", "max_requests_per_second="+v)
		if code != ExitUsage || !strings.Contains(errs, "max_requests_per_second") {
			t.Errorf("max_requests_per_second=%q: exit %d, stderr %q; want a usage error naming the option", v, code, errs)
		}
	}
	if got := len(fixtures.Files(t, dir)); got != 60 {
		t.Errorf("a refused run deleted something: %d files left of 60", got)
	}
}

// The option reaches the store the command line opens: every request of a real run on the S3
// test server waited for a token of the bucket's limiter.
func TestMaxRequestsPerSecondFlagApplies(t *testing.T) {
	c := storagetest.S3Config(t) // skips without the S3 test server
	st := storagetest.NewS3Config(t, c)
	ctx := context.Background()
	commit := `{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}` + "\n" +
		`{"metaData":{"id":"rps","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[]}","partitionColumns":[],"configuration":{},"createdTime":0}}` + "\n" +
		`{"add":{"path":"live.parquet","partitionValues":{},"size":1,"modificationTime":0,"dataChange":true}}` + "\n"
	for k, v := range map[string]string{"_delta_log/00000000000000000000.json": commit, "live.parquet": "x"} {
		if err := st.Put(ctx, k, []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	const rps = 4997 // this test's own limiter
	uri := "s3://" + c.Bucket + "/" + c.Prefix
	code, out, errs := run(t, "vacuum", uri, "--dry-run", "--json",
		"--storage-option", "aws_endpoint="+c.Endpoint, "--storage-option", "aws_allow_http=true",
		"--storage-option", "aws_access_key_id="+c.AccessKeyID, "--storage-option", "aws_secret_access_key="+c.SecretAccessKey,
		"--storage-option", "aws_region="+c.Region, "--storage-option", "requests_per_second=4997")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	u, _ := url.Parse(uri)
	lim, _ := ratelimit.Shared(location.Scope(u), rps)
	if lim.Sent() == 0 {
		t.Fatal("the run sent no request through the limiter of --storage-option requests_per_second")
	}
}
