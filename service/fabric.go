package service

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/deltavacuum/deltavacuum/catalog"
	"github.com/deltavacuum/deltavacuum/run"
	"github.com/deltavacuum/deltavacuum/service/config"
	"github.com/deltavacuum/deltavacuum/service/runner"
	"github.com/deltavacuum/deltavacuum/service/state"
	"github.com/deltavacuum/deltavacuum/service/tables"
)

// Fabric's Table Maintenance job API, as deltavacuum serve answers it (docs/fabric.md): the
// request a pipeline or a script sends to Fabric (Background Jobs - Run On Demand Table
// Maintenance) starts a run of the runner, and Fabric's job instance (Job Scheduler - Get Item
// Job Instance) is that run, under the run's id, with Fabric's fields and statuses. Errors have
// Fabric's shape ({"errorCode", "message"}), the guard's too (failCode). A job's table is one
// the service maintains (configured, or found under a discover root) in the lakehouse the
// configuration maps the job's ids to; its VACUUM is the table's policy, at the job's
// retentionPeriod if it gives one (a one-off retention, checked as a preview's is).

// fabricRoutes are the routes of the job API: Fabric's paths, under the service's own base URL.
// The job type is given in the query (jobType=TableMaintenance) or in the path
// (…/jobs/tableMaintenance/instances, Fabric's lakehouse path, and …/jobs/TableMaintenance/
// instances, the spelling of its specification of late 2025 and of the Core API), in any case.
var fabricRoutes = []route{
	{"POST", "/v1/workspaces/{workspaceId}/lakehouses/{lakehouseId}/jobs/instances", (*Server).fabricRunQuery},
	{"POST", "/v1/workspaces/{workspaceId}/lakehouses/{lakehouseId}/jobs/{jobType}/instances", (*Server).fabricRun},
	{"POST", "/v1/workspaces/{workspaceId}/items/{lakehouseId}/jobs/instances", (*Server).fabricRunQuery},
	{"POST", "/v1/workspaces/{workspaceId}/items/{lakehouseId}/jobs/{jobType}/instances", (*Server).fabricRun},
	{"GET", "/v1/workspaces/{workspaceId}/items/{lakehouseId}/jobs/instances", (*Server).fabricList},
	{"GET", "/v1/workspaces/{workspaceId}/items/{itemId}/jobs/instances/{jobInstanceId}", (*Server).fabricJob},
	{"POST", "/v1/workspaces/{workspaceId}/items/{itemId}/jobs/instances/{jobInstanceId}/cancel", (*Server).fabricCancel},
}

// fabricPrefix starts every path of the job API.
const fabricPrefix = "/v1/"

// fabricPath: a request of the job API, answered in Fabric's shape.
func fabricPath(r *http.Request) bool {
	return strings.HasPrefix(r.URL.Path, fabricPrefix) || r.URL.Path == strings.TrimSuffix(fabricPrefix, "/")
}

// fabricBodyless: a POST of the job API that has no body and no Content-Type header at all
// (Fabric's documented Cancel Item Job Instance). A Content-Type given must be JSON, and a
// body, even one sent in chunks, needs one.
func fabricBodyless(r *http.Request) bool {
	_, typed := r.Header["Content-Type"]
	return fabricPath(r) && !typed && r.ContentLength == 0 && len(r.TransferEncoding) == 0
}

// fabricUnserved answers in Fabric's shape every request under /v1/ that no route of the job
// API serves: 405 with Allow for a method a path does not take, 404 for any other (a path
// that is not clean too, which the router would redirect elsewhere). Every other request goes
// to the router.
func (s *Server) fabricUnserved(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.EscapedPath()
		if !fabricPath(r) {
			mux.ServeHTTP(w, r)
			return
		}
		h, pattern := mux.Handler(r)
		if pattern != "" && path.Clean(p) == p {
			mux.ServeHTTP(w, r)
			return
		}
		rec := &headerRecorder{header: http.Header{}}
		h.ServeHTTP(rec, r)
		if allow := rec.header.Get("Allow"); rec.status == http.StatusMethodNotAllowed && allow != "" {
			w.Header().Set("Allow", allow)
			s.fabricError(w, r, http.StatusMethodNotAllowed, "MethodNotAllowed", fmt.Sprintf("%s %s: this path of the job API takes %s (docs/fabric.md)", r.Method, r.URL.Path, allow))
			return
		}
		s.fabricError(w, r, http.StatusNotFound, "NotFound", fmt.Sprintf("%s %s is not served: this service answers Fabric's Table Maintenance job API only (run: POST …/lakehouses/{lakehouseId}/jobs/instances?jobType=TableMaintenance; jobs: GET …/items/{lakehouseId}/jobs/instances[/{jobInstanceId}]; cancel: POST …/jobs/instances/{jobInstanceId}/cancel; docs/fabric.md)", r.Method, r.URL.Path))
	})
}

