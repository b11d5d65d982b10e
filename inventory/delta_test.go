package inventory

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage/local"
)

// deltaInventory writes a Delta table at dir whose commits are given as actions (the protocol
// and metaData are added to the first).
func deltaInventory(t *testing.T, dir string, protocol map[string]any, schema string, conf map[string]string, partitions []string, commits ...[]any) {
	t.Helper()
	store, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	if protocol == nil {
		protocol = map[string]any{"minReaderVersion": 1, "minWriterVersion": 2}
	}
	if conf == nil {
		conf = map[string]string{}
	}
	if partitions == nil {
		partitions = []string{}
	}
	first := []any{
		map[string]any{"protocol": protocol},
		map[string]any{"metaData": map[string]any{"id": "inventory", "format": map[string]any{"provider": "parquet", "options": map[string]string{}},
			"schemaString": schema, "partitionColumns": partitions, "configuration": conf, "createdTime": 1}},
	}
	commits[0] = append(first, commits[0]...)
	for v, actions := range commits {
		if err := deltalog.WriteCommit(context.Background(), store, int64(v), actions); err != nil {
			t.Fatal(err)
		}
	}
}

func addFile(p string) map[string]any {
	return map[string]any{"add": map[string]any{"path": p, "size": 1, "modificationTime": 1, "dataChange": true, "partitionValues": map[string]string{}}}
}

func removeFile(p string) map[string]any {
	return map[string]any{"remove": map[string]any{"path": p, "deletionTimestamp": 2, "dataChange": true}}
}

func deltaSchema(fields ...string) string {
	var fs []map[string]any
	for _, f := range fields {
		name, typ, _ := strings.Cut(f, " ")
		field := map[string]any{"name": name, "type": typ, "nullable": true, "metadata": map[string]any{}}
		if typ, phys, ok := strings.Cut(typ, " "); ok {
			field["type"] = typ
			field["metadata"] = map[string]any{"delta.columnMapping.id": 1, "delta.columnMapping.physicalName": phys}
		}
		fs = append(fs, field)
	}
	b, _ := json.Marshal(map[string]any{"type": "struct", "fields": fs})
	return string(b)
}

var requiredDeltaSchema = deltaSchema("path string", "length long", "isDir boolean", "modificationTime long", "extra string")

func TestDeltaInventory(t *testing.T) {
	dir, root := tableRoot(t)
	inv := filepath.Join(t.TempDir(), "inventory table")
	writeParquet(t, filepath.Join(inv, "part-0.parquet"), []row{{Path: "file:" + dir + "/a", Length: 1, ModificationTime: 10}})
	writeParquet(t, filepath.Join(inv, "part-1.parquet"), []row{{Path: "file:" + dir + "/removed", Length: 1, ModificationTime: 11}})
	// A data file with int32 lengths (type widening) and a directory of special names.
	writeParquet(t, filepath.Join(inv, "p=x y", "part-2.parquet"), []widthRow[int32, int64]{
		{Path: "file:" + dir + "/b c/d%20=:ü", Length: 2, ModificationTime: 12},
		{Path: "file:/elsewhere/x", Length: 2, ModificationTime: 12},
	})
	deltaInventory(t, inv, nil, requiredDeltaSchema, nil, nil,
		[]any{addFile("part-0.parquet"), addFile("part-1.parquet")},
		[]any{removeFile("part-1.parquet"), addFile("p%3Dx%20y/part-2.parquet")},
	)
	want := []string{"a 1 10", "b c/ 0 -", "b c/d%20=:ü 2 12"}
	for _, src := range []Source{
		{Location: inv},
		{Location: inv, Format: FormatDelta},
		{Location: "file://" + filepath.ToSlash(strings.ReplaceAll(inv, " ", "%20"))},
		{Query: query(t, "SELECT * FROM delta.`"+inv+"` WHERE extra IS NULL")},
		{Location: inv, Query: query(t, "SELECT * FROM inventories.daily WHERE path LIKE 'file:%'")},
	} {
		l := open(t, src, root)
		diff(t, walk(t, l, ""), want)
		if l.Ignored() != 1 {
			t.Errorf("ignored %d, want 1", l.Ignored())
		}
	}
}

