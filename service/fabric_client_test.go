package service

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/deltavacuum/deltavacuum/run"
	"github.com/deltavacuum/deltavacuum/service/state"
	"github.com/deltavacuum/deltavacuum/storage/local"
)

// A client of Fabric's job API written from Fabric's REST reference (Run On Demand Table
// Maintenance; Job Scheduler: Get, List and Cancel Item Job Instance; the specification they
// are generated from), as a typed SDK is: ids are uuid.UUID (format: uuid), times are read in
// Fabric's layout, a list is followed by its continuationUri, a cancel is sent as documented
// (no body, no Content-Type), an error is an ErrorResponse. It knows nothing of docs/fabric.md.

// docItemJobInstance is Fabric's ItemJobInstance, typed as a generated client types it.
type docItemJobInstance struct {
	ID             uuid.UUID         `json:"id"`
	ItemID         uuid.UUID         `json:"itemId"`
	JobType        string            `json:"jobType"`
	InvokeType     string            `json:"invokeType"`
	Status         string            `json:"status"`
	RootActivityID uuid.UUID         `json:"rootActivityId"`
	StartTimeUTC   *string           `json:"startTimeUtc"`
	EndTimeUTC     *string           `json:"endTimeUtc"`
	FailureReason  *docErrorResponse `json:"failureReason"`
}

// docItemJobInstances is Fabric's ItemJobInstances (a PaginatedResponse).
type docItemJobInstances struct {
	Value             []docItemJobInstance `json:"value"`
	ContinuationToken *string              `json:"continuationToken"`
	ContinuationURI   *string              `json:"continuationUri"`
}

// docErrorResponse is Fabric's ErrorResponse.
type docErrorResponse struct {
	ErrorCode   string     `json:"errorCode"`
	Message     string     `json:"message"`
	RequestID   *uuid.UUID `json:"requestId"`
	IsRetriable *bool      `json:"isRetriable"`
}

// fabricTimeLayout is how Fabric writes a job's times (2023-04-22T06:35:00.7812154, UTC).
const fabricTimeLayout = "2006-01-02T15:04:05.9999999"

// docClient is the client: a base URL (the service's, where Fabric's would be) and a token.
type docClient struct {
	t    *testing.T
	base string
	ws   uuid.UUID
	lh   uuid.UUID
}

