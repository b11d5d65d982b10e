package inventory_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/parquet-go/parquet-go"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/inventory"
	"github.com/deltavacuum/deltavacuum/storage/local"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// TestPlanFromInventory runs the planner on a listing: the inventory says what exists, the
// planner decides what is deleted (hidden names, protected files, the cutoff, directories).
func TestPlanFromInventory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "table")
	store, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	dir = store.Root()
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	old, recent := now.Add(-30*24*time.Hour).UnixMilli(), now.Add(-time.Hour).UnixMilli()
	err = deltalog.WriteCommit(context.Background(), store, 0, []any{
		map[string]any{"protocol": map[string]any{"minReaderVersion": 1, "minWriterVersion": 2}},
		map[string]any{"metaData": map[string]any{"id": "t", "format": map[string]any{"provider": "parquet", "options": map[string]string{}},
			"schemaString": `{"type":"struct","fields":[]}`, "partitionColumns": []string{}, "configuration": map[string]string{}, "createdTime": old}},
		map[string]any{"add": map[string]any{"path": "p=a%3Ab/live.parquet", "size": 1, "modificationTime": old, "dataChange": true, "partitionValues": map[string]string{}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Path             string `parquet:"path"`
		Length           int64  `parquet:"length"`
		IsDir            bool   `parquet:"isDir"`
		ModificationTime int64  `parquet:"modificationTime"`
	}
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[row](&buf)
	_, err = w.Write([]row{
		{Path: "file:" + dir + "/p=a:b/live.parquet", Length: 1, ModificationTime: old},
		{Path: "file:" + dir + "/p=a:b/untracked old.parquet", Length: 2, ModificationTime: old},
		{Path: "file:" + dir + "/p=a:b/untracked new.parquet", Length: 3, ModificationTime: recent},
		{Path: "file:" + dir + "/_tmp/hidden.parquet", Length: 4, ModificationTime: old},
		{Path: "file:" + dir + "/_delta_log/00000000000000000000.json", Length: 5, ModificationTime: old},
		{Path: "file:" + dir + "/gone/a/b.parquet", Length: 6, ModificationTime: old},
		{Path: "file:" + dir + "/empty", IsDir: true, ModificationTime: old},
		{Path: "file:/elsewhere/x.parquet", Length: 7, ModificationTime: old},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	inv := filepath.Join(t.TempDir(), "inventory.parquet")
	if err := os.WriteFile(inv, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	l, err := inventory.Open(context.Background(), inventory.Source{Location: inv}, store.Location(), inventory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	planner, err := vacuum.NewPlanner(context.Background(), store, vacuum.Options{Now: now, Inventory: l})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := planner.Plan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var files, dirs []string
	for _, f := range plan.Files.MustCollect() {
		files = append(files, f.Path+" "+string(f.Reason))
	}
	for _, d := range plan.Dirs {
		dirs = append(dirs, d.Path)
	}
	sort.Strings(dirs)
	if d := cmp.Diff([]string{"gone/a/b.parquet untracked", "p=a:b/untracked old.parquet untracked"}, files); d != "" {
		t.Errorf("files (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"empty", "gone", "gone/a"}, dirs); d != "" {
		t.Errorf("directories (-want +got):\n%s", d)
	}
	if l.Ignored() != 1 {
		t.Errorf("ignored %d, want 1", l.Ignored())
	}
}
