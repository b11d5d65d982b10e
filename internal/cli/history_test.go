package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"

	"github.com/deltavacuum/deltavacuum/storage/location"
	"github.com/deltavacuum/deltavacuum/storage/storagetest"
)

// history https://…?SAS reads the history with the SAS of its argument: the table it opened,
// not its location (which is printed, and so carries no SAS) opened again.
func TestHistoryKeepsTheSAS(t *testing.T) {
	cfg := storagetest.AzureConfig(t) // skips without the Azure test server
	st := storagetest.NewAzureConfig(t, cfg)
	ctx := context.Background()
	commit := `{"commitInfo":{"timestamp":1700000000000,"operation":"CREATE TABLE","operationParameters":{}}}` + "\n" +
		`{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}` + "\n" +
		`{"metaData":{"id":"sas","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[]}","partitionColumns":[],"configuration":{},"createdTime":0}}` + "\n"
	if err := st.Put(ctx, "_delta_log/00000000000000000000.json", []byte(commit)); err != nil {
		t.Fatal(err)
	}
	cred, err := blob.NewSharedKeyCredential(cfg.Account, cfg.AccountKey)
	if err != nil {
		t.Fatal(err)
	}
	q, err := sas.BlobSignatureValues{
		Protocol:      sas.ProtocolHTTPSandHTTP,
		ExpiryTime:    time.Now().Add(time.Hour).UTC(),
		Permissions:   (&sas.ContainerPermissions{Read: true, List: true}).String(),
		ContainerName: cfg.Container,
	}.SignWithSharedKey(cred)
	if err != nil {
		t.Fatal(err)
	}
	// No other credential may do the SAS's work: no key in the environment, and a token that
	// the server refuses in case the SAS is dropped (rather than the default chain).
	for _, k := range location.Keys {
		if strings.HasPrefix(k.Name, "azure_") {
			for _, e := range k.Env {
				t.Setenv(e, "")
			}
		}
	}
	uri := "https://" + cfg.Account + ".blob.core.windows.net/" + cfg.Container + "/" + cfg.Prefix + "?" + q.Encode()
	code, out, errs := run(t, "history", uri, "--json", "--storage-option", "azure_endpoint="+cfg.ServiceURL,
		"--storage-option", "azure_allow_http=true", "--storage-option", "azure_storage_token=not-a-token", "--storage-option", "max_retries=0")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc struct {
		Table   string `json:"table"`
		History []struct {
			Version   int64  `json:"version"`
			Operation string `json:"operation"`
		} `json:"history"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(doc.History) != 1 || doc.History[0].Version != 0 || doc.History[0].Operation != "CREATE TABLE" {
		t.Errorf("history %+v", doc.History)
	}
	if strings.Contains(out, q.Signature()) || strings.Contains(doc.Table, "sig=") {
		t.Errorf("the SAS is printed:\n%s", out)
	}
}
