package adversarial

import (
	"strings"
	"testing"
)

// Azure hosts deltavacuum cannot map to a Blob endpoint (custom domains, look-alikes,
// sovereign or private-link names it does not know, userinfo tricks) are refused before any
// request, with the option to pass named; they never become https://FIRST-LABEL.blob.core.windows.net,
// another account that would receive the key, token or signed requests.
func TestAzureHostsTheUserDidNotName(t *testing.T) {
	key := plant("account key") // valid base64: the run would sign requests with it
	for _, uri := range []string{
		"abfss://c@custom.example.com/t",
		"abfss://c@acct.dfs.core.windows.net.evil.example/t",
		"abfss://c@acct.z13.dfs.storage.azure.net.evil.example/t",
		"abfss://c@acct.privatelink.dfs.core.windows.net/t",
		"abfss://c@acct.dfs.core.windows.net@evil.example/t",
		"abfss://c@acct.dfs.core.windows.net./t",
		"abfss://ws@onelake.dfs.fabric.microsoft.com.evil.example/item/t",
		"az://c@custom.example.com/t",
		"https://acct.blob.core.windows.net.evil.example/c/t",
		"https://evil.example/acct.blob.core.windows.net/c/t",
		"https://acct.blob.core.windows.net@evil.example/c/t",
	} {
		for _, args := range [][]string{
			{"vacuum", uri, "--dry-run"},
			{"history", uri},
			{"sql", "VACUUM '" + uri + "' DRY RUN"},
		} {
			args = append(args, "--storage-option", "azure_storage_account_key="+key, "--storage-option", "max_retries=0")
			code, _, stderr := run(t, args...)
			if code != 1 {
				t.Errorf("%s %s: exit %d, want 1 (refused); stderr:\n%s", args[0], uri, code, stderr)
			}
			if !strings.Contains(stderr, "azure_endpoint") && !strings.Contains(stderr, "trailing dot") && !strings.Contains(stderr, "must be a name only") {
				t.Errorf("%s %s: the refusal does not say what to pass:\n%s", args[0], uri, stderr)
			}
			if strings.Contains(stderr, "dial tcp") || strings.Contains(stderr, "no such host") {
				t.Errorf("%s %s: a request was attempted:\n%s", args[0], uri, stderr)
			}
		}
	}

	// The remedy the refusals name works: with azure_endpoint the URI's host only names the
	// account, and the requests go to the endpoint (here a closed loopback port).
	code, _, stderr := run(t, "vacuum", "abfss://c@custom.example.com/t", "--dry-run",
		"--storage-option", "azure_endpoint="+closed+"/custom", "--storage-option", "azure_allow_http=true",
		"--storage-option", "azure_storage_account_key="+key, "--storage-option", "max_retries=0")
	if code != 1 || !strings.Contains(stderr, "127.0.0.1:1") {
		t.Errorf("with azure_endpoint: exit %d, want a refused connection to the endpoint:\n%s", code, stderr)
	}
}

// An account name from the options is put in front of .blob.core.windows.net only when it is
// one: a name with '/', '#', '@' or ':' would make the URL's host another.
func TestAzureAccountNameIsNotAHost(t *testing.T) {
	for _, account := range []string{"evil.example/x", "evil.example#", "x@evil.example", "evil.example:443", "evil.example?"} {
		code, _, stderr := run(t, "vacuum", "az://c/t", "--dry-run", "--storage-option", "azure_storage_account_name="+account,
			"--storage-option", "azure_storage_account_key="+plant("key"), "--storage-option", "max_retries=0")
		if code != 1 || !strings.Contains(stderr, "azure_endpoint") || strings.Contains(stderr, "dial tcp") {
			t.Errorf("account %q: exit %d:\n%s", account, code, stderr)
		}
	}
}
