package insight

import (
	"context"
	"errors"
	"github.com/deltavacuum/deltavacuum/run"
	"strings"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// entry is a listed file that a vacuum at some cutoff may delete: one not protected by a live
// action. Only these are kept for the forecast and the what-if table; live files are counted
// as they stream by.
type entry struct {
	v vacuum.Verdict
}

// account sorts the planner's verdicts into the report's categories.
type account struct {
	partitionDepth int
	smallMax       int64
	files          Breakdown
	small          SmallFiles
	entries        []entry
	parts          map[string]*Partition
	logNames       []deltalog.LogFile
}

func newAccount(snap *deltalog.Snapshot, smallMax int64) *account {
	return &account{
		partitionDepth: len(snap.PartitionColumns()),
		smallMax:       smallMax,
		small:          SmallFiles{ThresholdBytes: smallMax},
		parts:          map[string]*Partition{},
	}
}

func (a *account) observe(v vacuum.Verdict) {
	o := v.Object
	switch v.Rule {
	case vacuum.RuleDirectory:
	case vacuum.RuleHidden:
		if !o.IsDir {
			a.files.Hidden.add(o.Size)
		}
	case vacuum.RuleNestedTable:
		if !o.IsDir {
			a.files.NestedTables.add(o.Size)
		}
	case vacuum.RuleLive:
		a.files.Live.add(o.Size)
		p := a.partition(o.Key)
		p.Live.add(o.Size)
		if o.Size < a.smallMax {
			a.small.Files++
			a.small.Bytes += o.Size
			p.SmallFiles++
		}
	case vacuum.RuleLiveDV:
		a.files.DeletionVectors.add(o.Size)
	case vacuum.RuleOtherSpelling, vacuum.RuleProtectedBelow:
		a.files.KeptOther.add(o.Size)
	case vacuum.RuleRead:
		if !o.IsDir {
			a.files.KeptForReaders.add(o.Size)
		}
	default: // retained, too new, unreferenced: deletable at some cutoff
		a.entries = append(a.entries, entry{v: v})
	}
}

// skipped counts an entry below a directory the planner did not descend into, under the rule
// that skipped it.
func (a *account) skipped(o storage.Object, rule vacuum.Rule) {
	if o.IsDir {
		return
	}
	switch {
	case strings.HasPrefix(o.Key, deltalog.LogDir):
		a.logFile(o)
	case rule == vacuum.RuleNestedTable:
		a.files.NestedTables.add(o.Size)
	case rule == vacuum.RuleRead:
		a.files.KeptForReaders.add(o.Size) // in a reader's folder (Iceberg's metadata)
	case strings.HasPrefix(o.Key, run.DefaultTrash):
		a.files.Trash.add(o.Size)
	case strings.HasPrefix(o.Key, run.RunsDir):
		a.files.RunRecords.add(o.Size)
	default:
		a.files.Hidden.add(o.Size)
	}
}

// logFile counts a file of _delta_log/.
func (a *account) logFile(o storage.Object) {
	if o.IsDir {
		return
	}
	rest := strings.TrimPrefix(o.Key, deltalog.LogDir)
	if strings.HasPrefix(rest, "_sidecars/") {
		a.files.DeltaLog.Checkpoints.add(o.Size)
		return
	}
	if strings.Contains(rest, "/") {
		a.files.DeltaLog.Other.add(o.Size)
		return
	}
	lf := deltalog.ParseLogName(rest)
	switch lf.Kind {
	case deltalog.KindCommit:
		a.files.DeltaLog.Commits.add(o.Size)
	case deltalog.KindClassicCheckpoint, deltalog.KindMultiPartCheckpoint, deltalog.KindUUIDCheckpoint:
		a.files.DeltaLog.Checkpoints.add(o.Size)
	default:
		a.files.DeltaLog.Other.add(o.Size)
		return
	}
	a.logNames = append(a.logNames, lf)
}

// settle sorts the entries into their categories, once the walk is over and the nested
// tables are known (a nested table can take back what was seen before its _delta_log).
func (a *account) settle(nested []string) {
	kept := a.entries[:0]
	for _, e := range a.entries {
		o := e.v.Object
		if inAny(o.Key, nested) {
			a.files.NestedTables.add(o.Size)
			continue
		}
		kept = append(kept, e)
		switch {
		case e.v.Rule == vacuum.RuleRetained || e.v.Rule == vacuum.RuleRetainedDV:
			a.files.TombstonedInRetention.add(o.Size)
		case e.v.Reason == vacuum.ReasonTombstone:
			a.files.TombstonedExpired.add(o.Size)
		case e.v.Reason == vacuum.ReasonChangeData:
			a.files.ChangeData.add(o.Size)
		case e.v.Reason == vacuum.ReasonDeletionVector:
			a.files.UnreferencedDeletionVectors.add(o.Size)
		default:
			a.files.Untracked.add(o.Size)
		}
	}
	a.entries = kept
}

func inAny(key string, folders []string) bool {
	for _, f := range folders {
		if strings.HasPrefix(key, f+"/") {
			return true
		}
	}
	return false
}

// partition returns the partition of a file key: the folders of the partition columns
// (col=value/...), as deep as the table has partition columns; the file's folder when it
// lies less deep; "" for an unpartitioned table.
func (a *account) partition(key string) *Partition {
	path := ""
	if a.partitionDepth > 0 {
		// The first partitionDepth folders of the key, without allocating: this runs once per
		// live file.
		end, depth := 0, 0
		for i := 0; i < len(key) && depth < a.partitionDepth; i++ {
			if key[i] == '/' {
				end, depth = i, depth+1
			}
		}
		path = key[:end]
	}
	p, ok := a.parts[path]
	if !ok {
		path = strings.Clone(path) // a copy: the substring would keep the whole key alive
		p = &Partition{Path: path}
		a.parts[path] = p
	}
	return p
}

// oldestVersion is the oldest version the log can rebuild: 0 when every commit from 0 is
// there, otherwise the oldest complete checkpoint followed by every commit to the newest.
func (a *account) oldestVersion(snap *deltalog.Snapshot) int64 {
	commits := map[int64]bool{}
	checkpoints := map[int64]bool{}
	parts := map[[2]int64]int{}
	for _, lf := range a.logNames {
		switch lf.Kind {
		case deltalog.KindCommit:
			commits[lf.Version] = true
		case deltalog.KindMultiPartCheckpoint:
			k := [2]int64{lf.Version, int64(lf.Parts)}
			parts[k]++
			if parts[k] == lf.Parts {
				checkpoints[lf.Version] = true
			}
		default:
			checkpoints[lf.Version] = true
		}
	}
	tail := snap.Version + 1 // commits tail..snap.Version are all there
	for tail > 0 && commits[tail-1] {
		tail--
	}
	if tail == 0 {
		return 0
	}
	for c := tail - 1; c <= snap.Version; c++ {
		if checkpoints[c] {
			return c
		}
	}
	return snap.Segment.CheckpointVersion
}

// tee is the listing of the store given to the planner, which also reports what lies in the
// directories the planner skips (hidden ones, _delta_log, nested tables) to skipped, with the
// rule that skipped the directory. Its observe must wrap the planner's observer.
type tee struct {
	store    storage.Store
	skipped  func(storage.Object, vacuum.Rule)
	lastRule vacuum.Rule // of the last verdict: the rule of a directory the planner skips
	skipping string      // the directory the planner skipped whose entries are being reported
}

// observe returns fn recording the rule of each verdict first.
func (t *tee) observe(fn func(vacuum.Verdict)) func(vacuum.Verdict) {
	return func(v vacuum.Verdict) {
		t.lastRule = v.Rule
		fn(v)
	}
}

func (t *tee) Walk(ctx context.Context, prefix string, fn func(storage.Object) error) error {
	rule := vacuum.Rule("")
	t.skipping = ""
	return t.store.Walk(ctx, prefix, func(o storage.Object) error {
		if t.skipping != "" {
			if strings.HasPrefix(o.Key, t.skipping) {
				t.skipped(o, rule)
				return nil
			}
			t.skipping = ""
		}
		err := fn(o)
		if o.IsDir && errors.Is(err, storage.SkipDir) {
			t.skipping, rule = o.Key, t.lastRule
			return nil
		}
		return err
	})
}
