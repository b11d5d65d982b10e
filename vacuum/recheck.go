package vacuum

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage"
)

// tail follows the commits made after the planned version, so that the executor never deletes
// what a newer commit references (section 13). It is read once completely after VACUUM START
// is committed (or, where the run is not recorded, just before the first delete) and then
// probed again before every batch of deletes, so that what a commit made during the run can
// still reach is one batch per worker.
type tail struct {
	store storage.Store
	root  deltalog.Root
	plan  *Plan
	next  int64 // the next version to read

	refs       map[string]int64 // keys newer commits reference -> the first version that did
	refsFolded map[string]int64 // the same keys folded (rules_fold.go)
	keepDirs   map[string]int64 // directory keys (ending in '/') above refs -> version

	// cutoff is the run's cutoff: earlier than planned once a newer metaData raised the
	// table's retention (raisedAt is then its version; -1 before).
	cutoff   time.Time
	run      time.Duration
	raisedAt int64
	// hidden is the hidden rule of the newest metaData read (hiddenAt its version; -1 when
	// no metaData was read).
	hidden   hiddenRule
	hiddenAt int64
	// read counts the commits read, for tests and messages.
	read int
	// statProbes is set once the store turned out unable to start a listing at a name.
	statProbes bool
	// fresh is set by catchUp, the look before the first batch: that batch's probe is it.
	fresh bool
	// wide is set once the old versions' files between the next version's 21-digit and
	// 20-digit names turned out to fill a page (probeListing).
	wide bool
	// startAt is the version of VACUUM START (-1: the run is not recorded); startSize, when
	// not 0, the size of the commit this run wrote there (Start.Size).
	startAt   int64
	startSize int64
}

func newTail(store storage.Store, plan *Plan) (*tail, error) {
	root, err := deltalog.RootOf(store)
	if err != nil {
		return nil, err
	}
	return &tail{store: store, root: root, plan: plan, next: plan.Version + 1,
		refs: map[string]int64{}, refsFolded: map[string]int64{}, keepDirs: map[string]int64{},
		cutoff: plan.Cutoff, run: plan.run, raisedAt: -1, hiddenAt: -1, startAt: -1}, nil
}

func (t *tail) errorf(format string, args ...any) error {
	return fmt.Errorf("re-checking the log of %s before deleting: %s; nothing more was deleted", t.plan.Table, fmt.Sprintf(format, args...))
}

// catchUp reads every commit after the planned version up to the newest, which must be at
// least atLeast (the version VACUUM START took; -1 when the run is not recorded), before the
// first delete. A gap, a log that no longer reaches the planned version or START, or a commit
// that cannot be read exactly stops the run. It is the look at the log before the first batch:
// that batch's probe is not made again.
//
// base, when not nil, is the snapshot VACUUM START was built on (version atLeast-1): when it
// is of this table and holds every commit after the plan, read by the listing START made, they
// are taken from it, and only START and what follows it are looked for. Any other snapshot is
// not trusted: the commits after the plan are listed and read.
//
// Where the store lists a directory from a name on (storage.DirLister) this is one listing of
// the log: from START's 20-digit name when base holds what came before, from the planned
// version's otherwise (probeListing). Elsewhere START is looked for directly (a Stat) and the
// commits after it probed, or, for a run that is not recorded, the log is listed whole.
func (t *tail) catchUp(ctx context.Context, atLeast int64, base *deltalog.Snapshot) error {
	t.startAt = atLeast
	held := base != nil && base.Location == t.plan.Table && atLeast >= 0 && base.Version == atLeast-1 && base.HoldsCommits(t.next)
	if held {
		if err := t.applyHeld(base, atLeast); err != nil {
			return err
		}
	}
	if err := t.catchUpOnce(ctx, atLeast, held); err != nil {
		return err
	}
	t.fresh = true
	return nil
}