func TestDeltaInventoryColumnMapping(t *testing.T) {
	dir, root := tableRoot(t)
	inv := filepath.Join(t.TempDir(), "inventory")
	type physical struct {
		Path    string `parquet:"col-1"`
		Length  int64  `parquet:"col-2"`
		IsDir   bool   `parquet:"col-3"`
		ModTime int64  `parquet:"col-4"`
	}
	writeParquet(t, filepath.Join(inv, "part-0.parquet"), []physical{{Path: "file:" + dir + "/a", Length: 5, ModTime: 50}})
	deltaInventory(t, inv, map[string]any{"minReaderVersion": 2, "minWriterVersion": 5},
		deltaSchema("path string col-1", "length long col-2", "isDir boolean col-3", "modificationTime long col-4"),
		map[string]string{"delta.columnMapping.mode": "name"}, nil,
		[]any{addFile("part-0.parquet")})
	l := open(t, Source{Location: inv}, root)
	diff(t, walk(t, l, ""), []string{"a 5 50"})
}

func TestDeltaInventoryErrors(t *testing.T) {
	_, root := tableRoot(t)
	t.Run("schema checked before any file is read", func(t *testing.T) {
		inv := filepath.Join(t.TempDir(), "inventory")
		deltaInventory(t, inv, nil, deltaSchema("path string", "length integer", "isDir string", "extra decimal(10,2)"), nil, nil,
			[]any{addFile("missing.parquet")})
		_, err := Open(context.Background(), Source{Location: inv}, root, Options{})
		wantSchemaError(t, err, schemaMsg+" Found in "+inv+": path STRING, length INT, isDir STRING, extra DECIMAL(10,2) (isDir is STRING, not BOOLEAN; modificationTime is missing)")
	})
	for _, tc := range []struct {
		name       string
		protocol   map[string]any
		partitions []string
		want       string
	}{
		{"deletion vectors", map[string]any{"minReaderVersion": 3, "minWriterVersion": 7, "readerFeatures": []string{"deletionVectors"}, "writerFeatures": []string{"deletionVectors"}}, nil,
			"the inventory table has the deletionVectors feature"},
		{"unknown reader feature", map[string]any{"minReaderVersion": 3, "minWriterVersion": 7, "readerFeatures": []string{"futureFeature"}, "writerFeatures": []string{}}, nil,
			`the inventory table needs the reader feature "futureFeature"`},
		{"partitioned by a required column", nil, []string{"isDir"},
			"column isDir is a partition column of the inventory table"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inv := filepath.Join(t.TempDir(), "inventory")
			deltaInventory(t, inv, tc.protocol, requiredDeltaSchema, nil, tc.partitions, []any{})
			_, err := Open(context.Background(), Source{Location: inv}, root, Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
	t.Run("table read as Parquet", func(t *testing.T) {
		inv := filepath.Join(t.TempDir(), "inventory")
		writeParquet(t, filepath.Join(inv, "part-0.parquet"), []row{{Path: "x"}})
		deltaInventory(t, inv, nil, requiredDeltaSchema, nil, nil, []any{addFile("part-0.parquet")})
		_, err := Open(context.Background(), Source{Location: inv, Format: FormatParquet}, root, Options{})
		if want := "inventory " + inv + " is a Delta table: read it as delta.`" + inv + "`, not as parquet"; err == nil || err.Error() != want {
			t.Errorf("got %v, want %s", err, want)
		}
	})
	t.Run("not a table", func(t *testing.T) {
		inv := t.TempDir()
		_, err := Open(context.Background(), Source{Location: inv, Format: FormatDelta}, root, Options{})
		if err == nil || !strings.Contains(err.Error(), "is not a Delta table") {
			t.Errorf("got %v", err)
		}
	})
}

// TestDeltaReaderFeatures: an inventory table may have the reader features deltalog supports,
// less those that change which rows a reader sees; the refusals name only features deltalog
// knows as reader features, so that the list cannot go stale.
func TestDeltaReaderFeatures(t *testing.T) {
	for name, want := range map[string]bool{
		"columnMapping": true, "v2Checkpoint": true, "timestampNtz": true, "variantType-preview": true,
		"deletionVectors": false, "geospatial": false, "catalogManaged": false, "noSuchFeature": false,
		"appendOnly": false, // a writer feature never appears in readerFeatures
	} {
		if got := deltaReaderFeatureOK(name); got != want {
			t.Errorf("deltaReaderFeatureOK(%q) = %v, want %v", name, got, want)
		}
	}
	for name := range deltaRefusedReaderFeatures {
		i := slices.IndexFunc(deltalog.Features, func(f deltalog.Feature) bool { return f.Name == name })
		if i < 0 || !deltalog.Features[i].Reader || !deltalog.Features[i].Supported {
			t.Errorf("refused feature %q is not a reader feature deltalog supports: drop it from the list", name)
		}
	}
}
