package service

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCompanionsCounted: a Hadoop checksum companion deleted with its file is counted once,
// as a companion of that file: not also as a hidden file the preview keeps; a live file's
// companion is kept (hidden). The run and its undo say files and companions the same way:
// "2 files (+1 checksum companion)" deleted, and restored.
func TestCompanionsCounted(t *testing.T) {
	f := newFixture(t, "tables:\n  - {id: a, path: TABLES/a, policy: {trash: true, inspectEvery: off}}\n", nil, nil)
	a := filepath.Join(f.dir, "a")
	old := t0.Add(-240 * 60 * 60 * 1e9)
	for _, name := range []string{".stray.parquet.crc", ".live.parquet.crc"} {
		p := filepath.Join(a, name)
		if err := os.WriteFile(p, []byte("crc!"), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, old, old)
	}
	plan, body := previewDigest(t, f, "a")
	if body["numFilesToDelete"].(float64) != 2 {
		t.Fatalf("preview: %v", body)
	}
	_, pp := f.do(t, "GET", "/api/tables/a/previews/"+plan, "")
	if pp["numChecksumCompanions"].(float64) != 1 {
		t.Errorf("companions: %v, want 1", pp["numChecksumCompanions"])
	}
	kept := map[string]float64{}
	for _, k := range pp["keptByRule"].([]any) {
		k := k.(map[string]any)
		kept[k["rule"].(string)] = k["files"].(float64)
	}
	if kept["hidden"] != 1 || kept["live"] != 1 {
		t.Errorf("kept by rule: %v, want the live file and its companion only (the deleted file's companion is not kept)", kept)
	}
	folder := pp["folders"].(map[string]any)["items"].([]any)[0].(map[string]any)
	if folder["deleteFiles"].(float64) != 2 || folder["deleteChecksumCompanions"].(float64) != 1 || folder["keptFiles"].(float64) != 2 {
		t.Errorf("the root folder: %v, want 2 files and 1 companion deleted, 2 kept", folder)
	}
	_, page := f.do(t, "GET", "/tables/a/previews/"+plan, "")
	if html := page["text"].(string); !strings.Contains(html, "moves 2 files (+1 checksum companion)") {
		t.Errorf("the preview page does not count the companion apart:\n%s", html)
	}

	run := runPlan(t, f, plan)
	id := run["id"].(string)
	if exists(t, filepath.Join(a, ".stray.parquet.crc")) || !exists(t, filepath.Join(a, ".live.parquet.crc")) {
		t.Fatal("the run did not move exactly the deleted file's companion")
	}
	if run["figures"].(map[string]any)["numChecksumCompanions"].(float64) != 1 {
		t.Errorf("the run's figures: %v", run["figures"])
	}
	_, page = f.do(t, "GET", "/runs/"+id, "")
	if html := page["text"].(string); !strings.Contains(html, "2 files (+1 checksum companion) moved to the trash") {
		t.Errorf("the run page:\n%s", html)
	}
	_, page = f.do(t, "GET", "/runs/"+id+"?undo=dry", "")
	html := page["text"].(string)
	if !strings.Contains(html, "Restore 2 files (+1 checksum companion)") || !strings.Contains(html, "would restore 2 files (+1 checksum companion)") {
		t.Errorf("the undo's dry run does not count as the run does:\n%s", html)
	}
	if code, _ := f.do(t, "POST", "/api/runs/"+id+"/undo", "{}"); code != 200 {
		t.Fatalf("undo: %d", code)
	}
	f.srv.Wait()
	_, page = f.do(t, "GET", "/runs/"+id, "")
	if html := page["text"].(string); !strings.Contains(html, "all 2 files (+1 checksum companion) back") || !strings.Contains(html, "restored 2 files (+1 checksum companion)") {
		t.Errorf("the run page after the undo:\n%s", html)
	}
}
