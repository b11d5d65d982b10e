package azure_test

import (
	"context"
	"encoding/base64"
	"testing"

	"github.com/deltavacuum/deltavacuum/storage/azure"
	"github.com/deltavacuum/deltavacuum/storage/storagetest"
)

// TestWrongKeyDoesNotTurnBatchesOffForTheEndpoint: one store with a wrong account key (403
// AuthenticationFailed on its batch) turns batches off for that store only: a
// correctly configured store of the same account, opened later in the process, deletes
// batches.
func TestWrongKeyDoesNotTurnBatchesOffForTheEndpoint(t *testing.T) {
	ctx := context.Background()
	good := storagetest.AzureConfig(t)
	good.BatchSize = 256
	bad := good
	bad.AccountKey = base64.StdEncoding.EncodeToString([]byte("not the key of this account"))
	bs, err := azure.New(ctx, bad)
	if err != nil {
		t.Fatal(err)
	}
	res, err := bs.Delete(ctx, []string{"a.parquet", "b.parquet"})
	t.Logf("bad-key delete: %v; first result %+v", err, res[0])
	if !bs.BatchDisabled() {
		t.Fatal("the store with the wrong key still batches: it would send a refused batch per call")
	}
	gs := storagetest.NewAzureConfig(t, good)
	if gs.BatchDisabled() {
		t.Errorf("a store with the right key starts with batches off, because another store's key was wrong")
	}
}
