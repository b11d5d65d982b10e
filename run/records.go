// The run record: what a real run planned and deleted, kept beside the table, and the one
// source of a run's state (state.go) for every front end. Package undo reads it to take a run
// back.
//
// A run record is a gzip-compressed JSON Lines file under _deltavacuum/runs/ in the table
// (<id>.jsonl.gz, zcat reads it): a header line (Record), then one line per file (Entry). It is written twice: before the first delete,
// with the files planned (Complete false), and when the run ends, with the files it deleted.
// The folder's name starts with '_', so readers and VACUUM leave it alone.
package run

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	fastgzip "github.com/klauspost/compress/gzip"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// RunsDir is the folder of the run records, relative to the table root.
const RunsDir = vacuum.RunsDir

// recordSuffix ends the name of a run record; undoSuffix that of the report of its undo.
const (
	recordSuffix = ".jsonl.gz"
	undoSuffix   = ".undo.json"
)

// RecordFormat is the version of the record format this package writes and reads.
const RecordFormat = 1

// Statuses of a run record.
const (
	StatusRunning   = "RUNNING"
	StatusCompleted = "COMPLETED"
	StatusFailed    = "FAILED"
)

// Record is the header of a run record.
type Record struct {
	Format int    `json:"format"`
	ID     string `json:"id"`
	// Table is the table's location, as the run opened it.
	Table  string `json:"table"`
	Status string `json:"status"`
	// Complete is true when Files are the files the run deleted; false while it runs (or
	// when it was killed): they are then the files it planned to delete.
	Complete   bool       `json:"complete"`
	StartedAt  time.Time  `json:"startedAt"`
	FinishedAt *time.Time `json:"finishedAt,omitempty"`
	Mode       string     `json:"mode"`
	// SnapshotVersion is the table version the run planned on; StartVersion and EndVersion
	// are its VACUUM START and END commits, when it was recorded in the history.
	SnapshotVersion int64   `json:"snapshotVersion"`
	StartVersion    *int64  `json:"startVersion,omitempty"`
	EndVersion      *int64  `json:"endVersion,omitempty"`
	RetentionHours  float64 `json:"retentionHours"`
	// Shard is the part of the table a sharded run covered ("I/N", --shard); empty: all of it.
	// Runs of other shards of the same count and SnapshotVersion may run beside it.
	Shard string `json:"shard,omitempty"`
	// Recovery is what the store keeps of what the run deleted.
	Recovery storage.Recovery `json:"recovery"`
	// Trash is the folder (relative to the table root, ending in '/') the run moved its files
	// into instead of deleting them; empty when it deleted them.
	Trash    string `json:"trash,omitempty"`
	NumFiles int64  `json:"numFiles"`
	Bytes    int64  `json:"bytes"`
	// NumDirectories is the number of empty directories the run removed (not restored by an
	// undo: they come back with the files moved into them).
	NumDirectories int64 `json:"numDirectories"`
	// Untracked are the files of the run's plan that no commit names (reason untracked): what
	// failed or unfinished writers leave. Nil when the run listed nothing (LITE) and in the
	// records of versions before it (a version before it refuses a record that has it, as it
	// refuses every member it does not know).
	Untracked *Untracked `json:"untracked,omitempty"`

	// Files are the entries below the header.
	Files []Entry `json:"-"`
}

// MaxUntrackedFolders is how many folders a record names of its untracked files.
const MaxUntrackedFolders = 10

// Untracked counts the untracked files of a run's plan, and where they are.
type Untracked struct {
	Files int64 `json:"files"`
	Bytes int64 `json:"bytes"`
	// Folders are the folders (relative to the table root, "" for the root itself) that hold
	// the most of them, most files first, at most MaxUntrackedFolders; NumFolders counts every
	// folder that holds one.
	Folders    []FolderCount `json:"folders"`
	NumFolders int64         `json:"numFolders"`
}

// FolderCount is a folder and the untracked files in it (not in its subfolders).
type FolderCount struct {
	Folder string `json:"folder"`
	Files  int64  `json:"files"`
	Bytes  int64  `json:"bytes"`
}

