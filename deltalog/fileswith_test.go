package deltalog_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/parquet-go/parquet-go"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/internal/fixtures"
	"github.com/deltavacuum/deltavacuum/storage/local"
)

// liveFromCommits replays every JSON commit of the table at dir, version 0 on, with
// encoding/json and nothing of package deltalog: the live adds, as "path|dv|numRecords|
// cardinality" (numRecords -1 when the stats do not say), and whether the log starts at 0.
//
// The numRecords is the one a reader of the snapshot sees, as Delta Spark and delta-kernel-rs
// read it: an add that the newest classic or multi-part checkpoint carries is read from the
// checkpoint's row, not from the commit that wrote it, so where that row holds no statistics
// (delta.checkpoint.writeStatsAsJson and writeStatsAsStruct false, as in delta-kernel-rs's
// parquet_row_group_skipping) the count is unknown even though the commit recorded it.
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
	cpVersion, noStats := checkpointWithoutStats(t, filepath.Join(dir, "_delta_log"))
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
				if int64(v) <= cpVersion && noStats[a.Add.Path] {
					n = -1 // the snapshot reads this add from a checkpoint row without statistics
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

// checkpointWithoutStats finds the newest complete classic or multi-part checkpoint in logDir
// by its file names and reads its add rows with parquet-go alone: the version, and the paths
// (as the rows spell them) of the adds whose row has neither a stats string nor a
// stats_parsed.numRecords. -1 and nil when there is no such checkpoint (a V2 checkpoint is not
// read here: its adds keep their commits' counts).
func checkpointWithoutStats(t *testing.T, logDir string) (int64, map[string]bool) {
	t.Helper()
	entries, err := os.ReadDir(logDir)
	if err != nil {
		t.Fatal(err)
	}
	parts := map[int64]map[string]bool{} // version -> part file names
	total := map[int64]int{}
	for _, e := range entries {
		var v, part, of int64
		name := e.Name()
		switch {
		case len(name) == 39 && strings.HasSuffix(name, ".checkpoint.parquet"):
			if _, err := fmt.Sscanf(name, "%020d.checkpoint.parquet", &v); err != nil {
				continue
			}
			part, of = 1, 1
		case len(name) == 61 && strings.HasSuffix(name, ".parquet") && strings.Contains(name, ".checkpoint."):
			if _, err := fmt.Sscanf(name, "%020d.checkpoint.%010d.%010d.parquet", &v, &part, &of); err != nil {
				continue
			}
		default:
			continue
		}
		if parts[v] == nil {
			parts[v] = map[string]bool{}
		}
		parts[v][name] = true
		total[v] = int(of)
	}
	best := int64(-1)
	for v, names := range parts {
		if len(names) == total[v] && v > best {
			best = v
		}
	}
	if best < 0 {
		return -1, nil
	}
	noStats := map[string]bool{}
	for name := range parts[best] {
		fh, err := os.Open(filepath.Join(logDir, name))
		if err != nil {
			t.Fatal(err)
		}
		st, err := fh.Stat()
		if err != nil {
			t.Fatal(err)
		}
		pf, err := parquet.OpenFile(fh, st.Size())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		col := func(path ...string) int {
			if leaf, ok := pf.Schema().Lookup(path...); ok {
				return leaf.ColumnIndex
			}
			return -1
		}
		pathCol, statsCol, parsedCol := col("add", "path"), col("add", "stats"), col("add", "stats_parsed", "numRecords")
		if pathCol < 0 {
			fh.Close()
			continue
		}
		for _, rg := range pf.RowGroups() {
			rows := rg.Rows()
			buf := make([]parquet.Row, 64)
			for {
				n, err := rows.ReadRows(buf)
				for _, row := range buf[:n] {
					path, hasStats := "", false
					for _, val := range row {
						switch val.Column() {
						case pathCol:
							if !val.IsNull() {
								path = val.String()
							}
						case statsCol, parsedCol:
							hasStats = hasStats || !val.IsNull()
						}
					}
					if path != "" && !hasStats {
						noStats[path] = true
					}
				}
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
			}
			rows.Close()
		}
		fh.Close()
	}
	return best, noStats
}
