package deltalog

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/deltavacuum/deltavacuum/storage"
)

// Snapshot is the state of a table at one version: protocol, metadata, and where its file
// actions come from. File actions are not held in memory; Files streams them.
type Snapshot struct {
	Location string
	Root     Root
	Version  int64
	Protocol Protocol
	Metadata Metadata
	Segment  *Segment

	// ProtocolVersion and MetadataVersion are the versions the protocol and metadata were read
	// from (the checkpoint version when they came from the checkpoint).
	ProtocolVersion, MetadataVersion int64

	commits  []commit  // commits after the checkpoint, in version order
	sidecars []LogFile // sidecar files of a V2 checkpoint
	// checkpointProtocol is the protocol action of the checkpoint itself: the protocol its
	// files were written under, which says what columns they must have (Files).
	checkpointProtocol Protocol
}

// commit is one parsed commit file: its file actions, commitInfo, and the protocol and
// metaData it carries, if any.
type commit struct {
	file       LogFile
	adds       []Add
	removes    []Remove
	cdcs       []CDC
	commitInfo *CommitInfo
	protocol   *Protocol
	metadata   *Metadata
}

// Load reads the latest snapshot of the table in store. It refuses what cannot be read
// exactly: no log, a gap, a corrupt checkpoint or commit.
func Load(ctx context.Context, store storage.Store) (*Snapshot, error) {
	seg, err := ListLog(ctx, store)
	if err != nil {
		return nil, err
	}
	return LoadSegment(ctx, store, seg)
}

// LoadSegment reads the snapshot described by seg.
func LoadSegment(ctx context.Context, store storage.Store, seg *Segment) (*Snapshot, error) {
	root, err := RootOf(store)
	if err != nil {
		return nil, err
	}
	s := &Snapshot{Location: store.Location(), Root: root, Version: seg.Version, Segment: seg,
		ProtocolVersion: -1, MetadataVersion: -1}
	var protocol *Protocol
	var metadata *Metadata
	for _, f := range seg.Commits {
		c, p, m, err := readCommit(ctx, store, f)
		if err != nil {
			return nil, err
		}
		if p != nil {
			protocol, s.ProtocolVersion = p, f.Version
		}
		if m != nil {
			metadata, s.MetadataVersion = m, f.Version
		}
		s.commits = append(s.commits, c)
	}
	if len(seg.Checkpoint) > 0 {
		cp, err := readCheckpointHeader(ctx, store, root, seg)
		if err != nil {
			return nil, err
		}
		s.checkpointProtocol, s.sidecars = *cp.protocol, cp.sidecars
		if protocol == nil {
			protocol, s.ProtocolVersion = cp.protocol, seg.CheckpointVersion
		}
		if metadata == nil {
			metadata, s.MetadataVersion = cp.metadata, seg.CheckpointVersion
		}
	}
	if protocol == nil || metadata == nil {
		return nil, fmt.Errorf("%w: %s: no protocol or metaData action in the log (version %d)", ErrCorrupt, s.Location, s.Version)
	}
	s.Protocol, s.Metadata = *protocol, *metadata
	if len(s.Metadata.Raw) == 0 {
		raw, err := json.Marshal(s.Metadata)
		if err != nil {
			return nil, err
		}
		s.Metadata.Raw = raw
	}
	return s, nil
}

// checkpointHeader is what a checkpoint holds besides its file actions.
type checkpointHeader struct {
	protocol *Protocol
	metadata *Metadata
	sidecars []LogFile
}

