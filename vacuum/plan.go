package vacuum

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	mbits "math/bits"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage"
)

// Reason says why a file is deleted.
type Reason string

// The reasons a file is deleted.
const (
	// ReasonTombstone: named by a remove whose deletionTimestamp is before the cutoff.
	ReasonTombstone Reason = "tombstone"
	// ReasonChangeData: a change-data file under _change_data/.
	ReasonChangeData Reason = "change_data"
	// ReasonDeletionVector: a deletion_vector_*.bin file that no action names.
	ReasonDeletionVector Reason = "deletion_vector"
	// ReasonUntracked: a file no action names.
	ReasonUntracked Reason = "untracked"
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

// RetentionCheckKey is the session setting that turns the retention safety check off.
const RetentionCheckKey = "spark.databricks.delta.retentionDurationCheck.enabled"

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
}

// File is one file the plan deletes.
type File struct {
	// Path is relative to the table root, '/'-separated and raw.
	Path string `json:"path"`
	Size int64  `json:"size"`
	// ModificationTime is from the listing; LITE, which lists nothing, leaves it zero (omitted).
	ModificationTime time.Time `json:"modificationTime,omitzero"`
	Reason           Reason    `json:"reason"`
	// Checksum is the Hadoop checksum companion (.<name>.crc) deleted with the file.
	Checksum string `json:"checksumFile,omitempty"`
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
	// NumFilesToDelete and SizeOfDataToDelete total Files (checksum companions excluded).
	NumFilesToDelete   int64 `json:"numFilesToDelete"`
	SizeOfDataToDelete int64 `json:"sizeOfDataToDelete"`
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

	// now is the clock of the plan; run and table are the retentions as durations (the hours
	// above are rounded for display). The executor's re-check needs them exactly.
	now        time.Time
	run, table time.Duration
}

// Close releases the temporary file of a plan whose files spilled (FileList); a Result's plan
// shares it. It may be called more than once.
func (p *Plan) Close() error { return p.Files.Close() }

// RetentionError is the refusal of the retention safety check.
type RetentionError struct {
	Table          string
	RetentionHours float64
	TableHours     float64
}

func (e *RetentionError) Error() string {
	return fmt.Sprintf("table %s: refusing to vacuum with a retention of %g hours, shorter than the table's retention of %g hours (delta.deletedFileRetentionDuration). "+
		"If writers are still writing to this table, files they are about to commit could be deleted and the table corrupted. "+
		"If you are certain no operation (insert, upsert, delete, optimize) is running on this table, turn the check off by setting:\n"+
		"%s = false\nIf you are not sure, use a retention of at least %d hours.",
		e.Table, e.RetentionHours, e.TableHours, RetentionCheckKey, int64(math.Ceil(e.TableHours)))
}

// LinkIntoTableError is the refusal of a table whose live files have two names: a symbolic
// link inside it, through which the log names live files, points to another place inside it.
type LinkIntoTableError struct {
	Table, Link string
}

func (e *LinkIntoTableError) Error() string {
	return fmt.Sprintf("table %s: %s is a symbolic link to a folder inside the table, and the log names live files through it: "+
		"a listing that never follows links sees those files a second time under their real names, where no action names them. "+
		"Nothing was deleted. Replace the link with the folder it points to (or rewrite the table), then vacuum again", e.Table, e.Link)
}

// ErrNegativeRetention is the refusal of RETAIN with a negative number of hours.
var ErrNegativeRetention = errors.New("Retention period for Vacuum can't be less than 0 hours.")

// CheckRetention applies to a run of snap with opts what NewPlanner applies to its retention
// (opts.RetainHours, opts.DisableRetentionCheck), reading nothing: the refusal a run at that
// retention would end with (a *RetentionError for the safety check, ErrNegativeRetention), for
// a caller that must refuse it before it accepts the run (the service's one-off retentions).
func CheckRetention(snap *deltalog.Snapshot, opts Options) error {
	_, _, err := retention(snap, opts)
	return err
}

