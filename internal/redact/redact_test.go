package redact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"html/template"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// spellings are the ways an encoder may print s.
func spellings(s string) []string {
	html, _ := json.Marshal(s)
	var plain bytes.Buffer
	enc := json.NewEncoder(&plain)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	p := strings.TrimSpace(plain.String())
	return []string{s, url.QueryEscape(s), url.PathEscape(s), lowerHex(url.QueryEscape(s)),
		string(html), p, strings.ReplaceAll(p, "/", `\/`), strings.ReplaceAll(p, "+", `\u002b`), strconv.Quote(s)}
}

func TestAddRedactsEverySpelling(t *testing.T) {
	secrets := []string{
		"U2VjcmV0K0FjY3QvS2V5PT0+/abc+def==", // base64, with '+', '/' and '='
		"p@ss w:rd/with?odd&chars=#%",        // URL metacharacters
		"sig%2Bvalue%2Fwith%3Descapes",       // already URL-encoded (a SAS sig as given)
		`quote"and\backslash<and>&amp`,       // JSON-escaped characters
		"naïve-ünïcode-sëcret",               // non-ASCII
	}
	for _, secret := range secrets {
		r := New()
		r.Add(secret)
		for _, form := range append(spellings(secret), spellingsOfDecoded(secret)...) {
			got := r.String("error: " + form + " in context")
			if strings.Contains(got, strings.Trim(form, `"`)) {
				t.Errorf("secret %q spelled %q is shown: %s", secret, form, got)
			}
			if !strings.Contains(got, Mask) {
				t.Errorf("secret %q spelled %q: no mask in %s", secret, form, got)
			}
		}
	}
}

func spellingsOfDecoded(s string) []string {
	d, err := url.QueryUnescape(s)
	if err != nil || d == s {
		return nil
	}
	return spellings(d)
}

func TestShortValuesAreNotSearched(t *testing.T) {
	r := New()
	r.Add("abc")
	r.Add("")
	if got := r.String("abc def"); got != "abc def" {
		t.Errorf("got %q", got)
	}
}

// A secret written in pieces, split at every byte, is still caught: the writer holds an
// unfinished line back.
func TestWriterSecretAcrossWrites(t *testing.T) {
	secret := "sv=2022-11-02&sp=rl&sig=Zm9vYmFy%2Bc2VjcmV0%3D"
	line := "azure list _delta_log/: Get \"http://127.0.0.1:1/acct/c?comp=list&" + secret + "\": connection refused\n"
	for _, withRegistration := range []bool{true, false} {
		for cut := 1; cut < len(line); cut++ {
			r := New()
			if withRegistration {
				r.Add(secret)
			}
			var out bytes.Buffer
			w := r.Writer(&out)
			fmt.Fprint(w, line[:cut])
			fmt.Fprint(w, line[cut:])
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(out.String(), "Zm9vYmFy") {
				t.Fatalf("registered %v, cut at %d: %s", withRegistration, cut, out.String())
			}
		}
	}
	// Byte by byte, with carriage returns (a progress line redrawn in place).
	r := New()
	r.Add("hunter2-secret")
	var out bytes.Buffer
	w := r.Writer(&out)
	for _, b := range []byte("\x1b[Klisting hunter2-secret\r\x1b[Kdone hunter2-secret\n") {
		w.Write([]byte{b})
	}
	w.Flush()
	if strings.Contains(out.String(), "hunter2") || strings.Count(out.String(), Mask) != 2 {
		t.Errorf("got %q", out.String())
	}
}

func TestWriterFlushesAndKeepsOrder(t *testing.T) {
	var out bytes.Buffer
	w := New().Writer(&out)
	fmt.Fprint(w, "first line\nsecond, ")
	if out.String() != "first line\n" {
		t.Errorf("a complete line must be written at once, the rest held back: %q", out.String())
	}
	fmt.Fprint(w, "unfinished")
	w.Flush()
	if out.String() != "first line\nsecond, unfinished" {
		t.Errorf("got %q", out.String())
	}
}

