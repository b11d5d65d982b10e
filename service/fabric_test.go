package service

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/deltavacuum/deltavacuum"
	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/run"
	"github.com/deltavacuum/deltavacuum/service/config"
	"github.com/deltavacuum/deltavacuum/service/runner"
	"github.com/deltavacuum/deltavacuum/service/tables"
	"github.com/deltavacuum/deltavacuum/storage/local"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// The ids of Fabric's documentation examples (testdata/fabric).
const (
	docWorkspace = "4b218778-e7a5-4d73-8187-f10824047715"
	docLakehouse = "431e8d7b-4a95-4c02-8ccd-6faef5ba1bd7"
	docJob       = "f2d65699-dd22-4889-980c-15226deb0e1b"
)

// docExample is one example of Fabric's specification (testdata/fabric/README.md): its
// parameters, the request body as its bytes, and the documented response.
type docExample struct {
	Parameters struct {
		WorkspaceID string          `json:"workspaceId"`
		LakehouseID string          `json:"lakehouseId"`
		ItemID      string          `json:"itemId"`
		Body        json.RawMessage `json:"runOnDemandTableMaintenanceRequest"`
	} `json:"parameters"`
	Responses map[string]struct {
		Headers map[string]any  `json:"headers"`
		Body    json.RawMessage `json:"body"`
	} `json:"responses"`
}

func readExample(t *testing.T, name string) docExample {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "fabric", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var ex docExample
	if err := json.Unmarshal(b, &ex); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return ex
}

