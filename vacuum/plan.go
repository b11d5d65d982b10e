package vacuum

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"strings"
	"time"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage"
)

// Mode is the kind of VACUUM.
type Mode string

// The modes.
const (
	ModeFull Mode = "FULL"
	// ModeLite takes its candidates from the log instead of a listing (section 9).
	ModeLite Mode = "LITE"
)

// Walker lists a table the way storage.Store.Walk does; an inventory provides one.
type Walker interface {
	Walk(ctx context.Context, prefix string, fn func(storage.Object) error) error
}

// ErrCannotVacuumLite is the refusal of LITE when the log no longer reaches back to the last
// vacuum (class DELTA_CANNOT_VACUUM_LITE).
var ErrCannotVacuumLite = errors.New("[DELTA_CANNOT_VACUUM_LITE] VACUUM LITE cannot delete all eligible files as some files are not referenced by the Delta log. Please run VACUUM FULL.")

// ErrInventoryWithLite is the refusal of LITE together with an inventory.
var ErrInventoryWithLite = errors.New("Inventory option is not compatible with LITE")

// Options control a plan.
type Options struct {
	// RetainHours is RETAIN n HOURS; nil means the table's retention.
	RetainHours *float64
	// DisableRetentionCheck turns off the safety check that refuses a retention shorter than
	// the table's (spark.databricks.delta.retentionDurationCheck.enabled = false).
	DisableRetentionCheck bool
	// Now is the clock; the zero time means time.Now(), read once per plan.
	Now time.Time
	// Mode is FULL (the default, also for "") or LITE.
	Mode Mode
	// Inventory, when set, replaces the listing of the table (USING INVENTORY).
	Inventory Walker
	// Counters, when set, receive live counts for progress displays.
	Counters *Counters
	// Listing, when set, replaces the store's listing in FULL mode (a listing that also
	// feeds an inspection); the plan's Source stays "listing".
	Listing Walker
	// Observe, when set, is called with the planner's verdict on every entry the listing
	// (or inventory) gives it, in listing order; see Verdict. It must not retain more than
	// it needs: it is called once per listed entry.
	Observe func(Verdict)
	// ObserveLog has LITE, which lists nothing, tell Observe of the files the log names
	// instead: each file and deletion vector the snapshot protects, once, with the size the
	// log records and no modification time, then each candidate of the commits LITE reads,
	// once, with its verdict. Without it an observer of LITE is told nothing. FULL ignores it.
	ObserveLog bool
	// Shard, when set, plans only the top-level entries of the table that ShardOf assigns to
	// it (shard.go); it needs Version.
	Shard *Shard
	// Version, when set, plans on that snapshot version instead of the latest; the executor's
	// re-check still reads every commit after it before deleting.
	Version *int64
	// FilesInMemory is how many of the plan's files stay in memory; the rest is written to a
	// temporary file (FileList). 0 is DefaultFilesInMemory; negative keeps them all in memory.
	FilesInMemory int
	// SpillDir is the folder of that temporary file; "" is os.TempDir() ($TMPDIR).
	SpillDir string
	// Readers are the table's readers (section 15; rules_readers.go): what each still needs
	// is kept, whatever its age. Package run finds them (pins, registered streaming queries,
	// Iceberg metadata, shallow clones).
	Readers []Reader
}

// File is one file the plan deletes.
type File struct {
	// Path is relative to the table root, '/'-separated and raw.
	Path string `json:"path"`
	Size int64  `json:"size"`
	// ModificationTime is from the listing; LITE, which lists nothing, leaves it zero (omitted).
	ModificationTime time.Time `json:"modificationTime,omitzero"`
	Reason           Reason    `json:"reason"`
	// Checksum is the Hadoop checksum companion (.<name>.crc) deleted with the file, and
	// ChecksumSize its size as listed (0 when unknown).
	Checksum     string `json:"checksumFile,omitempty"`
	ChecksumSize int64  `json:"checksumFileSize,omitempty"`
	// Version is the object's version as listed (storage.Object.Version; GCS: the
	// generation), on stores that delete on the condition that it is unchanged: an object
	// written again since the listing is kept (DropChanged). Empty: deleted unconditionally.
	Version string `json:"-"`

	// eligible is when the file started to count as old: the newest of its modification time
	// and the deletion times of the tombstones that name it (LITE: of its removes; a cdc
	// file: its commit's time). A retention raised during the run keeps the files whose
	// eligible time is at or after the new cutoff; zero (unknown) keeps the file then.
	eligible since
}

