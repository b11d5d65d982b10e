// Package azurehost classifies Azure storage host names: the Blob and DFS endpoints of one
// account (or of OneLake) that Microsoft documents as twins. It has no dependencies, so both
// the log reader (which compares the authorities of log paths) and the Azure backend (which
// decides where credentials go) use the one list.
package azurehost

import "strings"

// Host is an Azure storage host whose Blob and DFS names Microsoft documents: the endpoints
// of one account (or of OneLake) that differ only in the service label.
//
//	ACCOUNT.{blob,dfs}.core.windows.net        public cloud (ACCOUNT-secondary too)
//	ACCOUNT.{blob,dfs}.core.chinacloudapi.cn   Azure operated by 21Vianet
//	ACCOUNT.{blob,dfs}.core.usgovcloudapi.net  Azure Government
//	ACCOUNT.zNN.{blob,dfs}.storage.azure.net   Azure DNS zone endpoints (z00 to z99)
//	onelake.{blob,dfs}.fabric.microsoft.com    OneLake, and REGION-onelake.… for a region
//
// Any other host (a custom domain, a private-link name, another service, a look-alike) is
// not a Host: its twin cannot be known, so none is derived; credentials go only to hosts
// the user named.
type Host struct {
	// Account is the storage account, the Shared Key signing name ("" for OneLake; without
	// "-secondary" for a read-access secondary endpoint).
	Account string
	// Service is "blob" or "dfs".
	Service string
	labels  []string
	svc     int // index of the service label
}

// Parse classifies a host name (without a port), case-insensitively.
func Parse(host string) (Host, bool) {
	labels := strings.Split(strings.ToLower(host), ".")
	n := len(labels)
	h := Host{labels: labels}
	switch {
	case n == 5 && labels[2] == "core" && isCloud(labels[3]+"."+labels[4]) && isAccount(labels[0]):
		h.svc, h.Account = 1, strings.TrimSuffix(labels[0], "-secondary")
	case n == 6 && labels[3] == "storage" && labels[4] == "azure" && labels[5] == "net" && isZone(labels[1]) && isAccount(labels[0]):
		h.svc, h.Account = 2, labels[0]
	case n == 5 && labels[2] == "fabric" && labels[3] == "microsoft" && labels[4] == "com" && isOneLake(labels[0]):
		h.svc = 1
	default:
		return Host{}, false
	}
	h.Service = labels[h.svc]
	if h.Service != "blob" && h.Service != "dfs" {
		return Host{}, false
	}
	return h, true
}

// Blob returns the Blob host of h.
func (h Host) Blob() string { return h.with("blob") }

// DFS returns the DFS (ADLS Gen2) host of h.
func (h Host) DFS() string { return h.with("dfs") }

func (h Host) with(service string) string {
	labels := append([]string(nil), h.labels...)
	labels[h.svc] = service
	return strings.Join(labels, ".")
}

func isCloud(s string) bool {
	return s == "windows.net" || s == "chinacloudapi.cn" || s == "usgovcloudapi.net"
}

// isAccount reports whether s is an account label: an account name, optionally followed by
// -secondary (a read-access secondary endpoint).
func isAccount(s string) bool { return IsAccountName(strings.TrimSuffix(s, "-secondary")) }

func isZone(s string) bool {
	return len(s) == 3 && s[0] == 'z' && s[1] >= '0' && s[1] <= '9' && s[2] >= '0' && s[2] <= '9'
}

func isOneLake(s string) bool {
	if s == "onelake" {
		return true
	}
	region, ok := strings.CutSuffix(s, "-onelake")
	return ok && region != "" && alnum(region)
}

func alnum(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// IsAccountName reports whether s can be a storage account name: one DNS label of lower-case
// letters and digits (Azure's names have 3 to 24). It is the only thing deltavacuum puts in
// front of .blob.core.windows.net itself.
func IsAccountName(s string) bool { return len(s) >= 1 && len(s) <= 63 && alnum(s) }
