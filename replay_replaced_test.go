package deltavacuum

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/mem"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// TestVacuumFromSnapshotOfAReplacedTable: a snapshot handed to a run (VacuumOptions.From, as
// the service passes the one its policy read) that was read before the table was deleted and
// written again at its location must not be advanced by the new log's commits: the new
// table's live files added up to the old snapshot's version would be taken for untracked and
// deleted. The run is refused, with nothing deleted.
func TestVacuumFromSnapshotOfAReplacedTable(t *testing.T) {
	ctx := context.Background()
	st := mem.New("mem://bucket/table")
	old := time.Now().Add(-30 * 24 * time.Hour)
	st.SetClock(func() time.Time { return old })
	meta := map[string]any{"metaData": map[string]any{"id": "t", "format": map[string]any{"provider": "parquet"},
		"schemaString": `{"type":"struct","fields":[]}`, "partitionColumns": []string{}, "configuration": map[string]string{}}}
	proto := map[string]any{"protocol": map[string]any{"minReaderVersion": 1, "minWriterVersion": 2}}
	writeOther(t, st, 0, proto, meta, readd("old-a.parquet"))
	writeOther(t, st, 1, readd("old-b.parquet"))
	from, err := deltalog.Load(ctx, st)
	if err != nil {
		t.Fatal(err)
	}

	// The table is dropped and written again: live.parquet is live from its version 1 on.
	if _, err := st.Delete(ctx, []string{deltalog.CommitKey(0), deltalog.CommitKey(1), "old-a.parquet", "old-b.parquet"}); err != nil {
		t.Fatal(err)
	}
	st.SetClock(time.Now)
	writeOther(t, st, 0, proto, meta)
	writeOther(t, st, 1, readd("live.parquet"), readd("live-too.parquet"))
	writeOther(t, st, 2, readd("newest.parquet"))
	for _, k := range []string{"live.parquet", "live-too.parquet", "newest.parquet"} {
		st.PutAt(k, []byte(k), old)
	}

	for _, dry := range []bool{true, false} {
		opts := VacuumOptions{DryRun: dry, From: from, NoRunRecord: true}
		opts.RetainHours, opts.DisableRetentionCheck = new(float64), true
		res, err := OpenStore(st).Vacuum(ctx, opts)
		if err == nil {
			t.Errorf("dry run %v: planned from the old table's state advanced by the new log: deletes %v", dry, filesOf(res))
		} else if !errors.Is(err, deltalog.ErrCorrupt) {
			t.Errorf("dry run %v: got %v, want the replaced log refused", dry, err)
		}
	}
	for _, k := range []string{"live.parquet", "live-too.parquet", "newest.parquet"} {
		if _, err := st.Stat(ctx, k); errors.Is(err, storage.ErrNotExist) {
			t.Errorf("the live file %s was deleted", k)
		}
	}
}

func filesOf(res *vacuum.Result) []string {
	var out []string
	if res != nil {
		for _, f := range res.Files.MustCollect() {
			out = append(out, f.Path)
		}
	}
	return out
}