// headerRecorder keeps the status and headers the router would answer with, and drops the body.
type headerRecorder struct {
	header http.Header
	status int
}

func (h *headerRecorder) Header() http.Header         { return h.header }
func (h *headerRecorder) Write(b []byte) (int, error) { return len(b), nil }
func (h *headerRecorder) WriteHeader(status int)      { h.status = status }

// FabricJobType is the one job type of the job API.
const FabricJobType = "TableMaintenance"

// The seconds a client is told to wait: before polling a job (Retry-After of the 202 and of a
// job not ended; Fabric says 60, runs of small tables here end in a second), and before
// starting one again when the service runs all it may at once and its queue is full.
const (
	fabricPollAfter = 5
	fabricBusyAfter = 30
)

// fabricRediscoverAfter: a job naming a table the service does not know lists the lakehouse's
// discover roots again, at most this often.
const fabricRediscoverAfter = time.Minute

// The statuses of a Fabric job instance (ItemJobStatus) and its invoke types.
const (
	fabricNotStarted = "NotStarted"
	fabricInProgress = "InProgress"
	fabricCompleted  = "Completed"
	fabricFailed     = "Failed"
	fabricCancelled  = "Cancelled"
	fabricDeduped    = "Deduped"
)

// FabricError is Fabric's ErrorResponse: the body of an error, and a job's failureReason.
type FabricError struct {
	ErrorCode string `json:"errorCode"`
	Message   string `json:"message"`
	// RequestID names the request in the service's log (a random GUID, as Fabric's).
	RequestID   string `json:"requestId,omitempty"`
	IsRetriable *bool  `json:"isRetriable,omitempty"`
}

// FabricJobInstance is Fabric's ItemJobInstance: a run of the service as a job instance.
type FabricJobInstance struct {
	ID         string `json:"id"`
	ItemID     string `json:"itemId"`
	JobType    string `json:"jobType"`
	InvokeType string `json:"invokeType"`
	Status     string `json:"status"`
	// ID and RootActivityID are the run's id, a GUID (fabricJobID): it names the run's lock
	// ticket, run record and log lines.
	RootActivityID string       `json:"rootActivityId"`
	StartTimeUTC   *string      `json:"startTimeUtc"`
	EndTimeUTC     *string      `json:"endTimeUtc"`
	FailureReason  *FabricError `json:"failureReason"`
}

// fabricTime is a time as Fabric writes its jobs' (2023-04-22T06:35:00.7812154: UTC, seven
// digits of fraction, no zone).
func fabricTime(t time.Time) *string {
	s := t.UTC().Format("2006-01-02T15:04:05.0000000")
	return &s
}

// fabricState is what the job API keeps of its own: the jobs that ended without a run (the
// newest maxUnran, in memory): those it deduplicated, and queued ones that never started
// (runner_queue.go); and the size of a page of List Item Job Instances.
type fabricState struct {
	mu       sync.Mutex
	unran    map[string]unranJob
	order    []string
	pageSize int // fabricPageSize when 0
}

const maxUnran = 1000

// fabricPageSize is how many job instances a page of List Item Job Instances holds.
const fabricPageSize = 100

// unranJob is a job that ended without a run: Deduped (its table was being maintained),
// Cancelled or Failed while it waited in the queue.
type unranJob struct {
	workspace, lakehouse, table string
	created, ended              time.Time
	status                      string // fabricDeduped, fabricCancelled or fabricFailed
	reason                      FabricError
}

func (f *fabricState) add(id string, j unranJob) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.unran == nil {
		f.unran = map[string]unranJob{}
	}
	f.unran[id] = j
	f.order = append(f.order, id)
	if len(f.order) > maxUnran {
		delete(f.unran, f.order[0])
		f.order = f.order[1:]
	}
}

func (f *fabricState) find(id string) (unranJob, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	j, ok := f.unran[id]
	return j, ok
}

