package service

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"github.com/deltavacuum/deltavacuum/run"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/deltavacuum/deltavacuum/service/config"
)

// The ids of job instances, and List Item Job Instances.
//
// A job instance's id is its run's id: a version 7 UUID (run.NewID), a GUID as Fabric's
// specification declares every job instance id and as typed clients (.NET Guid, Go uuid.Parse,
// generated SDKs) insist. Runs of earlier builds have ids that are no GUIDs
// (20261201T153000Z-1a2b3c4d, and serve- before one of those); the job API shows each as a
// version 8 GUID that carries it whole (legacyJobID), and reads it back (runIDOfJob): one id
// per run everywhere, no table of ids to keep.

// serveFlag marks, in a legacy job id, a run id that starts with serve-.
const serveFlag = 1

// fabricJobID is the job instance id of run id (run ids are read by run.ValidID).
func fabricJobID(id string) string {
	if legacy, ok := legacyJobID(id); ok {
		return legacy
	}
	return id
}

// legacyJobID is the version 8 GUID of a run id of the older form: the second it carries, in
// milliseconds, in the first 48 bits (as a version 7 UUID's, so that it sorts with them), the
// flag serve- in the 12 bits after the version, the variant, and its 8 hex digits in the last
// 32 bits; the bits between are zero.
func legacyJobID(id string) (string, bool) {
	flag := byte(0)
	if rest, ok := strings.CutPrefix(id, "serve-"); ok {
		id, flag = rest, serveFlag
	}
	if !run.ValidID(id) || config.ValidGUID(id) {
		return "", false
	}
	at, ok := run.IDTime(id)
	suffix, err := hex.DecodeString(id[len(id)-8:])
	if !ok || err != nil || at.Before(time.Unix(0, 0)) {
		return "", false
	}
	var b [16]byte
	ms := at.UnixMilli()
	for i := 5; i >= 0; i-- {
		b[i] = byte(ms)
		ms >>= 8
	}
	b[6], b[7], b[8] = 0x80, flag, 0x80
	copy(b[12:], suffix)
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:], true
}

// runIDOfJob is the run id a job instance id names: a run id itself (a GUID in any case, or an
// id of the older form, which the Location of an earlier build named), or the legacy GUID of
// one. False for anything else.
func runIDOfJob(job string) (string, bool) {
	if run.ValidID(job) {
		return job, true
	}
	if rest, ok := strings.CutPrefix(job, "serve-"); ok && run.ValidID(rest) && !config.ValidGUID(rest) {
		return job, true
	}
	if !config.ValidGUID(job) {
		return "", false
	}
	g := strings.ToLower(job)
	if run.ValidID(g) {
		return g, true
	}
	b, err := hex.DecodeString(strings.ReplaceAll(g, "-", ""))
	if err != nil || len(b) != 16 || b[6] != 0x80 || b[7] > serveFlag || b[8] != 0x80 || b[9]|b[10]|b[11] != 0 {
		return "", false
	}
	var ms int64
	for _, x := range b[:6] {
		ms = ms<<8 | int64(x)
	}
	if ms%1000 != 0 {
		return "", false
	}
	id := time.UnixMilli(ms).UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[12:])
	if b[7] == serveFlag {
		id = "serve-" + id
	}
	if legacy, ok := legacyJobID(id); !ok || legacy != g {
		return "", false
	}
	return id, true
}

// jobKey orders the job instances of a list: newest first, by the time the job started (a
// run's start, the time a job without a run was accepted), then by id.
type jobKey struct {
	ms int64
	id string // the run's id
}

func (k jobKey) before(o jobKey) bool { return k.ms < o.ms || (k.ms == o.ms && k.id < o.id) }

// continuationToken is the key of the last job of a page, for the next: opaque to a client.
func (k jobKey) token() string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(k.ms, 10) + "_" + k.id))
}

// jobKeyOf reads a continuation token; false for one this service did not give.
func jobKeyOf(token string) (jobKey, bool) {
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(token) > 200 {
		return jobKey{}, false
	}
	msText, id, ok := strings.Cut(string(b), "_")
	ms, err := strconv.ParseInt(msText, 10, 64)
	if !ok || err != nil || ms < 0 || strconv.FormatInt(ms, 10) != msText {
		return jobKey{}, false
	}
	if run, ok := runIDOfJob(id); !ok || run != id {
		return jobKey{}, false
	}
	return jobKey{ms: ms, id: id}, true
}

// ItemJobInstances is Fabric's page of job instances.
type ItemJobInstances struct {
	Value             []FabricJobInstance `json:"value"`
	ContinuationToken string              `json:"continuationToken,omitempty"`
	ContinuationURI   string              `json:"continuationUri,omitempty"`
}

