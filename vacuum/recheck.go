package vacuum

import (
	"context"
	"errors"
	"fmt"
	"strings"
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
}

func newTail(store storage.Store, plan *Plan) (*tail, error) {
	root, err := deltalog.RootOf(store)
	if err != nil {
		return nil, err
	}
	return &tail{store: store, root: root, plan: plan, next: plan.Version + 1,
		refs: map[string]int64{}, refsFolded: map[string]int64{}, keepDirs: map[string]int64{},
		cutoff: plan.Cutoff, run: plan.run, raisedAt: -1, hiddenAt: -1}, nil
}

func (t *tail) errorf(format string, args ...any) error {
	return fmt.Errorf("re-checking the log of %s before deleting: %s; nothing more was deleted", t.plan.Table, fmt.Sprintf(format, args...))
}

// catchUp lists the log and reads every commit after the planned version up to the newest,
// which must be at least atLeast (the version VACUUM START took; -1 when the run is not
// recorded). A gap, a log older than the plan or than START, or a commit that cannot be read
// exactly stops the run.
//
// base, when not nil, is the snapshot VACUUM START was built on (version atLeast-1): when it
// is of this table and holds every commit after the plan, read by the listing START made, they
// are taken from it, and only START and what follows it are looked for directly
// (caughtUpFrom). Any other snapshot is not trusted: the commits are listed and read.
func (t *tail) catchUp(ctx context.Context, atLeast int64, base *deltalog.Snapshot) error {
	if base != nil && base.Location == t.plan.Table && atLeast >= 0 && base.Version == atLeast-1 && base.HoldsCommits(t.next) {
		return t.caughtUpFrom(ctx, base, atLeast)
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
		if c.Version == atLeast {
			if err := t.checkClock(c); err != nil {
				return err
			}
		}
	}
	for _, c := range seg.AllCommits {
		if c.Version < t.next {
			continue
		}
		if c.Version != t.next {
			break
		}
		if err := t.readCommit(ctx, c); err != nil {
			return err
		}
	}
	if t.next <= seg.Version {
		return t.errorf("version %d is missing", t.next)
	}
	return nil
}

// caughtUpFrom takes the commits after the plan from base, the snapshot VACUUM START (version
// start) was built on, then reads START itself, looked for under its name and the other
// spellings, and the commits after it (probe). What the listing of the log refuses (a gap,
// a second claim on a version, a commit under another name) was refused when base was
// listed, up to its version.
func (t *tail) caughtUpFrom(ctx context.Context, base *deltalog.Snapshot, start int64) error {
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
	lf := deltalog.LogFile{Key: key, Kind: deltalog.KindCommit, Version: start, Size: o.Size, ModTime: o.ModTime}
	if err := t.checkClock(lf); err != nil {
		return err
	}
	if err := t.readCommit(ctx, lf); err != nil {
		return err
	}
	return t.probe(ctx)
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

// probe reads the commits that appeared after the last one read. Where the store lists a
// directory from a name on (storage.DirLister: the object stores) it is one listing of the log
// from the next version's 20-digit name on (probeListing); elsewhere it looks for the next
// version's file directly (a Stat), then for its two other spellings.
func (t *tail) probe(ctx context.Context) error {
	if dl, ok := t.store.(storage.DirLister); ok && !t.statProbes {
		err := t.probeListing(ctx, dl)
		if !errors.Is(err, errors.ErrUnsupported) {
			return err
		}
		t.statProbes = true // the service cannot start a listing at a name
	}
	for {
		key := deltalog.CommitKey(t.next)
		o, err := t.store.Stat(ctx, key)
		if errors.Is(err, storage.ErrNotExist) {
			// Two other spellings Spark reads as the version and the log reader refuses, 7.json
			// and 21 digits: a commit under either stops the run. (Other counts of leading
			// zeros are not looked for: the window of docs/design.md.)
			return t.refuseOddSpelling(ctx, otherSpellings(t.next)...)
		}
		if err != nil {
			return t.errorf("%v", err)
		}
		if o.IsDir || o.IsLink {
			return t.errorf("%s is not a commit file", key)
		}
		lf := deltalog.LogFile{Key: key, Kind: deltalog.KindCommit, Version: t.next, Size: o.Size, ModTime: o.ModTime}
		if err := t.readCommit(ctx, lf); err != nil {
			return err
		}
	}
}

// probeListing is probe in one request: the log listed from the next version's 20-digit name
// on. Byte order puts there, after the files of the versions already read, the commits made
// since (read in order, with the size and time listed), and after every 20-digit name the
// names with fewer leading zeros (7.json, 007.json: any version so spelled stops the run);
// a 20-digit commit listed past a missing version says that the version was written under
// another name, and stops the run too. The 21-digit spelling sorts before the 20-digit
// names, among the old versions' files: it is asked for directly, at every probe, as the
// contract re-reads the tail before each batch (VACUUM-SPEC section 13): a listing and one
// HEAD a batch, where there were three HEADs.
func (t *tail) probeListing(ctx context.Context, dl storage.DirLister) error {
	for {
		from := strings.TrimSuffix(storage.Base(deltalog.CommitKey(t.next)), ".json")
		var listed []storage.Object
		more, err := dl.ListDir(ctx, deltalog.LogDir, from, 0, func(o storage.Object) error {
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
			if lf.Kind != deltalog.KindCommit {
				continue
			}
			if o.IsDir || o.IsLink {
				return t.errorf("%s is not a commit file", o.Key)
			}
			if o.Key != deltalog.CommitKey(lf.Version) {
				return t.errorf("%s claims version %d under another name than Delta writers give it (%s): stopping, since such a commit cannot be read safely", o.Key, lf.Version, deltalog.CommitKey(lf.Version))
			}
			commits[lf.Version] = o
		}
		read := false
		for o, ok := commits[t.next]; ok; o, ok = commits[t.next] {
			lf := deltalog.LogFile{Key: o.Key, Kind: deltalog.KindCommit, Version: t.next, Size: o.Size, ModTime: o.ModTime}
			if err := t.readCommit(ctx, lf); err != nil {
				return err
			}
			read = true
		}
		for v := range commits {
			if v > t.next {
				return t.errorf("version %d is committed but version %d is not, under the name Delta writers give it (%s): stopping, since it may have been written under another name", v, t.next, deltalog.CommitKey(t.next))
			}
		}
		// The page ended among digit names: what follows may hold more commits, or a
		// commit under fewer leading zeros.
		if more && last != "" && last[0] >= '0' && last[0] <= '9' {
			if !read {
				return t.errorf("the log lists more files after %s than one page holds before the names of commits with fewer leading zeros; stopping rather than miss one", last)
			}
			continue
		}
		break
	}
	return t.refuseOddSpelling(ctx, deltalog.Padded21CommitKey(t.next))
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