// of returns the jobs of lakehouse l that ended without a run, by id.
func (f *fabricState) of(l *config.Lakehouse) map[string]unranJob {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]unranJob{}
	for id, j := range f.unran {
		if j.workspace == l.WorkspaceID && j.lakehouse == l.LakehouseID {
			out[id] = j
		}
	}
	return out
}

// fabricFail answers err in Fabric's shape: the status of its kind (statusOf), and the code of
// its kind, or code when given.
func (s *Server) fabricFail(w http.ResponseWriter, r *http.Request, err error, code string) {
	status := statusOf(err)
	if code == "" {
		code = fabricCodeOf(err)
	}
	if errors.Is(err, errTooMany) {
		w.Header().Set("Retry-After", strconv.Itoa(fabricBusyAfter))
	}
	s.fabricError(w, r, status, code, err.Error())
}

// fabricCodeOf is the errorCode of an error of the runner or the tables, by its kind: Fabric's
// codes where Fabric has one for the case.
func fabricCodeOf(err error) string {
	switch kindOf(err) {
	case errInvalid:
		return "InvalidRequest"
	case errDryRunOnly:
		return "OperationNotSupportedForItem"
	case errNotFound, state.ErrNotFound:
		return "ItemNotFound"
	case ErrBusy:
		return "TableBusy"
	case errConflict:
		return "JobAlreadyCompleted"
	case errTooMany:
		return "TooManyRequestsForJobs"
	case errTable, errPlan:
		return "TableError"
	case errClosed:
		return "ServiceUnavailable"
	}
	return "UnknownError"
}

// fabricCodeOfStatus is the errorCode of a refusal of the guard, by its status.
func fabricCodeOfStatus(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return "Unauthorized"
	case http.StatusForbidden:
		return "Forbidden"
	case http.StatusUnsupportedMediaType:
		return "UnsupportedMediaType"
	case http.StatusMisdirectedRequest:
		return "MisdirectedRequest"
	case http.StatusBadRequest:
		return "InvalidRequest"
	}
	return "UnknownError"
}

// fabricError writes Fabric's ErrorResponse, redacted, with a request id the log line has too.
func (s *Server) fabricError(w http.ResponseWriter, r *http.Request, status int, code, msg string) {
	msg = s.Red.String(msg)
	e := FabricError{ErrorCode: code, Message: msg, RequestID: newGUID()}
	if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
		yes := true
		e.IsRetriable = &yes
	}
	if status >= 500 || status == http.StatusConflict || status == http.StatusTooManyRequests {
		s.Log.Warn("request failed", "method", r.Method, "path", r.URL.Path, "status", status, "errorCode", code, "requestId", e.RequestID, "error", msg)
	}
	s.writeJSON(w, status, e)
}

// newGUID returns a random (version 4) GUID.
func newGUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// fabricLakehouse is the lakehouse the request's ids name, or nil after a 404 ItemNotFound.
func (s *Server) fabricLakehouse(w http.ResponseWriter, r *http.Request, item string) *config.Lakehouse {
	ws, lh := r.PathValue("workspaceId"), r.PathValue(item)
	l, ok := s.cfg.Fabric.Lakehouse(ws, lh)
	if ok {
		return l
	}
	msg := fmt.Sprintf("no lakehouse %s in workspace %s in this service's configuration (fabric: lakehouses: maps each one's ids to its root)", lh, ws)
	if !config.ValidGUID(ws) || !config.ValidGUID(lh) {
		msg = fmt.Sprintf("no lakehouse %q in workspace %q: the workspace and the lakehouse are named by their GUIDs (8-4-4-4-12 hexadecimal digits), as Fabric shows them in the lakehouse's URL", lh, ws)
	}
	s.fabricError(w, r, http.StatusNotFound, "ItemNotFound", msg)
	return nil
}

// fabricRunRequest is the body of Run On Demand Table Maintenance.
type fabricRunRequest struct {
	ExecutionData *fabricExecutionData `json:"executionData"`
}

// fabricExecutionData is Fabric's TableMaintenanceExecutionData. optimizeSettings and a
// purgeDeletionVectors of true are read only to be refused: this service never rewrites data.
type fabricExecutionData struct {
	TableName            *string         `json:"tableName"`
	SchemaName           *string         `json:"schemaName"`
	OptimizeSettings     json.RawMessage `json:"optimizeSettings"`
	VacuumSettings       *fabricVacuum   `json:"vacuumSettings"`
	PurgeDeletionVectors *bool           `json:"purgeDeletionVectors"`
}

