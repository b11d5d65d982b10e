package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer the command writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// TestDemoServe: demo --serve builds the example table and serves it; through its API (what the
// page calls) the table previews, runs exactly the preview into its trash, and undoes; Ctrl-C
// (the context) stops it and the temporary directory goes.
func TestDemoServe(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errs syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, []string{"demo", "--serve", "--listen", "127.0.0.1:0"}, strings.NewReader(""), &out, &errs)
	}()
	urlRE := regexp.MustCompile(`Open (http://127\.0\.0\.1:\d+/)`)
	tableRE := regexp.MustCompile(`An example table at (\S+), served`)
	var base string
	for deadline := time.Now().Add(2 * time.Minute); base == ""; {
		select {
		case code := <-done:
			t.Fatalf("demo --serve exited %d: %s\n%s", code, out.String(), errs.String())
		case <-time.After(20 * time.Millisecond):
		}
		if m := urlRE.FindStringSubmatch(out.String()); m != nil {
			base = m[1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no address printed: %s\n%s", out.String(), errs.String())
		}
	}
	table := tableRE.FindStringSubmatch(out.String())[1]
	call := func(method, path, body string) map[string]any {
		t.Helper()
		req, err := http.NewRequest(method, base+strings.TrimPrefix(path, "/"), strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode >= 300 {
			t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
		}
		var doc map[string]any
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatal(err)
			}
		} else {
			doc = map[string]any{"html": string(b)}
		}
		return doc
	}
	if page := call("GET", "/", "")["html"].(string); !strings.Contains(page, "sales") {
		t.Fatalf("the tables page does not list the demo table:\n%s", page)
	}
	preview := call("POST", "/api/tables/sales/preview", "{}")
	if n := preview["numFilesToDelete"]; n != float64(4) {
		t.Fatalf("the preview deletes %v files, want the demo's 4 (a checksum goes with its file): %v", n, preview)
	}
	untracked := table + "/region=eu/part-00099-dead.c000.snappy.parquet"
	started := call("POST", "/api/tables/sales/runs", `{"plan": "`+preview["planDigest"].(string)+`"}`)
	id := started["id"].(string)
	var run map[string]any
	for deadline := time.Now().Add(2 * time.Minute); ; {
		if run = call("GET", "/api/runs/"+id, ""); run["status"] != "RUNNING" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run did not end: %v", run)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if run["status"] != "COMPLETED" {
		t.Fatalf("run: %v", run)
	}
	if _, err := os.Stat(untracked); !os.IsNotExist(err) {
		t.Fatalf("the untracked old file is still there after the run: %v", err)
	}
	call("POST", "/api/runs/"+id+"/undo", "{}")
	if _, err := os.Stat(untracked); err != nil {
		t.Fatalf("the undo did not bring the file back: %v", err)
	}
	cancel()
	select {
	case code := <-done:
		if code != ExitOK {
			t.Fatalf("demo --serve exited %d after Ctrl-C: %s", code, errs.String())
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("demo --serve did not stop")
	}
	if _, err := os.Stat(table); !os.IsNotExist(err) {
		t.Errorf("the demo's temporary table is left behind: %v", err)
	}
}

// TestDemoServeRefuses: the demo serves loopback only (it has no token), and --listen belongs
// to --serve.
func TestDemoServeRefuses(t *testing.T) {
	for _, args := range [][]string{
		{"demo", "--serve", "--listen", "0.0.0.0:8080"},
		{"demo", "--serve", "--listen", "192.168.1.4:8080"},
		{"demo", "--serve", "--listen", "localhost:8080\ntoken: x"},
		{"demo", "--serve", "--listen", "127.0.0.1"},
		{"demo", "--listen", "127.0.0.1:8080"},
	} {
		code, _, errs := run(t, args...)
		if code != ExitUsage || !strings.Contains(errs, "--listen") {
			t.Errorf("%q: exit %d, %s", args, code, errs)
		}
	}
}
