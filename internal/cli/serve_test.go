package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/deltavacuum/deltavacuum/internal/fixtures"
)

func TestServeConfig(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	copyTo(t, filepath.Join(dir, "a"))
	os.WriteFile(good, []byte("listen: 127.0.0.1:0\ndataDir: state\ntables:\n  - {id: a, path: "+filepath.Join(dir, "a")+"}\n"), 0o600)
	os.WriteFile(bad, []byte("dataDir: state\ntables:\n  - {id: a, path: /a, retain: 5}\n"), 0o600)

	if code, _, stderr := run(t, "serve"); code != 2 || !strings.Contains(stderr, "--config") {
		t.Errorf("no --config: got %d %q", code, stderr)
	}
	if code, _, stderr := run(t, "serve", "--config", bad); code != 1 || !strings.Contains(stderr, `line 3: table: unknown key "retain"`) {
		t.Errorf("bad file: got %d %q", code, stderr)
	}
	if code, stdout, _ := run(t, "serve", "--config", good, "--check"); code != 0 || !strings.Contains(stdout, "valid, 1 tables") || !strings.Contains(stdout, "table a ("+filepath.Join(dir, "a")+"): ok, version ") {
		t.Errorf("--check: got %d %q", code, stdout)
	}
	if _, err := os.Stat(filepath.Join(dir, "state")); err == nil {
		t.Error("--check created the data directory")
	}
}

// TestServeCheckBrokenTables: serve --check opens each configured table read-only; a
// location that does not exist and a folder that is not a Delta table are named broken, with
// why, and the check exits 1 though the file is valid. Nothing is written to the tables.
func TestServeCheckBrokenTables(t *testing.T) {
	dir := t.TempDir()
	copyTo(t, filepath.Join(dir, "a"))
	plain := filepath.Join(dir, "plain")
	os.MkdirAll(plain, 0o755)
	os.WriteFile(filepath.Join(plain, "x.parquet"), []byte("x"), 0o644)
	cfg := filepath.Join(dir, "m.yaml")
	os.WriteFile(cfg, []byte("dataDir: state\ntables:\n  - {id: a, path: "+filepath.Join(dir, "a")+"}\n"+
		"  - {id: gone, path: "+filepath.Join(dir, "gone")+"}\n  - {id: plain, path: "+plain+"}\n"), 0o600)
	before := fixtures.Files(t, dir)
	code, stdout, stderr := run(t, "serve", "--config", cfg, "--check")
	if code != ExitFailure {
		t.Errorf("exit %d, want %d", code, ExitFailure)
	}
	for _, want := range []string{"valid, 3 tables", "table a (", "): ok, version ", "table gone (" + filepath.Join(dir, "gone") + "): broken: ", "does not exist",
		"table plain (" + plain + "): broken: ", "is not a Delta table"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "2 of 3 tables are broken") {
		t.Errorf("stderr: %q", stderr)
	}
	if after := fixtures.Files(t, dir); len(after) != len(before) {
		t.Errorf("--check wrote or deleted files: %d before, %d after", len(before), len(after))
	}
}

// cancelOn cancels when a line it is written holds want.
type cancelOn struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	want   string
	cancel context.CancelFunc
}

func (c *cancelOn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buf.Write(p)
	if strings.Contains(c.buf.String(), c.want) {
		c.cancel()
	}
	return len(p), nil
}

func (c *cancelOn) String() string { c.mu.Lock(); defer c.mu.Unlock(); return c.buf.String() }

// TestServeStartsAndStops: serve opens its state, listens, and when its context is
// cancelled (SIGTERM) shuts down and exits 0.
func TestServeStartsAndStops(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "m.yaml")
	os.WriteFile(cfg, []byte("listen: 127.0.0.1:0\ndataDir: state\ntables:\n  - {id: a, path: "+filepath.Join(dir, "a")+"}\n"), 0o600)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out bytes.Buffer
	errb := &cancelOn{want: `"msg":"listening"`, cancel: cancel}
	if code := Run(ctx, []string{"serve", "--config", cfg}, strings.NewReader(""), &out, errb); code != 0 {
		t.Fatalf("got %d: %s", code, errb.String())
	}
	for _, want := range []string{`"msg":"listening"`, `"address":"127.0.0.1:`, `"msg":"shutting down"`} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("log lacks %s: %s", want, errb.String())
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "state", "deltavacuum-serve.db")); err != nil {
		t.Errorf("no state database: %v", err)
	}
}
