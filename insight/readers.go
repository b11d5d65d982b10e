package insight

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/vacuum"
)

// What the table's readers cost (VACUUM-SPEC section 15): each reader, the version it holds,
// the bytes kept for it alone at the report's retention and when it lets them go. The planner
// keeps what they need (vacuum.Options.Readers) and counts it (vacuum.Plan.Readers); this file
// only reports it.

// ReadersFound is what the finder of the table's readers found (package run's FindReaders,
// through package session): the readers, and what it says beside them.
type ReadersFound struct {
	Readers []vacuum.Reader
	Notes   []string
	// Iceberg is the table's Iceberg view, when its folder holds one.
	Iceberg *IcebergView
}

// IcebergView is the Iceberg metadata in the table's folder, and how far behind it is.
type IcebergView struct {
	Metadata string `json:"metadata"`
	// Engine and Version: the converter and the Delta version it converted (nil: unknown).
	Engine  string `json:"engine,omitempty"`
	Version *int64 `json:"version,omitempty"`
	// LagVersions and LagHours: how far behind the Delta table it is (nil: unknown).
	LagVersions *int64   `json:"lagVersions,omitempty"`
	LagHours    *float64 `json:"lagHours,omitempty"`
}

// ReaderReport is one reader of the table in a report.
type ReaderReport struct {
	Kind    string `json:"kind"`
	Name    string `json:"name"`
	Version *int64 `json:"version,omitempty"`
	// Describe is how the DRY RUN names it.
	Describe string `json:"describe"`
	// KeptOnlyForIt is what the plan keeps for this reader alone (files VACUUM at the report's
	// retention would delete otherwise); KeptShared counts the files other readers keep too.
	KeptOnlyForIt Count `json:"keptOnlyForIt"`
	KeptShared    int64 `json:"keptShared"`
	// CostPerMonth is KeptOnlyForIt's bytes at the report's price.
	CostPerMonth float64 `json:"costPerMonth"`
	// Until is when it lets go (a pin's end); absent when nothing says.
	Until *time.Time `json:"until,omitempty"`
}

// Readers is the readers' part of a report.
type Readers struct {
	Readers []ReaderReport `json:"readers"`
	Iceberg *IcebergView   `json:"iceberg,omitempty"`
	// OtherVacuums are VACUUMs by other engines in the table's history, which honour no pin
	// and no registered checkpoint: a warning each.
	OtherVacuums []string `json:"otherVacuums,omitempty"`
	Notes        []string `json:"notes,omitempty"`
}

// readersReport reports the readers of plan, and warns of VACUUMs other engines ran while
// readers that only this tool honours are registered.
func readersReport(ctx context.Context, store storage.Store, snap *deltalog.Snapshot, plan *vacuum.Plan, found *ReadersFound, price Price) (*Readers, error) {
	if found == nil {
		return nil, nil
	}
	out := &Readers{Readers: []ReaderReport{}, Iceberg: found.Iceberg, Notes: found.Notes}
	registered := false
	for _, r := range plan.Readers {
		rr := ReaderReport{Kind: r.Kind, Name: r.Name, Version: r.Version, Describe: r.Describe(),
			KeptOnlyForIt: Count{Files: r.NumFilesKept, Bytes: r.SizeKept}, KeptShared: r.NumFilesShared}
		rr.CostPerMonth = price.cost(r.SizeKept)
		if !r.Until.IsZero() {
			u := r.Until.UTC()
			rr.Until = &u
		}
		out.Readers = append(out.Readers, rr)
		registered = registered || r.Kind == vacuum.ReaderPin || r.Kind == vacuum.ReaderStreaming
	}
	if !registered {
		return out, nil
	}
	err := snap.Operations(ctx, store, historyDepth, func(c deltalog.CommitOperation) bool {
		if strings.HasPrefix(c.Operation, "VACUUM") && !strings.HasPrefix(strings.ToLower(c.Engine), "deltavacuum") {
			engine := c.Engine
			if engine == "" {
				engine = "an engine that does not say which"
			}
			out.OtherVacuums = append(out.OtherVacuums, fmt.Sprintf("version %d (%s, %s) is a %s by %s: it did not honour the pins and streaming checkpoints registered for this tool, and may have deleted what they need",
				c.Version, c.Operation, c.Timestamp.UTC().Format(time.RFC3339), c.Operation, engine))
		}
		return len(out.OtherVacuums) < 10
	})
	return out, err
}
