package service

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/run"

	"github.com/google/go-cmp/cmp"
)

// TestUntrackedGrewWebhook: a run that finds twice as many untracked files as the table's run
// before posts untracked.grew (the two runs, their counts, the folders with what the run
// before found there, one line of text), sets the metrics, and logs it; the first run that
// counts posts nothing; a webhook with on: [failed] is not sent the event, and the metrics
// still count it.
func TestUntrackedGrewWebhook(t *testing.T) {
	for _, on := range []string{"", ", on: [failed]"} {
		hs := newHookServer(t)
		f := newFixture(t, "webhook: {url: '${HOOK_URL}'"+on+"}\ntables:\n  - {id: a, path: TABLES/a}\n", map[string]string{"HOOK_URL": hs.URL}, nil)
		first := startRun(t, f, "a") // makeTable's stray.parquet: 1 untracked file
		dir := filepath.Join(f.dir, "a", "p=1")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		manyStray(t, dir, 3)
		f.clock.set(t0.Add(time.Minute))
		second := startRun(t, f, "a")
		f.srv.waitWebhooks()
		posts := hs.posts()
		_, m := f.do(t, "GET", "/metrics", "")
		for _, line := range []string{`deltavacuum_serve_untracked_files{table="a"} 3`, `deltavacuum_serve_untracked_bytes{table="a"} 3`, `deltavacuum_serve_untracked_grew_total{table="a"} 1`} {
			if !strings.Contains(m["text"].(string), line+"\n") {
				t.Errorf("on %q: metrics lack %q", on, line)
			}
		}
		if on != "" {
			if len(posts) != 0 {
				t.Errorf("on: [failed] posted %s", posts)
			}
			continue
		}
		if len(posts) != 1 {
			t.Fatalf("%d posts, want 1", len(posts))
		}
		var ev UntrackedGrewEvent
		if err := json.Unmarshal(posts[0], &ev); err != nil {
			t.Fatal(err)
		}
		want := UntrackedGrewEvent{Event: "untracked.grew", Table: "a", Location: filepath.Join(f.dir, "a"), Run: second, PreviousRun: first,
			Untracked: run.Untracked{Files: 3, Bytes: 3, NumFolders: 1, Folders: []run.FolderCount{{Folder: "p=1", Files: 3, Bytes: 3}}},
			Previous:  run.Untracked{Files: 1, Bytes: 4, NumFolders: 1, Folders: []run.FolderCount{{Folder: "", Files: 1, Bytes: 4}}}, // stray.parquet
			Folders:   []UntrackedFolder{{FolderCount: run.FolderCount{Folder: "p=1", Files: 3, Bytes: 3}}},
			Text:      ev.Text}
		if diff := cmp.Diff(want, ev); diff != "" {
			t.Errorf("event (-want +got):\n%s", diff)
		}
		for _, s := range []string{"table a", second, "3 untracked files", "2 more than run " + first, "p=1 3"} {
			if !strings.Contains(ev.Text, s) {
				t.Errorf("text %q does not say %q", ev.Text, s)
			}
		}
	}
}