func (t *tail) catchUpOnce(ctx context.Context, atLeast int64, held bool) error {
	if dl, ok := t.store.(storage.DirLister); ok && !t.statProbes {
		from := t.plan.Version
		if held {
			from = atLeast
		}
		err := t.probeListing(ctx, dl, from)
		if !errors.Is(err, errors.ErrUnsupported) {
			if err != nil {
				return err
			}
			if t.next <= atLeast {
				return t.errorf("the log lists no version %d, the VACUUM START this run committed", atLeast)
			}
			return nil
		}
		t.statProbes = true // the service cannot start a listing at a name
	}
	if held {
		return t.statStart(ctx, atLeast)
	}
	seg, err := deltalog.ListLog(ctx, t.store)
	if err != nil {
		return t.errorf("%v", err)
	}
	if seg.Version < t.plan.Version {
		return t.errorf("the latest version is %d, older than the planned %d", seg.Version, t.plan.Version)
	}
	if seg.Version < atLeast {
		return t.errorf("the log lists version %d, older than the VACUUM START this run committed (%d)", seg.Version, atLeast)
	}
	for _, c := range seg.AllCommits {
		if c.Version < t.next {
			continue
		}
		if c.Version != t.next {
			break
		}
		if err := t.readListed(ctx, c); err != nil {
			return err
		}
	}
	if t.next <= seg.Version {
		return t.errorf("version %d is missing", t.next)
	}
	return nil
}

// applyHeld takes the commits after the plan from base, the snapshot VACUUM START (version
// start) was built on. What a listing of the log refuses (a gap, a second claim on a version,
// a commit under another name) was refused when base was listed, up to its version.
func (t *tail) applyHeld(base *deltalog.Snapshot, start int64) error {
	for t.next <= base.Version {
		v := t.next
		_, protocol, metadata, ok, err := base.HeldCommitRefs(v, t.ref(v))
		if err != nil {
			return t.errorf("%v", err)
		}
		if !ok {
			return t.errorf("version %d is missing", v) // HoldsCommits said otherwise: a bug
		}
		if err := t.apply(v, protocol, metadata); err != nil {
			return err
		}
	}
	if t.next != start {
		return t.errorf("the snapshot VACUUM START was built on ends at version %d, not just before START (%d)", t.next-1, start)
	}
	return nil
}

// statStart looks for VACUUM START (version start, the next to read) under its name, and for
// its unpadded and 21-digit spellings, where the log cannot be listed from a name; then for
// what follows.
func (t *tail) statStart(ctx context.Context, start int64) error {
	key := deltalog.CommitKey(start)
	o, err := t.store.Stat(ctx, key)
	if err != nil {
		return t.errorf("the VACUUM START this run committed (version %d) cannot be read: %v", start, err)
	}
	if odd, err := t.oddSpelling(ctx, otherSpellings(start)...); err != nil {
		return err
	} else if odd != "" {
		return t.errorf("version %d is claimed by %s beside %s, the VACUUM START this run committed: stopping, since which one is the table's cannot be known", start, odd, key)
	}
	if err := t.readListed(ctx, deltalog.LogFile{Key: key, Kind: deltalog.KindCommit, Version: start, Size: o.Size, ModTime: o.ModTime}); err != nil {
		return err
	}
	return t.probeStats(ctx)
}

// maxClockLead is how far this machine's clock may run ahead of the store's before the run
// stops: the cutoff is computed from this machine's clock, the files' modification times
// come from the store.
const maxClockLead = time.Minute

// checkClock compares the plan's clock with the modification time the store gave the VACUUM
// START commit, written after planning: a clock far ahead would put the cutoff after files
// that are younger than the retention.
func (t *tail) checkClock(start deltalog.LogFile) error {
	if start.ModTime.IsZero() {
		return nil
	}
	if lead := t.plan.now.Sub(start.ModTime); lead > maxClockLead {
		return fmt.Errorf("vacuum of %s stopped before deleting: this machine's clock is %v ahead of the store's (VACUUM START, written after planning, has the modification time %s; the plan's clock read %s), so the cutoff would reach files younger than the retention. Fix the clock (NTP) and run again; nothing was deleted",
			t.plan.Table, lead.Round(time.Second), start.ModTime.UTC().Format(time.RFC3339), t.plan.now.UTC().Format(time.RFC3339))
	}
	return nil
}