// Dir is one directory the plan deletes.
type Dir struct {
	// Path is relative to the table root, '/'-separated, without a trailing '/'.
	Path string `json:"path"`

	// eligible is the directory's listed modification time (see File.eligible).
	eligible since
}

// Plan is what a VACUUM run deletes. It is a value: it can be printed, compared and executed
// once. A DRY RUN is the plan.
type Plan struct {
	Table   string `json:"table"`
	Version int64  `json:"version"`
	Mode    Mode   `json:"mode"`
	// RetentionHours is the retention of this run, in whole hours.
	RetentionHours float64 `json:"retentionHours"`
	// TableRetentionHours is the table's delta.deletedFileRetentionDuration in hours.
	TableRetentionHours float64 `json:"tableRetentionHours"`
	// RetentionSpecified is true when RETAIN was given.
	RetentionSpecified    bool      `json:"retentionSpecified"`
	RetentionCheckEnabled bool      `json:"retentionCheckEnabled"`
	Cutoff                time.Time `json:"cutoff"`
	Files                 FileList  `json:"files"`
	Dirs                  []Dir     `json:"directories"`
	// NumFilesToDelete and SizeOfDataToDelete total Files (checksum companions excluded, as
	// the reference counts them); NumChecksumFiles and SizeOfChecksumFiles total the
	// companions deleted with them.
	NumFilesToDelete    int64 `json:"numFilesToDelete"`
	SizeOfDataToDelete  int64 `json:"sizeOfDataToDelete"`
	NumChecksumFiles    int64 `json:"numChecksumFilesToDelete"`
	SizeOfChecksumFiles int64 `json:"sizeOfChecksumFilesToDelete"`
	// TotalDirectories counts the directories listed, the root included, as the reference
	// reports it.
	TotalDirectories int64 `json:"totalDirectories"`
	// Listed counts the visible files listed.
	Listed int64 `json:"filesListed"`
	// Protected counts the distinct keys the snapshot protects (files and DV files).
	Protected int64 `json:"protectedFiles"`
	// Source is what the candidates came from: "listing", "inventory" or "log" (LITE).
	Source string `json:"source"`
	// EligibleStartVersion and EligibleEndVersion are the commits a LITE run read.
	EligibleStartVersion *int64 `json:"eligibleStartVersion,omitempty"`
	EligibleEndVersion   *int64 `json:"eligibleEndVersion,omitempty"`
	// LatestCommitOutsideRetention is the newest commit at or before the cutoff: a completed
	// run records it in _delta_log/_last_vacuum_info for later LITE runs.
	LatestCommitOutsideRetention *int64 `json:"latestCommitVersionOutsideOfRetentionWindow,omitempty"`
	// NestedTables are folders inside the table that hold a _delta_log of their own: other
	// Delta tables, which VACUUM of this one never descends into [safer].
	NestedTables []string `json:"nestedTables,omitempty"`
	// Trash is the hidden folder a real run moves the files into instead of deleting them
	// (set by the caller that runs the plan; "" deletes them). It is in the Digest: a plan
	// previewed to be moved is not run as one that deletes, nor the other way round.
	Trash string `json:"trash,omitempty"`
	// Shard is the part of the table this plan covers (Options.Shard); nil: all of it.
	Shard *Shard `json:"shard,omitempty"`
	// Readers are the readers the plan honoured, each with what it keeps that nothing else
	// would (rules_readers.go); KeptForReaders every file they keep that the plan would
	// otherwise delete, with the readers that keep it.
	Readers        []ReaderKept `json:"readers"`
	KeptForReaders []KeptFile   `json:"keptForReaders"`

	// now is the clock of the plan; run and table are the retentions as durations (the hours
	// above are rounded for display). The executor's re-check needs them exactly.
	now        time.Time
	run, table time.Duration
}

// Close releases the temporary file of a plan whose files spilled (FileList); a Result's plan
// shares it. It may be called more than once.
func (p *Plan) Close() error { return p.Files.Close() }