type fabricVacuum struct {
	RetentionPeriod *string `json:"retentionPeriod"`
}

// fabricName is a tableName (at most 256) or schemaName (128) as Fabric takes it: letters,
// digits and underscores, not digits alone.
var fabricName = regexp.MustCompile(`^[A-Za-z0-9_]+$`)

func checkFabricName(what, v string, most int) error {
	if len(v) == 0 || len(v) > most || !fabricName.MatchString(v) || strings.Trim(v, "0123456789") == "" {
		return of(errInvalid, fmt.Errorf("executionData.%s %q: Fabric's names are 1 to %d letters, digits and underscores, not digits alone", what, v, most))
	}
	return nil
}

// fabricRunQuery is the job API's POST with ?jobType=TableMaintenance.
func (s *Server) fabricRunQuery(w http.ResponseWriter, r *http.Request) {
	s.startFabricJob(w, r, true)
}

// fabricRun is POST …/jobs/{jobType}/instances: the job type is in the path.
func (s *Server) fabricRun(w http.ResponseWriter, r *http.Request) {
	s.startFabricJob(w, r, false)
}

// fabricJobType reports whether v names the job type of the job API: TableMaintenance, in any
// case (Fabric's paths spell it tableMaintenance and TableMaintenance).
func fabricJobType(v string) bool { return strings.EqualFold(v, FabricJobType) }

// fabricQuery checks the query of a job request: jobType once, TableMaintenance in any case
// (needed unless the path says it), and no other parameter; and the job type of the path.
func fabricQuery(r *http.Request, needJobType bool) (code string, err error) {
	if !needJobType {
		if v := r.PathValue("jobType"); !fabricJobType(v) {
			return "InvalidJobType", of(errInvalid, fmt.Errorf("job type %q of the path is not one this service runs: it runs %s (…/jobs/tableMaintenance/instances), the VACUUM of a table", v, FabricJobType))
		}
	}
	q := r.URL.Query()
	for k := range q {
		if k != "jobType" {
			return "InvalidRequest", of(errInvalid, fmt.Errorf("unknown query parameter %q: the job API takes jobType=%s only", k, FabricJobType))
		}
	}
	switch vals := q["jobType"]; {
	case len(vals) == 0 && needJobType:
		return "InvalidJobType", of(errInvalid, fmt.Errorf("the jobType query parameter is missing: this service runs jobType=%s", FabricJobType))
	case len(vals) > 1:
		return "InvalidJobType", of(errInvalid, fmt.Errorf("jobType is given %d times: give it once (jobType=%s)", len(vals), FabricJobType))
	case len(vals) == 1 && !fabricJobType(vals[0]):
		return "InvalidJobType", of(errInvalid, fmt.Errorf("job type %q is not one this service runs: it runs jobType=%s, the VACUUM of a table", vals[0], FabricJobType))
	}
	return "", nil
}