// Secrets inside JSON documents, as encoding/json writes them (HTML escaping on and off), are
// masked and the document stays valid JSON.
func TestSecretsInJSON(t *testing.T) {
	secret := "a+b/c==&<d>"
	r := New()
	r.Add(secret)
	doc := map[string]any{"statement": "VACUUM 'x?sig=" + secret + "'", "error": "key " + secret, "n": 1}
	for _, html := range []bool{true, false} {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		enc.SetIndent("", "  ")
		if err := enc.Encode(doc); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		w := r.Writer(&out)
		w.Write(b.Bytes())
		w.Flush()
		var back map[string]any
		if err := json.Unmarshal(out.Bytes(), &back); err != nil {
			t.Fatalf("not JSON after redaction: %v\n%s", err, out.String())
		}
		for _, v := range back {
			if s, ok := v.(string); ok && strings.Contains(s, "b/c") {
				t.Errorf("secret shown: %q", s)
			}
		}
	}
	// Slashes and pluses escaped by another encoder.
	if got := r.String(`{"msg":"a\u002bb\/c==\u0026\u003cd\u003e"}`); strings.Contains(got, `b\/c`) {
		t.Errorf("got %s", got)
	}
}

func TestAddURI(t *testing.T) {
	r := New()
	for _, uri := range []string{
		"s3://user:S3PASSWORD@bucket/t",
		"https://acct.blob.core.windows.net/c/t?sv=2022-11-02&sp=rl&sig=AZSIG%2Babc%3D",
		"abfss://c@acct.dfs.core.windows.net/t?sig=ABFSSIG",
		"http://[bad-uri?sig=BADURISIG",
		"/local/path",
		"schema.table",
	} {
		r.AddURI(uri)
	}
	for _, s := range []string{"S3PASSWORD", "AZSIG+abc=", "AZSIG%2Babc%3D", "ABFSSIG", "BADURISIG", "sv=2022-11-02&sp=rl&sig=AZSIG%2Babc%3D"} {
		if got := r.String("x " + s + " y"); strings.Contains(got, s) {
			t.Errorf("%q shown: %s", s, got)
		}
	}
	// Only what is secret: the other parameters of a SAS, the path, the names are shown.
	for _, s := range []string{"2022-11-02", "sp=rl", "/local/path", "schema.table", "acct.blob.core.windows.net"} {
		if got := r.String(s); got != s {
			t.Errorf("%q became %q", s, got)
		}
	}
}

func TestQueryValuedSecret(t *testing.T) {
	r := New()
	r.Add("sv=2022-11-02&ss=b&sig=QUERYSIG123")
	if got := r.String("Head ...?sig=QUERYSIG123&sv=2022-11-02"); strings.Contains(got, "QUERYSIG") {
		t.Errorf("the sig of a SAS option, reordered in a request, is shown: %s", got)
	}
}

func TestMultiLineSecret(t *testing.T) {
	key := "{\n  \"type\": \"service_account\",\n  \"private_key_id\": \"0123456789abcdef0123\",\n  \"private_key\": \"-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\\n-----END PRIVATE KEY-----\\n\"\n}"
	r := New()
	r.Add(key)
	var out bytes.Buffer
	w := r.Writer(&out)
	fmt.Fprintf(w, "gcs: credentials: %s\n", key)
	fmt.Fprintf(w, "decoded: MIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n")
	w.Flush()
	for _, s := range []string{"0123456789abcdef0123", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC"} {
		if strings.Contains(out.String(), s) {
			t.Errorf("%q shown:\n%s", s, out.String())
		}
	}
}

