package location

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/deltavacuum/deltavacuum/storage/local"
)

func TestParseStorageOptions(t *testing.T) {
	o, err := ParseStorageOptions([]string{"AWS_REGION=eu-west-1", "endpoint_url=http://127.0.0.1:7070", "aws_secret_access_key=s3cr3t=x", "concurrency=4"})
	if err != nil {
		t.Fatal(err)
	}
	want := Options{"aws_region": "eu-west-1", "aws_endpoint": "http://127.0.0.1:7070", "aws_secret_access_key": "s3cr3t=x", "concurrency": "4"}
	if len(o) != len(want) {
		t.Fatalf("got %v", o.Redacted())
	}
	for k, v := range want {
		if o[k] != v {
			t.Errorf("%s = %q, want %q", k, o[k], v)
		}
	}
	for _, bad := range [][]string{{"nokey"}, {"no_such_option=1"}, {"concurrency=0"}, {"aws_allow_http=maybe"}, {"max_retries=-1"}} {
		if _, err := ParseStorageOptions(bad); err == nil {
			t.Errorf("ParseStorageOptions(%q) succeeded", bad)
		}
	}
	// Errors never show values.
	_, err = ParseStorageOptions([]string{"hunter2-secret-value"})
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("error %v", err)
	}
	_, err = ParseStorageOptions([]string{"azure_storage_use_emulator=hunter2"})
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("error %v", err)
	}
}

func TestRedacted(t *testing.T) {
	o := Options{"aws_secret_access_key": "SECRET1", "azure_storage_sas_token": "sig=SECRET2", "azure_storage_account_key": "SECRET3",
		"google_service_account_key": "SECRET4", "azure_client_secret": "SECRET5", "aws_session_token": "SECRET6", "azure_storage_token": "SECRET7", "aws_region": "us-east-2"}
	for _, s := range []string{o.String(), o.GoString(), strings.Join(mapValues(o.Redacted()), " ")} {
		if strings.Contains(s, "SECRET") {
			t.Errorf("secret shown: %s", s)
		}
		if !strings.Contains(s, "us-east-2") {
			t.Errorf("non-secret hidden: %s", s)
		}
	}
}

func mapValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

func TestEnv(t *testing.T) {
	env := map[string]string{"AWS_ENDPOINT_URL": "http://127.0.0.1:9000", "AWS_ALLOW_HTTP": "true", "AZURE_STORAGE_ACCOUNT_NAME": "acct", "AZURE_STORAGE_ACCOUNT_KEY": "a2V5"}
	o := Options{"aws_endpoint": "http://127.0.0.1:7070"}.WithEnv(func(k string) string { return env[k] })
	if o["aws_endpoint"] != "http://127.0.0.1:7070" {
		t.Errorf("an option must win over the environment: %q", o["aws_endpoint"])
	}
	if o["aws_allow_http"] != "true" || o["azure_storage_account_name"] != "acct" || o["azure_storage_account_key"] != "a2V5" {
		t.Errorf("environment not read: %v", o.Redacted())
	}
}

func TestKind(t *testing.T) {
	for uri, want := range map[string]string{"/x": "local", "s3://b": "s3", "s3a://b/x": "s3", "gs://b": "gcs", "abfss://c@a.dfs.core.windows.net/x": "azure", "az://c/x": "azure", "wasbs://c@a.blob.core.windows.net/": "azure", "https://a.blob.core.windows.net/c": "azure"} {
		if got, err := Kind(uri); err != nil || got != want {
			t.Errorf("Kind(%q) = %q, %v", uri, got, err)
		}
	}
	if _, err := Kind("https://example.com/x"); err == nil {
		t.Error("Kind of a non-Azure https URL succeeded")
	}
}

func TestEveryKeyDocumented(t *testing.T) {
	doc, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range Keys {
		if !strings.Contains(string(doc), "`"+k.Name+"`") {
			t.Errorf("option %s is not in storage/README.md", k.Name)
		}
		for _, e := range k.Env {
			if !strings.Contains(string(doc), "`"+e+"`") && !strings.Contains(string(doc), e) {
				t.Errorf("variable %s of %s is not in storage/README.md", e, k.Name)
			}
		}
	}
}

func TestResolveLocal(t *testing.T) {
	for uri, want := range map[string]string{"/tmp/t": "/tmp/t", "rel/dir": "rel/dir", "file:///tmp/a%20b": "/tmp/a b", "file:/tmp/x": "/tmp/x", `C:\data\t`: `C:\data\t`} {
		tg, err := parse(uri)
		if err != nil || tg.kind != "local" || tg.path != want {
			t.Errorf("%s: %+v %v", uri, tg, err)
		}
	}
	s, err := Open(context.Background(), t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.(*local.Store); !ok {
		t.Fatalf("%T", s)
	}
}

// A location whose backend the program does not link is refused with the import to add.
func TestBackendNotLinked(t *testing.T) {
	mu.Lock()
	saved := resolvers
	resolvers = map[string]Resolver{}
	mu.Unlock()
	t.Cleanup(func() { mu.Lock(); resolvers = saved; mu.Unlock() })
	for uri, pkg := range map[string]string{"s3://b/t": "storage/s3", "gs://b/t": "storage/gcs", "abfss://c@acct.dfs.core.windows.net/t?sv=1&sig=SECRET": "storage/azure"} {
		_, err := Open(context.Background(), uri, nil)
		if err == nil || !strings.Contains(err.Error(), "not linked") || !strings.Contains(err.Error(), pkg) || strings.Contains(err.Error(), "SECRET") {
			t.Errorf("%s: %v", SafeURI(uri), err)
		}
	}
	if _, err := Open(context.Background(), t.TempDir(), nil); err != nil {
		t.Errorf("the local backend is always linked: %v", err)
	}
}

// TestUnknownOptionSuggests (issue 36, item 6): a mistyped storage option names the key it is
// a slip away from (Python passes the tool's words on); a key far from any names none; the
// value is never in the message.
func TestUnknownOptionSuggests(t *testing.T) {
	for _, tc := range []struct{ key, near string }{
		{"aws_regoin", "aws_region"},
		{"AZURE_STORAGE_ACOUNT_KEY", "azure_storage_account_key"},
		{" google_service_acount ", "google_service_account"},
		{"colour", ""},
		{"", ""},
		{"x\n", ""},
	} {
		_, err := ParseStorageOptions([]string{tc.key + "=s3cr3t-value"})
		if err == nil {
			t.Fatalf("%q accepted", tc.key)
		}
		msg := err.Error()
		if strings.Contains(msg, "s3cr3t") {
			t.Errorf("%q: the message shows the value: %s", tc.key, msg)
		}
		if tc.near != "" && !strings.Contains(msg, "did you mean "+tc.near+"?") || tc.near == "" && strings.Contains(msg, "did you mean") {
			t.Errorf("%q: %s, want a suggestion of %q", tc.key, msg, tc.near)
		}
	}
}
