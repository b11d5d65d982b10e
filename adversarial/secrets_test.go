package adversarial

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deltavacuum/deltavacuum/storage/location"
)

// The secrets of a run never reach its output. A distinct secret is planted in every secret
// storage option, in every environment variable those options (and the SDKs) read, in the
// password and the SAS of table, inventory, warehouse and catalog URIs and endpoints, and in
// SQL (SET of a sensitive key, a VACUUM of a URI with a SAS); then commands that fail run
// (every endpoint a closed port on 127.0.0.1, no retries), as text, --json and --progress
// json, for vacuum, sql and history, and neither stdout nor stderr may hold any of them, in
// any spelling (URL-escaped, JSON-escaped). Nothing here reaches past loopback: every Azure
// run has a key, a SAS or a token (never the default chain), S3 has static keys, GCS an
// http endpoint (to which no credentials are sent).

// closed is a loopback address nothing listens on.
const closed = "http://127.0.0.1:1"

// plant returns a distinct secret for name: base64 with '+' and '/' in it, valid as an
// account key.
func plant(name string) string {
	return base64.StdEncoding.EncodeToString([]byte("\xfb\xff\xbfplanted secret of " + name + "\xfe"))
}

// world is the secrets of one test and the flags and environment that carry them.
type world struct {
	secrets []string
	flags   []string
}

func (w *world) secret(name string) string {
	s := plant(name)
	w.secrets = append(w.secrets, s)
	return s
}

// option plants a secret in storage option key.
func (w *world) option(key string) {
	w.flags = append(w.flags, "--storage-option", key+"="+w.secret("option "+key))
}

// setEnv plants a secret in every environment variable a secret option reads, and in those
// the SDKs read themselves; skip lists options whose variables are set empty instead.
func (w *world) setEnv(t *testing.T, skip ...string) {
	t.Helper()
	for _, k := range location.Keys {
		if !k.Secret {
			continue
		}
		for _, e := range k.Env {
			if contains(skip, k.Name) {
				t.Setenv(e, "")
				continue
			}
			t.Setenv(e, w.secret("env "+e))
		}
	}
	for _, e := range []string{"AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AZURE_CLIENT_SECRET"} {
		t.Setenv(e, w.secret("env "+e))
	}
	// Nothing else of the machine's configuration may send a request elsewhere.
	for _, e := range []string{"AWS_PROFILE", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3",
		"AZURE_STORAGE_ENDPOINT", "AZURE_ENDPOINT", "AZURE_STORAGE_USE_EMULATOR", "GOOGLE_ENDPOINT", "STORAGE_EMULATOR_HOST", "DELTAVACUUM_WAREHOUSE"} {
		t.Setenv(e, "")
	}
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// spellings are the ways an encoder may print s.
func spellings(s string) []string {
	j, _ := json.Marshal(s)
	body := strings.Trim(string(j), `"`)
	return []string{s, url.QueryEscape(s), url.PathEscape(s), body, strings.ReplaceAll(body, "/", `\/`), lowerHex(url.QueryEscape(s))}
}

// lowerHex returns s with the hex digits of its %XX escapes in lower case.
func lowerHex(s string) string {
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			b[i+1], b[i+2] = []byte(strings.ToLower(string(b[i+1 : i+3])))[0], []byte(strings.ToLower(string(b[i+1 : i+3])))[1]
			i += 2
		}
	}
	return string(b)
}

// sasQuery is a SAS query string whose signature is secret.
func sasQuery(sig string) string {
	return "sv=2022-11-02&ss=b&srt=co&sp=rl&se=2099-01-01T00:00:00Z&sig=" + url.QueryEscape(sig)
}

// runCase is one command of a world.
type runCase struct {
	name string
	args []string
	// request: the command gets as far as sending a request (to the closed port), so that
	// the errors of the HTTP client and the SDKs are what is checked.
	request bool
}

func (w *world) check(t *testing.T, cases []runCase) {
	t.Helper()
	for _, rc := range cases {
		for _, mode := range outputModes(rc.args[0]) {
			args := append(append(append([]string{}, rc.args...), mode...), w.flags...)
			code, stdout, stderr := run(t, args...)
			label := rc.name + " " + strings.Join(mode, " ")
			if code == 0 {
				t.Errorf("%s: exit 0, want a failure; stderr:\n%s", label, stderr)
			}
			if rc.request && !strings.Contains(stderr, "127.0.0.1:1") {
				t.Errorf("%s: the run did not get to its request; stderr:\n%s", label, stderr)
			}
			for _, s := range w.secrets {
				for _, sp := range spellings(s) {
					for _, out := range []struct{ name, text string }{{"stdout", stdout}, {"stderr", stderr}} {
						if i := strings.Index(out.text, sp); i >= 0 {
							t.Errorf("%s: %s shows a secret (%q): ...%s...", label, out.name, sp, excerpt(out.text, i, len(sp)))
						}
					}
				}
			}
		}
	}
}