// withoutOptimize is a documented request body without its optimizeSettings: the same
// request to a service that runs VACUUM only.
func withoutOptimize(t *testing.T, body json.RawMessage) string {
	t.Helper()
	var m map[string]map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	delete(m["executionData"], "optimizeSettings")
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The two layouts of a lakehouse, each under the ids of Fabric's examples: table1 is
// Tables/table1 without schemas and Tables/dbo/table1 with them (the examples' tables).
const (
	layoutFlat    = "flat"
	layoutSchemas = "schemas"
)

// fabricFixture serves a lakehouse of the layout, found by a discover root and mapped to the
// examples' ids, with table1 and orders in it, beside the table a of the usual fixture. extra
// is more configuration (a token, maxConcurrentRuns).
func fabricFixture(t *testing.T, layout, extra string, env map[string]string) *fixture {
	t.Helper()
	f := newFixture(t, extra+`discover:
  - {id: lh, root: TABLES/lh.Lakehouse, refresh: 1h}
fabric:
  lakehouses:
    - {workspaceId: `+docWorkspace+`, lakehouseId: `+docLakehouse+`, root: TABLES/lh.Lakehouse}
tables:
  - {id: a, path: TABLES/a}
`, env, nil)
	for _, tb := range []string{"table1", "orders"} {
		rel := filepath.Join("Tables", tb)
		if layout == layoutSchemas {
			rel = filepath.Join("Tables", "dbo", tb)
		}
		makeTable(t, filepath.Join(f.dir, "lh.Lakehouse", rel), t0, nil)
	}
	return f
}

// tableDir is the folder of table in the fixture's lakehouse.
func (f *fixture) tableDir(layout, table string) string {
	if layout == layoutSchemas {
		return filepath.Join(f.dir, "lh.Lakehouse", "Tables", "dbo", table)
	}
	return filepath.Join(f.dir, "lh.Lakehouse", "Tables", table)
}

// fabricDo sends a request of the job API and returns the response with its body read.
func (f *fixture) fabricDo(t *testing.T, method, path, body string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	return f.send(t, method, path, body, hdr...)
}

const jobsPath = "/v1/workspaces/" + docWorkspace + "/lakehouses/" + docLakehouse + "/jobs/instances?jobType=TableMaintenance"

// fabricErr decodes Fabric's ErrorResponse, failing unless it is one with a request id.
func fabricErr(t *testing.T, b []byte) FabricError {
	t.Helper()
	var e FabricError
	if err := json.Unmarshal(b, &e); err != nil || e.ErrorCode == "" || e.Message == "" || !guidRE.MatchString(e.RequestID) {
		t.Fatalf("not Fabric's ErrorResponse: %s (%v)", b, err)
	}
	return e
}

var guidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// shapeOf turns a documented value into the pattern of its shape: each digit stands for any
// digit (2023-04-22T06:35:00.7812154 is the form of every time).
func shapeOf(v string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	for _, r := range v {
		if r >= '0' && r <= '9' {
			b.WriteString(`\d`)
		} else {
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

// keysInOrder returns the keys of the JSON object b in their order.
func keysInOrder(t *testing.T, b []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %s", b)
	}
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// checkAccepted checks a 202 against the documented one of example: no body, Retry-After a
// whole number of seconds, and a Location of the documented form: the service's base URL for
// Fabric's, the path's words as documented, the examples' workspace and lakehouse, and the
// run's id for the job's. It returns the Location.
func checkAccepted(t *testing.T, f *fixture, resp *http.Response, body []byte, example docExample) string {
	t.Helper()
	want := example.Responses["202"].Headers
	if resp.StatusCode != http.StatusAccepted || len(body) != 0 {
		t.Fatalf("got %d %s, want 202 without a body", resp.StatusCode, body)
	}
	if _, ok := want["Retry-After"].(float64); !ok {
		t.Fatalf("the example's Retry-After %v is not a number", want["Retry-After"])
	}
	if n, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || n <= 0 {
		t.Errorf("Retry-After %q, want a number of seconds, as the example's %v", resp.Header.Get("Retry-After"), want["Retry-After"])
	}
	loc := resp.Header.Get("Location")
	docPath, ok := strings.CutPrefix(want["Location"].(string), "https://api.fabric.microsoft.com/")
	path, ok2 := strings.CutPrefix(loc, f.http.URL+"/")
	got, doc := strings.Split(path, "/"), strings.Split(docPath, "/")
	if !ok || !ok2 || len(got) != len(doc) {
		t.Fatalf("Location %s, want the form of the example's %s", loc, want["Location"])
	}
	for i, d := range doc {
		switch {
		case i == len(doc)-1:
			if got[i] == "" {
				t.Errorf("Location %s has no job id", loc)
			}
		case i == 2 && got[i] != docWorkspace, i == 4 && got[i] != docLakehouse:
			t.Errorf("Location %s does not name the job's workspace and lakehouse", loc)
		case i != 2 && i != 4 && got[i] != d:
			t.Errorf("Location %s, want the form of the example's %s", loc, want["Location"])
		}
	}
	return loc
}

// TestFabricDocExamples: the requests of Fabric's documentation, byte for byte. Each of them
// asks for OPTIMIZE (or a purge of deletion vectors), which this service refuses in Fabric's
// shape, running nothing; the same requests without optimizeSettings are accepted as Fabric
// accepts them (202, Location, Retry-After), and the job instance they make has the
// documented fields, in their order, with values of their form.
func TestFabricDocExamples(t *testing.T) {
	get := readExample(t, "GetItemJobInstance")
	docBody := get.Responses["200"].Body
	var docJobInst map[string]any
	if err := json.Unmarshal(docBody, &docJobInst); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		example, layout, refusal string
	}{
		{"RunOnDemandTableMaintenance1", layoutFlat, "never rewrites data"},
		{"RunOnDemandTableMaintenance2", layoutFlat, "never rewrites data"},
		{"RunOnDemandTableMaintenance3", layoutFlat, "purging deletion vectors rewrites data files"},
		{"RunOnDemandTableMaintenanceForSchemaEnabledLakehouse", layoutSchemas, "never rewrites data"},
	} {
		t.Run(c.example, func(t *testing.T) {
			ex := readExample(t, c.example)
			if ex.Parameters.WorkspaceID != docWorkspace || ex.Parameters.LakehouseID != docLakehouse {
				t.Fatalf("the example's ids changed: %+v", ex.Parameters)
			}
			f := fabricFixture(t, c.layout, "", nil)
			path := "/v1/workspaces/" + ex.Parameters.WorkspaceID + "/lakehouses/" + ex.Parameters.LakehouseID + "/jobs/instances?jobType=TableMaintenance"
			resp, b := f.fabricDo(t, "POST", path, string(ex.Parameters.Body))
			e := fabricErr(t, b)
			if resp.StatusCode != 400 || e.ErrorCode != "OperationNotSupportedForItem" || !strings.Contains(e.Message, c.refusal) {
				t.Errorf("the documented request: %d %+v, want 400 OperationNotSupportedForItem saying %q", resp.StatusCode, e, c.refusal)
			}
			if runs, _ := f.db.Runs(t.Context(), "", 10); len(runs) != 0 {
				t.Fatalf("a refused job started runs: %v", runs)
			}
			if !strings.Contains(string(ex.Parameters.Body), "vacuumSettings") {
				return // the documented job does no VACUUM: nothing of it to run here
			}
			// The same request without OPTIMIZE: the job's VACUUM, at its retentionPeriod.
			resp, b = f.fabricDo(t, "POST", path, withoutOptimize(t, ex.Parameters.Body))
			loc := checkAccepted(t, f, resp, b, ex)
			f.srv.Wait()
			resp, b = f.fabricDo(t, "GET", loc, "")
			if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
				t.Fatalf("GET %s: %d %s", loc, resp.StatusCode, b)
			}
			if got, want := strings.Join(keysInOrder(t, b), ","), strings.Join(keysInOrder(t, docBody), ","); got != want {
				t.Errorf("the job instance's fields\n got %s\nwant %s (the documented ones, in their order)", got, want)
			}
			var job map[string]any
			if err := json.Unmarshal(b, &job); err != nil {
				t.Fatal(err)
			}
			id := loc[strings.LastIndexByte(loc, '/')+1:]
			for k, want := range docJobInst {
				got := job[k]
				switch k {
				case "id", "rootActivityId":
					// format: uuid, as the specification declares it (typed clients parse it).
					if u, err := uuid.Parse(id); got != id || err != nil || u.String() != id {
						t.Errorf("%s %v, want the run's id %s, a GUID (%v)", k, got, id, err)
					}
				case "itemId", "invokeType", "status", "failureReason":
					if got != want {
						t.Errorf("%s %v, want %v as documented", k, got, want)
					}
				case "jobType":
					if got != FabricJobType {
						t.Errorf("jobType %v, want %s", got, FabricJobType)
					}
				case "startTimeUtc", "endTimeUtc":
					if s, ok := got.(string); !ok || !shapeOf(want.(string)).MatchString(s) {
						t.Errorf("%s %v, want the form of %v", k, got, want)
					}
				default:
					t.Errorf("a documented field %s the test does not know", k)
				}
			}
			// 7:01:00:00 is 169 hours: the table's files are 240 hours old, and gone.
			_, run := f.do(t, "GET", "/api/runs/"+id, "")
			figs := run["figures"].(map[string]any)
			if figs["retentionHours"].(float64) != 169 || figs["oneOffRetention"] != true || figs["oneOffFrom"] != runner.OneOffFabric || figs["numDeletedFiles"].(float64) != 2 || run["trigger"] != "api" {
				t.Errorf("the run of the job: %v", run)
			}
			if exists(t, filepath.Join(f.tableDir(c.layout, "table1"), "stray.parquet")) || !exists(t, filepath.Join(f.tableDir(c.layout, "orders"), "stray.parquet")) {
				t.Error("the job vacuumed another table than table1, or none")
			}
		})
	}
}

// gateTable makes the server open the table whose folder is dir through a store that holds
// every Delete until released; the other tables open as they do.
func gateTable(t *testing.T, f *fixture, dir string) *gatedStore {
	t.Helper()
	st, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	g := &gatedStore{Store: st, entered: make(chan struct{}), release: make(chan struct{})}
	f.srv.tables.SetOpenHook(func(ctx context.Context, tb *tables.Table) (*deltavacuum.Table, error) {
		if filepath.Clean(tb.Cfg.Path) == filepath.Clean(dir) {
			return deltavacuum.OpenStore(g), nil
		}
		return tb.Open(ctx)
	})
	return g
}

// pipeline is a client that runs a job as a pipeline's activity or a script does against
// Fabric: POST, then GET the Location after each Retry-After until the job ends. It records
// the statuses it saw, and the waits it was told (it waits a millisecond for each second: the
// test measures no time).
type pipeline struct {
	t        *testing.T
	f        *fixture
	statuses []string
	waits    []int
	onPoll   func(status string)
}

func (p *pipeline) run(body string) map[string]any {
	p.t.Helper()
	resp, b := p.f.fabricDo(p.t, "POST", jobsPath, body)
	if resp.StatusCode != http.StatusAccepted {
		p.t.Fatalf("POST: %d %s", resp.StatusCode, b)
	}
	loc := resp.Header.Get("Location")
	u, err := url.Parse(loc)
	if err != nil || !u.IsAbs() {
		p.t.Fatalf("Location %q is not an absolute URL", loc)
	}
	wait := resp.Header.Get("Retry-After")
	for deadline := time.Now().Add(time.Minute); ; {
		n, err := strconv.Atoi(wait)
		if err != nil || n <= 0 {
			p.t.Fatalf("Retry-After %q is not a number of seconds", wait)
		}
		p.waits = append(p.waits, n)
		time.Sleep(time.Duration(n) * time.Millisecond)
		resp, b := p.f.fabricDo(p.t, "GET", loc, "")
		var job map[string]any
		if resp.StatusCode != 200 || json.Unmarshal(b, &job) != nil {
			p.t.Fatalf("GET %s: %d %s", loc, resp.StatusCode, b)
		}
		st := job["status"].(string)
		if len(p.statuses) == 0 || p.statuses[len(p.statuses)-1] != st {
			p.statuses = append(p.statuses, st)
		}
		if p.onPoll != nil {
			p.onPoll(st)
		}
		switch st {
		case fabricCompleted, fabricFailed, fabricCancelled, fabricDeduped:
			if resp.Header.Get("Retry-After") != "" {
				p.t.Errorf("a job that ended (%s) says Retry-After", st)
			}
			return job
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("the job did not end: %v", job)
		}
		wait = resp.Header.Get("Retry-After")
	}
}

// TestFabricPipelinePolls: a pipeline-like client runs a job of each layout to its end,
// following Location and Retry-After; it sees the job in progress (its deletes held), then
// Completed, the table's files gone.
func TestFabricPipelinePolls(t *testing.T) {
	for _, layout := range []string{layoutFlat, layoutSchemas} {
		t.Run(layout, func(t *testing.T) {
			f := fabricFixture(t, layout, "", nil)
			g := gateTable(t, f, f.tableDir(layout, "orders"))
			var once sync.Once
			p := &pipeline{t: t, f: f, onPoll: func(st string) {
				if st == fabricInProgress {
					once.Do(func() { close(g.release) })
				}
			}}
			body := `{"executionData": {"tableName": "orders", "vacuumSettings": {}}}`
			if layout == layoutSchemas {
				body = `{"executionData": {"tableName": "orders", "schemaName": "dbo", "vacuumSettings": {}}}`
			}
			job := p.run(body)
			if job["status"] != fabricCompleted || job["failureReason"] != nil || job["endTimeUtc"] == nil {
				t.Errorf("the job ended %v", job)
			}
			if last := p.statuses[len(p.statuses)-2]; last != fabricInProgress {
				t.Errorf("statuses %v: the client never saw the job in progress", p.statuses)
			}
			for i, st := range p.statuses {
				if st != fabricNotStarted && st != fabricInProgress && i < len(p.statuses)-1 {
					t.Errorf("statuses %v", p.statuses)
				}
			}
			for _, n := range p.waits {
				if n != fabricPollAfter {
					t.Errorf("told to wait %v", p.waits)
				}
			}
			f.srv.Wait()
			if exists(t, filepath.Join(f.tableDir(layout, "orders"), "stray.parquet")) || !exists(t, filepath.Join(f.tableDir(layout, "orders"), "live.parquet")) {
				t.Error("the job did not vacuum orders, or deleted a live file")
			}
		})
	}
}

// TestFabricDeduped: a job of a table being maintained is Deduped, whether this service holds
// the table (a job of it in progress) or another process holds its lock; nothing more runs.
// The job in progress is cancelled through Cancel Item Job Instance, answered as documented,
// and ends Cancelled.
func TestFabricDeduped(t *testing.T) {
	f := fabricFixture(t, layoutFlat, "", nil)
	dir := f.tableDir(layoutFlat, "table1")
	manyStray(t, dir, n)
	g := gateTable(t, f, dir)
	body := `{"executionData": {"tableName": "table1", "vacuumSettings": {"retentionPeriod": "7:00:00:00"}}}`
	resp, b := f.fabricDo(t, "POST", jobsPath, body)
	if resp.StatusCode != 202 {
		t.Fatalf("first job: %d %s", resp.StatusCode, b)
	}
	first := resp.Header.Get("Location")
	<-g.entered // the run deletes: it holds the table
	resp, b = f.fabricDo(t, "POST", jobsPath, body)
	if resp.StatusCode != 202 {
		t.Fatalf("second job: %d %s", resp.StatusCode, b)
	}
	second := resp.Header.Get("Location")
	if second == first {
		t.Fatal("the deduplicated job has the first one's id")
	}
	resp, b = f.fabricDo(t, "GET", second, "")
	var job FabricJobInstance
	if err := json.Unmarshal(b, &job); err != nil || resp.StatusCode != 200 || job.Status != fabricDeduped || job.EndTimeUTC == nil ||
		job.FailureReason == nil || !strings.Contains(job.FailureReason.Message, "in progress") || job.ItemID != docLakehouse {
		t.Errorf("the second job: %d %s", resp.StatusCode, b)
	}
	if resp.Header.Get("Retry-After") != "" {
		t.Error("a Deduped job says Retry-After")
	}
	// A deduplicated job cannot be cancelled; the job in progress can, as documented.
	resp, b = f.fabricDo(t, "POST", second+"/cancel", "")
	if e := fabricErr(t, b); resp.StatusCode != 409 || e.ErrorCode != "JobAlreadyCompleted" {
		t.Errorf("cancel of the deduplicated job: %d %+v", resp.StatusCode, e)
	}
	cancelDoc := readExample(t, "CancelItemJobInstance")
	resp, b = f.fabricDo(t, "POST", first+"/cancel", "")
	if loc := checkAccepted(t, f, resp, b, cancelDoc); loc != first {
		t.Errorf("the cancel's Location %s, want the job's %s", loc, first)
	}
	close(g.release)
	f.srv.Wait()
	resp, b = f.fabricDo(t, "GET", first, "")
	if err := json.Unmarshal(b, &job); err != nil || job.Status != fabricCancelled || job.FailureReason == nil || job.FailureReason.ErrorCode != "RunCancelled" {
		t.Errorf("the cancelled job: %d %s", resp.StatusCode, b)
	}
	resp, b = f.fabricDo(t, "POST", first+"/cancel", "")
	if e := fabricErr(t, b); resp.StatusCode != 409 || e.ErrorCode != "JobAlreadyCompleted" {
		t.Errorf("cancel of the ended job: %d %+v", resp.StatusCode, e)
	}
	// Another process holds the table's lock.
	f.srv.tables.SetOpenHook(nil)
	st, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	lk, err := run.Acquire(t.Context(), st, run.LockOptions{Purpose: run.PurposeVacuum, Run: "20260101T000000Z-0a0b0c0d"})
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Release(t.Context())
	resp, b = f.fabricDo(t, "POST", jobsPath, body)
	if resp.StatusCode != 202 {
		t.Fatalf("job of a locked table: %d %s", resp.StatusCode, b)
	}
	_, b = f.fabricDo(t, "GET", resp.Header.Get("Location"), "")
	if err := json.Unmarshal(b, &job); err != nil || job.Status != fabricDeduped {
		t.Errorf("the job of a table another process holds: %s", b)
	}
	runs, err := f.db.Runs(t.Context(), "", 10)
	if err != nil || len(runs) != 1 {
		t.Errorf("runs %v %v, want the first job's alone", runs, err)
	}
}

// TestFabricNextJobAfterAnEnd: a pipeline that starts its next job as soon as it saw the last
// one end is never refused for the slot the ended run held (maxConcurrentRuns 1): the end is
// recorded and the table released at once. The hook widens the moment between the two.
func TestFabricNextJobAfterAnEnd(t *testing.T) {
	f := fabricFixture(t, layoutFlat, "maxConcurrentRuns: 1\n", nil)
	f.srv.runner.SetEndedHook(func(string) { time.Sleep(50 * time.Millisecond) })
	p := &pipeline{t: t, f: f}
	for i := range 6 {
		table := []string{"table1", "orders"}[i%2]
		if job := p.run(`{"executionData": {"tableName": "` + table + `", "vacuumSettings": {}}}`); job["status"] != fabricCompleted {
			t.Fatalf("job %d on %s ended %v", i, table, job)
		}
	}
	f.srv.Wait()
}

// TestFabricRetention: a job's retentionPeriod is a one-off retention, checked as a preview's
// is: never below a retention the table sets itself, below the table's default only where the
// policy turns the safety check off; each refusal is Fabric's error, and nothing runs.
func TestFabricRetention(t *testing.T) {
	f := newFixture(t, `fabric:
  lakehouses:
    - {workspaceId: `+docWorkspace+`, lakehouseId: `+docLakehouse+`, root: TABLES/lh}
tables:
  - {id: checked, path: TABLES/lh/Tables/checked}
  - {id: floor, path: TABLES/lh/Tables/floor, policy: {retentionCheck: disabled}}
  - {id: unchecked, path: TABLES/lh/Tables/unchecked, policy: {retentionCheck: disabled}}
  - {id: dry, path: TABLES/lh/Tables/dry, dryRunOnly: true}
`, nil, map[string]map[string]string{"floor": {deltalog.PropDeletedFileRetention: "interval 200 hours"}})
	job := func(table, period string) (*http.Response, []byte) {
		return f.fabricDo(t, "POST", jobsPath, `{"executionData": {"tableName": "`+table+`", "vacuumSettings": {"retentionPeriod": "`+period+`"}}}`)
	}
	for _, c := range []struct{ table, period, want string }{
		{"checked", "0:01:00:00", "refusing to vacuum with a retention of 1 hours"}, // the library's safety check
		{"checked", "6.23:00:00", "retentionCheck: disabled"},
		{"checked", "6:23:29:59", "refusing to vacuum with a retention of 167 hours"}, // rounded as the library rounds
		{"floor", "8:07:00:00", "below the table's own retention of 200 hours"},
		{"floor", "0:00:00:00", "below the table's own retention"},
	} {
		resp, b := job(c.table, c.period)
		e := fabricErr(t, b)
		if resp.StatusCode != 400 || e.ErrorCode != "InvalidRetentionPeriod" || !strings.Contains(e.Message, c.want) || !strings.Contains(e.Message, "retentionPeriod \""+c.period+"\"") {
			t.Errorf("%s at %s: %d %+v, want 400 InvalidRetentionPeriod saying %q", c.table, c.period, resp.StatusCode, e, c.want)
		}
	}
	// A table the configuration allows dry runs of only is never run.
	resp, b := job("dry", "7:00:00:00")
	if e := fabricErr(t, b); resp.StatusCode != 403 || e.ErrorCode != "OperationNotSupportedForItem" || !strings.Contains(e.Message, "dryRunOnly") {
		t.Errorf("a dryRunOnly table: %d %+v", resp.StatusCode, e)
	}
	if runs, _ := f.db.Runs(t.Context(), "", 10); len(runs) != 0 {
		t.Fatalf("a refused retention started runs: %v", runs)
	}
	for _, c := range []struct {
		table, period string
		hours         float64
	}{
		{"checked", "7:00:00:00", 168}, {"checked", "7.00:30:00", 169}, {"floor", "8:08:00:00", 200}, {"unchecked", "0:01:00:00", 1}, {"unchecked", "00:00:00", 0},
	} {
		resp, b := job(c.table, c.period)
		if resp.StatusCode != 202 {
			t.Errorf("%s at %s: %d %s", c.table, c.period, resp.StatusCode, b)
			continue
		}
		f.srv.Wait()
		loc := resp.Header.Get("Location")
		_, run := f.do(t, "GET", "/api/runs/"+loc[strings.LastIndexByte(loc, '/')+1:], "")
		if figs := run["figures"].(map[string]any); figs["retentionHours"].(float64) != c.hours {
			t.Errorf("%s at %s: the run's retention %v, want %v", c.table, c.period, figs["retentionHours"], c.hours)
		}
	}
}

func TestRetentionPeriodHours(t *testing.T) {
	for _, c := range []struct {
		in    string
		hours float64
		err   string
	}{
		{"7:00:00:00", 168, ""},
		{"7.00:00:00", 168, ""},
		{"7:01:00:00", 169, ""},
		{"0:01:00:00", 1, ""},
		{"00:00:00", 0, ""},
		{"23:59:59", 86399.0 / 3600, ""},
		{"7:0:0:0", 168, ""},
		{"0:00:30:00", 0.5, ""},
		{"36600:00:00:00", 878400, ""},
		{"36600:00:00:01", 0, "from 0 to 878400"},
		{"999999:00:00:00", 0, "from 0 to 878400"},
		{"9999999:00:00:00", 0, "1 to 6 digits"},
		{"99999999999999999999:00:00:00", 0, "1 to 6 digits"},
		{"-1:00:00:00", 0, "only the digits"},
		{"+7:00:00:00", 0, "only the digits"},
		{"7:-1:00:00", 0, "only the digits"},
		{"7:24:00:00", 0, "hours must be 0 to 23"},
		{"7:00:60:00", 0, "minutes and seconds 0 to 59"},
		{"7:00:00:60", 0, "minutes and seconds 0 to 59"},
		{"7:000:00:00", 0, "1 to 2 digits"},
		{"", 0, "not the form"},
		{"7", 0, "not the form"},
		{"7 days", 0, "not the form"},
		{"168:00", 0, "not the form"},
		{"7:00:00:00:00", 0, "not the form"},
		{"7::00:00", 0, "1 to 2 digits"},
		{" 7:00:00:00", 0, "only the digits"},
		{"7:00:00:00 ", 0, "not a retention period"},
		{"7:00:00:00\n", 0, "not a retention period"},
		{"٧:00:00:00", 0, "only the digits"},   // an Arabic-Indic seven
		{"７:00:00:00", 0, "only the digits"},   // a full-width seven
		{"7.5:00:00:00", 0, "only the digits"}, // a fraction of a day
		{"1.7.00:00:00", 0, "not a retention period"},
		{".00:00:00", 0, "1 to 6 digits"},
		{"7.:00:00", 0, "1 to 2 digits"},
		{"P7D", 0, "not the form"},
		{"1e3:00:00:00", 0, "only the digits"},
		{"0x7:00:00:00", 0, "only the digits"},
	} {
		h, err := retentionPeriodHours(c.in)
		switch {
		case c.err == "" && (err != nil || h != c.hours):
			t.Errorf("%q: %v %v, want %v hours", c.in, h, err, c.hours)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: %v %v, want an error saying %q", c.in, h, err, c.err)
		}
	}
}

// TestRetentionPeriodByTheLibrarysRule: a Fabric job's retentionPeriod longer than a hundred
// years is refused by the library's one rule (vacuum.RetentionOf), the one RETAIN n HOURS and
// the CLI's --retain-hours follow, not by a bound of the service's own.
func TestRetentionPeriodByTheLibrarysRule(t *testing.T) {
	days := vacuum.MaxRetentionHours / 24
	if h, err := retentionPeriodHours(fmt.Sprintf("%d:00:00:00", days)); err != nil || h != vacuum.MaxRetentionHours {
		t.Errorf("a hundred years: %v %v", h, err)
	}
	for _, s := range []string{fmt.Sprintf("%d:00:00:00", days+1), fmt.Sprintf("%d:00:00:01", days)} {
		if _, err := retentionPeriodHours(s); !errors.Is(err, vacuum.ErrRetentionTooLarge) {
			t.Errorf("%s: %v, want the library's %v", s, err, vacuum.ErrRetentionTooLarge)
		}
	}
}

// TestFabricHostile: every input of the job API, hostile: the ids, the query, the body. Each
// is refused in Fabric's shape with the code Fabric gives the case, and nothing runs.
func TestFabricHostile(t *testing.T) {
	f := fabricFixture(t, layoutSchemas, "", nil)
	ok := `{"executionData": {"tableName": "orders", "vacuumSettings": {}}}`
	lh := func(ws, id string) string {
		return "/v1/workspaces/" + ws + "/lakehouses/" + id + "/jobs/instances?jobType=TableMaintenance"
	}
	other := "5b218778-e7a5-4d73-8187-f10824047715"
	cases := []struct {
		name, path, body string
		status           int
		code, want       string
	}{
		// The ids.
		{"unknown lakehouse", lh(docWorkspace, other), ok, 404, "ItemNotFound", "no lakehouse " + other},
		{"unknown workspace", lh(other, docLakehouse), ok, 404, "ItemNotFound", "in workspace " + other},
		{"ids swapped", lh(docLakehouse, docWorkspace), ok, 404, "ItemNotFound", "no lakehouse"},
		{"nil GUIDs", lh("00000000-0000-0000-0000-000000000000", "00000000-0000-0000-0000-000000000000"), ok, 404, "ItemNotFound", "no lakehouse"},
		{"not a GUID", lh(docWorkspace, "lh"), ok, 404, "ItemNotFound", "are named by their GUIDs"},
		{"a GUID in braces", lh(docWorkspace, "%7B"+docLakehouse+"%7D"), ok, 404, "ItemNotFound", "are named by their GUIDs"},
		{"a GUID and more", lh(docWorkspace, docLakehouse+"00"), ok, 404, "ItemNotFound", "are named by their GUIDs"},
		{"SQL", lh(docWorkspace, "%27%20OR%20%271%27%3D%271"), ok, 404, "ItemNotFound", "are named by their GUIDs"},
		{"a NUL", lh(docWorkspace, docLakehouse+"%00"), ok, 404, "ItemNotFound", "are named by their GUIDs"},
		{"very long", lh(docWorkspace, strings.Repeat("a", 5000)), ok, 404, "ItemNotFound", "are named by their GUIDs"},
		{"the path's id in capitals is the same lakehouse", lh(strings.ToUpper(docWorkspace), strings.ToUpper(docLakehouse)), `{"executionData": {"tableName": "nothing", "vacuumSettings": {}}}`, 404, "ItemNotFound", "no table nothing in lakehouse " + docLakehouse},
		// The query.
		{"no jobType", strings.TrimSuffix(lh(docWorkspace, docLakehouse), "?jobType=TableMaintenance"), ok, 400, "InvalidJobType", "is missing"},
		{"jobType in another alphabet", strings.Replace(lh(docWorkspace, docLakehouse), "TableMaintenance", "TableMaintenan%D1%81e", 1), ok, 400, "InvalidJobType", `is not one`},
		{"jobType with a NUL", strings.Replace(lh(docWorkspace, docLakehouse), "TableMaintenance", "TableMaintenance%00", 1), ok, 400, "InvalidJobType", `is not one`},
		{"the path's job type another", "/v1/workspaces/" + docWorkspace + "/lakehouses/" + docLakehouse + "/jobs/DefaultJob/instances", ok, 400, "InvalidJobType", `"DefaultJob" of the path is not one`},
		{"the path's job type in another alphabet", "/v1/workspaces/" + docWorkspace + "/items/" + docLakehouse + "/jobs/TableMaintenan%D1%81e/instances", ok, 400, "InvalidJobType", "of the path is not one"},
		{"the path's job type with a blank", "/v1/workspaces/" + docWorkspace + "/items/" + docLakehouse + "/jobs/Table%20Maintenance/instances", ok, 400, "InvalidJobType", "of the path is not one"},
		{"the path's job type instances", "/v1/workspaces/" + docWorkspace + "/items/" + docLakehouse + "/jobs/instances/instances", ok, 400, "InvalidJobType", `"instances" of the path`},
		{"the path's job type and a query in another case", "/v1/workspaces/" + docWorkspace + "/items/" + docLakehouse + "/jobs/TableMaintenance/instances?jobtype=TableMaintenance", ok, 400, "InvalidRequest", `unknown query parameter "jobtype"`},
		{"another jobType", strings.Replace(lh(docWorkspace, docLakehouse), "TableMaintenance", "DefaultJob", 1), ok, 400, "InvalidJobType", `"DefaultJob" is not one`},
		{"jobType empty", strings.Replace(lh(docWorkspace, docLakehouse), "TableMaintenance", "", 1), ok, 400, "InvalidJobType", `"" is not one`},
		{"jobType twice", lh(docWorkspace, docLakehouse) + "&jobType=TableMaintenance", ok, 400, "InvalidJobType", "given 2 times"},
		{"jobType with a blank", strings.Replace(lh(docWorkspace, docLakehouse), "TableMaintenance", "TableMaintenance%20", 1), ok, 400, "InvalidJobType", "is not one"},
		{"jobType in another case of the key", strings.Replace(lh(docWorkspace, docLakehouse), "jobType", "JobType", 1), ok, 400, "InvalidRequest", `unknown query parameter "JobType"`},
		{"an unknown parameter", lh(docWorkspace, docLakehouse) + "&beta=true", ok, 400, "InvalidRequest", `unknown query parameter "beta"`},
		{"the path's job type and another in the query", "/v1/workspaces/" + docWorkspace + "/lakehouses/" + docLakehouse + "/jobs/tableMaintenance/instances?jobType=DefaultJob", ok, 400, "InvalidJobType", "is not one"},
		// The body.
		{"no body", jobsPath, ``, 400, "InvalidRequest", "executionData is missing"},
		{"an empty object", jobsPath, `{}`, 400, "InvalidRequest", "executionData is missing"},
		{"executionData null", jobsPath, `{"executionData": null}`, 400, "InvalidRequest", "executionData is missing"},
		{"not an object", jobsPath, `[]`, 400, "InvalidRequest", "send an object"},
		{"a string", jobsPath, `"executionData"`, 400, "InvalidRequest", "send an object"},
		{"executionData twice", jobsPath, `{"executionData": {"tableName": "orders", "vacuumSettings": {}}, "executionData": {"tableName": "a", "vacuumSettings": {}}}`, 400, "InvalidRequest", `key "executionData" appears twice`},
		{"tableName twice", jobsPath, `{"executionData": {"tableName": "orders", "tableName": "table1", "vacuumSettings": {}}}`, 400, "InvalidRequest", `key "tableName" in /executionData appears twice`},
		{"retentionPeriod twice", jobsPath, `{"executionData": {"tableName": "orders", "vacuumSettings": {"retentionPeriod": "7:00:00:00", "retentionPeriod": "0:00:00:00"}}}`, 400, "InvalidRequest", "appears twice"},
		{"an unknown key", jobsPath, `{"executionData": {"tableName": "orders", "vacuumSettings": {}, "zOrderBy": ["a"]}}`, 400, "InvalidRequest", `unknown key "zOrderBy"`},
		{"an unknown top key", jobsPath, `{"executionData": {"tableName": "orders", "vacuumSettings": {}}, "parameters": []}`, 400, "InvalidRequest", `unknown key "parameters"`},
		{"an unknown vacuum key", jobsPath, `{"executionData": {"tableName": "orders", "vacuumSettings": {"retainHours": 0}}}`, 400, "InvalidRequest", `unknown key "retainHours"`},
		{"a key in another case", jobsPath, `{"executionData": {"TableName": "orders", "vacuumSettings": {}}}`, 400, "InvalidRequest", `unknown key "TableName"`},
		{"executionData in another case", jobsPath, `{"ExecutionData": {"tableName": "orders", "vacuumSettings": {}}}`, 400, "InvalidRequest", `unknown key "ExecutionData"`},
		{"tableName a number", jobsPath, `{"executionData": {"tableName": 5, "vacuumSettings": {}}}`, 400, "InvalidRequest", "tableName"},
		{"tableName a list", jobsPath, `{"executionData": {"tableName": ["orders"], "vacuumSettings": {}}}`, 400, "InvalidRequest", "tableName"},
		{"tableName null", jobsPath, `{"executionData": {"tableName": null, "vacuumSettings": {}}}`, 400, "InvalidRequest", "tableName is missing"},
		{"no tableName", jobsPath, `{"executionData": {"schemaName": "dbo", "vacuumSettings": {}}}`, 400, "InvalidRequest", "tableName is missing"},
		{"tableName empty", jobsPath, `{"executionData": {"tableName": "", "vacuumSettings": {}}}`, 400, "InvalidRequest", "Fabric's names"},
		{"tableName a path", jobsPath, `{"executionData": {"tableName": "../a", "vacuumSettings": {}}}`, 400, "InvalidRequest", "Fabric's names"},
		{"tableName with a dot", jobsPath, `{"executionData": {"tableName": "dbo.orders", "vacuumSettings": {}}}`, 400, "InvalidRequest", "Fabric's names"},
		{"tableName with a blank", jobsPath, `{"executionData": {"tableName": "orders ", "vacuumSettings": {}}}`, 400, "InvalidRequest", "Fabric's names"},
		{"tableName of digits", jobsPath, `{"executionData": {"tableName": "123", "vacuumSettings": {}}}`, 400, "InvalidRequest", "not digits alone"},
		{"tableName too long", jobsPath, `{"executionData": {"tableName": "` + strings.Repeat("a", 257) + `", "vacuumSettings": {}}}`, 400, "InvalidRequest", "1 to 256"},
		{"tableName not ASCII", jobsPath, `{"executionData": {"tableName": "ordérs", "vacuumSettings": {}}}`, 400, "InvalidRequest", "Fabric's names"},
		{"tableName invalid UTF-8", jobsPath, "{\"executionData\": {\"tableName\": \"or\xffders\", \"vacuumSettings\": {}}}", 400, "InvalidRequest", "invalid UTF-8"},
		{"schemaName too long", jobsPath, `{"executionData": {"tableName": "orders", "schemaName": "` + strings.Repeat("s", 129) + `", "vacuumSettings": {}}}`, 400, "InvalidRequest", "1 to 128"},
		{"schemaName a path", jobsPath, `{"executionData": {"tableName": "orders", "schemaName": "dbo/..", "vacuumSettings": {}}}`, 400, "InvalidRequest", "executionData.schemaName"},
		{"schemaName a boolean", jobsPath, `{"executionData": {"tableName": "orders", "schemaName": true, "vacuumSettings": {}}}`, 400, "InvalidRequest", "schemaName"},
		{"no vacuumSettings", jobsPath, `{"executionData": {"tableName": "orders"}}`, 400, "InvalidRequest", "vacuumSettings is missing"},
		{"vacuumSettings null", jobsPath, `{"executionData": {"tableName": "orders", "vacuumSettings": null}}`, 400, "InvalidRequest", "vacuumSettings is missing"},
		{"vacuumSettings a string", jobsPath, `{"executionData": {"tableName": "orders", "vacuumSettings": "7:00:00:00"}}`, 400, "InvalidRequest", "vacuumSettings"},
		{"retentionPeriod a number", jobsPath, `{"executionData": {"tableName": "orders", "vacuumSettings": {"retentionPeriod": 168}}}`, 400, "InvalidRequest", "retentionPeriod"},
		{"retentionPeriod negative", jobsPath, `{"executionData": {"tableName": "orders", "vacuumSettings": {"retentionPeriod": "-7:00:00:00"}}}`, 400, "InvalidRetentionPeriod", "not a retention period"},
		{"retentionPeriod huge", jobsPath, `{"executionData": {"tableName": "orders", "vacuumSettings": {"retentionPeriod": "999999:00:00:00"}}}`, 400, "InvalidRetentionPeriod", "from 0 to 878400"},
		{"retentionPeriod garbage", jobsPath, `{"executionData": {"tableName": "orders", "vacuumSettings": {"retentionPeriod": "a week"}}}`, 400, "InvalidRetentionPeriod", "not a retention period"},
		{"retentionPeriod empty", jobsPath, `{"executionData": {"tableName": "orders", "vacuumSettings": {"retentionPeriod": ""}}}`, 400, "InvalidRetentionPeriod", "not a retention period"},
		{"retentionPeriod too short", jobsPath, `{"executionData": {"tableName": "orders", "vacuumSettings": {"retentionPeriod": "0:01:00:00"}}}`, 400, "InvalidRetentionPeriod", "refusing to vacuum"},
		{"optimizeSettings", jobsPath, `{"executionData": {"tableName": "orders", "optimizeSettings": {"vOrder": false}, "vacuumSettings": {}}}`, 400, "OperationNotSupportedForItem", "never rewrites data"},
		{"optimizeSettings a number", jobsPath, `{"executionData": {"tableName": "orders", "optimizeSettings": 1, "vacuumSettings": {}}}`, 400, "OperationNotSupportedForItem", "never rewrites data"},
		{"purgeDeletionVectors", jobsPath, `{"executionData": {"tableName": "orders", "purgeDeletionVectors": true, "vacuumSettings": {}}}`, 400, "OperationNotSupportedForItem", "rewrites data files"},
		{"purgeDeletionVectors a string", jobsPath, `{"executionData": {"tableName": "orders", "purgeDeletionVectors": "false", "vacuumSettings": {}}}`, 400, "InvalidRequest", "purgeDeletionVectors"},
		{"trailing data", jobsPath, ok + `{}`, 400, "InvalidRequest", "data after the JSON value"},
		{"an unknown table", jobsPath, `{"executionData": {"tableName": "nothing", "vacuumSettings": {}}}`, 404, "ItemNotFound", "no table nothing in lakehouse"},
		{"a table of another schema", jobsPath, `{"executionData": {"tableName": "orders", "schemaName": "sales", "vacuumSettings": {}}}`, 404, "ItemNotFound", "no table sales.orders"},
		{"a table outside the lakehouse", jobsPath, `{"executionData": {"tableName": "a", "vacuumSettings": {}}}`, 404, "ItemNotFound", "no table a in"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, b := f.fabricDo(t, "POST", c.path, c.body)
			e := fabricErr(t, b)
			if resp.StatusCode != c.status || e.ErrorCode != c.code || !strings.Contains(e.Message, c.want) {
				t.Errorf("got %d %+v, want %d %s saying %q", resp.StatusCode, e, c.status, c.code, c.want)
			}
		})
	}
	// The instance of a job: an unknown id, one of another form, one of another lakehouse's
	// table, one of another lakehouse's ids.
	f.srv.Wait()
	if runs, _ := f.db.Runs(t.Context(), "", 10); len(runs) != 0 {
		t.Fatalf("a refused job started runs: %v", runs)
	}
	if code, body := f.do(t, "POST", "/api/tables/a/runs", "{}"); code != 202 {
		t.Fatalf("run of a: %d %v", code, body)
	}
	f.srv.Wait()
	runs, _ := f.db.Runs(t.Context(), "a", 1)
	item := "/v1/workspaces/" + docWorkspace + "/items/" + docLakehouse + "/jobs/instances/"
	for _, id := range []string{docJob, "20260101T000000Z-00000000", runs[0].ID, "..%2F..%2Fapi%2Ftables", "%27%20OR%20%271%27%3D%271", strings.Repeat("x", 5000)} {
		for _, m := range []string{"GET", "POST"} {
			p := item + id
			if m == "POST" {
				p += "/cancel"
			}
			resp, b := f.fabricDo(t, m, p, "")
			if e := fabricErr(t, b); resp.StatusCode != 404 || e.ErrorCode != "ItemNotFound" {
				t.Errorf("%s %s: %d %+v", m, p, resp.StatusCode, e)
			}
		}
	}
	resp, b := f.fabricDo(t, "POST", jobsPath, ok)
	if resp.StatusCode != 202 {
		t.Fatalf("a good job: %d %s", resp.StatusCode, b)
	}
	loc := resp.Header.Get("Location")
	for _, p := range []string{strings.Replace(loc, docLakehouse, other, 1), strings.Replace(loc, docWorkspace, other, 1)} {
		resp, b := f.fabricDo(t, "GET", p, "")
		if e := fabricErr(t, b); resp.StatusCode != 404 || e.ErrorCode != "ItemNotFound" {
			t.Errorf("GET %s: %d %+v", p, resp.StatusCode, e)
		}
	}
	f.srv.Wait()
}

// TestFabricGuard: the job API passes the service's guard (token, Host, content type,
// cross-site requests), and its refusals are in Fabric's shape; a GET without the token is a
// 401, never the login page.
func TestFabricGuard(t *testing.T) {
	const token = "0123456789abcdef-token"
	f := fabricFixture(t, layoutFlat, "token: ${TOK}\n", map[string]string{"TOK": token})
	ok := `{"executionData": {"tableName": "orders", "vacuumSettings": {}}}`
	auth := "Bearer " + token
	get := "/v1/workspaces/" + docWorkspace + "/items/" + docLakehouse + "/jobs/instances/20260101T000000Z-00000000"
	for _, c := range []struct {
		name, method, path string
		hdr                []string
		status             int
		code               string
	}{
		{"no token", "POST", jobsPath, nil, 401, "Unauthorized"},
		{"a wrong token", "POST", jobsPath, []string{"Authorization", "Bearer wrong"}, 401, "Unauthorized"},
		{"the token in lower-case bearer", "POST", jobsPath, []string{"Authorization", "bearer " + token}, 401, "Unauthorized"},
		{"a GET without the token", "GET", get, nil, 401, "Unauthorized"},
		{"a Host that is not loopback", "POST", jobsPath, []string{"Authorization", auth, "Host", "evil.example"}, 421, "MisdirectedRequest"},
		{"a cross-site POST", "POST", jobsPath, []string{"Authorization", auth, "Sec-Fetch-Site", "cross-site"}, 403, "Forbidden"},
		{"a form", "POST", jobsPath, []string{"Authorization", auth, "Content-Type", "application/x-www-form-urlencoded"}, 415, "UnsupportedMediaType"},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, b := f.fabricDo(t, c.method, c.path, ok, c.hdr...)
			e := fabricErr(t, b)
			if resp.StatusCode != c.status || e.ErrorCode != c.code {
				t.Errorf("got %d %+v, want %d %s", resp.StatusCode, e, c.status, c.code)
			}
			if c.status == 401 && resp.Header.Get("WWW-Authenticate") == "" {
				t.Error("a 401 without WWW-Authenticate")
			}
		})
	}
	if runs, _ := f.db.Runs(t.Context(), "", 10); len(runs) != 0 {
		t.Fatalf("a refused request started runs: %v", runs)
	}
	resp, b := f.fabricDo(t, "POST", jobsPath, ok, "Authorization", auth)
	if resp.StatusCode != 202 || !strings.HasPrefix(resp.Header.Get("Location"), f.http.URL+"/v1/") {
		t.Fatalf("with the token: %d %s %s", resp.StatusCode, b, resp.Header.Get("Location"))
	}
	f.srv.Wait()
	if resp, b := f.fabricDo(t, "GET", resp.Header.Get("Location"), "", "Authorization", auth); resp.StatusCode != 200 {
		t.Errorf("GET with the token: %d %s", resp.StatusCode, b)
	}
}