func (c *docClient) do(method, u string, body io.Reader, contentType string) (*http.Response, []byte) {
	c.t.Helper()
	if !strings.HasPrefix(u, "http") {
		u = c.base + u
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		c.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// runOnDemand posts a job to path and returns the job instance id its Location names.
func (c *docClient) runOnDemand(path, body string) uuid.UUID {
	c.t.Helper()
	resp, b := c.do("POST", path, strings.NewReader(body), "application/json")
	if resp.StatusCode != http.StatusAccepted {
		c.t.Fatalf("POST %s: %d %s", path, resp.StatusCode, b)
	}
	if _, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil {
		c.t.Fatalf("POST %s: Retry-After %q is not an integer", path, resp.Header.Get("Retry-After"))
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || !loc.IsAbs() {
		c.t.Fatalf("POST %s: Location %q", path, resp.Header.Get("Location"))
	}
	id, err := uuid.Parse(loc.Path[strings.LastIndexByte(loc.Path, '/')+1:])
	if err != nil {
		c.t.Fatalf("POST %s: the job instance of Location %s is no GUID: %v", path, loc, err)
	}
	if want := "/v1/workspaces/" + c.ws.String() + "/items/" + c.lh.String() + "/jobs/instances/" + id.String(); loc.Path != want {
		c.t.Fatalf("Location %s, want …%s", loc, want)
	}
	return id
}

// get is Get Item Job Instance, decoded as the typed client decodes it.
func (c *docClient) get(id uuid.UUID) (docItemJobInstance, *http.Response) {
	c.t.Helper()
	resp, b := c.do("GET", "/v1/workspaces/"+c.ws.String()+"/items/"+c.lh.String()+"/jobs/instances/"+id.String(), nil, "")
	if resp.StatusCode != http.StatusOK {
		c.t.Fatalf("GET job %s: %d %s", id, resp.StatusCode, b)
	}
	var j docItemJobInstance
	if err := json.Unmarshal(b, &j); err != nil {
		c.t.Fatalf("GET job %s: %v in %s", id, err, b)
	}
	c.check(j)
	return j, resp
}

// check holds a job instance to the reference: its ids, its type, its enums, its times.
func (c *docClient) check(j docItemJobInstance) {
	c.t.Helper()
	if j.ItemID != c.lh || j.RootActivityID != j.ID || j.JobType != FabricJobType {
		c.t.Errorf("job %s: itemId %s rootActivityId %s jobType %s", j.ID, j.ItemID, j.RootActivityID, j.JobType)
	}
	if !slices.Contains([]string{"Manual", "Scheduled"}, j.InvokeType) ||
		!slices.Contains([]string{"NotStarted", "InProgress", "Completed", "Failed", "Cancelled", "Deduped"}, j.Status) {
		c.t.Errorf("job %s: invokeType %q status %q", j.ID, j.InvokeType, j.Status)
	}
	for _, tm := range []*string{j.StartTimeUTC, j.EndTimeUTC} {
		if tm == nil {
			continue
		}
		if _, err := time.Parse(fabricTimeLayout, *tm); err != nil || len(*tm) != len("2023-04-22T06:35:00.7812154") {
			c.t.Errorf("job %s: time %q is not of Fabric's form: %v", j.ID, *tm, err)
		}
	}
	ended := j.Status != "NotStarted" && j.Status != "InProgress"
	if j.StartTimeUTC == nil || (j.EndTimeUTC != nil) != ended || (j.FailureReason != nil) != (ended && j.Status != "Completed") {
		c.t.Errorf("job %s %s: start %v end %v failureReason %+v", j.ID, j.Status, j.StartTimeUTC, j.EndTimeUTC, j.FailureReason)
	}
}

// wait polls job id as the reference says: after Retry-After, until the status is final.
func (c *docClient) wait(id uuid.UUID) docItemJobInstance {
	c.t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); {
		j, resp := c.get(id)
		switch j.Status {
		case "NotStarted", "InProgress":
			if n, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || n <= 0 {
				c.t.Fatalf("job %s %s without a Retry-After", id, j.Status)
			}
			time.Sleep(5 * time.Millisecond)
		default:
			return j
		}
	}
	c.t.Fatalf("job %s did not end", id)
	return docItemJobInstance{}
}

// list is List Item Job Instances, every page: the continuationUri of each followed as given.
func (c *docClient) list() (jobs []docItemJobInstance, pages int) {
	c.t.Helper()
	next := "/v1/workspaces/" + c.ws.String() + "/items/" + c.lh.String() + "/jobs/instances"
	for next != "" {
		resp, b := c.do("GET", next, nil, "")
		if resp.StatusCode != http.StatusOK {
			c.t.Fatalf("GET %s: %d %s", next, resp.StatusCode, b)
		}
		var page docItemJobInstances
		if err := json.Unmarshal(b, &page); err != nil || page.Value == nil {
			c.t.Fatalf("GET %s: not an ItemJobInstances: %v in %s", next, err, b)
		}
		for _, j := range page.Value {
			c.check(j)
		}
		jobs, pages = append(jobs, page.Value...), pages+1
		next = ""
		if (page.ContinuationToken == nil) != (page.ContinuationURI == nil) {
			c.t.Fatalf("a page with only one of continuationToken and continuationUri: %s", b)
		}
		if page.ContinuationURI != nil {
			u, err := url.Parse(*page.ContinuationURI)
			if err != nil || !u.IsAbs() || u.Query().Get("continuationToken") != *page.ContinuationToken {
				c.t.Fatalf("continuationUri %q does not carry continuationToken %q", *page.ContinuationURI, *page.ContinuationToken)
			}
			next = *page.ContinuationURI
		}
		if pages > 100 {
			c.t.Fatal("the pages do not end")
		}
	}
	return jobs, pages
}

// cancel is Cancel Item Job Instance as documented: POST, no body, no Content-Type.
func (c *docClient) cancel(id uuid.UUID) *http.Response {
	c.t.Helper()
	resp, b := c.do("POST", "/v1/workspaces/"+c.ws.String()+"/items/"+c.lh.String()+"/jobs/instances/"+id.String()+"/cancel", nil, "")
	if resp.StatusCode == http.StatusAccepted && len(b) != 0 {
		c.t.Errorf("cancel %s: 202 with a body %s", id, b)
	}
	if resp.StatusCode != http.StatusAccepted {
		c.errorResponse(resp, b)
	}
	return resp
}

// errorResponse decodes an error as the reference declares it.
func (c *docClient) errorResponse(resp *http.Response, b []byte) docErrorResponse {
	c.t.Helper()
	var e docErrorResponse
	if err := json.Unmarshal(b, &e); err != nil || e.ErrorCode == "" || e.Message == "" || e.RequestID == nil || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		c.t.Fatalf("%d is not Fabric's ErrorResponse: %s (%v)", resp.StatusCode, b, err)
	}
	return e
}

func newDocClient(t *testing.T, f *fixture) *docClient {
	return &docClient{t: t, base: f.http.URL, ws: uuid.MustParse(docWorkspace), lh: uuid.MustParse(docLakehouse)}
}

// TestFabricClient: the typed client runs jobs through every path Fabric has published for
// Run On Demand Table Maintenance (the lakehouse path with the job type in the query and in
// the path, in both spellings, and the Core item paths), each in another case of the job
// type; every id it is shown is a GUID (the run's own: GET /api/runs/{id} knows it); it lists
// the lakehouse's jobs, newest first, across pages; it cancels a job as documented.
func TestFabricClient(t *testing.T) {
	f := fabricFixture(t, layoutFlat, "", nil)
	f.srv.fabric.pageSize = 2
	c := newDocClient(t, f)
	ws, lh := docWorkspace, docLakehouse
	paths := []string{
		"/v1/workspaces/" + ws + "/lakehouses/" + lh + "/jobs/instances?jobType=TableMaintenance",
		"/v1/workspaces/" + ws + "/lakehouses/" + lh + "/jobs/tableMaintenance/instances",
		"/v1/workspaces/" + ws + "/lakehouses/" + lh + "/jobs/TableMaintenance/instances",
		"/v1/workspaces/" + ws + "/items/" + lh + "/jobs/instances?jobType=TableMaintenance",
		"/v1/workspaces/" + ws + "/items/" + lh + "/jobs/TableMaintenance/instances",
		"/v1/workspaces/" + ws + "/items/" + lh + "/jobs/tablemaintenance/instances",
		"/v1/workspaces/" + ws + "/lakehouses/" + lh + "/jobs/instances?jobType=tableMaintenance",
		"/v1/workspaces/" + strings.ToUpper(ws) + "/items/" + strings.ToUpper(lh) + "/jobs/TABLEMAINTENANCE/instances",
	}
	var started []uuid.UUID
	for i, p := range paths {
		f.clock.set(t0.Add(-time.Hour + time.Duration(i)*time.Second)) // each job a second after the one before
		table := []string{"table1", "orders"}[i%2]
		id := c.runOnDemand(p, `{"executionData": {"tableName": "`+table+`", "vacuumSettings": {"retentionPeriod": "7:00:00:00"}}}`)
		if id.Version() != 7 {
			t.Errorf("%s: job %s is a version %d GUID, want the run's version 7 id", p, id, id.Version())
		}
		j := c.wait(id)
		if j.Status != "Completed" || j.ID != id {
			t.Errorf("%s: job %s ended %+v", p, id, j)
		}
		if code, run := f.do(t, "GET", "/api/runs/"+id.String(), ""); code != 200 || run["id"] != id.String() || run["table"] != "lh."+table {
			t.Errorf("%s: the run of job %s: %d %v", p, id, code, run)
		}
		started = append(started, id)
		f.srv.Wait()
	}
	// A run of the schedule is a job of the lakehouse too, and so is a Deduped one.
	f.clock.set(t0.Add(-time.Hour + 30*time.Second))
	if code, body := f.do(t, "POST", "/api/tables/lh.orders/runs", "{}"); code != 202 {
		t.Fatalf("a run through the service's API: %d %v", code, body)
	} else {
		started = append(started, uuid.MustParse(body["id"].(string)))
	}
	f.srv.Wait()
	// Every job, newest first, each once, across pages of 2.
	jobs, pages := c.list()
	var got []uuid.UUID
	for _, j := range jobs {
		got = append(got, j.ID)
	}
	want := slices.Clone(started)
	slices.Reverse(want)
	if !slices.Equal(got, want) || pages != (len(want)+1)/2 {
		t.Errorf("listed %d pages\n %v\nwant\n %v", pages, got, want)
	}
	// The list's page as documented: its keys, and each job's keys in their order.
	example := readListExample(t, "ListItemJobInstancesWithContinuation")
	resp, b := c.do("GET", "/v1/workspaces/"+ws+"/items/"+lh+"/jobs/instances", nil, "")
	if got, want := strings.Join(keysInOrder(t, b), ","), strings.Join(keysInOrder(t, example), ","); resp.StatusCode != 200 || got != want {
		t.Errorf("the page's keys %s, want the documented %s", got, want)
	}
	var page, docPage struct{ Value []json.RawMessage }
	if json.Unmarshal(b, &page) != nil || json.Unmarshal(example, &docPage) != nil || len(page.Value) == 0 {
		t.Fatalf("pages: %s", b)
	}
	if got, want := strings.Join(keysInOrder(t, page.Value[0]), ","), strings.Join(keysInOrder(t, docPage.Value[0]), ","); got != want {
		t.Errorf("a listed job's keys %s, want %s", got, want)
	}
	// The last page has neither continuation field, as documented.
	last := readListExample(t, "ListItemJobInstances")
	if strings.Contains(string(last), "continuation") {
		t.Fatal("the documented single page has a continuation")
	}
	// Cancel as documented: an ended job is JobAlreadyCompleted, in Fabric's shape.
	resp = c.cancel(started[0])
	if resp.StatusCode != http.StatusConflict {
		t.Errorf("cancel of an ended job: %d", resp.StatusCode)
	}
}

// readListExample is the documented body of a List Item Job Instances example.
func readListExample(t *testing.T, name string) json.RawMessage {
	t.Helper()
	ex := readExample(t, name)
	if ex.Parameters.WorkspaceID != docWorkspace || ex.Parameters.ItemID != docLakehouse {
		t.Fatalf("%s: the example's ids changed: %+v", name, ex.Parameters)
	}
	return ex.Responses["200"].Body
}

// TestFabricCancelAsDocumented: Cancel Item Job Instance as Fabric documents it (POST with no
// body and no Content-Type) is accepted, and the run ends Cancelled. A POST of the job API
// that carries a body still needs Content-Type: application/json, one that names another
// type is refused, a cross-site one too, and the rest of the service still wants JSON.
func TestFabricCancelAsDocumented(t *testing.T) {
	f := fabricFixture(t, layoutFlat, "", nil)
	dir := f.tableDir(layoutFlat, "table1")
	manyStray(t, dir, n)
	g := gateTable(t, f, dir)
	c := newDocClient(t, f)
	id := c.runOnDemand(jobsPath, `{"executionData": {"tableName": "table1", "vacuumSettings": {"retentionPeriod": "7:00:00:00"}}}`)
	<-g.entered
	cancel := "/v1/workspaces/" + docWorkspace + "/items/" + docLakehouse + "/jobs/instances/" + id.String() + "/cancel"
	for _, h := range []struct {
		name        string
		body        io.Reader
		contentType string
		extra       []string
		status      int
	}{
		{"a body without Content-Type", strings.NewReader("{}"), "", nil, 415},
		{"a body sent in chunks without Content-Type", io.MultiReader(strings.NewReader("{}")), "", nil, 415},
		{"an empty Content-Type", nil, " ", nil, 415},
		{"text/plain", nil, "text/plain", nil, 415},
		{"a form", strings.NewReader("a=b"), "application/x-www-form-urlencoded", nil, 415},
		{"cross-site, as documented otherwise", nil, "", []string{"Sec-Fetch-Site", "cross-site"}, 403},
		{"another origin", nil, "", []string{"Origin", "https://evil.example"}, 403},
	} {
		t.Run(h.name, func(t *testing.T) {
			req, err := http.NewRequest("POST", f.http.URL+cancel, h.body)
			if err != nil {
				t.Fatal(err)
			}
			if h.contentType != "" {
				req.Header["Content-Type"] = []string{strings.TrimSpace(h.contentType)}
			}
			for i := 0; i+1 < len(h.extra); i += 2 {
				req.Header.Set(h.extra[i], h.extra[i+1])
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != h.status {
				t.Errorf("got %d %s, want %d", resp.StatusCode, b, h.status)
			}
			c.errorResponse(resp, b)
		})
	}
	if j, _ := c.get(id); j.Status != "InProgress" {
		t.Fatalf("a refused cancel changed the job: %+v", j)
	}
	// The service's own API still wants JSON on every POST.
	if code, _ := f.do(t, "POST", "/api/runs/"+id.String()+"/cancel", "", "Content-Type", ""); code != 415 {
		t.Errorf("POST /api/runs/…/cancel without Content-Type: %d, want 415", code)
	}
	resp := c.cancel(id)
	if resp.StatusCode != http.StatusAccepted || resp.Header.Get("Location") == "" || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("the documented cancel: %d %v", resp.StatusCode, resp.Header)
	}
	close(g.release)
	if j := c.wait(id); j.Status != "Cancelled" || j.FailureReason == nil || j.FailureReason.ErrorCode != "RunCancelled" {
		t.Errorf("the cancelled job: %+v", j)
	}
	f.srv.Wait()
}

// TestFabricUnserved: every answer under /v1/ is Fabric's ErrorResponse, the router's own
// 404 and 405 too (with Allow); a path that is not clean is not redirected elsewhere. Nothing
// runs. Outside /v1/ the service answers as before.
func TestFabricUnserved(t *testing.T) {
	f := fabricFixture(t, layoutFlat, "", nil)
	c := newDocClient(t, f)
	item := "/v1/workspaces/" + docWorkspace + "/items/" + docLakehouse
	job := item + "/jobs/instances/" + uuid.NewString()
	for _, r := range []struct {
		method, path string
		status       int
		code, allow  string
	}{
		{"GET", "/v1/", 404, "NotFound", ""},
		{"GET", "/v1", 404, "NotFound", ""},
		{"GET", "/v1/workspaces", 404, "NotFound", ""},
		{"GET", "/v1/workspaces/" + docWorkspace + "/lakehouses/" + docLakehouse, 404, "NotFound", ""},
		{"GET", item + "/jobs/TableMaintenance/schedules", 404, "NotFound", ""},
		{"POST", item + "/jobs/TableMaintenance/schedules", 404, "NotFound", ""},
		{"GET", item + "/jobs/instances/", 404, "NotFound", ""},
		{"GET", "/v1//workspaces/" + docWorkspace + "/items/" + docLakehouse + "/jobs/instances", 404, "NotFound", ""},
		{"GET", "/v1/workspaces/x/%2E%2E/%2E%2E/%2E%2E/api/tables", 404, "NotFound", ""},
		{"GET", "/v1/../api/tables", 404, "NotFound", ""},
		{"DELETE", job, 405, "MethodNotAllowed", "GET, HEAD"},
		{"PUT", job, 405, "MethodNotAllowed", "GET, HEAD"},
		{"PATCH", job + "/cancel", 405, "MethodNotAllowed", "POST"},
		{"GET", job + "/cancel", 405, "MethodNotAllowed", "POST"},
		{"GET", "/v1/workspaces/" + docWorkspace + "/lakehouses/" + docLakehouse + "/jobs/tableMaintenance/instances", 405, "MethodNotAllowed", "POST"},
		{"DELETE", item + "/jobs/instances", 405, "MethodNotAllowed", "GET, HEAD, POST"},
		{"OPTIONS", item + "/jobs/instances", 405, "MethodNotAllowed", "GET, HEAD, POST"},
	} {
		t.Run(r.method+" "+r.path, func(t *testing.T) {
			req, err := http.NewRequest(r.method, f.http.URL+"/", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.URL.Opaque = r.path // sent as written, not cleaned by the client
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			e := c.errorResponse(resp, b)
			if resp.StatusCode != r.status || e.ErrorCode != r.code || resp.Header.Get("Allow") != r.allow {
				t.Errorf("got %d %+v Allow %q, want %d %s Allow %q", resp.StatusCode, e, resp.Header.Get("Allow"), r.status, r.code, r.allow)
			}
		})
	}
	if runs, _ := f.db.Runs(t.Context(), "", 10); len(runs) != 0 {
		t.Errorf("an unserved request started runs: %v", runs)
	}
	// Outside /v1/, the service's own answers.
	if code, body := f.do(t, "GET", "/api/nothing", ""); code != 404 || body["errorCode"] != nil {
		t.Errorf("GET /api/nothing: %d %v", code, body)
	}
}

// TestFabricQueue: a job of another table while the service runs maxConcurrentRuns (1) runs
// is not refused: it waits NotStarted (Retry-After 5, its start time the time it was accepted,
// no end), listed, and starts under the same id when the run ends. A second job of the
// table it waits for is Deduped. A waiting job cancelled as documented ends Cancelled having
// run nothing. Past the queue's bound a job is TooManyRequestsForJobs, retriable after
// Retry-After, and nothing of it is kept.
func TestFabricQueue(t *testing.T) {
	f := fabricFixture(t, layoutFlat, "maxConcurrentRuns: 1\n", nil)
	makeTable(t, f.tableDir(layoutFlat, "third"), t0, nil)
	if err := f.srv.Discover(context.Background(), "lh", t0.Add(-2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	f.srv.runner.SetQueueLimit(1)
	c := newDocClient(t, f)
	g := gateTable(t, f, f.tableDir(layoutFlat, "table1"))
	job := func(table string) string {
		return `{"executionData": {"tableName": "` + table + `", "vacuumSettings": {}}}`
	}
	f.clock.set(t0.Add(-time.Hour))
	first := c.runOnDemand(jobsPath, job("table1"))
	<-g.entered
	f.clock.set(t0.Add(-time.Hour + time.Second))
	waiting := c.runOnDemand(jobsPath, job("orders"))
	j, resp := c.get(waiting)
	if j.Status != "NotStarted" || j.EndTimeUTC != nil || resp.Header.Get("Retry-After") != "5" || *j.StartTimeUTC != *fabricTime(t0.Add(-time.Hour + time.Second)) {
		t.Errorf("the waiting job: %+v, Retry-After %q", j, resp.Header.Get("Retry-After"))
	}
	if code, body := f.do(t, "GET", "/api/runs/"+waiting.String(), ""); code != 404 || !strings.Contains(fmt.Sprint(body["error"]), "has not started: it waits for a slot") {
		t.Errorf("GET /api/runs of the waiting job: %d %v", code, body)
	}
	// A second job of orders while one waits: Deduped.
	f.clock.set(t0.Add(-time.Hour + 2*time.Second))
	dup := c.runOnDemand(jobsPath, job("orders"))
	if j, _ := c.get(dup); j.Status != "Deduped" || !strings.Contains(j.FailureReason.Message, waiting.String()) {
		t.Errorf("a second job of the waiting table: %+v", j)
	}
	// The queue holds one: a job of the third table is refused, and leaves nothing.
	resp, b := c.do("POST", jobsPath, strings.NewReader(job("third")), "application/json")
	e := c.errorResponse(resp, b)
	if resp.StatusCode != 429 || e.ErrorCode != "TooManyRequestsForJobs" || e.IsRetriable == nil || !*e.IsRetriable || resp.Header.Get("Retry-After") != strconv.Itoa(fabricBusyAfter) || resp.Header.Get("Location") != "" {
		t.Errorf("past the bound: %d %+v Retry-After %q", resp.StatusCode, e, resp.Header.Get("Retry-After"))
	}
	// A refusal that start would make (the retention) is made now, not when its turn comes.
	resp, b = c.do("POST", jobsPath, strings.NewReader(`{"executionData": {"tableName": "third", "vacuumSettings": {"retentionPeriod": "0:01:00:00"}}}`), "application/json")
	if e := c.errorResponse(resp, b); resp.StatusCode != 400 || e.ErrorCode != "InvalidRetentionPeriod" {
		t.Errorf("a waiting job's retention: %d %+v", resp.StatusCode, e)
	}
	jobs, _ := c.list()
	if len(jobs) != 3 || jobs[0].ID != dup || jobs[1].ID != waiting || jobs[1].Status != "NotStarted" || jobs[2].ID != first || jobs[2].Status != "InProgress" {
		t.Errorf("the list: %+v", jobs)
	}
	// Cancelled while it waits: it leaves the queue, and never runs.
	if resp := c.cancel(waiting); resp.StatusCode != 202 {
		t.Fatalf("cancel of the waiting job: %d", resp.StatusCode)
	}
	if j, _ := c.get(waiting); j.Status != "Cancelled" || j.FailureReason == nil || j.FailureReason.ErrorCode != "RunCancelled" || j.EndTimeUTC == nil {
		t.Errorf("the cancelled waiting job: %+v", j)
	}
	if resp := c.cancel(waiting); resp.StatusCode != 409 {
		t.Errorf("a second cancel: %d", resp.StatusCode)
	}
	// Another waits; the first run ends; it starts, under its id, and runs to its end.
	f.clock.set(t0.Add(-time.Hour + 3*time.Second))
	next := c.runOnDemand(jobsPath, job("third"))
	if j, _ := c.get(next); j.Status != "NotStarted" {
		t.Fatalf("the next waiting job: %+v", j)
	}
	close(g.release)
	if j := c.wait(first); j.Status != "Completed" {
		t.Errorf("the first job: %+v", j)
	}
	if j := c.wait(next); j.Status != "Completed" {
		t.Errorf("the job that waited: %+v", j)
	}
	f.srv.Wait()
	if code, run := f.do(t, "GET", "/api/runs/"+next.String(), ""); code != 200 || run["table"] != "lh.third" || run["status"] != "COMPLETED" {
		t.Errorf("the run of the job that waited: %d %v", code, run)
	}
	if exists(t, filepath.Join(f.tableDir(layoutFlat, "third"), "stray.parquet")) || !exists(t, filepath.Join(f.tableDir(layoutFlat, "orders"), "stray.parquet")) {
		t.Error("the job that waited did not run, or the cancelled one ran")
	}
	runs, _ := f.db.Runs(t.Context(), "", 10)
	if len(runs) != 2 {
		t.Errorf("runs %v: want the first job's and the one that waited", runs)
	}
}

// TestFabricLegacyJobIDs: a run of an earlier build, whose id is no GUID, is shown under a
// version 8 GUID that carries its id, and found by either; a GUID of that version that
// carries nothing is no job.
func TestFabricLegacyJobIDs(t *testing.T) {
	f := fabricFixture(t, layoutFlat, "", nil)
	c := newDocClient(t, f)
	ctx := context.Background()
	if err := f.srv.Discover(ctx, "lh", t0.Add(-2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	// Each with its run record beside the table (a serve- run's record is named by its id
	// without serve-, which the state database links).
	store, err := local.New(f.tableDir(layoutFlat, "orders"))
	if err != nil {
		t.Fatal(err)
	}
	old := []string{"20261201T153000Z-1a2b3c4d", "serve-20261202T010203Z-00ff00ff"}
	for i, id := range old {
		at := t0.Add(time.Duration(-48+i) * time.Hour)
		if err := f.db.AddRun(ctx, state.Run{ID: id, Table: "lh.orders", Requester: state.ByAPI, Mode: "FULL", Asked: at}); err != nil {
			t.Fatal(err)
		}
		rid := strings.TrimPrefix(id, "serve-")
		end := at.Add(time.Second)
		if err := run.WriteRecord(ctx, store, &run.Record{ID: rid, Table: store.Location(), Status: run.StatusCompleted, Complete: true,
			StartedAt: at, FinishedAt: &end, Mode: "FULL", RetentionHours: 168}); err != nil {
			t.Fatal(err)
		}
		if err := f.db.SetRecord(ctx, id, rid); err != nil {
			t.Fatal(err)
		}
	}
	jobs, _ := c.list()
	if len(jobs) != 2 {
		t.Fatalf("jobs %+v", jobs)
	}
	for i, j := range jobs {
		id := old[len(old)-1-i]
		if j.ID.Version() != 8 || j.ID.String() != fabricJobID(id) {
			t.Errorf("the run %s is job %s (version %d)", id, j.ID, j.ID.Version())
		}
		if back, ok := runIDOfJob(j.ID.String()); !ok || back != id {
			t.Errorf("job %s names run %q %v, want %s", j.ID, back, ok, id)
		}
		if back, ok := runIDOfJob(strings.ToUpper(j.ID.String())); !ok || back != id {
			t.Errorf("job %s in capitals names run %q", j.ID, back)
		}
		got, _ := c.get(j.ID)
		if got.ID != j.ID || got.Status != "Completed" {
			t.Errorf("GET job %s: %+v", j.ID, got)
		}
		// The Location an earlier build gave names the run's own id: still found, shown by its GUID.
		resp, b := c.do("GET", "/v1/workspaces/"+docWorkspace+"/items/"+docLakehouse+"/jobs/instances/"+id, nil, "")
		var byOld docItemJobInstance
		if resp.StatusCode != 200 || json.Unmarshal(b, &byOld) != nil || byOld.ID != j.ID {
			t.Errorf("GET by the old id %s: %d %s", id, resp.StatusCode, b)
		}
	}
	g := fabricJobID(old[0])
	notJobs := []string{
		g[:14] + "9" + g[15:], // another version
		g[:15] + "1" + g[16:], // other bits beside the version
		g[:17] + "2" + g[18:], // a flag this service never sets
		g[:19] + "c" + g[20:], // another variant
		g[:21] + "1" + g[22:], // a bit between the fields
		strings.Replace(g, "-", "", 4),
		"{" + g + "}",
		"serve-" + uuid.NewString(),
		"serve-serve-20261201T153000Z-1a2b3c4d",
		"f2d65699-dd22-4889-980c-15226deb0e1b", // version 4
	}
	for _, bad := range notJobs {
		if id, ok := runIDOfJob(bad); ok {
			t.Errorf("%q names run %q", bad, id)
		}
	}
	for _, bad := range append(notJobs, "00000000-0000-8000-8000-000000000000", fabricJobID("20261201T153000Z-1a2b3c4e"), uuid.Must(uuid.NewV7()).String()) {
		resp, b := c.do("GET", "/v1/workspaces/"+docWorkspace+"/items/"+docLakehouse+"/jobs/instances/"+url.PathEscape(bad), nil, "")
		if e := c.errorResponse(resp, b); resp.StatusCode != 404 || e.ErrorCode != "ItemNotFound" {
			t.Errorf("GET %q: %d %+v", bad, resp.StatusCode, e)
		}
	}
}

// TestFabricListHostile: a continuation token this service did not give, or a query it does
// not take, is refused in Fabric's shape; the list of another lakehouse's ids is ItemNotFound.
func TestFabricListHostile(t *testing.T) {
	f := fabricFixture(t, layoutFlat, "", nil)
	c := newDocClient(t, f)
	list := "/v1/workspaces/" + docWorkspace + "/items/" + docLakehouse + "/jobs/instances"
	good := jobKey{ms: t0.UnixMilli(), id: "0196f5a2-3c41-7d2e-9b1a-5c3e8f7a6b21"}.token()
	for _, q := range []struct {
		query  string
		status int
		code   string
	}{
		{"continuationToken=", 400, "InvalidRequest"},
		{"continuationToken=x", 400, "InvalidRequest"},
		{"continuationToken=LDEsMTAwMDAwLDA%3D", 400, "InvalidRequest"}, // Fabric's documented token: not one of ours
		{"continuationToken=" + good + "&continuationToken=" + good, 400, "InvalidRequest"},
		{"continuationToken=" + good + "%3D%3D", 400, "InvalidRequest"},
		{"continuationToken=" + jobKey{ms: -5, id: "20261201T153000Z-1a2b3c4d"}.token(), 400, "InvalidRequest"},
		{"continuationToken=" + jobKey{ms: 5, id: "../../etc"}.token(), 400, "InvalidRequest"},
		{"continuationToken=" + jobKey{ms: 5, id: "' OR 1=1 --"}.token(), 400, "InvalidRequest"},
		{"continuationToken=" + strings.Repeat("A", 5000), 400, "InvalidRequest"},
		{"jobType=TableMaintenance", 400, "InvalidRequest"},
		{"ContinuationToken=" + good, 400, "InvalidRequest"},
		{"continuationToken=" + good, 200, ""},
	} {
		resp, b := c.do("GET", list+"?"+q.query, nil, "")
		if resp.StatusCode != q.status {
			t.Errorf("?%s: %d %s, want %d", q.query, resp.StatusCode, b, q.status)
			continue
		}
		if q.code != "" {
			if e := c.errorResponse(resp, b); e.ErrorCode != q.code {
				t.Errorf("?%s: %+v", q.query, e)
			}
		}
	}
	// Get and Cancel Item Job Instance take no query.
	job := list + "/" + uuid.Must(uuid.NewV7()).String()
	for _, r := range []struct{ method, path string }{{"GET", job + "?continuationToken=" + good}, {"GET", job + "?x=1"}, {"POST", job + "/cancel?jobType=TableMaintenance"}} {
		resp, b := c.do(r.method, r.path, nil, "")
		if e := c.errorResponse(resp, b); resp.StatusCode != 400 || e.ErrorCode != "InvalidRequest" {
			t.Errorf("%s %s: %d %+v", r.method, r.path, resp.StatusCode, e)
		}
	}
	other := "5b218778-e7a5-4d73-8187-f10824047715"
	for _, p := range []string{strings.Replace(list, docLakehouse, other, 1), strings.Replace(list, docWorkspace, other, 1), strings.Replace(list, docLakehouse, "lh", 1)} {
		resp, b := c.do("GET", p, nil, "")
		if e := c.errorResponse(resp, b); resp.StatusCode != 404 || e.ErrorCode != "ItemNotFound" {
			t.Errorf("GET %s: %d %+v", p, resp.StatusCode, e)
		}
	}
}
