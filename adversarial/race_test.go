package adversarial

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum"
	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/local"
	"github.com/deltavacuum/deltavacuum/storage/s3"
	"github.com/deltavacuum/deltavacuum/storage/storagetest"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// The race tests run real vacuums while another process writes to the same table: data files
// written before a vacuum plans and committed while it runs, RESTOREs re-adding tombstoned
// files, removes, files with deletion vectors. After every vacuum they check the guarantee of
// section 13 of the contract: no file that a commit made before VACUUM START protects, and
// that existed when the vacuum began, is gone. (Commits after START are the window the
// executor narrows to one batch but cannot close; docs/design.md.)

// Environment of the writer process (this test binary started again).
const (
	envRaceWriter = "DELTAVACUUM_RACE_WRITER" // "local:DIR" or "s3:PREFIX"
	envRaceSeed   = "DELTAVACUUM_RACE_SEED"
)

func TestRaceWithWriterLocal(t *testing.T) {
	rounds, perRound := 30, 10
	if testing.Short() {
		rounds = 3
	}
	raceRounds(t, rounds, perRound, func(t *testing.T) (storage.Store, string) {
		dir := t.TempDir()
		st, err := local.New(dir)
		if err != nil {
			t.Fatal(err)
		}
		return st, "local:" + dir
	}, 0)
}

func TestRaceWithWriterS3(t *testing.T) {
	if os.Getenv(storagetest.EnvS3Endpoint) == "" && os.Getenv("CI") != "true" {
		t.Skip("S3 test server not configured (" + storagetest.EnvS3Endpoint + "); run scripts/testservers/start.sh and source .cache/testservers.env")
	}
	rounds, perRound := 30, 5 // fresh tables often: every vacuum reads the whole log
	if testing.Short() {
		rounds = 2
	}
	raceRounds(t, rounds, perRound, func(t *testing.T) (storage.Store, string) {
		cfg := storagetest.S3Config(t)
		return storagetest.NewS3Config(t, cfg), "s3:" + cfg.Prefix
	}, 300*time.Millisecond)
}

// raceFigures are what the race tests measured, for docs/design.md.
type raceFigures struct {
	runs, beforeStart, kept, deleted, protected int
	lostRace, liteRefused                       int
}

// raceRounds runs rounds of perRound vacuums, each round on a fresh table with its own writer
// process, pausing between vacuums so that the writer's files grow old enough to be
// candidates.
func raceRounds(t *testing.T, rounds, perRound int, newStore func(*testing.T) (storage.Store, string), pause time.Duration) {
	var fig raceFigures
	began := time.Now()
	for round := range rounds {
		t.Run(fmt.Sprintf("round%02d", round), func(t *testing.T) {
			store, spec := newStore(t)
			seedTable(t, store)
			stop := startWriter(t, spec, round)
			defer stop()
			for i := range perRound {
				time.Sleep(pause)
				raceOnce(t, store, i, &fig)
			}
		})
		if t.Failed() {
			break
		}
	}
	t.Logf("in %v, %d vacuums raced a writer: %d commits landed between planning and VACUUM START, %d planned files were kept by the re-check, %d files deleted, %d protected files checked (%d more lost the START commit race, %d LITE runs found no FULL before them)",
		time.Since(began).Round(time.Second), fig.runs, fig.beforeStart, fig.kept, fig.deleted, fig.protected, fig.lostRace, fig.liteRefused)
}

// seedTable writes version 0 and a few live, tombstoned and stray files.
func seedTable(t *testing.T, store storage.Store) {
	ctx := context.Background()
	actions := []any{
		map[string]any{"protocol": map[string]any{"minReaderVersion": 3, "minWriterVersion": 7, "readerFeatures": []string{"deletionVectors"}, "writerFeatures": []string{"deletionVectors"}}},
		map[string]any{"metaData": map[string]any{"id": "race", "format": map[string]any{"provider": "parquet", "options": map[string]string{}},
			"schemaString": `{"type":"struct","fields":[]}`, "partitionColumns": []string{}, "configuration": map[string]string{"delta.enableDeletionVectors": "true"}, "createdTime": 0}},
	}
	for i := range 5 {
		key := fmt.Sprintf("seed-%d.parquet", i)
		if err := store.Put(ctx, key, []byte(key)); err != nil {
			t.Fatal(err)
		}
		actions = append(actions, map[string]any{"add": map[string]any{"path": key, "size": len(key), "modificationTime": 0, "dataChange": true, "partitionValues": map[string]string{}}})
	}
	if err := store.Put(ctx, "stray.parquet", []byte("stray")); err != nil {
		t.Fatal(err)
	}
	if err := deltalog.WriteCommit(ctx, store, 0, actions); err != nil {
		t.Fatal(err)
	}
}

