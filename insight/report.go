package insight

import (
	"time"

	"github.com/deltavacuum/deltavacuum/vacuum"
)

// Count is a number of files and their bytes.
type Count struct {
	Files int64 `json:"files"`
	Bytes int64 `json:"bytes"`
}

func (c *Count) add(size int64) {
	c.Files++
	c.Bytes += size
}

// Breakdown is what the listing holds, one category per file: the rule of the planner that
// decided it (kept) or what it is (not protected).
type Breakdown struct {
	// Live: named by a live add.
	Live Count `json:"live"`
	// DeletionVectors: deletion-vector files of live adds.
	DeletionVectors Count `json:"deletionVectors"`
	// TombstonedInRetention: named by a remove inside the retention (or its deletion
	// vector): kept now, reclaimable when the remove expires.
	TombstonedInRetention Count `json:"tombstonedInRetention"`
	// TombstonedExpired: named by expired removes only (reclaimable unless newer than the cutoff).
	TombstonedExpired Count `json:"tombstonedExpired"`
	// ChangeData: files under _change_data/ no action protects.
	ChangeData Count `json:"changeData"`
	// Untracked: files no action names.
	Untracked Count `json:"untracked"`
	// UnreferencedDeletionVectors: deletion_vector_*.bin files no action names.
	UnreferencedDeletionVectors Count `json:"unreferencedDeletionVectors"`
	// KeptOther: kept because a protected key names them in another spelling, or a
	// protected path passes through them.
	KeptOther Count `json:"keptOther"`
	// KeptForReaders: kept because a reader of the table still needs them (a pin, a streaming
	// query, Iceberg metadata and the files its snapshot reads, a shallow clone): Readers says
	// which.
	KeptForReaders Count `json:"keptForReaders"`
	// Hidden: files with a hidden component (_x, .x), outside _delta_log and the tool's own
	// folders below: never vacuumed.
	Hidden Count `json:"hidden"`
	// Trash: files runs made with --trash moved into the default trash (_deltavacuum/trash/),
	// still billed until `deltavacuum trash purge`; RunRecords: the run records
	// (_deltavacuum/runs/). Both are hidden: never vacuumed.
	Trash      Count `json:"trash"`
	RunRecords Count `json:"runRecords"`
	// NestedTables: files of other Delta tables inside this one: never vacuumed.
	NestedTables Count `json:"nestedTables"`
	// DeltaLog is _delta_log/: commits, checkpoints (with sidecars), and the rest
	// (checksums, _last_checkpoint, compactions, ...).
	DeltaLog DeltaLog `json:"deltaLog"`
}

// DeltaLog is what _delta_log/ holds.
type DeltaLog struct {
	Commits     Count `json:"commits"`
	Checkpoints Count `json:"checkpoints"`
	Other       Count `json:"other"`
}

// Reclaimable is what a VACUUM at the report's retention, run now, deletes: the plan's files.
type Reclaimable struct {
	Count
	// Directories the plan deletes.
	Directories int64 `json:"directories"`
	// ByReason splits Count by the plan's reasons.
	ByReason map[vacuum.Reason]Count `json:"byReason"`
	// ChecksumFiles counts the Hadoop .crc companions deleted with the files (not in Count,
	// as VACUUM does not count them either).
	ChecksumFiles int64 `json:"checksumFiles"`
	// CostPerMonth is Bytes at the report's price.
	CostPerMonth float64 `json:"costPerMonth"`
}

// Day is the forecast of one day: what a VACUUM at the report's retention, run Day days from
// now, deletes if the table receives no new commit.
type Day struct {
	Day   int       `json:"day"`
	Clock time.Time `json:"clock"`
	// New is what becomes reclaimable during the day (since the day before).
	New Count `json:"new"`
	// Total is the plan of a run at Clock.
	Total Count `json:"total"`
}

