package vacuum

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/internal/checkpointwriter"
	"github.com/deltavacuum/deltavacuum/storage/mem"
)

// now is the clock of every rule test.
var now = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

const day = 24 * time.Hour

// table builds a Delta table in an in-memory store, one commit and one file at a time.
type table struct {
	t       testing.TB
	store   *mem.Store
	version int64
}

type tableSpec struct {
	partitionColumns []string
	configuration    map[string]string
	protocol         map[string]any
	location         string // "" is mem://bucket/table
}

func newTable(t testing.TB, spec tableSpec) *table {
	t.Helper()
	if spec.location == "" {
		spec.location = "mem://bucket/table"
	}
	tb := &table{t: t, store: mem.New(spec.location), version: -1}
	tb.store.SetClock(func() time.Time { return now.Add(-30 * day) })
	if spec.protocol == nil {
		spec.protocol = map[string]any{"minReaderVersion": 1, "minWriterVersion": 2}
	}
	if spec.configuration == nil {
		spec.configuration = map[string]string{}
	}
	if spec.partitionColumns == nil {
		spec.partitionColumns = []string{}
	}
	tb.commit(
		map[string]any{"protocol": spec.protocol},
		map[string]any{"metaData": map[string]any{
			"id": "test-table", "format": map[string]any{"provider": "parquet", "options": map[string]string{}},
			"schemaString": `{"type":"struct","fields":[]}`, "partitionColumns": spec.partitionColumns,
			"configuration": spec.configuration, "createdTime": now.Add(-30 * day).UnixMilli()}},
	)
	return tb
}

func (tb *table) commit(actions ...any) {
	tb.t.Helper()
	tb.version++
	if err := deltalog.WriteCommit(context.Background(), tb.store, tb.version, actions); err != nil {
		tb.t.Fatal(err)
	}
}

// file creates a data file of the given age.
func (tb *table) file(key string, age time.Duration) {
	tb.store.PutAt(key, []byte("data of "+key), now.Add(-age))
}

// dir creates a directory marker of the given age.
func (tb *table) dir(key string, age time.Duration) {
	tb.store.PutAt(key+"/", nil, now.Add(-age))
}

func (tb *table) planner(opts Options) (*Planner, error) {
	if opts.Now.IsZero() {
		opts.Now = now
	}
	return NewPlanner(context.Background(), tb.store, opts)
}

func (tb *table) plan(opts Options) *Plan {
	tb.t.Helper()
	p, err := tb.planner(opts)
	if err != nil {
		tb.t.Fatalf("planning: %v", err)
	}
	plan, err := p.Plan(context.Background())
	if err != nil {
		tb.t.Fatalf("planning: %v", err)
	}
	return plan
}

func add(path string) map[string]any {
	return map[string]any{"add": map[string]any{"path": path, "size": 1, "modificationTime": 0, "dataChange": true, "partitionValues": map[string]string{}}}
}

func addDV(path string, dv map[string]any) map[string]any {
	a := add(path)
	a["add"].(map[string]any)["deletionVector"] = dv
	return a
}

func remove(path string, deletedAgo time.Duration) map[string]any {
	return map[string]any{"remove": map[string]any{"path": path, "deletionTimestamp": now.Add(-deletedAgo).UnixMilli(), "dataChange": true}}
}

func removeDV(path string, deletedAgo time.Duration, dv map[string]any) map[string]any {
	r := remove(path, deletedAgo)
	r["remove"].(map[string]any)["deletionVector"] = dv
	return r
}

func removeNoTimestamp(path string) map[string]any {
	return map[string]any{"remove": map[string]any{"path": path, "dataChange": true}}
}

func cdc(path string) map[string]any {
	return map[string]any{"cdc": map[string]any{"path": path, "size": 1, "dataChange": false, "partitionValues": map[string]string{}}}
}

func dvU(prefix, z85 string) map[string]any {
	return map[string]any{"storageType": "u", "pathOrInlineDv": prefix + z85, "offset": 1, "sizeInBytes": 36, "cardinality": 2}
}

func hours(h float64) *float64 { return &h }

// retain0 is RETAIN 0 HOURS with the safety check off.
var retain0 = Options{RetainHours: hours(0), DisableRetentionCheck: true}

// deleted returns the planned files as path -> reason.
func deleted(plan *Plan) map[string]Reason {
	m := map[string]Reason{}
	for _, f := range plan.Files.MustCollect() {
		m[f.Path] = f.Reason
	}
	return m
}

func dirs(plan *Plan) []string {
	out := []string{}
	for _, d := range plan.Dirs {
		out = append(out, d.Path)
	}
	sort.Strings(out)
	return out
}

// checkpointWith writes a classic checkpoint of version v holding the table's protocol and
// metaData and the adds of paths, then deletes the commits up to v, as a log cleanup does.
func (tb *table) checkpointWith(v int64, paths ...string) {
	tb.t.Helper()
	actions := []*deltalog.Action{
		{Protocol: &deltalog.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}},
		{Metadata: &deltalog.Metadata{ID: "test-table", Format: deltalog.Format{Provider: "parquet", Options: map[string]string{}},
			SchemaString: `{"type":"struct","fields":[]}`, PartitionColumns: []string{}, Configuration: map[string]string{}}},
	}
	for _, p := range paths {
		actions = append(actions, &deltalog.Action{Add: &deltalog.Add{Path: p, Size: 1, DataChange: true, PartitionValues: map[string]string{}}})
	}
	var buf bytes.Buffer
	if err := checkpointwriter.Write(&buf, slices.Values(actions)); err != nil {
		tb.t.Fatal(err)
	}
	tb.store.PutAt(fmt.Sprintf("%s%020d.checkpoint.parquet", deltalog.LogDir, v), buf.Bytes(), now.Add(-30*day))
	for i := int64(0); i <= v; i++ {
		if _, err := tb.store.Delete(context.Background(), []string{deltalog.CommitKey(i)}); err != nil {
			tb.t.Fatal(err)
		}
	}
}