// startWriter starts the writer process on the table and returns a function that stops it.
func startWriter(t *testing.T, spec string, seed int) func() {
	cmd := exec.Command(os.Args[0], "-test.run=^TestRaceWriterProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), envRaceWriter+"="+spec, envRaceSeed+"="+strconv.Itoa(seed))
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if strings.Contains(out.String(), "writer failed") {
			t.Errorf("the writer process failed:\n%s", out.String())
		}
	}
}

// raceOnce runs one real vacuum (RETAIN 0 HOURS, so that every unreferenced file is a
// candidate: the hardest case) while the writer runs, and checks the guarantee.
func raceOnce(t *testing.T, store storage.Store, i int, fig *raceFigures) {
	t.Helper()
	ctx := context.Background()
	// A whole second: object stores may give modification times in whole seconds, rounded
	// down; then a file counts as older than the cutoff exactly when it was written before
	// it, so the listing below holds every file the vacuum can delete.
	now := time.Now()
	if !strings.HasPrefix(store.Location(), "file:") {
		now = now.Truncate(time.Second)
	}
	before := listFiles(t, store)
	on := true
	opts := deltavacuum.VacuumOptions{
		Options: vacuum.Options{RetainHours: ptr(0.0), DisableRetentionCheck: true, Now: now},
		Logging: &on,
	}
	if i%3 == 2 {
		opts.Mode = vacuum.ModeLite // after a completed FULL, LITE reaches back to it
	}
	opts.Exec.BatchSize = 4 // many batches: many re-checks during the deletes
	res, err := deltavacuum.OpenStore(store).Vacuum(ctx, opts)
	switch {
	case errors.Is(err, deltalog.ErrCommitRace):
		fig.lostRace++ // the writer took every version START tried: nothing was deleted
		return
	case errors.Is(err, vacuum.ErrCannotVacuumLite):
		fig.liteRefused++ // LITE before any completed FULL: nothing was deleted
		return
	}
	if err != nil {
		t.Fatalf("vacuum %d: %v", i, err)
	}
	start := startVersion(t, store, res.Version)
	after := listFiles(t, store)
	protected := protectedAt(t, store, start-1, now)
	for key := range protected {
		if before[key] && !after[key] {
			t.Errorf("vacuum %d (planned at version %d, START at %d) deleted %s, which a commit before START protects", i, res.Version, start, key)
		}
	}
	fig.runs++
	fig.beforeStart += int(start - res.Version - 1)
	fig.kept += len(res.Dropped)
	fig.deleted += int(res.NumDeletedFiles)
	fig.protected += len(protected)
}

func ptr[T any](v T) *T { return &v }

