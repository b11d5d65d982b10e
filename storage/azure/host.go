package azure

import (
	"net/url"
	"strings"

	"github.com/deltavacuum/deltavacuum/internal/azurehost"
)

// Host is an Azure storage host whose Blob and DFS names Microsoft documents (see
// azurehost.Host): any other host has no twin deltavacuum derives, and credentials go only to
// hosts the user named.
type Host = azurehost.Host

// ParseHost classifies a host name (without a port), case-insensitively.
func ParseHost(host string) (Host, bool) { return azurehost.Parse(host) }

// IsAccountName reports whether s can be a storage account name (azurehost.IsAccountName).
func IsAccountName(s string) bool { return azurehost.IsAccountName(s) }

// DFSEndpoint returns the ADLS Gen2 endpoint of a Blob endpoint whose host is a Host, with
// the same scheme, port and path; "" for any other URL (emulators, custom domains), where
// only the user can name it (azure_dfs_endpoint).
func DFSEndpoint(serviceURL string) string {
	u, err := url.Parse(serviceURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.User != nil || u.Opaque != "" {
		return ""
	}
	h, ok := ParseHost(u.Hostname())
	if !ok || h.Service != "blob" {
		return ""
	}
	out := url.URL{Scheme: u.Scheme, Host: h.DFS(), Path: u.Path, RawPath: u.RawPath}
	if p := u.Port(); p != "" {
		out.Host += ":" + p
	}
	return out.String()
}

// AccountFromURL returns the account of a service URL: that of a Host, or the first path
// segment of an emulator URL (http://127.0.0.1:10000/devstoreaccount1). It is a signing
// input (Shared Key), never a host.
func AccountFromURL(u *url.URL) string {
	if h, ok := ParseHost(u.Hostname()); ok {
		return h.Account
	}
	if p := strings.Trim(u.Path, "/"); p != "" {
		return strings.Split(p, "/")[0]
	}
	return ""
}