// retention resolves the retention of a run and applies the safety check.
func retention(snap *deltalog.Snapshot, opts Options) (run, table time.Duration, err error) {
	table, err = snap.DeletedFileRetention()
	if err != nil {
		return 0, 0, err
	}
	if opts.RetainHours == nil {
		return table, table, nil
	}
	h := *opts.RetainHours
	if math.IsNaN(h) {
		return 0, 0, fmt.Errorf("table %s: the retention is not a number (NaN); give RETAIN n HOURS (--retain-hours n) with n a number of hours, 0 or more", snap.Location)
	}
	if h < 0 {
		return 0, 0, fmt.Errorf("table %s: %w", snap.Location, ErrNegativeRetention)
	}
	if math.IsInf(h, 1) || h > float64(math.MaxInt64/int64(time.Hour)) {
		return 0, 0, fmt.Errorf("table %s: retention of %g hours is too large", snap.Location, h)
	}
	// Rounded half up to whole hours, as the reference did.
	run = time.Duration(math.Floor(h+0.5)) * time.Hour
	if !opts.DisableRetentionCheck && run < table {
		return 0, 0, &RetentionError{Table: snap.Location, RetentionHours: run.Hours(), TableHours: table.Hours()}
	}
	return run, table, nil
}

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
	// keepFolded: the folded forms of protected keys that differ from them (fold.go)
	keepFolded foldedKeys
	keepDir    keySet   // ancestors of protected files
	expired    tombList // files named by expired tombstones, with the newest deletion time
	why        whyList  // why each protected key is protected; only with Options.Observe
}

// NewPlanner loads the latest snapshot of the table in store and checks everything that can
// refuse the run: not a Delta table, log gaps and corruption, unsupported features, invalid
// paths, the retention and its safety check.
func NewPlanner(ctx context.Context, store storage.Store, opts Options) (*Planner, error) {
	if err := checkShard(opts); err != nil {
		return nil, fmt.Errorf("table %s: %w", store.Location(), err)
	}
	snap, err := loadSnapshot(ctx, store, opts.Version)
	if err != nil {
		return nil, err
	}
	return NewPlannerFor(ctx, store, snap, opts)
}

