package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum"
	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/internal/fixtures"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/local"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// cancelOnDelete cancels the run's context at its first delete: an interrupt (Ctrl-C) while
// batches are in flight.
type cancelOnDelete struct {
	*local.Store
	cancel context.CancelFunc
}

func (s *cancelOnDelete) Delete(ctx context.Context, keys []string) ([]storage.DeleteResult, error) {
	s.cancel()
	return s.Store.Delete(ctx, keys)
}

// TestInterruptPrintsOneLine: a run interrupted while its batches are in flight printed one
// "failed … context canceled" line per file it never reached (4 801 lines on main); now the
// files the store did not delete are "not reached": one line of text, the list in --json, and
// none of them is reported failed.
func TestInterruptPrintsOneLine(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-30 * 24 * time.Hour)
	for i := range 600 {
		p := filepath.Join(dir, fmt.Sprintf("stray-%04d.parquet", i))
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		_ = os.Chtimes(p, old, old)
	}
	st, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := deltalog.WriteCommit(context.Background(), st, 0, []any{
		map[string]any{"protocol": map[string]any{"minReaderVersion": 1, "minWriterVersion": 2}},
		map[string]any{"metaData": map[string]any{"id": "t", "format": map[string]any{"provider": "parquet"},
			"schemaString": `{"type":"struct","fields":[]}`, "partitionColumns": []string{}, "configuration": map[string]string{}}},
	}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	zero := 0.0
	tbl := deltavacuum.OpenStore(&cancelOnDelete{Store: st, cancel: cancel})
	res, err := tbl.Vacuum(ctx, deltavacuum.VacuumOptions{Options: vacuum.Options{RetainHours: &zero, DisableRetentionCheck: true},
		Exec: vacuum.ExecOptions{BatchSize: 100, Concurrency: 4}})
	if err == nil || res == nil {
		t.Fatalf("an interrupted run: %v, %v", res, err)
	}
	if len(res.Failed) != 0 || len(res.NotReached) == 0 {
		t.Fatalf("failed %d, not reached %d: the files an interrupt stopped are not failures", len(res.Failed), len(res.NotReached))
	}
	var out bytes.Buffer
	if err := printResult(&out, res); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "\n"); n > 10 || strings.Contains(out.String(), "context canceled") {
		t.Errorf("%d lines:\n%s", n, out.String())
	}
	if !strings.Contains(out.String(), fmt.Sprintf("Stopped before %d files of the 600 planned", len(res.NotReached))) {
		t.Errorf("no summary line:\n%s", out.String())
	}
	// Issue 36, item 5: every planned file not deleted is counted, not the batches in flight.
	if got := res.NumDeletedFiles + int64(len(res.NotReached)); got != 600 {
		t.Errorf("deleted %d + not reached %d = %d of 600 planned", res.NumDeletedFiles, len(res.NotReached), got)
	}
	if strings.Contains(err.Error(), "context canceled") {
		t.Errorf("the error says Go's words: %s", err)
	}
}

// TestInterruptSaysItInWords (issue 36, item 5): an interrupt is said as one ("interrupted"),
// never in Go's words ("context canceled"), with exit status 130, and --json prints its error
// document with that status.
func TestInterruptSaysItInWords(t *testing.T) {
	dir := fixtures.Copy(t, "delta/basic-with-inserts-deletes-checkpoint", time.Now().Add(-30*24*time.Hour))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, args := range [][]string{
		{"vacuum", dir, "--dry-run"},
		{"vacuum", dir, "--json", "--retain-hours", "0", "--conf", checkOff},
		{"inspect", dir, "--json"},
	} {
		var out, errs bytes.Buffer
		code := Run(ctx, args, strings.NewReader(""), &out, &errs)
		if code != ExitInterrupted || strings.Contains(errs.String(), "context canceled") || !strings.Contains(errs.String(), "interrupted") {
			t.Errorf("%v: exit %d: %s", args, code, errs.String())
		}
		if slices.Contains(args, "--json") {
			var doc map[string]any
			if err := json.Unmarshal(out.Bytes(), &doc); err != nil || doc["exitCode"] != float64(ExitInterrupted) || strings.Contains(doc["error"].(string), "context canceled") {
				t.Errorf("%v --json: %v\n%s", args, err, out.String())
			}
		}
	}
}