// probe reads the commits that appeared after the last one read, before a batch of deletes:
// where the store lists a directory from a name on (storage.DirLister: the object stores) one
// listing of the log from the next version's 20-digit name on (probeListing); elsewhere the
// next version's file looked for directly (a Stat), then its unpadded spelling (probeStats).
// Right after catchUp, which looked already, it looks again only for the batches after the
// first.
func (t *tail) probe(ctx context.Context) error {
	if t.fresh {
		t.fresh = false
		return nil
	}
	if dl, ok := t.store.(storage.DirLister); ok && !t.statProbes {
		err := t.probeListing(ctx, dl, t.next)
		if !errors.Is(err, errors.ErrUnsupported) {
			return err
		}
		t.statProbes = true // the service cannot start a listing at a name
	}
	return t.probeStats(ctx)
}

// probeStats is probe without a listing: the next version's commit is looked for under its
// 20-digit name, and read while it is there; then under its unpadded and 21-digit names
// (7.json, 000000000000000000007.json), which Spark's log listing reads as the version and
// the log reader refuses: a commit there stops the run. (Other counts of leading zeros are
// not looked for: the window of docs/design.md.)
func (t *tail) probeStats(ctx context.Context) error {
	for {
		key := deltalog.CommitKey(t.next)
		o, err := t.store.Stat(ctx, key)
		if errors.Is(err, storage.ErrNotExist) {
			return t.refuseOddSpelling(ctx, otherSpellings(t.next)...)
		}
		if err != nil {
			return t.errorf("%v", err)
		}
		if o.IsDir || o.IsLink {
			return t.errorf("%s is not a commit file", key)
		}
		lf := deltalog.LogFile{Key: key, Kind: deltalog.KindCommit, Version: t.next, Size: o.Size, ModTime: o.ModTime}
		if err := t.readListed(ctx, lf); err != nil {
			return err
		}
	}
}

