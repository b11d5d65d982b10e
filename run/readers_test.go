package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/readers/streaming"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/local"
	"github.com/deltavacuum/deltavacuum/storage/location"
	"github.com/deltavacuum/deltavacuum/storage/mem"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// The table of the readers' fixtures: the location pyiceberg's metadata was written for
// (readers/iceberg/testdata), the id the Spark checkpoint's query read (readers/streaming/
// testdata), six versions.
const (
	readersTable   = "file:///tmp/readers-ice/iceberg_over_delta"
	readersTableID = "72a15687-10ad-4337-ac0d-f752a18da3d7"
)

func readersFixture(t *testing.T, withIceberg bool) *mem.Store {
	t.Helper()
	store := mem.New(readersTable)
	commit(t, store, 0, map[string]any{"protocol": map[string]any{"minReaderVersion": 1, "minWriterVersion": 2}},
		map[string]any{"metaData": map[string]any{"id": readersTableID, "format": map[string]any{"provider": "parquet"},
			"schemaString": `{"type":"struct","fields":[]}`, "partitionColumns": []string{}, "configuration": map[string]string{}}})
	for v := int64(1); v <= 5; v++ {
		commit(t, store, v, map[string]any{"add": map[string]any{"path": "f" + string(rune('0'+v)) + ".parquet", "size": 1, "modificationTime": 0, "dataChange": true}})
	}
	if withIceberg {
		dir := "../readers/iceberg/testdata/pyiceberg-0.12.0/metadata"
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			store.PutAt("metadata/"+e.Name(), b, time.Now().Add(-30*24*time.Hour))
		}
	}
	return store
}

// opener opens the stores of the locations given, and nothing else.
func opener(stores map[string]storage.Store) func(context.Context, string) (storage.Store, error) {
	return func(_ context.Context, loc string) (storage.Store, error) {
		if s, ok := stores[loc]; ok {
			return s, nil
		}
		return nil, errors.New(location.SafeURI(loc) + ": no such location") // as location.Open says it

	}
}

// TestFindReadersFindsEachKind: the Iceberg metadata pyiceberg wrote (its converted version
// pinned, its folder kept), a registered streaming checkpoint Spark wrote (the version it reads
// next), a shallow clone beside it (the files it names here), a pin; one of each, named.
func TestFindReadersFindsEachKind(t *testing.T) {
	ctx := context.Background()
	store := readersFixture(t, true)
	cp, err := local.New("../readers/streaming/testdata/spark-4.2.0-delta-4.4.0/single")
	if err != nil {
		t.Fatal(err)
	}
	clone := mem.New("file:///tmp/readers-ice/clone")
	commit(t, clone, 0, map[string]any{"protocol": map[string]any{"minReaderVersion": 1, "minWriterVersion": 2}},
		map[string]any{"metaData": map[string]any{"id": "clone", "format": map[string]any{"provider": "parquet"},
			"schemaString": `{"type":"struct","fields":[]}`, "partitionColumns": []string{}, "configuration": map[string]string{}}},
		map[string]any{"add": map[string]any{"path": readersTable + "/f1.parquet", "size": 1, "modificationTime": 0, "dataChange": true}},
		map[string]any{"add": map[string]any{"path": "own.parquet", "size": 1, "modificationTime": 0, "dataChange": true}})
	notTable := mem.New("file:///tmp/readers-ice/not-a-table")
	snap, err := deltalog.Load(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := CreatePin(ctx, store, PinRequest{Version: ptr64(2), For: time.Hour, Reason: "audit"}); err != nil {
		t.Fatal(err)
	}
	found, err := FindReaders(ctx, store, snap, time.Now(), ReaderOptions{
		StreamingCheckpoints: []string{"cp://single"},
		Siblings:             []string{"file:///tmp/readers-ice/clone", "file:///tmp/readers-ice/not-a-table", readersTable},
		Open:                 opener(map[string]storage.Store{"cp://single": cp, "file:///tmp/readers-ice/clone": clone, "file:///tmp/readers-ice/not-a-table": notTable}),
	})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]vacuum.Reader{}
	for _, r := range found.Readers {
		kinds[r.Kind] = r
	}
	if len(found.Readers) != 4 || len(kinds) != 4 {
		t.Fatalf("readers: %+v", found.Readers)
	}
	if r := kinds[vacuum.ReaderIceberg]; r.Version == nil || *r.Version != 3 || len(r.Folders) != 1 || r.Folders[0] != "metadata/" || r.Files != nil {
		t.Errorf("Iceberg: %+v", r)
	}
	if found.Iceberg == nil || found.Iceberg.LagVersions == nil || *found.Iceberg.LagVersions != 2 || found.Iceberg.Engine == "" {
		t.Errorf("Iceberg's report: %+v", found.Iceberg)
	}
	if r := kinds[vacuum.ReaderStreaming]; r.Version == nil || *r.Version != 6 || r.Name != "cp://single" {
		t.Errorf("streaming: %+v", r)
	}
	if r := kinds[vacuum.ReaderPin]; r.Version == nil || *r.Version != 2 || !strings.Contains(r.Name, "audit") || r.Until.IsZero() {
		t.Errorf("pin: %+v", r)
	}
	r := kinds[vacuum.ReaderClone]
	var keys []string
	if r.Files != nil {
		_ = r.Files(ctx, func(k string) error { keys = append(keys, k); return nil })
	}
	if r.Name != "file:///tmp/readers-ice/clone" || len(keys) != 1 || keys[0] != "f1.parquet" {
		t.Errorf("clone: %+v, keys %v", r, keys)
	}
}

