package insight

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// The verdicts of an explanation.
const (
	VerdictKept        = "kept"
	VerdictWouldDelete = "would delete"
	VerdictNotInTable  = "not in the table"
)

// MaxExplainPaths bounds the paths of one explanation.
const MaxExplainPaths = 100000

// Explanation says what a VACUUM does with one path, by which rule, and on what evidence.
type Explanation struct {
	// Path is as it was asked; Key is the key under the table root it names.
	Path    string        `json:"path"`
	Key     string        `json:"key,omitempty"`
	Verdict string        `json:"verdict"`
	Rule    vacuum.Rule   `json:"rule,omitempty"`
	Reason  vacuum.Reason `json:"reason,omitempty"`
	// Text is the explanation in one sentence.
	Text     string   `json:"explanation"`
	Evidence Evidence `json:"evidence"`
}

// Evidence is what the listing and the log say of a path.
type Evidence struct {
	Size             *int64     `json:"size,omitempty"`
	ModificationTime *time.Time `json:"modificationTime,omitempty"`
	// AddedInVersion is the version of the live add naming it; InCheckpoint says the add is
	// a row of the checkpoint of that version (it was made at or before it).
	AddedInVersion *int64 `json:"addedInVersion,omitempty"`
	InCheckpoint   bool   `json:"inCheckpoint,omitempty"`
	// RemovedInVersion and RemovedAt are the newest remove naming it (its deletionTimestamp).
	RemovedInVersion *int64     `json:"removedInVersion,omitempty"`
	RemovedAt        *time.Time `json:"removedAt,omitempty"`
	// DeletableAfter is the first time a VACUUM at this retention may delete it, the table
	// receiving no new commit.
	DeletableAfter *time.Time `json:"deletableAfter,omitempty"`
	// DeletionVectorOf is the data file whose deletion vector it is.
	DeletionVectorOf string `json:"deletionVectorOf,omitempty"`
	// Hidden is the hidden directory it lies in, NestedTable the nested table's folder.
	Hidden      string `json:"hidden,omitempty"`
	NestedTable string `json:"nestedTable,omitempty"`
	// ChecksumOf is the file a checksum companion is deleted with.
	ChecksumOf string `json:"checksumOf,omitempty"`
}

// Explained is the explanation of several paths of one table, with the plan's terms.
type Explained struct {
	Table          string        `json:"table"`
	Version        int64         `json:"version"`
	RetentionHours float64       `json:"retentionHours"`
	Cutoff         time.Time     `json:"cutoff"`
	Paths          []Explanation `json:"paths"`
}

// ExplainOptions control an explanation.
type ExplainOptions struct {
	// RetainHours is RETAIN n HOURS; nil takes the table's retention. As for Inspect, a
	// retention below the table's is explained, not refused.
	RetainHours *float64
	// Now is the clock; the zero time is time.Now().
	Now time.Time
	// Readers, when set, finds the table's readers (as Options.Readers): a file one keeps is
	// explained as kept for it.
	Readers func(ctx context.Context, snap *deltalog.Snapshot) (*ReadersFound, error)
}

