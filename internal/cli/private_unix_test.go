//go:build unix

package cli

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/internal/fixtures"
)

// pipeFD returns a descriptor from which content can be read, as a child inherits the read
// end of its parent's pipe; Run closes it.
func pipeFD(t *testing.T, content string) int {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	fd, err := syscall.Dup(int(r.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		w.WriteString(content) // the reader may stop early: a broken pipe then
		w.Close()
	}()
	return fd
}

// TestPrivateArgsThroughRun runs a dry run whose table, settings and a storage option come
// through a real descriptor, as the Python package passes them; the password of the endpoint
// is not printed.
func TestPrivateArgsThroughRun(t *testing.T) {
	dir := fixtures.Copy(t, "delta/basic-with-inserts-deletes-checkpoint", time.Now().Add(-30*24*time.Hour))
	private, _ := json.Marshal([]string{"--conf=" + checkOff, "--storage-option=aws_endpoint=http://user:SECRET-PW@127.0.0.1:1", "--", dir})
	code, out, errs := run(t, "--args-fd", strconv.Itoa(pipeFD(t, string(private))), "vacuum", "--retain-hours=0", "--dry-run", "--json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("stdout: %v\n%s", err, out)
	}
	if doc["numFilesToDelete"] != float64(7) || doc["dryRun"] != true {
		t.Errorf("got numFilesToDelete %v dryRun %v, want 7 and a dry run", doc["numFilesToDelete"], doc["dryRun"])
	}
	if strings.Contains(out+errs, "SECRET-PW") {
		t.Errorf("the endpoint's password is printed:\n%s%s", out, errs)
	}

	// A descriptor that is not open, and a command slipped in: usage errors, nothing run.
	r, w, _ := os.Pipe()
	closed := int(r.Fd())
	r.Close()
	w.Close()
	code, _, errs = run(t, "--args-fd="+strconv.Itoa(closed), "vacuum", "--retain-hours=0")
	if code != ExitUsage || !strings.Contains(errs, "--args-fd "+strconv.Itoa(closed)) {
		t.Errorf("a closed descriptor: exit %d, %q; want exit 2 naming it", code, errs)
	}
	code, _, errs = run(t, "--args-fd", strconv.Itoa(pipeFD(t, `["undo", "--", "`+dir+`"]`)), "vacuum", "--dry-run")
	if code != ExitUsage || !strings.Contains(errs, "private argument 0") {
		t.Errorf("a command in the channel: exit %d, %q; want exit 2", code, errs)
	}
	if len(fixtures.Files(t, dir)) != 60 {
		t.Error("a run deleted something")
	}
}
