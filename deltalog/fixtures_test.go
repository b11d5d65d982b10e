package deltalog_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/internal/fixtures"
	"github.com/deltavacuum/deltavacuum/storage/local"
)

func fileSet(t *testing.T, s *deltalog.Snapshot, store *local.Store) []string {
	t.Helper()
	out, err := files(s, store)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func files(s *deltalog.Snapshot, store *local.Store) ([]string, error) {
	var out []string
	err := s.Files(context.Background(), store, func(f deltalog.File) error {
		out = append(out, fmt.Sprintf("%s|%s|removed=%v|ts=%d", f.Key, f.DVKey, f.Removed, f.DeletionTimestamp))
		return nil
	})
	sort.Strings(out)
	return out, err
}

// TestFixturesLoad loads every fixture table; where a table has a checkpoint and every commit
// from 0, replay from the checkpoint must equal replay of all commits (same live files; the
// checkpoint may have dropped tombstones that expired when it was written, so removes are
// compared only for keys the checkpoint replay still has).
func TestFixturesLoad(t *testing.T) {
	for _, tbl := range fixtures.Tables(t) {
		t.Run(tbl.Name, func(t *testing.T) {
			dir := fixtures.Copy(t, tbl.Name, time.Now())
			store, err := local.New(dir)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			snap, err := deltalog.Load(ctx, store)
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			if snap.Version < 0 || snap.Metadata.ID == "" || snap.Protocol.MinReaderVersion == 0 {
				t.Errorf("incomplete snapshot: version %d, metadata id %q, protocol %+v", snap.Version, snap.Metadata.ID, snap.Protocol)
			}
			if tbl.Name == "delta/table-with-dv-special-char" {
				// Its 'p' deletion vector is an unfilled template, not a valid URI: the file
				// actions cannot be decoded, and a vacuum refuses (see vacuum's fixture test).
				if _, err := files(snap, store); !errors.Is(err, deltalog.ErrBadPath) {
					t.Errorf("got %v, want ErrBadPath", err)
				}
				return
			}
			got := fileSet(t, snap, store)
			seg := snap.Segment
			if seg.CheckpointVersion < 0 || len(seg.AllCommits) == 0 || seg.AllCommits[0].Version != 0 {
				return
			}
			full := *seg
			full.Checkpoint, full.CheckpointVersion, full.Commits = nil, -1, seg.AllCommits
			replayed, err := deltalog.LoadSegment(ctx, store, &full)
			if err != nil {
				t.Fatalf("load without checkpoint: %v", err)
			}
			want := fileSet(t, replayed, store)
			if diff := cmp.Diff(live(want), live(got)); diff != "" {
				t.Errorf("live files from the checkpoint differ from replay of all commits (-all +checkpoint):\n%s", diff)
			}
			if diff := cmp.Diff(subset(want, got), got); diff != "" {
				t.Errorf("checkpoint replay has entries full replay lacks (-full +checkpoint):\n%s", diff)
			}
			if id, ok := checkpointMetadataIDs[tbl.Name]; ok && snap.Metadata.ID == id {
				replayed.Metadata.ID = id
			}
			if replayed.Metadata.ID != snap.Metadata.ID || !cmp.Equal(replayed.Protocol, snap.Protocol) {
				t.Errorf("protocol/metadata differ: %+v %q vs %+v %q", replayed.Protocol, replayed.Metadata.ID, snap.Protocol, snap.Metadata.ID)
			}
		})
	}
}

// TestFixturesFileKeys: FileKeys streams what Files does, in the same order, only without the
// sizes, on every fixture table (checkpoints of every kind, deletion vectors, commits after
// the checkpoint); a table Files refuses, it refuses too.
func TestFixturesFileKeys(t *testing.T) {
	for _, tbl := range fixtures.Tables(t) {
		t.Run(tbl.Name, func(t *testing.T) {
			dir := fixtures.Copy(t, tbl.Name, time.Now())
			store, err := local.New(dir)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			snap, err := deltalog.Load(ctx, store)
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			var all, keys []deltalog.File
			errAll := snap.Files(ctx, store, func(f deltalog.File) error {
				f.Size = 0
				all = append(all, f)
				return nil
			})
			errKeys := snap.FileKeys(ctx, store, func(f deltalog.File) error {
				if f.Size != 0 {
					t.Errorf("%s: size %d from FileKeys", f.LogPath, f.Size)
				}
				keys = append(keys, f)
				return nil
			})
			if (errAll == nil) != (errKeys == nil) {
				t.Fatalf("Files: %v; FileKeys: %v", errAll, errKeys)
			}
			if diff := cmp.Diff(all, keys); diff != "" {
				t.Errorf("FileKeys differs from Files without sizes (-Files +FileKeys):\n%s", diff)
			}
		})
	}
}

// checkpointMetadataIDs are the fixtures whose checkpoint holds another metaData id than their
// commits, with the checkpoint's: readers take the checkpoint's (Spark, delta-kernel-rs, this
// program); the files agree.
var checkpointMetadataIDs = map[string]string{
	// Commit 0 says fd39678a-…; the checkpoint of version 1, written by another run of the
	// generator, d896277e-…
	"delta-kernel-rs/parquet_row_group_skipping": "d896277e-76a7-4ad9-9d7e-1cdc8cf0ed6e",
}

func live(files []string) []string {
	var out []string
	for _, f := range files {
		if cmp.Equal(f[len(f)-len("removed=false|ts=0"):], "removed=false|ts=0") {
			out = append(out, f)
		}
	}
	return out
}

// subset returns the entries of all that are also in some.
func subset(all, some []string) []string {
	in := map[string]bool{}
	for _, s := range some {
		in[s] = true
	}
	var out []string
	for _, a := range all {
		if in[a] {
			out = append(out, a)
		}
	}
	return out
}

// TestFixturesEveryCheckpoint reads every table of the fixtures at the version of each of its
// checkpoints, not only the newest: every checkpoint a real writer (Spark, Databricks,
// delta-rs, delta-kernel-rs) left must pass the checks a checkpoint is held to (protocol and
// metaData, a V2 checkpoint's one checkpointMetadata of its own version, the deletionVector
// column when written under deletion vectors) and be chosen at its version.
func TestFixturesEveryCheckpoint(t *testing.T) {
	read := 0
	for _, tbl := range fixtures.Tables(t) {
		t.Run(tbl.Name, func(t *testing.T) {
			dir := fixtures.Copy(t, tbl.Name, time.Now())
			store, err := local.New(dir)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			versions := map[int64]bool{}
			seg, err := deltalog.ListLog(ctx, store)
			if err != nil {
				t.Fatal(err)
			}
			entries, err := os.ReadDir(filepath.Join(dir, "_delta_log"))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				switch lf := deltalog.ParseLogName(e.Name()); lf.Kind {
				case deltalog.KindClassicCheckpoint, deltalog.KindMultiPartCheckpoint, deltalog.KindUUIDCheckpoint:
					versions[lf.Version] = true
				}
			}
			for v := range versions {
				at, err := deltalog.ListLogAt(ctx, store, v)
				if err != nil {
					t.Errorf("version %d: %v", v, err)
					continue
				}
				if at.CheckpointVersion != v {
					t.Errorf("version %d (latest %d): the checkpoint of version %d is chosen", v, seg.Version, at.CheckpointVersion)
					continue
				}
				snap, err := deltalog.LoadSegment(ctx, store, at)
				if err != nil {
					t.Errorf("version %d: %v", v, err)
					continue
				}
				if _, err := files(snap, store); err != nil && tbl.Name != "delta/table-with-dv-special-char" {
					t.Errorf("version %d: %v", v, err)
				}
				read++
			}
		})
	}
	t.Logf("%d checkpoints read", read)
}