// startFabricJob starts the run a job request asks for: 202 with Location and Retry-After, as
// Fabric answers. A job whose table is held already (a run, an undo, a trash purge, another
// process's lock) or waits in the queue is Deduped (202 too); one that finds the service
// running maxConcurrentRuns runs waits in the runner's queue as NotStarted (202), and only a
// full queue is TooManyRequestsForJobs.
func (s *Server) startFabricJob(w http.ResponseWriter, r *http.Request, needJobType bool) {
	l := s.fabricLakehouse(w, r, "lakehouseId")
	if l == nil {
		return
	}
	if code, err := fabricQuery(r, needJobType); err != nil {
		s.fabricFail(w, r, err, code)
		return
	}
	var body fabricRunRequest
	if err := decode(r, &body); err != nil {
		s.fabricFail(w, r, err, "")
		return
	}
	ed := body.ExecutionData
	if ed == nil {
		s.fabricFail(w, r, of(errInvalid, errors.New(`executionData is missing: send {"executionData": {"tableName": …, "vacuumSettings": {}}}`)), "")
		return
	}
	if ed.OptimizeSettings != nil && string(ed.OptimizeSettings) != "null" { // null: left empty, as Fabric says to skip it
		s.fabricFail(w, r, of(errInvalid, errors.New("executionData.optimizeSettings is refused: this service runs VACUUM only and never rewrites data (no OPTIMIZE, V-Order or Z-Order); send vacuumSettings alone, and run OPTIMIZE in Fabric")), "OperationNotSupportedForItem")
		return
	}
	if ed.PurgeDeletionVectors != nil && *ed.PurgeDeletionVectors {
		s.fabricFail(w, r, of(errInvalid, errors.New("executionData.purgeDeletionVectors is refused: purging deletion vectors rewrites data files (REORG TABLE APPLY (PURGE)), which this service never does; run it in Fabric, then VACUUM here")), "OperationNotSupportedForItem")
		return
	}
	if ed.VacuumSettings == nil {
		s.fabricFail(w, r, of(errInvalid, errors.New(`executionData.vacuumSettings is missing: without it Fabric's job skips VACUUM, and VACUUM is all this service runs; send "vacuumSettings": {} for the table's retention, or {"retentionPeriod": "7:00:00:00"}`)), "")
		return
	}
	if ed.TableName == nil {
		s.fabricFail(w, r, of(errInvalid, errors.New("executionData.tableName is missing: name the table as Fabric shows it (and schemaName in a lakehouse with schemas)")), "")
		return
	}
	schema := ""
	if err := checkFabricName("tableName", *ed.TableName, 256); err != nil {
		s.fabricFail(w, r, err, "")
		return
	}
	if ed.SchemaName != nil {
		if err := checkFabricName("schemaName", *ed.SchemaName, 128); err != nil {
			s.fabricFail(w, r, err, "")
			return
		}
		schema = *ed.SchemaName
	}
	var hours *float64
	period := ""
	if rp := ed.VacuumSettings.RetentionPeriod; rp != nil {
		h, err := retentionPeriodHours(*rp)
		if err != nil {
			s.fabricFail(w, r, of(errInvalid, fmt.Errorf("executionData.vacuumSettings.retentionPeriod: %w", err)), "InvalidRetentionPeriod")
			return
		}
		hours, period = &h, *rp
	}
	t, err := s.fabricTable(r.Context(), l, schema, *ed.TableName)
	if err != nil {
		s.fabricFail(w, r, err, "")
		return
	}
	a := runner.Ask{Requester: state.ByFabric, RetainHours: hours, MaxRunning: s.cfg.MaxConcurrentRuns}
	if hours != nil {
		a.OneOffFrom = runner.OneOffFabric
	}
	refused := func(err error) {
		if period != "" && errors.Is(err, errInvalid) {
			s.fabricFail(w, r, fmt.Errorf("executionData.vacuumSettings.retentionPeriod %q: %w", period, err), "InvalidRetentionPeriod")
			return
		}
		s.fabricFail(w, r, err, "")
	}
	var id string
	if waiting := s.runner.QueuedFor(t.Cfg.ID); waiting != "" {
		err = fmt.Errorf("table %s: %w: job %s of it waits to start", t.Cfg.ID, ErrBusy, fabricJobID(waiting))
	} else {
		id, err = s.runner.Start(r.Context(), t, a)
	}
	switch {
	case errors.Is(err, ErrBusy):
		// Fabric's Deduped: a job of the table is in progress, and this one is skipped.
		id = run.NewID(s.Now())
		s.fabric.add(id, unranJob{workspace: l.WorkspaceID, lakehouse: l.LakehouseID, table: t.Cfg.ID, created: s.Now(), ended: s.Now(), status: fabricDeduped,
			reason: FabricError{ErrorCode: fabricDeduped, Message: s.Red.String(fmt.Sprintf("table %s was being maintained, and this job was skipped: %s", t.Cfg.ID, err))}})
		s.Log.Info("fabric job deduplicated: the table is being maintained", "job", id, "table", t.Cfg.ID, "why", s.Red.String(err.Error()))
	case errors.Is(err, errTooMany):
		// Fabric's NotStarted: the job waits for a slot. What start would refuse at once (the
		// retention, the table) is refused now, not when its turn comes.
		if err := s.runner.Check(r.Context(), t, a); err != nil {
			refused(err)
			return
		}
		id = run.NewID(s.Now())
		if err := s.runner.Enqueue(s.queuedJob(id, l, t, a)); err != nil {
			s.fabricFail(w, r, err, "")
			return
		}
		s.Log.Info("fabric job queued: the service runs maxConcurrentRuns runs", "job", id, "table", t.Cfg.ID, "workspace", l.WorkspaceID, "lakehouse", l.LakehouseID)
	case err != nil:
		refused(err)
		return
	default:
		s.Log.Info("fabric job started", "job", id, "table", t.Cfg.ID, "workspace", l.WorkspaceID, "lakehouse", l.LakehouseID)
	}
	w.Header().Set("Location", s.fabricJobURL(r, l, fabricJobID(id)))
	w.Header().Set("Retry-After", strconv.Itoa(fabricPollAfter))
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusAccepted)
}