// Explain says, for each path, what a FULL VACUUM run now does with it and why. It makes the
// plan, from one listing, with the planner's verdicts on every entry: the rule an explanation
// names is the one the plan applied. A path is a key relative to the table root ("a/b.parquet",
// a directory with or without a trailing '/'), or the table's location followed by one.
func Explain(ctx context.Context, store storage.Store, paths []string, opts ExplainOptions) (*Explained, error) {
	loc := store.Location()
	if len(paths) == 0 || len(paths) > MaxExplainPaths {
		return nil, fmt.Errorf("explaining table %s: give between 1 and %d paths, not %d", loc, MaxExplainPaths, len(paths))
	}
	if opts.RetainHours != nil {
		if err := checkHours(*opts.RetainHours); err != nil {
			return nil, fmt.Errorf("explaining table %s: retention: %v; give RETAIN n HOURS (--retain-hours n) with n a number of hours, 0 or more", loc, err)
		}
	}
	out := make([]Explanation, len(paths))
	want := map[string][]int{} // key -> the paths naming it
	for i, p := range paths {
		out[i].Path = p
		key, err := keyOf(loc, p)
		if err != nil {
			out[i].Verdict, out[i].Text = VerdictNotInTable, fmt.Sprintf("not in the table: %v", err)
			continue
		}
		out[i].Key = key
		want[key] = append(want[key], i)
		if d, err := url.PathUnescape(key); err == nil && d != key {
			want[d] = append(want[d], -1-i) // the decoded reading, used when the raw one is absent
		}
	}
	snap, err := deltalog.Load(ctx, store)
	if err != nil {
		return nil, err
	}
	seen := map[string]vacuum.Verdict{}
	hiddenIn := map[string]string{} // a key below a skipped directory -> that directory
	t := &tee{store: store}
	t.skipped = func(o storage.Object, rule vacuum.Rule) {
		if _, ok := want[strings.TrimSuffix(o.Key, "/")]; ok {
			seen[strings.TrimSuffix(o.Key, "/")] = vacuum.VerdictBelow(o, rule)
			hiddenIn[strings.TrimSuffix(o.Key, "/")] = strings.TrimSuffix(t.skipping, "/")
		}
	}
	observe := func(v vacuum.Verdict) {
		k := strings.TrimSuffix(v.Object.Key, "/")
		if _, ok := want[k]; ok {
			seen[k] = v
		}
	}
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	var found *ReadersFound
	if opts.Readers != nil {
		if found, err = opts.Readers(ctx, snap); err != nil {
			return nil, err
		}
	}
	planner, err := vacuum.NewPlannerFor(ctx, store, snap, vacuum.Options{RetainHours: opts.RetainHours, DisableRetentionCheck: true,
		Now: now, Listing: t, Observe: t.observe(observe), Readers: found.readers()})
	if err != nil {
		return nil, err
	}
	plan, err := planner.Plan(ctx)
	if err != nil {
		return nil, err
	}
	ev, err := logEvidence(ctx, store, snap, want)
	if err != nil {
		return nil, err
	}
	x := explainer{plan: plan, run: retentionOf(plan.RetentionHours), seen: seen, hiddenIn: hiddenIn, log: ev}
	if err := x.index(); err != nil {
		return nil, err
	}
	for i := range out {
		if out[i].Key == "" && out[i].Verdict != "" {
			continue
		}
		x.explain(&out[i])
	}
	return &Explained{Table: plan.Table, Version: plan.Version, RetentionHours: plan.RetentionHours, Cutoff: plan.Cutoff, Paths: out}, nil
}

// keyOf turns an asked path into a key under the table root, refusing what cannot name one.
func keyOf(loc, p string) (string, error) {
	key := p
	if rest, ok := strings.CutPrefix(p, strings.TrimSuffix(loc, "/")+"/"); ok {
		key = rest
	} else if local, ok := strings.CutPrefix(loc, "file://"); ok && strings.HasPrefix(p, "/") {
		if rest, ok := strings.CutPrefix(p, strings.TrimSuffix(local, "/")+"/"); ok {
			key = rest
		}
	}
	switch {
	case key == "" || key == "/":
		return "", fmt.Errorf("%q is the table root itself; name a file or folder inside it", p)
	case strings.ContainsRune(key, 0):
		return "", fmt.Errorf("%q holds a NUL character", p)
	case strings.HasPrefix(key, "/") || strings.Contains(key, "://"):
		return "", fmt.Errorf("%q lies outside the table root %s; give a path relative to the root", p, loc)
	}
	key = strings.TrimSuffix(key, "/")
	for _, c := range strings.Split(key, "/") {
		if c == "" || c == "." || c == ".." {
			return "", fmt.Errorf("%q has an empty, '.' or '..' component; give the path relative to the table root as it is stored", p)
		}
	}
	return key, nil
}

// explainer holds what the explanations are made from.
type explainer struct {
	plan     *vacuum.Plan
	run      time.Duration
	seen     map[string]vacuum.Verdict
	hiddenIn map[string]string
	log      map[string]*logFacts
	deleted  map[string]vacuum.File
	checksum map[string]string // companion -> its file
	dirs     map[string]bool
}