// Planner holds what a plan is computed from; NewPlanner reads the snapshot and applies every
// refusal, before anything outside _delta_log/ is listed.
type Planner struct {
	store  storage.Store
	snap   *deltalog.Snapshot
	opts   Options
	now    time.Time
	run    time.Duration
	table  time.Duration
	cutoff time.Time
	hidden hiddenRule
	seed   maphash.Seed
	keep   hashList // protected files: live, unexpired tombstones, their DV files
	// keepFolded: the folded forms of protected keys that differ from them (rules_fold.go)
	keepFolded foldedKeys
	keepDir    keySet      // ancestors of protected files
	expired    tombList    // files named by expired tombstones, with the newest deletion time
	why        whyList     // why each protected key is protected; only with Options.Observe
	readers    *readerKeys // what the readers keep (rules_readers.go); nil without readers
	logFiles   *logFiles   // the snapshot's files for an observer of LITE (Options.ObserveLog)
}

// NewPlanner loads the latest snapshot of the table in store and checks everything that can
// refuse the run: not a Delta table, log gaps and corruption, unsupported features, invalid
// paths, the retention and its safety check.
func NewPlanner(ctx context.Context, store storage.Store, opts Options) (*Planner, error) {
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("table %s: %w", store.Location(), err)
	}
	snap, err := loadSnapshot(ctx, store, opts.Version)
	if err != nil {
		return nil, err
	}
	return NewPlannerFor(ctx, store, snap, opts)
}

// LoadSnapshot reads the snapshot a run of opts plans from: the latest, or the version a
// sharded run is pinned to (refused when the log no longer reaches it, or does not yet).
func LoadSnapshot(ctx context.Context, store storage.Store, opts Options) (*deltalog.Snapshot, error) {
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("table %s: %w", store.Location(), err)
	}
	return loadSnapshot(ctx, store, opts.Version)
}

// Check refuses a run of opts on snap for what snap alone decides, before anything is listed:
// the version a sharded run is pinned to, the table's features (deltalog.Snapshot.CheckVacuum)
// and the retention with its safety check. A run checks it before it takes the table's lock
// (package run), so that such a refusal writes nothing; the planner checks it again on the
// snapshot it plans from.
func Check(snap *deltalog.Snapshot, opts Options) error {
	if err := opts.Validate(); err != nil {
		return fmt.Errorf("table %s: %w", snap.Location, err)
	}
	if opts.Version != nil && *opts.Version != snap.Version {
		return fmt.Errorf("table %s: the snapshot given is version %d, the run is pinned to version %d", snap.Location, snap.Version, *opts.Version)
	}
	if err := snap.CheckVacuum(); err != nil {
		return err
	}
	_, _, err := retention(snap, opts)
	return err
}

