package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/internal/fixtures"
)

// TestVacuumShardFlags: --shard and --version are documented, hostile values are usage errors
// (exit 2) that say what to write, --shard without --version is refused, and the text and JSON
// outputs say the shard.
func TestVacuumShardFlags(t *testing.T) {
	_, help, _ := run(t, "vacuum", "--help")
	for _, want := range []string{"--shard I/N", "--version V", "JOB_COMPLETION_INDEX", "_last_vacuum_info"} {
		if !strings.Contains(help, want) {
			t.Errorf("vacuum --help does not say %q", want)
		}
	}
	dir := fixtures.Copy(t, "delta/basic-with-inserts-deletes-checkpoint", time.Now().Add(-30*24*time.Hour))
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"--shard", "3/2", "--version", "13"}, ExitUsage, "from 0 to 1"},
		{[]string{"--shard", "0/0", "--version", "13"}, ExitUsage, "at least 1"},
		{[]string{"--shard", "-1/4", "--version", "13"}, ExitUsage, "INDEX/COUNT"},
		{[]string{"--shard", "a/b", "--version", "13"}, ExitUsage, "INDEX/COUNT"},
		{[]string{"--shard", "1/4/5", "--version", "13"}, ExitUsage, "INDEX/COUNT"},
		{[]string{"--shard", "/8", "--version", "13"}, ExitUsage, "JOB_COMPLETION_INDEX"}, // "${JOB_COMPLETION_INDEX}/8" unset
		{[]string{"--shard", "0/1000001", "--version", "13"}, ExitUsage, "at most 100000"},
		{[]string{"--shard", "1/4"}, ExitUsage, "--version V"},
		{[]string{"--version", "-1"}, ExitUsage, "0 or more"},
		{[]string{"--version", "x"}, ExitUsage, "invalid argument"},
		{[]string{"--version", "14"}, ExitFailure, "version 14 does not exist: the latest version is 13"},
	} {
		code, _, errs := run(t, append([]string{"vacuum", dir, "--dry-run"}, tc.args...)...)
		if code != tc.code || !strings.Contains(errs, tc.says) {
			t.Errorf("%q: exit %d %q; want exit %d saying %q", tc.args, code, errs, tc.code, tc.says)
		}
	}
	args := []string{"vacuum", dir, "--dry-run", "--retain-hours", "0", "--conf", checkOff, "--shard", "0/1", "--version", "12"}
	code, out, errs := run(t, args...)
	if code != ExitOK || !strings.Contains(out, "This was shard 0/1 of "+"file://") || !strings.Contains(out, "at version 12") {
		t.Errorf("exit %d, text output %q %s", code, out, errs)
	}
	code, out, errs = run(t, append(args, "--json")...)
	var doc struct {
		Version int64
		Shard   *struct{ Index, Count int }
	}
	if err := json.Unmarshal([]byte(out), &doc); code != ExitOK || err != nil || doc.Shard == nil || doc.Shard.Count != 1 || doc.Version != 12 {
		t.Errorf("exit %d, JSON %s (%v) %s", code, out, err, errs)
	}
}