// queuedJob is the queued start of job id of table t of lakehouse l: one that never runs ends
// as a job without a run, Deduped when its table was held when its turn came, Cancelled when
// cancelled, Failed otherwise.
func (s *Server) queuedJob(id string, l *config.Lakehouse, t *tables.Table, a runner.Ask) *runner.Queued {
	created := s.Now()
	return &runner.Queued{ID: id, Table: t, Ask: a, At: created, Skipped: func(err error) {
		j := unranJob{workspace: l.WorkspaceID, lakehouse: l.LakehouseID, table: t.Cfg.ID, created: created, ended: s.Now()}
		msg := s.Red.String(err.Error())
		switch {
		case errors.Is(err, ErrBusy):
			j.status, j.reason = fabricDeduped, FabricError{ErrorCode: fabricDeduped, Message: fmt.Sprintf("table %s was being maintained when this job's turn came, and the job was skipped: %s", t.Cfg.ID, msg)}
		case errors.Is(err, errCancelledQueued):
			j.status, j.reason = fabricCancelled, FabricError{ErrorCode: "RunCancelled", Message: fmt.Sprintf("%s: the job was cancelled while it waited for a slot; nothing ran", runner.CancelledByRequest)}
		default:
			j.status, j.reason = fabricFailed, FabricError{ErrorCode: "RunFailed", Message: fmt.Sprintf("the job waited for a slot and could not start: %s", msg)}
		}
		s.fabric.add(id, j)
	}}
}

// fabricJobURL is the URL of job id of lakehouse l: under the configured baseUrl, or the
// request's own scheme and Host.
func (s *Server) fabricJobURL(r *http.Request, l *config.Lakehouse, id string) string {
	return s.fabricBase(r) + "/v1/workspaces/" + l.WorkspaceID + "/items/" + l.LakehouseID + "/jobs/instances/" + id
}

// fabricTable is the table of lakehouse l a job names (tableName, and schemaName), among the
// tables the service maintains; a name it does not know lists the lakehouse's discover roots
// again first (at most once a minute). No such table is errNotFound; two, errInvalid.
func (s *Server) fabricTable(ctx context.Context, l *config.Lakehouse, schema, name string) (*tables.Table, error) {
	find := func() []*tables.Table {
		var out []*tables.Table
		for _, t := range s.tables.All() {
			if lt, ok := lakehouseTableOf(l, t.Cfg); ok && lt.Matches(schema, name) {
				out = append(out, t)
			}
		}
		return out
	}
	found := find()
	if len(found) == 0 && s.disc.RefreshAt(ctx, l.Root, s.Now(), fabricRediscoverAfter) {
		found = find()
	}
	full := catalog.LakehouseTable{Schema: schema, Table: name}.Name()
	switch len(found) {
	case 0:
		return nil, of(errNotFound, fmt.Errorf("no table %s in lakehouse %s that this service maintains: it maintains the tables of its configuration and those its discover roots find (a discover entry with root: %s finds every table of the lakehouse); GET /api/tables lists them", full, l.LakehouseID, l.Root))
	case 1:
		return found[0], nil
	}
	ids := make([]string, len(found))
	for i, t := range found {
		ids[i] = t.Cfg.ID
	}
	return nil, of(errInvalid, fmt.Errorf("table %s of lakehouse %s is more than one table of this service (%s): names are case-insensitive, and dbo's tables may be named without their schema; give the schemaName, or keep one of them in the configuration", full, l.LakehouseID, strings.Join(ids, ", ")))
}