// check refuses counts no plan makes.
func (u *Untracked) check() error {
	if u.Files < 0 || u.Bytes < 0 || u.NumFolders < int64(len(u.Folders)) || len(u.Folders) > MaxUntrackedFolders {
		return fmt.Errorf("untracked: %d files, %d bytes, %d of %d folders", u.Files, u.Bytes, len(u.Folders), u.NumFolders)
	}
	for _, f := range u.Folders {
		if f.Files <= 0 || f.Bytes < 0 || f.Files > u.Files {
			return fmt.Errorf("untracked: folder %q with %d files, %d bytes", f.Folder, f.Files, f.Bytes)
		}
	}
	return nil
}

// Entry is one file of a run record.
type Entry struct {
	Path string `json:"path"`
	// Size is -1 for a checksum companion, whose size the plan does not know.
	Size int64 `json:"size"`
	// ModTime is the file's modification time, Unix milliseconds (0: unknown).
	ModTime int64 `json:"modificationTime,omitempty"`
}

// appendEntry appends e as one line of JSON, as json.Marshal writes it (which the record's
// test checks) at a fraction of its cost: a record has a line per file, twice per run.
func appendEntry(dst []byte, e Entry) ([]byte, error) {
	dst = append(dst, `{"path":`...)
	dst, err := jsontext.AppendQuote(dst, e.Path)
	if err != nil {
		return dst, fmt.Errorf("run record: path %q: %w", e.Path, err)
	}
	dst = append(dst, `,"size":`...)
	dst = strconv.AppendInt(dst, e.Size, 10)
	dst = append(dst, `,"modificationTime":`...) // omitempty omits no number in json v2
	dst = strconv.AppendInt(dst, e.ModTime, 10)
	return append(dst, "}\n"...), nil
}

// A run id is a time-ordered UUID (RFC 9562, version 7), in lower case: 48 bits of Unix
// milliseconds, the version, 12 bits of the time below the millisecond, the variant and 62
// random bits. Ids sort by time as strings, as the ids before them did, and are GUIDs wherever
// one is wanted (Fabric's job API shows a run's id as its job instance's). Ids of the builds
// before (legacyIDPattern: the start time to the second and 8 random hex digits,
// 20261201T153000Z-1a2b3c4d) are still read everywhere; only NewID's form is made.
var (
	idPattern       = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	legacyIDPattern = regexp.MustCompile(`^[0-9]{8}T[0-9]{6}Z-[0-9a-f]{8}$`)
)

// IDExample is what a run id looks like, for the messages that ask for one.
const IDExample = "0196f5a2-3c41-7d2e-9b1a-5c3e8f7a6b21"

