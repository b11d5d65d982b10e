package insight_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/insight"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/mem"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

var genNow = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// generate writes a table of 40 commits, one a day, in a memory store: appends, removes (with
// their deletion times spread over the days, as MERGE and DELETE leave them), deletion vectors,
// change data, files rewritten under a removed name, untracked files of every age, hidden
// files and folders, Hadoop checksums, and a nested table whose first file sorts before its
// _delta_log. The same seed gives the same table.
func generate(t *testing.T, seed uint64) *mem.Store {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 7))
	ctx := context.Background()
	store := mem.New("mem://bucket/table")
	const commits = 40
	at := func(v int) time.Time {
		return genNow.Add(-time.Duration(commits-v) * 24 * time.Hour).Add(time.Duration(r.IntN(3600)) * time.Second)
	}
	partitioned := r.IntN(2) == 0
	retention := []string{"interval 1 days", "interval 7 days", "interval 3 days 12 hours"}[r.IntN(3)]
	write := func(v int, when time.Time, actions ...any) {
		store.SetClock(func() time.Time { return when })
		if err := deltalog.WriteCommit(ctx, store, int64(v), actions); err != nil {
			t.Fatal(err)
		}
	}
	partCols := []string{}
	if partitioned {
		partCols = []string{"p"}
	}
	write(0, at(0),
		map[string]any{"protocol": map[string]any{"minReaderVersion": 3, "minWriterVersion": 7,
			"readerFeatures": []string{"deletionVectors"}, "writerFeatures": []string{"deletionVectors"}}},
		map[string]any{"metaData": map[string]any{"id": "gen", "format": map[string]any{"provider": "parquet", "options": map[string]string{}},
			"schemaString": `{"type":"struct","fields":[]}`, "partitionColumns": partCols,
			"configuration": map[string]string{"delta.deletedFileRetentionDuration": retention}, "createdTime": at(0).UnixMilli()}})
	type liveFile struct {
		key string
		dv  map[string]any
	}
	var live []liveFile
	for v := 1; v < commits; v++ {
		when := at(v)
		var actions []any
		for j := range 1 + r.IntN(4) {
			key := fmt.Sprintf("part-%05d-%d.parquet", v, j)
			if partitioned {
				key = fmt.Sprintf("p=%d/%s", r.IntN(4), key)
			}
			size := 100 + r.IntN(5000)
			store.PutAt(key, make([]byte, size), when)
			if r.IntN(3) == 0 {
				store.PutAt(storage.Dir(key)+"."+storage.Base(key)+".crc", []byte("crc"), when)
			}
			add := map[string]any{"path": key, "size": size, "modificationTime": when.UnixMilli(), "dataChange": true, "partitionValues": map[string]string{}}
			f := liveFile{key: key}
			if r.IntN(4) == 0 {
				f.dv = newDV(r, store, when)
				add["deletionVector"] = f.dv
			}
			live = append(live, f)
			actions = append(actions, map[string]any{"add": add})
		}
		for range r.IntN(3) {
			if len(live) < 3 {
				break
			}
			i := r.IntN(len(live))
			f := live[i]
			live = append(live[:i], live[i+1:]...)
			rm := map[string]any{"path": f.key, "deletionTimestamp": when.UnixMilli(), "dataChange": true, "size": 1}
			if f.dv != nil {
				rm["deletionVector"] = f.dv
			}
			actions = append(actions, map[string]any{"remove": rm})
			if r.IntN(6) == 0 {
				store.PutAt(f.key, []byte("written again"), genNow.Add(-time.Duration(r.IntN(96))*time.Hour))
			}
		}
		if r.IntN(4) == 0 {
			key := fmt.Sprintf("_change_data/cdc-%05d.parquet", v)
			store.PutAt(key, make([]byte, 300), when)
			actions = append(actions, map[string]any{"cdc": map[string]any{"path": key, "size": 300, "dataChange": false, "partitionValues": map[string]string{}}})
		}
		write(v, when, append(actions, map[string]any{"commitInfo": map[string]any{"timestamp": when.UnixMilli(), "operation": []string{"WRITE", "MERGE", "DELETE", "OPTIMIZE"}[r.IntN(4)]}})...)
	}
	for i := range 30 {
		age := time.Duration(r.IntN(20*24)) * time.Hour
		key := fmt.Sprintf("orphan-%d.parquet", i)
		switch r.IntN(5) {
		case 0:
			key = "_tmp/" + key
		case 1:
			key = ".hidden-" + key
		case 2:
			key = fmt.Sprintf("p=%d/%s", i%4, key)
		case 3:
			key = fmt.Sprintf("deletion_vector_00000000-0000-0000-0000-%012d.bin", i)
		}
		store.PutAt(key, make([]byte, 10+i), genNow.Add(-age))
	}
	store.PutAt("nested/0-first.parquet", []byte("n"), genNow.Add(-30*24*time.Hour))
	store.PutAt("nested/_delta_log/00000000000000000000.json", []byte("{}"), genNow.Add(-30*24*time.Hour))
	store.PutAt("nested/part-1.parquet", []byte("n"), genNow.Add(-30*24*time.Hour))
	return store
}