// lakehouseTableOf returns the table of lakehouse l that the configured or discovered table
// tc is, named as Fabric shows it: a table whose location is Tables/<table> or
// Tables/<schema>/<table> below the lakehouse's root (however spelled: config.LocationKey), or
// one given by name with the lakehouse's root as its warehouse.
func lakehouseTableOf(l *config.Lakehouse, tc *config.Table) (catalog.LakehouseTable, bool) {
	root := config.LocationKey(l.Root)
	if tc.Path != "" {
		rel, ok := strings.CutPrefix(config.LocationKey(tc.Path), root+"/")
		if !ok {
			return catalog.LakehouseTable{}, false
		}
		return catalog.LakehouseTableAt(rel)
	}
	if tc.Warehouse == "" || config.LocationKey(tc.Warehouse) != root {
		return catalog.LakehouseTable{}, false
	}
	parts := strings.Split(tc.Name, ".")
	switch len(parts) {
	case 1:
		return catalog.LakehouseTable{Table: parts[0]}, true
	case 2:
		return catalog.LakehouseTable{Schema: parts[0], Table: parts[1]}, true
	case 3: // catalog.schema.table: the catalog is not part of the lakehouse's layout
		return catalog.LakehouseTable{Schema: parts[1], Table: parts[2]}, true
	}
	return catalog.LakehouseTable{}, false
}

// fabricJob is Get Item Job Instance: a run of a table of the lakehouse, a job that waits for
// a slot, or one that ended without a run, as Fabric's job instance.
func (s *Server) fabricJob(w http.ResponseWriter, r *http.Request) {
	l := s.fabricLakehouse(w, r, "itemId")
	if l == nil {
		return
	}
	if len(r.URL.Query()) > 0 {
		s.fabricFail(w, r, of(errInvalid, errors.New("a query parameter: Get Item Job Instance takes none")), "InvalidRequest")
		return
	}
	job, err := s.fabricInstance(r.Context(), l, r.PathValue("jobInstanceId"))
	if err != nil {
		s.fabricFail(w, r, err, "")
		return
	}
	switch job.Status {
	case fabricNotStarted, fabricInProgress:
		w.Header().Set("Retry-After", strconv.Itoa(fabricPollAfter))
	}
	s.writeJSON(w, http.StatusOK, job)
}

// fabricCancel is Cancel Item Job Instance: the run stops after its current batch of deletes
// and ends Cancelled; a job that waits for a slot leaves the queue, Cancelled, having run
// nothing. Fabric's client sends no body and no Content-Type (the guard lets a body-less POST
// of the job API through); a body, if sent, must be an empty JSON object.
func (s *Server) fabricCancel(w http.ResponseWriter, r *http.Request) {
	l := s.fabricLakehouse(w, r, "itemId")
	if l == nil {
		return
	}
	if len(r.URL.Query()) > 0 {
		s.fabricFail(w, r, of(errInvalid, errors.New("a query parameter: Cancel Item Job Instance takes none")), "InvalidRequest")
		return
	}
	var body struct{}
	if err := decode(r, &body); err != nil {
		s.fabricFail(w, r, err, "")
		return
	}
	job, err := s.fabricInstance(r.Context(), l, r.PathValue("jobInstanceId"))
	if err != nil {
		s.fabricFail(w, r, err, "")
		return
	}
	switch job.Status {
	case fabricDeduped:
		s.fabricFail(w, r, of(errConflict, fmt.Errorf("job %s was deduplicated: it never ran, and there is nothing to cancel", job.ID)), "JobAlreadyCompleted")
		return
	case fabricCompleted, fabricFailed, fabricCancelled:
		s.fabricFail(w, r, of(errConflict, fmt.Errorf("job %s has ended (%s): there is nothing to cancel", job.ID, job.Status)), "JobAlreadyCompleted")
		return
	}
	run, _ := runIDOfJob(job.ID)
	if !s.runner.CancelQueued(run) {
		if err := s.runner.Cancel(r.Context(), run); err != nil {
			s.fabricFail(w, r, err, "")
			return
		}
	}
	w.Header().Set("Location", s.fabricJobURL(r, l, job.ID))
	w.Header().Set("Retry-After", strconv.Itoa(fabricPollAfter))
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusAccepted)
}

