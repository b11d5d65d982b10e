package run

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/readers/converted"
	"github.com/deltavacuum/deltavacuum/readers/iceberg"
	"github.com/deltavacuum/deltavacuum/readers/streaming"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/location"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// The readers of a table (VACUUM-SPEC section 15), found before a run plans: what the storage
// shows (Iceberg metadata in the table's folder, shallow clones among the tables the run was
// told of) and what owners registered (pins, streaming checkpoints). Package vacuum keeps
// what they need (rules_readers.go); this file only finds them. Anything that says it is a
// reader and cannot be read refuses the run: a reader is never ignored by accident.

// StreamingCheckpointsProperty is the table property that lists the checkpoint locations of the
// Structured Streaming queries reading the table, separated by commas.
const StreamingCheckpointsProperty = "deltavacuum.streamingCheckpoints"

// ReaderOptions say where the readers of a table are, beyond what its folder shows.
type ReaderOptions struct {
	// StreamingCheckpoints are checkpoint locations of Structured Streaming queries that read
	// the table, beside those StreamingCheckpointsProperty lists.
	StreamingCheckpoints []string
	// Siblings are the locations of the other tables of the warehouse or lakehouse the table is
	// in: a shallow clone among them names files of this table.
	Siblings []string
	// Open opens the store of another location (a checkpoint, a sibling table) with the
	// caller's credentials; nil refuses a run that would need one.
	Open func(ctx context.Context, location string) (storage.Store, error)
	// MaxPin is the longest pin honoured (0: DefaultMaxPin).
	MaxPin time.Duration
}

// Readers is what FindReaders found.
type Readers struct {
	// Readers are what the plan must honour.
	Readers []vacuum.Reader `json:"readers"`
	// Pins are every pin of the table, expired and active.
	Pins []PinState `json:"pins"`
	// Iceberg is the Iceberg view of the table, when its folder holds one.
	Iceberg *IcebergReader `json:"iceberg,omitempty"`
	// Notes say what was seen and passed over (an expired pin).
	Notes []string `json:"notes,omitempty"`
}

// IcebergReader is the Iceberg view of a table, as inspect reports it.
type IcebergReader struct {
	Metadata string `json:"metadata"`
	// Engine and Version: the converter and the Delta version it converted, when recorded.
	Engine  string `json:"engine,omitempty"`
	Version *int64 `json:"version,omitempty"`
	// SnapshotAt is the time of the current Iceberg snapshot.
	SnapshotAt time.Time `json:"snapshotAt,omitzero"`
	// LagVersions and LagHours say how far behind the Delta table it is (nil: unknown).
	LagVersions *int64   `json:"lagVersions,omitempty"`
	LagHours    *float64 `json:"lagHours,omitempty"`
	// Folders are the metadata folders, kept whole.
	Folders []string `json:"folders"`
}

// ErrConvertedLog is matched by the refusal of a table whose Delta log translates another
// format's: that format's engine owns the files.
var ErrConvertedLog = errors.New("the Delta log is a translation of another table format")

// CheckConverted refuses a table whose log another format's converter writes (OneLake's
// Iceberg shortcuts, Apache XTable): FULL, LITE and inventory runs alike.
func CheckConverted(ctx context.Context, store storage.Store, snap *deltalog.Snapshot) error {
	c, err := converted.Detect(ctx, store, snap)
	if err != nil || c == nil {
		return err
	}
	return fmt.Errorf("%s: %w: %s writes it (%s); %s. Nothing was done",
		store.Location(), ErrConvertedLog, c.Engine, strings.Join(c.Evidence, ", "), c.Advice)
}

// FindReaders finds the readers of the table in store at snapshot snap, at now. Without pins,
// registered checkpoints and Iceberg metadata it costs a listing of the pins folder and one
// of the Iceberg metadata folder.
func FindReaders(ctx context.Context, store storage.Store, snap *deltalog.Snapshot, now time.Time, opts ReaderOptions) (*Readers, error) {
	out, err := findReaders(ctx, store, snap, opts)
	if err != nil {
		return nil, err
	}
	pins, err := ListPins(ctx, store, now, opts.MaxPin)
	if err != nil {
		return nil, err
	}
	if err := out.addPins(store.Location(), pins); err != nil {
		return nil, err
	}
	return out, nil
}

// addPins adds the pins' readers (an invalid pin refuses; an expired one is a note).
func (out *Readers) addPins(location string, pins []PinState) error {
	out.Pins = pins
	rs, notes, err := pinReaders(pins, location)
	if err != nil {
		return err
	}
	out.Readers = append(out.Readers, rs...)
	out.Notes = append(out.Notes, notes...)
	return nil
}