// NewPlannerFor is NewPlanner for a snapshot already loaded.
func NewPlannerFor(ctx context.Context, store storage.Store, snap *deltalog.Snapshot, opts Options) (*Planner, error) {
	if err := checkShard(opts); err != nil {
		return nil, fmt.Errorf("table %s: %w", snap.Location, err)
	}
	if opts.Version != nil && *opts.Version != snap.Version {
		return nil, fmt.Errorf("table %s: the snapshot given is version %d, the run is pinned to version %d", snap.Location, snap.Version, *opts.Version)
	}
	if err := snap.CheckVacuum(); err != nil {
		return nil, err
	}
	switch opts.Mode {
	case "":
		opts.Mode = ModeFull
	case ModeFull, ModeLite:
	default:
		return nil, fmt.Errorf("unknown VACUUM mode %q (FULL or LITE)", opts.Mode)
	}
	if opts.Mode == ModeLite && opts.Inventory != nil {
		return nil, ErrInventoryWithLite
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
	opts.Counters.SetPhase("reading the log")
	if err := p.protect(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(strings.TrimSpace(x), s) {
			return true
		}
	}
	return false
}

// Snapshot returns the snapshot the plan is made from.
func (p *Planner) Snapshot() *deltalog.Snapshot { return p.snap }

// Cutoff returns the cutoff of the run.
func (p *Planner) Cutoff() time.Time { return p.cutoff }

func (p *Planner) hash(key string) uint64 { return maphash.String(p.seed, key) }

// protect streams the snapshot's file actions into the protected sets. Every path is decoded
// here, so a bad log path refuses the run before anything is listed.
func (p *Planner) protect(ctx context.Context) error {
	p.keepDir = newKeySet()
	cutoffMs := p.cutoff.UnixMilli()
	err := p.snap.Files(ctx, p.store, func(f deltalog.File) error {
		live := !f.Removed || f.DeletionTimestamp >= cutoffMs
		mark := func(key string) {
			if key == "" || !p.opts.Shard.Owns(key) {
				return // another shard's: never listed here (shard.go)
			}
			if !live {
				p.expired.add(p.hash(key), f.DeletionTimestamp)
				return
			}
			h := p.hash(key)
			if p.opts.Observe != nil {
				kind := protectLive
				if f.Removed {
					kind = protectRetained
				}
				if key == f.DVKey && key != f.Key {
					kind++ // the DV variant of either
				}
				p.why.add(h, kind, f.DeletionTimestamp) // and keep is made from it (seal)
			} else {
				p.keep.add(h)
			}
			p.protectFolded(key)
			p.protectAncestors(key)
		}
		mark(f.Key)
		mark(f.DVKey)
		for _, key := range f.OtherKeys {
			mark(key)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if p.opts.Observe != nil {
		p.keep = p.why.seal()
	} else {
		p.keep.seal()
	}
	p.keepFolded.seal()
	p.expired.seal()
	return nil
}

func (p *Planner) protectAncestors(key string) {
	for i := strings.LastIndexByte(key, '/'); i > 0; i = strings.LastIndexByte(key[:i], '/') {
		if !p.keepDir.add(p.hash(key[:i+1])) {
			return // this ancestor, and so all above it, already protected
		}
	}
}

// dirState tracks one directory of the walk, to find those that are or become empty.
type dirState struct {
	key      string
	modTime  time.Time
	children int64 // entries of any kind, hidden ones included
	removed  int64 // entries this run deletes
	// files and size are the plan's count of files and their bytes when the walk entered the
	// directory: a nested table found in it takes back what was planned since.
	files int
	size  int64
	// Checksum companions and candidates meet in either order within a directory:
	crcSeen  map[uint64]struct{} // hash of a .X.crc key not yet matched
	candWait map[uint64]int      // hash of a candidate's companion key -> index in Files
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
		now:                   p.now,
		run:                   p.run,
		table:                 p.table,
	}
}

// eligible is the time from which a file whose key hashes to h counts as old, given its
// modification time (zero in LITE): the newest of that and the deletion times of the expired
// tombstones that name it.
func (p *Planner) eligible(h uint64, modTime time.Time) since {
	s := sinceOf(modTime)
	if ts, ok := p.expired.newest(h); ok {
		return max(s, sinceOf(time.UnixMilli(ts)))
	}
	return s
}

// protected reports whether the log protects key itself, in this spelling or a folded one.
func (p *Planner) protected(key string) bool {
	return p.keep.has(p.hash(key)) || p.keptByFold(key)
}

// since is a time as Unix nanoseconds, 8 bytes where a time.Time takes 24 (a plan holds one
// per candidate); 0 is unknown.
type since int64

func sinceOf(t time.Time) since {
	if t.IsZero() {
		return 0
	}
	return since(t.UnixNano())
}

// youngAt reports whether the time is not before cutoff, or unknown: a file so eligible is
// kept when the cutoff moves back to it.
func (s since) youngAt(cutoff time.Time) bool { return s == 0 || int64(s) >= cutoff.UnixNano() }

// planListing decides from a listing (or an inventory laid out as one), as FULL does.
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
		parent := stack[len(stack)-1]
		empty := d.children == d.removed
		// A directory whose own name the log protects as a file is not deleted either (an
		// inventory row that calls a live file a directory).
		if empty && !p.keepDir.has(p.hash(d.key)) && !p.protected(strings.TrimSuffix(d.key, "/")) && (d.children > 0 || d.modTime.Before(p.cutoff)) {
			plan.Dirs = append(plan.Dirs, Dir{Path: strings.TrimSuffix(d.key, "/"), eligible: sinceOf(d.modTime)})
			parent.removed++
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
		if nested != "" && strings.HasPrefix(o.Key, nested) {
			p.observe(o, 0, -1, RuleNestedTable, "")
			if o.IsDir {
				return storage.SkipDir
			}
			return nil
		}
		name := o.Name()
		if p.hidden.hidden(name) {
			if name == "_delta_log" && parent.key != "" {
				// A folder with a _delta_log of its own (a directory, or a link to one) is
				// another Delta table (saved into this one by mistake): its files are live in
				// it. Take back what was planned in it already (names sorting before
				// "_delta_log") and skip the rest.
				nested = parent.key
				plan.NestedTables = append(plan.NestedTables, strings.TrimSuffix(nested, "/"))
				p.observe(storage.Object{Key: nested, IsDir: true}, 0, -1, RuleNestedTable, "")
				p.observe(o, 0, -1, RuleNestedTable, "")
				// Everything planned since the walk entered the folder is in it.
				taken := int64(plan.Files.Len() - parent.files)
				if err := plan.Files.truncate(parent.files); err != nil {
					return spillError{err}
				}
				plan.NumFilesToDelete -= taken
				plan.SizeOfDataToDelete = parent.size
				parent.candWait = nil
				if counters != nil {
					counters.Candidates.Add(-taken)
				}
				for n := len(plan.Dirs); n > 0 && strings.HasPrefix(plan.Dirs[n-1].Path+"/", nested); n = len(plan.Dirs) {
					plan.Dirs = plan.Dirs[:n-1]
				}
				if o.IsDir {
					return storage.SkipDir
				}
				return nil
			}
			if err := p.checkLinkInto(o); err != nil {
				return err
			}
			p.observe(o, 0, -1, RuleHidden, "")
			if o.IsDir {
				return storage.SkipDir
			}
			if _, ok := checksumOf(name); ok && !p.protected(o.Key) {
				// A companion the log itself names (an add of ".f.parquet.crc") is live.
				h := p.hash(o.Key)
				if i, ok := parent.candWait[h]; ok {
					plan.Files.setChecksum(i, o.Key)
					delete(parent.candWait, h)
					parent.removed++
				} else {
					if parent.crcSeen == nil {
						parent.crcSeen = map[uint64]struct{}{}
					}
					parent.crcSeen[h] = struct{}{}
				}
			}
			return nil
		}
		if o.IsDir {
			p.observe(o, 0, -1, RuleDirectory, "")
			plan.TotalDirectories++
			stack = append(stack, &dirState{key: o.Key, modTime: o.ModTime, files: plan.Files.Len(), size: plan.SizeOfDataToDelete})
			return nil
		}
		h := p.hash(o.Key)
		at, live := p.keep.find(h)
		if o.NoStat && !live {
			var gone bool
			var err error
			if o, gone, err = p.describe(ctx, o); err != nil || gone {
				return err // one gone meanwhile still counts in its folder, which stays
			}
		}
		plan.Listed++
		rule, kept, err := p.decide(o, h, at, live)
		if err != nil {
			return err
		}
		if rule != RuleUnreferenced {
			p.observe(o, h, kept, rule, "")
			return nil
		}
		f := File{Path: o.Key, Size: o.Size, ModificationTime: o.ModTime.UTC(), Reason: p.reason(o.Key, h), Version: o.Version, eligible: p.eligible(h, o.ModTime)}
		p.observe(o, h, -1, rule, f.Reason)
		parent.removed++
		crc := storage.Dir(o.Key) + "." + name + ".crc"
		ch := p.hash(crc)
		if _, ok := parent.crcSeen[ch]; ok {
			f.Checksum = crc
			delete(parent.crcSeen, ch)
			parent.removed++
		} else {
			if parent.candWait == nil {
				parent.candWait = map[uint64]int{}
			}
			parent.candWait[ch] = plan.Files.Len()
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

// spillError carries an error of the plan's temporary file through a walk, which names the
// table itself.
type spillError struct{ err error }

func (e spillError) Error() string { return e.err.Error() }
func (e spillError) Unwrap() error { return e.err }

func (p *Planner) reason(key string, h uint64) Reason {
	switch {
	case strings.HasPrefix(key, "_change_data/"):
		return ReasonChangeData
	case p.expired.has(h):
		return ReasonTombstone
	case isDeletionVectorName(storage.Base(key)):
		return ReasonDeletionVector
	}
	return ReasonUntracked
}

// keySet is a set of 64-bit key hashes. A collision can only make an unreferenced file look
// referenced, so it errs on the side of keeping; it never makes a referenced file deletable.
type keySet struct{ m map[uint64]struct{} }

func newKeySet() keySet { return keySet{m: map[uint64]struct{}{}} }

// add inserts h and reports whether it was new.
func (s keySet) add(h uint64) bool {
	if _, ok := s.m[h]; ok {
		return false
	}
	s.m[h] = struct{}{}
	return true
}

func (s keySet) has(h uint64) bool { _, ok := s.m[h]; return ok }

// hashList is a set of 64-bit key hashes built once and then only queried: sorted slices,
// 8 bytes per key (a Go map takes about 40), so that the protected set of 10 M live files
// stays near 80 MB. Collisions err on the side of keeping, as for keySet.
//
// The hashes are kept in 256 buckets by their top byte, each grown by append while the log is
// read: a bucket that outgrows its array copies 1/256 of the set, where one slice of 100 M
// hashes would hold its old 640 MB and its new 800 MB array at once. Sealed, the buckets
// laid end to end are the sorted set, and find gives a key's place in it.
//
// The hashes are uniform, so the sealed set is also cut into 2^bits finer buckets by their
// top bits (bits ≥ 8, so that each lies inside one of the 256), each about 8 hashes:
// fine[f] is the place of the first hash of fine bucket f in the whole set (half a byte per
// key). A lookup reads its fine bucket's bounds and searches those few hashes, two cache
// misses where a binary search of millions takes twenty.
type hashList struct {
	b     [hashBuckets][]uint64
	off   [hashBuckets + 1]int // off[i]: the place of b[i][0] in the whole set
	fine  []uint32
	shift uint // 64 - bits
}

const hashBuckets = 256

func bucketOf(h uint64) int { return int(h >> 56) }

func (l *hashList) add(h uint64) { i := bucketOf(h); l.b[i] = append(l.b[i], h) }

// seal sorts and deduplicates; has may be called only after it.
func (l *hashList) seal() {
	for i := range l.b {
		slices.Sort(l.b[i])
		l.b[i] = slices.Clip(slices.Compact(l.b[i]))
		l.off[i+1] = l.off[i] + len(l.b[i])
	}
	l.index()
}

// hashListOf makes a sealed list of sorted, distinct hashes, sharing s.
func hashListOf(s []uint64) hashList {
	var l hashList
	for i := range l.b {
		lo := l.off[i]
		hi := lo + sort.Search(len(s)-lo, func(j int) bool { return bucketOf(s[lo+j]) > i })
		l.b[i] = s[lo:hi:hi]
		l.off[i+1] = hi
	}
	l.index()
	return l
}

// index builds the fine buckets of the sealed set.
func (l *hashList) index() {
	l.fine = nil
	n := l.len()
	bits := uint(mbits.Len64(uint64(n) / 8))
	if bits < 8 || n > math.MaxUint32 {
		return // the 256 buckets hold a few cache lines each, or beyond uint32 places
	}
	l.shift = 64 - bits
	l.fine = make([]uint32, 1<<bits+1)
	f := 0
	for i := range l.b {
		for j, h := range l.b[i] {
			for top := int(h >> l.shift); f <= top; f++ {
				l.fine[f] = uint32(l.off[i] + j)
			}
		}
	}
	for ; f < len(l.fine); f++ {
		l.fine[f] = uint32(n)
	}
}

func (l *hashList) has(h uint64) bool {
	_, ok := l.find(h)
	return ok
}

// find returns the place of h in the sealed set (where it would go when absent).
func (l *hashList) find(h uint64) (int, bool) {
	i := bucketOf(h)
	if l.fine == nil {
		j, ok := slices.BinarySearch(l.b[i], h)
		return l.off[i] + j, ok
	}
	f := h >> l.shift
	lo, hi := int(l.fine[f])-l.off[i], int(l.fine[f+1])-l.off[i]
	j, ok := slices.BinarySearch(l.b[i][lo:hi], h)
	return l.off[i] + lo + j, ok
}

func (l *hashList) len() int { return l.off[hashBuckets] }

// tombList is a set of 64-bit key hashes with, for each, the newest deletion time (ms) of the
// expired tombstones naming it: built once, then only queried, 16 bytes per key, in buckets
// as hashList. A collision can only give a file a later deletion time than its own, which
// keeps it sooner.
type tombList struct{ b [hashBuckets][]tomb }

type tomb struct {
	h  uint64
	ts int64
}

func (l *tombList) add(h uint64, ts int64) { i := bucketOf(h); l.b[i] = append(l.b[i], tomb{h, ts}) }

// seal sorts by hash and keeps one entry per hash, with the newest time.
func (l *tombList) seal() {
	for i := range l.b {
		slices.SortFunc(l.b[i], func(a, b tomb) int {
			if a.h != b.h {
				return cmp.Compare(a.h, b.h)
			}
			return cmp.Compare(b.ts, a.ts) // newest first
		})
		l.b[i] = slices.Clip(slices.CompactFunc(l.b[i], func(a, b tomb) bool { return a.h == b.h }))
	}
}

func (l *tombList) find(h uint64) (tomb, bool) {
	s := l.b[bucketOf(h)]
	i, ok := slices.BinarySearchFunc(s, h, func(t tomb, h uint64) int { return cmp.Compare(t.h, h) })
	if !ok {
		return tomb{}, false
	}
	return s[i], true
}

func (l *tombList) has(h uint64) bool { _, ok := l.find(h); return ok }

// newest returns the newest deletion time of the tombstones naming h.
func (l *tombList) newest(h uint64) (int64, bool) {
	t, ok := l.find(h)
	return t.ts, ok
}
