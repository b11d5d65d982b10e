package deltalog

import (
	"context"
	"errors"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/mem"
)

// openCounter counts the opens of each key.
type openCounter struct {
	storage.Store
	mu    sync.Mutex
	opens map[string]int
}

func (s *openCounter) Open(ctx context.Context, key string) (storage.Reader, error) {
	s.mu.Lock()
	s.opens[key]++
	s.mu.Unlock()
	return s.Store.Open(ctx, key)
}

func commitAt(t *testing.T, st storage.Store, v int64, actions ...any) {
	t.Helper()
	if err := WriteCommit(context.Background(), st, v, actions); err != nil {
		t.Fatal(err)
	}
}

func addOf(path string) map[string]any {
	return map[string]any{"add": map[string]any{"path": path, "size": 1, "modificationTime": 1, "dataChange": true, "partitionValues": map[string]string{}}}
}

func removeOf(path string) map[string]any {
	return map[string]any{"remove": map[string]any{"path": path, "deletionTimestamp": 5, "dataChange": true}}
}

func metadataWith(conf map[string]string) map[string]any {
	return map[string]any{"metaData": map[string]any{"id": "t", "format": map[string]any{"provider": "parquet"},
		"schemaString": `{"type":"struct","fields":[]}`, "partitionColumns": []string{}, "configuration": conf}}
}

func protocolOf(reader, writer int, features ...string) map[string]any {
	p := map[string]any{"minReaderVersion": reader, "minWriterVersion": writer}
	if writer >= 7 {
		p["readerFeatures"], p["writerFeatures"] = []string{}, append([]string{}, features...)
	}
	return map[string]any{"protocol": p}
}

