package service

import (
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
)

// TestStrictBodies sends every endpoint that takes a body (every POST of the API and of the
// web page, found in apiRoutes, so that a new one is covered) the bodies encoding/json would
// have taken or misread: each must be a 400 whose message names the key, and nothing may run.
func TestStrictBodies(t *testing.T) {
	f := newFixture(t, "tables:\n  - {id: a, path: TABLES/a}\nfabric:\n  lakehouses: [{workspaceId: "+docWorkspace+", lakehouseId: "+docLakehouse+", root: TABLES/lh}]\n", nil, nil)
	// A key each endpoint knows ("" for the endpoints that take {} only).
	keys := map[string]string{
		"/api/tables/{id}/runs": "plan",
		"/api/runs/{id}/undo":   "dryRun",
		"/api/login":            "token",
	}
	values := map[string]string{"plan": `""`, "dryRun": `true`, "token": `"x"`, "executionData": `{}`}
	for _, r := range fabricRoutes {
		if r.method == http.MethodPost && !strings.HasSuffix(r.pattern, "/cancel") {
			keys[r.pattern] = "executionData"
		}
	}
	// Fabric's routes: the lakehouse of the configuration, and the query its POST needs.
	fabricIDs := strings.NewReplacer("{workspaceId}", docWorkspace, "{lakehouseId}", docLakehouse, "{itemId}", docLakehouse, "{jobInstanceId}", "20260101T000000Z-00000000", "{jobType}", "tableMaintenance")
	posts := 0
	for _, r := range apiRoutes() {
		if r.method != http.MethodPost {
			continue
		}
		posts++
		// The table exists; the run does not, and its body is read before it is looked up.
		path := fabricIDs.Replace(strings.ReplaceAll(r.pattern, "{id}", "a"))
		if strings.HasSuffix(path, "/jobs/instances") {
			path += "?jobType=TableMaintenance"
		}
		key, val := keys[r.pattern], values[keys[r.pattern]]
		if key == "" {
			key, val = "x", "1"
		}
		upper := strings.ToUpper(key[:1]) + key[1:]
		for _, tc := range []struct {
			name, body, want string
		}{
			{"duplicate key", `{"` + key + `":` + val + `,"` + key + `":` + val + `}`, `key "` + key + `" appears twice`},
			{"duplicate key, the second different", `{"` + key + `":` + val + `,"` + key + `":null}`, `key "` + key + `" appears twice`},
			{"duplicate key in a nested object", `{"` + key + `":{"k":1,"k":2}}`, `key "k" in /` + key + ` appears twice`},
			{"key in another case", `{"` + upper + `":` + val + `}`, `unknown key "` + upper + `"`},
			{"invalid UTF-8", "{\"" + key + "\":\"\xff\"}", "invalid UTF-8"},
			{"invalid UTF-8 in a key", "{\"\xfe" + key + "\":" + val + "}", "invalid UTF-8"},
			{"trailing garbage", `{"` + key + `":` + val + `} garbage`, "data after the JSON value"},
			{"a second value", `{"` + key + `":` + val + `}{}`, "data after the JSON value"},
			{"not an object", `null`, "send an object"},
		} {
			t.Run(r.pattern+"/"+tc.name, func(t *testing.T) {
				code, body := f.do(t, http.MethodPost, path, tc.body)
				msg, _ := body["error"].(string)
				if fabricPath(&http.Request{URL: &url.URL{Path: path}}) {
					msg, _ = body["message"].(string) // Fabric's shape
				}
				if code != http.StatusBadRequest || !strings.Contains(msg, tc.want) {
					t.Errorf("POST %s %q: got %d %q, want 400 saying %q", path, tc.body, code, msg, tc.want)
				}
			})
		}
	}
	if posts < 6 {
		t.Fatalf("found %d POST routes; the test lists them from apiRoutes", posts)
	}
	f.srv.Wait()
	if runs, err := f.db.Runs(t.Context(), "a", 10); err != nil || len(runs) != 0 {
		t.Errorf("a refused body started runs: %v, %v", runs, err)
	}
	if !exists(t, filepath.Join(f.dir, "a", "old.parquet")) {
		t.Error("a refused body deleted a file")
	}
}
