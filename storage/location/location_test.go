package location

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/deltavacuum/deltavacuum/storage/local"
)

func noEnv(string) string { return "" }

func mustResolve(t *testing.T, uri string, o Options) *target {
	t.Helper()
	tg, err := resolve(uri, o.WithEnv(noEnv))
	if err != nil {
		t.Fatalf("resolve(%q): %v", uri, err)
	}
	return tg
}

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

func TestResolveS3(t *testing.T) {
	tg := mustResolve(t, "s3a://bucket/tables/my%20table/", Options{"aws_endpoint": "http://127.0.0.1:7070", "aws_allow_http": "1", "delete_batch_size": "500", "max_retries": "2"})
	c := tg.s3
	if tg.kind != "s3" || c.Bucket != "bucket" || c.Prefix != "tables/my table" || !c.PathStyle || !c.AllowHTTP || c.BatchSize != 500 || c.MaxAttempts != 3 {
		t.Fatalf("%+v", c)
	}
	if c.Location != "s3a://bucket/tables/my%20table" {
		t.Errorf("Location %q", c.Location)
	}
	if c := mustResolve(t, "s3://b", Options{"aws_endpoint": "https://minio.example", "aws_virtual_hosted_style_request": "true"}).s3; c.PathStyle {
		t.Error("virtual hosted style ignored")
	}
	if c := mustResolve(t, "s3://b/x", nil).s3; c.PathStyle || c.Endpoint != "" || c.Prefix != "x" {
		t.Errorf("%+v", c)
	}
}

func TestResolveGCS(t *testing.T) {
	c := mustResolve(t, "gs://bkt/a/b", Options{"google_endpoint": "http://127.0.0.1:4443", "google_allow_http": "true"}).gcs
	if c.Bucket != "bkt" || c.Prefix != "a/b" || c.Endpoint != "http://127.0.0.1:4443" || !c.AllowHTTP || c.Location != "gs://bkt/a/b" {
		t.Fatalf("%+v", c)
	}
}