func TestPatterns(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Get \"http://127.0.0.1:1/c?comp=list&sig=abc%2B&sv=1\": refused", "Get \"http://127.0.0.1:1/c?comp=list&sig=" + Mask + "&sv=1\": refused"},
		{"?SIG=abc", "?SIG=" + Mask},
		{"DefaultEndpointsProtocol=https;AccountName=a;AccountKey=k3y==;EndpointSuffix=core.windows.net",
			"DefaultEndpointsProtocol=https;AccountName=a;AccountKey=" + Mask + ";EndpointSuffix=core.windows.net"},
		{"Endpoint=sb://x/;SharedAccessSignature=SharedAccessSignature sr=x", "Endpoint=sb://x/;SharedAccessSignature=" + Mask + " sr=x"},
		{"s3://user:pa55@bucket/t and http://u:p@h:1/x", "s3://user:" + Mask + "@bucket/t and http://u:" + Mask + "@h:1/x"},
		{"SET fs.azure.account.key.acct.dfs.core.windows.net = 'k3y=='", "SET fs.azure.account.key.acct.dfs.core.windows.net = '" + Mask + "'"},
		{`SET spark.hadoop.fs.s3a.secret.key = \"s3cr3t\"`, `SET spark.hadoop.fs.s3a.secret.key = \"` + Mask + `\"`},
		{"spark.hadoop.fs.azure.sas.c.acct.blob.core.windows.net=sv%3D1", "spark.hadoop.fs.azure.sas.c.acct.blob.core.windows.net=" + Mask},
		{`{"fs.azure.account.key.acct.dfs.core.windows.net": "k3y==", "n": "1"}`, `{"fs.azure.account.key.acct.dfs.core.windows.net": "` + Mask + `", "n": "1"}`},
		{`{"password":"a\"b"}`, `{"password":"` + Mask + `"}`},
		{`{"properties":"{\"fs.azure.account.key.a\":\"k3y==\",\"delta.x\":\"1\"}"}`, `{"properties":"{\"fs.azure.account.key.a\":\"` + Mask + `\",\"delta.x\":\"1\"}"}`},
		{"fs.azure.account.key.acct.dfs.core.windows.net\tk3y==\n", "fs.azure.account.key.acct.dfs.core.windows.net\t" + Mask + "\n"},
		{"properties.client.secret\tv\r\n", "properties.client.secret\t" + Mask + "\r\n"},
		{"Authorization: Bearer eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.eyJhdWQiOiJzdG9yYWdlIn0.c2lnbmF0dXJl", "Authorization: Bearer " + Mask},
		// Idempotent.
		{"sig=" + Mask, "sig=" + Mask},
		{"s3://u:" + Mask + "@b", "s3://u:" + Mask + "@b"},
		// Not secrets.
		{"tombstone\t12\t2024-01-01T00:00:00Z\tp=1/token=2/part-0.parquet", "tombstone\t12\t2024-01-01T00:00:00Z\tp=1/token=2/part-0.parquet"},
		{"p=1/part-0.parquet", "p=1/part-0.parquet"},
		{"file:/data/t/session_token=5", "file:/data/t/session_token=5"},
		{"kansas=1 basis=2", "kansas=1 basis=2"},
		{"abfss://c@acct.dfs.core.windows.net/t", "abfss://c@acct.dfs.core.windows.net/t"},
		{"http://127.0.0.1:1/acct", "http://127.0.0.1:1/acct"},
		{"spark.databricks.delta.retentionDurationCheck.enabled=false", "spark.databricks.delta.retentionDurationCheck.enabled=false"},
		{`{"numFilesToDelete": 7, "table": "s3://b/t"}`, `{"numFilesToDelete": 7, "table": "s3://b/t"}`},
		{"a bearer token for https://storage.azure.com, used as is", "a bearer token for https://storage.azure.com, used as is"},
	} {
		if got := New().String(tc.in); got != tc.want {
			t.Errorf("String(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

func TestSensitiveKey(t *testing.T) {
	for key, want := range map[string]bool{
		"fs.azure.account.key.acct.dfs.core.windows.net":               true,
		"spark.hadoop.fs.azure.account.key.acct.blob.core.windows.net": true,
		"fs.azure.sas.c.acct.blob.core.windows.net":                    true,
		"fs.azure.account.oauth2.client.secret":                        true,
		"fs.s3a.secret.key":                                            true,
		"fs.s3a.access.key":                                            true,
		"fs.s3a.session.token":                                         true,
		"fs.gs.auth.service.account.private.key":                       true,
		"javax.jdo.option.ConnectionPassword":                          true,
		"sig":                                                          true,
		"spark.databricks.delta.retentionDurationCheck.enabled":        false,
		"delta.deletedFileRetentionDuration":                           false,
		"fs.s3a.access.key.id.is.not":                                  true,
		"sv":                                                           false,
		"azure_storage_sas_token":                                      true,
		"sas":                                                          true,
		"kansas_city":                                                  false,
		"continuationToken":                                            false,
		"ContinuationToken":                                            false,
		"continuationTokenSecret":                                      true,
		"continuation.token":                                           true,
	} {
		if got := SensitiveKey(key); got != want {
			t.Errorf("SensitiveKey(%q) = %v, want %v", key, got, want)
		}
	}
}

func TestNilRedactor(t *testing.T) {
	var r *Redactor
	r.Add("secret-value")
	r.AddURI("s3://u:p@b")
	if got := r.String("s3://u:pw@b"); got != "s3://u:"+Mask+"@b" {
		t.Errorf("a nil Redactor must still apply the patterns: %q", got)
	}
}

func BenchmarkWriterDryRunLines(b *testing.B) {
	r := New()
	for i := 0; i < 20; i++ {
		r.Add(fmt.Sprintf("U2VjcmV0K0FjY3QvS2V5%02d+/==", i))
	}
	line := []byte("tombstone\t12345\t2024-01-01T00:00:00Z\tregion=eu/date=2024-01-01/part-00002-5e6f1234-aaaa-bbbb-cccc-0123456789ab.c000.snappy.parquet\n")
	w := r.Writer(discard{})
	b.SetBytes(int64(len(line)))
	for i := 0; i < b.N; i++ {
		w.Write(line)
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

func TestAddURIText(t *testing.T) {
	r := New()
	r.AddURI("VACUUM 'abfss://c@acct.dfs.core.windows.net/t?sig=TEXTSIG123' DRY RUN")
	r.AddURI("s3://u:SPACEPW1@bucket/my table?x=1&sig=SPACESIG1")
	got := r.String("VACUUM 'abfss://c@acct.dfs.core.windows.net/t?sig=TEXTSIG123' DRY RUN; s3://u:SPACEPW1@bucket/my table?x=1&sig=SPACESIG1")
	want := "VACUUM 'abfss://c@acct.dfs.core.windows.net/t?" + Mask + "' DRY RUN; s3://u:" + Mask + "@bucket/my table?" + Mask
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// TestSecretsInHTML: a secret as a page prints it (html/template writes '+' as &#43; and '&'
// as &amp;, in text and in a quoted attribute; html.EscapeString as well) is redacted: the
// service's pages are redacted after they are rendered. An Azure account key has '+' in it.
func TestSecretsInHTML(t *testing.T) {
	secret := "Ab+cd/Ef==&sig='x\"<y>"
	r := New()
	r.Add(secret)
	tmpl := template.Must(template.New("").Parse(`<p>{{.}}</p><a title="{{.}}">x</a>`))
	var b bytes.Buffer
	if err := tmpl.Execute(&b, "error: "+secret+" refused"); err != nil {
		t.Fatal(err)
	}
	for _, page := range []string{b.String(), html.EscapeString(secret)} {
		out := r.String(page)
		if strings.Contains(out, "Ab") || strings.Contains(out, "cd/Ef") {
			t.Errorf("%q redacted is %q: the secret is still there", page, out)
		}
	}
}
