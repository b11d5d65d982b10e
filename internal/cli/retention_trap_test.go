package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/internal/fixtures"
)

// TestRetention2555HoursWarns: 2555 hours are about 106 days, not the seven years (2555 days)
// regulated tables mean. Every entry point that takes a retention accepts it and says so:
// --retain-hours, SQL RETAIN, ALTER TABLE, a run on a table whose own retention is 2555 hours,
// and serve --check.
func TestRetention2555HoursWarns(t *testing.T) {
	dir := fixtures.Copy(t, "delta/basic-with-inserts-deletes-checkpoint", time.Now().Add(-30*24*time.Hour))
	if _, _, stderr := run(t, "vacuum", dir, "--retain-hours", "2556", "--dry-run"); strings.Contains(stderr, "106 days") {
		t.Errorf("2556 hours warned: %s", stderr)
	}
	for _, args := range [][]string{
		{"vacuum", dir, "--retain-hours", "2555", "--dry-run"},
		{"sql", "VACUUM '" + dir + "' RETAIN 2555 HOURS DRY RUN"},
		{"sql", "ALTER TABLE '" + dir + "' SET TBLPROPERTIES ('delta.logRetentionDuration' = 'interval 3650 days', 'delta.deletedFileRetentionDuration' = 'interval 2555 hours')"},
		{"vacuum", dir, "--dry-run"}, // the table's own retention, set just above
	} {
		code, _, stderr := run(t, args...)
		if code != ExitOK || !strings.Contains(stderr, "about 106 days, not 7 years") {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
	cfg := filepath.Join(t.TempDir(), "maintenance.yaml")
	if err := os.WriteFile(cfg, []byte("dataDir: "+t.TempDir()+"\ntables:\n  - {id: a, path: "+dir+", policy: {retention: 2555}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := run(t, "serve", "--config", cfg, "--check")
	if code != ExitOK || !strings.Contains(stderr, "about 106 days") {
		t.Errorf("serve --check: exit %d: %s", code, stderr)
	}
}