func TestResolveAzure(t *testing.T) {
	cases := []struct {
		uri                                 string
		opts                                Options
		service, container, prefix, account string
		location                            string
	}{
		{"abfss://data@myacct.dfs.core.windows.net/tables/t1", nil,
			"https://myacct.blob.core.windows.net", "data", "tables/t1", "myacct", "abfss://data@myacct.dfs.core.windows.net/tables/t1"},
		{"abfs://data@myacct.dfs.core.windows.net/t", nil,
			"https://myacct.blob.core.windows.net", "data", "t", "myacct", "abfss://data@myacct.dfs.core.windows.net/t"},
		{"wasbs://data@myacct.blob.core.windows.net/t/", nil,
			"https://myacct.blob.core.windows.net", "data", "t", "myacct", "abfss://data@myacct.dfs.core.windows.net/t"},
		{"az://data/t", Options{"azure_storage_account_name": "acct2"},
			"https://acct2.blob.core.windows.net", "data", "t", "acct2", "abfss://data@acct2.dfs.core.windows.net/t"},
		{"https://myacct.blob.core.windows.net/data/t/x", nil,
			"https://myacct.blob.core.windows.net", "data", "t/x", "myacct", "abfss://data@myacct.dfs.core.windows.net/t/x"},
		{"https://myacct.dfs.core.windows.net/data/t?sv=2022-11-02&sig=SECRETSIG", nil,
			"https://myacct.blob.core.windows.net", "data", "t", "myacct", "abfss://data@myacct.dfs.core.windows.net/t"},
		// OneLake, by names and by GUIDs.
		{"abfss://MyWorkspace@onelake.dfs.fabric.microsoft.com/MyLakehouse.Lakehouse/Tables/sales", nil,
			"https://onelake.blob.fabric.microsoft.com", "MyWorkspace", "MyLakehouse.Lakehouse/Tables/sales", "", "abfss://MyWorkspace@onelake.dfs.fabric.microsoft.com/MyLakehouse.Lakehouse/Tables/sales"},
		{"abfss://0d5b2c1e-8a8e-4a57-9d5c-1b2a3c4d5e6f@onelake.dfs.fabric.microsoft.com/6f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b/Tables/dbo/t", nil,
			"https://onelake.blob.fabric.microsoft.com", "0d5b2c1e-8a8e-4a57-9d5c-1b2a3c4d5e6f", "6f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b/Tables/dbo/t", "", ""},
		{"https://onelake.dfs.fabric.microsoft.com/ws/item.Lakehouse/Tables/t", nil,
			"https://onelake.blob.fabric.microsoft.com", "ws", "item.Lakehouse/Tables/t", "", "abfss://ws@onelake.dfs.fabric.microsoft.com/item.Lakehouse/Tables/t"},
		{"abfss://ws@westus-onelake.dfs.fabric.microsoft.com/item/Tables/t", nil,
			"https://westus-onelake.blob.fabric.microsoft.com", "ws", "item/Tables/t", "", ""},
		// Emulator.
		{"az://c/t", Options{"azure_storage_use_emulator": "true"},
			"http://127.0.0.1:10000/devstoreaccount1", "c", "t", "devstoreaccount1", "az://c/t"},
		{"az://c/t", Options{"azure_endpoint": "http://127.0.0.1:10001/acct9", "azure_allow_http": "true"},
			"http://127.0.0.1:10001/acct9", "c", "t", "acct9", ""},
	}
	// The location is the one spelling absolute log paths use: abfss://CONTAINER@ACCOUNT.dfs…
	// (an emulator's stays as typed).
	for _, tc := range cases {
		c := mustResolve(t, tc.uri, tc.opts).az
		if c.ServiceURL != tc.service || c.Container != tc.container || c.Prefix != tc.prefix || c.Account != tc.account {
			t.Errorf("%s: service %q container %q prefix %q account %q", tc.uri, c.ServiceURL, c.Container, c.Prefix, c.Account)
		}
		if tc.location != "" && c.Location != tc.location {
			t.Errorf("%s: Location %q, want %q", tc.uri, c.Location, tc.location)
		}
		if strings.Contains(c.Location, "SECRET") {
			t.Errorf("%s: Location %q shows the SAS", tc.uri, c.Location)
		}
	}
	c := mustResolve(t, "https://myacct.dfs.core.windows.net/data/t?sv=2022-11-02&sig=SECRETSIG", nil).az
	if !strings.Contains(c.SASToken, "sig=SECRETSIG") {
		t.Errorf("the SAS of the URL is not used: %q", c.SASToken)
	}
	if c := mustResolve(t, "az://c/t", Options{"azure_storage_use_emulator": "true"}).az; c.AccountKey == "" || !c.AllowHTTP {
		t.Errorf("emulator: %v", c)
	}
	if _, err := resolve("az://c/t", Options{}); err == nil || !strings.Contains(err.Error(), "azure_storage_account_name") {
		t.Errorf("az:// without an account: %v", err)
	}
}