func ptr64(v int64) *int64 { return &v }

// TestReadersThatCannotBeHonouredRefuse: a checkpoint of another table, one that cannot be
// opened or read, a front end that opens nothing, Iceberg metadata that is Iceberg's but
// cannot be read, a clone that cannot be read: each refuses the run, naming it.
// withCheckpointsProperty is a table of readersFixture whose newest metaData sets
// StreamingCheckpointsProperty to value.
func withCheckpointsProperty(value string) func(t *testing.T) *mem.Store {
	return func(t *testing.T) *mem.Store {
		s := readersFixture(t, false)
		commit(t, s, 6, map[string]any{"metaData": map[string]any{"id": readersTableID, "format": map[string]any{"provider": "parquet"},
			"schemaString": `{"type":"struct","fields":[]}`, "partitionColumns": []string{}, "configuration": map[string]string{StreamingCheckpointsProperty: value}}})
		return s
	}
}

func TestReadersThatCannotBeHonouredRefuse(t *testing.T) {
	ctx := context.Background()
	cp, err := local.New("../readers/streaming/testdata/spark-4.2.0-delta-4.4.0/single")
	if err != nil {
		t.Fatal(err)
	}
	broken := mem.New("file:///tmp/readers-ice/broken")
	broken.PutAt("_delta_log/00000000000000000001.json", []byte("{}"), time.Now())
	for _, tc := range []struct {
		name  string
		table func(t *testing.T) *mem.Store
		opts  ReaderOptions
		want  string
		is    error
	}{
		{"another table's checkpoint", func(t *testing.T) *mem.Store {
			s := readersFixture(t, false)
			commit(t, s, 6, map[string]any{"metaData": map[string]any{"id": "another", "format": map[string]any{"provider": "parquet"},
				"schemaString": `{"type":"struct","fields":[]}`, "partitionColumns": []string{}, "configuration": map[string]string{}}})
			return s
		}, ReaderOptions{StreamingCheckpoints: []string{"cp"}, Open: opener(map[string]storage.Store{"cp": cp})}, "cp", streaming.ErrOtherTable},
		{"a checkpoint that is not there", func(t *testing.T) *mem.Store { return readersFixture(t, false) },
			ReaderOptions{StreamingCheckpoints: []string{"cp-gone"}, Open: opener(map[string]storage.Store{"cp-gone": mem.New("cp-gone")})}, "cp-gone", streaming.ErrCheckpoint},
		{"a checkpoint that cannot be opened", func(t *testing.T) *mem.Store { return readersFixture(t, false) },
			ReaderOptions{StreamingCheckpoints: []string{"nowhere"}, Open: opener(nil)}, "nowhere", nil},
		{"a front end that opens nothing", func(t *testing.T) *mem.Store { return readersFixture(t, false) },
			ReaderOptions{StreamingCheckpoints: []string{"cp"}}, "cannot open", nil},
		{"a checkpoint the table's property names", withCheckpointsProperty(" , /checkpoints/prop-cp "), ReaderOptions{Open: opener(nil)}, "/checkpoints/prop-cp", nil},
		// A relative location in the property would be looked for in each program's working
		// directory: refused, even when this program could open it.
		{"a relative checkpoint in the table's property", withCheckpointsProperty("s3://bucket/cp, cp"), ReaderOptions{Open: opener(map[string]storage.Store{"cp": cp})}, "names the streaming checkpoint cp by a relative path", nil},
		{"a relative file: URI in the table's property", withCheckpointsProperty("file:../cp"), ReaderOptions{Open: opener(map[string]storage.Store{"file:../cp": cp})}, "file:../cp by a relative path", nil},
		{"Iceberg metadata that cannot be read", func(t *testing.T) *mem.Store {
			s := readersFixture(t, true)
			s.PutAt("metadata/version-hint.text", []byte("7"), time.Now())
			return s
		}, ReaderOptions{}, "Iceberg", nil},
		{"a clone that cannot be read", func(t *testing.T) *mem.Store { return readersFixture(t, false) },
			ReaderOptions{Siblings: []string{"broken"}, Open: opener(map[string]storage.Store{"broken": broken})}, "broken", nil},
		{"a clone and no way to open it", func(t *testing.T) *mem.Store { return readersFixture(t, false) },
			ReaderOptions{Siblings: []string{"elsewhere"}}, "elsewhere", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := tc.table(t)
			snap, err := deltalog.Load(ctx, store)
			if err != nil {
				t.Fatal(err)
			}
			_, err = FindReaders(ctx, store, snap, time.Now(), tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "nothing was done") {
				t.Fatalf("got %v, want a refusal naming %q", err, tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("%v is not %v", err, tc.is)
			}
		})
	}
}

