package cli

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/internal/buildinfo"
	"github.com/deltavacuum/deltavacuum/internal/fixtures"
)

func TestVersion(t *testing.T) {
	code, out, errs := run(t, "version")
	if code != ExitOK || !strings.HasPrefix(out, "deltavacuum "+buildinfo.Get().Version+"\n") || !strings.Contains(out, "go: "+runtime.Version()) ||
		!strings.Contains(out, "commit: ") || !strings.Contains(out, "built: ") {
		t.Fatalf("version: exit %d\n%s%s", code, out, errs)
	}
	code, out2, _ := run(t, "--version")
	if code != ExitOK || out2 != out {
		t.Errorf("--version prints %q, version %q", out2, out)
	}
	code, js, _ := run(t, "version", "--json")
	var doc map[string]any
	if err := json.Unmarshal([]byte(js), &doc); code != ExitOK || err != nil {
		t.Fatalf("version --json: exit %d, %v\n%s", code, err, js)
	}
	for _, k := range []string{"version", "commit", "date", "modified", "goVersion", "platform"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("version --json lacks %q", k)
		}
	}
	if code, _, errs := run(t, "version", "extra"); code != ExitUsage {
		t.Errorf("version extra: exit %d, %s", code, errs)
	}
}

// TestEngineInfoIsTheVersion: the commits a run writes name the version `version` prints.
func TestEngineInfoIsTheVersion(t *testing.T) {
	dir := fixtures.Copy(t, "delta/basic-with-inserts-deletes-checkpoint", time.Now().Add(-30*24*time.Hour))
	if code, _, errs := run(t, "vacuum", dir, "--retain-hours", "0", "--conf", checkOff); code != ExitOK {
		t.Fatalf("vacuum: exit %d: %s", code, errs)
	}
	code, out, errs := run(t, "history", dir, "--limit", "2", "--json")
	if code != ExitOK {
		t.Fatalf("history: exit %d: %s", code, errs)
	}
	var doc struct {
		History []struct {
			Operation  string `json:"operation"`
			EngineInfo string `json:"engineInfo"`
		} `json:"history"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.History) != 2 {
		t.Fatalf("history: %v\n%s", err, out)
	}
	for _, h := range doc.History {
		if h.EngineInfo != "deltavacuum/"+buildinfo.Get().Version {
			t.Errorf("%s commit has engineInfo %q, want deltavacuum/%s", h.Operation, h.EngineInfo, buildinfo.Get().Version)
		}
	}
}