// WhatIf is a VACUUM run now with another retention.
type WhatIf struct {
	RetentionHours float64   `json:"retentionHours"`
	Preset         string    `json:"preset,omitempty"`
	Cutoff         time.Time `json:"cutoff"`
	Reclaimable    Count     `json:"reclaimable"`
	CostPerMonth   float64   `json:"costPerMonth"`
	// BelowTableRetention: VACUUM refuses this retention unless the safety check is off.
	BelowTableRetention bool `json:"belowTableRetention"`
	// OldestVersion is the oldest version time travel still reads after such a run: every
	// file of it and of each later version survives. OldestVersionTime is its commit time
	// (absent when its commit file is gone and only a checkpoint holds it).
	OldestVersion     int64      `json:"oldestVersion"`
	OldestVersionTime *time.Time `json:"oldestVersionTime,omitempty"`
}

// Price is the storage price the costs are computed at.
type Price struct {
	PerGBMonth float64 `json:"perGBMonth"`
	Currency   string  `json:"currency"`
	// Source says where the price comes from: the user, or the documented default.
	Source string `json:"source"`
}

// Partition is one partition (the folder of the table's partition columns; "" for an
// unpartitioned table's root).
type Partition struct {
	Path        string `json:"path"`
	Live        Count  `json:"live"`
	SmallFiles  int64  `json:"smallFiles"`
	Reclaimable Count  `json:"reclaimable"`
}

// SmallFiles counts the live data files under the threshold: many of them mean OPTIMIZE
// should run (and rewrite them) before a VACUUM reclaims the files it replaces.
type SmallFiles struct {
	ThresholdBytes int64   `json:"thresholdBytes"`
	Files          int64   `json:"files"`
	Bytes          int64   `json:"bytes"`
	Share          float64 `json:"share"`
}

// Operation is a commit of the history.
type Operation struct {
	Version   int64     `json:"version"`
	Timestamp time.Time `json:"timestamp"`
	Operation string    `json:"operation"`
}

// Report is the inspection of a table.
type Report struct {
	Table   string `json:"table"`
	Version int64  `json:"version"`
	// Source is where the files were counted from: "listing", "inventory", or "log" (an
	// estimate from the log alone, --lite).
	Source              string    `json:"source"`
	Now                 time.Time `json:"now"`
	RetentionHours      float64   `json:"retentionHours"`
	TableRetentionHours float64   `json:"tableRetentionHours"`
	Cutoff              time.Time `json:"cutoff"`
	// BelowTableRetention: VACUUM at RetentionHours needs the safety check turned off.
	BelowTableRetention bool        `json:"belowTableRetention"`
	Files               Breakdown   `json:"files"`
	Reclaimable         Reclaimable `json:"reclaimable"`
	Forecast            []Day       `json:"forecast"`
	WhatIf              []WhatIf    `json:"whatIf"`
	Price               Price       `json:"price"`
	// Partitions are the top partitions by reclaimable bytes (then live bytes);
	// NumPartitions counts them all.
	Partitions    []Partition `json:"partitions"`
	NumPartitions int         `json:"numPartitions"`
	SmallFiles    SmallFiles  `json:"smallFiles"`
	// DeletionVectors is what the deletion vectors of the live files mark deleted, which VACUUM
	// cannot reclaim, and what a purge would; absent for a table without the feature.
	DeletionVectors *DeletionVectors `json:"deletionVectors,omitempty"`
	// OldestVersion is the oldest version the log can rebuild today.
	OldestVersion int64      `json:"oldestVersion"`
	LastVacuum    *Operation `json:"lastVacuum,omitempty"`
	LastOptimize  *Operation `json:"lastOptimize,omitempty"`
	// NestedTables are folders holding other Delta tables, never vacuumed with this one.
	NestedTables []string `json:"nestedTables,omitempty"`
	// Readers are the table's readers and what each keeps (readers.go); absent when they were
	// not looked for.
	Readers *Readers `json:"readers,omitempty"`
	Notes   []string `json:"notes,omitempty"`
}