// findReaders finds the readers of the table but its pins, which a run reads from the listing
// that admits it to the table's lock (Start): Iceberg metadata, registered streaming
// checkpoints, shallow clones.
func findReaders(ctx context.Context, store storage.Store, snap *deltalog.Snapshot, opts ReaderOptions) (*Readers, error) {
	out := &Readers{Readers: []vacuum.Reader{}, Pins: []PinState{}}

	ib, err := icebergReader(ctx, store, snap)
	if err != nil {
		return nil, err
	}
	if ib != nil {
		out.Readers = append(out.Readers, ib.reader)
		out.Iceberg = &ib.report
	}

	locs, err := streamingLocations(snap, opts.StreamingCheckpoints)
	if err != nil {
		return nil, err
	}
	for _, loc := range locs {
		r, err := streamingReader(ctx, snap, loc, opts.Open)
		if err != nil {
			return nil, err
		}
		out.Readers = append(out.Readers, r)
	}
	for _, loc := range opts.Siblings {
		r, err := cloneReader(ctx, store, loc, opts.Open)
		if err != nil {
			return nil, err
		}
		if r != nil {
			out.Readers = append(out.Readers, *r)
		}
	}
	return out, nil
}

// streamingLocations are the checkpoints registered for the table: its property's, then the
// caller's, each once. A relative location in the property refuses: every program that runs
// the table (the CLI in one folder, the service in another, a notebook) would read it from its
// own working directory, so none can be trusted to find the query's checkpoint. A caller's
// relative location is the caller's (a path typed on the command line).
func streamingLocations(snap *deltalog.Snapshot, given []string) ([]string, error) {
	var registered []string
	if v, ok := snap.Property(StreamingCheckpointsProperty); ok {
		registered = strings.Split(v, ",")
		for _, l := range registered {
			if l = strings.TrimSpace(l); location.Relative(l) {
				return nil, fmt.Errorf("%s: the table property %s names the streaming checkpoint %s by a relative path, which each program reading the table would look for in its own working directory; nothing was done (write it as an absolute path or a URI: ALTER TABLE ... SET TBLPROPERTIES)",
					snap.Location, StreamingCheckpointsProperty, location.SafeURI(l))
			}
		}
	}
	var out []string
	seen := map[string]bool{}
	for _, l := range append(registered, given...) {
		if l = strings.TrimSpace(l); l != "" && !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	return out, nil
}

// streamingReader reads the checkpoint at loc of a query reading snap's table: the version it
// reads next is pinned. A checkpoint of another table, or one that cannot be read, refuses.
//
// The checkpoint is named, in messages and as the reader, without what may be secret in its
// location (a SAS token in a URL's query: location.SafeURI); it is opened with it.
func streamingReader(ctx context.Context, snap *deltalog.Snapshot, loc string, open func(context.Context, string) (storage.Store, error)) (vacuum.Reader, error) {
	name := location.SafeURI(loc)
	fail := func(err error) (vacuum.Reader, error) {
		return vacuum.Reader{}, fmt.Errorf("%s: the streaming checkpoint %s registered for the table cannot be honoured: %w; nothing was done (fix the location in %s, or remove it)",
			snap.Location, name, err, StreamingCheckpointsProperty)
	}
	if open == nil {
		return fail(errors.New("this front end cannot open other locations"))
	}
	cs, err := open(ctx, loc)
	if err != nil {
		return fail(err)
	}
	cp, err := streaming.Read(ctx, cs, snap.Metadata.ID)
	if err != nil {
		return fail(err)
	}
	v := cp.Version
	// Outside an initial snapshot the query reads the changes of its version first (the
	// offset is before or inside them): what that commit names is kept too.
	return vacuum.Reader{Kind: vacuum.ReaderStreaming, Name: name, Version: &v, Changes: !cp.InitialSnapshot}, nil
}

type icebergFound struct {
	reader vacuum.Reader
	report IcebergReader
}

// icebergReader reads the Iceberg metadata in the table's folder: its folders are kept whole,
// the Delta version its current snapshot was converted from is pinned, and where no converter
// recorded one the data files its manifests name are kept. Metadata that is Iceberg's but
// cannot be read refuses the run.
func icebergReader(ctx context.Context, store storage.Store, snap *deltalog.Snapshot) (*icebergFound, error) {
	t, err := iceberg.Find(ctx, store, iceberg.Options{DeltaConfiguration: snap.Metadata.Configuration})
	if err != nil {
		return nil, fmt.Errorf("%s: the table's folder holds Iceberg metadata that cannot be read: %w; nothing was done, since Iceberg readers of the table may need files VACUUM would delete",
			store.Location(), err)
	}
	if t == nil {
		return nil, nil
	}
	folders := map[string]bool{}
	for _, k := range t.MetadataFiles {
		folders[storage.Dir(k)] = true
	}
	var fs []string
	for f := range folders {
		fs = append(fs, f)
	}
	r := vacuum.Reader{Kind: vacuum.ReaderIceberg, Name: t.Current.Key, Folders: fs}
	rep := IcebergReader{Metadata: t.Current.Key, Folders: fs}
	if t.Snapshot != nil {
		rep.SnapshotAt = t.Snapshot.Timestamp
	}
	if c := t.Conversion; c != nil {
		rep.Engine = c.Engine
		if c.Version != nil {
			v := *c.Version
			r.Version, rep.Version = &v, &v
		}
	}
	if r.Version == nil {
		// No converter says which version: the files the current snapshot reads are kept.
		r.Files = func(ctx context.Context, fn func(string) error) error {
			return t.DataFiles(ctx, store, func(f iceberg.DataFile) error {
				if f.Outside {
					return nil
				}
				if err := fn(f.Key); err != nil {
					return err
				}
				for _, k := range f.OtherKeys {
					if err := fn(k); err != nil {
						return err
					}
				}
				return nil
			})
		}
	}
	latest := time.Time{}
	if n := len(snap.Segment.AllCommits); n > 0 {
		latest = snap.Segment.AllCommits[n-1].ModTime
	}
	lag := iceberg.LagOf(t, snap.Version, latest)
	rep.LagVersions = lag.Versions
	if lag.Behind > 0 || lag.Versions != nil {
		h := lag.Behind.Hours()
		rep.LagHours = &h
	}
	return &icebergFound{reader: r, report: rep}, nil
}

// cloneReader looks at the table at loc: when its log names files inside this table (a
// shallow clone), those files are kept while it names them (its live files and its
// tombstones). nil when it names none.
func cloneReader(ctx context.Context, store storage.Store, loc string, open func(context.Context, string) (storage.Store, error)) (*vacuum.Reader, error) {
	if loc == store.Location() {
		return nil, nil
	}
	fail := func(err error) (*vacuum.Reader, error) {
		return nil, fmt.Errorf("%s: the table %s beside it (a shallow clone may name this table's files) cannot be read: %w; nothing was done", store.Location(), location.SafeURI(loc), err)
	}
	if open == nil {
		return fail(errors.New("this front end cannot open other locations"))
	}
	other, err := open(ctx, loc)
	if err != nil {
		return fail(err)
	}
	snap, err := deltalog.Load(ctx, other)
	var nt *deltalog.NotTableError
	if errors.As(err, &nt) {
		return nil, nil // not a table (any more): nothing names this one's files
	}
	if err != nil {
		return fail(err)
	}
	root, err := deltalog.RootOf(store)
	if err != nil {
		return nil, err
	}
	var keys []string
	// inside keeps the key p names in this table, with every other reading of it (a path the
	// clone names with a character writers spell two ways protects both, as this table's log
	// does).
	inside := func(p, k string) {
		keys = append(keys, k)
		keys = append(keys, root.OtherReadings(p, k)...)
	}
	err = snap.Files(ctx, other, func(f deltalog.File) error {
		if strings.Contains(f.LogPath, ":") { // absolute: a relative path names a file of the clone itself
			k, in, err := root.Key(f.LogPath)
			if err != nil {
				return err
			}
			if in {
				inside(f.LogPath, k)
			}
		}
		// SHALLOW CLONE writes the deletion vectors of the files it takes as absolute ("p")
		// vectors naming this table's files.
		if dv := f.DeletionVector; dv != nil && dv.StorageType == "p" {
			k, in, err := root.DVKey(dv)
			if err != nil {
				return err
			}
			if in {
				inside(dv.PathOrInlineDv, k)
			}
		}
		return nil
	})
	if err != nil {
		return fail(err)
	}
	if len(keys) == 0 {
		return nil, nil
	}
	return &vacuum.Reader{Kind: vacuum.ReaderClone, Name: loc, Files: func(_ context.Context, fn func(string) error) error {
		for _, k := range keys {
			if err := fn(k); err != nil {
				return err
			}
		}
		return nil
	}}, nil
}
