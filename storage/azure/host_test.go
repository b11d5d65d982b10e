package azure

import "testing"

func TestDFSEndpoint(t *testing.T) {
	for _, tc := range []struct{ service, dfs string }{
		{"https://acct.blob.core.windows.net", "https://acct.dfs.core.windows.net"},
		{"https://acct.blob.core.windows.net/", "https://acct.dfs.core.windows.net/"},
		{"https://ACCT.Blob.Core.Windows.Net", "https://acct.dfs.core.windows.net"},
		{"https://acct.blob.core.windows.net:8443", "https://acct.dfs.core.windows.net:8443"},
		{"https://acct.blob.core.chinacloudapi.cn", "https://acct.dfs.core.chinacloudapi.cn"},
		{"https://acct.blob.core.usgovcloudapi.net", "https://acct.dfs.core.usgovcloudapi.net"},
		{"https://acct.z13.blob.storage.azure.net", "https://acct.z13.dfs.storage.azure.net"},
		{"https://onelake.blob.fabric.microsoft.com", "https://onelake.dfs.fabric.microsoft.com"},
		{"https://westus-onelake.blob.fabric.microsoft.com", "https://westus-onelake.dfs.fabric.microsoft.com"},
		// No documented twin: no DFS endpoint, never a guess.
		{"http://127.0.0.1:10000/devstoreaccount1", ""},
		{"https://data.example.com", ""},
		{"https://acct.blob.core.windows.net.evil.example", ""},
		{"https://evil.example.blob.core.windows.net", ""},
		{"https://acct.privatelink.blob.core.windows.net", ""},
		{"https://acct.blob.core.windows.net.", ""},
		{"https://x@acct.blob.core.windows.net", ""},
		{"https://acct.z1.blob.storage.azure.net", ""},
		{"https://acct.dfs.core.windows.net", ""},
		{"ftp://acct.blob.core.windows.net", ""},
	} {
		if got := DFSEndpoint(tc.service); got != tc.dfs {
			t.Errorf("DFSEndpoint(%q) = %q, want %q", tc.service, got, tc.dfs)
		}
	}
}

func TestParseHost(t *testing.T) {
	for _, tc := range []struct {
		host             string
		ok               bool
		account, service string
		blob, dfs        string
	}{
		{"acct.dfs.core.windows.net", true, "acct", "dfs", "acct.blob.core.windows.net", "acct.dfs.core.windows.net"},
		{"acct-secondary.blob.core.windows.net", true, "acct", "blob", "acct-secondary.blob.core.windows.net", "acct-secondary.dfs.core.windows.net"},
		{"acct.z42.dfs.storage.azure.net", true, "acct", "dfs", "acct.z42.blob.storage.azure.net", "acct.z42.dfs.storage.azure.net"},
		{"onelake.dfs.fabric.microsoft.com", true, "", "dfs", "onelake.blob.fabric.microsoft.com", "onelake.dfs.fabric.microsoft.com"},
		{"eastus2-onelake.blob.fabric.microsoft.com", true, "", "blob", "eastus2-onelake.blob.fabric.microsoft.com", "eastus2-onelake.dfs.fabric.microsoft.com"},
		{"acct.queue.core.windows.net", false, "", "", "", ""},
		{"acct.blob.core.windows.net.evil.example", false, "", "", "", ""},
		{"a.b.blob.core.windows.net", false, "", "", "", ""},
		{"a.blob.core.windows.net", true, "a", "blob", "a.blob.core.windows.net", "a.dfs.core.windows.net"},
		{"acct-x.blob.core.windows.net", false, "", "", "", ""},
		{"acct_1.blob.core.windows.net", false, "", "", "", ""},
		{"acct.zz1.blob.storage.azure.net", false, "", "", "", ""},
		{"evil.dfs.fabric.microsoft.com", false, "", "", "", ""},
		{"-onelake.dfs.fabric.microsoft.com", false, "", "", "", ""},
		{"", false, "", "", "", ""},
	} {
		h, ok := ParseHost(tc.host)
		if ok != tc.ok || h.Account != tc.account || h.Service != tc.service || (ok && (h.Blob() != tc.blob || h.DFS() != tc.dfs)) {
			t.Errorf("ParseHost(%q) = %+v, %v", tc.host, h, ok)
		}
	}
}
