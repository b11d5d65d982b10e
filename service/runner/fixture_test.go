package runner

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/internal/redact"
	"github.com/deltavacuum/deltavacuum/service/config"
	"github.com/deltavacuum/deltavacuum/service/state"
	"github.com/deltavacuum/deltavacuum/service/tables"
	"github.com/deltavacuum/deltavacuum/storage/local"
)

// The runner's own tests run it without the HTTP side: its tables on local disk, its state
// database, an injected clock.

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

type fixture struct {
	r     *Runner
	ts    *tables.Set
	db    *state.DB
	cfg   *config.Config
	env   *tables.Env
	clock *clock
	dir   string // the tables' parent
}

// makeTable writes a table at dir: live.parquet is live, old.parquet was removed 10 days
// before now, stray.parquet was never committed; all three are 10 days old.
func makeTable(t *testing.T, dir string, now time.Time) {
	t.Helper()
	store, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	old := now.Add(-10 * 24 * time.Hour)
	actions := []any{
		map[string]any{"protocol": map[string]any{"minReaderVersion": 1, "minWriterVersion": 2}},
		map[string]any{"metaData": map[string]any{"id": "t", "format": map[string]any{"provider": "parquet"},
			"schemaString": `{"type":"struct","fields":[]}`, "partitionColumns": []string{}, "configuration": map[string]string{}}},
		map[string]any{"add": map[string]any{"path": "live.parquet", "size": 4, "modificationTime": old.UnixMilli(), "dataChange": true}},
		map[string]any{"remove": map[string]any{"path": "old.parquet", "deletionTimestamp": old.UnixMilli(), "dataChange": true}},
	}
	if err := deltalog.WriteCommit(context.Background(), store, 0, actions); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"live.parquet", "old.parquet", "stray.parquet", filepath.Join("_delta_log", "00000000000000000000.json")} {
		p := filepath.Join(dir, f)
		if !strings.HasPrefix(f, "_delta_log") {
			if err := os.WriteFile(p, []byte("data"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
}

// newFixture writes the tables the configuration's tables name (each path TABLES/<id>) and
// makes their runner.
func newFixture(t *testing.T, yamlTables string) *fixture {
	t.Helper()
	dir := t.TempDir()
	parent := filepath.Join(dir, "tables")
	cfg, err := config.Parse([]byte("dataDir: "+filepath.Join(dir, "state")+"\n"+strings.ReplaceAll(yamlTables, "TABLES", parent)), "m.yaml", dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cfg.Tables {
		makeTable(t, tc.Path, t0)
	}
	db, err := state.Open(context.Background(), cfg.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	c := &clock{t: t0}
	env := &tables.Env{Now: c.now, Red: redact.New(), Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	ts, err := tables.New(env, cfg, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{ts: ts, db: db, cfg: cfg, env: env, clock: c, dir: parent}
	f.r = f.runner(t)
	return f
}

// runner makes a runner of the fixture's tables and state database (a second one is the service
// restarted), shut down at the end of the test.
func (f *fixture) runner(t *testing.T) *Runner {
	r := New(Config{Env: f.env, Service: f.cfg, State: f.db, Tables: f.ts, Registry: prometheus.NewRegistry()})
	t.Cleanup(func() { r.Shutdown(context.Background()) })
	return r
}
