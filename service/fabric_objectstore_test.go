package service

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/storage/storagetest"
)

// TestFabricOnObjectStores: on the S3 and Azure test servers, a lakehouse of each layout under
// a discover root is found as Fabric shows it, and a job of the job API, polled to its end as
// a pipeline polls it, vacuums the table it names there.
func TestFabricOnObjectStores(t *testing.T) {
	const second = "5b218778-e7a5-4d73-8187-f10824047715"
	for name, mk := range remotes(t) {
		t.Run(name, func(t *testing.T) {
			if os.Getenv(map[string]string{"s3": storagetest.EnvS3Endpoint, "azure": storagetest.EnvAzureEndpoint}[name]) == "" && os.Getenv("CI") != "true" {
				t.Skip(name + " test server not configured (source .cache/testservers.env)")
			}
			r := mk(t)
			for _, p := range []string{"flat.Lakehouse/Tables/orders/", "flat.Lakehouse/Tables/DimCustomer/", "flat.Lakehouse/Files/raw/",
				"lh.Lakehouse/Tables/dbo/orders/", "lh.Lakehouse/Tables/sales/Returns/"} {
				writeRemoteTable(t, r, p)
			}
			f := newFixture(t, `storageOptions: `+r.options+`
discover:
  - {id: flat, root: "`+r.uri+`/flat.Lakehouse", refresh: 1h, policy: {retention: 0, retentionCheck: disabled}}
  - {id: lh, root: "`+r.uri+`/lh.Lakehouse", refresh: 1h, policy: {retention: 0, retentionCheck: disabled}}
fabric:
  lakehouses:
    - {workspaceId: `+docWorkspace+`, lakehouseId: `+docLakehouse+`, root: "`+r.uri+`/flat.Lakehouse"}
    - {workspaceId: `+docWorkspace+`, lakehouseId: `+second+`, root: "`+r.uri+`/lh.Lakehouse"}
tables:
  - {id: a, path: TABLES/a}
`, r.env, nil)
			// Files on object stores are as old as the server says: the run's clock is now.
			f.clock.set(time.Now().Add(2 * time.Second))
			ctx := context.Background()
			for _, root := range []string{"flat", "lh"} {
				if err := f.srv.Discover(ctx, root, f.clock.now()); err != nil {
					t.Fatal(err)
				}
			}
			_, list := f.do(t, "GET", "/api/tables", "")
			var got []string
			for _, x := range list["tables"].([]any) {
				m := x.(map[string]any)
				n, _ := m["name"].(string)
				got = append(got, m["id"].(string)+" "+n)
			}
			want := []string{"a ", "flat._44im_43ustomer DimCustomer", "flat.orders orders", "lh.dbo.orders dbo.orders", "lh.sales._52eturns sales.Returns"}
			if !slices.Equal(got, want) {
				t.Errorf("tables %q, want %q", got, want)
			}
			for _, c := range []struct{ lakehouse, body, table string }{
				{docLakehouse, `{"executionData": {"tableName": "DIMCUSTOMER", "vacuumSettings": {}}}`, "flat.Lakehouse/Tables/DimCustomer/"},
				{second, `{"executionData": {"tableName": "returns", "schemaName": "sales", "vacuumSettings": {"retentionPeriod": "0:00:00:00"}}}`, "lh.Lakehouse/Tables/sales/Returns/"},
				{second, `{"executionData": {"tableName": "orders", "vacuumSettings": {"retentionPeriod": "00:00:00"}}}`, "lh.Lakehouse/Tables/dbo/orders/"},
			} {
				resp, b := f.fabricDo(t, "POST", "/v1/workspaces/"+docWorkspace+"/lakehouses/"+c.lakehouse+"/jobs/instances?jobType=TableMaintenance", c.body)
				if resp.StatusCode != 202 {
					t.Fatalf("%s: %d %s", c.body, resp.StatusCode, b)
				}
				loc := resp.Header.Get("Location")
				var job FabricJobInstance
				for deadline := time.Now().Add(2 * time.Minute); ; {
					_, b := f.fabricDo(t, "GET", loc, "")
					if err := json.Unmarshal(b, &job); err != nil {
						t.Fatal(err)
					}
					if job.Status != fabricNotStarted && job.Status != fabricInProgress || time.Now().After(deadline) {
						break
					}
					time.Sleep(20 * time.Millisecond) // polling, as a pipeline does; no assertion on time
				}
				if job.Status != fabricCompleted || job.ItemID != c.lakehouse {
					t.Errorf("%s: the job ended %+v", c.body, job)
				}
				if !gone(t, r.store, c.table+"stray.parquet") || !gone(t, r.store, c.table+"old.parquet") || gone(t, r.store, c.table+"live.parquet") {
					t.Errorf("%s: stray and old must be gone from %s, live kept", c.body, c.table)
				}
			}
			for _, p := range []string{"flat.Lakehouse/Tables/orders/", "flat.Lakehouse/Files/raw/"} {
				if gone(t, r.store, p+"stray.parquet") {
					t.Errorf("%s was vacuumed: no job named it", strings.TrimSuffix(p, "/"))
				}
			}
			f.srv.Wait()
		})
	}
}
