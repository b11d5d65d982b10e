package insight

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// Inspect reports what a VACUUM of the table in store would reclaim now, over the next days,
// and at other retentions, from the log and one listing (or the inventory of opts). It deletes
// and writes nothing. With opts.Lite it lists nothing and reports from the log alone, with the
// plan of VACUUM LITE.
func Inspect(ctx context.Context, store storage.Store, opts Options) (*Report, error) {
	s, err := opts.settle(store.Location())
	if err != nil {
		return nil, err
	}
	if s.Now.IsZero() {
		s.Now = time.Now()
	}
	snap, err := deltalog.LoadFrom(ctx, store, s.From)
	if err != nil {
		return nil, err
	}
	if s.Lite {
		r, err := inspectLite(ctx, store, snap, s)
		if err != nil {
			return nil, err
		}
		return adviseDeletionVectors(ctx, store, snap, r)
	}
	found, err := s.findReaders(ctx, snap)
	if err != nil {
		return nil, err
	}
	acc := newAccount(snap, s.smallMax)
	vopts := vacuum.Options{RetainHours: s.RetainHours, DisableRetentionCheck: true, Now: s.Now, Inventory: s.Inventory, Observe: acc.observe, Readers: found.readers()}
	if s.Inventory == nil {
		t := &tee{store: store, skipped: acc.skipped}
		vopts.Listing, vopts.Observe = t, t.observe(acc.observe)
	}
	planner, err := vacuum.NewPlannerFor(ctx, store, snap, vopts)
	if err != nil {
		return nil, err
	}
	plan, err := planner.Plan(ctx)
	if err != nil {
		return nil, err
	}
	if s.Inventory != nil {
		// The inventory gives the data files; the log is listed from the store.
		err := store.Walk(ctx, deltalog.LogDir, func(o storage.Object) error {
			acc.logFile(o)
			return nil
		})
		if err != nil && !errors.Is(err, storage.ErrNotExist) {
			return nil, err
		}
	}
	acc.settle(plan.NestedTables)
	r, err := acc.report(ctx, store, snap, plan, s)
	if err != nil {
		return nil, err
	}
	if r.Readers, err = readersReport(ctx, store, snap, plan, found, s.price); err != nil {
		return nil, err
	}
	return adviseDeletionVectors(ctx, store, snap, r)
}

// findReaders finds the table's readers when the options say how (nil otherwise).
func (s settings) findReaders(ctx context.Context, snap *deltalog.Snapshot) (*ReadersFound, error) {
	if s.Readers == nil {
		return nil, nil
	}
	return s.Readers(ctx, snap)
}

func (f *ReadersFound) readers() []vacuum.Reader {
	if f == nil {
		return nil
	}
	return f.Readers
}

// adviseDeletionVectors returns r with what the live files' deletion vectors hold
// (deletionVectorsOf).
func adviseDeletionVectors(ctx context.Context, store storage.Store, snap *deltalog.Snapshot, r *Report) (*Report, error) {
	dv, err := deletionVectorsOf(ctx, store, snap, r.Files.DeletionVectors, r.RetentionHours, r.Price)
	if err != nil {
		return nil, err
	}
	r.DeletionVectors = dv
	return r, nil
}

// report makes the report of a plan and the account of its listing.
func (a *account) report(ctx context.Context, store storage.Store, snap *deltalog.Snapshot, plan *vacuum.Plan, s settings) (*Report, error) {
	r := newReport(plan, s)
	r.Files = a.files
	r.NestedTables = plan.NestedTables
	var err error
	if r.Reclaimable, err = ReclaimableOf(plan, s.price); err != nil {
		return nil, err
	}
	hz, err := newHorizons(ctx, store, snap, a.oldestVersion(snap))
	if err != nil {
		return nil, err
	}
	r.OldestVersion = hz.oldest
	r.Forecast = forecast(plan, s.days, a.entries)
	r.WhatIf = whatIf(plan, s, a.entries, hz)
	if r.Partitions, r.NumPartitions, err = partitions(plan, a, s.top); err != nil {
		return nil, err
	}
	r.SmallFiles = a.small
	if a.small.Files > 0 {
		r.SmallFiles.Share = float64(a.small.Files) / float64(a.files.Live.Files)
	}
	if err := lastOperations(ctx, store, snap, r); err != nil {
		return nil, err
	}
	return r, nil
}

func newReport(plan *vacuum.Plan, s settings) *Report {
	return &Report{
		Table:               plan.Table,
		Version:             plan.Version,
		Source:              plan.Source,
		Now:                 s.Now.UTC(),
		RetentionHours:      plan.RetentionHours,
		TableRetentionHours: plan.TableRetentionHours,
		Cutoff:              plan.Cutoff,
		BelowTableRetention: plan.RetentionHours < plan.TableRetentionHours,
		Price:               s.price,
		Forecast:            []Day{},
		WhatIf:              []WhatIf{},
		Partitions:          []Partition{},
	}
}

// ReclaimableOf is what the plan deletes, and its monthly cost at the price.
func ReclaimableOf(plan *vacuum.Plan, price Price) (Reclaimable, error) {
	r := Reclaimable{Directories: int64(len(plan.Dirs)), ByReason: map[vacuum.Reason]Count{}}
	err := plan.Files.Each(func(f vacuum.File) error {
		r.add(f.Size)
		c := r.ByReason[f.Reason]
		c.add(f.Size)
		r.ByReason[f.Reason] = c
		if f.Checksum != "" {
			r.ChecksumFiles++
		}
		return nil
	})
	if err != nil {
		return r, err
	}
	r.CostPerMonth = price.cost(r.Bytes)
	return r, nil
}