func newDV(r *rand.Rand, store *mem.Store, when time.Time) map[string]any {
	var b [16]byte
	for i := range b {
		b[i] = byte(r.IntN(256))
	}
	uuid := fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
	store.PutAt("deletion_vector_"+uuid+".bin", make([]byte, 40), when)
	return map[string]any{"storageType": "u", "pathOrInlineDv": z85(b), "offset": 1, "sizeInBytes": 36, "cardinality": 1}
}

// z85 encodes 16 bytes as the 20 characters of a 'u' deletion vector.
func z85(b [16]byte) string {
	const alphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"
	var out []byte
	for i := 0; i < 16; i += 4 {
		v := uint32(b[i])<<24 | uint32(b[i+1])<<16 | uint32(b[i+2])<<8 | uint32(b[i+3])
		var chunk [5]byte
		for j := 4; j >= 0; j-- {
			chunk[j] = alphabet[v%85]
			v /= 85
		}
		out = append(out, chunk[:]...)
	}
	return string(out)
}

// TestGeneratedTables checks inspect and explain on generated tables: reclaimable now, the
// forecast of every day and each what-if retention against the plans themselves; every key
// explained as the plan decides it; time travel against a vacuumed copy.
func TestGeneratedTables(t *testing.T) {
	ctx := context.Background()
	for seed := range uint64(12) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			store := generate(t, seed)
			days := 10
			r, err := insight.Inspect(ctx, store, insight.Options{Now: genNow, ForecastDays: &days, WhatIfHours: whatIfHours})
			if err != nil {
				t.Fatal(err)
			}
			p := plan(t, store, genNow, nil)
			if r.Reclaimable.Count != totals(p) {
				t.Errorf("reclaimable %+v, the plan deletes %+v", r.Reclaimable.Count, totals(p))
			}
			for _, d := range r.Forecast {
				if want := totals(plan(t, store, genNow.Add(time.Duration(d.Day)*day), nil)); d.Total != want {
					t.Errorf("forecast day %d: %+v, the plan then deletes %+v", d.Day, d.Total, want)
				}
			}
			for _, w := range r.WhatIf {
				h := w.RetentionHours
				if want := totals(plan(t, store, genNow, &h)); w.Reclaimable != want {
					t.Errorf("what-if %gh: %+v, the plan deletes %+v", h, w.Reclaimable, want)
				}
			}
			var all insight.Count
			for _, k := range store.Keys() {
				if o, err := store.Stat(ctx, k); err == nil && !o.IsDir {
					all.Files++
					all.Bytes += o.Size
				}
			}
			if got := sum(r.Files); got != all {
				t.Errorf("the categories count %+v, the store holds %+v", got, all)
			}
			if r.Files.NestedTables.Files != 3 || len(r.NestedTables) != 1 {
				t.Errorf("nested table: %+v files, %v", r.Files.NestedTables, r.NestedTables)
			}
			explainAll(t, store, p)
			timeTravel(t, seed, r)
		})
	}
}

func sum(b insight.Breakdown) insight.Count {
	var c insight.Count
	for _, x := range []insight.Count{b.Live, b.DeletionVectors, b.TombstonedInRetention, b.TombstonedExpired, b.ChangeData,
		b.Untracked, b.UnreferencedDeletionVectors, b.KeptOther, b.Hidden, b.NestedTables,
		b.DeltaLog.Commits, b.DeltaLog.Checkpoints, b.DeltaLog.Other} {
		c.Files += x.Files
		c.Bytes += x.Bytes
	}
	return c
}

// explainAll explains every key of the store and checks each verdict against the plan.
func explainAll(t *testing.T, store *mem.Store, p *vacuum.Plan) {
	t.Helper()
	keys := store.Keys()
	x, err := insight.Explain(context.Background(), store, keys, insight.ExplainOptions{Now: genNow})
	if err != nil {
		t.Fatal(err)
	}
	checkExplained(t, x, p, false)
	for _, e := range x.Paths {
		if strings.HasPrefix(e.Key, "nested/") && e.Rule != vacuum.RuleNestedTable {
			t.Errorf("%s: rule %s, want the nested table's", e.Path, e.Rule)
		}
	}
}

// timeTravel vacuums a copy at each what-if retention and checks the version the report says
// time travel still reaches.
func timeTravel(t *testing.T, seed uint64, r *insight.Report) {
	t.Helper()
	ctx := context.Background()
	for _, w := range r.WhatIf {
		store := generate(t, seed)
		h := w.RetentionHours
		if _, err := vacuum.Execute(ctx, store, plan(t, store, genNow, &h), vacuum.ExecOptions{}); err != nil {
			t.Fatal(err)
		}
		if v := w.OldestVersion; len(missingFiles(t, store, v)) > 0 {
			t.Errorf("retention %gh: version %d lost files", h, v)
		}
		if v := w.OldestVersion - 1; v >= r.OldestVersion && len(missingFiles(t, store, v)) == 0 {
			t.Errorf("retention %gh: the report says time travel reaches version %d, but version %d is whole too", h, w.OldestVersion, v)
		}
	}
}