// TestFabricBaseURL: with fabric baseUrl, the Location is under it (a proxy's address).
func TestFabricBaseURL(t *testing.T) {
	f := newFixture(t, `fabric:
  baseUrl: https://vacuum.example.com/maintenance/
  lakehouses:
    - {workspaceId: `+strings.ToUpper(docWorkspace)+`, lakehouseId: `+docLakehouse+`, root: TABLES/lh}
tables:
  - {id: t, path: TABLES/lh/Tables/t}
`, nil, nil)
	resp, b := f.fabricDo(t, "POST", "/v1/workspaces/"+docWorkspace+"/lakehouses/"+docLakehouse+"/jobs/tableMaintenance/instances", `{"executionData": {"tableName": "T", "schemaName": "dbo", "vacuumSettings": {}}}`)
	loc := resp.Header.Get("Location")
	if resp.StatusCode != 202 || !strings.HasPrefix(loc, "https://vacuum.example.com/maintenance/v1/workspaces/"+docWorkspace+"/items/"+docLakehouse+"/jobs/instances/") {
		t.Errorf("%d %s Location %s", resp.StatusCode, b, loc)
	}
	f.srv.Wait()
}

// TestFabricFindsNewTables: a job naming a table made since the lakehouse was last listed
// lists it again (at most once a minute) and runs the new table.
func TestFabricFindsNewTables(t *testing.T) {
	f := fabricFixture(t, layoutSchemas, "", nil)
	ctx := context.Background()
	base := t0.Add(-10 * time.Minute) // the runs' clock never leads the store's
	if err := f.srv.Discover(ctx, "lh", base); err != nil {
		t.Fatal(err)
	}
	makeTable(t, filepath.Join(f.dir, "lh.Lakehouse", "Tables", "sales", "Returns"), t0, nil)
	body := `{"executionData": {"tableName": "returns", "schemaName": "SALES", "vacuumSettings": {}}}`
	// Listed at base: not again within the minute.
	f.clock.set(base.Add(30 * time.Second))
	if resp, b := f.fabricDo(t, "POST", jobsPath, body); resp.StatusCode != 404 {
		t.Fatalf("within the minute: %d %s", resp.StatusCode, b)
	}
	f.clock.set(base.Add(2 * time.Minute))
	resp, b := f.fabricDo(t, "POST", jobsPath, body)
	if resp.StatusCode != 202 {
		t.Fatalf("after the minute: %d %s", resp.StatusCode, b)
	}
	f.srv.Wait()
	if exists(t, filepath.Join(f.dir, "lh.Lakehouse", "Tables", "sales", "Returns", "stray.parquet")) {
		loc := resp.Header.Get("Location")
		_, run := f.do(t, "GET", "/api/runs/"+loc[strings.LastIndexByte(loc, '/')+1:], "")
		t.Errorf("the new table was not vacuumed: %v", run)
	}
}