func outputModes(cmd string) [][]string {
	switch cmd {
	case "vacuum":
		return [][]string{nil, {"--json"}, {"--progress", "json"}, {"--json", "--progress", "json"}}
	case "sql", "history":
		return [][]string{nil, {"--json"}}
	}
	return [][]string{nil}
}

func excerpt(s string, i, n int) string {
	from, to := max(0, i-80), min(len(s), i+n+40)
	return s[from:to]
}

// A secret option deltavacuum refuses (the Fabric session token, a customer-provided key) is
// refused by its name: its value is never printed, with every other secret planted too.
func TestRefusedSecretOptionsNeverPrinted(t *testing.T) {
	n := 0
	for _, k := range location.Keys {
		if !k.Secret || k.Refused == "" {
			continue
		}
		n++
		t.Run(k.Name, func(t *testing.T) {
			w := &world{}
			w.setEnv(t)
			w.option(k.Name)
			w.flags = append(w.flags, "--storage-option", "azure_endpoint="+closed+"/acct", "--storage-option", "azure_allow_http=true")
			w.check(t, []runCase{
				{"vacuum abfss", []string{"vacuum", "abfss://c@acct.dfs.core.windows.net/t", "--dry-run"}, false},
				{"sql", []string{"sql", "VACUUM 'abfss://c@acct.dfs.core.windows.net/t' DRY RUN"}, false},
			})
		})
	}
	if n == 0 {
		t.Fatal("no refused secret option: the test checks nothing")
	}
}

// Every secret option and variable planted; Azure signs with the account key (the option).
func TestSecretsNeverPrinted(t *testing.T) {
	w := &world{}
	w.setEnv(t)
	for _, k := range location.Keys {
		if k.Secret && k.Refused == "" { // a refused key stops the run before any request (below)
			w.option(k.Name)
		}
	}
	w.flags = append(w.flags, "--storage-option", "azure_endpoint="+closed+"/acct", "--storage-option", "azure_allow_http=true",
		"--storage-option", "aws_endpoint="+closed, "--storage-option", "aws_allow_http=true", "--storage-option", "aws_access_key_id=AKIDPLANTED",
		"--storage-option", "aws_region=us-east-1",
		"--storage-option", "google_endpoint="+closed, "--storage-option", "google_allow_http=true",
		"--storage-option", "max_retries=0")

	abfss := "abfss://c@acct.dfs.core.windows.net/t?" + sasQuery(w.secret("abfss sig"))
	s3uri := "s3://" + url.UserPassword("user", w.secret("s3 password")).String() + "@bucket/t"
	inventory := "abfss://c@acct.dfs.core.windows.net/inv?" + sasQuery(w.secret("inventory sig"))
	warehouse := "abfss://ws@acct.dfs.core.windows.net/lh.Lakehouse?" + sasQuery(w.secret("warehouse sig"))
	setKey := w.secret("SET value")
	setQuoted := w.secret("SET quoted value")
	sqlURI := "abfss://c@acct.dfs.core.windows.net/t2?" + sasQuery(w.secret("sql sig"))
	local := newLocalTable(t)

	w.check(t, []runCase{
		{"vacuum abfss", []string{"vacuum", abfss, "--dry-run"}, true},
		{"vacuum abfss, real run", []string{"vacuum", abfss}, true},
		{"vacuum s3", []string{"vacuum", s3uri, "--dry-run"}, true},
		{"vacuum gs", []string{"vacuum", "gs://bucket/t", "--dry-run"}, true},
		{"vacuum with inventory", []string{"vacuum", local.dir, "--inventory", inventory, "--dry-run"}, true},
		{"vacuum --inventory=", []string{"vacuum", local.dir, "--inventory=" + inventory, "--dry-run"}, true},
		{"vacuum warehouse name", []string{"vacuum", "sales.orders", "--warehouse", warehouse, "--dry-run"}, true},
		{"sql", []string{"sql", "SET fs.azure.account.key.acct.dfs.core.windows.net = '" + setKey + "'; " +
			"SET spark.hadoop.fs.azure.sas.c.acct.blob.core.windows.net = \"" + setQuoted + "\"; " +
			"SET; SET fs.azure.account.key.acct.dfs.core.windows.net; VACUUM '" + sqlURI + "' DRY RUN"}, true},
		{"sql, failing SET", []string{"sql", "SET fs.azure.account.key.acct.dfs.core.windows.net = '" + setKey + "'; " +
			"SET spark.databricks.delta.vacuum.logging.enabled = '" + setKey + "'"}, false},
		{"sql, syntax error", []string{"sql", "SET fs.azure.account.key.acct.dfs.core.windows.net = '" + setKey + "'; VACUUM '" + sqlURI + "' RETAIN"}, false},
		{"history abfss", []string{"history", abfss}, true},
		{"history s3", []string{"history", s3uri, "--limit", "1"}, true},
		{"bad storage option", []string{"vacuum", abfss, "--storage-option", "azure_storage_acount_key=" + setKey}, false},
	})

	// What is not secret is still shown: the other statements of a script with a secret in it,
	// the table's location without its SAS, the settings that are not sensitive.
	missing := filepath.Join(t.TempDir(), "no-table")
	code, stdout, stderr := run(t, append([]string{"sql", "SET fs.azure.account.key.acct.dfs.core.windows.net = '" + setKey + "';\n" +
		"SET spark.databricks.delta.vacuum.logging.enabled = true;\nVACUUM '" + missing + "' DRY RUN"}, w.flags...)...)
	for _, want := range []string{"spark.databricks.delta.vacuum.logging.enabled\ttrue", "fs.azure.account.key.acct.dfs.core.windows.net\t*********(redacted)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if code != 1 || !strings.Contains(stderr, "VACUUM '"+missing+"' DRY RUN") || strings.Count(stderr, "redacted") != 0 {
		t.Errorf("exit %d; the failing statement must be echoed whole, nothing in it is secret:\n%s", code, stderr)
	}
	code, _, stderr = run(t, append([]string{"vacuum", abfss, "--dry-run"}, w.flags...)...)
	if !strings.Contains(stderr, "abfss://c@acct.dfs.core.windows.net/t") {
		t.Errorf("exit %d; the error must name the table:\n%s", code, stderr)
	}
}