// probeListing reads, in one listing of the log (at most t.next; a page more when one does
// not reach the end of the commits), the commits after the last one read. The listing starts
// at the 21-digit name of version from (000000000000000000007), which sorts before its
// 20-digit name: byte order puts there the 21-digit names of from and of the versions after
// it, then the files of older versions of one digit fewer named between (old versions' files,
// skipped), then the 20-digit names of from and after (the commits made since, read in order,
// with the size and time listed), and after every 20-digit name the names with fewer leading
// zeros (7.json, 007.json). A commit named otherwise than by its 20-digit version stops the
// run, whatever its version; so does a 20-digit commit listed past a missing version, which
// says that the version was written under another name. Names with yet more leading zeros
// (22 digits and more) are not looked for: the window of docs/design.md.
//
// When the files between the 21-digit and the 20-digit names fill the first page (a long
// log just past a power of ten), the log is listed again from from's 20-digit name, and the
// next version's 21-digit name, if the first page did not reach it, is asked for (one HEAD);
// the later probes of the run do that from the start (t.wide): two requests a batch.
//
// Listing from a version before t.next (the planned version, when catchUp starts) also
// shows that the log still reaches it: a log that lists nothing of that version or later
// was replaced, or restored from an older copy, and stops the run.
func (t *tail) probeListing(ctx context.Context, dl storage.DirLister, from int64) error {
	newest := int64(-1) // the newest version any file listed is named for
	reach := from <= t.plan.Version
	name20 := func(v int64) string { return storage.Base(deltalog.CommitKey(v)) }
	name21 := func(v int64) string { return storage.Base(deltalog.Padded21CommitKey(v)) }
	startName, from20 := deltalog.TailStart(from)
	if t.wide {
		startName = from20
	}
	// covered: every name from the 21-digit name of from up to this one was listed ("" when
	// none was; "\xff" when the listing reached the end).
	covered := ""
	for page := 0; ; page++ {
		var listed []storage.Object
		more, err := dl.ListDir(ctx, deltalog.LogDir, startName, 0, func(o storage.Object) error {
			listed = append(listed, o)
			return nil
		})
		if err != nil {
			if errors.Is(err, errors.ErrUnsupported) {
				return err
			}
			return t.errorf("%v", err)
		}
		commits := map[int64]storage.Object{}
		var last string
		for _, o := range listed {
			last = storage.Base(o.Key)
			lf := deltalog.ParseLogName(last)
			switch lf.Kind {
			case deltalog.KindCommit:
			case deltalog.KindClassicCheckpoint, deltalog.KindMultiPartCheckpoint, deltalog.KindUUIDCheckpoint:
				newest = max(newest, lf.Version)
				continue
			default:
				continue
			}
			if o.IsDir || o.IsLink {
				return t.errorf("%s is not a commit file", o.Key)
			}
			if o.Key != deltalog.CommitKey(lf.Version) {
				return t.errorf("%s claims version %d under another name than Delta writers give it (%s): stopping, since such a commit cannot be read safely", o.Key, lf.Version, deltalog.CommitKey(lf.Version))
			}
			newest = max(newest, lf.Version)
			if lf.Version >= t.next {
				commits[lf.Version] = o
			}
		}
		if page == 0 && !t.wide {
			covered = last
			if !more {
				covered = "\xff"
			}
			if more && last < name20(from) {
				// The old versions' files between the two spellings fill the page: list
				// from the 20-digit name, as the later probes will.
				t.wide = true
				startName = from20
				continue
			}
		}
		at := t.next
		for o, ok := commits[t.next]; ok; o, ok = commits[t.next] {
			lf := deltalog.LogFile{Key: o.Key, Kind: deltalog.KindCommit, Version: t.next, Size: o.Size, ModTime: o.ModTime}
			if err := t.readListed(ctx, lf); err != nil {
				return err
			}
		}
		for v := range commits {
			if v > t.next {
				return t.errorf("version %d is committed but version %d is not, under the name Delta writers give it (%s): stopping, since it may have been written under another name", v, t.next, deltalog.CommitKey(t.next))
			}
		}
		// The page ended among digit names: what follows may hold more commits, or a
		// commit under fewer leading zeros.
		if more && last != "" && last[0] >= '0' && last[0] <= '9' {
			_, next20 := deltalog.TailStart(t.next)
			if t.next == at && startName == next20 {
				return t.errorf("the log lists more files after %s than one page holds before the names of commits with fewer leading zeros; stopping rather than miss one", last)
			}
			startName = next20
			continue
		}
		break
	}
	if reach && newest < t.plan.Version {
		return t.errorf("the log lists no version %d or later, the planned version: it was replaced, or restored from an older copy, since planning", t.plan.Version)
	}
	if covered == "" || name21(t.next) > covered {
		// The 21-digit name of the next version was not in what was listed from from's.
		return t.refuseOddSpelling(ctx, deltalog.Padded21CommitKey(t.next))
	}
	return nil
}

// otherSpellings are the keys of commit v under the two other spellings Spark reads as the
// version and the log reader refuses: unpadded (7.json) and 21 digits.
func otherSpellings(v int64) []string {
	return []string{deltalog.UnpaddedCommitKey(v), deltalog.Padded21CommitKey(v)}
}