func TestResolveLocal(t *testing.T) {
	for uri, want := range map[string]string{"/tmp/t": "/tmp/t", "rel/dir": "rel/dir", "file:///tmp/a%20b": "/tmp/a b", "file:/tmp/x": "/tmp/x", `C:\data\t`: `C:\data\t`} {
		tg := mustResolve(t, uri, nil)
		if tg.kind != "local" || tg.path != want {
			t.Errorf("%s: %s %q", uri, tg.kind, tg.path)
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

func TestErrorsHideSecrets(t *testing.T) {
	for _, uri := range []string{
		"ftp://user:SECRETPW@host/x",
		"https://example.com/x?sig=SECRETSIG",
		"s3://user:SECRETPW@/x",
		"abfss://myacct.dfs.core.windows.net/x?sig=SECRETSIG",
	} {
		_, err := Open(context.Background(), uri, nil)
		if err == nil {
			t.Errorf("Open(%q) succeeded", SafeURI(uri))
			continue
		}
		if strings.Contains(err.Error(), "SECRET") {
			t.Errorf("Open error shows a secret: %v", err)
		}
	}
	_, err := Open(context.Background(), "s3://b/x", Options{"aws_endpoint": "http://SECRETUSER:SECRETPW@127.0.0.1:1/?x=SECRET"})
	if err == nil || strings.Contains(err.Error(), "SECRET") {
		t.Errorf("Open error: %v", err)
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

func TestConfigsNeverPrintSecrets(t *testing.T) {
	o := Options{"aws_secret_access_key": "SECRET1", "aws_access_key_id": "AKID", "aws_session_token": "SECRET2",
		"azure_storage_account_key": "U0VDUkVUMw==", "azure_storage_sas_token": "sv=1&sig=SECRET4", "google_service_account_key": "{SECRET5}"}
	for _, uri := range []string{"s3://b/t", "az://c/t", "gs://b/t"} {
		o2 := Options{"azure_storage_account_name": "acct"}
		for k, v := range o {
			o2[k] = v
		}
		tg := mustResolve(t, uri, o2)
		for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
			for _, c := range []any{tg.s3, tg.az, tg.gcs} {
				if s := fmt.Sprintf(verb, c); strings.Contains(s, "SECRET") || strings.Contains(s, "U0VDUkVUMw") {
					t.Errorf("%s of a config shows a secret: %s", verb, s)
				}
			}
		}
	}
}

func TestLocationHasNoSecret(t *testing.T) {
	s, err := Open(context.Background(), "https://acct.blob.core.windows.net/c/t?sv=2022-11-02&sp=rl&sig=SECRETSIG", nil)
	if err != nil {
		t.Fatal(err)
	}
	if loc := s.Location(); strings.Contains(loc, "SECRET") || loc != "abfss://c@acct.dfs.core.windows.net/t" {
		t.Fatalf("Location %q", loc)
	}
	s, err = Open(context.Background(), "s3://bucket/t", Options{"aws_access_key_id": "AKID", "aws_secret_access_key": "SECRET", "aws_region": "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	if loc := s.Location(); loc != "s3://bucket/t" {
		t.Fatalf("Location %q", loc)
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

// Every Azure URI form resolves to exactly these endpoints: the host given, or the twin
// Microsoft documents for its suffix (dfs <-> blob), never another account.
func TestResolveAzureEndpoints(t *testing.T) {
	cases := []struct {
		uri          string
		opts         Options
		service, dfs string
		account      string
	}{
		// Public cloud, China, US Gov.
		{"abfss://c@acct.dfs.core.windows.net/t", nil, "https://acct.blob.core.windows.net", "https://acct.dfs.core.windows.net", "acct"},
		{"abfs://c@acct.dfs.core.windows.net/t", nil, "https://acct.blob.core.windows.net", "https://acct.dfs.core.windows.net", "acct"},
		{"abfss://c@acct.blob.core.windows.net/t", nil, "https://acct.blob.core.windows.net", "https://acct.dfs.core.windows.net", "acct"},
		{"wasbs://c@acct.blob.core.windows.net/t", nil, "https://acct.blob.core.windows.net", "https://acct.dfs.core.windows.net", "acct"},
		{"wasb://c@acct.blob.core.windows.net/t", nil, "https://acct.blob.core.windows.net", "https://acct.dfs.core.windows.net", "acct"},
		{"az://c@acct.blob.core.windows.net/t", nil, "https://acct.blob.core.windows.net", "https://acct.dfs.core.windows.net", "acct"},
		{"az://c@acct.dfs.core.windows.net/t", nil, "https://acct.blob.core.windows.net", "https://acct.dfs.core.windows.net", "acct"},
		{"abfss://c@acct.dfs.core.chinacloudapi.cn/t", nil, "https://acct.blob.core.chinacloudapi.cn", "https://acct.dfs.core.chinacloudapi.cn", "acct"},
		{"abfss://c@acct.dfs.core.usgovcloudapi.net/t", nil, "https://acct.blob.core.usgovcloudapi.net", "https://acct.dfs.core.usgovcloudapi.net", "acct"},
		{"https://acct.blob.core.usgovcloudapi.net/c/t", nil, "https://acct.blob.core.usgovcloudapi.net", "https://acct.dfs.core.usgovcloudapi.net", "acct"},
		{"https://acct.dfs.core.chinacloudapi.cn/c/t", nil, "https://acct.blob.core.chinacloudapi.cn", "https://acct.dfs.core.chinacloudapi.cn", "acct"},
		// Read-access secondary: the host as given; Shared Key signs with the account's name.
		{"https://acct-secondary.blob.core.windows.net/c/t", nil, "https://acct-secondary.blob.core.windows.net", "https://acct-secondary.dfs.core.windows.net", "acct"},
		// Azure DNS zone endpoints.
		{"abfss://c@acct.z13.dfs.storage.azure.net/t", nil, "https://acct.z13.blob.storage.azure.net", "https://acct.z13.dfs.storage.azure.net", "acct"},
		{"wasbs://c@acct.z07.blob.storage.azure.net/t", nil, "https://acct.z07.blob.storage.azure.net", "https://acct.z07.dfs.storage.azure.net", "acct"},
		{"https://acct.z99.blob.storage.azure.net/c/t", nil, "https://acct.z99.blob.storage.azure.net", "https://acct.z99.dfs.storage.azure.net", "acct"},
		{"https://acct.z00.dfs.storage.azure.net/c/t", nil, "https://acct.z00.blob.storage.azure.net", "https://acct.z00.dfs.storage.azure.net", "acct"},
		// OneLake, global and regional.
		{"abfss://ws@onelake.dfs.fabric.microsoft.com/item/Tables/t", nil, "https://onelake.blob.fabric.microsoft.com", "https://onelake.dfs.fabric.microsoft.com", ""},
		{"abfss://ws@westus-onelake.dfs.fabric.microsoft.com/item/Tables/t", nil, "https://westus-onelake.blob.fabric.microsoft.com", "https://westus-onelake.dfs.fabric.microsoft.com", ""},
		{"https://onelake.blob.fabric.microsoft.com/ws/item/Tables/t", nil, "https://onelake.blob.fabric.microsoft.com", "https://onelake.dfs.fabric.microsoft.com", ""},
		// Case and ports: the same host.
		{"abfss://c@ACCT.DFS.Core.Windows.NET/t", nil, "https://acct.blob.core.windows.net", "https://acct.dfs.core.windows.net", "acct"},
		{"abfss://c@acct.dfs.core.windows.net:443/t", nil, "https://acct.blob.core.windows.net:443", "https://acct.dfs.core.windows.net:443", "acct"},
		{"https://acct.blob.core.windows.net:8443/c/t", nil, "https://acct.blob.core.windows.net:8443", "https://acct.dfs.core.windows.net:8443", "acct"},
		// A wasbs:// host is a Blob host by its scheme: a custom domain is used as given, with
		// no DFS endpoint unless one is named.
		{"wasbs://c@data.example.com/t", nil, "https://data.example.com", "", "data"},
		{"wasbs://c@data.example.com/t", Options{"azure_dfs_endpoint": "https://acct.dfs.core.windows.net"}, "https://data.example.com", "https://acct.dfs.core.windows.net", "data"},
		// az:// names the account; the public cloud is the default.
		{"az://c/t", Options{"azure_storage_account_name": "acct2"}, "https://acct2.blob.core.windows.net", "https://acct2.dfs.core.windows.net", "acct2"},
		// An endpoint option wins over the URI's host, which then only names the account.
		{"abfss://c@acct.z13.dfs.storage.azure.net/t", Options{"azure_endpoint": "http://127.0.0.1:10000/acct", "azure_allow_http": "true"}, "http://127.0.0.1:10000/acct", "", "acct"},
		{"abfss://c@custom.example.com/t", Options{"azure_endpoint": "https://blob.example.com", "azure_dfs_endpoint": "https://dfs.example.com"}, "https://blob.example.com", "https://dfs.example.com", "custom"},
		{"az://c/t", Options{"azure_storage_use_emulator": "true"}, "http://127.0.0.1:10000/devstoreaccount1", "", "devstoreaccount1"},
	}
	for _, tc := range cases {
		t.Run(tc.uri, func(t *testing.T) {
			c := mustResolve(t, tc.uri, tc.opts).az
			if c.ServiceURL != tc.service || c.DFSURL != tc.dfs || c.Account != tc.account {
				t.Errorf("got service %q, DFS %q, account %q; want %q, %q, %q", c.ServiceURL, c.DFSURL, c.Account, tc.service, tc.dfs, tc.account)
			}
		})
	}
}

// Hosts the parser cannot map to a Blob endpoint are refused with a message naming the
// option to pass; they never become another account's host.
func TestResolveAzureUnknownHosts(t *testing.T) {
	for _, uri := range []string{
		"abfss://c@acct.dfs.core.windows.net.evil.example/t",
		"abfss://c@custom.example.com/t",
		"abfss://c@acct.privatelink.dfs.core.windows.net/t",
		"abfss://c@acct.queue.core.windows.net/t",
		"abfss://c@acct.z1.dfs.storage.azure.net/t",
		"abfss://c@acct.z13.dfs.storage.azure.net.evil.example/t",
		"abfss://c@acct.dfs.core.windows.net./t",
		"abfss://c@127.0.0.1:10000/t",
		"abfss://ws@evil-onelake.dfs.fabric.microsoft.com.evil.example/item/t",
		"az://c@custom.example.com/t",
		"https://acct.blob.core.windows.net.evil.example/c/t",
		"https://evil.example/acct.blob.core.windows.net/c/t",
		"https://acct.blob.core.windows.net@evil.example/c/t",
		"https://acct.file.core.windows.net/c/t",
		"https://acct.blob.core.windows.net./c/t",
	} {
		t.Run(uri, func(t *testing.T) {
			tg, err := resolve(uri, Options{}.WithEnv(noEnv))
			if err == nil {
				t.Fatalf("resolved to service %q, DFS %q; want an error", tg.az.ServiceURL, tg.az.DFSURL)
			}
			if msg := err.Error(); !strings.Contains(msg, "azure_endpoint") && !strings.Contains(msg, "trailing dot") && !strings.Contains(msg, "no user information") {
				t.Errorf("the error does not say what to pass: %v", err)
			}
		})
	}
}

// Whatever the URI, a resolved endpoint's host is the host given or its documented twin.
func TestResolveAzureHostileHosts(t *testing.T) {
	for _, tc := range []struct {
		uri  string
		opts Options
	}{
		{"abfss://c@acct.dfs.core.windows.net@evil.example/t", nil},
		{"abfss://c:x@acct.dfs.core.windows.net/t", nil},
		{"abfss://c%40evil.example@acct.dfs.core.windows.net/t", nil},
		{"wasbs://c@acct.blob.core.windows.net.evil.example/t", nil},
		{"wasbs://c@evil.example%2Facct.blob.core.windows.net/t", nil},
		{"wasbs://c@evil.example%3A1/t", nil},
		{"wasbs://c@[::1]:10000/t", nil},
		{"wasbs://c@acct.blob.core.windows.net./t", nil},
		{"wasbs://c@ACCT.Blob.Core.Windows.Net:443/t", nil},
		{"az://c@acct.blob.core.windows.net.evil.example/t", nil},
		{"az://c/t", Options{"azure_storage_account_name": "evil.example/x"}},
		{"az://c/t", Options{"azure_storage_account_name": "evil.example#"}},
		{"az://c/t", Options{"azure_storage_account_name": "evil.example?"}},
		{"az://c/t", Options{"azure_storage_account_name": "x@evil.example"}},
		{"az://c/t", Options{"azure_storage_account_name": "evil.example:443"}},
		{"https://user:pw@acct.blob.core.windows.net/c/t", nil},
		{"https://acct.blob.core.windows.net%2Eevil.example/c/t", nil},
		{"https://ACCT.DFS.CORE.WINDOWS.NET/c/t", nil},
		{"https://acct.z13.dfs.storage.azure.net.evil.example/c/t", nil},
		{"https://onelake.dfs.fabric.microsoft.com.evil.example/ws/t", nil},
	} {
		t.Run(tc.uri, func(t *testing.T) {
			tg, err := resolve(tc.uri, tc.opts.WithEnv(noEnv))
			if err != nil {
				return // refused: nothing is sent anywhere
			}
			given := map[string]bool{}
			if u, err := url.Parse(tc.uri); err == nil && u.Host != "" {
				h := strings.ToLower(u.Hostname())
				given[h] = true
				given[strings.Replace(h, ".dfs.", ".blob.", 1)] = true
				given[strings.Replace(h, ".blob.", ".dfs.", 1)] = true
			}
			if a := tc.opts["azure_storage_account_name"]; a != "" {
				given[a+".blob.core.windows.net"], given[a+".dfs.core.windows.net"] = true, true
			}
			for _, ep := range []string{tg.az.ServiceURL, tg.az.DFSURL} {
				if ep == "" {
					continue
				}
				u, err := url.Parse(ep)
				if err != nil {
					t.Errorf("endpoint %q: %v", ep, err)
					continue
				}
				if !given[u.Hostname()] || u.User != nil || ep != "https://"+u.Host {
					t.Errorf("endpoint %q: host %q is neither the host given nor its twin", ep, u.Hostname())
				}
			}
			if strings.ContainsAny(tg.az.Container, "@:/") {
				t.Errorf("container %q", tg.az.Container)
			}
		})
	}
}