// TestFabricTablesOfALakehouse: which tables of the service are a lakehouse's, and their
// names: by location (however spelled), or by name with the lakehouse as warehouse.
func TestFabricTablesOfALakehouse(t *testing.T) {
	l := &config.Lakehouse{WorkspaceID: docWorkspace, LakehouseID: docLakehouse, Root: "/lh"}
	for _, c := range []struct {
		path, name, warehouse, want string
	}{
		{"/lh/Tables/orders", "", "", "orders"},
		{"/lh/Tables/orders/", "", "", "orders"},
		{"/lh/Tables/sales/orders", "", "", "sales.orders"},
		{"file:///lh/Tables/sales/orders", "", "", "sales.orders"},
		{"/lh/Tables/a/b/c", "", "", ""},
		{"/lh/Files/orders", "", "", ""},
		{"/lh/Tables", "", "", ""},
		{"/lh2/Tables/orders", "", "", ""},
		{"/lh/Tables/../Files/x", "", "", ""},
		{"", "orders", "/lh/", "orders"},
		{"", "dbo.orders", "/lh", "dbo.orders"},
		{"", "cat.sales.orders", "/lh", "sales.orders"},
		{"", "dbo.orders", "/lh2", ""},
	} {
		lt, ok := lakehouseTableOf(l, &config.Table{Path: c.path, Name: c.name, Warehouse: c.warehouse})
		if got := lt.Name(); ok != (c.want != "") || (ok && got != c.want) {
			t.Errorf("%+v: %q %v, want %q", c, got, ok, c.want)
		}
	}
}