// oddSpelling returns the first of keys (other spellings of commit t.next) that exists, or "".
func (t *tail) oddSpelling(ctx context.Context, keys ...string) (string, error) {
	for _, key := range keys {
		if key == deltalog.CommitKey(t.next) {
			continue // a version of 20 digits is its own unpadded spelling
		}
		switch _, err := t.store.Stat(ctx, key); {
		case err == nil:
			return key, nil
		case !errors.Is(err, storage.ErrNotExist):
			return "", t.errorf("%v", err)
		}
	}
	return "", nil
}

// refuseOddSpelling stops the run when commit t.next exists under one of keys; nil when none
// does.
func (t *tail) refuseOddSpelling(ctx context.Context, keys ...string) error {
	odd, err := t.oddSpelling(ctx, keys...)
	if odd == "" || err != nil {
		return err
	}
	return t.errorf("version %d was committed as %s, not under the name Delta writers give it (%s): stopping, since such a commit cannot be read safely", t.next, odd, deltalog.CommitKey(t.next))
}

// readListed reads commit c, the next version, listed (or looked at) with its size and time.
// VACUUM START, which this run committed, has its clock checked (checkClock), and is not read
// again when the store holds it at the size this run wrote (startSize): put-if-absent wrote
// it, a commit is never written twice, and it holds nothing the re-check needs (a commitInfo
// alone).
func (t *tail) readListed(ctx context.Context, c deltalog.LogFile) error {
	if c.Version == t.startAt {
		if err := t.checkClock(c); err != nil {
			return err
		}
		if t.startSize > 0 && c.Size == t.startSize {
			return t.apply(c.Version, nil, nil)
		}
	}
	return t.readCommit(ctx, c)
}

// readCommit reads one commit: the keys it references, a protocol it may change, a metaData
// that may raise the retention or hide more names.
func (t *tail) readCommit(ctx context.Context, c deltalog.LogFile) error {
	protocol, metadata, err := deltalog.CommitRefs(ctx, t.store, t.root, c, t.ref(c.Version))
	if err != nil {
		return t.errorf("%v", err)
	}
	return t.apply(c.Version, protocol, metadata)
}

// ref returns the function that records a key commit v references.
func (t *tail) ref(v int64) func(key string) {
	return func(key string) {
		if _, ok := t.refs[key]; !ok {
			t.refs[key] = v
		}
		if f := fold(key); t.refsFolded[f] == 0 {
			t.refsFolded[f] = v
		}
		for d := storage.Dir(key); d != ""; d = storage.Dir(d) {
			if _, ok := t.keepDirs[d]; ok {
				break
			}
			t.keepDirs[d] = v
		}
	}
}

// apply applies the protocol and metaData of commit v, whose keys were recorded, and moves
// past it.
func (t *tail) apply(v int64, protocol *deltalog.Protocol, metadata *deltalog.Metadata) error {
	if protocol != nil {
		snap := &deltalog.Snapshot{Location: t.plan.Table, Protocol: *protocol}
		if err := snap.CheckVacuum(); err != nil {
			return fmt.Errorf("the protocol of %s changed after planning (version %d): %w; nothing more was deleted", t.plan.Table, v, err)
		}
	}
	if metadata != nil {
		if err := t.metadata(v, metadata); err != nil {
			return err
		}
	}
	t.next++
	t.read++
	return nil
}

// metadata applies a newer metaData action: a longer table retention moves the cutoff back
// (a shorter one is ignored: nothing grows the plan), and its hidden rule replaces the one the
// plan was made with for what is still to be deleted.
func (t *tail) metadata(v int64, m *deltalog.Metadata) error {
	snap := &deltalog.Snapshot{Location: t.plan.Table, Metadata: *m}
	table, err := snap.DeletedFileRetention()
	if err != nil {
		return fmt.Errorf("version %d of %s, committed after planning: %w; nothing more was deleted", v, t.plan.Table, err)
	}
	if table > t.plan.table && table > t.run {
		t.run = table
		t.cutoff = t.plan.now.Add(-table)
		t.raisedAt = v
	}
	t.hidden = hiddenRuleOf(snap)
	t.hiddenAt = v
	return nil
}