// Azure authenticates with the SAS of the URI (no key anywhere): the SAS goes into every
// request's URL, and Go's HTTP errors quote that URL. The token is there only so that
// nothing ever falls back to the default credential chain.
func TestSASNeverPrinted(t *testing.T) {
	w := &world{}
	w.setEnv(t, "azure_storage_account_key", "azure_storage_sas_token")
	w.option("azure_storage_token")
	w.option("azure_client_secret")
	w.flags = append(w.flags, "--storage-option", "azure_endpoint="+closed+"/acct", "--storage-option", "azure_allow_http=true",
		"--storage-option", "max_retries=0")

	https := "https://acct.blob.core.windows.net/c/t?" + sasQuery(w.secret("https sig"))
	catalog := filepath.Join(t.TempDir(), "catalog.yaml")
	catURI := "https://acct.blob.core.windows.net/c/orders?" + sasQuery(w.secret("catalog sig"))
	if err := os.WriteFile(catalog, []byte("tables:\n  sales.orders: '"+catURI+"'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sqlURI := "https://acct.blob.core.windows.net/c/t2?" + sasQuery(w.secret("sql sig"))
	w.check(t, []runCase{
		{"vacuum https", []string{"vacuum", https, "--dry-run"}, true},
		{"vacuum catalog name", []string{"vacuum", "sales.orders", "--catalog", catalog, "--dry-run"}, true},
		{"sql", []string{"sql", "VACUUM '" + sqlURI + "' DRY RUN"}, true},
		{"sql, DESCRIBE HISTORY", []string{"sql", "DESCRIBE HISTORY '" + sqlURI + "'"}, true},
		{"history https", []string{"history", https}, true},
	})

	// The SAS given as an option: it is in the requests' URLs too.
	w2 := &world{}
	w2.setEnv(t, "azure_storage_account_key", "azure_storage_sas_token")
	w2.flags = append(w2.flags, "--storage-option", "azure_storage_sas_token="+sasQuery(w2.secret("option sig")),
		"--storage-option", "azure_endpoint="+closed+"/acct", "--storage-option", "azure_allow_http=true", "--storage-option", "max_retries=0")
	w2.check(t, []runCase{
		{"vacuum az", []string{"vacuum", "az://c/t", "--dry-run"}, true},
		{"history az", []string{"history", "az://c/t"}, true},
	})
}

// Endpoints given with a password: refused or used, their password is never shown.
func TestEndpointPasswordsNeverPrinted(t *testing.T) {
	w := &world{}
	w.setEnv(t)
	w.option("azure_storage_account_key")
	w.option("aws_secret_access_key")
	azure := "http://" + url.UserPassword("epuser", w.secret("azure endpoint password")).String() + "@127.0.0.1:1/acct"
	aws := "http://" + url.UserPassword("epuser", w.secret("aws endpoint password")).String() + "@127.0.0.1:1"
	w.flags = append(w.flags, "--storage-option", "max_retries=0", "--storage-option", "aws_access_key_id=AKIDPLANTED",
		"--storage-option", "aws_allow_http=true", "--storage-option", "azure_allow_http=true", "--storage-option", "aws_region=us-east-1")
	w.check(t, []runCase{
		{"azure endpoint", []string{"vacuum", "az://c/t", "--dry-run", "--storage-option", "azure_endpoint=" + azure}, false},
		{"aws endpoint", []string{"vacuum", "s3://bucket/t", "--dry-run", "--storage-option", "aws_endpoint=" + aws}, true},
	})
}