// readCheckpointHeader reads the non-file actions of the checkpoint of seg, always, even
// when the commits after it carry a newer protocol and metaData: they tell whether the files
// are a checkpoint at all. A checkpoint holds the complete state of the table at its version,
// and that state always has a protocol and a metaData (PROTOCOL.md, Checkpoints: the
// checkpoint "must contain" them); a V2 checkpoint (UUID-named, or under the classic name)
// holds exactly one checkpointMetadata action, for the checkpoint's own version (V2 Spec). A
// file without them is not the table's state, whatever else it holds: a file cut short after
// its first line, valid Parquet without rows, a foreign file under a checkpoint's name. Read
// as a checkpoint, it would say the table had no files at that version, and every file added
// before it would look unreferenced. So it is refused as corrupt, naming the file, like any
// checkpoint that cannot be read exactly; two protocol or metaData actions are refused too,
// since which one is the table's cannot be known.
//
// Only a top-level file (classic or UUID-named) may be V2 and list sidecars; a part of a
// multi-part checkpoint is always V1 (PROTOCOL.md), so its sidecar and checkpointMetadata
// rows are not read.
func readCheckpointHeader(ctx context.Context, store storage.Store, root Root, seg *Segment) (*checkpointHeader, error) {
	h := &checkpointHeader{}
	first := seg.Checkpoint[0]
	want := KindProtocol | KindMetadata
	if first.Kind != KindMultiPartCheckpoint {
		want |= KindSidecar | KindCheckpointMetadata
	}
	var cpMeta []int64 // the versions of the checkpointMetadata actions read
	for _, f := range seg.Checkpoint {
		corrupt := func(format string, args ...any) error {
			return fmt.Errorf("%w: %s: checkpoint %s: "+format, append([]any{ErrCorrupt, store.Location(), f.Key}, args...)...)
		}
		err := readCheckpointFile(ctx, store, f, want, func(a *Action) error {
			switch {
			case a.Protocol != nil:
				if h.protocol != nil {
					return corrupt("it holds two protocol actions; a checkpoint holds the table's one protocol")
				}
				h.protocol = a.Protocol
			case a.Metadata != nil:
				if h.metadata != nil {
					return corrupt("it holds two metaData actions; a checkpoint holds the table's one metaData")
				}
				h.metadata = a.Metadata
			case a.CheckpointMetadata != nil:
				cpMeta = append(cpMeta, a.CheckpointMetadata.Version)
			case a.Sidecar != nil:
				key, inside, err := root.Key(a.Sidecar.Path)
				if err == nil && !inside {
					err = fmt.Errorf("sidecar %q lies outside the table", a.Sidecar.Path)
				}
				if err == nil && !hasScheme(a.Sidecar.Path) {
					key = LogDir + "_sidecars/" + key
				}
				if err != nil {
					return corrupt("%v", err)
				}
				h.sidecars = append(h.sidecars, LogFile{Key: key, Format: "parquet", Size: a.Sidecar.SizeInBytes})
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	corrupt := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s: checkpoint %s: "+format+"; it is not the state of the table at version %d, so nothing is deleted",
			append(append([]any{ErrCorrupt, store.Location(), keysOf(seg.Checkpoint)}, args...), seg.CheckpointVersion)...)
	}
	switch {
	case h.protocol == nil && h.metadata == nil:
		return nil, corrupt("it holds neither a protocol nor a metaData action, which every checkpoint carries")
	case h.protocol == nil:
		return nil, corrupt("it holds no protocol action, which every checkpoint carries")
	case h.metadata == nil:
		return nil, corrupt("it holds no metaData action, which every checkpoint carries")
	case len(cpMeta) > 1:
		return nil, corrupt("it holds %d checkpointMetadata actions; a V2 checkpoint holds exactly one", len(cpMeta))
	case len(cpMeta) == 0 && first.Kind == KindUUIDCheckpoint:
		return nil, corrupt("a UUID-named checkpoint is a V2 checkpoint, and it holds no checkpointMetadata action")
	case len(cpMeta) == 1 && cpMeta[0] != seg.CheckpointVersion:
		return nil, corrupt("its checkpointMetadata names version %d, not the version of its name", cpMeta[0])
	}
	return h, nil
}

// readCommit reads one commit file.
func readCommit(ctx context.Context, store storage.Store, f LogFile) (commit, *Protocol, *Metadata, error) {
	return decodeCommit(f, func(fn func(*Action) error) error { return readJSONActions(ctx, store, f.Key, fn) })
}

// writtenCommit is readCommit of a commit this process has just written: its bytes, not read
// back from the store.
func writtenCommit(ctx context.Context, location string, f LogFile, data []byte) (commit, *Protocol, *Metadata, error) {
	return decodeCommit(f, func(fn func(*Action) error) error {
		return decodeJSONActions(ctx, bytes.NewReader(data), f.Key, location, fn)
	})
}

// decodeCommit is the commit f made of the actions read calls its function with.
func decodeCommit(f LogFile, read func(fn func(*Action) error) error) (commit, *Protocol, *Metadata, error) {
	c := commit{file: f}
	var protocol *Protocol
	var metadata *Metadata
	err := read(func(a *Action) error {
		switch {
		case a.Add != nil:
			c.adds = append(c.adds, *a.Add)
		case a.Remove != nil:
			c.removes = append(c.removes, *a.Remove)
		case a.CDC != nil:
			c.cdcs = append(c.cdcs, *a.CDC)
		case a.Protocol != nil:
			protocol = a.Protocol
		case a.Metadata != nil:
			metadata = a.Metadata
		case a.CommitInfo != nil && c.commitInfo == nil:
			c.commitInfo = a.CommitInfo // the first, as every reader of commitInfo takes it
		}
		return nil
	})
	c.protocol, c.metadata = protocol, metadata
	return c, protocol, metadata, err
}

// readJSONActions reads a newline-delimited JSON file of actions (a commit or a JSON
// checkpoint), streaming it line by line; a line may be of any length. Each line is decoded
// exactly (actionDecoder): a line that is not one JSON object, holds two actions, a duplicate
// key, invalid UTF-8 or a value of the wrong type is ErrCorrupt, naming the file and the line.
func readJSONActions(ctx context.Context, store storage.Store, key string, fn func(*Action) error) error {
	r, err := store.Open(ctx, key)
	if err != nil {
		if errors.Is(err, storage.ErrNotExist) {
			return fmt.Errorf("%w: %s vanished while reading the log: %v", ErrMissingVersion, key, err)
		}
		return fmt.Errorf("reading %s: %w", key, err)
	}
	defer r.Close()
	return decodeJSONActions(ctx, io.NewSectionReader(r, 0, r.Size()), key, store.Location(), fn)
}

// decodeJSONActions is readJSONActions of what r reads (key and location name it in errors).
func decodeJSONActions(ctx context.Context, r io.Reader, key, location string, fn func(*Action) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var d actionDecoder
	var long []byte // a line longer than br's buffer, gathered piece by piece
	for line := 1; ; line++ {
		b, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long[:0], b...)
			for err == bufio.ErrBufferFull {
				b, err = br.ReadSlice('\n')
				long = append(long, b...)
			}
			b = long
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("reading %s of %s: %w", key, location, err)
		}
		// Only JSON's own whitespace separates lines; bytes.TrimSpace would also take U+0085
		// and U+00A0, which JSON does not allow outside a string.
		if b = bytes.Trim(b, " \t\r\n"); len(b) > 0 {
			a := new(Action)
			if derr := d.decode(b, a); derr != nil {
				return fmt.Errorf("%w: %s of %s, line %d: %v", ErrCorrupt, key, location, line, derr)
			}
			if ferr := fn(a); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
		if cap(long) > 16<<20 {
			long = nil // do not hold on to the memory of a very long line
		}
		if line%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
	}
}

// readCheckpointFile reads one checkpoint file (JSON or Parquet) or sidecar.
func readCheckpointFile(ctx context.Context, store storage.Store, f LogFile, want Kinds, fn func(*Action) error) error {
	if f.Format == "json" {
		return readJSONActions(ctx, store, f.Key, func(a *Action) error {
			if a.kind()&want == 0 {
				return nil
			}
			return fn(a)
		})
	}
	r, err := store.Open(ctx, f.Key)
	if err != nil {
		return fmt.Errorf("%w: checkpoint file %s cannot be opened: %v", ErrCorrupt, f.Key, err)
	}
	defer r.Close()
	if want&KindFiles != 0 && f.Kind != KindClassicCheckpoint && f.Kind != KindUUIDCheckpoint {
		// Only a top-level checkpoint file may be a V2 one that lists sidecars; a sidecar or
		// a part of a multi-part checkpoint holds its file actions itself.
		want |= kindFilesHere
	}
	return checkpointErr(store, f, readParquetActions(ctx, r, want, fn))
}

// checkpointErr is err, about a row or a part of the Parquet checkpoint file f, naming f, both
// where the file is read (readCheckpointFile) and where its rows are turned into files
// (FilesWith, on the other side of pipe); an error about a JSON checkpoint is left as it is.
func checkpointErr(store storage.Store, f LogFile, err error) error {
	if err == nil || f.Format == "json" {
		return err
	}
	return fmt.Errorf("reading %s of %s: %w", f.Key, store.Location(), err)
}

// File is one reconciled file action of a snapshot: a live add, or a tombstone.
type File struct {
	// LogPath is the path as written in the log.
	LogPath string
	// Key is the decoded key relative to the table root; empty when Inside is false.
	Key    string
	Inside bool
	// DVKey is the key of the deletion-vector file, empty when there is none in the table.
	DVKey string
	// OtherKeys are the other keys inside the table that the path or the deletion vector's
	// path can be read as (Root.OtherReadings): a reader protects them all. Nil for the common
	// path that can be read one way only.
	OtherKeys []string
	// Removed marks a tombstone.
	Removed bool
	// DeletionTimestamp of a tombstone, in milliseconds (0 when the writer omitted it).
	DeletionTimestamp int64
	Size              int64
	// Version is the commit of the action; for a row of the checkpoint, the checkpoint's
	// version (the action is at or before it) and FromCheckpoint is set.
	Version        int64
	FromCheckpoint bool
	// DeletionVector is the action's deletion vector (its cardinality is the number of rows it
	// marks deleted); nil when it has none.
	DeletionVector *DeletionVector
	// NumRecords is the number of rows of a live add's data file, those its deletion vector
	// marks deleted included (its statistics' numRecords); -1 when unknown: not asked for
	// (FilesOptions.NumRecords), not recorded, or a tombstone.
	NumRecords int64
}

// FilesOptions choose what FilesWith reads beyond what identifies each file.
type FilesOptions struct {
	// LiveOnly streams the live adds only: the tombstones of the commits are still replayed
	// (a newer remove hides an older add), but none is streamed, and a checkpoint's remove
	// columns are not read.
	LiveOnly bool
	// NumRecords fills File.NumRecords of the live adds from their statistics: a checkpoint's
	// stats and stats_parsed.numRecords columns are read only then.
	NumRecords bool
	// NoSizes leaves File.Size 0: a checkpoint's size columns are not read (FileKeys).
	NoSizes bool
}

type fileID struct {
	path, dv string
}

// Files streams the reconciled file actions of the snapshot: each (path, deletion-vector id)
// once, newest action wins. The commits after the checkpoint are replayed newest first with a
// set of keys seen; the checkpoint's rows are then streamed, skipping keys already seen, so
// memory holds only the commits' keys, never the checkpoint's.
func (s *Snapshot) Files(ctx context.Context, store storage.Store, fn func(File) error) error {
	return s.FilesWith(ctx, store, FilesOptions{}, fn)
}

// FileKeys is Files without the sizes (File.Size is 0): all that deciding which keys the
// snapshot names takes. A Parquet checkpoint's size columns are then not read.
func (s *Snapshot) FileKeys(ctx context.Context, store storage.Store, fn func(File) error) error {
	return s.FilesWith(ctx, store, FilesOptions{NoSizes: true}, fn)
}

// FilesWith is Files reading what opts asks for besides (or less).
func (s *Snapshot) FilesWith(ctx context.Context, store storage.Store, opts FilesOptions, fn func(File) error) error {
	if opts.NoSizes {
		next := fn
		fn = func(f File) error {
			f.Size = 0 // as the checkpoint's rows, read without their sizes, have it
			return next(f)
		}
	}
	seen := map[fileID]struct{}{}
	for i := len(s.commits) - 1; i >= 0; i-- {
		c := s.commits[i]
		emit := at(c.file.Version, false, fn)
		// The protocol forbids an add and a remove of one key in one commit; should a writer
		// break that rule, the add is taken first and wins, which keeps the file.
		for j := len(c.adds) - 1; j >= 0; j-- {
			a := &c.adds[j]
			id := fileID{a.Path, a.DeletionVector.UniqueID()}
			if _, ok := seen[id]; ok {
				continue
			}
			seen[id] = struct{}{}
			if err := s.emitAdd(a, opts, emit); err != nil {
				return err
			}
		}
		for j := len(c.removes) - 1; j >= 0; j-- {
			r := &c.removes[j]
			id := fileID{r.Path, r.DeletionVector.UniqueID()}
			if _, ok := seen[id]; ok {
				continue
			}
			seen[id] = struct{}{}
			if opts.LiveOnly {
				continue
			}
			if err := s.emitRemove(r, emit); err != nil {
				return err
			}
		}
	}
	// The checkpoint's rows are decoded, and those a newer commit settled dropped, on a
	// goroutine of their own (pipe); seen is only read from here on. Each row comes with the
	// file it was read from, whose name an error about the row carries, as it did when the
	// rows were taken one by one inside readCheckpointFile.
	type row struct {
		act  *Action
		from *LogFile
	}
	unseen := func(from *LogFile, emit func(row) error) func(*Action) error {
		return func(a *Action) error {
			switch {
			case a.Add != nil:
				if _, ok := seen[fileID{a.Add.Path, a.Add.DeletionVector.UniqueID()}]; ok {
					return nil
				}
			case a.Remove != nil:
				if _, ok := seen[fileID{a.Remove.Path, a.Remove.DeletionVector.UniqueID()}]; ok {
					return nil
				}
			default:
				return nil
			}
			return emit(row{a, from})
		}
	}
	fromCheckpoint := at(s.Segment.CheckpointVersion, true, fn)
	visit := func(r row) error {
		var err error
		if r.act.Add != nil {
			err = s.emitAdd(r.act.Add, opts, fromCheckpoint)
		} else {
			err = s.emitRemove(r.act.Remove, fromCheckpoint)
		}
		return checkpointErr(store, *r.from, err)
	}
	want := KindAdd | KindRemove | kindFileFields
	if opts.LiveOnly {
		want = KindAdd | kindFileFields
	}
	if opts.NumRecords {
		want |= kindStats
	}
	if opts.NoSizes {
		want |= kindNoSize
	}
	// The deletionVector column is required of a checkpoint written under a protocol with
	// deletion vectors: without it, every vector would look absent and its file unreferenced.
	// That is the checkpoint's own protocol, not the current one: a table upgraded to
	// deletion vectors after its last checkpoint has a checkpoint written when no action
	// could carry a vector (Delta Spark before 2.3, old delta-rs write no such column), and
	// the commits after it are JSON, read whole.
	if s.checkpointProtocol.hasFeature("deletionVectors") {
		want |= kindDVRequired
	}
	return pipe(ctx, func(ctx context.Context, emit func(row) error) error {
		for _, f := range slices.Concat(s.Segment.Checkpoint, s.sidecars) {
			if err := readCheckpointFile(ctx, store, f, want, unseen(&f, emit)); err != nil {
				return err
			}
		}
		return nil
	}, visit)
}

// at returns fn with the version of the action filled in.
func at(version int64, fromCheckpoint bool, fn func(File) error) func(File) error {
	return func(f File) error {
		f.Version, f.FromCheckpoint = version, fromCheckpoint
		return fn(f)
	}
}

func (s *Snapshot) emitAdd(a *Add, opts FilesOptions, fn func(File) error) error {
	f, err := s.file(a.Path, a.DeletionVector)
	if err != nil {
		return err
	}
	f.Size = a.Size
	if opts.NumRecords {
		if n, ok := a.NumRecords(); ok {
			f.NumRecords = n
		}
	}
	return fn(f)
}

func (s *Snapshot) emitRemove(r *Remove, fn func(File) error) error {
	f, err := s.file(r.Path, r.DeletionVector)
	if err != nil {
		return err
	}
	f.Removed = true
	if r.DeletionTimestamp != nil {
		f.DeletionTimestamp = *r.DeletionTimestamp
	}
	if r.Size != nil {
		f.Size = *r.Size
	}
	return fn(f)
}

func (s *Snapshot) file(logPath string, dv *DeletionVector) (File, error) {
	f := File{LogPath: logPath, DeletionVector: dv, NumRecords: -1}
	var err error
	var ambiguous bool
	f.Key, f.Inside, ambiguous, err = s.Root.key(logPath)
	if err != nil {
		return f, fmt.Errorf("table %s: %w", s.Location, err)
	}
	f.DVKey, _, err = s.Root.DVKey(dv)
	if err != nil {
		return f, fmt.Errorf("table %s, file %q: %w", s.Location, logPath, err)
	}
	f.OtherKeys = s.Root.otherKeys(logPath, f.Key, ambiguous, dv, f.DVKey)
	return f, nil
}

// otherKeys returns the other readings of a file action's path (when ambiguous: it holds a
// character that can be read more than one way) and of its deletion vector's path (a "p"
// vector is a URI too; a "u" vector names one key only).
func (r Root) otherKeys(logPath, key string, ambiguous bool, dv *DeletionVector, dvKey string) []string {
	var out []string
	if ambiguous {
		out = r.OtherReadings(logPath, key)
	}
	if dv != nil && dv.StorageType == "p" {
		out = append(out, r.OtherReadings(dv.PathOrInlineDv, dvKey)...)
	}
	return out
}

// PartitionColumns returns the table's partition columns.
func (s *Snapshot) PartitionColumns() []string { return s.Metadata.PartitionColumns }

// Property returns a table property and whether it is set.
func (s *Snapshot) Property(key string) (string, bool) {
	v, ok := s.Metadata.Configuration[key]
	return v, ok
}

// CommitRefs calls fn with every key inside the table that commit f references through an
// add, remove or cdc action or their deletion vectors (every reading of each path), and
// returns the commit's protocol and metaData actions, if it has them. The executor uses it to
// re-check the log tail before deleting.
func CommitRefs(ctx context.Context, store storage.Store, root Root, f LogFile, fn func(key string)) (*Protocol, *Metadata, error) {
	c, p, m, err := readCommit(ctx, store, f)
	if err != nil {
		return nil, nil, err
	}
	if err := commitRefs(root, &c, fn); err != nil {
		return nil, nil, err
	}
	return p, m, nil
}

// HeldCommitRefs is CommitRefs of the commit of version v that s holds (read when s was
// loaded or advanced: the commits after its checkpoint), without reading it again; ok is
// false when s holds no such commit.
func (s *Snapshot) HeldCommitRefs(v int64, fn func(key string)) (f LogFile, p *Protocol, m *Metadata, ok bool, err error) {
	c := s.heldCommit(v)
	if c == nil {
		return LogFile{}, nil, nil, false, nil
	}
	if err := commitRefs(s.Root, c, fn); err != nil {
		return c.file, nil, nil, true, err
	}
	return c.file, c.protocol, c.metadata, true, nil
}

// HoldsCommits reports whether s holds every commit from version from to its own version
// (HeldCommitRefs), so that nothing of them needs to be read again.
func (s *Snapshot) HoldsCommits(from int64) bool {
	return from > s.Version || s.heldCommit(from) != nil
}

// heldCommit returns the commit of version v among those s holds, or nil.
func (s *Snapshot) heldCommit(v int64) *commit {
	if len(s.commits) == 0 {
		return nil
	}
	i := v - s.commits[0].file.Version
	if i < 0 || i >= int64(len(s.commits)) || s.commits[i].file.Version != v {
		return nil
	}
	return &s.commits[i]
}

// commitRefs is CommitRefs of a commit already read.
func commitRefs(root Root, c *commit, fn func(key string)) error {
	f := c.file
	ref := func(path string, dv *DeletionVector) error {
		key, inside, ambiguous, err := root.key(path)
		if err != nil {
			return fmt.Errorf("commit %s: %w", f.Key, err)
		}
		if inside {
			fn(key)
		}
		dvKey, ok, err := root.DVKey(dv)
		if err != nil {
			return fmt.Errorf("commit %s: %w", f.Key, err)
		}
		if ok {
			fn(dvKey)
		}
		for _, k := range root.otherKeys(path, key, ambiguous, dv, dvKey) {
			fn(k)
		}
		return nil
	}
	for i := range c.adds {
		if err := ref(c.adds[i].Path, c.adds[i].DeletionVector); err != nil {
			return err
		}
	}
	for i := range c.removes {
		if err := ref(c.removes[i].Path, c.removes[i].DeletionVector); err != nil {
			return err
		}
	}
	for i := range c.cdcs {
		if err := ref(c.cdcs[i].Path, nil); err != nil {
			return err
		}
	}
	return nil
}