// forecast is, for each of the next days, the plan of a run at the same retention with the
// clock that many days later, the table receiving no new commit.
func forecast(plan *vacuum.Plan, days int, entries []entry) []Day {
	out := make([]Day, 0, days)
	prev := Count{Files: plan.NumFilesToDelete, Bytes: plan.SizeOfDataToDelete}
	now := plan.Cutoff.Add(retentionOf(plan.RetentionHours))
	for d := 1; d <= days; d++ {
		shift := time.Duration(d) * 24 * time.Hour
		total := deletableAt(entries, plan.Cutoff.Add(shift))
		out = append(out, Day{Day: d, Clock: now.Add(shift), Total: total,
			New: Count{Files: total.Files - prev.Files, Bytes: total.Bytes - prev.Bytes}})
		prev = total
	}
	return out
}

// whatIf is the plan of a run now at each retention of s, and how far time travel reaches
// after it.
func whatIf(plan *vacuum.Plan, s settings, entries []entry, hz *horizons) []WhatIf {
	now := plan.Cutoff.Add(retentionOf(plan.RetentionHours))
	out := make([]WhatIf, 0, len(s.whatIf))
	removed := hz.removedIn(entries)
	for _, h := range s.whatIf {
		run := retentionOf(h)
		cutoff := now.Add(-run)
		w := WhatIf{RetentionHours: run.Hours(), Cutoff: cutoff.UTC(), Reclaimable: deletableAt(entries, cutoff),
			BelowTableRetention: run.Hours() < plan.TableRetentionHours}
		w.Preset = presetOf(w.RetentionHours)
		if w.RetentionHours == plan.TableRetentionHours {
			w.Preset = join(w.Preset, "table retention")
		}
		w.CostPerMonth = s.price.cost(w.Reclaimable.Bytes)
		w.OldestVersion, w.OldestVersionTime = hz.after(entries, removed, cutoff)
		out = append(out, w)
	}
	return out
}

func deletableAt(entries []entry, cutoff time.Time) Count {
	var c Count
	for i := range entries {
		if entries[i].v.DeletableAt(cutoff) {
			c.add(entries[i].v.Object.Size)
		}
	}
	return c
}

// partitions returns the top partitions by reclaimable bytes, then live bytes, and how many
// there are.
func partitions(plan *vacuum.Plan, acc *account, top int) ([]Partition, int, error) {
	err := plan.Files.Each(func(f vacuum.File) error {
		acc.partition(f.Path).Reclaimable.add(f.Size)
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	all := make([]Partition, 0, len(acc.parts))
	for _, p := range acc.parts {
		all = append(all, *p)
	}
	slices.SortFunc(all, func(a, b Partition) int {
		if c := cmp.Compare(b.Reclaimable.Bytes, a.Reclaimable.Bytes); c != 0 {
			return c
		}
		if c := cmp.Compare(b.Live.Bytes, a.Live.Bytes); c != 0 {
			return c
		}
		return strings.Compare(a.Path, b.Path)
	})
	return all[:min(top, len(all))], len(all), nil
}

// lastOperations finds the newest VACUUM and OPTIMIZE in the history (the newest
// historyDepth commits).
func lastOperations(ctx context.Context, store storage.Store, snap *deltalog.Snapshot, r *Report) error {
	seen := 0
	err := snap.Operations(ctx, store, historyDepth, func(c deltalog.CommitOperation) bool {
		seen++
		op := Operation{Version: c.Version, Timestamp: c.Timestamp, Operation: c.Operation}
		switch {
		case r.LastVacuum == nil && strings.HasPrefix(c.Operation, "VACUUM"):
			r.LastVacuum = &op
		case r.LastOptimize == nil && c.Operation == "OPTIMIZE":
			r.LastOptimize = &op
		}
		return r.LastVacuum == nil || r.LastOptimize == nil
	})
	if err != nil {
		return err
	}
	if seen == historyDepth && (r.LastVacuum == nil || r.LastOptimize == nil) {
		r.Notes = append(r.Notes, fmt.Sprintf("the last VACUUM and OPTIMIZE were looked for in the newest %d commits only", historyDepth))
	}
	return nil
}

// historyDepth bounds the commits read for lastOperations.
const historyDepth = 1000

// presets are the retentions the Fabric maintenance guidance gives by table type, in hours:
// streaming sink 24–48, MERGE-heavy (high-churn) fact 48–72, dimensional 168–720, regulated by
// policy, often seven years (2555 days: 61 320 hours; 2555 hours are only about 106 days).
var presets = []struct {
	name   string
	lo, hi float64
}{
	{"streaming sink", 24, 48},
	{"high-churn (MERGE-heavy) fact", 48, 72},
	{"dimensional", 168, 720},
	{"regulated", 61320, 61320},
}

// presetOf names the table types whose preset range holds hours ("" when none does).
func presetOf(hours float64) string {
	out := ""
	for _, p := range presets {
		if hours >= p.lo && hours <= p.hi {
			out = join(out, p.name)
		}
	}
	return out
}

func join(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + ", " + b
}
