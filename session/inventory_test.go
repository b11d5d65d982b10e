package session

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"github.com/deltavacuum/deltavacuum"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/parquet-go/parquet-go"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/internal/fixtures"
	"github.com/deltavacuum/deltavacuum/inventory"
	"github.com/deltavacuum/deltavacuum/sql"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/local"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

type invRow struct {
	Path             string `parquet:"path"`
	Length           int64  `parquet:"length"`
	IsDir            bool   `parquet:"isDir"`
	ModificationTime int64  `parquet:"modificationTime"`
	Extra            string `parquet:"storageClass"`
}

// listingInventory lists dir the way a storage inventory report would describe it.
func listingInventory(t *testing.T, dir string) []invRow {
	t.Helper()
	store, _ := local.New(dir)
	var rows []invRow
	err := store.Walk(context.Background(), "", func(o storage.Object) error {
		rows = append(rows, invRow{Path: "file:" + filepath.Join(dir, strings.TrimSuffix(o.Key, "/")), Length: o.Size,
			IsDir: o.IsDir, ModificationTime: o.ModTime.UnixMilli(), Extra: "HOT"})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func writeCSV(t *testing.T, path string, header []string, rows [][]string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := csv.NewWriter(f)
	w.Write(header)
	w.WriteAll(rows)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func rowsCSV(rows []invRow) [][]string {
	out := make([][]string, len(rows))
	for i, r := range rows {
		out[i] = []string{r.Path, fmt.Sprint(r.Length), fmt.Sprint(r.IsDir), fmt.Sprint(r.ModificationTime), r.Extra}
	}
	return out
}

var invHeader = []string{"path", "length", "isDir", "modificationTime", "storageClass"}

// TestInventoryFromListingEqualsFull: on every fixture, an inventory built from a listing of
// the table gives exactly the FULL plan.
func TestInventoryFromListingEqualsFull(t *testing.T) {
	for _, tbl := range fixtures.Tables(t) {
		if tbl.Name == "delta/table-with-dv-special-char" {
			continue // refused in every mode (see the vacuum fixture test)
		}
		t.Run(tbl.Name, func(t *testing.T) {
			dir := fixtures.Copy(t, tbl.Name, monthAgo)
			inv := filepath.Join(t.TempDir(), "inventory.csv")
			writeCSV(t, inv, invHeader, rowsCSV(listingInventory(t, dir)))
			s := newSession(t, Config{Settings: map[string]string{SettingRetentionCheck: "false"}})
			tbl, _ := deltavacuum.Open(context.Background(), dir)
			zero := 0.0
			req := VacuumRequest{Request: deltavacuum.VacuumOptions{Options: vacuum.Options{RetainHours: &zero}, DryRun: true}}
			full, err := s.Vacuum(context.Background(), tbl, req)
			if err != nil {
				t.Fatal(err)
			}
			req.Inventory = mustInventory(t, "csv.`"+inv+"`")
			withInv, err := s.Vacuum(context.Background(), tbl, req)
			if err != nil {
				t.Fatal(err)
			}
			if withInv.Source != "inventory" {
				t.Errorf("source %q", withInv.Source)
			}
			// An inventory holds milliseconds; the listing has nanoseconds.
			fs := full.Files.MustCollect()
			for i := range fs {
				fs[i].ModificationTime = fs[i].ModificationTime.Truncate(time.Millisecond)
			}
			full.Files = vacuum.NewFileList(fs...)
			// The unexported fields are the executor's (File.eligible): the exported ones are
			// what the plan says.
			ignore := cmpopts.IgnoreUnexported(vacuum.File{}, vacuum.Dir{})
			if diff := cmp.Diff(full.Files.MustCollect(), withInv.Files.MustCollect(), ignore); diff != "" {
				t.Errorf("files (-listing +inventory):\n%s", diff)
			}
			if diff := cmp.Diff(full.Dirs, withInv.Dirs, ignore); diff != "" {
				t.Errorf("directories (-listing +inventory):\n%s", diff)
			}
		})
	}
}

func mustInventory(t *testing.T, text string) *sql.Inventory {
	t.Helper()
	st, err := sql.Parse("VACUUM t USING INVENTORY " + text)
	if err != nil {
		t.Fatal(err)
	}
	return st.(*sql.Vacuum).Inventory
}

// TestInventoryCases rebuilds the reference suite's inventory cases.
func TestInventoryCases(t *testing.T) {
	dir := fixtures.Copy(t, "delta/data-reader-escaped-chars", monthAgo) // partition column _2
	tmp := t.TempDir()
	rows := listingInventory(t, dir)
	old := monthAgo.UnixMilli()
	extra := []invRow{
		{Path: "file:" + dir + "/_hidden/x.parquet", Length: 1, ModificationTime: old},     // hidden directory
		{Path: "file:" + dir + "/_2=foo/.x.parquet", Length: 1, ModificationTime: old},     // hidden file in a partition
		{Path: "file:" + dir + "/_2=foo/_tmp/y.parquet", Length: 1, ModificationTime: old}, // hidden below a partition
		{Path: "file:" + dir + "/_2=foo/stale.parquet", Length: 1, ModificationTime: old},  // visible, named by nothing
		{Path: "file:" + dir + "/_delta_log/00000000000000000000.json", Length: 1, ModificationTime: old},
		{Path: "file:" + dir + "-other/x.parquet", Length: 1, ModificationTime: old}, // outside the table
		{Path: "file:/elsewhere/x.parquet", Length: 1, ModificationTime: old},        // outside the table
	}
	all := append(append([]invRow{}, rows...), extra...)
	pq := filepath.Join(tmp, "inventory.parquet")
	if err := parquet.WriteFile(pq, all); err != nil {
		t.Fatal(err)
	}
	s := newSession(t, Config{Settings: map[string]string{SettingRetentionCheck: "false"}})
	q := "'" + dir + "'"
	rs := execAll(t, s, "VACUUM "+q+" USING INVENTORY parquet.`"+pq+"` RETAIN 0 HOURS DRY RUN")
	got := []string{}
	for _, f := range rs[0].Vacuum.Files.MustCollect() {
		got = append(got, f.Path)
	}
	if diff := cmp.Diff([]string{"_2=foo/stale.parquet"}, got); diff != "" {
		t.Errorf("deleted with inventory (-want +got):\n%s", diff)
	}

	// A query over the inventory, as the seeds write it.
	rs = execAll(t, s, "VACUUM "+q+" USING INVENTORY (SELECT * FROM parquet.`"+pq+"` WHERE path LIKE 'file:%' AND NOT path LIKE '%stale%') RETAIN 0 HOURS DRY RUN")
	if n := rs[0].Vacuum.Files.Len(); n != 0 {
		t.Errorf("query inventory: %d files, want 0 (the WHERE removed the only candidate)", n)
	}

	// The inventory as a Delta table: a table whose data file is the Parquet inventory.
	invTable := filepath.Join(tmp, "invtable")
	os.MkdirAll(invTable, 0o755)
	data, _ := os.ReadFile(pq)
	os.WriteFile(filepath.Join(invTable, "part-0.parquet"), data, 0o644)
	store, _ := local.New(invTable)
	err := deltalog.WriteCommit(context.Background(), store, 0, []any{
		map[string]any{"protocol": map[string]any{"minReaderVersion": 1, "minWriterVersion": 2}},
		map[string]any{"metaData": map[string]any{"id": "inv", "format": map[string]any{"provider": "parquet"},
			"schemaString":     `{"type":"struct","fields":[{"name":"path","type":"string","nullable":true,"metadata":{}},{"name":"length","type":"long","nullable":true,"metadata":{}},{"name":"isDir","type":"boolean","nullable":true,"metadata":{}},{"name":"modificationTime","type":"long","nullable":true,"metadata":{}},{"name":"storageClass","type":"string","nullable":true,"metadata":{}}]}`,
			"partitionColumns": []string{}, "configuration": map[string]string{}}},
		map[string]any{"add": map[string]any{"path": "part-0.parquet", "size": len(data), "modificationTime": 0, "dataChange": true}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, inv := range []string{"'" + invTable + "'", "delta.`" + invTable + "`"} {
		rs = execAll(t, s, "VACUUM "+q+" USING INVENTORY "+inv+" RETAIN 0 HOURS DRY RUN")
		if n := rs[0].Vacuum.Files.Len(); n != 1 {
			t.Errorf("Delta table inventory %s: %d files, want 1", inv, n)
		}
	}

	// Schema errors, before anything is listed or deleted.
	bad := filepath.Join(tmp, "bad.csv")
	writeCSV(t, bad, []string{"path", "size", "isDir", "modificationTime"}, [][]string{{"file:" + dir + "/x", "1", "false", "1"}})
	_, err = s.ExecScript(context.Background(), "VACUUM "+q+" USING INVENTORY csv.`"+bad+"` RETAIN 0 HOURS")
	if !errors.Is(err, inventory.ErrInvalidSchema) || !strings.Contains(err.Error(), "DELTA_INVALID_INVENTORY_SCHEMA") ||
		!strings.Contains(err.Error(), "path STRING, length BIGINT, isDir BOOLEAN, modificationTime BIGINT") {
		t.Errorf("missing column: %v", err)
	}
	type badRow struct {
		Path             string `parquet:"path"`
		Length           string `parquet:"length"`
		IsDir            bool   `parquet:"isDir"`
		ModificationTime int64  `parquet:"modificationTime"`
	}
	badPQ := filepath.Join(tmp, "bad.parquet")
	parquet.WriteFile(badPQ, []badRow{{Path: "file:" + dir + "/x", Length: "1", ModificationTime: 1}})
	_, err = s.ExecScript(context.Background(), "VACUUM "+q+" USING INVENTORY parquet.`"+badPQ+"` RETAIN 0 HOURS")
	if !errors.Is(err, inventory.ErrInvalidSchema) {
		t.Errorf("mistyped column: %v", err)
	}
	if _, err := s.ExecScript(context.Background(), "VACUUM "+q+" LITE USING INVENTORY parquet.`"+pq+"`"); !errors.Is(err, vacuum.ErrInventoryWithLite) {
		t.Errorf("LITE with an inventory: %v", err)
	}
	if n := len(fixtures.Files(t, dir)); n != len(fixtures.Files(t, fixtures.Copy(t, "delta/data-reader-escaped-chars", monthAgo))) {
		t.Errorf("a DRY RUN or a refused run changed the table (%d files)", n)
	}
}