func (x *explainer) index() error {
	x.deleted, x.checksum, x.dirs = map[string]vacuum.File{}, map[string]string{}, map[string]bool{}
	err := x.plan.Files.Each(func(f vacuum.File) error {
		x.deleted[f.Path] = f
		if f.Checksum != "" {
			x.checksum[f.Checksum] = f.Path
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, d := range x.plan.Dirs {
		x.dirs[d.Path] = true
	}
	return nil
}

func (x *explainer) explain(e *Explanation) {
	key := e.Key
	v, ok := x.seen[key]
	if !ok {
		if d, err := url.PathUnescape(key); err == nil && d != key {
			if v, ok = x.seen[d]; ok {
				key, e.Key = d, d
			}
		}
	}
	facts := x.log[key]
	if ok && !v.Object.IsDir {
		size, mt := v.Object.Size, v.Object.ModTime.UTC()
		e.Evidence.Size = &size
		if !mt.IsZero() {
			e.Evidence.ModificationTime = &mt
		}
	}
	facts.fill(&e.Evidence)
	e.Rule, e.Verdict = v.Rule, VerdictKept
	cutoff := x.plan.Cutoff.Format(time.RFC3339)
	switch {
	case !ok:
		e.Verdict = VerdictNotInTable
		e.Text = "not in the table: the listing has no such file or folder under the table root"
		if facts != nil && facts.live {
			e.Text += "; the log names it as a live file, so the table is missing a file it needs"
		}
	case x.deleted[key].Path != "":
		f := x.deleted[key]
		e.Verdict, e.Reason = VerdictWouldDelete, f.Reason
		e.Text = fmt.Sprintf("would delete: %s, last modified %s, before the cutoff %s", reasonText(f.Reason), f.ModificationTime.Format(time.RFC3339), cutoff)
		if facts != nil && facts.removed != nil {
			e.Text += fmt.Sprintf("; removed in version %d at %s", facts.removed.Version, facts.removedAt().Format(time.RFC3339))
		}
	case x.checksum[key] != "":
		e.Verdict = VerdictWouldDelete
		e.Evidence.ChecksumOf = x.checksum[key]
		e.Text = "would delete: the Hadoop checksum companion of " + x.checksum[key] + ", deleted with it"
	case strings.HasPrefix(key+"/", deltalog.LogDir):
		e.Rule = vacuum.RuleHidden
		e.Text = "kept: part of the Delta log (_delta_log/ is never vacuumed)"
	case v.Rule == vacuum.RuleHidden:
		e.Evidence.Hidden = x.hiddenIn[key]
		if e.Evidence.Hidden == "" {
			e.Evidence.Hidden = key
		}
		e.Text = fmt.Sprintf("kept: hidden (`%s`: a name starting with '_' or '.' is never vacuumed)", storage.Base(e.Evidence.Hidden))
	case v.Rule == vacuum.RuleNestedTable || inAny(key, x.plan.NestedTables):
		e.Rule = vacuum.RuleNestedTable
		for _, n := range x.plan.NestedTables {
			if strings.HasPrefix(key+"/", n+"/") {
				e.Evidence.NestedTable = n
			}
		}
		e.Text = fmt.Sprintf("kept: inside %s/, another Delta table (it has a _delta_log of its own)", e.Evidence.NestedTable)
	case v.Rule == vacuum.RuleDirectory && x.dirs[key]:
		e.Verdict = VerdictWouldDelete
		e.Text = "would delete: a directory this vacuum leaves empty (or empty and older than the cutoff)"
	case v.Rule == vacuum.RuleDirectory:
		e.Text = "kept: a directory that still holds files after this vacuum, or is protected, or is empty and newer than the cutoff"
	default:
		e.Text = x.keptText(v, facts, e)
	}
}

func (x *explainer) keptText(v vacuum.Verdict, facts *logFacts, e *Explanation) string {
	deletable := func() string {
		after := v.DeletableFrom().Add(x.run).UTC()
		e.Evidence.DeletableAfter = &after
		return after.Format(time.RFC3339)
	}
	switch v.Rule {
	case vacuum.RuleLive:
		return "kept: live, " + facts.addedText()
	case vacuum.RuleLiveDV:
		return "kept: deletion vector of live file " + facts.dvOf
	case vacuum.RuleRetained:
		return fmt.Sprintf("kept: tombstone inside the retention, %s, deletable after %s", facts.removedText(), deletable())
	case vacuum.RuleRetainedDV:
		return fmt.Sprintf("kept: deletion vector of %s, whose tombstone is inside the retention (%s), deletable after %s", facts.dvOf, facts.removedText(), deletable())
	case vacuum.RuleTooNew:
		return fmt.Sprintf("kept: %s, but last modified %s, not before the cutoff %s; deletable after %s",
			reasonText(v.Reason), v.Object.ModTime.UTC().Format(time.RFC3339), x.plan.Cutoff.Format(time.RFC3339), deletable())
	case vacuum.RuleOtherSpelling:
		return "kept: another spelling (letter case, Unicode normalization) of a file the log protects"
	case vacuum.RuleProtectedBelow:
		return "kept: a path the log protects passes through it (a link to a folder, or a key that is also a folder)"
	case vacuum.RuleRead:
		var by []string
		for _, r := range v.Readers {
			by = append(by, r.Describe())
		}
		if len(by) == 0 {
			return "kept: in a folder a reader of the table keeps whole (Iceberg's metadata)"
		}
		return fmt.Sprintf("kept: %s, but read by %s", reasonText(v.Reason), strings.Join(by, "; "))
	}
	return fmt.Sprintf("kept: %s", v.Rule)
}

func reasonText(r vacuum.Reason) string {
	switch r {
	case vacuum.ReasonTombstone:
		return "tombstoned (named only by expired removes)"
	case vacuum.ReasonChangeData:
		return "change data no action protects"
	case vacuum.ReasonDeletionVector:
		return "deletion vector no action names"
	}
	return "untracked (named by no action)"
}