// NewID returns a run id for a run starting at now: a version 7 UUID of now.
func NewID(now time.Time) string {
	var b [16]byte
	_, _ = rand.Read(b[8:])
	ms := max(now.UnixMilli(), 0)
	for i := 5; i >= 0; i-- {
		b[i] = byte(ms)
		ms >>= 8
	}
	// The 12 bits after the version are the fraction of the millisecond (RFC 9562, 6.2,
	// method 3): ids of one millisecond still sort by time, to a quarter of a microsecond.
	sub := uint16(int64(now.Nanosecond()%int(time.Millisecond)) * 4096 / int64(time.Millisecond))
	b[6] = 0x70 | byte(sub>>8)
	b[7] = byte(sub)
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// ValidID reports whether id has the form of a run id: NewID's, or that of the ids of the
// builds before it.
func ValidID(id string) bool { return idPattern.MatchString(id) || legacyIDPattern.MatchString(id) }

// IDTime returns the start time an id carries (a version 7 id to a quarter of a microsecond,
// an id of the older form to the second).
func IDTime(id string) (time.Time, bool) {
	switch {
	case idPattern.MatchString(id):
		h := strings.ReplaceAll(id, "-", "")
		ms, err := strconv.ParseInt(h[:12], 16, 64)
		if err != nil {
			return time.Time{}, false
		}
		sub, err := strconv.ParseInt(h[13:16], 16, 64)
		if err != nil {
			return time.Time{}, false
		}
		return time.UnixMilli(ms).UTC().Add(time.Duration(sub * int64(time.Millisecond) / 4096)), true
	case legacyIDPattern.MatchString(id):
		t, err := time.Parse("20060102T150405Z", id[:16])
		return t, err == nil
	}
	return time.Time{}, false
}

// compareRuns orders runs by the time their ids carry; runs of one second by their start
// times first, as an id of the older form tells no more than the second.
func compareRuns(a, b Summary) int {
	ta, _ := IDTime(a.ID)
	tb, _ := IDTime(b.ID)
	if c := ta.Truncate(time.Second).Compare(tb.Truncate(time.Second)); c != 0 {
		return c
	}
	if !a.StartedAt.IsZero() && !b.StartedAt.IsZero() {
		if c := a.StartedAt.Compare(b.StartedAt); c != 0 {
			return c
		}
	}
	if c := ta.Compare(tb); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}

func recordKey(id string) string { return RunsDir + id + recordSuffix }

// WriteRecord stores the record (header and files) at its key, replacing an earlier one.
func WriteRecord(ctx context.Context, store storage.Store, r *Record) error {
	return WriteRecordFrom(ctx, store, r, func(add func(Entry) error) error {
		for _, e := range r.Files {
			if err := add(e); err != nil {
				return err
			}
		}
		return nil
	})
}

// WriteRecordFrom is WriteRecord with the files given one at a time by files, which calls add with each
// (and returns add's error) instead of r.Files: a run of a million files need not hold an
// Entry for each to record them. An error of files leaves the record as it was.
func WriteRecordFrom(ctx context.Context, store storage.Store, r *Record, files func(add func(Entry) error) error) error {
	if !ValidID(r.ID) {
		return fmt.Errorf("run record: invalid id %q", r.ID)
	}
	// Compressed: a million files make about 100 MB of JSON, and the record is held in
	// memory to be put in one request; gzip makes it about a fifth of that (measured: 9.6 MB
	// to 1.7 MB). klauspost/compress writes the same gzip as compress/gzip (which reads it)
	// at its fastest level in about a third of the time, for a record a few per cent larger.
	var buf bytes.Buffer
	zw, _ := fastgzip.NewWriterLevel(&buf, fastgzip.BestSpeed)
	w := bufio.NewWriterSize(zw, 64<<10)
	r.Format = RecordFormat
	if err := json.MarshalWrite(w, r); err != nil {
		return err
	}
	w.WriteByte('\n')
	var line []byte
	err := files(func(e Entry) error {
		var err error
		if line, err = appendEntry(line[:0], e); err != nil {
			return err
		}
		_, err = w.Write(line)
		return err
	})
	if err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := store.Put(ctx, recordKey(r.ID), buf.Bytes()); err != nil {
		return fmt.Errorf("writing the run record %s of %s: %w", recordKey(r.ID), store.Location(), err)
	}
	return nil
}

// ReadRecord reads the record of run id, files included, and checks every line.
func ReadRecord(ctx context.Context, store storage.Store, id string) (*Record, error) {
	if !ValidID(id) {
		return nil, fmt.Errorf("%q is not a run id (they look like 20261201T153000Z-1a2b3c4d; deltavacuum runs TABLE lists them)", id)
	}
	rd, err := store.Open(ctx, recordKey(id))
	if errors.Is(err, storage.ErrNotExist) {
		return nil, fmt.Errorf("%s has no run %s (deltavacuum runs TABLE lists them)", store.Location(), id)
	}
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	return parse(id, io.NewSectionReader(rd, 0, rd.Size()), true)
}

// parse decodes a compressed record; with files false only the header line is read (and
// only as much of the object as it takes).
func parse(id string, compressed io.Reader, files bool) (*Record, error) {
	bad := func(line int, err error) error {
		return fmt.Errorf("run record %s, line %d: %w; the record is not used", recordKey(id), line, err)
	}
	zr, err := gzip.NewReader(bufio.NewReaderSize(compressed, 64<<10))
	if err != nil {
		return nil, bad(1, err)
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	if !sc.Scan() {
		return nil, bad(1, errors.New("empty"))
	}
	var r Record
	if err := json.Unmarshal(sc.Bytes(), &r, json.RejectUnknownMembers(true)); err != nil {
		return nil, bad(1, err)
	}
	if err := r.check(id); err != nil {
		return nil, bad(1, err)
	}
	if !files {
		return &r, nil
	}
	for n := 2; sc.Scan(); n++ {
		var e Entry
		if err := json.Unmarshal(sc.Bytes(), &e, json.RejectUnknownMembers(true)); err != nil {
			return nil, bad(n, err)
		}
		if err := checkEntry(e); err != nil {
			return nil, bad(n, err)
		}
		r.Files = append(r.Files, e)
	}
	if err := sc.Err(); err != nil {
		return nil, bad(0, err)
	}
	return &r, nil
}

func (r *Record) check(id string) error {
	switch {
	case r.Format != RecordFormat:
		return fmt.Errorf("format %d, this deltavacuum reads format %d", r.Format, RecordFormat)
	case r.ID != id:
		return fmt.Errorf("it names run %q, its file name run %q", r.ID, id)
	case r.Status != StatusRunning && r.Status != StatusCompleted && r.Status != StatusFailed:
		return fmt.Errorf("unknown status %q", r.Status)
	}
	if r.Trash != "" {
		if err := checkRunTrash(r.Trash, r.ID); err != nil {
			return err
		}
	}
	if r.Untracked != nil {
		return r.Untracked.check()
	}
	return nil
}

// checkEntry refuses a path an undo must never write: outside the table, in the log, in the
// tool's own folder.
func checkEntry(e Entry) error {
	lower := strings.ToLower(e.Path) // case-insensitive file systems (macOS, Windows)
	switch {
	case e.Path == "" || strings.HasSuffix(e.Path, "/") || !storage.ValidKey(e.Path):
		return fmt.Errorf("invalid path %q", e.Path)
	case strings.ContainsAny(e.Path, `\:`) && runtime.GOOS == "windows":
		return fmt.Errorf("path %q holds a character Windows reads as a separator or a drive", e.Path)
	case strings.HasPrefix(lower, "_delta_log/"):
		return fmt.Errorf("path %q is in the Delta log, which VACUUM never deletes", e.Path)
	case strings.HasPrefix(lower, "_deltavacuum/"):
		return fmt.Errorf("path %q is in the tool's own folder", e.Path)
	case e.Size < -1:
		return fmt.Errorf("path %q: size %d", e.Path, e.Size)
	}
	return nil
}

// checkRunTrash checks the trash folder a record names: a trash folder, then the run's id.
func checkRunTrash(dir, id string) error {
	parent, ok := strings.CutSuffix(dir, id+"/")
	if !ok || parent == "" {
		return fmt.Errorf("trash %q is not a trash folder followed by the run id %s", dir, id)
	}
	f, err := vacuum.TrashFolder(nil, parent)
	if err == nil && f != parent {
		err = fmt.Errorf("trash %q is not in its clean form %q", parent, f)
	}
	return err
}

// Summary is one run as `deltavacuum runs` lists it.
type Summary struct {
	Record
	// Undone is the time of the undo that brought every file of the run back (or found it in
	// place); nil while any is missing. UndoComplete says the same.
	Undone       *time.Time `json:"undoneAt,omitempty"`
	UndoComplete bool       `json:"undoComplete,omitempty"`
	// LastUndo is what the last undo of the run did, complete or not.
	LastUndo *UndoOutcome `json:"lastUndo,omitempty"`
	// Purged is what a trash purge did to the run's trash (nil: never purged).
	Purged *PurgeNote `json:"purged,omitempty"`
	// Err is set when the record could not be read.
	Err string `json:"error,omitempty"`
}

// UndoOutcome is what one undo of a run did, in figures.
type UndoOutcome struct {
	At          time.Time `json:"at"`
	Via         string    `json:"via"`
	NumRestored int64     `json:"numRestored"`
	NumPresent  int64     `json:"numPresent"`
	// NumLost are files nothing can bring back (not restorable: the store kept nothing, the
	// trash was purged); NumFailed those a request failed for (an undo again may bring them).
	NumLost   int64 `json:"numNotRestorable"`
	NumFailed int64 `json:"numFailed"`
}

// Complete reports whether every file is back (restored now or before, or in place).
func (o *UndoOutcome) Complete() bool { return o != nil && o.NumLost+o.NumFailed == 0 }

// ListRecords returns the runs of the table in store, oldest first, from their headers.
func ListRecords(ctx context.Context, store storage.Store) ([]Summary, error) {
	var ids []string
	undone, purged := map[string]bool{}, map[string]bool{}
	err := store.Walk(ctx, RunsDir, func(o storage.Object) error {
		if o.IsDir {
			if o.Key != RunsDir {
				return storage.SkipDir
			}
			return nil
		}
		name := strings.TrimPrefix(o.Key, RunsDir)
		switch {
		case strings.HasSuffix(name, undoSuffix) && ValidID(strings.TrimSuffix(name, undoSuffix)):
			undone[strings.TrimSuffix(name, undoSuffix)] = true
		case strings.HasSuffix(name, purgeSuffix) && ValidID(strings.TrimSuffix(name, purgeSuffix)):
			purged[strings.TrimSuffix(name, purgeSuffix)] = true
		case strings.HasSuffix(name, recordSuffix) && ValidID(strings.TrimSuffix(name, recordSuffix)):
			ids = append(ids, strings.TrimSuffix(name, recordSuffix))
		}
		return nil
	})
	if errors.Is(err, storage.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing the runs of %s: %w", store.Location(), err)
	}
	sort.Strings(ids)
	out := make([]Summary, 0, len(ids))
	for _, id := range ids {
		out = append(out, summaryOf(ctx, store, id, undone[id], purged[id]))
	}
	sort.SliceStable(out, func(i, j int) bool { return compareRuns(out[i], out[j]) < 0 })
	return out, nil
}

// SummaryOf returns the summary of run id alone, as ListRecords has it, reading its header and the
// report of its last undo only (not every record of the table, nor the files of this one).
// ErrNotExist (wrapped) when the table has no record of that run.
func SummaryOf(ctx context.Context, store storage.Store, id string) (Summary, error) {
	if !ValidID(id) {
		return Summary{}, fmt.Errorf("%q is not a run id (they look like %s; deltavacuum runs TABLE lists them)", id, IDExample)
	}
	s := Summary{Record: Record{ID: id}}
	r, err := readHeader(ctx, store, id)
	switch {
	case errors.Is(err, storage.ErrNotExist):
		return Summary{}, fmt.Errorf("run record %s of %s: %w", recordKey(id), store.Location(), err)
	case err != nil:
		s.Err = err.Error()
	default:
		s.Record = *r
	}
	// A report that cannot be read is passed over, as ListRecords passes it over.
	if rep, err := ReadUndoReport(ctx, store, id); err == nil {
		s.setUndo(rep)
	}
	s.Purged = purgedOf(ctx, store, id)
	return s, nil
}

// summaryOf is the summary of run id (undone: a report of its undo is kept; purged: a note of
// a purge of its trash).
func summaryOf(ctx context.Context, store storage.Store, id string, undone, purged bool) Summary {
	s := Summary{Record: Record{ID: id}}
	r, err := readHeader(ctx, store, id)
	if err != nil {
		s.Err = err.Error()
	} else {
		s.Record = *r
	}
	if undone {
		if rep, err := ReadUndoReport(ctx, store, id); err == nil {
			s.setUndo(rep)
		}
	}
	if purged {
		s.Purged = purgedOf(ctx, store, id)
	}
	return s
}

// setUndo sets what the last undo of the run did, from its report.
func (s *Summary) setUndo(rep *UndoReport) {
	s.LastUndo = &UndoOutcome{At: rep.At, Via: rep.Via, NumRestored: rep.NumRestored, NumPresent: rep.NumPresent, NumLost: rep.NumLost, NumFailed: rep.NumFailed}
	if s.UndoComplete = s.LastUndo.Complete(); s.UndoComplete {
		t := rep.At
		s.Undone = &t
	}
}

// readHeader reads the first line of a record only.
func readHeader(ctx context.Context, store storage.Store, id string) (*Record, error) {
	rd, err := store.Open(ctx, recordKey(id))
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	return parse(id, io.NewSectionReader(rd, 0, rd.Size()), false)
}