func fileSet(t *testing.T, s *Snapshot, st storage.Store) []string {
	t.Helper()
	var out []string
	err := s.Files(context.Background(), st, func(f File) error {
		tag := "+"
		if f.Removed {
			tag = "-"
		}
		out = append(out, tag+f.Key)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// TestAdvanceReadsOnlyNewCommits: a snapshot advanced by the commits after it equals the
// latest snapshot read in full (files, protocol, metadata), and reads only those commits.
func TestAdvanceReadsOnlyNewCommits(t *testing.T) {
	ctx := context.Background()
	st := &openCounter{Store: mem.New("mem://b/t"), opens: map[string]int{}}
	commitAt(t, st, 0, protocolOf(1, 2), metadataWith(map[string]string{}), addOf("a"), addOf("b"))
	commitAt(t, st, 1, removeOf("a"), addOf("c"))
	base, err := Load(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	commitAt(t, st, 2, addOf("a"), removeOf("b"))
	commitAt(t, st, 3, metadataWith(map[string]string{"delta.deletedFileRetentionDuration": "interval 30 days"}))
	clear(st.opens)
	adv, full, err := base.Advance(ctx, st)
	if err != nil || full {
		t.Fatalf("Advance: full %v, %v", full, err)
	}
	if diff := cmp.Diff(map[string]int{CommitKey(2): 1, CommitKey(3): 1}, st.opens); diff != "" {
		t.Errorf("opens (-want +got):\n%s", diff)
	}
	latest, err := Load(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if adv.Version != 3 || adv.MetadataVersion != 3 || adv.Metadata.Configuration["delta.deletedFileRetentionDuration"] != "interval 30 days" {
		t.Errorf("advanced to version %d, metadata of %d: %v", adv.Version, adv.MetadataVersion, adv.Metadata.Configuration)
	}
	if diff := cmp.Diff(fileSet(t, latest, st), fileSet(t, adv, st)); diff != "" {
		t.Errorf("files of the advanced snapshot differ from the latest's (-latest +advanced):\n%s", diff)
	}
	if base.Version != 1 || len(base.commits) != 2 {
		t.Errorf("Advance changed its receiver: version %d, %d commits", base.Version, len(base.commits))
	}
	if !adv.HoldsCommits(2) || adv.HoldsCommits(4) != true || base.HoldsCommits(2) != true {
		t.Error("HoldsCommits")
	}
	var refs []string
	lf, _, m, ok, err := adv.HeldCommitRefs(3, func(k string) { refs = append(refs, k) })
	if !ok || err != nil || lf.Version != 3 || m == nil || len(refs) != 0 {
		t.Errorf("HeldCommitRefs(3) = %v %v %v %v %v", lf, m, ok, err, refs)
	}
	if _, _, _, ok, _ := adv.HeldCommitRefs(7, func(string) {}); ok {
		t.Error("HeldCommitRefs of a version it does not hold")
	}
}

// TestAdvanceAfterCleanup: when the commits after the snapshot are gone (cleaned up behind a
// newer checkpoint), Advance reads the latest snapshot in full and says so; a log older than
// the snapshot is refused.
func TestAdvanceAfterCleanup(t *testing.T) {
	ctx := context.Background()
	st := mem.New("mem://b/t")
	commitAt(t, st, 0, protocolOf(1, 2), metadataWith(map[string]string{}), addOf("a"))
	base, err := Load(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	commitAt(t, st, 1, addOf("b"))
	commitAt(t, st, 2, removeOf("a"))
	if WriteCheckpointForTest == nil {
		t.Skip("no checkpoint writer in this test binary")
	}
	latest, err := Load(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	writeCheckpointOf(t, st, latest)
	if _, err := st.Delete(ctx, []string{CommitKey(0), CommitKey(1)}); err != nil {
		t.Fatal(err)
	}
	adv, full, err := base.Advance(ctx, st)
	if err != nil || !full {
		t.Fatalf("Advance: full %v, %v; want a full read", full, err)
	}
	if adv.Segment.CheckpointVersion != 2 || adv.HoldsCommits(1) {
		t.Errorf("read from checkpoint %d; holds commit 1: %v", adv.Segment.CheckpointVersion, adv.HoldsCommits(1))
	}
	if diff := cmp.Diff([]string{"+b", "-a"}, fileSet(t, adv, st)); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}

	// A log that went back in time.
	older := mem.New("mem://b/t")
	commitAt(t, older, 0, protocolOf(1, 2), metadataWith(map[string]string{}))
	if _, _, err := adv.Advance(ctx, older); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "older than version 2") {
		t.Errorf("got %v, want the older log refused", err)
	}
}

// writeCheckpointOf writes the classic checkpoint of s (its files, protocol and metaData).
func writeCheckpointOf(t *testing.T, st *mem.Store, s *Snapshot) {
	t.Helper()
	var acts []*Action
	p, m := s.Protocol, s.Metadata
	acts = append(acts, &Action{Protocol: &p}, &Action{Metadata: &m})
	err := s.Files(context.Background(), st, func(f File) error {
		if f.Removed {
			ts := f.DeletionTimestamp
			acts = append(acts, &Action{Remove: &Remove{Path: f.LogPath, DeletionTimestamp: &ts}})
		} else {
			acts = append(acts, &Action{Add: &Add{Path: f.LogPath, Size: f.Size, PartitionValues: map[string]string{}}})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	w := &byteWriter{}
	if err := WriteCheckpointForTest(w, func(yield func(*Action) bool) {
		for _, a := range acts {
			if !yield(a) {
				return
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	st.PutAt(LogDir+"00000000000000000002.checkpoint.parquet", w.b, time.Now())
}

type byteWriter struct{ b []byte }

func (w *byteWriter) Write(p []byte) (int, error) { w.b = append(w.b, p...); return len(p), nil }

// TestCommitFrom: a commit from an older snapshot is written after the latest version, is
// built on the newest protocol and metadata (a writer feature enabled since refuses it, with
// nothing written), keeps in-commit timestamps increasing from the newest commit, and
// returns the snapshot it was built on.
func TestCommitFrom(t *testing.T) {
	ctx := context.Background()
	st := &openCounter{Store: mem.New("mem://b/t"), opens: map[string]int{}}
	ict := map[string]string{"delta.enableInCommitTimestamps": "true"}
	commitAt(t, st, 0, protocolOf(3, 7, "inCommitTimestamp"), metadataWith(ict),
		map[string]any{"commitInfo": map[string]any{"inCommitTimestamp": 1000, "operation": "CREATE"}})
	base, err := Load(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	future := time.UnixMilli(5000)
	commitAt(t, st, 1, map[string]any{"commitInfo": map[string]any{"inCommitTimestamp": future.UnixMilli(), "operation": "WRITE"}}, addOf("x"))
	clear(st.opens)
	var built int64 = -1
	v, on, err := CommitFrom(ctx, st, base, func(s *Snapshot) (*CommitRequest, error) {
		built = s.Version
		return &CommitRequest{Operation: "TEST"}, nil
	}, CommitOptions{Now: func() time.Time { return time.UnixMilli(2000) }})
	if err != nil {
		t.Fatal(err)
	}
	if v != 2 || built != 1 || on.Version != 1 || !on.HoldsCommits(1) {
		t.Errorf("wrote %d, built on %d, returned %d", v, built, on.Version)
	}
	if st.opens[CommitKey(0)] != 0 || st.opens[CommitKey(1)] != 1 {
		t.Errorf("opens %v: want commit 1 once, commit 0 not again", st.opens)
	}
	ci, err := readCommitInfo(ctx, st, 2)
	if err != nil {
		t.Fatal(err)
	}
	if ci.InCommitTimestamp == nil || *ci.InCommitTimestamp != 5001 {
		t.Errorf("inCommitTimestamp %v, want 5001 (after the newest commit's)", ci.InCommitTimestamp)
	}

	// A writer feature enabled after base refuses the commit.
	commitAt(t, st, 3, protocolOf(3, 7, "inCommitTimestamp", "futureFeature"))
	_, _, err = CommitFrom(ctx, st, on, func(*Snapshot) (*CommitRequest, error) {
		return &CommitRequest{Operation: "TEST"}, nil
	}, CommitOptions{})
	if err == nil || !strings.Contains(err.Error(), "futureFeature") {
		t.Errorf("got %v, want the unsupported feature refused", err)
	}
	if _, err := st.Stat(ctx, CommitKey(4)); !errors.Is(err, storage.ErrNotExist) {
		t.Errorf("version 4 was written: %v", err)
	}
}

func readCommitInfo(ctx context.Context, st storage.Store, v int64) (*CommitInfo, error) {
	c, _, _, err := readCommit(ctx, st, LogFile{Key: CommitKey(v), Version: v})
	return c.commitInfo, err
}
