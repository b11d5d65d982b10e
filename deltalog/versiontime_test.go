package deltalog

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/mem"
)

// TestVersionTimesOneRule (issue 36, item 6): history and inspect's what-if table showed
// different times for one version: History took the commitInfo's timestamp (the writer's clock
// when it began), the horizon the commit file's time. One rule now, Spark's: the file's
// modification time, made strictly increasing, unless the table has in-commit timestamps on.
func TestVersionTimesOneRule(t *testing.T) {
	ctx := context.Background()
	base := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, ict := range []bool{false, true} {
		t.Run(fmt.Sprint("ict=", ict), func(t *testing.T) {
			st := mem.New("mem://b/t")
			conf := map[string]string{}
			proto := protocolOf(1, 2)
			if ict {
				conf["delta.enableInCommitTimestamps"] = "true"
				proto = protocolOf(3, 7, "inCommitTimestamp")
			}
			// File times: 10 minutes apart, but version 2's is before version 1's (a clock set
			// back, a copy of the log): it reads one millisecond after version 1.
			files := []time.Time{base, base.Add(10 * time.Minute), base.Add(5 * time.Minute), base.Add(30 * time.Minute)}
			for v := range int64(4) {
				info := map[string]any{"operation": "WRITE", "timestamp": base.Add(-time.Hour).Add(time.Duration(v) * time.Second).UnixMilli()}
				if ict {
					info["inCommitTimestamp"] = base.Add(time.Duration(v) * 7 * time.Minute).UnixMilli()
				}
				actions := []any{map[string]any{"commitInfo": info}}
				if v == 0 {
					actions = append(actions, proto, metadataWith(conf))
				} else {
					actions = append(actions, addOf(fmt.Sprint("f", v)))
				}
				commitAt(t, st, v, actions...)
				b, err := storage.ReadAll(ctx, st, CommitKey(v))
				if err != nil {
					t.Fatal(err)
				}
				st.PutAt(CommitKey(v), b, files[v])
			}
			snap, err := Load(ctx, st)
			if err != nil {
				t.Fatal(err)
			}
			cts, err := snap.CommitTimestamps(ctx, st)
			if err != nil {
				t.Fatal(err)
			}
			hist, err := History(ctx, st, 0)
			if err != nil {
				t.Fatal(err)
			}
			ops := map[int64]time.Time{}
			if err := snap.Operations(ctx, st, 0, func(c CommitOperation) bool { ops[c.Version] = c.Timestamp; return true }); err != nil {
				t.Fatal(err)
			}
			want := map[int64]time.Time{0: base, 1: base.Add(10 * time.Minute), 2: base.Add(10*time.Minute + time.Millisecond), 3: base.Add(30 * time.Minute)}
			if ict {
				for v := range int64(4) {
					want[v] = base.Add(time.Duration(v) * 7 * time.Minute)
				}
			}
			if len(cts) != 4 || len(hist) != 4 {
				t.Fatalf("%d commit times, %d history rows", len(cts), len(hist))
			}
			for _, c := range cts {
				h := hist[3-c.Version]
				if !c.Timestamp.Equal(want[c.Version]) || !h.Timestamp.Equal(want[c.Version]) || !ops[c.Version].Equal(want[c.Version]) {
					t.Errorf("version %d: horizon %v, history %v, operations %v; want %v", c.Version, c.Timestamp, h.Timestamp, ops[c.Version], want[c.Version])
				}
			}
		})
	}
}
