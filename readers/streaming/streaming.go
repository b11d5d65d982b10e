package streaming

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/deltavacuum/deltavacuum/internal/strictjson"
	"github.com/deltavacuum/deltavacuum/storage"
)

// ErrCheckpoint is matched (errors.Is) by every error that means the checkpoint cannot be
// read or does not say what the query reads: the caller must not vacuum on its behalf.
var ErrCheckpoint = errors.New("streaming checkpoint cannot be read")

// ErrOtherTable is matched by the error for a checkpoint whose Delta sources read other
// tables than the one given (a query pointed at the wrong checkpoint, or a table re-created
// under the same path).
var ErrOtherTable = errors.New("streaming checkpoint reads another table")

// Checkpoint says what a query will read after a restart.
type Checkpoint struct {
	// Version is the Delta version from which the query reads: every file removed by a
	// commit after it must be kept.
	Version int64
	// BatchID is the batch whose offset gave Version, and File that offset's key.
	BatchID int64
	File    string
	// LatestBatch is the newest batch in offsets/, and Committed whether it finished.
	LatestBatch int64
	Committed   bool
	// InitialSnapshot is true when the offset is inside the initial snapshot of the table at
	// Version (the query needs the files of that snapshot), for every source at Version: when
	// one of them reads the changes of Version, it is false (the query needs what that commit
	// names too).
	InitialSnapshot bool
	// Sources is the number of sources of the query that read the table.
	Sources int
}

// maxOffsetFileBytes bounds one offsets file: Spark writes a few kilobytes.
const maxOffsetFileBytes = 16 << 20

// deltaOffset is the Delta source's offset (DeltaSourceOffset's serialized form).
type deltaOffset struct {
	SourceVersion     *int64  `json:"sourceVersion"`
	ReservoirID       *string `json:"reservoirId"`
	ReservoirVersion  *int64  `json:"reservoirVersion"`
	Index             *int64  `json:"index"`
	IsStartingVersion *bool   `json:"isStartingVersion"`
}

// Read reads the checkpoint in store (rooted at the checkpoint folder) of a query that reads
// the Delta table whose metaData.id is tableID.
func Read(ctx context.Context, store storage.Store, tableID string) (Checkpoint, error) {
	if tableID == "" {
		return Checkpoint{}, errors.New("streaming: no table id given: pass the table's metaData.id")
	}
	loc := store.Location()
	offsets, err := batches(ctx, store, "offsets/")
	if err != nil {
		return Checkpoint{}, fmt.Errorf("%w: %s: %w", ErrCheckpoint, loc, err)
	}
	if len(offsets) == 0 {
		return Checkpoint{}, fmt.Errorf("%w: %s has no offsets/ batch: it is not the checkpoint of a query that has read anything; check the path (it must be the checkpointLocation of the query)", ErrCheckpoint, loc)
	}
	commits, err := batches(ctx, store, "commits/")
	if err != nil {
		return Checkpoint{}, fmt.Errorf("%w: %s: %w", ErrCheckpoint, loc, err)
	}
	latest := offsets[len(offsets)-1]
	if n := len(commits); n > 0 && commits[n-1] > latest {
		return Checkpoint{}, fmt.Errorf("%w: %s: commits/%d has no offsets/%d: the checkpoint is damaged; restore it or start the query on a new checkpoint", ErrCheckpoint, loc, commits[n-1], commits[n-1])
	}
	committed := contains(commits, latest)
	cp := Checkpoint{LatestBatch: latest, Committed: committed}
	// The restart starts at the end of the newest committed batch: the batch after the
	// latest when it is committed, or again the planned batches after the newest commit
	// (one without asynchronous progress tracking, possibly several with it).
	batch := int64(-1)
	if len(commits) > 0 {
		batch = commits[len(commits)-1]
	}
	if batch < 0 {
		// Batch 0 planned, not finished: it starts where the query was told to.
		o, n, key, err := readOffsets(ctx, store, 0, tableID)
		if err != nil {
			return Checkpoint{}, err
		}
		if !o.allInitial {
			return Checkpoint{}, fmt.Errorf("%w: %s: the query's first batch (%s) was planned and has not finished, and it reads from a startingVersion or startingTimestamp the checkpoint does not record: let the query finish its first batch, or stop it for good, before vacuuming", ErrCheckpoint, loc, key)
		}
		cp.Version, cp.BatchID, cp.File, cp.InitialSnapshot, cp.Sources = o.version, 0, key, true, n
		return cp, nil
	}
	if !contains(offsets, batch) {
		return Checkpoint{}, fmt.Errorf("%w: %s: batch %d has not finished and offsets/%d, where it starts, is missing: the checkpoint is damaged; restore it or start the query on a new checkpoint", ErrCheckpoint, loc, batch+1, batch)
	}
	o, n, key, err := readOffsets(ctx, store, batch, tableID)
	if err != nil {
		return Checkpoint{}, err
	}
	cp.Version, cp.BatchID, cp.File, cp.InitialSnapshot, cp.Sources = o.version, batch, key, o.initial, n
	return cp, nil
}