// fabricList is List Item Job Instances: every job of the lakehouse, newest first, a page at a
// time (continuationToken and continuationUri name the next page, and are left out on the
// last): the runs of its tables (started through any API or by the schedule), the jobs that
// wait for a slot, and those that ended without a run.
func (s *Server) fabricList(w http.ResponseWriter, r *http.Request) {
	l := s.fabricLakehouse(w, r, "lakehouseId")
	if l == nil {
		return
	}
	q := r.URL.Query()
	after := jobKey{ms: -1}
	for k, vals := range q {
		switch {
		case k != "continuationToken":
			s.fabricFail(w, r, of(errInvalid, fmt.Errorf("unknown query parameter %q: List Item Job Instances takes continuationToken only", k)), "InvalidRequest")
			return
		case len(vals) != 1:
			s.fabricFail(w, r, of(errInvalid, fmt.Errorf("continuationToken is given %d times: give the one of the page before, once", len(vals))), "InvalidRequest")
			return
		}
		key, ok := jobKeyOf(vals[0])
		if !ok {
			s.fabricFail(w, r, of(errInvalid, fmt.Errorf("continuationToken %q is not one this service gave: follow the continuationUri of the page before, or list from the start without it", vals[0])), "InvalidRequest")
			return
		}
		after = key
	}
	page, next, err := s.fabricJobs(r.Context(), l, after)
	if err != nil {
		s.fabricFail(w, r, err, "")
		return
	}
	out := ItemJobInstances{Value: page}
	if next != nil {
		out.ContinuationToken = next.token()
		out.ContinuationURI = s.fabricBase(r) + "/v1/workspaces/" + l.WorkspaceID + "/items/" + l.LakehouseID + "/jobs/instances?continuationToken=" + url.QueryEscape(out.ContinuationToken)
	}
	s.writeJSON(w, http.StatusOK, out)
}

// fabricJobs is a page of the jobs of lakehouse l that come after the key after (ms -1: from
// the newest), and the key to go on from when more follow.
func (s *Server) fabricJobs(ctx context.Context, l *config.Lakehouse, after jobKey) ([]FabricJobInstance, *jobKey, error) {
	size := s.fabric.pageSize
	if size <= 0 {
		size = fabricPageSize
	}
	first := after.ms < 0
	within := func(k jobKey) bool { return first || k.before(after) }
	var ids []string
	for _, t := range s.tables.All() {
		if _, ok := lakehouseTableOf(l, t.Cfg); ok {
			ids = append(ids, t.Cfg.ID)
		}
	}
	type item struct {
		key jobKey
		job func() FabricJobInstance
		run int // index in runs, -1 for a job without a run
	}
	var items []item
	for _, q := range s.runner.Waiting() {
		if _, ok := lakehouseTableOf(l, q.Table.Cfg); ok {
			if k := (jobKey{q.At.UnixMilli(), q.ID}); within(k) {
				items = append(items, item{key: k, job: func() FabricJobInstance { return queuedInstance(q, l) }, run: -1})
			}
		}
	}
	for id, j := range s.fabric.of(l) {
		if k := (jobKey{j.created.UnixMilli(), id}); within(k) {
			items = append(items, item{key: k, job: func() FabricJobInstance { return unranInstance(id, j, l) }, run: -1})
		}
	}
	beforeMS, beforeID := after.ms, after.id
	if first {
		beforeID = ""
	}
	runs, err := s.runner.RunsBefore(ctx, ids, beforeMS, beforeID, size+1)
	if err != nil {
		return nil, nil, err
	}
	for i, sr := range runs {
		items = append(items, item{key: jobKey{sr.Asked.UnixMilli(), sr.ID}, run: i})
	}
	slices.SortFunc(items, func(a, b item) int {
		switch {
		case b.key.before(a.key):
			return -1
		case a.key.before(b.key):
			return 1
		}
		return 0
	})
	var next *jobKey
	if len(items) > size {
		items = items[:size]
		k := items[size-1].key
		next = &k
	}
	var pageRuns []int
	for _, it := range items {
		if it.run >= 0 {
			pageRuns = append(pageRuns, it.run)
		}
	}
	docs := s.runner.Docs(ctx, pick(runs, pageRuns))
	out := make([]FabricJobInstance, 0, len(items))
	d := 0
	for _, it := range items {
		if it.run < 0 {
			out = append(out, it.job())
			continue
		}
		out = append(out, fabricInstanceOf(docs[d], l))
		d++
	}
	return out, next, nil
}

// pick returns the elements of xs at the indexes given, in their order.
func pick[T any](xs []T, idx []int) []T {
	out := make([]T, len(idx))
	for i, j := range idx {
		out[i] = xs[j]
	}
	return out
}

// fabricBase is the base URL of the job API's links: the configured baseUrl, or the request's
// own scheme and Host.
func (s *Server) fabricBase(r *http.Request) string {
	if base := s.cfg.Fabric.BaseURL; base != "" {
		return base
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}
