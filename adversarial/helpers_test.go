package adversarial

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum"
	"github.com/deltavacuum/deltavacuum/internal/cli"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// day is 24 hours: data files of the hostile tables are 30 days old unless a test says so.
const day = 24 * time.Hour

// checkOff turns the retention safety check off, so that RETAIN 0 HOURS is allowed.
const checkOff = "spark.databricks.delta.retentionDurationCheck.enabled=false"

// localTable is a Delta table in a temporary directory whose commits are written line by line,
// as given: a hostile test writes the exact bytes a careless writer would.
type localTable struct {
	t       testing.TB
	dir     string
	version int64
}

// protocolLine and metadataLine are the first commit of every hostile table.
const (
	protocolLine = `{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}`
	metadataLine = `{"metaData":{"id":"hostile","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[]}","partitionColumns":[],"configuration":{},"createdTime":0}}`
)

// newLocalTable creates a table whose version 0 holds protocolLine and metadataLine.
func newLocalTable(t testing.TB) *localTable {
	t.Helper()
	tb := &localTable{t: t, dir: t.TempDir(), version: -1}
	tb.commit(protocolLine, metadataLine)
	return tb
}

// newLocalTableIn is newLocalTable at dir, with the first commit given.
func newLocalTableIn(t testing.TB, dir string, lines ...string) *localTable {
	t.Helper()
	tb := &localTable{t: t, dir: dir, version: -1}
	if len(lines) == 0 {
		lines = []string{protocolLine, metadataLine}
	}
	tb.commit(lines...)
	return tb
}

// commit writes the next version with the given lines, byte for byte.
func (tb *localTable) commit(lines ...string) int64 {
	tb.t.Helper()
	tb.version++
	p := filepath.Join(tb.dir, "_delta_log", fmt.Sprintf("%020d.json", tb.version))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		tb.t.Fatal(err)
	}
	data := strings.Join(lines, "\n") + "\n"
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		tb.t.Fatal(err)
	}
	old := time.Now().Add(-20 * day)
	if err := os.Chtimes(p, old, old); err != nil {
		tb.t.Fatal(err)
	}
	return tb.version
}

// file creates a data file, relative to the table root, last modified age ago.
func (tb *localTable) file(rel string, age time.Duration) {
	tb.t.Helper()
	writeOld(tb.t, filepath.Join(tb.dir, filepath.FromSlash(rel)), age)
}

// exists reports whether rel (relative to the table root) is still there; a symbolic link
// counts as there, whatever it points to.
func (tb *localTable) exists(rel string) bool {
	_, err := os.Lstat(filepath.Join(tb.dir, filepath.FromSlash(rel)))
	return err == nil
}

// mustExist fails the test for every rel that is gone.
func (tb *localTable) mustExist(rels ...string) {
	tb.t.Helper()
	for _, rel := range rels {
		if !tb.exists(rel) {
			tb.t.Errorf("%s was deleted: it is live", rel)
		}
	}
}

// writeOld writes a small file at path (creating its directories), last modified age ago.
func writeOld(t testing.TB, path string, age time.Duration) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("data of "+filepath.Base(path)), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-age)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
}

// addLine is an add action for path (written into the JSON as is, already escaped by the
// caller where it must be).
func addLine(path string) string {
	return `{"add":{"path":` + jsonString(path) + `,"size":1,"modificationTime":0,"dataChange":true,"partitionValues":{}}}`
}

// removeLine is a remove action for path, deleted long ago (expired under any retention).
func removeLine(path string) string {
	return `{"remove":{"path":` + jsonString(path) + `,"deletionTimestamp":1000,"dataChange":true}}`
}

func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSpace(b.String())
}

// run runs the command line in-process, as a user would from a shell.
func run(t testing.TB, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = cli.Run(context.Background(), args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// vacuumNow runs a real VACUUM RETAIN 0 HOURS of dir (check off) and returns the exit code and
// standard error: every unreferenced file is then a candidate, the hardest case for a rule.
func vacuumNow(t testing.TB, dir string, extra ...string) (int, string) {
	t.Helper()
	args := append([]string{"vacuum", dir, "--retain-hours", "0", "--conf", checkOff}, extra...)
	code, _, stderr := run(t, args...)
	return code, stderr
}

// metadataWith is metadataLine with the given table configuration (a JSON object).
func metadataWith(conf string) string {
	return strings.Replace(metadataLine, `"configuration":{}`, `"configuration":`+conf, 1)
}

// removeAt is a remove action for path deleted at ts.
func removeAt(path string, ts time.Time) string {
	return fmt.Sprintf(`{"remove":{"path":%s,"deletionTimestamp":%d,"dataChange":true}}`, jsonString(path), ts.UnixMilli())
}

// storeTable is a Delta table on a store (an object-store prefix), its commits written line by
// line as given.
type storeTable struct {
	t       testing.TB
	store   storage.Store
	version int64
}

func newStoreTable(t testing.TB, store storage.Store) *storeTable {
	t.Helper()
	tb := &storeTable{t: t, store: store, version: -1}
	tb.commit(protocolLine, metadataLine)
	return tb
}

func (tb *storeTable) commit(lines ...string) {
	tb.t.Helper()
	tb.version++
	key := "_delta_log/" + fmt.Sprintf("%020d", tb.version) + ".json"
	if err := tb.store.Put(context.Background(), key, []byte(strings.Join(lines, "\n")+"\n")); err != nil {
		tb.t.Fatalf("writing %s: %v", key, err)
	}
}

func (tb *storeTable) put(key string) {
	tb.t.Helper()
	if err := tb.store.Put(context.Background(), key, []byte("data of "+key)); err != nil {
		tb.t.Fatalf("writing %q: %v", key, err)
	}
}

func (tb *storeTable) exists(key string) bool {
	tb.t.Helper()
	_, err := tb.store.Stat(context.Background(), key)
	if err != nil && !errors.Is(err, storage.ErrNotExist) {
		tb.t.Fatalf("stat %q: %v", key, err)
	}
	return err == nil
}

func (tb *storeTable) mustExist(keys ...string) {
	tb.t.Helper()
	for _, k := range keys {
		if !tb.exists(k) {
			tb.t.Errorf("%q was deleted: it is live", k)
		}
	}
}

// vacuumStore runs a real VACUUM RETAIN 0 HOURS (check off) of the table on store, with a
// clock 30 seconds ahead (within the minute the clock check allows) so that the objects the
// server just wrote count as old.
func vacuumStore(t *testing.T, store storage.Store, mode vacuum.Mode, inv vacuum.Walker) (*vacuum.Result, error) {
	t.Helper()
	retain := 0.0
	return deltavacuum.OpenStore(store).Vacuum(context.Background(), deltavacuum.VacuumOptions{
		Options: vacuum.Options{
			RetainHours: &retain, DisableRetentionCheck: true, Mode: mode, Inventory: inv,
			Now: time.Now().Add(30 * time.Second),
		},
	})
}

// writeFile writes data at p, creating its directories.
func writeFile(t testing.TB, p string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
