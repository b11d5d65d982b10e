package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/internal/fixtures"
)

// dryRunDoc is a DRY RUN's --json document, with the files and what readers keep.
func dryRunDoc(t *testing.T, dir string, extra ...string) map[string]any {
	t.Helper()
	args := append([]string{"vacuum", dir, "--dry-run", "--retain-hours", "0", "--conf", checkOff, "--json"}, extra...)
	code, out, errs := run(t, args...)
	if code != ExitOK {
		t.Fatalf("dry run: exit %d: %s", code, errs)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestPinKeepsAVersionReadable: pin, pins, unpin as a user runs them. A pin at version 4 of a
// table whose commits 5 to 9 and 13 remove files keeps those files in every DRY RUN (each named
// with the pin and its reason), lists as active, and once removed the files are deleted again.
// Refused pins write nothing.
func TestPinKeepsAVersionReadable(t *testing.T) {
	dir := fixtures.Copy(t, "delta/basic-with-inserts-deletes-checkpoint", time.Now().Add(-30*24*time.Hour))
	before := dryRunDoc(t, dir)
	all := before["numFilesToDelete"].(float64)
	if all == 0 {
		t.Fatal("the fixture has nothing to delete")
	}
	for _, bad := range [][]string{
		{"--version", "4", "--for", "40d", "--reason", "too long"},
		{"--version", "4", "--for", "1d", "--reason", ""},
		{"--version", "4", "--for", "1d", "--reason", "tab\there"},
		{"--version", "400", "--for", "1d", "--reason", "no such version"},
		{"--version", "4", "--timestamp", "2026-01-01T00:00:00Z", "--for", "1d", "--reason", "both"},
		{"--for", "1d", "--reason", "neither"},
		{"--version", "4", "--reason", "no duration"},
		{"--version", "-1", "--for", "1d", "--reason", "negative"},
		{"--timestamp", "1999-01-01T00:00:00Z", "--for", "1d", "--reason", "before the table"},
		{"--version", "4", "--for", "1d", "--reason", "x", "--max-pin", "nope"},
	} {
		code, out, errs := run(t, append([]string{"pin", dir, "--json"}, bad...)...)
		if code == ExitOK || !strings.Contains(out, `"error"`) {
			t.Errorf("pin %v: exit %d, stdout %q, stderr %q; want a refusal as a JSON document", bad, code, out, errs)
		}
		if _, err := os.Stat(filepath.Join(dir, "_deltavacuum")); !os.IsNotExist(err) {
			t.Fatalf("pin %v refused, yet it wrote the tool's folder (%v)", bad, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "_deltavacuum")); !os.IsNotExist(err) {
		t.Fatalf("refused pins left %s/_deltavacuum (%v)", dir, err)
	}

	code, out, errs := run(t, "pin", dir, "--version", "4", "--for", "2d", "--reason", "Q3 audit", "--json")
	if code != ExitOK {
		t.Fatalf("pin: exit %d: %s", code, errs)
	}
	var pin map[string]any
	if err := json.Unmarshal([]byte(out), &pin); err != nil || pin["version"] != float64(4) || pin["reason"] != "Q3 audit" {
		t.Fatalf("pin --json: %v %s", err, out)
	}
	id := pin["id"].(string)

	pinned := dryRunDoc(t, dir)
	kept := pinned["keptForReaders"].([]any)
	if len(kept) == 0 || pinned["numFilesToDelete"].(float64)+float64(len(kept)) != all {
		t.Fatalf("with the pin: %v to delete, %d kept; without it %v", pinned["numFilesToDelete"], len(kept), all)
	}
	for _, k := range kept {
		by := k.(map[string]any)["keptBy"].([]any)
		if len(by) != 1 || !strings.Contains(by[0].(string), id) || !strings.Contains(by[0].(string), "Q3 audit") || !strings.Contains(by[0].(string), "version 4") {
			t.Errorf("kept file %v names %v, want the pin %s, its reason and version", k, by, id)
		}
	}
	readers := pinned["readers"].([]any)
	if len(readers) != 1 || readers[0].(map[string]any)["numFilesKept"] != float64(len(kept)) {
		t.Errorf("readers: %v", readers)
	}
	code, out, _ = run(t, "vacuum", dir, "--dry-run", "--retain-hours", "0", "--conf", checkOff)
	if code != ExitOK || !strings.Contains(out, "read by the pin "+id) || !strings.Contains(out, "Reader: the pin "+id) {
		t.Errorf("the DRY RUN's text does not name the pin:\n%s", out)
	}

	code, out, _ = run(t, "pins", dir, "--json")
	var pins struct {
		Pins []map[string]any `json:"pins"`
	}
	if code != ExitOK || json.Unmarshal([]byte(out), &pins) != nil || len(pins.Pins) != 1 || pins.Pins[0]["state"] != "active" {
		t.Fatalf("pins --json: exit %d: %s", code, out)
	}

	// A real run keeps what the pin holds.
	code, _, errs = run(t, "vacuum", dir, "--retain-hours", "0", "--conf", checkOff, "--json")
	if code != ExitOK {
		t.Fatalf("vacuum: exit %d: %s", code, errs)
	}
	for _, k := range kept {
		p := k.(map[string]any)["path"].(string)
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(p))); err != nil {
			t.Errorf("the pinned %s was deleted: %v", p, err)
		}
	}

	if code, _, errs := run(t, "unpin", dir, "not-a-pin"); code != ExitUsage {
		t.Errorf("unpin of a bad id: exit %d: %s", code, errs)
	}
	if code, _, errs := run(t, "unpin", dir, id); code != ExitOK {
		t.Fatalf("unpin: exit %d: %s", code, errs)
	}
	if code, _, _ := run(t, "unpin", dir, id); code == ExitOK {
		t.Error("unpin of a pin no longer there succeeded")
	}
	after := dryRunDoc(t, dir)
	if len(after["keptForReaders"].([]any)) != 0 || after["numFilesToDelete"].(float64) != float64(len(kept)) {
		t.Errorf("after unpin: %v to delete, kept %v", after["numFilesToDelete"], after["keptForReaders"])
	}
}

// TestPinThatLiesFailsClosed: a pin planted in the table that cannot be trusted (dated in the
// future, longer than the maximum, of another id, not JSON, a directory) refuses every run,
// naming it and unpin; an expired one is passed over with a warning.
func TestPinThatLiesFailsClosed(t *testing.T) {
	const id = "0196f5a2-3c41-7d2e-9b1a-5c3e8f7a6b21"
	now := time.Now().UTC()
	pinJSON := func(created, until time.Time, pinID string) string {
		return `{"format":1,"id":"` + pinID + `","table":"x","version":4,"reason":"r","created":"` + created.Format(time.RFC3339) +
			`","until":"` + until.Format(time.RFC3339) + `","by":{"host":"h","pid":1}}`
	}
	for _, tc := range []struct {
		name, body string
		dir        bool
		refused    string
	}{
		{"dated in the future", pinJSON(now.Add(time.Hour), now.Add(2*time.Hour), id), false, "ahead of this clock"},
		{"longer than the maximum", pinJSON(now.Add(-time.Hour), now.Add(400*24*time.Hour), id), false, "longer than the maximum"},
		{"another id", pinJSON(now.Add(-time.Hour), now.Add(time.Hour), "0196f5a2-3c41-7d2e-9b1a-5c3e8f7a6b22"), false, "names pin"},
		{"not JSON", `{"format":1,`, false, "not a pin"},
		{"a directory", "", true, "not a pin"},
		{"an unknown member", strings.Replace(pinJSON(now.Add(-time.Hour), now.Add(time.Hour), id), `{`, `{"forever":true,`, 1), false, "forever"},
		{"expired", pinJSON(now.Add(-48*time.Hour), now.Add(-time.Hour), id), false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := fixtures.Copy(t, "delta/basic-with-inserts-deletes-checkpoint", time.Now().Add(-30*24*time.Hour))
			pins := filepath.Join(dir, "_deltavacuum", "lock")
			key := filepath.Join(pins, "pin-"+id+".json")
			if tc.dir {
				if err := os.MkdirAll(key, 0o755); err != nil {
					t.Fatal(err)
				}
			} else {
				if err := os.MkdirAll(pins, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(key, []byte(tc.body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			code, out, errs := run(t, "vacuum", dir, "--dry-run", "--retain-hours", "0", "--conf", checkOff)
			if tc.refused == "" {
				if code != ExitOK || !strings.Contains(errs, "no longer honoured") || strings.Contains(out, "read by") {
					t.Fatalf("an expired pin: exit %d\n%s\n%s", code, out, errs)
				}
				return
			}
			if code == ExitOK || !strings.Contains(errs, tc.refused) || !strings.Contains(errs, "unpin") {
				t.Fatalf("exit %d, want a refusal saying %q and unpin:\n%s", code, tc.refused, errs)
			}
			if code, _, errs := run(t, "vacuum", dir, "--retain-hours", "0", "--conf", checkOff); code == ExitOK {
				t.Fatalf("a real run went ahead beside a pin that cannot be trusted: %s", errs)
			}
		})
	}
}

// TestInspectAndExplainNameTheReaders: inspect reports each reader with the version it holds,
// what it alone keeps and until when, and warns of a VACUUM another engine ran (it honours no
// pin); explain says a pinned file is kept for the pin.
func TestInspectAndExplainNameTheReaders(t *testing.T) {
	dir := fixtures.Copy(t, "delta/basic-with-inserts-deletes-checkpoint", time.Now().Add(-30*24*time.Hour))
	code, out, errs := run(t, "pin", dir, "--version", "4", "--for", "2d", "--reason", "Q3 audit", "--json")
	if code != ExitOK {
		t.Fatalf("pin: exit %d: %s", code, errs)
	}
	var pin map[string]any
	if err := json.Unmarshal([]byte(out), &pin); err != nil {
		t.Fatal(err)
	}
	// Spark vacuumed the table once: its VACUUM honoured no pin.
	commit := `{"commitInfo":{"timestamp":1700000000000,"operation":"VACUUM START","operationParameters":{},"engineInfo":"Apache-Spark/3.5.3 Delta-Lake/3.2.1"}}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "_delta_log", "00000000000000000014.json"), []byte(commit), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs = run(t, "inspect", dir, "--retain-hours", "0", "--json")
	if code != ExitOK {
		t.Fatalf("inspect: exit %d: %s", code, errs)
	}
	var rep struct {
		Files struct {
			KeptForReaders struct{ Files int64 } `json:"keptForReaders"`
		} `json:"files"`
		Readers struct {
			Readers []struct {
				Kind          string
				Version       *int64
				KeptOnlyForIt struct{ Files, Bytes int64 } `json:"keptOnlyForIt"`
				Until         *time.Time
			} `json:"readers"`
			OtherVacuums []string `json:"otherVacuums"`
		} `json:"readers"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	rs := rep.Readers.Readers
	if len(rs) != 1 || rs[0].Kind != "pin" || rs[0].Version == nil || *rs[0].Version != 4 || rs[0].KeptOnlyForIt.Files == 0 || rs[0].Until == nil {
		t.Fatalf("readers: %+v", rep.Readers)
	}
	if rep.Files.KeptForReaders.Files != rs[0].KeptOnlyForIt.Files {
		t.Errorf("the breakdown counts %d files kept for readers, the reader %d", rep.Files.KeptForReaders.Files, rs[0].KeptOnlyForIt.Files)
	}
	if len(rep.Readers.OtherVacuums) != 1 || !strings.Contains(rep.Readers.OtherVacuums[0], "Apache-Spark") {
		t.Errorf("no warning of Spark's VACUUM: %v", rep.Readers.OtherVacuums)
	}
	code, out, _ = run(t, "inspect", dir, "--retain-hours", "0")
	if code != ExitOK || !strings.Contains(out, "Readers (what VACUUM keeps") || !strings.Contains(out, "warning: version 14") {
		t.Errorf("inspect's text:\n%s", out)
	}
	// Which file the pin keeps: the first one the DRY RUN names.
	doc := dryRunDoc(t, dir)
	kept := doc["keptForReaders"].([]any)
	if len(kept) == 0 {
		t.Fatal("nothing kept for the pin")
	}
	path := kept[0].(map[string]any)["path"].(string)
	code, out, errs = run(t, "explain", dir, path, "--retain-hours", "0")
	if code != ExitOK || !strings.Contains(out, "read by the pin "+pin["id"].(string)) {
		t.Errorf("explain %s: exit %d:\n%s\n%s", path, code, out, errs)
	}
}
