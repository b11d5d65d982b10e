package inventory

// Which account an inventory report is of: an Azure report names its account only in its
// manifest's endpoint, and the report of another account is not this table's listing.

import (
	"context"
	"path/filepath"
	"testing"
)

// TestAzureReportOfAnotherAccount: an Azure blob inventory row names its blob as
// "CONTAINER/PATH", without the account; the reader puts every row in the table root's
// account (newAzure: the table root's scheme and host around the row's Name). The manifest
// says which account the report is of ("endpoint"), and is not read. The report of another
// account (a staging account, a replica's, one with the same container and table layout) is
// therefore taken for this table's listing: its rows all "lie in the table", so the guard that
// refuses an inventory none of whose rows lies in the table (almost certainly the wrong report)
// never fires, and the plan is made from another account's files and modification times: its
// counts and sizes are another store's, and this account's unreferenced files are not seen.
// An S3 report names the bucket in every row and is compared with the table's; an Azure
// report's manifest endpoint should be, in the same way.
// Found by the second review.
func TestAzureReportOfAnotherAccount(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "inventory-container", "2026", "11", "30", "00-00-00", "Rule_1")
	writeFile(t, filepath.Join(dir, "Rule_1_1.csv"), []byte("Name,Last-Modified,Content-Length,hdi_isfolder\n"+
		"c/t/part-0.parquet,\"Wed, 26 May 2021 13:25:36 GMT\",100,false\n"))
	writeFile(t, filepath.Join(dir, "Rule_1-manifest.json"), []byte(`{
  "destinationContainer": "inventory-container",
  "endpoint": "https://otheraccount.blob.core.windows.net",
  "files": [{"blob": "2026/11/30/00-00-00/Rule_1/Rule_1_1.csv", "size": 1}],
  "ruleDefinition": {"format": "csv", "objectType": "blob", "schemaFields": ["Name", "Last-Modified", "Content-Length", "hdi_isfolder"]},
  "ruleName": "Rule_1", "status": "Succeeded", "version": "1.0"
}`))
	l, err := Open(context.Background(), Source{Location: filepath.Join(dir, "Rule_1-manifest.json")}, azureRoot, Options{})
	if err != nil {
		t.Logf("refused: %v", err)
		return
	}
	if n := l.Len(); n > 0 {
		t.Errorf("the report of https://otheraccount.blob.core.windows.net gave %d entries for the table %s (account acct): %v",
			n, azureRoot, walk(t, l, ""))
	}
}

// The manifest's endpoint decides which account the report is of: the table's own account on
// its Blob host is accepted, a sovereign twin of it too, and an endpoint that is not a URL or
// names another account, cloud or a look-alike host is refused.
func TestAzureManifestEndpoint(t *testing.T) {
	for endpoint, ok := range map[string]bool{
		"https://acct.blob.core.windows.net":         true,
		"https://ACCT.blob.core.windows.net/":        true,
		"https://acct.dfs.core.windows.net":          true,
		"":                                           true, // older reports: taken as the root's
		"https://acct.blob.core.usgovcloudapi.net":   false,
		"https://acct.blob.core.windows.net.evil.io": false,
		"https://acct2.blob.core.windows.net":        false,
		"acct.blob.core.windows.net":                 false, // not a URL
		"https://":                                   false,
	} {
		dir := filepath.Join(t.TempDir(), "inventory-container", "2026", "11", "30", "00-00-00", "Rule_1")
		writeFile(t, filepath.Join(dir, "Rule_1_1.csv"), []byte("Name,Last-Modified,Content-Length,hdi_isfolder\n"+
			"c/t/part-0.parquet,\"Wed, 26 May 2021 13:25:36 GMT\",100,false\n"))
		writeFile(t, filepath.Join(dir, "Rule_1-manifest.json"), []byte(`{
  "destinationContainer": "inventory-container",
  "endpoint": "`+endpoint+`",
  "files": [{"blob": "2026/11/30/00-00-00/Rule_1/Rule_1_1.csv", "size": 1}],
  "ruleDefinition": {"format": "csv", "objectType": "blob", "schemaFields": ["Name", "Last-Modified", "Content-Length", "hdi_isfolder"]},
  "ruleName": "Rule_1", "status": "Succeeded", "version": "1.0"
}`))
		_, err := Open(context.Background(), Source{Location: filepath.Join(dir, "Rule_1-manifest.json")}, azureRoot, Options{})
		if (err == nil) != ok {
			t.Errorf("endpoint %q: error %v, want accepted %v", endpoint, err, ok)
		}
	}
}