// NewPlannerFor is NewPlanner for a snapshot already loaded.
func NewPlannerFor(ctx context.Context, store storage.Store, snap *deltalog.Snapshot, opts Options) (*Planner, error) {
	if err := Check(snap, opts); err != nil {
		return nil, err
	}
	if opts.Mode == "" {
		opts.Mode = ModeFull
	}
	p := &Planner{store: store, snap: snap, opts: opts, now: opts.Now, seed: maphash.MakeSeed()}
	if p.now.IsZero() {
		p.now = time.Now()
	}
	var err error
	p.run, p.table, err = retention(snap, opts)
	if err != nil {
		return nil, err
	}
	p.cutoff = p.now.Add(-p.run)
	p.hidden = hiddenRuleOf(snap)
	if opts.Mode == ModeLite && opts.Observe != nil && opts.ObserveLog {
		p.logFiles = &logFiles{noted: newKeySet()}
	}
	opts.Counters.SetPhase("reading the log")
	if err := p.protect(ctx); err != nil {
		return nil, err
	}
	if err := p.protectReaders(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

// Snapshot returns the snapshot the plan is made from.
func (p *Planner) Snapshot() *deltalog.Snapshot { return p.snap }

// Cutoff returns the cutoff of the run.
func (p *Planner) Cutoff() time.Time { return p.cutoff }

func (p *Planner) hash(key string) uint64 { return maphash.String(p.seed, key) }

// dirState tracks one directory of the walk, to find those that are or become empty.
type dirState struct {
	key      string
	modTime  time.Time
	children int64 // entries of any kind, hidden ones included
	removed  int64 // entries this run deletes
	// files and size are the plan's count of files and their bytes when the walk entered the
	// directory (crcs and crcSize, of their checksum companions): a nested table found in it
	// takes back what was planned since.
	files         int
	size          int64
	crcs, crcSize int64
	// Checksum companions and candidates meet in either order within a directory:
	crcSeen  map[uint64]int64 // hash of a .X.crc key not yet matched -> its size
	candWait map[uint64]int   // hash of a candidate's companion key -> index in Files
}

// Plan lists the table (or reads its log, in LITE; or its inventory) and returns the plan.
// It deletes nothing.
func (p *Planner) Plan(ctx context.Context) (*Plan, error) {
	plan := p.newPlan()
	times, err := p.snap.CommitTimestamps(ctx, p.store)
	if err != nil {
		return nil, err
	}
	var last *int64
	for _, c := range times {
		if !c.Timestamp.After(p.cutoff) {
			v := c.Version
			last = &v
		}
	}
	plan.LatestCommitOutsideRetention = last
	if p.opts.Mode == ModeLite {
		p.opts.Counters.SetPhase("reading the log")
		return p.planLite(ctx, plan, times)
	}
	p.opts.Counters.SetPhase("listing")
	walker := p.listingOf()
	plan.Source = "listing"
	if p.opts.Inventory == nil {
		return p.planListing(ctx, plan, p.shardWalk(walker, true))
	}
	plan.Source = "inventory"
	plan, err = p.planListing(ctx, plan, p.shardWalk(p.opts.Inventory, false))
	if err != nil {
		return nil, err
	}
	p.opts.Counters.SetPhase("looking for nested tables")
	if err := p.takeBackNested(ctx, plan); err != nil {
		_ = plan.Close()
		return nil, err
	}
	return plan, nil
}

// EmptyPlan is the plan that deletes nothing on the terms of this planner (table, version,
// mode, retention, cutoff; its source is the log in LITE): what an inspection reports, with
// the refusal, for a table VACUUM LITE refuses after reading its log (ErrCannotVacuumLite).
func (p *Planner) EmptyPlan() *Plan {
	plan := p.newPlan()
	if p.opts.Mode == ModeLite {
		plan.Source = "log"
	}
	return plan
}

func (p *Planner) newPlan() *Plan {
	return &Plan{
		Table:                 p.snap.Location,
		Version:               p.snap.Version,
		Mode:                  p.opts.Mode,
		RetentionHours:        p.run.Hours(),
		TableRetentionHours:   p.table.Hours(),
		RetentionSpecified:    p.opts.RetainHours != nil,
		RetentionCheckEnabled: !p.opts.DisableRetentionCheck,
		Cutoff:                p.cutoff.UTC(),
		Files:                 newSpillingList(p.opts.FilesInMemory, p.opts.SpillDir, p.snap.Location),
		Dirs:                  []Dir{},
		TotalDirectories:      1,
		Protected:             int64(p.keep.len()),
		Shard:                 p.opts.Shard,
		Readers:               p.readerSummaries(),
		KeptForReaders:        []KeptFile{},
		now:                   p.now,
		run:                   p.run,
		table:                 p.table,
	}
}

// planListing decides from a listing (or an inventory laid out as one), as FULL does: each
// entry is classified once (classify); the walk keeps the folders it is in, to delete those
// left empty, the pairs of checksum companions, and the counters.
func (p *Planner) planListing(ctx context.Context, plan *Plan, walker Walker) (*Plan, error) {
	stack := []*dirState{{key: ""}} // the root is never deleted
	nested := ""                    // the folder of a nested table being skipped
	pop := func() {
		d := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if d.key == nested {
			nested = ""
			return // another table: never deleted
		}
		if p.dirDeletable(d) {
			plan.Dirs = append(plan.Dirs, Dir{Path: strings.TrimSuffix(d.key, "/"), eligible: sinceOf(d.modTime)})
			stack[len(stack)-1].removed++
		}
	}
	counters := p.opts.Counters
	err := walker.Walk(ctx, "", func(o storage.Object) error {
		if counters != nil {
			counters.Listed.Add(1)
		}
		for len(stack) > 1 && !strings.HasPrefix(o.Key, stack[len(stack)-1].key) {
			pop()
		}
		parent := stack[len(stack)-1]
		parent.children++
		d, err := p.classify(o, parent.key, nested)
		if err != nil {
			return err
		}
		if d.describe {
			var gone bool
			if o, gone, err = p.describe(ctx, o); err != nil || gone {
				return err // one gone meanwhile still counts in its folder, which stays
			}
			if d, err = p.classify(o, parent.key, nested); err != nil {
				return err
			}
		}
		switch d.rule {
		case RuleNestedTable:
			if d.nestedLog {
				nested = parent.key
				if err := p.takeBackFolder(plan, parent); err != nil {
					return err
				}
				p.observe(storage.Object{Key: nested, IsDir: true}, 0, -1, RuleNestedTable, "")
			}
			p.observe(o, 0, -1, RuleNestedTable, "")
			return skipDir(o)
		case RuleHidden:
			p.observe(o, 0, -1, RuleHidden, "")
			if d.companion {
				size := o.Size
				if o.NoStat {
					size = -1 // told only if it pairs with a file the run deletes
				}
				if i, ok := parent.companionListed(p.hash(o.Key), size); ok {
					size = p.companionSize(ctx, o.Key, size)
					plan.Files.setChecksum(i, o.Key, size)
					plan.NumChecksumFiles++
					plan.SizeOfChecksumFiles += size
					parent.removed++
				}
			}
			return skipDir(o)
		case RuleDirectory:
			p.observe(o, 0, -1, RuleDirectory, "")
			plan.TotalDirectories++
			stack = append(stack, &dirState{key: o.Key, modTime: o.ModTime, files: plan.Files.Len(), size: plan.SizeOfDataToDelete,
				crcs: plan.NumChecksumFiles, crcSize: plan.SizeOfChecksumFiles})
			return nil
		case RuleRead:
			if o.IsDir {
				p.observeRead(o, d.readers, "")
				return storage.SkipDir // a reader's folder, kept whole
			}
		}
		plan.Listed++
		if d.rule == RuleRead {
			p.keepForReaders(plan, o, d.reason, d.readers)
			return nil
		}
		if d.rule != RuleUnreferenced {
			p.observe(o, d.h, d.kept, d.rule, "")
			return nil
		}
		f := File{Path: o.Key, Size: o.Size, ModificationTime: o.ModTime.UTC(), Reason: d.reason, Version: o.Version, eligible: p.eligible(d.h, o.ModTime)}
		p.observe(o, d.h, -1, d.rule, f.Reason)
		parent.removed++
		if crc := checksumCompanion(o.Key); parent.candidatePlanned(p.hash(crc), plan.Files.Len(), &f.ChecksumSize) {
			f.Checksum, f.ChecksumSize = crc, p.companionSize(ctx, crc, f.ChecksumSize)
			plan.NumChecksumFiles++
			plan.SizeOfChecksumFiles += f.ChecksumSize
			parent.removed++
		}
		if err := plan.Files.Append(f); err != nil {
			return spillError{err}
		}
		plan.NumFilesToDelete++
		plan.SizeOfDataToDelete += o.Size
		if counters != nil {
			counters.Candidates.Add(1)
		}
		return nil
	})
	var linkErr *LinkIntoTableError
	if errors.As(err, &linkErr) {
		_ = plan.Close()
		return nil, linkErr
	}
	var spillErr spillError
	if errors.As(err, &spillErr) {
		_ = plan.Close()
		return nil, spillErr.err
	}
	if err != nil {
		_ = plan.Close()
		return nil, fmt.Errorf("listing table %s: %w; nothing was deleted", p.snap.Location, err)
	}
	for len(stack) > 1 {
		pop()
	}
	return plan, nil
}

// skipDir is what the walk returns for an entry it does not descend into.
func skipDir(o storage.Object) error {
	if o.IsDir {
		return storage.SkipDir
	}
	return nil
}

// takeBackFolder takes back what the walk planned in folder d since it entered it (the files
// and the directories below it): d holds another table.
func (p *Planner) takeBackFolder(plan *Plan, d *dirState) error {
	plan.NestedTables = append(plan.NestedTables, strings.TrimSuffix(d.key, "/"))
	taken := int64(plan.Files.Len() - d.files)
	if err := plan.Files.truncate(d.files); err != nil {
		return spillError{err}
	}
	plan.NumFilesToDelete -= taken
	plan.SizeOfDataToDelete = d.size
	plan.NumChecksumFiles, plan.SizeOfChecksumFiles = d.crcs, d.crcSize
	d.candWait = nil
	if c := p.opts.Counters; c != nil {
		c.Candidates.Add(-taken)
	}
	for n := len(plan.Dirs); n > 0 && strings.HasPrefix(plan.Dirs[n-1].Path+"/", d.key); n = len(plan.Dirs) {
		plan.Dirs = plan.Dirs[:n-1]
	}
	return nil
}

// spillError carries an error of the plan's temporary file through a walk, which names the
// table itself.
type spillError struct{ err error }

func (e spillError) Error() string { return e.err.Error() }
func (e spillError) Unwrap() error { return e.err }