// TestFabricInstanceOf: a run's state as Fabric's status, a row per state: a run the service
// was asked to cancel through the API (not one it stopped at its shutdown) that failed is
// Cancelled; a run whose record cannot be read and is not in progress here is Failed.
func TestFabricInstanceOf(t *testing.T) {
	l := &config.Lakehouse{WorkspaceID: docWorkspace, LakehouseID: docLakehouse, Root: "/lh"}
	ended := t0.Add(time.Minute)
	for _, c := range []struct {
		state, status, trigger, cancelled, err string
		want, reason                           string
	}{
		{run.StatePlanned, "RUNNING", "api", "", "", fabricNotStarted, ""},
		{run.StateRunning, "RUNNING", "api", "", "", fabricInProgress, ""},
		{run.StateCompleted, "COMPLETED", "api", "", "", fabricCompleted, ""},
		{run.StatePartiallyUndone, "COMPLETED", "api", "", "", fabricCompleted, ""},
		{run.StateUndone, "COMPLETED", "schedule", "", "", fabricCompleted, ""},
		{run.StateFailed, "FAILED", "api", "", "boom", fabricFailed, "RunFailed"},
		{run.StateFailed, "FAILED", "api", runner.CancelledByRequest, runner.CancelledByRequest + ": ended FAILED", fabricCancelled, "RunCancelled"},
		{run.StateFailed, "FAILED", "api", "cancelled: the service is shutting down", "cancelled: the service is shutting down: x", fabricFailed, "RunFailed"},
		// A cancel asked after the last batch: the run completed.
		{run.StateCompleted, "COMPLETED", "api", runner.CancelledByRequest, "", fabricCompleted, ""},
		{run.StateUnreadable, "RUNNING", "api", "", "", fabricInProgress, ""},
		{run.StateUnreadable, "FAILED", "api", "", "its record cannot be read", fabricFailed, "RunFailed"},
		{run.StateUnreadable, "FAILED", "api", runner.CancelledByRequest, runner.CancelledByRequest, fabricCancelled, "RunCancelled"},
		// The record says the run ended; the service has not seen to its end yet.
		{run.StateCompleted, "RUNNING", "api", "", "", fabricInProgress, ""},
		{run.StateFailed, "RUNNING", "schedule", "", "", fabricInProgress, ""},
	} {
		d := runner.RunDoc{State: c.state}
		d.ID, d.Status, d.Trigger, d.Error, d.Started = "20260101T000000Z-0a0b0c0d", c.status, c.trigger, c.err, t0
		if c.status != "RUNNING" {
			d.Ended = &ended
		}
		j := jobInstance(d, c.cancelled, l)
		reason := ""
		if j.FailureReason != nil {
			reason = j.FailureReason.ErrorCode
		}
		invoke := map[string]string{"api": "Manual", "schedule": "Scheduled"}[c.trigger]
		if j.Status != c.want || reason != c.reason || j.InvokeType != invoke || j.ItemID != docLakehouse || (j.EndTimeUTC == nil) != (c.status == "RUNNING") {
			t.Errorf("%s/%s/%q: %+v, want %s %q", c.state, c.status, c.err, j, c.want, c.reason)
		}
	}
	if s := *fabricTime(time.Date(2023, 4, 22, 6, 35, 0, 781215400, time.FixedZone("x", 3600))); s != "2023-04-22T05:35:00.7812154" {
		t.Errorf("fabricTime: %s", s)
	}
}
