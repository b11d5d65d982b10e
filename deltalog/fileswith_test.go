package deltalog_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/internal/fixtures"
	"github.com/deltavacuum/deltavacuum/storage/local"
)

// liveFromCommits replays every JSON commit of the table at dir, version 0 on, with
// encoding/json and nothing of package deltalog: the live adds, as "path|dv|numRecords|
// cardinality" (numRecords -1 when the stats do not say), and whether the log starts at 0.
func liveFromCommits(t *testing.T, dir string) ([]string, bool) {
	t.Helper()
	type dv struct {
		StorageType    string `json:"storageType"`
		PathOrInlineDv string `json:"pathOrInlineDv"`
		Offset         *int64 `json:"offset"`
		Cardinality    int64  `json:"cardinality"`
	}
	type file struct {
		Path           string `json:"path"`
		Stats          string `json:"stats"`
		DeletionVector *dv    `json:"deletionVector"`
	}
	key := func(f *file) string {
		if f.DeletionVector == nil {
			return f.Path + "|"
		}
		k := f.Path + "|" + f.DeletionVector.StorageType + f.DeletionVector.PathOrInlineDv
		if f.DeletionVector.Offset != nil {
			k += fmt.Sprintf("@%d", *f.DeletionVector.Offset)
		}
		return k
	}
	live := map[string]string{}
	for v := 0; ; v++ {
		fh, err := os.Open(filepath.Join(dir, "_delta_log", fmt.Sprintf("%020d.json", v)))
		if os.IsNotExist(err) {
			if v == 0 {
				return nil, false
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var a struct {
				Add    *file `json:"add"`
				Remove *file `json:"remove"`
			}
			if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
				t.Fatalf("version %d: %v", v, err)
			}
			if a.Remove != nil {
				delete(live, key(a.Remove))
			}
			if a.Add != nil {
				var stats struct {
					NumRecords *int64 `json:"numRecords"`
				}
				n := int64(-1)
				if json.Unmarshal([]byte(a.Add.Stats), &stats) == nil && stats.NumRecords != nil {
					n = *stats.NumRecords
				}
				card := int64(0)
				if a.Add.DeletionVector != nil {
					card = a.Add.DeletionVector.Cardinality
				}
				live[key(a.Add)] = fmt.Sprintf("%s|%d|%d", key(a.Add), n, card)
			}
		}
		fh.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	out := make([]string, 0, len(live))
	for _, s := range live {
		out = append(out, s)
	}
	sort.Strings(out)
	return out, true
}

// TestFilesWithNumRecords: FilesWith(LiveOnly, NumRecords) streams exactly the live adds, each
// with its deletion vector and the numRecords of its statistics, on every fixture whose log
// starts at version 0, as a replay of its JSON commits alone says: through the checkpoints
// (stats strings, stats_parsed, multi-part, V2 with sidecars) and the compacted commits the
// snapshot reads instead. It streams no tombstone; Files streams the same live files, without
// numRecords.
func TestFilesWithNumRecords(t *testing.T) {
	ctx := context.Background()
	checked := 0
	for _, tbl := range fixtures.Tables(t) {
		if tbl.Name == "delta/table-with-dv-special-char" {
			continue // its 'p' vector is an unfilled template (TestFixturesLoad)
		}
		t.Run(tbl.Name, func(t *testing.T) {
			dir := fixtures.Copy(t, tbl.Name, time.Now())
			want, ok := liveFromCommits(t, dir)
			if !ok {
				t.Skip("the log does not start at version 0")
			}
			store, err := local.New(dir)
			if err != nil {
				t.Fatal(err)
			}
			snap, err := deltalog.Load(ctx, store)
			if err != nil {
				t.Fatal(err)
			}
			got, plain := []string{}, []string{}
			err = snap.FilesWith(ctx, store, deltalog.FilesOptions{LiveOnly: true, NumRecords: true}, func(f deltalog.File) error {
				if f.Removed {
					t.Errorf("a tombstone streamed: %s", f.LogPath)
				}
				k, card := f.LogPath+"|", int64(0)
				if dv := f.DeletionVector; dv != nil {
					k += dv.StorageType + dv.PathOrInlineDv
					if dv.Offset != nil {
						k += fmt.Sprintf("@%d", *dv.Offset)
					}
					card = dv.Cardinality
				}
				got = append(got, fmt.Sprintf("%s|%d|%d", k, f.NumRecords, card))
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			sort.Strings(got)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("live adds (-JSON replay +FilesWith):\n%s", diff)
			}
			err = snap.Files(ctx, store, func(f deltalog.File) error {
				if f.NumRecords != -1 {
					t.Errorf("Files gave %s numRecords %d", f.LogPath, f.NumRecords)
				}
				if !f.Removed {
					plain = append(plain, f.LogPath)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(plain) != len(got) {
				t.Errorf("Files streams %d live files, FilesWith %d", len(plain), len(got))
			}
			checked++
		})
	}
	if checked < 15 {
		t.Errorf("only %d fixtures checked", checked)
	}
}