// fabricInstance is job id of lakehouse l: a job that waits for a slot, one that ended without
// a run, or a run of one of its tables (started through any API or by the schedule), looked
// for in that order (a queued job records what became of it before it leaves the queue).
// Anything else is errNotFound.
func (s *Server) fabricInstance(ctx context.Context, l *config.Lakehouse, jobID string) (FabricJobInstance, error) {
	notFound := of(errNotFound, fmt.Errorf("no job instance %q of lakehouse %s", jobID, l.LakehouseID))
	id, ok := runIDOfJob(jobID)
	if !ok {
		return FabricJobInstance{}, notFound
	}
	if q, ok := s.runner.Queued(id); ok {
		if _, ok := lakehouseTableOf(l, q.Table.Cfg); !ok {
			return FabricJobInstance{}, notFound
		}
		return queuedInstance(q, l), nil
	}
	if j, ok := s.fabric.find(id); ok {
		if j.workspace != l.WorkspaceID || j.lakehouse != l.LakehouseID {
			return FabricJobInstance{}, notFound
		}
		return unranInstance(id, j, l), nil
	}
	d, err := s.runner.Run(ctx, id)
	if errors.Is(err, state.ErrNotFound) {
		return FabricJobInstance{}, notFound
	}
	if err != nil {
		return FabricJobInstance{}, err
	}
	t, ok := s.tables.Lookup(d.Table)
	if !ok {
		return FabricJobInstance{}, notFound
	}
	if _, ok := lakehouseTableOf(l, t.Cfg); !ok {
		return FabricJobInstance{}, notFound
	}
	return fabricInstanceOf(d, l), nil
}

// queuedInstance is a job that waits for a slot: NotStarted, since it was accepted.
func queuedInstance(q runner.Queued, l *config.Lakehouse) FabricJobInstance {
	id := fabricJobID(q.ID)
	return FabricJobInstance{ID: id, ItemID: l.LakehouseID, JobType: FabricJobType, InvokeType: "Manual", Status: fabricNotStarted,
		RootActivityID: id, StartTimeUTC: fabricTime(q.At)}
}

// unranInstance is a job that ended without a run.
func unranInstance(id string, j unranJob, l *config.Lakehouse) FabricJobInstance {
	reason := j.reason
	return FabricJobInstance{ID: id, ItemID: l.LakehouseID, JobType: FabricJobType, InvokeType: "Manual", Status: j.status,
		RootActivityID: id, StartTimeUTC: fabricTime(j.created), EndTimeUTC: fabricTime(j.ended), FailureReason: &reason}
}

// fabricInstanceOf is run d of a table of lakehouse l as Fabric's job instance: its status
// from the run's one state (planned is NotStarted: nothing is deleted before the run record is
// written), a run the service was asked to cancel through the API that then failed Cancelled, one
// whose record cannot be read Failed (its failureReason says so); InProgress while the service
// has not seen to its end.
func fabricInstanceOf(d runner.RunDoc, l *config.Lakehouse) FabricJobInstance {
	return jobInstance(d, d.Cancelled(), l)
}

// jobInstance is fabricInstanceOf, with cancelled why the service asked the run to stop.
func jobInstance(d runner.RunDoc, cancelled string, l *config.Lakehouse) FabricJobInstance {
	id := fabricJobID(d.ID)
	j := FabricJobInstance{ID: id, ItemID: l.LakehouseID, JobType: FabricJobType, InvokeType: "Manual", RootActivityID: id,
		StartTimeUTC: fabricTime(d.Started)}
	if d.Trigger == state.BySchedule {
		j.InvokeType = "Scheduled"
	}
	if d.Ended != nil {
		j.EndTimeUTC = fabricTime(*d.Ended)
	}
	switch d.State {
	case run.StatePlanned:
		j.Status = fabricNotStarted
	case run.StateRunning:
		j.Status = fabricInProgress
	case run.StateCompleted, run.StatePartiallyUndone, run.StateUndone:
		j.Status = fabricCompleted
	default: // failed; unreadable: nothing says the run completed
		j.Status = fabricFailed
	}
	if j.Status == fabricFailed && cancelled == runner.CancelledByRequest {
		j.Status = fabricCancelled
	}
	// The run's record may say it ended a moment before the service has seen to its end and
	// released its table: until then the job is in progress, so that a client that saw it end
	// and starts the next job is never refused for the slot it still held.
	if d.Status == run.StatusRunning && j.Status != fabricNotStarted {
		j.Status, j.EndTimeUTC = fabricInProgress, nil
	}
	switch j.Status {
	case fabricFailed:
		msg := d.Error
		if msg == "" {
			msg = d.StateDetail
		}
		j.FailureReason = &FabricError{ErrorCode: "RunFailed", Message: msg}
	case fabricCancelled:
		j.FailureReason = &FabricError{ErrorCode: "RunCancelled", Message: d.Error}
	}
	return j
}