// startVersion finds, in the log itself, the VACUUM START of the run planned at version
// planned: the first one after it (the writer writes none, and the runs follow each other).
func startVersion(t *testing.T, store storage.Store, planned int64) int64 {
	t.Helper()
	for v := planned + 1; ; v++ {
		b, err := storage.ReadAll(context.Background(), store, deltalog.CommitKey(v))
		if err != nil {
			t.Fatalf("no VACUUM START after version %d: %v", planned, err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			var a struct {
				CommitInfo *struct {
					Operation string `json:"operation"`
				} `json:"commitInfo"`
			}
			if json.Unmarshal([]byte(line), &a) == nil && a.CommitInfo != nil && a.CommitInfo.Operation == "VACUUM START" {
				return v
			}
		}
	}
}

func listFiles(t *testing.T, store storage.Store) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	err := store.Walk(context.Background(), "", func(o storage.Object) error {
		if o.Key == deltalog.LogDir {
			return storage.SkipDir
		}
		if !o.IsDir {
			out[o.Key] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// protectedAt is every key the snapshot at version v protects with the given cutoff: live
// files, tombstones at or after it, their deletion vectors, every reading of each path.
func protectedAt(t *testing.T, store storage.Store, v int64, cutoff time.Time) map[string]bool {
	t.Helper()
	ctx := context.Background()
	seg, err := deltalog.ListLogAt(ctx, store, v)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := deltalog.LoadSegment(ctx, store, seg)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	err = snap.Files(ctx, store, func(f deltalog.File) error {
		if f.Removed && f.DeletionTimestamp < cutoff.UnixMilli() {
			return nil
		}
		for _, k := range append([]string{f.Key, f.DVKey}, f.OtherKeys...) {
			if k != "" {
				out[k] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRaceWriterProcess is not a test: it is the writer process the race tests start, this
// test binary run again with DELTAVACUUM_RACE_WRITER set. It writes until it is killed.
func TestRaceWriterProcess(t *testing.T) {
	spec := os.Getenv(envRaceWriter)
	if spec == "" {
		t.Skip("the writer process of the race tests; they start it")
	}
	seed, _ := strconv.Atoi(os.Getenv(envRaceSeed))
	if err := runWriter(spec, uint64(seed)); err != nil {
		fmt.Println("writer failed:", err)
		os.Exit(1)
	}
}

// raceFile is a file the writer committed: its path and deletion vector (nil for none).
type raceFile struct {
	path string
	dv   map[string]any
}

func runWriter(spec string, seed uint64) error {
	ctx := context.Background()
	kind, where, _ := strings.Cut(spec, ":")
	var store storage.Store
	var err error
	pause := time.Millisecond
	switch kind {
	case "local":
		store, err = local.New(where)
	case "s3":
		store, err = s3.New(ctx, s3.Config{
			Bucket: envOr(storagetest.EnvS3Bucket, "deltavacuum-test"), Prefix: where,
			Region: envOr(storagetest.EnvS3Region, "us-east-1"), Endpoint: os.Getenv(storagetest.EnvS3Endpoint),
			PathStyle: true, AllowHTTP: true,
			AccessKeyID:     envOr(storagetest.EnvS3AccessKeyID, "deltavacuum-test"),
			SecretAccessKey: envOr(storagetest.EnvS3SecretAccessKey, "deltavacuum-test-secret"),
		})
		pause = 25 * time.Millisecond
	default:
		err = fmt.Errorf("unknown writer spec %q", spec)
	}
	if err != nil {
		return err
	}
	w := &raceWriter{store: store, rng: rand.New(rand.NewPCG(seed, 7)), pause: pause}
	for i := range 5 {
		w.live = append(w.live, raceFile{path: fmt.Sprintf("seed-%d.parquet", i)})
	}
	for n := 0; ; n++ {
		if err := w.step(ctx, n); err != nil {
			return err
		}
	}
}

type raceWriter struct {
	store   storage.Store
	rng     *rand.Rand
	pause   time.Duration
	version int64 // the newest version this writer knows of
	live    []raceFile
	removed []raceFile
	pending []raceFile // written, not committed yet
}

func (w *raceWriter) sleep() { time.Sleep(time.Duration(w.rng.Int64N(int64(2*w.pause) + 1))) }

// step does one thing a writer of a busy table does.
func (w *raceWriter) step(ctx context.Context, n int) error {
	switch r := w.rng.IntN(10); {
	case r < 4: // write a data file (some with a deletion vector); commit it later
		f := raceFile{path: fmt.Sprintf("w-%06d.parquet", n)}
		if err := w.store.Put(ctx, f.path, []byte(f.path)); err != nil {
			return err
		}
		if w.rng.IntN(3) == 0 {
			var id [16]byte
			binary.BigEndian.PutUint64(id[:8], w.rng.Uint64())
			binary.BigEndian.PutUint64(id[8:], uint64(n))
			z, name := z85UUID(id)
			if err := w.store.Put(ctx, name, []byte("dv")); err != nil {
				return err
			}
			f.dv = map[string]any{"storageType": "u", "pathOrInlineDv": z, "offset": 1, "sizeInBytes": 2, "cardinality": 1}
		}
		w.pending = append(w.pending, f)
	case r < 7 && len(w.pending) > 0: // commit the files written earlier: they were on disk before
		var actions []any
		for _, f := range w.pending {
			actions = append(actions, addAction(f))
		}
		if err := w.commit(ctx, actions); err != nil {
			return err
		}
		w.live = append(w.live, w.pending...)
		w.pending = nil
	case r < 8 && len(w.live) > 1: // DELETE or OPTIMIZE: a remove, protected while recent
		i := w.rng.IntN(len(w.live))
		f := w.live[i]
		if err := w.commit(ctx, []any{removeAction(f)}); err != nil {
			return err
		}
		w.live = append(w.live[:i], w.live[i+1:]...)
		w.removed = append(w.removed, f)
	case len(w.removed) > 0: // RESTORE: re-add a tombstoned file that is still there
		i := w.rng.IntN(len(w.removed))
		f := w.removed[i]
		if _, err := w.store.Stat(ctx, f.path); err != nil {
			w.removed = append(w.removed[:i], w.removed[i+1:]...)
			return nil
		}
		if err := w.commit(ctx, []any{addAction(f)}); err != nil {
			return err
		}
		w.removed = append(w.removed[:i], w.removed[i+1:]...)
		w.live = append(w.live, f)
	}
	w.sleep()
	return nil
}

// commit writes the next free version (VACUUM START and END take versions too).
func (w *raceWriter) commit(ctx context.Context, actions []any) error {
	for {
		w.version++
		err := deltalog.WriteCommit(ctx, w.store, w.version, actions)
		if err == nil {
			return nil
		}
		if !errors.Is(err, deltalog.ErrVersionExists) {
			return err
		}
	}
}

func addAction(f raceFile) map[string]any {
	a := map[string]any{"path": f.path, "size": len(f.path), "modificationTime": time.Now().UnixMilli(), "dataChange": true, "partitionValues": map[string]string{}}
	if f.dv != nil {
		a["deletionVector"] = f.dv
	}
	return map[string]any{"add": a}
}

func removeAction(f raceFile) map[string]any {
	r := map[string]any{"path": f.path, "deletionTimestamp": time.Now().UnixMilli(), "dataChange": true}
	if f.dv != nil {
		r["deletionVector"] = f.dv
	}
	return map[string]any{"remove": r}
}

const z85Chars = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"

// z85UUID encodes a UUID as a deletion vector's pathOrInlineDv and returns it with the name of
// the file it denotes.
func z85UUID(id [16]byte) (string, string) {
	var b strings.Builder
	for g := 0; g < 4; g++ {
		v := binary.BigEndian.Uint32(id[g*4:])
		var c [5]byte
		for i := 4; i >= 0; i-- {
			c[i] = z85Chars[v%85]
			v /= 85
		}
		b.Write(c[:])
	}
	name := fmt.Sprintf("deletion_vector_%x-%x-%x-%x-%x.bin", id[0:4], id[4:6], id[6:8], id[8:10], id[10:16])
	return b.String(), name
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// interloper is a store on which another writer commits first, at the instant VACUUM START
// is written: its commit takes the version START wanted, and START takes the next one.
type interloper struct {
	storage.Store
	actions []any
	done    bool
}

func (s *interloper) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	if !s.done && strings.HasPrefix(key, deltalog.LogDir) && strings.Contains(string(data), `"VACUUM START"`) {
		s.done = true
		v, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(key, deltalog.LogDir), ".json"), 10, 64)
		if err != nil {
			return err
		}
		if err := deltalog.WriteCommit(ctx, s.Store, v, s.actions); err != nil {
			return err
		}
	}
	return s.Store.PutIfAbsent(ctx, key, data)
}

// TestCommitAtTheInstantOfStart: a RESTORE of a tombstoned file, a late writer's commit of a
// file on disk since before the run, and a raised retention, all committed just before VACUUM
// START: none of their files is deleted, and START records the raised retention.
func TestCommitAtTheInstantOfStart(t *testing.T) {
	tb := newLocalTable(t)
	tb.commit(addLine("restored.parquet"), addLine("old.parquet"))
	tb.commit(removeLine("restored.parquet"), `{"remove":{"path":"old.parquet","deletionTimestamp":`+strconv.FormatInt(time.Now().Add(-10*day).UnixMilli(), 10)+`,"dataChange":true}}`)
	tb.file("restored.parquet", 30*day)
	tb.file("old.parquet", 30*day)    // removed 10 days ago: kept under a 30-day retention
	tb.file("late.parquet", 30*day)   // written before the run, committed during it
	tb.file("recent.parquet", 10*day) // untracked, 10 days old
	tb.file("junk.parquet", 60*day)
	raised := strings.Replace(metadataLine, `"configuration":{}`, `"configuration":{"delta.deletedFileRetentionDuration":"interval 30 days"}`, 1)
	local, err := local.New(tb.dir)
	if err != nil {
		t.Fatal(err)
	}
	store := &interloper{Store: local}
	for _, l := range []string{addLine("restored.parquet"), addLine("late.parquet"), raised} {
		var a map[string]any
		if err := json.Unmarshal([]byte(l), &a); err != nil {
			t.Fatal(err)
		}
		store.actions = append(store.actions, a)
	}
	res, err := deltavacuum.OpenStore(store).Vacuum(context.Background(), deltavacuum.VacuumOptions{}) // the table's 7 days
	if err != nil {
		t.Fatal(err)
	}
	tb.mustExist("restored.parquet", "late.parquet", "old.parquet", "recent.parquet")
	if tb.exists("junk.parquet") {
		t.Error("junk.parquet was kept")
	}
	h, err := deltalog.History(context.Background(), local, 2)
	if err != nil {
		t.Fatal(err)
	}
	if h[1].Operation != "VACUUM START" || !strings.Contains(string(h[1].OperationParameters), `"defaultRetentionMillis":2592000000`) {
		t.Errorf("START is %s %s; want the raised retention of 30 days recorded", h[1].Operation, h[1].OperationParameters)
	}
	t.Logf("kept: %+v", res.Dropped)
}