// TestCheckConverted: a log OneLake translates from an Iceberg table refuses every run; one
// Delta writes does not.
func TestCheckConverted(t *testing.T) {
	ctx := context.Background()
	store := readersFixture(t, false)
	snap, err := deltalog.Load(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckConverted(ctx, store, snap); err != nil {
		t.Fatalf("a Delta table: %v", err)
	}
	store.PutAt("_delta_log/latest_conversion_log.txt", []byte("x"), time.Now())
	if snap, err = deltalog.Load(ctx, store); err != nil {
		t.Fatal(err)
	}
	if err := CheckConverted(ctx, store, snap); !errors.Is(err, ErrConvertedLog) || !strings.Contains(err.Error(), "OneLake") {
		t.Fatalf("OneLake's translation: %v", err)
	}
	if _, err := Vacuum(ctx, store, Request{}); !errors.Is(err, ErrConvertedLog) {
		t.Fatalf("a VACUUM of it: %v", err)
	}
	if _, err := Vacuum(ctx, store, Request{DryRun: true}); !errors.Is(err, ErrConvertedLog) {
		t.Fatalf("a DRY RUN of it: %v", err)
	}
	for _, k := range store.Keys() {
		if strings.HasPrefix(k, "_deltavacuum/") {
			t.Errorf("the refusal wrote %s", k)
		}
	}
}

// TestStreamingLocations: the checkpoints registered for a table are the property's then the
// caller's, each once, blanks dropped; a relative location is the caller's to give (typed
// where it means something), never the property's.
func TestStreamingLocations(t *testing.T) {
	ctx := context.Background()
	store := withCheckpointsProperty(" /a , s3://b/c,, /a ")(t)
	snap, err := deltalog.Load(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	got, err := streamingLocations(snap, []string{"/a", " ", "rel/cp", "s3://b/c"})
	if want := []string{"/a", "s3://b/c", "rel/cp"}; err != nil || !slices.Equal(got, want) {
		t.Fatalf("streamingLocations = %q, %v; want %q", got, err, want)
	}
}

// TestStreamingCheckpointSecretNotShown: a checkpoint location written with a SAS token in
// the table property is opened with it, but named without it: in the refusal when it cannot
// be read, and as the reader when it is.
func TestStreamingCheckpointSecretNotShown(t *testing.T) {
	ctx := context.Background()
	const loc = "https://acct.blob.core.windows.net/c/cp?sv=2024-05-04&sig=PLANTEDSECRET"
	cp, err := local.New("../readers/streaming/testdata/spark-4.2.0-delta-4.4.0/single")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		opener func(context.Context, string) (storage.Store, error)
	}{
		{"cannot be opened", opener(nil)},
		{"read", opener(map[string]storage.Store{loc: cp})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := withCheckpointsProperty(loc)(t)
			snap, err := deltalog.Load(ctx, store)
			if err != nil {
				t.Fatal(err)
			}
			rs, err := FindReaders(ctx, store, snap, time.Now(), ReaderOptions{Open: tc.opener})
			shown := fmt.Sprint(err)
			if rs != nil {
				b, _ := json.Marshal(rs)
				shown += string(b)
			}
			if strings.Contains(shown, "PLANTEDSECRET") || !strings.Contains(shown, "acct.blob.core.windows.net/c/cp") {
				t.Errorf("shown: %s; want the checkpoint named without its SAS", shown)
			}
			if tc.name == "read" && (err != nil || len(rs.Readers) != 1) {
				t.Errorf("readers %v, %v; want the checkpoint read with its SAS", rs, err)
			}
		})
	}
}