// batches lists the batch ids of a log folder (offsets/ or commits/), sorted. Spark names the
// files by the decimal batch id; its temporary and checksum files (.0.crc, .tmp) start with a
// dot, and other names are not batches.
func batches(ctx context.Context, store storage.Store, dir string) ([]int64, error) {
	var ids []int64
	err := store.Walk(ctx, dir, func(o storage.Object) error {
		if o.IsDir {
			if o.Key == dir {
				return nil
			}
			return storage.SkipDir
		}
		if id, ok := batchID(o.Name()); ok {
			if o.IsLink {
				return fmt.Errorf("%s is a symbolic link, which is never followed: replace it by the file", o.Key)
			}
			ids = append(ids, id)
		}
		return nil
	})
	if errors.Is(err, storage.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", dir, err)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids, nil
}

// batchID reads a batch id written as Spark writes it: decimal, no sign, no leading zero.
func batchID(name string) (int64, bool) {
	if name == "" || len(name) > 18 || len(name) > 1 && name[0] == '0' {
		return 0, false
	}
	for i := 0; i < len(name); i++ {
		if name[i] < '0' || name[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(name, 10, 64)
	return n, err == nil
}

func contains(ids []int64, id int64) bool {
	i := sort.Search(len(ids), func(i int) bool { return ids[i] >= id })
	return i < len(ids) && ids[i] == id
}

type pin struct {
	version int64
	// initial: every source at version is inside the initial snapshot (none reads the changes
	// of version); allInitial: every source of the table is.
	initial, allInitial bool
}

// readOffsets reads offsets/<batch> and returns the oldest offset among the sources that read
// tableID, and how many do.
func readOffsets(ctx context.Context, store storage.Store, batch int64, tableID string) (pin, int, string, error) {
	key := "offsets/" + strconv.FormatInt(batch, 10)
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s: %s: %s; the checkpoint is damaged or of a format this program does not know: do not vacuum on its behalf until it is read", ErrCheckpoint, store.Location(), key, fmt.Sprintf(format, a...))
	}
	data, err := readBounded(ctx, store, key)
	if err != nil {
		return pin{}, 0, key, bad("%v", err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) < 3 {
		return pin{}, 0, key, bad("%d lines; want a version, the batch metadata and one line per source", len(lines))
	}
	if v := strings.TrimSpace(lines[0]); v != "v1" {
		return pin{}, 0, key, bad("log version %q; this program reads v1", v)
	}
	var best *pin
	all := true
	n := 0
	var others []string
	for i, line := range lines[2:] {
		line = strings.TrimSpace(line)
		if line == "-" {
			continue // a source without an offset yet
		}
		if !strings.HasPrefix(line, "{") || !bytes.Contains([]byte(line), []byte(`"reservoirId"`)) {
			continue // another kind of source (Kafka, files, ...)
		}
		var o deltaOffset
		if err := strictjson.Unmarshal([]byte(line), &o); err != nil {
			return pin{}, 0, key, bad("source %d: %v", i, err)
		}
		switch {
		case o.SourceVersion == nil || o.ReservoirID == nil || o.ReservoirVersion == nil || o.Index == nil || o.IsStartingVersion == nil:
			return pin{}, 0, key, bad("source %d: a Delta source offset without sourceVersion, reservoirId, reservoirVersion, index or isStartingVersion", i)
		case *o.SourceVersion != 1 && *o.SourceVersion != 3:
			return pin{}, 0, key, bad("source %d: Delta source offset format %d (this program reads 1 and 3)", i, *o.SourceVersion)
		case *o.ReservoirVersion < 0:
			return pin{}, 0, key, bad("source %d: reservoirVersion %d", i, *o.ReservoirVersion)
		}
		if *o.ReservoirID != tableID {
			others = append(others, *o.ReservoirID)
			continue
		}
		n++
		all = all && *o.IsStartingVersion
		if best == nil || *o.ReservoirVersion < best.version {
			best = &pin{version: *o.ReservoirVersion, initial: *o.IsStartingVersion}
		} else if *o.ReservoirVersion == best.version && !*o.IsStartingVersion {
			best.initial = false // another source reads the changes of that version
		}
	}
	if best == nil {
		if len(others) > 0 {
			return pin{}, 0, key, fmt.Errorf("%w: %s: %s: the query reads table %s, not table %s: is this the checkpoint of a query on this table? (a table re-created at the same path has a new id)", ErrOtherTable, store.Location(), key, strings.Join(others, ", "), tableID)
		}
		return pin{}, 0, key, bad("no source has a Delta offset")
	}
	best.allInitial = all
	return *best, n, key, nil
}

func readBounded(ctx context.Context, store storage.Store, key string) ([]byte, error) {
	r, err := store.Open(ctx, key)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if r.Size() > maxOffsetFileBytes {
		return nil, fmt.Errorf("%d bytes, more than %d", r.Size(), maxOffsetFileBytes)
	}
	data, err := io.ReadAll(io.NewSectionReader(r, 0, maxOffsetFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxOffsetFileBytes {
		return nil, fmt.Errorf("more than %d bytes", maxOffsetFileBytes)
	}
	return data, nil
}
